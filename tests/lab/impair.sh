#!/bin/sh
# Impairment engine lab suite, in two private namespaces joined by
# a veth pair (nothing outside them is touched):
#  - tbf at 10/50/200 Mbit: TCP goodput (iperf3, first 2 s omitted) >= 99 %
#    of the frame ceiling rate x 1448/1514
#  - per-flow scope: --dport shapes only that port; a second flow to another
#    port is not shaped
#  - ingress via IFB: shapes what arrives; clear removes IFB + ingress qdisc
#  - dry-run lines fed to tc give the same kernel state as the netlink path
#  - crash recovery: journal left behind (kill -9), clear --all restores
#  - netem: probed; SKIP with the kernel's reason where it is missing
# Ends with "impair: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
need_root impair
[ -x "$LINKLAB" ] || { fail "no binary $LINKLAB"; summary impair; exit 1; }
command -v iperf3 >/dev/null || { skip "iperf3 not installed"; summary impair; exit 0; }
NA="lli2a-$$"; NB="lli2b-$$"
export LINKLAB_RUN_DIR="${TMPDIR:-/tmp}/linklab-impair-$$"
T=$(mktemp -d)
cleanup() {
	for ns in "$NA" "$NB"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$T" "$LINKLAB_RUN_DIR"
}
trap cleanup EXIT INT TERM
ip netns add "$NA" && ip netns add "$NB" &&
ip link add vi2a netns "$NA" type veth peer name vi2b netns "$NB" &&
ip -n "$NA" addr add 10.77.0.1/24 dev vi2a && ip -n "$NB" addr add 10.77.0.2/24 dev vi2b &&
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up &&
ip -n "$NA" addr add fd77::1/64 dev vi2a nodad && ip -n "$NB" addr add fd77::2/64 dev vi2b nodad &&
ip -n "$NA" link set vi2a up && ip -n "$NB" link set vi2b up || {
	fail "namespaces and veth"; summary impair; exit 1; }
ina() { ip netns exec "$NA" "$@"; }
inb() { ip netns exec "$NB" "$@"; }
for port in 5201 5202; do
	inb iperf3 -s -p $port > "$T/srv$port.log" 2>&1 &
done
wait_port "$NB" 5201 && wait_port "$NB" 5202

# goodput PORT SECS [ADDR]: receiver goodput in bit/s, first 2 s omitted
goodput() {
	ina iperf3 -c "${3:-10.77.0.2}" -p "$1" -t "$2" -O 2 -J > "$T/c.json" 2>&1
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(int(d["end"]["sum_received"]["bits_per_second"]))' "$T/c.json" 2>/dev/null || echo 0
}
ratio() { python3 -c "import sys; print('%.2f' % (100.0*float(sys.argv[1])/float(sys.argv[2])))" "$1" "$2"; }
ge() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }
mbit() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1])/1e6))" "$1"; }
# kernel state of a device, counters and ids of actions stripped
state() {
	{ ip netns exec "$1" tc -j qdisc show dev "$2"; echo
	  ip netns exec "$1" tc -j class show dev "$2"; echo
	  ip netns exec "$1" tc filter show dev "$2"; ip netns exec "$1" tc filter show dev "$2" ingress
	} | sed -e 's/index [0-9]* ref [0-9]* bind [0-9]*//' -e 's/"refcnt":[0-9]*,//g'
}

