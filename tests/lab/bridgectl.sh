#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lab/bridgectl.sh - live control of a running `linklab bridge` in the
# three-namespace lab (lab/lab-bridge.sh: peer A - middle - peer B), through
# its control socket: --set moves the measured RTT, a bad --set changes
# nothing and lists every problem, --attach holds a lease that is given back
# (dials restored) when the attach process is killed -9, sees EOF, or gets
# SIGTERM; the kernel engine's tbf rate changed and restored on the egress
# ports, and its counters (links' rx/tx, the egress tbf's drops) in --status,
# show and -J at exit; --stdin-lease (the console's --bridge) stops at the end of its
# stdin. RTT from UDP echo probes (tests/lab/rtt.py) A -> B; figures printed.
. "$(dirname "$0")/lib.sh"
need_root bridgectl
command -v python3 >/dev/null || { skip "bridgectl: python3 not installed"; summary bridgectl; exit 0; }
[ -x "$LINKLAB" ] || { fail "bridgectl: $LINKLAB not built"; summary bridgectl; exit 1; }

export LL_NS_A=llca-$$ LL_NS_M=llcm-$$ LL_NS_B=llcb-$$
export LL_LAB_DIR="${TMPDIR:-/tmp}/linklab-lab-bctl-$$" LINKLAB
LB="sh $LL_REPO/lab/lab-bridge.sh"
T=$(mktemp -d)
AP=                                     # a background --attach we started
cleanup() {
	[ -n "$AP" ] && kill -9 "$AP" 2>/dev/null
	exec 3>&- 4>&- 2>/dev/null
	$LB down >/dev/null 2>&1; rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
if ! $LB up > "$T/up.log" 2>&1; then
	cat "$T/up.log"; fail "bridgectl: three-namespace lab up"; summary bridgectl; exit 1
fi
eval "$($LB env)"
py() { python3 -c "$@"; }
cp "$LL_REPO/tests/lab/rtt.py" "$T/rtt.py"
PORT=7800
rtt() { # N GAP [TIMEOUT] -> "median min max n ..." (ms)
	PORT=$((PORT+1))
	ip netns exec "$LL_NS_B" python3 "$T/rtt.py" server "$LL_ADDR_B" $PORT 4 &
	sp=$!
	wait_port "$LL_NS_B" $PORT udp
	ina python3 "$T/rtt.py" client "$LL_ADDR_B" $PORT "$@"
	kill $sp 2>/dev/null; wait $sp 2>/dev/null
}
near() { py "import sys; sys.exit(0 if abs(float('$1') - $2) <= $3 else 1)" 2>/dev/null; }
a_dial() { # the A->B dial text from --status -J
	inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["a_to_b"]["dial"])'
}
wait_dial() { # TEXT: wait (5 s at most) until --status shows A->B TEXT
	i=0
	while [ $i -lt 50 ]; do
		[ "$(a_dial 2>/dev/null)" = "$1" ] && return 0
		sleep 0.1; i=$((i+1))
	done
	return 1
}

# --- no bridge in this namespace -------------------------------------------------
ina "$LINKLAB" bridge --set --delay 5ms > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 1 ] && grep -q "no linklab bridge runs in this network namespace" "$T/e"; then
	pass "bridgectl: --set without a bridge: exit 1, says so"
else
	fail "bridgectl: --set without a bridge: exit $rc: $(cat "$T/e")"
fi

# --- error reporting: an unknown option does not stop the rest; one "see" line;
# --set -J prints {"error","errors"} on stdout too; ecn in -h ---------------------------
ina "$LINKLAB" bridge --set --loss 150% --frobnicate x > "$T/o" 2> "$T/e"; rc=$?
ina "$LINKLAB" bridge --set --loss 150% --frobnicate x -J > "$T/oj" 2> /dev/null; rcj=$?
ina "$LINKLAB" bridge --set --delay 5ms -J > "$T/oj2" 2> /dev/null; rcj2=$?
ina "$LINKLAB" bridge veth-x veth-y --frobnicate x --loss 150% > /dev/null 2> "$T/e2"; rc2=$?
j=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["errors"]), d["error"])' "$T/oj" 2>&1)
j2=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["error"])' "$T/oj2" 2>&1)
if [ $rc = 2 ] && grep -q "unknown option '--frobnicate'" "$T/e" && grep -q "loss: 150%.*0% .. 100%" "$T/e" &&
	! grep -q "missing value" "$T/e" && grep -q 'see `linklab bridge -h`' "$T/e" && ! grep -q "usage:" "$T/e" &&
	[ $rcj = 2 ] && [ "$j" = "2 unknown option '--frobnicate' (dial fields as for apply)" ] &&
	[ $rcj2 = 1 ] && [ "$j2" = "no linklab bridge runs in this network namespace" ] &&
	[ $rc2 = 2 ] && grep -q "unknown option '--frobnicate'" "$T/e2" && grep -q "loss: 150%" "$T/e2" &&
	! grep -q "usage:" "$T/e2" && "$LINKLAB" bridge -h | grep -q -- "--ecn on|off"; then
	pass "bridgectl: --set/start: unknown option and bad loss both named, one 'see' line, -J error document, ecn in -h"
