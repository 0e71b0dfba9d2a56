#!/bin/sh
# Walking-skeleton lab test: two namespaces, a real sshd in B.
#  - apply 50mbit on both veth ends (A by netlink, B over SSH), read back by tc -j
#  - 4 streams x 5 s: linklab -> linklab serve, linklab -> iperf3 -s,
#    iperf3 -c -> linklab serve; SUM goodput (receiver) in 45 .. 50.5 Mbit/s
#  - clear restores the original qdisc (noqueue)
#  - netem: refused with the modprobe hint on a kernel without it (skip live)
#  - bad input: every problem reported, nothing applied
. "$(dirname "$0")/lib.sh"
need_root lab
[ -x "$LINKLAB" ] || { fail "no binary $LINKLAB"; summary lab; exit 1; }
trap 'kill $SRV 2>/dev/null; lab_down' EXIT INT TERM
if ! lab_up skel; then fail "lab up"; summary lab; exit 1; fi
P="-F $LL_SSH_CONFIG --peer $LL_PEER"
T=$(mktemp -d)

# --- apply ------------------------------------------------------------------
if ina "$LINKLAB" apply $P --rate 50mbit > "$T/apply.out" 2>&1; then
	pass "apply --rate 50mbit on both peers"
else
	fail "apply --rate 50mbit: $(cat "$T/apply.out")"
fi
ra=$(root_tbf_rate "$LL_NS_A" veth-a); rb=$(root_tbf_rate "$LL_NS_B" veth-b)
[ "$ra" = 50000000 ] && pass "A veth-a holds tbf 50Mbit (tc -j)" || fail "A veth-a tbf rate=$ra"
[ "$rb" = 50000000 ] && pass "B veth-b holds tbf 50Mbit (tc -j)" || fail "B veth-b tbf rate=$rb"
if ina "$LINKLAB" show $P -J > "$T/show.json" 2>&1 && python3 - "$T/show.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for s in "ab":
    q=[x for x in d[s]["qdiscs"] if x["kind"]=="tbf"]
    assert q and q[0]["rate_bps"]==50000000, (s, d[s])
PY
then pass "show -J reads back tbf 50Mbit on both sides"; else fail "show -J: $(head -c 400 "$T/show.json")"; fi

