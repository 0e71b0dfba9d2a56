#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/freeze.sh - a peer that stops answering never freezes linklab.
# The real console under tmux (as tests/tui/run.sh) and the real CLI against
# the two-namespace lab, with B stalled two ways: the sshd processes serving
# linklab's session SIGSTOPped (found by the session's TCP port with ss -tnp
# in B's namespace), and a `tc` that hangs on B (a wrapper first on the PATH
# of B's sshd sessions that waits while a flag file exists).
#   LINKLAB=path/to/linklab sh tests/tui/freeze.sh      (default build/linklab)
# FREEZE_PEER_TIMEOUT (default 6): the console's --peer-timeout; empty = the
# option is not given (e.g. to measure a binary without it).
# Prints PASS/FAIL/SKIP lines with the measured figures and
# "tui-freeze: N passed, N failed, N skipped" (helpers: tests/tui/lib.sh).
# Last: B's sshd stopped for good, the console gone: B's hold guard restores
# B after its silence bound.
. "$(dirname "$0")/lib.sh"
PT=${FREEZE_PEER_TIMEOUT-6}
PTOPT=${PT:+--peer-timeout $PT}
BOUND=${PT:-10}
tui_need_root
HANG=$LAB_DIR/hang
STOPPED=""
# stopped sshd processes (ours: the lab's sshd forked them) go on, so that
# they end with their sessions
tui_cleanup_extra() {
	[ -n "$STOPPED" ] && kill -CONT $STOPPED 2>/dev/null
	rm -f "$HANG/on" "$HANG/slow"
}
tui_lab_up

# The tc of B's sessions: waits while $HANG/on exists (a tc that hangs),
# sleeps 2 s first while $HANG/slow exists (time to stop sshd under a
# running command; $HANG/started gets its pid), then runs the real tc.
mkdir -p "$HANG"
REAL_TC=$(command -v tc)
cat > "$HANG/tc" <<EOF
#!/bin/sh
while [ -e "$HANG/on" ]; do sleep 0.2; done
[ -e "$HANG/slow" ] && { echo \$\$ >> "$HANG/started"; sleep 2; }
exec $REAL_TC "\$@"
EOF
chmod 755 "$HANG/tc"
sed -i "s|^SetEnv PATH=|SetEnv PATH=$HANG:|" "$LAB_DIR/sshd_config"
SSHD_PID=$(cat "$LAB_DIR/sshd.pid")
kill -HUP "$SSHD_PID"        # sshd re-executes itself with the new config
n=0
while [ $n -lt 50 ]; do
	w=$(ip netns exec "$NS_A" ssh -F "$LL_SSH_CONFIG" -o ConnectTimeout=2 "$LL_PEER" 'command -v tc' 2>/dev/null)
	[ "$w" = "$HANG/tc" ] && break
	sleep 0.2; n=$((n+1))
done
if [ "$w" = "$HANG/tc" ]; then
	ok "B's sessions find the tc wrapper first on their PATH ($w)"
else
	bad "tc wrapper not on B's PATH (got '$w')"
	finish
fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# wait_kind NS DEV KIND TENTHS: until DEV's root qdisc is KIND
wait_kind() {
	n=0
	while [ $n -lt "$4" ]; do
		case "$(tcj "$1" "$2")" in *"\"kind\":\"$3\""*) return 0 ;; esac
		sleep 0.1; n=$((n+1))
	done
	return 1
}