else
	fail "bridgectl: error reporting: exit $rc/$rcj/$rcj2/$rc2, json '$j' '$j2': $(cat "$T/e" "$T/e2")"
fi

# --- user engine: delay 10ms, then --set --delay 40ms -----------------------------
# (a direction's own option wins over a plain one given after it: 10ms each way, not 99ms)
$LB engine --engine user --a-to-b-delay 10ms --b-to-a-delay 10ms --delay 99ms > "$T/engine.log" 2>&1 || { cat "$T/engine.log"; fail "bridgectl: engine"; }
set -- $(rtt 20 0.02); r10=$1
inm "$LINKLAB" bridge --set --delay 40ms > "$T/o" 2> "$T/e"; rc=$?
set -- $(rtt 20 0.02); r40=$1
echo "  figure: user engine RTT $r10 ms with delay 10ms each way, $r40 ms after --set --delay 40ms"
if [ $rc = 0 ] && near "$r10" 20 2 && near "$r40" 80 2 && grep -q "A->B: delay 40ms" "$T/o"; then
	pass "bridgectl: --set --delay 40ms moves the RTT from $r10 to $r40 ms (20 -> 80)"
else
	fail "bridgectl: --set --delay 40ms: exit $rc, RTT $r10 -> $r40 ms: $(cat "$T/o" "$T/e")"
fi

# --- a second bridge on the same ports is refused (it would duplicate frames) -----------
EPID=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>&1)
inm timeout 5 "$LINKLAB" bridge veth-mb veth-ma --engine user -t 2 > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 1 ] && grep -q "a bridge (pid $EPID) already forwards veth-ma <-> veth-mb" "$T/e"; then
	pass "bridgectl: a second bridge on the same ports: exit 1, names pid $EPID and its ports"
else
	fail "bridgectl: second bridge on the same ports: exit $rc: $(cat "$T/e")"
fi

# --- a bad --set: exit 2, every problem, nothing changed ------------------------------
inm "$LINKLAB" bridge --set --loss 150% --a-to-b-delay -5ms > "$T/o" 2> "$T/e"; rc=$?
set -- $(rtt 20 0.02); rbad=$1
if [ $rc = 2 ] && grep -q "loss.*150%.*0% .. 100%" "$T/e" && grep -q "a_to_b: delay.*-5ms" "$T/e" &&
	near "$rbad" 80 2 && [ "$(a_dial)" = "delay 40ms" ]; then
	pass "bridgectl: bad --set: exit 2, loss and delay both named, RTT still $rbad ms"
else
	fail "bridgectl: bad --set: exit $rc, RTT $rbad: $(cat "$T/e")"
fi