# --- tbf goodput vs the frame ceiling ----------------------------------------
for r in 10 50 200; do
	if ! ina "$LINKLAB" apply --dev vi2a --rate ${r}mbit > "$T/apply.out" 2>&1; then
		fail "apply --rate ${r}mbit: $(cat "$T/apply.out")"; continue
	fi
	ceil=$(python3 -c "print(int($r*1e6*1448/1514))")
	g=$(goodput 5201 6)
	pct=$(ratio "$g" "$ceil")
	# a busy 2-core machine (parallel builds) can starve the sender: one
	# more run, the better one counts (both printed)
	if ! ge "$pct" 99; then
		echo "figure: tbf ${r}mbit first run $(mbit "$g") Mbit/s (${pct}%), load $(cut -d' ' -f1 /proc/loadavg); again"
		g2=$(goodput 5201 6)
		ge "$g2" "$g" && g=$g2
		pct=$(ratio "$g" "$ceil")
	fi
	echo "figure: tbf ${r}mbit goodput $(mbit "$g") Mbit/s = ${pct}% of ceiling $(mbit "$ceil") Mbit/s"
	if ge "$pct" 99; then pass "tbf ${r}mbit: goodput ${pct}% of the frame ceiling (>= 99%)"
	else fail "tbf ${r}mbit: goodput $(mbit "$g") Mbit/s is ${pct}% of $(mbit "$ceil")"; fi
done
ina "$LINKLAB" show --dev vi2a > "$T/show.txt" 2>&1
if grep -q "goodput ceiling: 191 Mbit/s" "$T/show.txt" && grep -q "tbf    1: sent [1-9]" "$T/show.txt"; then
	pass "show: live counters and the goodput ceiling"
else fail "show: $(cat "$T/show.txt")"; fi
ina "$LINKLAB" clear --dev vi2a >/dev/null 2>&1
[ "$(root_kind "$NA" vi2a)" = noqueue ] && pass "clear restores noqueue" || fail "clear: root is $(root_kind "$NA" vi2a)"

# --- per-flow scope -----------------------------------------------------------
if ina "$LINKLAB" apply --dev vi2a --rate 10mbit --dst 10.77.0.0/24 --dport 5201 > "$T/apply.out" 2>&1; then
	g1=$(goodput 5201 5); g2=$(goodput 5202 4)
	ceil=$(python3 -c "print(int(10e6*1448/1514))")
	echo "figure: scoped 10mbit: port 5201 $(mbit "$g1") Mbit/s, port 5202 $(mbit "$g2") Mbit/s"
	if ge "$(ratio "$g1" "$ceil")" 99 && ge 10.7 "$(mbit "$g1")"; then
		pass "scope: flow to dport 5201 shaped to $(mbit "$g1") Mbit/s"
	else fail "scope: flow to 5201 at $(mbit "$g1") Mbit/s"; fi
	if ge "$g2" 100000000; then pass "scope: second flow to 5202 not shaped ($(mbit "$g2") Mbit/s)"
	else fail "scope: flow to 5202 only $(mbit "$g2") Mbit/s"; fi
else
	fail "apply --dport: $(cat "$T/apply.out")"
fi
# port only: IPv6 is scoped too (second u32 filter, protocol ipv6)
if ina "$LINKLAB" apply --dev vi2a --rate 10mbit --dport 5201 > "$T/apply.out" 2>&1; then
	g1=$(goodput 5201 4 fd77::2); g2=$(goodput 5202 3 fd77::2)
	echo "figure: scoped dport 5201 over IPv6: $(mbit "$g1") Mbit/s, port 5202 $(mbit "$g2") Mbit/s"
	if ge 10 "$(mbit "$g1")" && ge "$(mbit "$g1")" 9 && ge "$g2" 100000000; then
		pass "scope over IPv6: 5201 shaped ($(mbit "$g1")), 5202 not ($(mbit "$g2") Mbit/s)"
	else fail "scope over IPv6: 5201 $(mbit "$g1"), 5202 $(mbit "$g2") Mbit/s"; fi
else
	fail "apply --dport (v6): $(cat "$T/apply.out")"
fi
ina "$LINKLAB" clear --dev vi2a >/dev/null 2>&1
[ "$(root_kind "$NA" vi2a)" = noqueue ] && pass "clear removes the htb tree" || fail "clear: root is $(root_kind "$NA" vi2a)"

