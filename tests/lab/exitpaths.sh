#!/bin/sh
# SPDX-License-Identifier: MIT
# exitpaths.sh - the peer's revert timer outlives linklab when the session
# was lost mid-apply: a second sshd in B with ChannelTimeout session:*=3s
# closes the persistent shell channel while linklab holds between the
# change and its confirmation (LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS); the
# session itself stays up, so linklab's exit path could still reach the
# peer. After linklab has exited the timer must still be pending and then
# restore the prior qdisc. Also: the sshd child of the session killed
# mid-apply; a later confirmed apply over the same session is not undone by
# the older timer; a confirmed apply leaves no timer behind. clear with B
# unreachable restores A (exit 1, says why); clear removes a killed
# console's owner record on A, never a live one's. SIGTERM to `apply --peer`
# while B stalls: exit 143, A put back exactly, B's late change undone by its
# timer; SIGTERM once both sides changed: the whole dial stays.
# Uses its own namespaces/state dir (lib.sh lab_up).
. "$(dirname "$0")/lib.sh"
need_root exitpaths
SUF=ep$$
T=$(mktemp -d /tmp/ll-eptest.XXXXXX)
cleanup() {
	[ -f "$T/sshd-ct.pid" ] && kill "$(cat "$T/sshd-ct.pid")" 2>/dev/null
	[ -f "$T/silent.pid" ] && kill "$(cat "$T/silent.pid")" 2>/dev/null
	[ -f "$T/sshd-slow.pid" ] && kill "$(cat "$T/sshd-slow.pid")" 2>/dev/null
	[ -f "$T/holder.pid" ] && kill "$(cat "$T/holder.pid")" 2>/dev/null
	[ -n "$LOCKF" ] && rm -f "$LOCKF"
	lab_down
	rm -f "$LL_LAB_DIR.uperr"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ ! -x "$LINKLAB" ]; then fail "no linklab binary at $LINKLAB (run make)"; summary exitpaths; exit 1; fi
# the remote driver (tests/lab/remote_driver.c) on the core objects
B=${LL_BUILD:-$LL_REPO/build}
OBJS=$(cd "$LL_REPO" && for f in src/*/*.c; do case "$f" in src/tui/*) ;; *) f=${f#src/}; echo "$B/obj/${f%.c}.o";; esac; done)
if ! make -C "$LL_REPO" -s BUILD="$B" $OBJS > "$T/make.log" 2>&1; then
	fail "make core objects: $(tail -5 "$T/make.log")"; summary exitpaths; exit 1
fi
ar rcs "$T/libcore.a" $OBJS
if ! cc -std=c11 -D_GNU_SOURCE -O1 -g -I"$LL_REPO/include" -o "$T/drv" \
	"$LL_REPO/tests/lab/remote_driver.c" "$T/libcore.a" \
	$(pkg-config --libs libnl-route-3.0 libssh2 ncursesw libcjson) -liniparser -lpthread -lm 2> "$T/cc.err"; then
	fail "build remote_driver: $(head -5 "$T/cc.err")"; summary exitpaths; exit 1
fi
if ! lab_up "$SUF"; then fail "lab up"; summary exitpaths; exit 1; fi
NSID=$(inb stat -L -c %i /proc/self/ns/net)

# --- a second sshd in B (port 2222) that closes channels idle for 3 s -------
sed -e 's/^Port .*/Port 2222/' -e "s|^PidFile .*|PidFile $T/sshd-ct.pid|" \
	"$LL_LAB_DIR/sshd_config" > "$T/sshd-ct_config"
echo "ChannelTimeout session:*=3s" >> "$T/sshd-ct_config"
cp "$LL_LAB_DIR/ssh_config" "$T/ssh_config"
cp "$LL_LAB_DIR/known_hosts" "$T/known_hosts"
key=$(cut -d' ' -f1,2 "$LL_LAB_DIR/ssh_host_ed25519_key.pub")
# Host NAME for B's address on PORT in $T/ssh_config, its key in known_hosts
host_entry() { # NAME PORT
	printf 'Host %s\n  HostName %s\n  Port %s\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n' \
		"$1" "$LL_ADDR_B" "$2" "$LL_LAB_DIR/id_ed25519" "$T/known_hosts" >> "$T/ssh_config"
	echo "[$LL_ADDR_B]:$2 $key" >> "$T/known_hosts"
}
host_entry peer-ct 2222
if ! inb "$(command -v sshd)" -f "$T/sshd-ct_config" -E "$T/sshd-ct.log"; then
	fail "sshd with ChannelTimeout did not start: $(tail -3 "$T/sshd-ct.log")"
	summary exitpaths; exit 1
fi
i=0; while [ ! -s "$T/sshd-ct.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done

# pids of the revert timers (argv[0] linklab-revert) in B's namespace
timers() {
	for p in $(pgrep -f '^sh -c .*linklab-revert|linklab-revert' 2>/dev/null); do
		[ "$(stat -L -c %i /proc/$p/ns/net 2>/dev/null)" = "$NSID" ] &&
			[ "$(tr '\0' ' ' < /proc/$p/cmdline | awk '{print $NF}')" = linklab-revert ] && echo "$p"
	done
}
wait_kind() { # NS DEV KIND TENTHS
	i=0; while [ "$(root_kind "$1" "$2")" != "$3" ] && [ $i -lt "$4" ]; do sleep 0.1; i=$((i+1)); done
	[ "$(root_kind "$1" "$2")" = "$3" ]
}

# 1. the prior state on B: the default root (noqueue); a non-default
#    original (pfifo, htb) is the journal's matter (tests/lab/ssh.sh)
before=$(inb tc qdisc show dev veth-b)

# 2. ChannelTimeout closes the shell channel during the 5 s hold; the
#    session lives on. linklab reports the loss and exits.
t0=$(date +%s%N)
ina env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=5000 "$LINKLAB" apply -F "$T/ssh_config" \
	--peer peer-ct --peer-dev veth-b --remote --revert-after 8 --rate 1mbit > "$T/ct.out" 2>&1
rc=$?
t_exit=$(( ($(date +%s%N) - t0) / 1000000 ))
case "$(cat "$T/ct.out")" in
*"the peer restores the original within 8 s"*)
	pass "ChannelTimeout mid-apply: linklab says the peer restores within 8 s (exit $rc after $t_exit ms)" ;;
*) fail "ChannelTimeout mid-apply: no lost-session report (exit $rc): $(cat "$T/ct.out")" ;;
esac
tm=$(timers)
kind=$(root_kind "$LL_NS_B" veth-b)
if [ -n "$tm" ] && [ "$kind" = tbf ]; then
	pass "after linklab exited: the revert timer (pid $tm) is still armed on the peer, tbf still on veth-b"