# --- status file and show -J carry the fields ---------------------------------------
sleep 1.2
f=$(inm "$LINKLAB" show -J | python3 -c '
import json,sys
b=json.load(sys.stdin)["bridges"][0]["directions"]
print(b[0]["fields"].get("delay"), b[1]["fields"].get("delay"))' 2>&1)
[ "$f" = "40ms 40ms" ] && pass "bridgectl: show -J bridges[] fields: delay 40ms both ways" ||
	fail "bridgectl: show -J fields '$f'"

# --- --attach, loss 100% A->B, kill -9 the attach process ------------------------------
rm -f "$T/fifo"; mkfifo "$T/fifo"
ip netns exec "$LL_NS_M" "$LINKLAB" bridge --attach < "$T/fifo" > "$T/att.out" 2> "$T/att.err" &
AP=$!; AP0=$AP      # ip netns exec execs linklab: the same pid
exec 3> "$T/fifo"
echo '{"op":"set","a_to_b":{"loss":"100%"}}' >&3
# (att.out appears once the attach has opened the fifo: count 0 lines until then)
lines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }
i=0; while [ $i -lt 100 ] && [ "$(lines "$T/att.out")" -lt 2 ]; do sleep 0.1; i=$((i+1)); done
first=$(head -n 1 "$T/att.out" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["a_to_b"]["dial"], s["leased_by"])' 2>&1)
second=$(sed -n 2p "$T/att.out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["ok"], r["state"]["a_to_b"]["dial"])' 2>&1)
inm "$LINKLAB" bridge --attach > "$T/o2" 2> "$T/e2" < /dev/null; rc2=$?
set -- $(rtt 5 0.02 0.3); lost_n=$4
kill -9 $AP; wait $AP 2>/dev/null; AP=
exec 3>&-
wait_dial "delay 40ms"; back=$?
set -- $(rtt 20 0.02); rback=$1
echo "  figure: attach: loss 100% A->B answered $lost_n of 5 probes; after kill -9: RTT $rback ms, A->B '$(a_dial)'"
if [ "$first" = "delay 40ms $AP0" ] &&
	[ "$second" = "True loss 100%" ] && [ "$lost_n" = 0 ] && [ $back = 0 ] && near "$rback" 80 2; then
	pass "bridgectl: --attach: state line, loss 100% cuts A->B, kill -9 restores delay 40ms (RTT $rback ms)"
else
	fail "bridgectl: --attach/kill -9: first '$first', reply '$second', answered $lost_n, restored $back, RTT $rback: $(cat "$T/att.err")"
fi
if [ $rc2 = 1 ] && grep -q "bridge is leased by another console (pid [0-9]*)" "$T/e2"; then
	pass "bridgectl: a second --attach is refused while the lease is held"
else
	fail "bridgectl: second --attach: exit $rc2: $(cat "$T/e2")"
fi

# --- --attach ended by EOF on stdin (requests piped, then closed) ----------------------
{ echo '{"op":"set","a_to_b":{"delay":"5ms"},"b_to_a":{"delay":"5ms"}}'; sleep 3; } |
	inm "$LINKLAB" bridge --attach > "$T/eof.out" 2>&1 &
EP=$!
sleep 1
set -- $(rtt 10 0.02); rmid=$1
wait $EP; rce=$?
d=$(a_dial)
set -- $(rtt 10 0.02); rafter=$1
echo "  figure: attach (EOF): RTT $rmid ms while leased at 5ms each way, $rafter ms after EOF"
if [ $rce = 0 ] && near "$rmid" 10 2 && [ "$d" = "delay 40ms" ] && near "$rafter" 80 2; then
	pass "bridgectl: --attach ended by EOF: dials restored before it exits (A->B '$d')"
else
	fail "bridgectl: --attach EOF: exit $rce, RTT $rmid -> $rafter, A->B '$d': $(cat "$T/eof.out")"
fi

# --- a --set made while a console holds the lease stands when the lease ends -----------
{ echo '{"op":"set","b_to_a":{"delay":"5ms"}}'; sleep 2; } |
	inm "$LINKLAB" bridge --attach > "$T/ls.out" 2>&1 &
LP=$!
sleep 1
inm "$LINKLAB" bridge --set --a-to-b-delay 30ms > /dev/null 2> "$T/e"; rcs=$?
wait $LP; rcl=$?
da=$(a_dial)
db=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["b_to_a"]["dial"])')
last=$(tail -n 1 "$T/ls.out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["lease_ended"], sorted(r["restored"].items()))' 2>&1)
if [ $rcs = 0 ] && [ $rcl = 0 ] && [ "$da" = "delay 30ms" ] && [ "$db" = "delay 40ms" ] &&
	[ "$last" = "True [('b_to_a', 'delay 40ms')]" ]; then
	pass "bridgectl: lease ends: B->A (set through it) back to 40ms, A->B --set meanwhile stays 30ms; last line names b_to_a only"
else
	fail "bridgectl: lease vs --set: exit $rcs/$rcl, A->B '$da', B->A '$db', last '$last': $(cat "$T/e" "$T/ls.out")"
fi
inm "$LINKLAB" bridge --set --delay 40ms > /dev/null 2>&1

# --- --attach ended by timeout (SIGTERM) -----------------------------------------------
{ echo '{"op":"set","b_to_a":{"loss":"100%"}}'; sleep 5; } |
	timeout 1.5 ip netns exec "$LL_NS_M" "$LINKLAB" bridge --attach > "$T/to.out" 2>&1; rct=$?
wait_dial "delay 40ms"; ok1=$?
b=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["b_to_a"]["dial"])')
if [ $rct = 124 ] && [ $ok1 = 0 ] && [ "$b" = "delay 40ms" ] && grep -q '"loss 100%"' "$T/to.out"; then
	pass "bridgectl: --attach killed by timeout (SIGTERM): B->A back to '$b'"
else
	fail "bridgectl: --attach timeout: exit $rct, B->A '$b': $(cat "$T/to.out")"
fi