# --- ingress via IFB ----------------------------------------------------------
if inb "$LINKLAB" apply --dev vi2b --direction ingress --rate 20mbit > "$T/apply.out" 2>&1; then
	g=$(goodput 5201 5)
	ceil=$(python3 -c "print(int(20e6*1448/1514))")
	if ! ge "$(ratio "$g" "$ceil")" 97; then
		g2=$(goodput 5201 5); ge "$g2" "$g" && g=$g2
	fi
	echo "figure: ingress 20mbit on B: $(mbit "$g") Mbit/s = $(ratio "$g" "$ceil")% of ceiling"
	# drops on the receiver's side cost a round trip each: 97 % here
	if ge "$(ratio "$g" "$ceil")" 97 && ge 20.5 "$(mbit "$g")"; then
		pass "ingress via IFB shapes arriving traffic to $(mbit "$g") Mbit/s (>= 97% of ceiling)"
	else fail "ingress: $(mbit "$g") Mbit/s"; fi
	inb "$LINKLAB" show --dev vi2b > "$T/show.txt" 2>&1
	grep -q "ingress via llifb.*tbf rate 20mbit" "$T/show.txt" && pass "show lists the IFB tree" ||
		fail "show ingress: $(cat "$T/show.txt")"
else
	fail "apply --direction ingress: $(cat "$T/apply.out")"
fi
inb "$LINKLAB" clear --dev vi2b >/dev/null 2>&1
if ! inb ip link show | grep -q llifb && ! inb tc qdisc show dev vi2b | grep -q ingress; then
	pass "clear removes the IFB device and the ingress qdisc"
else fail "clear left: $(inb ip link show | grep llifb) $(inb tc qdisc show dev vi2b)"; fi

# --- dry-run lines vs netlink: same kernel state ------------------------------
for dial in "--rate 50mbit" "--rate 10mbit --dport 5201 --dst 10.77.0.0/16" \
	    "--rate 30mbit --burst 64kb --latency 20ms" "--direction ingress --rate 5mbit"; do
	dev=vi2a; shown=vi2a
	case "$dial" in *ingress*) shown=$(ina "$LINKLAB" apply --dev vi2a $dial --dry-run | sed -n "s/^ip link set dev '\(.*\)' up$/\1/p");; esac
	ina "$LINKLAB" apply --dev $dev $dial > /dev/null 2>&1
	state "$NA" "$shown" > "$T/nl.txt"; state "$NA" $dev >> "$T/nl.txt"
	ina "$LINKLAB" apply --dev $dev $dial --dry-run | grep -v '^#' > "$T/lines.sh"
	ina "$LINKLAB" clear --dev $dev > /dev/null 2>&1
	if ina sh -e "$T/lines.sh" > "$T/tc.out" 2>&1; then
		state "$NA" "$shown" > "$T/tc.txt"; state "$NA" $dev >> "$T/tc.txt"
		if cmp -s "$T/nl.txt" "$T/tc.txt" && [ -s "$T/nl.txt" ]; then
			pass "dry-run lines give the netlink state: $dial"
		else fail "dry-run vs netlink differ for $dial: $(diff "$T/nl.txt" "$T/tc.txt" | head -5)"; fi
	else fail "dry-run lines failed for $dial: $(cat "$T/tc.out")"; fi
	# undo what tc made (the journal knows nothing of it)
	ina tc qdisc del dev $dev root 2>/dev/null; ina tc qdisc del dev $dev ingress 2>/dev/null
	[ "$shown" != "$dev" ] && ina ip link del "$shown" 2>/dev/null
done

# --- a sequence of dials: tc lines never fail and end where netlink ends ----
seq_ok=1
for dial in "--rate 50mbit" "--rate 10mbit --dport 5201" "--rate 20mbit" \
	    "--rate 5mbit --dst fd77::/64" "--rate 10mbit --dport 5201" "--rate 7mbit"; do
	ina "$LINKLAB" apply --dev vi2a $dial --dry-run | grep -v '^#' > "$T/lines.sh"
	ina sh -e "$T/lines.sh" > "$T/tc.out" 2>&1 || { seq_ok=0; fail "tc lines failed after the previous dial: $dial: $(cat "$T/tc.out")"; }
