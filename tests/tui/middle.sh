#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/middle.sh - the middle box (lab-bridge.sh: A - M - B) under the console.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_tmux_up

# 9. the middle box: `linklab console --peer peer-b --middle middle` in the
#    three-namespace lab (lab-bridge.sh: A - M - B, the bridge in M, sshd in
#    M on the management link). The console holds the bridge's lease.
$TMUX kill-session -t tui 2>/dev/null
if ! blabsh up >"$LAB_DIR-blab.log" 2>&1; then
	bad "lab-bridge.sh up failed: $(tail -3 "$LAB_DIR-blab.log")"
	finish
fi
rm -f "$LAB_DIR-blab.log"
ok "lab-bridge.sh up: management link and sshd in the middle ($(blabsh status | grep -c reachable) of 2 ssh targets reachable)"
BCFG=$BLAB_DIR/ssh_config
# the starting dial the console must give back: B->A delay 5ms
blabsh engine --b-to-a-delay 5ms >/dev/null 2>&1 || bad "engine with --b-to-a-delay 5ms did not start"
mstatus() { ip netns exec "$NS_BM" "$BIN" bridge --status 2>&1 | tr '\n' ' '; }
# the bridge's dials only (its counters move with any traffic across it)
mdials() {
	ip netns exec "$NS_BM" "$BIN" bridge --status -J 2>&1 | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(json.dumps([s[d]["fields"] for d in ("a_to_b", "b_to_a")], sort_keys=True))' 2>&1
}
# RTT A -> B through the bridge: median TCP connect time to B's sshd (one
# SYN / SYN-ACK round trip) over 5 tries, in whole ms (no ping here)
rtt_ms() {
	ip netns exec "$NS_BA" python3 -c '
import socket, statistics, time
r = []
for i in range(5):
    s = socket.socket()
    s.settimeout(3)
    t = time.monotonic()
    s.connect(("10.198.0.2", 22))
    r.append((time.monotonic() - t) * 1000)
    s.close()
print(int(statistics.median(r)))' 2>/dev/null
}
start_mid_console() { # console options
	$TMUX kill-session -t tui 2>/dev/null
	# 3>&-: a tmux server started here must not keep 9g2's lease fifo open
	$TMUX new-session -d -s tui -x 120 -y 40 \
		"TERM=screen $XDG ip netns exec $NS_BA $BIN console -F $BCFG $* 2>&1; echo console-exit=\$?; sleep 600" 3>&-
	wait_for "veth-a" 150
}
# dial screen: target row, then h/l N times (field rows: dial_row, lib.sh)
dial_target() { # presses of l from "both peers"
	keys d
	wait_for "Impairment dial" 30 || return 1
	n=0
	# one key at a time: the screen redraws at most every 100 ms
	while [ $n -lt 80 ] && ! capture | grep -q "^ > target"; do keys k; sleep 0.25; n=$((n+1)); done
	n=0
	while [ $n -lt "$1" ]; do keys l; n=$((n+1)); done
}