# --- --attach over SSH, the session dropped (the ssh client killed -9) ----------------------
# sshd runs in the middle namespace per connection (inetd mode, as the
# ProxyCommand: the middle has no address), with the lab's keys
: > "$T/kh"
rm -f "$T/sfifo"; mkfifo "$T/sfifo"
ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$LL_LAB_DIR/id_ed25519" \
		-o "ProxyCommand=ip netns exec $LL_NS_M /usr/sbin/sshd -i -f $LL_LAB_DIR/sshd_config" \
		-o UserKnownHostsFile="$T/kh" -o StrictHostKeyChecking=accept-new \
		root@middle "$LINKLAB bridge --attach" < "$T/sfifo" > "$T/ssh.out" 2> "$T/ssh.err" &
SP=$!
exec 4> "$T/sfifo"
echo '{"op":"set","a_to_b":{"loss":"100%"},"b_to_a":{"loss":"100%"}}' >&4
i=0; while [ $i -lt 100 ] && [ "$(lines "$T/ssh.out")" -lt 2 ]; do sleep 0.1; i=$((i+1)); done
during=$(a_dial)
set -- $(rtt 5 0.02 0.3); sn=$4
kill -9 $SP; wait $SP 2>/dev/null
t0=$(date +%s%N)
exec 4>&-
wait_dial "delay 40ms"; ok2=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
b=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["b_to_a"]["dial"])')
echo "  figure: attach over ssh: loss 100% both ways answered $sn of 5 probes; ssh client killed -9 -> dials back within $ms ms (status poll 100 ms)"
if [ "$during" = "loss 100%" ] && [ "$sn" = 0 ] && [ $ok2 = 0 ] && [ "$b" = "delay 40ms" ]; then
	pass "bridgectl: --attach over SSH: the session dropped (ssh killed -9) -> both directions restored"
else
	fail "bridgectl: --attach over ssh: during '$during', answered $sn, restored $ok2, B->A '$b': $(cat "$T/ssh.err")"
fi

# --- user engine: every model field live (rate bucket, tables), refusals listed -----------
ltest() { # linklab test A -> B for 3 s: received Mbit/s
	PORT=$((PORT+1))
	ip netns exec "$LL_NS_B" "$LINKLAB" serve -1 -p $PORT > /dev/null 2>&1 &
	sp=$!
	wait_port "$LL_NS_B" $PORT
	ina "$LINKLAB" test -c "$LL_ADDR_B" -p $PORT -t 3 -J 2>/dev/null | python3 -c '
import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e6))' 2>/dev/null
	kill $sp 2>/dev/null; wait $sp 2>/dev/null
}
inm "$LINKLAB" bridge --set --clear --rate 10mbit > "$T/o" 2> "$T/e"; rc=$?
gu=$(ltest)
inm "$LINKLAB" bridge --set --a-to-b-delay 20ms --a-to-b-jitter 5ms --a-to-b-distribution normal \
	--b-to-a-clear > "$T/o2" 2> "$T/e2"; rc2=$?
inm "$LINKLAB" bridge --set --a-to-b-dst 10.0.0.0/8 --b-to-a-slot 10ms > "$T/o3" 2> "$T/e3"; rc3=$?
echo "  figure: user engine after --set --rate 10mbit: TCP goodput A->B ${gu:-?} Mbit/s (frame ceiling 9.56)"
if [ $rc = 0 ] && py "import sys; sys.exit(0 if 7.5 < float('${gu:-0}') < 10.1 else 1)" &&
	[ $rc2 = 0 ] && grep -q "A->B: delay 20ms jitter 5ms distribution normal" "$T/o2" &&
	grep -q "B->A: none" "$T/o2" && [ $rc3 = 2 ] && grep -q "a_to_b: .*dst" "$T/e3" &&
	grep -q "b_to_a: .*slot" "$T/e3"; then
	pass "bridgectl: user engine live: rate 10mbit ($gu Mbit/s), a normal table, dst/slot refused per direction"
else
	fail "bridgectl: user engine live fields: exit $rc/$rc2/$rc3, $gu Mbit/s: $(cat "$T/e" "$T/o2" "$T/e2" "$T/e3")"
fi

# --- the start aliases --overhead / --cell work in --set too -----------------------------
inm "$LINKLAB" bridge --set --a-to-b-netem-rate 100mbit --a-to-b-overhead 20 --a-to-b-cell 64,4 -J \
	> "$T/o" 2> "$T/e"; rc=$?
f=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["a_to_b"]["fields"]; print(f.get("packet-overhead"), f.get("cell-size"), f.get("cell-overhead"))' "$T/o" 2>&1)
if [ $rc = 0 ] && [ "$f" = "20 64 4" ]; then
	pass "bridgectl: --set --overhead 20 --cell 64,4 (aliases as at start): packet-overhead 20, cell 64/4"