# --- tests through the shaped link ------------------------------------------
sum_rx() { python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print("%.2f" % (d["end"]["sum_received"]["bits_per_second"]/1e6))' "$1" 2>/dev/null; }
in_range() { python3 -c "import sys; v=float('$1' or 0); sys.exit(0 if 45.0<=v<=50.5 else 1)"; }

check_run() { # name json-file
	v=$(sum_rx "$2")
	if [ -n "$v" ] && in_range "$v"; then pass "$1: SUM $v Mbit/s (45..50.5)"
	else fail "$1: SUM '${v}' Mbit/s not in 45..50.5 ($(head -c 300 "$2"))"; fi
	echo "figure: $1 SUM_received=$v Mbit/s"
}

inb "$LINKLAB" serve -1 -p 5301 > "$T/serve1.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5301
ina "$LINKLAB" test -c "$LL_ADDR_B" -p 5301 -P 4 -t 5 -J > "$T/t1.json" 2>"$T/t1.err"
check_run "linklab -> linklab serve, -P 4 -t 5" "$T/t1.json"
wait $SRV 2>/dev/null

inb iperf3 -s -1 -p 5302 > "$T/iperf3s.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5302
ina "$LINKLAB" test -c "$LL_ADDR_B" -p 5302 -P 4 -t 5 -J > "$T/t2.json" 2>"$T/t2.err"
check_run "linklab -> iperf3 -s, -P 4 -t 5" "$T/t2.json"
wait $SRV 2>/dev/null

inb "$LINKLAB" serve -1 -p 5303 > "$T/serve3.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5303
ina iperf3 -c "$LL_ADDR_B" -p 5303 -P 4 -t 5 -J > "$T/t3.json" 2>"$T/t3.err"
check_run "iperf3 -c -> linklab serve, -P 4 -t 5" "$T/t3.json"
wait $SRV 2>/dev/null

# --peer: the server is started on B over SSH
ina "$LINKLAB" test $P -P 4 -t 5 -J > "$T/t4.json" 2>"$T/t4.err"
check_run "linklab test --peer (server started over SSH), -P 4 -t 5" "$T/t4.json"

# -b in tc's units (as apply and the console take it): 20mbit of UDP through
# the 50mbit link arrives at 20 Mbit/s, measured at the receiver
inb "$LINKLAB" serve -1 -p 5304 > "$T/serve4.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5304
ina "$LINKLAB" test -c "$LL_ADDR_B" -p 5304 -u -b 20mbit -t 3 -J > "$T/t5.json" 2>"$T/t5.err"
v=$(python3 -c '
import json,sys
e=json.load(open(sys.argv[1]))["end"]
s=e.get("sum_received") or e.get("sum")
print("%.2f" % (s["bits_per_second"]/1e6))' "$T/t5.json" 2>/dev/null)
if [ -n "$v" ] && python3 -c "import sys; sys.exit(0 if 19.6<=float('$v')<=20.4 else 1)"; then
	pass "test -u -b 20mbit (tc units): $v Mbit/s received (19.6..20.4)"
else fail "test -u -b 20mbit: '$v' Mbit/s ($(cat "$T/t5.err"; head -c 300 "$T/t5.json"))"; fi
wait $SRV 2>/dev/null

# --- clear --------------------------------------------------------------------
if ina "$LINKLAB" clear $P > "$T/clear.out" 2>&1; then pass "clear on both peers"
else fail "clear: $(cat "$T/clear.out")"; fi
ka=$(root_kind "$LL_NS_A" veth-a); kb=$(root_kind "$LL_NS_B" veth-b)
[ "$ka" = noqueue ] && [ "$kb" = noqueue ] && pass "clear restored noqueue on both" \
	|| fail "after clear: A=$ka B=$kb"

# --- netem on this kernel ----------------------------------------------------
if ina tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
	ina tc qdisc del dev lo root
	if ina "$LINKLAB" apply $P --delay 20ms --loss 1% > "$T/netem.out" 2>&1; then
		pass "netem apply (kernel has netem)"
		ina "$LINKLAB" clear $P >/dev/null 2>&1
	else fail "netem apply: $(cat "$T/netem.out")"; fi
else
	skip "live netem apply: this kernel has no sch_netem (CONFIG_NET_SCH_NETEM)"
	if ina "$LINKLAB" apply $P --engine kernel --rate 20mbit --delay 20ms > "$T/netem.out" 2>&1; then
		fail "netem apply succeeded on a kernel without netem?"
	elif grep -q "modprobe sch_netem" "$T/netem.out"; then
		pass "netem refused with the modprobe hint: $(head -1 "$T/netem.out")"
	else fail "netem refusal message: $(cat "$T/netem.out")"; fi
	ka=$(root_kind "$LL_NS_A" veth-a); kb=$(root_kind "$LL_NS_B" veth-b)
	[ "$ka" = noqueue ] && [ "$kb" = noqueue ] && pass "failed netem apply left both peers untouched" \
		|| fail "after failed netem apply: A=$ka B=$kb"
fi

# --- bad input ------------------------------------------------------------------
ina "$LINKLAB" apply $P --rate 50mbs --delay -5ms --loss 150% > "$T/bad.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q rate "$T/bad.out" && grep -q delay "$T/bad.out" && grep -q loss "$T/bad.out"; then
	pass "bad input: all three problems reported at once, exit 2"
else fail "bad input (rc=$rc): $(cat "$T/bad.out")"; fi
ka=$(root_kind "$LL_NS_A" veth-a)
[ "$ka" = noqueue ] && pass "bad input changed nothing" || fail "bad input left $ka"
ina "$LINKLAB" apply $P --dev nosuchif0 --rate 10mbit > "$T/nodev.out" 2>&1
grep -qi "nosuchif0" "$T/nodev.out" && pass "unknown interface named: $(head -1 "$T/nodev.out")" \
	|| fail "unknown interface: $(cat "$T/nodev.out")"
rm -rf "$T"
summary lab