# the sshd processes in B holding the TCP connection of linklab process PID
sshd_of() {
	cports=$(ip netns exec "$NS_A" ss -tnpH state established '( dport = :22 )' 2>/dev/null |
		grep "pid=$1," | awk '{print $3}' | sed 's/.*://')
	for cp in $cports; do
		for p in $(ip netns exec "$NS_B" ss -tnpH state established "( sport = :22 and dport = :$cp )" 2>/dev/null |
			grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && echo "$p"
		done
	done
}
stop_pids() { STOPPED="$STOPPED $*"; kill -STOP "$@"; }
cont_pids() { kill -CONT "$@" 2>/dev/null; }

tui_tmux_up

# start_console: the console on A with B = peer-b
start_console() {
	$TMUX kill-session -t tui 2>/dev/null
	$TMUX new-session -d -s tui -x 160 -y 36 \
		"TERM=screen $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER $PTOPT 2>&1; echo console-exit=\$?; sleep 600"
	wait_for "veth-b" 150
}
# apply_rate: dial 10mbit on both peers and wait for the read-back.
apply_rate() {
	keys d
	wait_for "Impairment dial" 30
	keys e C-u 1 0 m b i t Enter Enter
	wait_for "y: apply anyway" 150 || return 1
	keys y
	wait_for "applied on A veth-a, B veth-b" 150 || return 1
	keys p
	wait_for "Peers" 30
}
# key_latency LABEL: open help, measure until it shows, close it
key_latency() {
	t0=$(now_ms)
	keys '?'
	if wait_for "Keys on every screen" 30; then
		ms=$(( $(now_ms) - t0 ))
		keys Escape
		wait_for "veth-b" 30
		if [ "$ms" -le 1000 ]; then
			ok "$1: a key still answers: help shown in $ms ms (<= 1000)"
		else
			bad "$1: help took $ms ms (> 1000)"
		fi
	else
		bad "$1: the console froze (help not shown within 3 s)"; capture | tail -4
		keys Escape
	fi
}

# --- 1. B's sshd stopped under the console ----------------------------------
if ! start_console; then
	bad "console did not start"; capture | tail -5
elif ! apply_rate; then
	bad "apply on both peers failed"; capture | tail -5
else
	pids=$(sshd_of "$(console_pid)" | tr '\n' ' ')
	if [ -z "$pids" ]; then
		bad "stopped sshd: the console's sshd processes not found in $NS_B"
	else
		stop_pids $pids
		t_stop=$(now_ms)
		keys r          # re-read both peers: B's request now waits
		if wait_for "waiting for B \([0-9]+ s\)" 40; then
			ok "stopped sshd ($pids): the status line says '$(capture | grep -Eo 'waiting for B \([0-9]+ s\)[^|]*' | head -1 | sed 's/ *$//')'"
		else
			bad "stopped sshd: no 'waiting for B (N s)'"; capture | tail -3
		fi
		key_latency "stopped sshd, 2 s into the stall"
		sleep 1
		key_latency "stopped sshd, 3 s into the stall"
		if wait_for "peer B gone: no answer within $BOUND s" $(( (BOUND + 6) * 10 )); then
			ms=$(( $(now_ms) - t_stop ))
			if [ "$ms" -le $(( (BOUND + 2) * 1000 )) ]; then
				ok "stopped sshd: 'peer B gone: no answer within $BOUND s' after $ms ms"
			else
				bad "stopped sshd: B declared gone only after $ms ms (bound $BOUND s)"
			fi
		else
			bad "stopped sshd: B never declared gone"; capture | tail -3
		fi
		if capture | grep -q "revert in"; then
			bad "stopped sshd: a revert countdown is promised though its timer state is unknown"
		fi
		key_latency "stopped sshd, B gone"
		t0=$(now_ms)
		keys q
		if wait_for "console-exit=" 60; then
			ms=$(( $(now_ms) - t0 ))
			if [ "$ms" -le 2000 ] && capture | grep -q "console-exit=3"; then
				ok "stopped sshd: q restores A at once and exits 3 (B restores itself) in $ms ms (<= 2000)"
			else
				bad "stopped sshd: q took $ms ms, $(capture | grep -o 'console-exit=[0-9]*')"
			fi
			if capture | grep -q "restored A veth-a, B lost (restores itself)"; then
				ok "stopped sshd: the summary names A restored and B restoring itself"
			else
				bad "stopped sshd: summary: $(capture | grep 'linklab:' | tail -2)"
			fi
		else
			bad "stopped sshd: q did not exit within 6 s"; capture | tail -4
		fi
		if wait_kind "$NS_A" veth-a noqueue 10; then ok "stopped sshd: veth-a back to noqueue"; else bad "stopped sshd: veth-a: $(tcj "$NS_A" veth-a)"; fi
		# B runs again: it finds its session closed, and its hold guard
		# puts veth-b back
		cont_pids $pids
		t0=$(now_ms)
		if wait_kind "$NS_B" veth-b noqueue 150; then
			ok "SIGCONT: B restored itself ($(( $(now_ms) - t0 )) ms after it ran again)"
		else
			bad "SIGCONT: veth-b not restored: $(tcj "$NS_B" veth-b)"
		fi
	fi
fi
$TMUX kill-session -t tui 2>/dev/null

# --- 2. Ctrl-C while B's request waits: exit 130 within the bound -----------
if ! start_console; then
	bad "console (Ctrl-C run) did not start"
elif ! apply_rate; then
	bad "Ctrl-C run: apply failed"; capture | tail -5
else
	pids=$(sshd_of "$(console_pid)" | tr '\n' ' ')
	if [ -z "$pids" ]; then
		bad "Ctrl-C run: the console's sshd processes not found"
	else
		stop_pids $pids
		keys r
		wait_for "waiting for B \([0-9]+ s\)" 40 || bad "Ctrl-C run: no 'waiting for B'"
		t0=$(now_ms)
		keys C-c
		if wait_for "console-exit=" $(( (BOUND + 5) * 10 )); then
			ms=$(( $(now_ms) - t0 ))
			code=$(capture | grep -o 'console-exit=[0-9]*' | cut -d= -f2)
			if [ "$code" = 130 ] && [ "$ms" -le $(( (BOUND + 3) * 1000 )) ]; then
				ok "Ctrl-C with B stalled: exit 130 after $ms ms (A restored at once, B given the rest of its $BOUND s bound)"
			else
				bad "Ctrl-C with B stalled: exit $code after $ms ms"
			fi
		else
			bad "Ctrl-C with B stalled: no exit within $((BOUND + 5)) s"; capture | tail -4
		fi
		if wait_kind "$NS_A" veth-a noqueue 10; then ok "Ctrl-C: veth-a restored"; else bad "Ctrl-C: veth-a: $(tcj "$NS_A" veth-a)"; fi
		cont_pids $pids
		if wait_kind "$NS_B" veth-b noqueue 150; then ok "Ctrl-C: B restored itself once it ran again"; else bad "Ctrl-C: veth-b: $(tcj "$NS_B" veth-b)"; fi
	fi
fi
$TMUX kill-session -t tui 2>/dev/null

# --- 2b. q while B's request waits, then any key: B is not waited for -------
if ! start_console; then
	bad "console (q + key run) did not start"
elif ! apply_rate; then
	bad "q + key run: apply failed"; capture | tail -5
else
	pids=$(sshd_of "$(console_pid)" | tr '\n' ' ')
	if [ -z "$pids" ]; then
		bad "q + key run: the console's sshd processes not found"
	else
		stop_pids $pids
		keys r
		wait_for "waiting for B \([0-9]+ s\)" 40 || bad "q + key run: no 'waiting for B'"
		keys q
		if wait_for "B has not answered yet: waiting \(any key: stop waiting" 20; then
			ok "q with B stalled: A restored, the screen says it waits for B and how to stop"
		else
			bad "q with B stalled: no waiting notice"; capture | tail -3
		fi
		t0=$(now_ms)
		keys Space
		if wait_for "console-exit=" 60; then
			ms=$(( $(now_ms) - t0 ))
			if [ "$ms" -le 2000 ] && capture | grep -q "console-exit=3" &&
			   capture | grep -q "restored A veth-a, B not answering (restores itself)"; then
				ok "q with B stalled, then a key: exit 3 in $ms ms: $(capture | grep 'linklab:' | tail -1)"
			else
				bad "q + key: $ms ms, $(capture | grep -E 'console-exit|linklab:' | tail -2)"
			fi
		else
			bad "q + key: no exit within 6 s"; capture | tail -4
		fi
		if wait_kind "$NS_A" veth-a noqueue 10; then ok "q + key: veth-a restored"; else bad "q + key: veth-a: $(tcj "$NS_A" veth-a)"; fi
		cont_pids $pids
		if wait_kind "$NS_B" veth-b noqueue 150; then ok "q + key: B restored itself once it ran again"; else bad "q + key: veth-b: $(tcj "$NS_B" veth-b)"; fi
	fi
fi
$TMUX kill-session -t tui 2>/dev/null

# --- 2c. q while B's apply is still running: its change is restored too ---
# B's tc sleeps 2 s first ($HANG/slow) from the confirmation on; q comes as
# soon as A holds the dial, with B's apply still in flight. The console
# waits for that apply's result, then restores both sides itself.
if ! start_console; then
	bad "console (q during B's apply) did not start"
else
	keys d
	wait_for "Impairment dial" 30
	keys e C-u 1 0 m b i t Enter Enter
	if ! wait_for "y: apply anyway" 150; then
		bad "q during B's apply: no confirmation asked"; capture | tail -4
	else
		touch "$HANG/slow"
		keys y
		if ! wait_kind "$NS_A" veth-a tbf 50; then
			bad "q during B's apply: A never held the dial"; capture | tail -4
		else
			inb_kind=$(tcj "$NS_B" veth-b)
			keys q
			rm -f "$HANG/slow"
			case $inb_kind in *'"kind":"noqueue"'*) ;; *) bad "q during B's apply: B changed before q (the case needs B's apply in flight): $inb_kind" ;; esac
			if wait_for "console-exit=" $(( (BOUND + 6) * 10 )); then
				sum=$(capture | grep 'linklab:' | tail -1)
				if capture | grep -q "console-exit=0" && echo "$sum" | grep -q "restored A veth-a, B veth-b"; then
					ok "q during B's apply: exit 0, $sum"
				else
					bad "q during B's apply: $(capture | grep -E 'console-exit|linklab:' | tail -2)"
				fi
			else
				bad "q during B's apply: no exit within $((BOUND + 6)) s"; capture | tail -4
			fi
			if wait_kind "$NS_A" veth-a noqueue 10; then ok "q during B's apply: veth-a restored"; else bad "q during B's apply: veth-a: $(tcj "$NS_A" veth-a)"; fi
			if wait_kind "$NS_B" veth-b noqueue 10; then
				ok "q during B's apply: veth-b restored by the console's quit"
			else
				bad "q during B's apply: veth-b left impaired: $(tcj "$NS_B" veth-b)"
			fi
		fi
	fi
	rm -f "$HANG/slow"
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth-b root 2>/dev/null
fi
$TMUX kill-session -t tui 2>/dev/null