else
	fail "after linklab exited: timer '$tm', root $kind (the exit path killed the timer?)"
fi
if wait_kind "$LL_NS_B" veth-b noqueue 120; then
	dt=$(( ($(date +%s%N) - t0) / 1000000 ))
	after=$(inb tc qdisc show dev veth-b)
	if [ "$after" = "$before" ] && [ $dt -le 15000 ]; then
		pass "the timer restored the prior noqueue ${dt} ms after the apply began (timer 8 s)"
	else
		fail "restored state differs or late ($dt ms): '$before' -> '$after'"
	fi
else
	fail "ChannelTimeout: veth-b not restored within 12 s: $(inb tc qdisc show dev veth-b)"
fi
no_timers() { [ -z "$(timers)" ]; }
eventually 30 no_timers && pass "the timer ended after restoring" || fail "timer still there: $(timers)"
eventually 30 absent /run/linklab/remote-"$NSID"-veth-b.tc.json &&
	pass "the timer's restore removed the journal" || fail "journal left after the timer's restore"

# 2b. the same session goes on after the lost confirmation (only the
#     channel was closed): a newer apply arms its own timer, and the
#     older one must not undo it later
t0=$(date +%s)
ina env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=5000 "$T/drv" -F "$T/ssh_config" --revert-after 6 \
	peer-ct apply-again veth-b 1mbit 3mbit > "$T/again.out" 2>&1
if grep -q "^first: .*restores the original within 6 s" "$T/again.out" && grep -q "^second: applied" "$T/again.out"; then
	pass "unconfirmed apply, then a confirmed one over the same session: $(tr '\n' ' ' < "$T/again.out" | cut -c1-90)..."
else
	fail "apply-again: $(cat "$T/again.out")"
fi
sleep $(( 6 + 2 - ($(date +%s) - t0) > 0 ? 6 + 2 - ($(date +%s) - t0) : 0 ))
r=$(root_tbf_rate "$LL_NS_B" veth-b)
[ "$r" = 3000000 ] && [ -z "$(timers)" ] &&
	pass "past the first timer's deadline: veth-b keeps the confirmed 3mbit, no timer left" ||
	fail "the superseded timer undid the confirmed apply: rate $r, timers '$(timers)'"