else
	fail "bridgectl: --set aliases: exit $rc, fields '$f': $(cat "$T/e")"
fi

# --- --set: a direction's own option wins over a plain one in any order; --clear at
# the end of the line still means "start from an empty dial" -------------------------------
inm "$LINKLAB" bridge --set --a-to-b-delay 9ms --delay 5ms --clear -J > "$T/o" 2> "$T/e"; rc=$?
f=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["a_to_b"]["dial"] + "|" + s["b_to_a"]["dial"])' "$T/o" 2>&1)
if [ $rc = 0 ] && [ "$f" = "delay 9ms|delay 5ms" ]; then
	pass "bridgectl: --set --a-to-b-delay 9ms --delay 5ms --clear: A->B 9ms, B->A 5ms, nothing else kept"
else
	fail "bridgectl: --set order/--clear: exit $rc, '$f': $(cat "$T/e")"
fi

# --- kernel engine: a rate-only dial changed by --set, restored by a lease -----------------
$LB engine --engine kernel --rate 50mbit > "$T/engine.log" 2>&1 || { cat "$T/engine.log"; fail "bridgectl: kernel engine"; }
r0=$(root_tbf_rate "$LL_NS_M" veth-mb)
inm "$LINKLAB" bridge --set --rate 10mbit > "$T/o" 2> "$T/e"; rc=$?
r1=$(root_tbf_rate "$LL_NS_M" veth-mb); r1b=$(root_tbf_rate "$LL_NS_M" veth-ma)
g=$(ltest)
echo "  figure: kernel engine after --set --rate 10mbit: TCP goodput A->B ${g:-?} Mbit/s (frame ceiling 9.56)"
inm "$LINKLAB" bridge --set --delay 10ms > /dev/null 2> "$T/e3"; rc3=$?
{ echo '{"op":"set","a_to_b":{"rate":"5mbit"}}'; sleep 1; } |
	inm "$LINKLAB" bridge --attach > "$T/k.out" 2>&1
r2=$(sed -n 2p "$T/k.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"]["a_to_b"]["dial"])' 2>&1)
r3=$(root_tbf_rate "$LL_NS_M" veth-mb)
echo "  figure: kernel engine tbf on veth-mb: start $r0 bit/s, --set 10mbit -> $r1 (veth-ma $r1b), leased 5mbit ('$r2') -> back to $r3"
if [ $rc = 0 ] && [ "$r0" = 50000000 ] && [ "$r1" = 10000000 ] && [ "$r1b" = 10000000 ] &&
	py "import sys; sys.exit(0 if 7.5 < float('${g:-0}') < 10.1 else 1)" &&
	[ "$r2" = "rate 5mbit" ] && [ "$r3" = 10000000 ]; then
	pass "bridgectl: kernel engine: --set rate 10mbit on both egress ports ($g Mbit/s), a lease's 5mbit given back"
else
	fail "bridgectl: kernel engine: exit $rc, rates $r0 $r1 $r1b '$r2' $r3: $(cat "$T/e" "$T/k.out")"
fi
[ $rc3 = 2 ] && grep -q "netem" "$T/e3" && pass "bridgectl: kernel engine without netem refuses --set --delay (exit 2, names netem)" ||
	fail "bridgectl: kernel engine --set --delay: exit $rc3: $(cat "$T/e3")"
$LB stop-engine > "$T/stop.out" 2>&1
k=$(root_kind "$LL_NS_M" veth-mb)
ino=$(inm stat -L -c %i /proc/self/ns/net)
[ "$k" != tbf ] && ! ls "${LINKLAB_RUN_DIR:-/run/linklab}" 2>/dev/null | grep -q "^bridge-$ino-.*\.sock" &&
	pass "bridgectl: kernel engine stopped: tbf gone ($k), no control socket left" ||
	fail "bridgectl: after stop: root qdisc $k, sockets: $(ls "${LINKLAB_RUN_DIR:-/run/linklab}" 2>/dev/null)"

