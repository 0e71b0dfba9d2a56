#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/engine.sh - the console under tmux (as tests/tui/run.sh) with
# linklab's endpoint engine: on a kernel without sch_netem the demo's dial
# (delay 50ms, loss 1 %) on both peers goes to the user engine (netfilter
# queue + linklab engine), the read-back names it, the test screen's RTT
# under load reads ~100 ms, quit removes the rules and engines on both
# peers; after kill -9 of the console the next one finds the engine's
# leftovers and its quit removes them; console --engine kernel refuses the
# delay; --engine warp exit 2; A's engine killed during a run: the test
# screen says the dial changed.
#   LINKLAB=path/to/linklab sh tests/tui/engine.sh   (default build/linklab)
# Helpers: tests/tui/lib.sh.
# Prints PASS/FAIL/SKIP lines and "tui-engine: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
tui_need_root
export LINKLAB_RUN_DIR="$LAB_DIR/run"
tui_tmux_up

# --engine is the endpoints' engine (as apply --engine); a bad value is
# refused before anything starts, naming the bridge's own option too
out=$("$BIN" console --engine warp 2>&1); rc=$?
case "$rc:$out" in
2:*"--engine 'warp': auto, kernel or user"*"--middle-engine"*)
	ok "console --engine warp: exit 2 naming the value and the accepted ones" ;;
*) bad "console --engine warp: exit $rc: $out" ;;
esac

# linklab's endpoint engine (a kernel without sch_netem): sudo make demo's
# dial (delay 50ms, loss 1 % on both peers) from the console; the summary
# names the engine; the test screen's RTT under load reads ~100 ms; quit
# removes it. Then --engine kernel: the same dial refused (no netem here).
if unshare -n sh -c 'tc qdisc add dev lo root netem delay 1ms' 2>/dev/null; then
	skip "endpoint engine: this kernel has sch_netem (auto takes netem)"
elif ! command -v iptables >/dev/null; then
	skip "endpoint engine: iptables not installed (make deps)"
elif ! labsh up >"$LOG" 2>&1; then
	bad "endpoint engine: lab.sh up failed: $(tail -3 "$LOG")"