ina "$LINKLAB" clear -F "$LL_SSH_CONFIG" --peer "$LL_PEER" --remote > /dev/null 2>&1

# 3. the sshd child of the session killed mid-apply (the whole session
#    gone): restored by the timer after linklab exited
ina env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=3000 "$LINKLAB" apply -F "$LL_SSH_CONFIG" \
	--peer "$LL_PEER" --remote --revert-after 5 --rate 1mbit > "$T/kill.out" 2>&1 &
LPID=$!
wait_kind "$LL_NS_B" veth-b tbf 100
child=""
for p in $(pgrep -P "$(cat "$LL_LAB_DIR/sshd.pid")" sshd); do
	# our connection: the sshd child with an established :22 socket
	inb ss -tnpH state established '( sport = :22 )' 2>/dev/null | grep -q "pid=$p," && child=$p
done
if [ -n "$child" ] && kill -0 $LPID 2>/dev/null; then
	kill -KILL "$child"
	t0=$(date +%s%N)
	wait $LPID
	ex=$(( ($(date +%s%N) - t0) / 1000000 ))
	if wait_kind "$LL_NS_B" veth-b noqueue 90; then
		dt=$(( ($(date +%s%N) - t0) / 1000000 ))
		pass "sshd child killed mid-apply: linklab exited after $ex ms, the peer back to noqueue after $dt ms (timer 5 s)"
	else
		fail "sshd child killed: not restored: $(inb tc qdisc show dev veth-b)"
	fi
	grep -q "restores the original within 5 s" "$T/kill.out" && pass "the lost session is reported with the pending revert" ||
		fail "kill report: $(cat "$T/kill.out")"
else
	wait $LPID
	fail "sshd child of the session not found mid-apply (child '$child'): $(cat "$T/kill.out")"
fi

# 4. a confirmed apply disarms its timer; a normal exit leaves none
if ina "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer "$LL_PEER" --remote --rate 2mbit > "$T/ok.out" 2>&1 &&
   [ "$(root_kind "$LL_NS_B" veth-b)" = tbf ]; then
	[ -z "$(timers)" ] && pass "confirmed apply: no revert timer left on the peer" || fail "confirmed apply left timer $(timers)"
	sleep 1
	[ "$(root_kind "$LL_NS_B" veth-b)" = tbf ] && pass "confirmed apply stays (nothing reverts it)" || fail "confirmed apply reverted"
else
	fail "apply over the lab sshd: $(cat "$T/ok.out")"
fi
ina "$LINKLAB" clear -F "$LL_SSH_CONFIG" --peer "$LL_PEER" --remote > /dev/null 2>&1
[ "$(inb tc qdisc show dev veth-b)" = "$before" ] && pass "clear: back to noqueue" || fail "clear: $(inb tc qdisc show dev veth-b)"
inb tc qdisc del dev veth-b root 2>/dev/null

# 5. B cannot be reached: a listener in B (port 2224) that accepts and never
#    answers the SSH handshake. clear restores A within --peer-timeout (the
#    handshake included), says why B was not reached and how to restore it
#    by hand, exit 1. clear --all the same against a closed port (2225).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
for h in peer-silent:2224 peer-closed:2225; do
	printf 'Host %s\n  HostName %s\n  Port %s\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  BatchMode yes\n' \
		"${h%:*}" "$LL_ADDR_B" "${h#*:}" "$LL_LAB_DIR/id_ed25519" "$T/known_hosts" >> "$T/ssh_config"
done
if [ -z "$PY" ]; then
	skip "B unreachable: no python3 for a silent listener"
else
	inb "$PY" -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 2224)); s.listen(8); open(sys.argv[1], "w").close(); c = []
while True: c.append(s.accept())' "$T/silent.ready" &
	echo $! > "$T/silent.pid"
	i=0; while [ ! -e "$T/silent.ready" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	ina "$LINKLAB" apply --dev veth-a --rate 1mbit > "$T/a.out" 2>&1 || fail "apply on A: $(cat "$T/a.out")"
	t0=$(date +%s%N)
	ina "$LINKLAB" clear -F "$T/ssh_config" --peer peer-silent --dev veth-a --peer-dev veth-b \
		--peer-timeout 2 > "$T/un.out" 2>&1
	rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
	out=$(cat "$T/un.out")
	if [ $rc -eq 1 ] && [ "$(root_kind "$LL_NS_A" veth-a)" != tbf ] && [ $dt -lt 8000 ]; then
		pass "B silent: clear restored A (root $(root_kind "$LL_NS_A" veth-a)), exit 1 after $dt ms (--peer-timeout 2; the handshake bound was 10 s)"
	else
		fail "B silent: clear exit $rc after $dt ms, A root $(root_kind "$LL_NS_A" veth-a): $out"
	fi
	case "$out" in
	*"could not be reached"*"handshake timed out"*"revert timer"*"linklab clear --dev veth-b"*)
		pass "B silent: clear says B was not reached (handshake timed out), its revert timer, and 'linklab clear --dev veth-b' on B" ;;
	*) fail "B silent: message: $out" ;;
	esac
	kill "$(cat "$T/silent.pid")" 2>/dev/null; rm -f "$T/silent.pid"