# --- 3. a tc that hangs on B -------------------------------------------------
if ! start_console; then
	bad "console (hanging tc run) did not start"
elif ! apply_rate; then
	bad "hanging tc run: apply failed"; capture | tail -5
else
	touch "$HANG/on"
	t_stop=$(now_ms)
	keys r
	if wait_for "waiting for B \([0-9]+ s\)" 40; then
		ok "hanging tc: '$(capture | grep -Eo 'waiting for B \([0-9]+ s\)[^|]*' | head -1 | sed 's/ *$//')'"
	else
		bad "hanging tc: no 'waiting for B (N s)'"; capture | tail -3
	fi
	key_latency "hanging tc"
	if wait_for "peer B gone: no answer within $BOUND s" $(( (BOUND + 6) * 10 )); then
		ok "hanging tc: B declared gone after $(( $(now_ms) - t_stop )) ms"
	else
		bad "hanging tc: B never declared gone"; capture | tail -3
	fi
	t0=$(now_ms)
	keys q
	if wait_for "console-exit=3" 60; then
		ms=$(( $(now_ms) - t0 ))
		if [ "$ms" -le 2000 ]; then ok "hanging tc: q exits 3 (B restores itself) in $ms ms"; else bad "hanging tc: q took $ms ms"; fi
	else
		bad "hanging tc: q did not exit"; capture | tail -4
	fi
	if wait_kind "$NS_A" veth-a noqueue 10; then ok "hanging tc: veth-a restored"; else bad "hanging tc: veth-a: $(tcj "$NS_A" veth-a)"; fi
	# tc works again: B's guard (its session is closed) restores veth-b
	rm -f "$HANG/on"
	if wait_kind "$NS_B" veth-b noqueue 150; then ok "hanging tc: B restored itself once tc ran again"; else bad "hanging tc: veth-b: $(tcj "$NS_B" veth-b)"; fi
