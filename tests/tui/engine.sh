#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/engine.sh - the console under tmux (as tests/tui/run.sh) with
# linklab's endpoint engine: on a kernel without sch_netem a delay dial on
# both peers goes to the user engine (netfilter queue + linklab engine), the
# read-back names it, quit removes the rules and engines on both peers.
#   LINKLAB=path/to/linklab sh tests/tui/engine.sh   (default build/linklab)
# Helpers: tests/tui/lib.sh.
# Prints PASS/FAIL/SKIP lines and "tui-engine: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
tui_need_root
export LINKLAB_RUN_DIR="$LAB_DIR/run"
tui_tmux_up

# linklab's endpoint engine (a kernel without sch_netem): a delay dial on
# both peers from the console; the summary names the engine; quit removes it
if unshare -n sh -c 'tc qdisc add dev lo root netem delay 1ms' 2>/dev/null; then
	skip "endpoint engine: this kernel has sch_netem (auto takes netem)"
elif ! command -v iptables >/dev/null; then
	skip "endpoint engine: iptables not installed (make deps)"
elif ! labsh up >"$LOG" 2>&1; then
	bad "endpoint engine: lab.sh up failed: $(tail -3 "$LOG")"
else
	eval "$(labsh env)"
	llchains() { ip netns exec "$1" iptables -w -t mangle -S 2>/dev/null | grep -c '^-N LLENG'; }
	$TMUX kill-session -t tui 2>/dev/null
	$TMUX new-session -d -s tui -x 120 -y 36 \
		"TERM=screen $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER 2>&1; echo console-exit=\$?; sleep 600"
	if wait_for "veth-b" 150; then
		keys d
		wait_for "Impairment dial" 30 || bad "engine: dial screen did not open"
		dial_row delay
		keys e C-u 3 0 m s Enter
		wait_for "dial: delay 30ms" 30 || bad "engine: delay 30ms not in the dial"
		keys Enter
		wait_for "y: apply anyway" 150 && keys y
		if wait_for "A veth-a holds: user engine \(pid [0-9]+\): --delay 30ms" 150 &&
		   wait_for "B veth-b holds: user engine \(pid [0-9]+\): --delay 30ms" 150; then
			ok "endpoint engine: delay 30ms from the console, both sides held by the user engine (label shown)"
		else
			bad "endpoint engine: no user-engine read-back"; capture | grep -E "holds|applied|error" | head -5
		fi
		if [ "$(llchains "$NS_A")" = 1 ] && [ "$(llchains "$NS_B")" = 1 ]; then
			ok "endpoint engine: one rule chain in each namespace while applied"
		else
			bad "endpoint engine: chains A $(llchains "$NS_A") B $(llchains "$NS_B")"
		fi
		keys q
		wait_for "console-exit=0" 150 || bad "endpoint engine: no clean exit"
		if [ "$(llchains "$NS_A")" = 0 ] && [ "$(llchains "$NS_B")" = 0 ]; then
			ok "endpoint engine: quit removes the rules and engines on both peers"
		else
			bad "endpoint engine: quit left chains A $(llchains "$NS_A") B $(llchains "$NS_B")"
		fi
	else
		bad "endpoint engine: console did not start"; capture | tail -5
	fi
fi

finish
