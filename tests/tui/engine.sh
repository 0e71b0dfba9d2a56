#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/engine.sh - the console under tmux (as tests/tui/run.sh) with
# linklab's endpoint engine: on a kernel without sch_netem a delay dial on
# both peers goes to the user engine (netfilter queue + linklab engine), the
# read-back names it, quit removes the rules and engines on both peers.
#   LINKLAB=path/to/linklab sh tests/tui/engine.sh   (default build/linklab)
# Prints PASS/FAIL/SKIP lines and "tui-engine: N passed, N failed, N skipped".
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${LINKLAB:-$REPO/build/linklab}
case "$BIN" in /*) ;; *) BIN=$REPO/$BIN ;; esac
pass=0; fail=0; skipped=0
ok()   { pass=$((pass+1)); echo "PASS: $*"; }
bad()  { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { skipped=$((skipped+1)); echo "SKIP: $*"; }
finish() {
	echo "tui-engine: $pass passed, $fail failed, $skipped skipped"
	[ "$fail" = 0 ]
	exit $?
}
[ -x "$BIN" ] || { bad "linklab binary not found at $BIN (run make)"; finish; }
if [ "$(id -u)" != 0 ]; then
	skip "not root: the console tests need network namespaces and an sshd (lab/lab.sh)"
	finish
fi
command -v tmux >/dev/null 2>&1 || { skip "tmux not installed"; finish; }
NS_A=llE4-a$$
NS_B=llE4-b$$
LAB_DIR=$(mktemp -d /tmp/llE4-lab.XXXXXX)
SOCK=llE4-$$
TMUX="tmux -L $SOCK -f /dev/null"
LOG=$LAB_DIR.log
XDG="XDG_DATA_HOME=$LAB_DIR/data XDG_CONFIG_HOME=$LAB_DIR/config"
export LINKLAB_RUN_DIR="$LAB_DIR/run"
labsh() { LL_NS_A=$NS_A LL_NS_B=$NS_B LL_LAB_DIR=$LAB_DIR sh "$REPO/lab/lab.sh" "$@"; }
cleanup() {
	$TMUX kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
	labsh down >/dev/null 2>&1
	rm -rf "$LAB_DIR" "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
capture() { $TMUX capture-pane -p -t tui 2>/dev/null; }
wait_for() { # TEXT [TENTHS]: poll the pane until it contains TEXT (grep -E)
	n=0
	while [ $n -lt "${2:-100}" ]; do
		capture | grep -Eq -- "$1" && return 0
		sleep 0.1
		n=$((n+1))
	done
	return 1
}
keys() { $TMUX send-keys -t tui "$@"; }
dial_row() { # field name
	n=0
	while [ $n -lt 80 ] && ! capture | grep -Eq "^ > $1 "; do keys j; sleep 0.25; n=$((n+1)); done
	capture | grep -Eq "^ > $1 "
}
$TMUX new-session -d -s keep "sleep 100000"

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