probe=$(ip netns exec "$NS_BM" timeout 10 "$BIN" bridge --attach </dev/null 2>&1 | head -1)
case "$probe" in
'{'*'"engine"'*) attach=1 ;;
*) attach=0; skip "middle box: this linklab has no working 'bridge --attach' (the control socket's lease): $probe" ;;
esac
if [ $attach = 1 ]; then
	# 9a. without a terminal: one plain line for the bridge (before any
	#     console holds the lease)
	out=$(TERM=dumb ip netns exec "$NS_BA" script -qec "$BIN console -F $BCFG --peer peer-b --middle middle" /dev/null 2>&1 </dev/null)
	case "$out" in
	*"middle middle: bridge user engine, veth-ma <-> veth-mb; A->B: none; B->A: delay 5ms"*"(bridge included)"*)
		ok "TERM=dumb with --middle: plain line for the bridge, path includes it" ;;
	*) bad "TERM=dumb with --middle: $out" ;;
	esac
	# the middle section: engine, ports, both dials
	if ! start_mid_console --peer peer-b --middle middle; then
		bad "console --middle did not start"; capture
	elif wait_for "M \(middle\): bridge user engine, veth-ma <-> veth-mb" 100; then
		ok "middle section: engine and ports of the bridge"
		if capture | grep -Eq "^ +A->B +rx .* lost [0-9]+ +drops [0-9]+ +none" &&
		   capture | grep -Eq "^ +B->A +rx .* lost [0-9]+ +drops [0-9]+ +delay 5ms"; then
			ok "middle section: both dials (B->A delay 5ms), lost and drops"
		else
			bad "middle section: dials"; capture | grep -E "A->B|B->A"
		fi
		if wait_for "B->A +rx [0-9.]+ [kMG]?bit/s +tx [0-9.]+ [kMG]?bit/s" 50; then
			ok "middle section: live rates from the counters"
		else
			bad "middle section: no live rate"; capture | grep "B->A"
		fi
		if capture | grep -q "path: A->B unshaped/0ns/0% | B->A unshaped/5ms/0% | RTT +5ms, loss 0% (bridge included)"; then
			ok "path line includes the bridge's dial"
		else
			bad "path line without the bridge"; capture | grep path
		fi
	else
		bad "no middle section"; capture
	fi
	# the documented minimum (60x16) and a few rows more: each pane's
	# read-back stays under its list, never over the tab bar
	small=""
	for g in 60x16 60x18 100x16; do
		$TMUX resize-window -t tui -x "${g%x*}" -y "${g#*x}"
		sleep 0.5
		top=$(capture | head -2)
		case "$top" in
		*"Peers] Dial"*) case "$top" in *noqueue*|*"now sending"*|*"kernel holds"*) small="$small $g" ;; esac ;;
		*) small="$small $g" ;;
		esac
	done
	$TMUX resize-window -t tui -x 120 -y 40
	[ -z "$small" ] && ok "small screens (60x16, 60x18, 100x16): the read-back stays under the interface list" ||
		{ bad "small screens:$small: the read-back drawn over the top rows"; capture | head -3; }
	keys '?'
	if wait_for "with --middle: clear the bridge" 30; then ok "help lists the middle box keys (from the key table)"; else bad "help: no middle keys"; capture | head -20; fi
	keys Escape
	base=$(rtt_ms)
	# 9b. bridge A->B delay 40ms from the dial screen (target: both, A, B,
	#     bridge A->B = three presses), seeded from the bridge (empty)
	dial_target 3
	if wait_for "target +bridge A->B \(middle box\)" 20 && capture | grep -q "dial loaded from the bridge's A->B"; then
		ok "dial: target cycle reaches bridge A->B and loads its fields"
	else
		bad "dial: no bridge A->B target"; capture | grep -E "target|dial"
	fi
	dial_row delay
	keys e C-u 4 0 m s Enter Enter
	if wait_for "applied on bridge A->B: .*40ms" 100; then ok "dial: applied on bridge A->B"; else bad "dial: bridge apply not reported"; capture | tail -4; fi
	st=$(mstatus)
	case "$st" in *40ms*) ok "linklab bridge --status in the middle shows delay 40ms" ;;
	*) bad "bridge --status after the apply: $st" ;; esac
	now=$(rtt_ms)
	if [ -n "$base" ] && [ -n "$now" ] && [ "$now" -ge $((base + 38)) ]; then
		ok "RTT A -> B (TCP connect) rose from $base ms to $now ms (bridge A->B +40 ms)"
	else
		bad "RTT A -> B did not rise by 40 ms: before '$base' after '$now'"
	fi
	# 9c. a bad value: inline error naming field and range; bridge unchanged
	dial_row loss
	keys e C-u 1 5 0 % Enter
	if wait_for "loss.*150%.*(0%|range)" 20; then ok "bad bridge value: inline error names field, value and range"; else bad "no inline error for loss 150%"; capture | tail -12; fi
	keys Escape
	st=$(mstatus)
	case "$st" in *150%*) bad "bridge changed by a refused value: $st" ;;
	*40ms*) ok "bad value: the bridge still holds delay 40ms (nothing applied)" ;;
	*) bad "bridge after the bad value: $st" ;; esac
	# 9c2. v with a middle box: verify runs with --middle, so the rtt row's
	#      dialled value holds the bridge's delays (A->B 40ms + B->A 5ms)
	keys p
	keys v
	if wait_for "measuring \([0-9]+ s\) - the dial both peers and the bridge hold" 50; then
		vpid=$(pgrep -P "$(console_pid)" | head -1)
		if [ -n "$vpid" ] && tr '\0' ' ' < "/proc/$vpid/cmdline" | grep -q " verify -J .*--middle middle"; then
			ok "v: the verify child runs with --middle middle"
		else
			bad "v: verify child without --middle: $(tr '\0' ' ' < "/proc/$vpid/cmdline" 2>/dev/null)"
		fi
		if wait_for "verify: (every row ok|NOT OK)" 900 && capture | grep -Eq "^ *rtt +both +45 +ms"; then
			ok "verify table: rtt dialled 45 ms = the bridge's 40 + 5 ($(capture | grep -E '^ *rtt +both' | tr -s ' '))"
		else
			bad "verify table without the bridge's delays"; capture | tail -8
		fi
		keys x
	else
		bad "v with --middle: no 'measuring' line naming the bridge"; capture | tail -6
	fi
	# 9d. quit: the bridge is back to its starting dial (B->A 5ms, A->B none)
	keys q
	if wait_for "console-exit=0" 150 && capture | grep -q "restored bridge"; then
		ok "quit: summary names the bridge restored"
	else
		bad "quit with --middle: no clean exit"; capture | tail -4
	fi
	st=$(mstatus)
	case "$st" in
	*40ms*) bad "quit: the bridge still holds 40ms: $st" ;;
	*5ms*) ok "quit: bridge back to its starting dial (B->A delay 5ms only)" ;;
	*) bad "quit: bridge status: $st" ;;
	esac

	# 9e. kill -9 the console: the lease ends, the bridge restores itself
	if start_mid_console --peer peer-b --middle middle && wait_for "M \(middle\): bridge user engine" 100; then
		dial_target 3
		dial_row delay
		keys e C-u 4 0 m s Enter Enter
		wait_for "applied on bridge A->B" 100 || bad "kill -9 run: apply not reported"
		case "$(mstatus)" in *40ms*) ;; *) bad "kill -9 run: 40ms not applied: $(mstatus)" ;; esac
		cpid=$(console_pid)
		if [ -n "$cpid" ] && [ "$(cat /proc/"$cpid"/comm 2>/dev/null)" = linklab ]; then
			kill -KILL "$cpid"
		else
			bad "kill -9 run: console pid not found ('$cpid')"
		fi
		n=0
		while [ $n -lt 100 ]; do
			case "$(mstatus)" in *40ms*) ;; *) break ;; esac
			sleep 0.1; n=$((n+1))
		done
		st=$(mstatus)
		case "$st" in
		*40ms*) bad "kill -9: the bridge still holds 40ms after 10 s: $st" ;;
		*5ms*) ok "kill -9 the console: the lease put the bridge back ($((n/10)).$((n%10)) s)" ;;
		*) bad "kill -9: bridge status: $st" ;;
		esac
	else
		bad "kill -9 run: console --middle did not start"; capture
	fi

	# 9f. a profile applied to the bridge ([a] -> A->B, [b] -> B->A), then
	#     the middle's session dies: "middle lost", the lease restores the
	#     bridge, A and B still driven
	if start_mid_console --peer peer-b --middle middle && wait_for "M \(middle\): bridge user engine" 100; then
		# the first profile by name: 3g ([a] 330kbit 100ms, [b] 780kbit 100ms)
		keys o
		wait_for "Profiles\]" 30
		# with a middle box the footer lists its keys
		if capture | tail -1 | grep -q "m to bridge  C clear bridge"; then
			ok "profiles footer with --middle lists 'm to bridge  C clear bridge'"
		else
			bad "profiles footer without the middle box's keys: $(capture | tail -1)"
		fi
		keys m
		# each direction named with its own dial ([a] 330kbit, [b] 780kbit)
		if wait_for "profile 3g: applied on bridge A->B: rate 330kbit[^;]*delay 100ms[^;]*; B->A: rate 780kbit" 100 &&
		   mstatus | grep -q 100ms; then
			ok "profiles: m applies the profile to the bridge ($(capture | grep -o 'profile [^:]*: applied on bridge A->B: [^;]*; B->A: rate [0-9a-z]*' | head -1))"
		else
			bad "profiles: m did not apply to the bridge"; capture | tail -4
		fi
		# the theory line's bottleneck is the bridge's A->B rate (A and B
		# hold nothing)
		keys t
		if wait_for "theory: rate-limited: 330 kbit/s x 1448/1514 \(frame headers\) = 316 kbit/s" 50; then
			ok "test screen: theory uses the bridge's rate ($(capture | grep -o 'rate-limited: 330 kbit/s.*kbit/s' | head -1))"
		else
			bad "test screen: theory ignores the bridge's 330 kbit"; capture | grep -E "theory|path"
		fi
		keys o
		pids=$(ip netns exec "$NS_BM" ss -tnpH state established '( sport = :22 )' 2>/dev/null |
			grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' ')
		for p in $pids; do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && kill -KILL "$p"
		done
		if [ -n "$pids" ] && wait_for "middle lost" 100; then
			ok "middle session killed (sshd $pids): 'middle lost' shown"
		else
			bad "no 'middle lost' after killing the middle's sshd ($pids)"; capture | tail -8
		fi
		n=0
		while [ $n -lt 100 ] && mstatus | grep -q 100ms; do sleep 0.1; n=$((n+1)); done
		if ! mstatus | grep -q 100ms && mstatus | grep -q 5ms; then
			ok "dropped middle session: the lease put the bridge back to B->A 5ms ($((n/10)).$((n%10)) s)"
		else
			bad "dropped middle session: bridge not restored: $(mstatus)"
		fi
		keys p r
		if wait_for "veth-b" 50 && ! capture | grep -q "peer B lost"; then
			ok "middle lost: the console goes on with A and B"
		else
			bad "middle lost: peers not shown"; capture
		fi
		keys q
		if wait_for "console-exit=0" 150 && capture | grep -q "middle box lost: the bridge's lease restores its dials" &&
		   ! capture | grep -q "restored bridge lost"; then
			ok "middle lost: quits cleanly, summary says the lease restores it ($(capture | grep -o 'linklab: .*lease restores its dials' | head -1))"
		else
			bad "middle lost: no clean quit"; capture | tail -4
		fi
	else
		bad "lost run: console --middle did not start"; capture
	fi

	# 9g. no bridge running: said so, retried every few seconds (no --peer:
	#     B is reached through the bridge)
	blabsh stop-engine >/dev/null 2>&1
	if start_mid_console --middle middle && wait_for "no linklab bridge runs" 100; then
		ok "no bridge on the middle: the section says so"
		blabsh engine >/dev/null 2>&1
		if wait_for "M \(middle\): bridge user engine" 100; then
			ok "bridge started later: the console attaches by itself"
		else
			bad "no attach after the bridge started"; capture | tail -8
		fi
	else
		bad "no 'no linklab bridge runs' notice"; capture | tail -8
		blabsh engine >/dev/null 2>&1
	fi
	keys q
	wait_for "console-exit=0" 150 || bad "no-bridge run: no clean exit"

	# 9g2. another console holds the lease: said so, attached once it ends
	rm -f "$LAB_DIR-lease"
	mkfifo "$LAB_DIR-lease"
	ip netns exec "$NS_BM" "$BIN" bridge --attach < "$LAB_DIR-lease" > /dev/null 2>&1 &
	lp=$!
	exec 3> "$LAB_DIR-lease"
	if start_mid_console --peer peer-b --middle middle && wait_for "leased by another console" 100; then
		ok "bridge leased by another console: the section says so ($(capture | grep -o 'leased by another console[^;]*' | head -1))"
		exec 3>&-
		if wait_for "M \(middle\): bridge user engine" 100; then
			ok "the other lease ended: the console attaches by itself"
		else
			bad "no attach after the other lease ended"; capture | tail -8
		fi
	else
		bad "no 'leased by another console' notice"; capture | tail -8
	fi
	exec 3>&- 2>/dev/null
	n=0
	while [ -d /proc/"$lp" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
	if [ -d /proc/"$lp" ]; then
		bad "the other --attach still runs 5 s after its stdin closed"
		kill "$lp" 2>/dev/null
	fi
	wait "$lp" 2>/dev/null
	rm -f "$LAB_DIR-lease"
	keys q
	wait_for "console-exit=0" 150 || bad "lease-busy run: no clean exit"

	# 9j. a stalled middle host: SIGSTOP of the remote `linklab bridge
	#     --attach` (the one this console started over SSH). The get is
	#     asynchronous: keys keep working, after 5 s the middle section says
	#     "not answering (N s)", a set is refused at once instead of
	#     freezing, and after SIGCONT the section recovers. A second, longer
	#     stop (> 15 s) makes the middle lost, as a dropped session does.
	attach_pids() { # the attach processes in the middle namespace
		for p in $(ip netns pids "$NS_BM"); do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = linklab ] || continue
			case "$(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null)" in
			*"bridge --attach"*) echo "$p" ;;
			esac
		done
	}
	now_ms() { echo $(($(date +%s%N) / 1000000)); }
	if start_mid_console --peer peer-b --middle middle && wait_for "M \(middle\): bridge user engine" 100; then
		apid=$(attach_pids | tr '\n' ' ')
		set -- $apid
		if [ $# -ne 1 ]; then
			bad "stalled middle: expected one 'linklab bridge --attach' in $NS_BM, found '$apid'"
		else
			apid=$1
			kill -STOP "$apid"
			sleep 1.2       # a get is now on its way to the stopped process
			t0=$(now_ms)
			keys '?'
			if wait_for "with --middle: clear the bridge" 20; then
				t1=$(now_ms)
				keys Escape
				if wait_for "M \(middle\): bridge user engine" 20; then
					ok "stalled middle: keys still work (help opened in $((t1 - t0)) ms and closed, get unanswered)"
				else
					bad "stalled middle: help did not close"; capture | tail -6
				fi
			else
				bad "stalled middle: the console froze (help not shown within 2 s)"; capture | tail -6
			fi
			if wait_for "M \(middle\): bridge user engine.* not answering \([0-9]+ s\)" 100; then
				ok "stalled middle: the section says so ($(capture | grep -o 'not answering ([0-9]* s)' | head -1))"
			else
				bad "stalled middle: no 'not answering'"; capture | tail -14
			fi
			if capture | grep -q "middle lost"; then bad "stalled middle: lost already (< 15 s)"; fi
			# a set while it does not answer: refused at once, nothing sent
			t0=$(now_ms)
			keys C
			if wait_for "error: bridge both directions: .*not answering" 20; then
				ok "stalled middle: C (clear bridge) refused at once ($(($(now_ms) - t0)) ms): $(capture | grep -o 'not answering (no reply for [0-9]* s): not sent' | head -1)"
			else
				bad "stalled middle: C not refused"; capture | tail -4
			fi
			kill -CONT "$apid"
			if wait_for "answers again \(no reply for [0-9]+ s\)" 50 &&
			   ! capture | grep -q "not answering (" && ! capture | grep -q "middle lost"; then
				ok "SIGCONT: the section recovers ($(capture | grep -o 'answers again ([^)]*)' | head -1))"
			else
				bad "SIGCONT: no recovery"; capture | tail -14
			fi
			if wait_for "B->A +rx [0-9.]+ [kMG]?bit/s" 30 && capture | grep -Eq "^ +A->B +rx [0-9.]+ [kMG]?bit/s .* none$"; then
				ok "after the stall: counters and dials read again"
			else
				bad "after the stall: no counters"; capture | grep -E "A->B|B->A"
			fi
			# the same with the middle's sshd session stopped instead (the
			# get stays in its socket): keys work, then it recovers
			spids=
			for p in $(ip netns exec "$NS_BM" ss -tnpH state established '( sport = :22 )' 2>/dev/null |
				grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
				[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && spids="$spids $p"
			done
			if [ -z "$spids" ]; then
				bad "stalled sshd: no sshd session found in $NS_BM"
			else
				kill -STOP $spids
				sleep 1.2
				t0=$(now_ms)
				keys '?'
				if wait_for "with --middle: clear the bridge" 20; then
					ok "stopped sshd session ($spids): keys still work (help in $(($(now_ms) - t0)) ms)"
				else
					bad "stopped sshd session: the console froze"; capture | tail -6
				fi
				keys Escape
				wait_for "not answering \([0-9]+ s\)" 100 || { bad "stopped sshd session: no 'not answering'"; capture | tail -12; }
				kill -CONT $spids
				n=0
				while [ $n -lt 50 ] && capture | grep -q "not answering ("; do sleep 0.1; n=$((n+1)); done
				if ! capture | grep -q "not answering (" && ! capture | grep -q "middle lost" &&
				   capture | grep -q "M (middle): bridge user engine"; then
					ok "stopped sshd session: SIGCONT, the section recovers ($((n/10)).$((n%10)) s)"
				else
					bad "stopped sshd session: no recovery"; capture | tail -12
				fi
			fi
			# a longer stall: a test runs meanwhile (its bars move), and
			# the middle is lost after 15 s
			kill -STOP "$apid"
			t0=$(now_ms)
			keys t
			wait_for "Throughput test" 20 || bad "stalled middle: no test screen"
			keys g j e C-u 4 Enter
			wait_for "duration +4 s" 20 || bad "stalled middle: test form not set"
			keys G Enter
			if wait_for '\[SUM\] .*[0-9.]+ [kMG]?bit/s' 60; then
				s1=$(capture | grep -E '\[SUM\]|^ *\[ *[0-9]+\]')
				sleep 1.5
				s2=$(capture | grep -E '\[SUM\]|^ *\[ *[0-9]+\]')
				if [ "$s1" != "$s2" ]; then
					ok "stalled middle: a test runs, its bars move (SUM $(echo "$s1" | grep -E '\[SUM\]' | grep -Eo '[0-9.]+ [kMG]?bit/s' | head -1) -> $(echo "$s2" | grep -E '\[SUM\]' | grep -Eo '[0-9.]+ [kMG]?bit/s' | head -1))"
				else
					bad "stalled middle: the test's bars stand still: $s2"
				fi
			else
				bad "stalled middle: the test did not start"; capture | tail -8
			fi
			keys p
			if wait_for "middle lost: .*no reply within 15 s" 250; then
				t1=$(now_ms)
				if [ $((t1 - t0)) -ge 14000 ]; then
					ok "stopped for good: middle lost after $((t1 - t0)) ms (the 15 s bound)"
				else
					bad "stopped: lost too early ($((t1 - t0)) ms)"
				fi
			else
				bad "stopped for good: not lost after 25 s"; capture | tail -8
			fi
			kill -CONT "$apid"
			keys d
			if wait_for "\[Dial\]" 20 && ! capture | grep -q "bridge A->B"; then ok "middle lost after a stall: the console goes on (dial screen, no bridge target)"; else bad "after the lost stall: dial screen"; capture | tail -4; fi
			n=0
			while [ $n -lt 50 ] && [ -d /proc/"$apid" ]; do sleep 0.1; n=$((n+1)); done
			if [ -d /proc/"$apid" ]; then
				bad "the stalled attach process still runs 5 s after SIGCONT (its session was dropped)"
			else
				ok "the stalled attach process ended after SIGCONT: the lease is released"
			fi
		fi
		keys q
		wait_for "console-exit=0" 150 || bad "stalled-middle run: no clean exit"
	else
		bad "stalled-middle run: console --middle did not start"; capture | tail -8
	fi

	# 9j2. the middle's sshd session stopped for good (> 15 s): the console
	#      declares the middle lost and closes its session, so when the
	#      middle host answers again its sshd ends the attach process and
	#      the lease: the bridge restores its dials (the starting ones: 9g
	#      restarted the engine without a dial; no 40ms)
	if start_mid_console --peer peer-b --middle middle && wait_for "M \(middle\): bridge user engine" 100; then
		dial_target 3
		dial_row delay
		keys e C-u 4 0 m s Enter Enter
		wait_for "applied on bridge A->B" 100 || bad "sshd-stall run: apply not reported"
		case "$(mstatus)" in *40ms*) ;; *) bad "sshd-stall run: 40ms not applied: $(mstatus)" ;; esac
		apid=$(attach_pids | tr '\n' ' ')
		spids=
		for p in $(ip netns exec "$NS_BM" ss -tnpH state established '( sport = :22 )' 2>/dev/null |
			grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && spids="$spids $p"
		done
		if [ -z "$spids" ]; then
			bad "sshd stall: no sshd session found in $NS_BM"
		else
			kill -STOP $spids
			keys p
			# (the section wraps the sentence: its two halves)
			if wait_for "middle lost: .*session closed; the bridge restores its dials" 250 &&
			   capture | grep -q "lease ends (now, or when the middle host answers again)"; then
				ok "sshd stopped > 15 s: $(capture | grep -o 'middle lost: .*' | head -1 | cut -c1-150)"
			else
				bad "sshd stopped > 15 s: no precise 'middle lost' message"; capture | tail -8
			fi
			case "$(mstatus)" in
			*40ms*) ;;
			*) bad "sshd stall: bridge restored before the middle answered? $(mstatus)" ;;
			esac
			kill -CONT $spids
			n=0
			while [ $n -lt 100 ] && mstatus | grep -q 40ms; do sleep 0.1; n=$((n+1)); done
			st=$(mstatus)
			case "$st" in
			*40ms*) bad "sshd stall resumed: the lease still holds 40ms after 10 s: $st" ;;
			*"A->B: none"*) ok "sshd stall resumed: the lease ended, bridge back to its starting dial ($((n/10)).$((n%10)) s after SIGCONT)" ;;
			*) bad "sshd stall resumed: bridge status: $st" ;;
			esac
			for p in $apid; do
				n=0
				while [ $n -lt 50 ] && [ -d /proc/"$p" ]; do sleep 0.1; n=$((n+1)); done
				[ -d /proc/"$p" ] && bad "sshd stall resumed: attach process $p still runs 5 s after the lease ended ($(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null))"
			done
		fi
		keys q
		if wait_for "console-exit=0" 150 &&
		   capture | grep -q "middle box lost: the bridge's lease restores its dials (now, or when the middle host answers again)"; then
			ok "sshd-stall run: quit summary says when the lease restores the bridge"
		else
			bad "sshd-stall run: quit"; capture | tail -4
		fi
	else
		bad "sshd-stall run: console --middle did not start"; capture | tail -8
	fi

	# 9i. the bridge's own refusal, shown inline: the kernel engine on a
	#     kernel without sch_netem takes rate only, so delay passes the
	#     console's checks and is refused by the bridge
	if ! blabsh engine --engine kernel >/dev/null 2>&1; then
		bad "kernel engine did not start"
	elif start_mid_console --peer peer-b --middle middle && wait_for "bridge kernel engine" 100; then
		# the kernel engine's counters are real (links and tbf of its
		# ports): the console's own SSH to peer B crosses the bridge
		if wait_for "A->B +rx +[1-9][0-9.]* [kMG]?bit/s" 100; then
			ok "kernel engine: the middle section shows a live rate ($(capture | grep -Eo 'A->B +rx +[^ ]+ [^ ]+' | head -1))"
		else
			bad "kernel engine: no live rate in the middle section"; capture | grep -E "A->B|B->A" | tail -2
		fi
		st0=$(mdials)
		dial_target 3
		dial_row delay
		keys e C-u 4 0 m s Enter Enter
		if wait_for "^ a_to_b: |applied on bridge" 100 && capture | grep -Eq "^ a_to_b: "; then
			ok "bridge refusal inline under the dial: $(capture | grep -E '^ a_to_b: ' | head -1 | cut -c1-90)"
			if [ "$(mdials)" = "$st0" ]; then ok "refused set: the bridge is unchanged"; else bad "refused set changed the bridge: $(mdials), was $st0"; fi
			# both directions refused: every error on its own lines,
			# wrapped below the dial, none cut at the screen width
			dial_target 2     # from bridge A->B: B->A, both
			wait_for "target +bridge both directions" 20 || bad "no bridge both target"
			dial_row delay
			keys e C-u 4 0 m s Enter Enter
			if wait_for "^ b_to_a: " 100 && capture | grep -Eq "^ a_to_b: " &&
			   [ "$(capture | grep -c -- "--engine user")" -ge 2 ]; then
				ok "both directions refused: each error wrapped in full below the dial ($(capture | grep -c -- '--engine user') x '--engine user')"
			else
				bad "bridge refusal cut or missing"; capture | tail -12
			fi
		elif capture | grep -q "applied on bridge"; then
			skip "kernel engine took delay (this kernel has sch_netem): no refusal to show"
		else
			bad "no bridge refusal shown for delay on the kernel engine"; capture | tail -12
		fi
		keys q
		wait_for "console-exit=0" 150 || bad "kernel engine run: no clean exit"
	else
		bad "console with the kernel engine did not start"; capture | tail -8
	fi
	blabsh engine >/dev/null 2>&1 || bad "user engine did not restart"