# --- kernel engine: counters from the ports: links' rx/tx since the bridge's
# start, the egress tbf's drops; a UDP stream under the rate crosses whole, a flood above it
# is cut by tbf and the drops match the receiver's losses; -J at exit has them too ----------
kstat() { inm "$LINKLAB" bridge --status -J > "$1" 2> "$1.err"; }
udp() { # RATE OUT: a 1 s UDP stream A -> B at RATE, the test's -J in OUT
	PORT=$((PORT+1))
	ip netns exec "$LL_NS_B" "$LINKLAB" serve -1 -p $PORT > /dev/null 2>&1 &
	sp=$!
	wait_port "$LL_NS_B" $PORT
	ina "$LINKLAB" test -c "$LL_ADDR_B" -p $PORT -u -b "$1" -t 1 -J > "$2" 2>/dev/null
	kill $sp 2>/dev/null; wait $sp 2>/dev/null
	sleep 0.3                       # tbf's queue (<= 50 ms) drains
}
old=$(inm cat /sys/class/net/veth-ma/statistics/rx_packets)
$LB engine --engine kernel --rate 5mbit -J > "$T/engine.log" 2>&1 || { cat "$T/engine.log"; fail "bridgectl: kernel engine (counters)"; }
kstat "$T/k0.json"
udp 2M "$T/u1.json"; kstat "$T/k1.json"
udp 20M "$T/u2.json"; kstat "$T/k2.json"
inm "$LINKLAB" show -J > "$T/show.json" 2>&1
$LB stop-engine > "$T/kstop.json" 2>&1
set -- $(python3 - "$T" "$old" <<'PYEOF' 2>&1
import json, sys
t, old = sys.argv[1], int(sys.argv[2])
k = [json.load(open("%s/k%d.json" % (t, i))) for i in range(3)]
u2 = json.load(open(t + "/u2.json"))["end"]["sum"]
stop = json.load(open(t + "/kstop.json"))
show = [b for b in json.load(open(t + "/show.json")).get("bridges", []) if b["engine"] == "kernel"]
def d(i, j, dr, key): return k[j][dr][key] - k[i][dr][key]
ab0 = k[0]["a_to_b"]
rx1, tx1, dr1 = d(0, 1, "a_to_b", "rx_packets"), d(0, 1, "a_to_b", "tx_packets"), d(0, 1, "a_to_b", "drops")
rx2, tx2, dr2 = d(1, 2, "a_to_b", "rx_packets"), d(1, 2, "a_to_b", "tx_packets"), d(1, 2, "a_to_b", "drops")
ba = k[2]["b_to_a"]
lost = u2["lost_packets"]
ok = (old >= 200 and ab0["rx_packets"] < 50 and ab0["drops"] == 0 and
      rx1 >= 100 and abs(rx1 - tx1) <= max(5, rx1 * 0.02) and dr1 == 0 and
      d(0, 1, "a_to_b", "rx_bytes") > 1000 * rx1 and
      dr2 > 0 and tx2 > 0 and abs(rx2 - tx2 - dr2) <= max(10, rx2 * 0.02) and
      abs(lost - dr2) <= max(10, dr2 * 0.05) and
      ba["rx_packets"] > 0 and abs(ba["rx_packets"] - ba["tx_packets"]) <= max(5, ba["rx_packets"] * 0.05) and
      k[2]["a_to_b"]["lost"] == 0 and
      stop["a_to_b"]["rx_packets"] >= k[2]["a_to_b"]["rx_packets"] and
      stop["a_to_b"]["drops"] >= k[2]["a_to_b"]["drops"] and
      stop["a_to_b"]["qdiscs"][0]["kind"] == "tbf" and
      len(show) == 1 and show[0]["directions"][0]["packets"] > 0 and show[0]["directions"][0]["drops"] > 0)
print("ok" if ok else "bad", old, ab0["rx_packets"], rx1, tx1, dr1, rx2, tx2, dr2, lost,
      ba["rx_packets"], ba["tx_packets"], stop["a_to_b"]["rx_packets"], stop["a_to_b"]["drops"])
PYEOF
)
echo "  figure: kernel engine counters: veth-ma had $2 rx packets before, the fresh bridge's A->B rx $3; 2M UDP A->B rx $4 tx $5 drops $6; 20M flood into 5mbit rx $7 tx $8 drops $9, the receiver lost ${10}; B->A rx ${11} tx ${12}; -J at exit A->B rx ${13} drops ${14}"
if [ "$1" = ok ]; then
	pass "bridgectl: kernel engine counters: from 0 at start, rx = tx under the rate, tbf drops = the receiver's losses above it, -J at exit and show carry them"
else
	fail "bridgectl: kernel engine counters: $*: $(cat "$T/k0.json.err" "$T/k2.json" "$T/kstop.json" 2>/dev/null | head -c 3000)"
fi