else
	eval "$(labsh env)"
	llchains() { ip netns exec "$1" iptables -w -t mangle -S 2>/dev/null | grep -c '^-N LLENG'; }
	# quit_removes WHAT: q, a clean exit, and no rule chain left on either peer
	quit_removes() {
		keys q
		wait_for "console-exit=0" 150 || bad "$1: no clean exit"
		if [ "$(llchains "$NS_A")" = 0 ] && [ "$(llchains "$NS_B")" = 0 ]; then
			ok "$1: quit removes the rules and engines on both peers"
		else
			bad "$1: quit left chains A $(llchains "$NS_A") B $(llchains "$NS_B")"
			return 1
		fi
	}
	if start_console; then
		keys d
		wait_for "Impairment dial" 30 || bad "engine: dial screen did not open"
		dial_row delay
		keys e C-u 5 0 m s Enter
		dial_row loss
		keys e C-u 1 % Enter
		wait_for "dial: .*delay 50ms.*loss 1%" 30 || bad "engine: delay 50ms loss 1% not in the dial"
		keys Enter
		wait_for "y: apply anyway" 150 && keys y
		if wait_for "A veth-a holds: user engine \(pid [0-9]+\): --delay 50ms --loss 1%" 150 &&
		   wait_for "B veth-b holds: user engine \(pid [0-9]+\): --delay 50ms --loss 1%" 150; then
			ok "endpoint engine: the demo's dial (delay 50ms, loss 1%) from the console, both sides held by the user engine (label shown)"
		else
			bad "endpoint engine: no user-engine read-back"; capture | grep -E "holds|applied|error" | head -5
		fi
		# the test screen: a 4 s TCP run; RTT under load as the screen shows it
		keys t
		wait_for "Throughput test" 30 || bad "engine: test screen did not open"
		keys g j e C-u 4 Enter
		wait_for "duration +4 s" 20 || bad "engine: test form duration not set"
		keys s
		if wait_for "RTT under load: now [0-9.]+ ms" 150 && wait_for "done: " 150; then
			line=$(capture | grep -Eo "RTT under load: now [0-9.]+ ms, min [0-9.]+ ms[^(]*\([^)]*\)" | head -1)
			now=$(echo "$line" | sed -n 's/.*now \([0-9.]*\) ms.*/\1/p')
			min=$(echo "$line" | sed -n 's/.*min \([0-9.]*\) ms.*/\1/p')
			echo "  figure: test screen: $line"
			if python3 -c "import sys; n=float('$now'); m=float('$min'); sys.exit(0 if 99 <= m <= 110 and 99 <= n <= 150 else 1)"; then
				ok "endpoint engine: the test screen's RTT under load reads ~100 ms (now $now ms, min $min ms)"
			else
				bad "endpoint engine: RTT under load not ~100 ms: $line"
			fi
		else
			bad "endpoint engine: no RTT under load on the test screen"; capture | tail -12
		fi
		if [ "$(llchains "$NS_A")" = 1 ] && [ "$(llchains "$NS_B")" = 1 ]; then
			ok "endpoint engine: one rule chain in each namespace while applied"
		else
			bad "endpoint engine: chains A $(llchains "$NS_A") B $(llchains "$NS_B")"
		fi
		# A's engine killed during a run: traffic passes unimpaired (fail
		# open), and the test screen says the run is no longer under the dial
		keys g j e C-u 8 Enter
		wait_for "duration +8 s" 20 || bad "engine: test form duration 8 not set"
		keys s
		epid=$(for p in $(ip netns pids "$NS_A"); do
			case "$(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null)" in *" engine "*veth-a*) echo "$p" ;; esac
		done | head -1)
		if [ -z "$epid" ]; then
			bad "engine killed mid-run: A's engine process not found"
		elif wait_for "running: .*\[[2-9] intervals\]" 100 && kill -9 "$epid" &&
		     wait_for "[0-9.]+ s into the run: A's dial changed: was 'delay 50ms loss 1% \\(linklab's engine\\)', now 'none \\(linklab's engine gone" 60; then
			ok "engine killed mid-run: the test screen says so ($(capture | grep -o "[0-9.]* s into the run: A's dial changed" | head -1))"
			wait_for "done: " 150 || bad "engine killed mid-run: the run did not finish"
		else
			bad "engine killed mid-run: no note on the test screen (engine pid $epid)"; capture | head -24
		fi
		quit_removes "endpoint engine"
	else
		bad "endpoint engine: console did not start"; capture | tail -5
	fi
	# kill -9 of a console whose dial runs on the engine: the next console
	# finds the leftovers (no qdisc changed: the hook record says so) and
	# its quit removes the rules and engines
	if start_console; then
		S=tui; cpid=$(console_pid)
		keys d
		wait_for "Impairment dial" 30 || bad "engine kill -9: dial screen did not open"
		dial_row delay
		keys e C-u 2 0 m s Enter Enter
		wait_for "y: apply anyway" 150 && keys y
		wait_for "A veth-a holds: user engine" 150 || bad "engine kill -9: no user engine on A"
		kill -9 "$cpid" 2>/dev/null
		n=0; while [ $n -lt 50 ] && [ -d /proc/"$cpid" ]; do sleep 0.1; n=$((n+1)); done
		[ -d /proc/"$cpid" ] && bad "engine kill -9: console pid $cpid still runs"
		start_console
		if wait_for "leftovers found: A veth-a" 150; then
			ok "engine kill -9: the next console finds the engine's leftovers ($(capture | grep -o 'leftovers found: [^,(]*\(, B veth-b\)\{0,1\}' | head -1))"
		else
			bad "engine kill -9: no leftovers found: $(capture | tail -3)"
		fi
		quit_removes "engine kill -9, the next console" ||
			ip netns exec "$NS_A" "$BIN" clear --dev veth-a >/dev/null 2>&1
	else
		bad "engine kill -9: console did not start"; capture | tail -5
	fi
	# --engine kernel: netem only; this kernel has none, so the delay is refused
	if start_console --engine kernel; then
		keys d
		wait_for "Impairment dial" 30 || bad "engine kernel: dial screen did not open"
		dial_row delay
		keys e C-u 5 0 m s Enter
		keys Enter
		wait_for "y: apply anyway" 150 && keys y
		if wait_for "netem" 150 && ! capture | grep -q "user engine" &&
		   [ "$(llchains "$NS_A")" = 0 ] && [ "$(llchains "$NS_B")" = 0 ]; then
			ok "endpoint engine: console --engine kernel refuses a delay on this kernel (no netem), no engine started: $(capture | grep -m1 -o '[^ ]*netem[^.;]*' | head -1)"
		else
			bad "endpoint engine: --engine kernel: $(capture | grep -E 'netem|engine|error' | head -3)"
		fi
		keys q
		wait_for "console-exit=0" 150 || bad "engine kernel: no clean exit"
	else
		bad "endpoint engine: console --engine kernel did not start"; capture | tail -5
	fi
fi

finish