fi
$TMUX kill-session -t tui 2>/dev/null

# --- 4. the CLI: a clear timeout error within 15 s ---------------------------
# run_cli LABEL MAXMS [linklab args...]: time it, expect a non-zero exit and
# "did not answer within" on stderr within MAXMS
run_cli() {
	label=$1 max=$2
	shift 2
	t0=$(now_ms)
	ip netns exec "$NS_A" "$BIN" "$@" >"$LAB_DIR/cli.out" 2>&1
	rc=$?
	ms=$(( $(now_ms) - t0 ))
	msg=$(grep -m1 "did not answer within" "$LAB_DIR/cli.out")
	if [ $rc != 0 ] && [ -n "$msg" ] && [ $ms -le "$max" ]; then
		ok "$label: exit $rc after $ms ms (<= $max): $msg"
	else
		bad "$label: exit $rc after $ms ms: $(tail -2 "$LAB_DIR/cli.out")"
	fi
}
# descends PID ANCESTOR...: is one of ANCESTOR a parent (or further up) of PID?
descends() {
	d=$1
	shift
	while [ -n "$d" ] && [ "$d" -gt 1 ] 2>/dev/null; do
		for a in "$@"; do [ "$d" = "$a" ] && return 0; done
		d=$(awk '{print $4}' /proc/"$d"/stat 2>/dev/null)
	done
	return 1
}
# run_cli_stopped LABEL ARGS...: run linklab ARGS in the background with
# B's tc slowed; once its first tc runs (the session is up), stop the sshd
# processes of its session
run_cli_stopped() {
	label=$1
	shift
	rm -f "$HANG/started"
	touch "$HANG/slow"
	t0=$(now_ms)
	ip netns exec "$NS_A" "$BIN" "$@" >"$LAB_DIR/cli.out" 2>&1 &
	cli=$!
	pids=""
	# wait for a tc of this CLI's session (not B's guard or revert timer
	# of an earlier run): one whose ancestors include its sshd
	n=0
	while [ $n -lt 100 ] && [ -z "$pids" ]; do
		sleep 0.05; n=$((n+1))
		sp=$(sshd_of "$cli" | tr '\n' ' ')
		[ -n "$sp" ] || continue
		for t in $(cat "$HANG/started" 2>/dev/null); do
			# shellcheck disable=SC2086
			if descends "$t" $sp; then pids=$sp; fi
		done
	done
	if [ -z "$pids" ]; then
		bad "$label: the CLI's sshd processes not found"
		wait $cli
		rm -f "$HANG/slow"
		return
	fi
	stop_pids $pids
	wait $cli
	rc=$?
	ms=$(( $(now_ms) - t0 ))
	rm -f "$HANG/slow"
	cont_pids $pids
	msg=$(grep -m1 "did not answer within" "$LAB_DIR/cli.out")
	if [ $rc != 0 ] && [ -n "$msg" ] && [ $ms -le 15000 ]; then
		ok "$label (sshd $pids stopped): exit $rc after $ms ms (<= 15000): $msg"
	else
		bad "$label (sshd $pids stopped): exit $rc after $ms ms: $(tail -2 "$LAB_DIR/cli.out")"
	fi
}
CLI="-F $LL_SSH_CONFIG --peer $LL_PEER"
run_cli_stopped "show --peer B" show $CLI
run_cli_stopped "apply --peer B" apply $CLI --rate 10mbit
if wait_kind "$NS_A" veth-a noqueue 30; then ok "apply with B stopped: nothing left on veth-a"; else bad "apply with B stopped: veth-a: $(tcj "$NS_A" veth-a)"; fi
touch "$HANG/on"
run_cli "show --peer B, tc hangs" 15000 show $CLI
run_cli "apply --peer B, tc hangs" 15000 apply $CLI --rate 10mbit
run_cli "show --peer B --peer-timeout 2, tc hangs" 4000 show $CLI --peer-timeout 2
rm -f "$HANG/on"
if wait_kind "$NS_B" veth-b noqueue 100; then ok "CLI runs: veth-b holds nothing of theirs"; else bad "CLI runs: veth-b: $(tcj "$NS_B" veth-b)"; fi
out=$(ip netns exec "$NS_A" "$BIN" show $CLI --peer-timeout 0 2>&1)
case "$out" in
*"--peer-timeout 0: expected seconds, 1..300"*) ok "--peer-timeout 0 refused with the range" ;;
*) bad "--peer-timeout 0: $out" ;;
esac


