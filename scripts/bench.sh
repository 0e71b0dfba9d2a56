#!/bin/sh
# make bench: speed figures as ratios against iperf3 (and tc) measured in the
# same run, on loopback inside a private network namespace. Prints figures;
# targets are in the README/issue notes, not asserted here (the machine is
# noisy: compare within one run).
set -u
cd "$(dirname "$0")/.." || exit 1
LINKLAB=${LINKLAB:-$PWD/build/linklab}
# the apply and ssh probes are a program of their own (make bench-bin)
LINKLAB_BENCH=${LINKLAB_BENCH:-$PWD/build/linklab-bench}
[ -x "$LINKLAB_BENCH" ] || { echo "bench: $LINKLAB_BENCH not built (make bench-bin)"; exit 1; }
T=${BENCH_TIME:-5}
if [ "$(id -u)" != 0 ]; then echo "bench: needs root (private netns)"; exit 1; fi
NS=llbench$$
ip netns add $NS || exit 1
trap 'ip netns del $NS 2>/dev/null' EXIT INT TERM
ip -n $NS link set lo up
nsx() { ip netns exec $NS "$@"; }
tmp=$(mktemp -d)

# run_pair NAME SERVER... -- CLIENT... : prints "gbps cpu_s"
run_pair() {
	name=$1; shift
	srv=""; while [ "$1" != -- ]; do srv="$srv $1"; shift; done; shift
	nsx /usr/bin/time -f "%U %S" -o "$tmp/$name.srv.time" $srv > /dev/null 2>&1 &
	sp=$!; sleep 0.5
	nsx /usr/bin/time -f "%U %S" -o "$tmp/$name.cli.time" "$@" > "$tmp/$name.json" 2>/dev/null
	wait $sp
	python3 - "$tmp/$name.json" "$tmp/$name.srv.time" "$tmp/$name.cli.time" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
s=d["end"]["sum_received"]
cpu=sum(float(x) for f in sys.argv[2:] for x in open(f).read().split()[:2])
print("%.2f %.2f" % (s["bits_per_second"]/1e9, cpu))
PY
}
report() { # label iperf_line linklab_line
	python3 - "$1" "$2" "$3" "$T" <<'PY'
import sys
lab=sys.argv[1]; ig,ic=map(float,sys.argv[2].split()); lg,lc=map(float,sys.argv[3].split())
t=float(sys.argv[4])
# CPU seconds (client + server) per Gbit moved
ipg=ic/(ig*t) if ig else 0; lpg=lc/(lg*t) if lg else 0
print("%-22s iperf3 %6.2f Gbit/s  linklab %6.2f Gbit/s  ratio %.2fx   CPU s/Gbit: iperf3 %.3f linklab %.3f (%.2fx)"
      % (lab, ig, lg, lg/ig if ig else 0, ipg, lpg, lpg/ipg if ipg else 0))
PY
}
echo "bench: TCP loopback in a private netns, ${T}s each, iperf3 $(iperf3 -v | head -1 | cut -d' ' -f2) vs linklab, same run"
for P in 1 4; do
	i=$(run_pair i$P iperf3 -s -1 -p 5401 -- iperf3 -c 127.0.0.1 -p 5401 -P $P -t $T -J)
	l=$(run_pair l$P "$LINKLAB" serve -1 -p 5402 -- "$LINKLAB" test -c 127.0.0.1 -p 5402 -P $P -t $T -J)
	report "TCP -P $P" "$i" "$l"
done
# A newer iperf3 for reference, when the user built one outside the tree
# (IPERF3_NEW=/path/to/iperf3; 3.19+ has --skip-rx-copy, 3.21 --gsro):
# its best TCP mode against linklab, in the same run.
if [ -n "${IPERF3_NEW:-}" ] && [ -x "$IPERF3_NEW" ]; then
	v=$("$IPERF3_NEW" -v | head -1 | cut -d' ' -f2)
	for P in 1 4; do
		i=$(run_pair n$P "$IPERF3_NEW" -s -1 -p 5406 -- "$IPERF3_NEW" -c 127.0.0.1 -p 5406 -P $P -t $T --skip-rx-copy -J)
		l=$(run_pair m$P "$LINKLAB" serve -1 -p 5407 -- "$LINKLAB" test -c 127.0.0.1 -p 5407 -P $P -t $T -J)
		report "TCP -P $P vs $v skip-rx" "$i" "$l" | sed "s/iperf3 /iperf3-$v /"
	done
fi