fi

# 9h. without --middle nothing changes: no middle section, no bridge target
if start_mid_console --peer peer-b && wait_for "veth-b" 100; then
	if capture | grep -q "M (" || capture | grep -q "bridge included"; then
		bad "without --middle: a middle section appeared"; capture
	else
		ok "without --middle: no middle section, path line unchanged"
	fi
	dial_target 3
	if wait_for "target +both peers" 20; then ok "without --middle: the target cycle is both / A / B"; else bad "without --middle: target cycle"; capture | grep target; fi
	keys q
	wait_for "console-exit=0" 150 || bad "without --middle: no clean exit"
else
	bad "console without --middle (bridge lab) did not start"; capture
fi
# 9j. the console starts the bridge itself (--bridge IF_A,IF_B [--middle-engine E]):
#     `linklab bridge IF_A IF_B --engine E --stdin-lease` on the middle over SSH; it
#     stops (ports plain again) when the console quits or is killed -9
out=$("$BIN" console --bridge veth-ma,veth-mb --middle-engine warp 2>&1); rc=$?
case "$rc:$out" in
2:*"--bridge needs --middle HOST"*"--middle-engine 'warp': auto, kernel or user"*)
	ok "--bridge without --middle: exit 2 naming it (with the bad --middle-engine: every problem at once)" ;;