# --- --attach when its bridge stops: says so, exit 1 ----------------------------------------
$LB engine --engine user --delay 1ms > "$T/engine.log" 2>&1 || { cat "$T/engine.log"; fail "bridgectl: engine (stop test)"; }
EPID=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>&1)
grep -q "user engine A->B (in veth-ma, out veth-mb): delay 1ms" "$LL_LAB_DIR/engine.err" &&
	grep -q "user engine B->A (in veth-mb, out veth-ma): delay 1ms" "$LL_LAB_DIR/engine.err" &&
	pass "bridgectl: start lines name each direction's in and out port" ||
	fail "bridgectl: start lines: $(cat "$LL_LAB_DIR/engine.err")"
rm -f "$T/sf"; mkfifo "$T/sf"
inm "$LINKLAB" bridge --attach < "$T/sf" > "$T/st.out" 2> "$T/st.err" &
AP=$!
exec 5> "$T/sf"
i=0; while [ $i -lt 50 ] && [ "$(lines "$T/st.out")" -lt 1 ]; do sleep 0.1; i=$((i+1)); done
$LB stop-engine > /dev/null 2>&1
wait $AP; rca=$?; AP=
exec 5>&-
if [ $rca = 1 ] && grep -q "the bridge (pid $EPID) stopped" "$T/st.err"; then
	pass "bridgectl: --attach when the bridge stops: 'the bridge (pid $EPID) stopped', exit 1"
else
	fail "bridgectl: --attach after the bridge stopped: exit $rca: $(cat "$T/st.err")"
fi