# MSG_ZEROCOPY for a TCP sender, on loopback: plain send() against
# send(MSG_ZEROCOPY), receiver MSG_TRUNC (linklab keeps plain send() when
# zero copy does not pay: local delivery copies the pages anyway)
nsx "$LINKLAB_BENCH" tcpzc -t 1

# UDP paced (1448-byte datagrams, as on Ethernet): the rate held, the loss
# and the largest burst (datagrams per system call: linklab sends GSO batches
# of at most 1 ms of the rate), iperf3 vs linklab, same run (goal: the asked
# rate within 1 % with <= iperf3's loss). iperf3 3.12 cannot send 10 Gbit/s
# (one datagram per call): at -b 10G the reference is IPERF3_NEW --gsro.
udp_pair() { # JSON PORT SERVER... -- CLIENT...
	out=$1 port=$2; shift 2
	srv=""; while [ "$1" != -- ]; do srv="$srv $1"; shift; done; shift
	# shellcheck disable=SC2086
	nsx $srv -1 -p "$port" > /dev/null 2>&1 &
	sp=$!; sleep 0.5
	nsx "$@" -c 127.0.0.1 -p "$port" -J > "$out" 2>/dev/null
	wait $sp
}
udp_line() { # label json rate_bps
	python3 - "$@" <<'PY'
import json,sys
try:
    e=json.load(open(sys.argv[2]))["end"]
    r=e["sum_received"] if "sum_received" in e else e["sum"]; s=e.get("sum_sent", r)
    segs=max((x.get("udp", {}).get("gso_segs", 0) for x in e.get("streams", [])), default=0)
    rate=float(sys.argv[3])
    burst=(" largest batch %d datagrams (cap: 44, or 1 ms of the rate = %.0f)" % (segs, rate/8/1000/1448)) if segs else ""
    print("%-36s sent %7.3f Gbit/s (%+.2f %% of the rate)  received %7.3f Gbit/s  loss %6.3f %%%s"
          % (sys.argv[1], s["bits_per_second"]/1e9, 100*(s["bits_per_second"]-rate)/rate if rate else 0,
             r["bits_per_second"]/1e9, r.get("lost_percent", 0), burst))
except Exception as x:
    print("%-36s no result (%s)" % (sys.argv[1], x))
PY
}
# UDP -b 0 (as fast as it goes): linklab sends UDP GSO batches by default and
# every linklab receiver uses UDP GRO; --no-gso sends one datagram per system
# call. Received rate (and the sender's) with the loss.
udp0_report() { # label json
	python3 - "$@" <<'PY'
import json,sys
try:
    e=json.load(open(sys.argv[2]))["end"]
    r=e["sum_received"]; s=e["sum_sent"]
    print("%-36s received %6.2f Gbit/s (sent %6.2f) loss %6.2f%%" % (sys.argv[1],
          r["bits_per_second"]/1e9, s["bits_per_second"]/1e9, r.get("lost_percent", 0)))
except Exception as x:
    print("%-36s no result (%s)" % (sys.argv[1], x))
PY
}
NEW=""
if [ -n "${IPERF3_NEW:-}" ] && [ -x "$IPERF3_NEW" ]; then
	NEW=$IPERF3_NEW; NV=$("$NEW" -v | head -1 | cut -d' ' -f2)
fi
for R in 1G 10G; do
	bps=$(echo "$R" | sed 's/G$/000000000/')
	if [ "$R" = 1G ]; then
		udp_pair "$tmp/ui$R.json" 5403 iperf3 -s -- iperf3 -u -b $R -l 1448 -t "$T"
		udp_line "UDP -b $R iperf3" "$tmp/ui$R.json" "$bps"
	fi
	if [ -n "$NEW" ]; then
		udp_pair "$tmp/un$R.json" 5403 "$NEW" -s -- "$NEW" -u -b $R -l 1448 -t "$T" --gsro
		udp_line "UDP -b $R iperf3-$NV --gsro" "$tmp/un$R.json" "$bps"
	fi
	udp_pair "$tmp/ul$R.json" 5404 "$LINKLAB" serve -- "$LINKLAB" test -u -b $R -l 1448 -t "$T"
	udp_line "UDP -b $R linklab" "$tmp/ul$R.json" "$bps"
done
udp_pair "$tmp/u0i.json" 5405 iperf3 -s -- iperf3 -u -b 0 -l 1448 -t "$T"
udp0_report "UDP -b 0 -l 1448 iperf3" "$tmp/u0i.json"
if [ -n "$NEW" ]; then
	udp_pair "$tmp/u0n.json" 5405 "$NEW" -s -- "$NEW" -u -b 0 -l 1448 -t "$T" --gsro
	udp0_report "UDP -b 0 -l 1448 iperf3-$NV --gsro" "$tmp/u0n.json"