*) bad "--bridge without --middle: exit $rc: $out" ;;
esac
# bridges started with --stdin-lease in the middle namespace
lease_procs() {
	for p in $(ip netns pids "$NS_BM"); do tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null; echo; done |
		grep -c -- "--stdin-lease"
}
# the middle's ports plain: no such bridge process, no llbr0, noqueue, not promiscuous
ports_plain() {
	[ "$(lease_procs)" = 0 ] || return 1
	! ip -n "$NS_BM" link show llbr0 >/dev/null 2>&1 || return 1
	for d in veth-ma veth-mb; do
		[ "$(tc -n "$NS_BM" qdisc show dev $d | cut -d' ' -f2)" = noqueue ] || return 1
		ip -n "$NS_BM" -d link show $d | grep -q "promiscuity 0 " || return 1
	done
}
wait_plain() { # tenths -> 0 when plain in time; $n = tenths waited
	n=0
	while [ $n -lt "$1" ]; do ports_plain && return 0; sleep 0.1; n=$((n+1)); done
	return 1
}
plain_why() {
	echo "procs $(lease_procs); $(ip -n "$NS_BM" -br link | tr -s ' ' | tr '\n' ';') $(tc -n "$NS_BM" qdisc | tr '\n' ';')"
}
# a bridge already on those ports (the lab's): the start fails with its message
if start_mid_console --middle middle --bridge veth-ma,veth-mb &&
   wait_for "a bridge \(pid [0-9]+\) already forwards" 150; then
	ok "--bridge on busy ports: the middle section shows the running bridge's message ($(capture | grep -Eo 'a bridge \(pid [0-9]+\) already forwards' | head -1))"