done
state "$NA" vi2a > "$T/tc.txt"
ina tc qdisc del dev vi2a root 2>/dev/null
for dial in "--rate 50mbit" "--rate 10mbit --dport 5201" "--rate 20mbit" \
	    "--rate 5mbit --dst fd77::/64" "--rate 10mbit --dport 5201" "--rate 7mbit"; do
	ina "$LINKLAB" apply --dev vi2a $dial > /dev/null 2>&1 || seq_ok=0
done
state "$NA" vi2a > "$T/nl.txt"
ina "$LINKLAB" clear --dev vi2a > /dev/null 2>&1
if [ $seq_ok = 1 ] && cmp -s "$T/nl.txt" "$T/tc.txt"; then
	pass "six dials in a row (tbf <-> htb scope v4/v6): tc lines and netlink end in the same state"
else fail "dial sequence: $(diff "$T/nl.txt" "$T/tc.txt" | head -5)"; fi

# --- crash recovery: journal left behind, clear --all restores -----------------
ina tc qdisc replace dev vi2a root handle 5: tbf rate 7mbit burst 10kb latency 30ms
ina "$LINKLAB" apply --dev vi2a --rate 20mbit --dport 5201 >/dev/null 2>&1
ina "$LINKLAB" apply --dev vi2a --direction ingress --rate 3mbit >/dev/null 2>&1
ina "$LINKLAB" test -c 10.77.0.2 -p 5201 -t 30 > /dev/null 2>&1 & TP=$!
sleep 1; kill -9 $TP 2>/dev/null; wait $TP 2>/dev/null
if ls "$LINKLAB_RUN_DIR"/*.json >/dev/null 2>&1 && ina "$LINKLAB" clear --all > "$T/clr.out" 2>&1; then
	k=$(ina tc -j qdisc show dev vi2a | python3 -c 'import json,sys
q=[x for x in json.load(sys.stdin) if x.get("root")]; print(q[0]["kind"], q[0]["handle"], q[0]["options"]["rate"]*8)')
	if [ "$k" = "tbf 5: 7000000" ] && ! ina ip link show | grep -q llifb &&
	   ! ina tc qdisc show dev vi2a | grep -q ingress && ! ls "$LINKLAB_RUN_DIR"/*.json >/dev/null 2>&1; then
		pass "after kill -9: clear --all restores the original tbf 5: 7mbit, removes IFB, empties the journal"
	else fail "clear --all left: $k / $(ina ip -br link) / $(ls "$LINKLAB_RUN_DIR")"; fi
else fail "clear --all: $(cat "$T/clr.out" 2>/dev/null)"; fi
ina tc qdisc del dev vi2a root 2>/dev/null

# --- netem: probe the kernel, skip with its reason ----------------------------
if ina "$LINKLAB" apply --dev vi2a --engine kernel --delay 10ms --loss 1% > "$T/netem.out" 2>&1; then
	ina "$LINKLAB" show --dev vi2a > "$T/show.txt" 2>&1
	if grep -q "netem.*delay 10ms loss 1%" "$T/show.txt"; then pass "netem delay 10ms loss 1% applied and read back"
	else fail "netem read-back: $(cat "$T/show.txt")"; fi
	ina "$LINKLAB" clear --dev vi2a >/dev/null 2>&1
elif grep -q "this kernel has no netem (CONFIG_NET_SCH_NETEM); try modprobe sch_netem" "$T/netem.out"; then
	pass "netem refused with the modprobe hint"
	skip "netem live tests: $(cat "$T/netem.out")"
else
	fail "netem apply: $(cat "$T/netem.out")"
fi
[ "$(root_kind "$NA" vi2a)" = noqueue ] && pass "nothing left on vi2a" || fail "vi2a root is $(root_kind "$NA" vi2a)"
summary impair