fi
udp_pair "$tmp/u0l.json" 5406 "$LINKLAB" serve -- "$LINKLAB" test -u -b 0 -l 1448 -t "$T"
udp0_report "UDP -b 0 -l 1448 linklab" "$tmp/u0l.json"
udp_pair "$tmp/u0p.json" 5406 "$LINKLAB" serve -- "$LINKLAB" test -u -b 0 -l 1448 -t "$T" --no-gso
udp0_report "UDP -b 0 -l 1448 linklab --no-gso" "$tmp/u0p.json"
# the machine's ceiling: a raw GSO send / GRO receive loop, no protocol
printf '%-36s ' "UDP -b 0 -l 1448 ceiling"; nsx "$LINKLAB_BENCH" udp -t "$T" -l 1448

# Memory: peak RSS (kB, GNU time %M) of client and server with 128 streams
for who in iperf3 linklab; do
	if [ $who = iperf3 ]; then
		srv="iperf3 -s -1 -p 5405"; cli="iperf3 -c 127.0.0.1 -p 5405 -P 128 -t 3 -J"
	else
		srv="$LINKLAB serve -1 -p 5405"; cli="$LINKLAB test -c 127.0.0.1 -p 5405 -P 128 -t 3 -J"
	fi
	# shellcheck disable=SC2086
	nsx /usr/bin/time -f "%M" -o "$tmp/rss.srv" $srv > /dev/null 2>&1 &
	sp=$!; sleep 0.5
	# shellcheck disable=SC2086
	nsx /usr/bin/time -f "%M" -o "$tmp/rss.cli" $cli > "$tmp/rss.json" 2>/dev/null
	wait $sp
	g=$(python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$tmp/rss.json" 2>/dev/null)
	printf "RSS -P 128 %-8s client %6.1f MB  server %6.1f MB  (%s Gbit/s)\n" $who \
		"$(echo "$(tail -1 "$tmp/rss.cli") / 1024" | bc -l)" \
		"$(echo "$(tail -1 "$tmp/rss.srv") / 1024" | bc -l)" "${g:-?}"
done

# --- bridge: the userspace engine forwarding A -> middle -> B ------------------
# Three-namespace lab (lab/lab-bridge.sh, private names); iperf3 TCP through
# `linklab bridge` with 50 ms each way (100 ms RTT), the plain engine for
# reference, and rate 50mbit (the token bucket: goodput / frame ceiling
# 50 x 1448/1514 = 47.82 Mbit/s). CPU of the engine process (utime+stime from /proc) per Gbit moved.
# Seed 000's four streams once with slow start (12.5 MB BDP, about a second)
# in the figure and once with the first 2 s omitted (-O 2): the steady rate.
bridge_bench() {
	LBB="sh lab/lab-bridge.sh"
	export LL_NS_A=llbench-ba$$ LL_NS_M=llbench-bm$$ LL_NS_B=llbench-bb$$
	export LL_LAB_DIR="$tmp/bridge-lab" LINKLAB
	trap 'ip netns del $NS 2>/dev/null; $LBB down >/dev/null 2>&1' EXIT INT TERM
	if ! $LBB up > "$tmp/bridge-up.log" 2>&1; then
		echo "bridge: lab up failed:"; cat "$tmp/bridge-up.log"; return 1
	fi
	echo "bridge: iperf3 TCP A -> B through linklab's userspace engine, ${T}s each"
	# label | engine options | iperf3 options
	while IFS='|' read -r label eopts iopts; do
		[ -n "$label" ] || continue
		# shellcheck disable=SC2086
		$LBB engine $eopts > /dev/null 2>&1
		epid=$(cat "$LL_LAB_DIR/engine.pid")
		c0=$(awk '{print $14+$15}' /proc/"$epid"/stat)
		ip netns exec "$LL_NS_B" iperf3 -s -1 -p 5411 > /dev/null 2>&1 &
		sp=$!; sleep 0.5
		# shellcheck disable=SC2086
		ip netns exec "$LL_NS_A" iperf3 -c 10.198.0.2 -p 5411 -t $T -J $iopts \
			> "$tmp/br.json" 2>/dev/null
		wait $sp
		c1=$(awk '{print $14+$15}' /proc/"$epid"/stat)
		python3 - "$tmp/br.json" "$c0" "$c1" "$(getconf CLK_TCK)" "$label" "$iopts" "$eopts" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=d["end"]["sum_received"]
cpu=(float(sys.argv[3])-float(sys.argv[2]))/float(sys.argv[4])
gbits=s["bytes"]*8/1e9; secs=s["seconds"]
extra=""
o=sys.argv[6].split()
if "-w" in o:   # window-limited: compare with window / RTT
    w=o[o.index("-w")+1]; wb=float(w[:-1])*{"K":1024,"M":1048576}[w[-1]]
    extra="  (window/RTT %s/100ms = %.0f Mbit/s)" % (w, wb*8/0.1/1e6)
e=sys.argv[7].split()
if "--rate" in e and "--delay" not in e:   # tbf bucket: goodput / frame ceiling
    r=e[e.index("--rate")+1]; n=float(r.rstrip("mbit"))*1e6; c=n*1448/1514
    extra="  (goodput / frame ceiling %.2f Mbit/s = %.2f %%)" % (c/1e6, 100*s["bits_per_second"]/c)
print("  %-30s %-10s %7.1f Mbit/s  engine CPU %5.1f%% of a core, %.3f CPU s/Gbit%s"
      % (sys.argv[5], sys.argv[6], s["bits_per_second"]/1e6, 100*cpu/secs,
         cpu/gbits if gbits else 0, extra))
PY
	done <<'EOT'
plain||-P 1
plain||-P 4
delay 50ms each way (RTT 100ms)|--delay 50ms|-P 1
delay 50ms each way (RTT 100ms)|--delay 50ms|-P 4
rate 50mbit (tbf bucket)|--rate 50mbit|-P 1
1gbit + RTT 100ms (seed 000)|--rate 1gbit --delay 50ms|-P 1 -w 4M
1gbit + RTT 100ms (seed 000)|--rate 1gbit --delay 50ms|-P 4
1gbit + RTT 100ms (seed 000)|--rate 1gbit --delay 50ms|-P 4 -O 2
EOT
	$LBB down > /dev/null 2>&1
}
bridge_bench
# the user engine against the Linux bridge: TCP ratio and CPU s/Gbit, a
# delay + loss dial, 64-byte frames in Mpps, the engine's memory bound
LINKLAB="$LINKLAB" UDPBLAST="$(dirname "$LINKLAB_BENCH")/udpblast" sh scripts/bench-bridge.sh

# --- impairment engine: apply + read back, goodput vs ceiling ------
# Same run: N rounds of "apply tbf, read the tree back" through linklab's
# netlink path in one process, against spawning tc for the same (tc qdisc
# replace + tc -j qdisc show), printed as a ratio (target <= 0.2x). Then TCP
# goodput through linklab's tbf at 10/50/200/1000 Mbit (iperf3, first 2 s
# omitted) against the frame ceiling rate x 1448/1514.
impair_bench() {
	N=${BENCH_APPLY_N:-200}
	IA=llbench-ia$$; IB=llbench-ib$$
	export LINKLAB_RUN_DIR="$tmp/run"
	trap 'ip netns del $NS 2>/dev/null; for n in $IA $IB; do for p in $(ip netns pids $n 2>/dev/null); do kill $p; done; ip netns del $n 2>/dev/null; done' EXIT INT TERM
	ip netns add $IA && ip netns add $IB &&
	ip link add vbia netns $IA type veth peer name vbib netns $IB &&
	ip -n $IA addr add 10.78.0.1/24 dev vbia && ip -n $IB addr add 10.78.0.2/24 dev vbib &&
	ip -n $IA link set vbia up && ip -n $IB link set vbib up && ip -n $IA link set lo up || {
		echo "impair: namespaces failed"; return 1; }
	us_ll=$(ip netns exec $IA "$LINKLAB_BENCH" apply --dev vbia -n $N) || { echo "impair: linklab-bench apply failed"; return 1; }
	t0=$(date +%s%N)
	ip netns exec $IA sh -c "i=0; while [ \$i -lt $N ]; do
		if [ \$((i % 2)) = 0 ]; then r=50mbit; else r=60mbit; fi
		tc qdisc replace dev vbia root handle 1: tbf rate \$r burst 6250b limit 318750b || exit 1
		tc -j qdisc show dev vbia > /dev/null || exit 1
		i=\$((i + 1)); done"
	t1=$(date +%s%N)
	ip netns exec $IA tc qdisc del dev vbia root 2>/dev/null
	python3 -c "import sys
ll=float(sys.argv[1]); tc=(int(sys.argv[3])-int(sys.argv[2]))/1e3/int(sys.argv[4])
print('impair: apply+read-back x%s: linklab %.0f us, tc (2 processes) %.0f us, ratio %.3fx (target <= 0.2x)' % (sys.argv[4], ll, tc, ll/tc))" \
		"$us_ll" "$t0" "$t1" "$N"
	ip netns exec $IB iperf3 -s -p 5421 > /dev/null 2>&1 &
	srv=$!
	sleep 0.5
	for r in 10 50 200 1000; do
		ip netns exec $IA "$LINKLAB" apply --dev vbia --rate ${r}mbit > /dev/null 2>&1 || { echo "impair: apply ${r}mbit failed"; continue; }
		ip netns exec $IA iperf3 -c 10.78.0.2 -p 5421 -t $((T + 2)) -O 2 -J > "$tmp/imp.json" 2>/dev/null
		python3 - "$tmp/imp.json" "$r" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); g=d["end"]["sum_received"]["bits_per_second"]
r=float(sys.argv[2])*1e6; c=r*1448/1514
print("impair: tbf %5s Mbit  goodput %8.2f Mbit/s  ceiling %8.2f Mbit/s  %6.2f%% (target >= 99%%)"
      % (sys.argv[2], g/1e6, c/1e6, 100*g/c))
PY
		ip netns exec $IA "$LINKLAB" clear --dev vbia > /dev/null 2>&1
	done
	# later sections replace the trap: clean up here (the server runs in
	# IB, so its pids there, not the ip-netns-exec wrapper's)
	for n in $IA $IB; do
		for p in $(ip netns pids $n 2>/dev/null); do kill $p; done
	done
	wait $srv 2>/dev/null
	ip netns del $IA 2>/dev/null; ip netns del $IB 2>/dev/null
}
impair_bench