else
	bad "--bridge on busy ports: no message"; capture | tail -12
fi
keys q
wait_for "console-exit=0" 150 || bad "--bridge busy run: no clean exit"
blabsh stop-engine >/dev/null 2>&1
if ! ports_plain; then bad "lab engine stopped but the ports are not plain: $(plain_why)"; fi
# --middle-engine user: started, shown, dialled (the RTT rises), stopped at quit
if start_mid_console --peer peer-b --middle middle --bridge veth-ma,veth-mb --middle-engine user &&
   wait_for "M \(middle\): bridge user engine \(--middle-engine user\), veth-ma <-> veth-mb, pid [0-9]+, started by this console" 150; then
	ok "--bridge --middle-engine user: the middle section names the engine, how it was chosen and both ports"
	[ "$(lease_procs)" = 1 ] && ok "--bridge: one 'linklab bridge veth-ma veth-mb --engine user --stdin-lease' runs in the middle" ||
		bad "--bridge: $(lease_procs) --stdin-lease processes in the middle"
	base=$(rtt_ms)
	dial_target 3
	dial_row delay
	keys e C-u 4 0 m s Enter Enter
	if wait_for "applied on bridge A->B: .*40ms" 100; then ok "--bridge: delay 40ms applied on bridge A->B"; else bad "--bridge: apply not reported"; capture | tail -4; fi
	now=$(rtt_ms)
	if [ -n "$base" ] && [ -n "$now" ] && [ "$now" -ge $((base + 38)) ]; then
		ok "--bridge: RTT A -> B (TCP connect) rose from $base ms to $now ms (the started bridge's A->B +40 ms)"
	else
		bad "--bridge: RTT A -> B did not rise by 40 ms: before '$base' after '$now'"
	fi
	keys q
	if wait_for "console-exit=0" 150 && capture | grep -q "stopped: this console started it"; then
		ok "--bridge quit: the summary says the bridge it started was stopped"
	else
		bad "--bridge quit: no clean exit / summary"; capture | tail -4
	fi
	if wait_plain 50; then
		ok "--bridge quit: bridge process gone, ports plain (noqueue, not promiscuous, no llbr0) after $((n/10)).$((n%10)) s"
	else
		bad "--bridge quit: left behind: $(plain_why)"
	fi