fi
ina "$LINKLAB" apply --dev veth-a --rate 1mbit > "$T/a.out" 2>&1 || fail "apply on A: $(cat "$T/a.out")"
ina "$LINKLAB" clear --all -F "$T/ssh_config" --peer peer-closed > "$T/un.out" 2>&1
rc=$?; out=$(cat "$T/un.out")
case "$rc:$(root_kind "$LL_NS_A" veth-a):$out" in
1:tbf:*) fail "B closed: clear --all left A's tbf: $out" ;;
1:*"could not be reached"*"linklab clear --all"*)
	pass "B closed: clear --all restored A, exit 1, says B was not reached and 'linklab clear --all' on B" ;;
*) fail "B closed: clear --all exit $rc: $out" ;;
esac

# 6. the owner record a console killed with -9 leaves on A (its flock gone):
#    clear of that interface, and clear --all, remove it; a record whose
#    holder lives (flock held) stays.
RUN=${LINKLAB_RUN_DIR:-/run/linklab}
NSA=$(ina stat -L -c %i /proc/self/ns/net)
IDX=$(ina cat /sys/class/net/veth-a/ifindex)
LOCKF="$RUN/owner-$NSA-$IDX.lock"
dead=$(sh -c 'echo $$')
record() {
	mkdir -p "$RUN"
	printf 'pid %s\nuid 0\nuser root\nhost lab\nsince %s\nifindex %s\ndev veth-a\n' \
		"$1" "$(date +%s)" "$IDX" > "$LOCKF"
}
ina "$LINKLAB" apply --dev veth-a --rate 1mbit > /dev/null 2>&1
record "$dead"
ina "$LINKLAB" apply --dev veth-a --rate 2mbit > "$T/lo.out" 2>&1
grep -q "leftovers: veth-a" "$T/lo.out" || fail "dead console's record: apply did not name it: $(cat "$T/lo.out")"
ina "$LINKLAB" clear --dev veth-a > "$T/lc.out" 2>&1
[ ! -e "$LOCKF" ] && pass "clear --dev veth-a removed the dead console's owner record" ||
	fail "clear --dev veth-a left $LOCKF: $(cat "$T/lc.out")"
ina "$LINKLAB" apply --dev veth-a --rate 1mbit > "$T/lo.out" 2>&1
grep -q "leftovers" "$T/lo.out" && fail "after clear: apply still names leftovers: $(cat "$T/lo.out")" ||
	pass "after clear: apply names no leftovers"
record "$dead"
ina "$LINKLAB" clear --all > "$T/lc.out" 2>&1
[ ! -e "$LOCKF" ] && pass "clear --all removed the dead console's owner record" ||
	fail "clear --all left $LOCKF: $(cat "$T/lc.out")"
if [ -n "$PY" ]; then
	record $$
	"$PY" -c 'import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close(); time.sleep(60)' \
		"$LOCKF" "$T/held" &
	echo $! > "$T/holder.pid"
	i=0; while [ ! -e "$T/held" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	ina "$LINKLAB" clear --dev veth-a > /dev/null 2>&1
	ina "$LINKLAB" clear --all > /dev/null 2>&1
	[ -e "$LOCKF" ] && pass "clear and clear --all keep a live holder's owner record" ||
		fail "clear removed a live holder's owner record"
	kill "$(cat "$T/holder.pid")" 2>/dev/null; rm -f "$T/holder.pid"
else
	skip "live holder's record: no python3 to hold the flock"
fi
rm -f "$LOCKF"

# --- SIGTERM to `apply --peer` while B has not answered ---------------------
# A third sshd in B (port 2223) puts a tc first on PATH that stalls 3 s
# before a root change: A's side is applied, then linklab waits for B
# (--peer-timeout 1). A SIGTERM then must not leave A's dial behind: exit
# 143, A's pfifo limit 777 back exactly, and B's change, made after linklab
# gave up, undone by B's own revert timer (6 s).
mkdir -p "$T/slow"
REALTC=$(inb sh -c 'command -v tc')
cat > "$T/slow/tc" <<EOS
#!/bin/sh
case "\$1 \$2 \$5" in "qdisc replace root") [ -e "$T/slow.on" ] && { sleep 3; touch "$T/slow.done"; };; esac
exec "$REALTC" "\$@"
EOS
chmod 755 "$T/slow/tc"
sed -e 's/^Port .*/Port 2223/' -e "s|^PidFile .*|PidFile $T/sshd-slow.pid|" \
	-e "s|^SetEnv PATH=|SetEnv PATH=$T/slow:|" "$LL_LAB_DIR/sshd_config" > "$T/sshd-slow_config"