# --- ssh: one dial to both peers, persistent session vs ssh per command
# Same run, the two-namespace lab (lab/lab.sh, private names): N rounds of
# "apply tbf on A and B, read both back" through linklab (A over netlink, B
# over its one SSH session) against the seeds' helper (tc here, one `ssh`
# process per remote command: tc qdisc replace, tc -j qdisc show). Ratio
# (goal >= 10x faster).
ssh_bench() {
	N=${BENCH_SSH_N:-20}
	export LL_NS_A=llbench-sa$$ LL_NS_B=llbench-sb$$ LL_LAB_DIR="$tmp/ssh-lab"
	trap 'ip netns del $NS 2>/dev/null; sh lab/lab.sh down >/dev/null 2>&1' EXIT INT TERM
	sh lab/lab.sh up > /dev/null 2>&1 || { echo "ssh: lab up failed"; return 1; }
	eval "$(sh lab/lab.sh env)"
	ms_ll=$(ip netns exec $LL_NS_A "$LINKLAB_BENCH" ssh -F "$LL_SSH_CONFIG" --peer peer-b \
		--dev veth-a --peer-dev veth-b -n $N) || { echo "ssh: linklab-bench ssh failed"; sh lab/lab.sh down >/dev/null 2>&1; return 1; }
	t0=$(date +%s%N)
	ip netns exec $LL_NS_A sh -c "i=0; while [ \$i -lt $N ]; do
		if [ \$((i % 2)) = 0 ]; then r=50mbit; else r=60mbit; fi
		tc qdisc replace dev veth-a root handle 1: tbf rate \$r burst 6250b limit 318750b || exit 1
		tc -j qdisc show dev veth-a > /dev/null || exit 1
		ssh -F '$LL_SSH_CONFIG' peer-b tc qdisc replace dev veth-b root handle 1: tbf rate \$r burst 6250b limit 318750b || exit 1
		ssh -F '$LL_SSH_CONFIG' peer-b tc -j qdisc show dev veth-b > /dev/null || exit 1
		i=\$((i + 1)); done" || echo "ssh: the ssh-per-command loop failed"
	t1=$(date +%s%N)
	ip netns exec $LL_NS_A tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec $LL_NS_B tc qdisc del dev veth-b root 2>/dev/null
	python3 -c "import sys
ll=float(sys.argv[1]); sp=(int(sys.argv[3])-int(sys.argv[2]))/1e6/int(sys.argv[4])
print('ssh: one dial to both peers x%s: linklab (persistent session) %.1f ms, ssh per command %.1f ms, %.1fx faster (goal >= 10x)' % (sys.argv[4], ll, sp, sp/ll))" \
		"$ms_ll" "$t0" "$t1" "$N"
	sh lab/lab.sh down > /dev/null 2>&1
}
ssh_bench

# --- endpoint engine on both peers' egress (scripts/bench-engine.sh)
LINKLAB="$LINKLAB" sh scripts/bench-engine.sh
rm -rf "$tmp"

# --- console: CPU and RSS while showing a 128-stream test (scripts/bench-console.sh)
LINKLAB="$LINKLAB" sh scripts/bench-console.sh