# --- B's sshd stopped for good: the hold guard's watchdog restores B ----------
# a stopped sshd never closes the session, so B's guard cannot see EOF; it
# takes LINKLAB_TEST_GUARD_SILENCE_S (8; 60 s or 4 command bounds by
# default) without a beat from the console as the session's end
XDG_SAVE=$XDG
XDG="$XDG LINKLAB_TEST_GUARD_SILENCE_S=8"
if ! start_console; then
	bad "watchdog run: console did not start"
elif ! apply_rate; then
	bad "watchdog run: apply failed"; capture | tail -5
else
	sleep 12     # longer than the silence bound: the beats keep B as dialled
	if case "$(tcj "$NS_B" veth-b)" in *'"kind":"tbf"'*) true ;; *) false ;; esac; then
		ok "watchdog: a live console's beats keep B's dial past the 8 s silence bound"
	else
		bad "watchdog: B restored under a live console: $(tcj "$NS_B" veth-b)"
	fi
	pids=$(sshd_of "$(console_pid)" | tr '\n' ' ')
	if [ -n "$pids" ]; then
		stop_pids $pids
		t0=$(now_ms)
		keys q
		wait_for "console-exit=" 60 || bad "watchdog: q did not exit"
		if wait_kind "$NS_B" veth-b noqueue 250; then
			ok "watchdog: B's sshd still stopped, B restored itself $(( $(now_ms) - t0 )) ms after the stall began (bound 8 s)"
		else
			bad "watchdog: B's sshd stopped, veth-b not restored: $(tcj "$NS_B" veth-b)"
		fi
		cont_pids $pids
	else
		bad "watchdog: the console's sshd processes not found in $NS_B"
	fi
fi
$TMUX kill-session -t tui 2>/dev/null
XDG=$XDG_SAVE

finish