# --- --stdin-lease (what `linklab console --bridge` runs over SSH): STATE first, requests on
# stdin, replies on stdout; the end of stdin stops the bridge and restores its ports -----------
prom() { ip -n "$LL_NS_M" -d link show "$1" | grep -o "promiscuity [0-9]*" | cut -d' ' -f2; }
gone() { # PID: wait up to 5 s for it to end; 0 when it did, with its status in $rcw
	i=0; while [ -d /proc/"$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	[ -d /proc/"$1" ] && { kill "$1"; wait "$1"; return 1; }
	wait "$1"; rcw=$?; return 0
}
rm -f "$T/sl"; mkfifo "$T/sl"
ip netns exec "$LL_NS_M" "$LINKLAB" bridge veth-ma veth-mb --engine user --stdin-lease \
	< "$T/sl" > "$T/sl.out" 2> "$T/sl.err" &
SP=$!                           # ip netns exec execs linklab: the bridge's pid
exec 6> "$T/sl"
i=0; while [ $i -lt 100 ] && [ "$(lines "$T/sl.out")" -lt 1 ]; do sleep 0.1; i=$((i+1)); done
echo '{"op":"set","a_to_b":{"delay":"40ms"}}' >&6
i=0; while [ $i -lt 50 ] && [ "$(lines "$T/sl.out")" -lt 2 ]; do sleep 0.1; i=$((i+1)); done
set -- $(rtt 10 0.02); rsl=$1
first=$(head -n 1 "$T/sl.out" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["engine"], s["pid"] == s["leased_by"], s["a_to_b"]["dial"])' 2>&1)
second=$(sed -n 2p "$T/sl.out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["ok"], r["state"]["a_to_b"]["dial"])' 2>&1)
pm="$(prom veth-ma) $(prom veth-mb)"
exec 6>&-                       # stdin ends: the bridge stops
gone $SP; ended=$?
pa="$(prom veth-ma) $(prom veth-mb)"
inm "$LINKLAB" bridge --status > /dev/null 2> "$T/sl.st"
set -- $(rtt 5 0.02 0.3); nafter=$4     # nothing forwards any more: no answer
echo "  figure: --stdin-lease: RTT $rsl ms with A->B delay 40ms through stdin; after stdin closed $nafter of 5 probes answered"
if [ "$first" = "user True none" ] && [ "$second" = "True delay 40ms" ] && near "$rsl" 40 2 &&
	[ "$pm" = "1 1" ] && [ $ended = 0 ] && [ "$rcw" = 0 ] && [ "$pa" = "0 0" ] &&
	grep -q "no linklab bridge runs" "$T/sl.st" && [ "$nafter" = 0 ] &&
	! grep -q "forwarding\|engine auto" "$T/sl.err" && grep -q "^A->B: rx" "$T/sl.err"; then
	pass "bridgectl: --stdin-lease: STATE line, delay 40ms set through stdin (RTT $rsl ms), EOF stops it: ports not promiscuous, no bridge, nothing forwarded"
else
	fail "bridgectl: --stdin-lease: first '$first', reply '$second', RTT $rsl, answered after $nafter, promisc '$pm' -> '$pa', ended $ended exit ${rcw:-}: $(cat "$T/sl.err" "$T/sl.st")"
fi
# the kernel engine: its Linux bridge and the egress tbf are gone once stdin ends
ip netns exec "$LL_NS_M" "$LINKLAB" bridge veth-ma veth-mb --engine kernel --rate 10mbit \
	--bridge-name llbrsl --stdin-lease < /dev/null > "$T/slk.out" 2> "$T/slk.err"; rck=$?
k=$(head -n 1 "$T/slk.out" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["engine"], s["a_to_b"]["dial"])' 2>&1)
if [ $rck = 0 ] && [ "$k" = "kernel rate 10mbit" ] && ! ip -n "$LL_NS_M" link show llbrsl > /dev/null 2>&1 &&
	[ "$(tc -n "$LL_NS_M" qdisc show dev veth-mb | cut -d' ' -f2)" = noqueue ] && [ "$(wc -l < "$T/slk.out")" -le 2 ]; then
	pass "bridgectl: --stdin-lease, kernel engine, stdin at EOF: STATE '$k', then stopped: no llbrsl, veth-mb back to noqueue"
else
	fail "bridgectl: --stdin-lease kernel: exit $rck, STATE '$k': $(cat "$T/slk.err"; ip -n "$LL_NS_M" -br link; tc -n "$LL_NS_M" qdisc)"
fi
# refusals: -J (stdout is the protocol), a bridge already on the ports (its message)
inm "$LINKLAB" bridge veth-ma veth-mb --stdin-lease -J < /dev/null > /dev/null 2> "$T/e"; rcj=$?
$LB engine --engine user > "$T/engine.log" 2>&1 || fail "bridgectl: engine (stdin-lease busy)"
EPID=$(inm "$LINKLAB" bridge --status -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>&1)
inm "$LINKLAB" bridge veth-ma veth-mb --stdin-lease < /dev/null > "$T/o" 2> "$T/e2"; rcb=$?
$LB stop-engine > /dev/null 2>&1
if [ $rcj = 2 ] && grep -q -- "-J with --stdin-lease" "$T/e" && [ $rcb = 1 ] && [ ! -s "$T/o" ] &&
	[ "$(head -n 1 "$T/e2")" = "linklab bridge: a bridge (pid $EPID) already forwards veth-ma <-> veth-mb in this network namespace; stop it first (a second one would duplicate every frame)" ]; then
	pass "bridgectl: --stdin-lease refuses -J (exit 2); on busy ports exit 1, the other bridge's message first on stderr"
else
	fail "bridgectl: --stdin-lease refusals: exit $rcj/$rcb: $(cat "$T/e" "$T/e2")"
fi

# --- right after kill -9 of a bridge (a zombie until reaped): not running, files gone ------
# (python3 is the parent and reaps the bridge only at the end: the zombie a user sees)
cat > "$T/k9.py" <<'PYEOF'
import json, os, signal, subprocess, sys, time
ns, ll, run, err = sys.argv[1:5]
p = subprocess.Popen(["ip", "netns", "exec", ns, ll, "bridge", "veth-ma", "veth-mb",
                      "--engine", "user"], stdout=subprocess.DEVNULL, stderr=open(err, "w"))
for _ in range(50):
    if "forwarding" in open(err).read():
        break
    time.sleep(0.1)
time.sleep(1.1)                                   # its status file is written
os.kill(p.pid, signal.SIGKILL)
time.sleep(0.2)
state = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0]
st = subprocess.run(["ip", "netns", "exec", ns, ll, "bridge", "--status"],
                    capture_output=True, text=True)
show = subprocess.run(["ip", "netns", "exec", ns, ll, "show", "-J"], capture_output=True, text=True)
nb = len(json.loads(show.stdout).get("bridges", []))
left = len([f for f in os.listdir(run) if f.startswith("bridge-") and f"-{p.pid}." in f]) \
    if os.path.isdir(run) else 0
p.wait()
print(state, st.returncode, nb, left, st.stderr.strip().replace("\n", " / "))
PYEOF
set -- $(python3 "$T/k9.py" "$LL_NS_M" "$LINKLAB" "${LINKLAB_RUN_DIR:-/run/linklab}" "$T/k9.err" 2>&1)
z=$1; rc=$2; nb=$3; left=$4; shift 4
echo "  figure: bridge killed -9: state $z (zombie, not reaped) when --status ran"
if [ "$z" = Z ] && [ "$rc" = 1 ] && [ "$*" = "linklab bridge: no linklab bridge runs in this network namespace" ] &&
	[ "$nb" = 0 ] && [ "$left" = 0 ]; then
	pass "bridgectl: right after kill -9 (a zombie): --status 'no linklab bridge runs', show lists none, its files removed"
else
	fail "bridgectl: after kill -9: state '$z', exit $rc, show bridges '$nb', files left $left: $*"
fi

summary bridgectl