host_entry peer-slow 2223
if inb "$(command -v sshd)" -f "$T/sshd-slow_config" -E "$T/sshd-slow.log"; then
	i=0; while [ ! -s "$T/sshd-slow.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	ina tc qdisc replace dev veth-a root pfifo limit 777
	inb tc qdisc replace dev veth-b root pfifo limit 555
	a0=$(ina tc qdisc show dev veth-a); b0=$(inb tc qdisc show dev veth-b)
	touch "$T/slow.on"
	# not through ina: $! must be linklab itself (ip netns exec execs it)
	ip netns exec "$LL_NS_A" "$LINKLAB" apply -F "$T/ssh_config" --peer peer-slow --peer-dev veth-b \
		--dev veth-a --peer-timeout 1 --revert-after 6 --rate 5mbit > "$T/sig.out" 2>&1 &
	ap=$!
	wait_kind "$LL_NS_A" veth-a tbf 100
	kill -TERM $ap
	wait $ap; rc=$?
	a1=$(ina tc qdisc show dev veth-a)
	if [ $rc = 143 ] && [ "$a1" = "$a0" ] && grep -q "stopped by SIGTERM" "$T/sig.out" &&
	   grep -q "veth-a restored; nothing applied" "$T/sig.out"; then
		pass "SIGTERM while B had not answered: exit 143, A's pfifo limit 777 back exactly"
	else
		fail "SIGTERM mid-apply: rc $rc, A '$a1' (was '$a0'): $(cat "$T/sig.out")"
	fi
	# the stalled tc on B ends 3 s in; what it changed, B's timer (6 s)
	# undoes: B is as before once both have passed
	i=0; while [ ! -e "$T/slow.done" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	i=0; while [ $i -lt 100 ]; do
		[ "$(inb tc qdisc show dev veth-b)" = "$b0" ] && [ -z "$(timers)" ] && break
		sleep 0.1; i=$((i+1))
	done
	[ -e "$T/slow.done" ] && [ "$(inb tc qdisc show dev veth-b)" = "$b0" ] &&
		pass "B as before once its stalled tc ended: pfifo limit 555, no timer left" ||
		fail "B after SIGTERM mid-apply: $(inb tc qdisc show dev veth-b) (was $b0)"
	rm -f "$T/slow.on"
	# a SIGTERM after the last side: the dial stays, whole
	ip netns exec "$LL_NS_A" env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=1500 "$LINKLAB" apply -F "$T/ssh_config" \
		--peer peer-slow --peer-dev veth-b --dev veth-a --rate 5mbit > "$T/sig2.out" 2>&1 &
	ap=$!
	wait_kind "$LL_NS_B" veth-b tbf 100
	kill -TERM $ap
	wait $ap; rc=$?
	if [ "$(root_kind "$LL_NS_A" veth-a)" = tbf ] && [ "$(root_kind "$LL_NS_B" veth-b)" = tbf ] &&
	   grep -q "SIGTERM came when the dial was applied: it stays" "$T/sig2.out"; then
		pass "SIGTERM once both sides were changed: the whole dial stays (exit $rc), said so"
	else
		fail "SIGTERM after B's change: rc $rc, A $(root_kind "$LL_NS_A" veth-a), B $(root_kind "$LL_NS_B" veth-b): $(cat "$T/sig2.out")"
	fi
	ina "$LINKLAB" clear -F "$T/ssh_config" --peer peer-slow --peer-dev veth-b --dev veth-a > /dev/null 2>&1
	[ "$(ina tc qdisc show dev veth-a)" = "$a0" ] || fail "clear after the signal cases: A $(ina tc qdisc show dev veth-a)"
	kill "$(cat "$T/sshd-slow.pid")" 2>/dev/null
else
	fail "sshd with a slow tc did not start: $(tail -3 "$T/sshd-slow.log")"
fi

summary exitpaths