else
	bad "console --bridge --middle-engine user did not start"; capture | tail -8
fi
# auto (no netem here -> user); kill -9 of the console stops the bridge too
if start_mid_console --peer peer-b --middle middle --bridge veth-ma,veth-mb &&
   wait_for "M \(middle\): bridge (user engine \(auto: no netem there\)|kernel engine \(auto: netem there\))" 150; then
	ok "--bridge (engine auto): $(capture | grep -Eo 'bridge [a-z]+ engine \(auto: [a-z ]+\)' | head -1)"
	# the started bridge stopped from outside (SIGTERM): the retry starts a
	# new one, and sets the dial the stopped one held on it again
	spid() { capture | grep -Eo "veth-mb, pid [0-9]+, started" | grep -Eo "[0-9]+" | head -1; }
	dial_target 3
	dial_row delay
	keys e C-u 3 0 m s Enter Enter
	wait_for "applied on bridge A->B: .*30ms" 100 || { bad "--bridge (auto): delay 30ms not applied"; capture | tail -4; }
	keys p
	wait_for "veth-mb, pid [0-9]+, started" 50 || bad "--bridge (auto): the peers screen did not come back"
	bp=$(spid)
	np=
	# (only the bridge this test's console started: its command line says so)
	if [ -n "$bp" ] && grep -q -- "--stdin-lease" /proc/"$bp"/cmdline 2>/dev/null &&
	   kill -TERM "$bp" 2>/dev/null; then
		n=0
		while [ $n -lt 200 ]; do
			np=$(spid)
			[ -n "$np" ] && [ "$np" != "$bp" ] && break
			sleep 0.1; n=$((n+1))
		done
	fi
	if [ -n "$np" ] && [ "$np" != "$bp" ] && [ "$(lease_procs)" = 1 ]; then
		ok "--bridge: the started bridge (pid $bp) stopped by SIGTERM: the console started pid $np ($((n/10)).$((n%10)) s)"
		if wait_for "the bridge stopped and was started again \\(pid $np\\); its dials set again" 50 &&
		   case "$(mstatus)" in *30ms*) true ;; *) false ;; esac; then
			ok "--bridge: the new bridge holds the stopped one's dial again (delay 30ms), said on the status line"
		else
			bad "--bridge: the new bridge's dial: $(mstatus)"; capture | tail -3
		fi
	else
		bad "--bridge: no new bridge after SIGTERM of pid '$bp' (now '$np', $(lease_procs) running)"; capture | grep -A2 "M (middle)"
	fi
	cpid=$(console_pid)
	if [ -n "$cpid" ] && [ "$(cat /proc/"$cpid"/comm 2>/dev/null)" = linklab ] && [ "$(lease_procs)" = 1 ]; then
		kill -KILL "$cpid"
		if wait_plain 100; then
			ok "--bridge: kill -9 of the console stops the bridge it started, ports plain after $((n/10)).$((n%10)) s"
		else
			bad "--bridge: kill -9 of the console left: $(plain_why)"
		fi
	else
		bad "--bridge kill -9 run: console pid '$cpid' or bridge ($(lease_procs)) not found"
	fi
else
	bad "console --bridge (auto) did not start"; capture | tail -8
fi
# --middle-engine kernel: delay refused by the bridge (no sch_netem here), shown; quit leaves nothing
if start_mid_console --peer peer-b --middle middle --bridge veth-ma,veth-mb --middle-engine kernel &&
   wait_for "M \(middle\): bridge kernel engine \(--middle-engine kernel\), veth-ma <-> veth-mb" 150; then
	ok "--bridge --middle-engine kernel: started, the section says so (llbr0 $(ip -n "$NS_BM" link show llbr0 >/dev/null 2>&1 && echo present || echo absent))"
	dial_target 3
	dial_row delay
	keys e C-u 4 0 m s Enter Enter
	if wait_for "^ a_to_b: |applied on bridge" 100 && capture | grep -Eq "^ a_to_b: .*netem"; then
		ok "--bridge --middle-engine kernel: delay refused, shown in the console: $(capture | grep -E '^ a_to_b: ' | head -1 | cut -c1-80)"
	elif capture | grep -q "applied on bridge"; then
		skip "--bridge --middle-engine kernel took delay (this kernel has sch_netem): no refusal to show"
	else
		bad "--bridge --middle-engine kernel: no refusal shown"; capture | tail -12
	fi
	keys q
	wait_for "console-exit=0" 150 || bad "--bridge kernel run: no clean exit"
	if wait_plain 50; then
		ok "--bridge --middle-engine kernel quit: nothing left running, no llbr0, ports noqueue"
	else
		bad "--bridge --middle-engine kernel quit left: $(plain_why)"
	fi
else
	bad "console --bridge --middle-engine kernel did not start"; capture | tail -8
fi
blabsh down >/dev/null 2>&1

finish
