#!/bin/sh
# bench-bridge.sh - linklab bridge's user engine against the Linux bridge
# (linklab bridge --engine kernel, no dial) in the same three-namespace lab
# (lab/lab-bridge.sh), same run, runs interleaved, medians of
# BENCH_BRIDGE_REPS (5):
#  - TCP -P 1 and -P 4 A -> B (iperf3), no dial: Gbit/s, ratio user/kernel
#    (the user engine as it starts by default, and with --workers 1),
#    CPU s/Gbit of everything that moves the data (iperf3 client + server +
#    the engine process: without IRQ time accounting the kernel's
#    forwarding softirqs are charged to the task they interrupt, so the
#    Linux bridge's work is in the iperf3 figures) and of the engine alone;
#  - a dial of delay 50 ms each way + loss 1 %: UDP -b 1G -l 1448 delivered
#    against what the dial lets through (offered x 0.99) and TCP -P 4 with the
#    engine's own loss count;
#  - 64-byte frames (18-byte UDP payload: 60 bytes on the veth + FCS):
#    build/udpblast (sendmmsg, BENCH_GEN_THREADS threads) offers, veth-b's
#    rx_packets counts what came out of the bridge, in Mpps;
#  - the engine's memory bound as it prints it: its configured queue (limit frames of at
#    most a 64 KiB GSO frame each) plus its receive buffers.
# Figures only; nothing is asserted (the machine is shared and noisy).
set -u
cd "$(dirname "$0")/.." || exit 1
LINKLAB=${LINKLAB:-$PWD/build/linklab}
UDPBLAST=${UDPBLAST:-$PWD/build/udpblast}
T=${BENCH_TIME:-5}
R=${BENCH_BRIDGE_REPS:-5}
GT=${BENCH_GEN_THREADS:-1}
[ "$(id -u)" = 0 ] || { echo "bench-bridge: needs root (namespaces)"; exit 1; }
[ -x "$UDPBLAST" ] || { echo "bench-bridge: $UDPBLAST not built (make bench-bin)"; exit 1; }
LBB="sh lab/lab-bridge.sh"
tmp=$(mktemp -d)
export LL_NS_A=llbbr-a$$ LL_NS_M=llbbr-m$$ LL_NS_B=llbbr-b$$
export LL_LAB_DIR="$tmp/lab" LINKLAB
trap '$LBB down >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if ! $LBB up > "$tmp/up.log" 2>&1; then
	echo "bench-bridge: lab up failed:"; cat "$tmp/up.log"; exit 1
fi
A() { ip netns exec "$LL_NS_A" "$@"; }
B() { ip netns exec "$LL_NS_B" "$@"; }
engine() { # options: (re)start the engine, print its pid
	$LBB engine "$@" > /dev/null 2>&1 || { echo "bench-bridge: engine $* failed" >&2; return 1; }
	cat "$LL_LAB_DIR/engine.pid"
}
pcpu() { awk '{print $14+$15}' /proc/"$1"/stat 2>/dev/null || echo 0; }

# tcp ENGINE_OPTS -- IPERF3_OPTS: one iperf3 TCP run A -> B through a fresh
# engine; prints "gbps cpu_all_s cpu_engine_s secs"
tcp() {
	eo=""; while [ "$1" != -- ]; do eo="$eo $1"; shift; done; shift
	# shellcheck disable=SC2086
	epid=$(engine $eo) || { echo "0 0 0 1"; return; }
	c0=$(pcpu "$epid")
	B /usr/bin/time -f "%U %S" -o "$tmp/srv.time" iperf3 -s -1 -p 5431 > /dev/null 2>&1 &
	sp=$!; sleep 0.5
	A /usr/bin/time -f "%U %S" -o "$tmp/cli.time" iperf3 -c 10.198.0.2 -p 5431 -t "$T" -J "$@" \
		> "$tmp/tcp.json" 2>/dev/null
	wait $sp
	c1=$(pcpu "$epid")
	python3 - "$tmp/tcp.json" "$tmp/srv.time" "$tmp/cli.time" "$c0" "$c1" "$(getconf CLK_TCK)" <<'PY'
import json,sys
try:
    s=json.load(open(sys.argv[1]))["end"]["sum_received"]
    g=s["bits_per_second"]/1e9; secs=s["seconds"]
except Exception:
    g=0; secs=1
def tm(f):
    try: return sum(float(x) for x in open(f).read().split()[-2:])
    except Exception: return 0
eng=(float(sys.argv[5])-float(sys.argv[4]))/float(sys.argv[6])
print("%.3f %.3f %.3f %.3f" % (g, tm(sys.argv[2])+tm(sys.argv[3])+eng, eng, secs))
PY
}

# med FILE: the run with the median Gbit/s of FILE's lines
med() { sort -n "$1" | awk '{l[NR]=$0} END {print l[int((NR+1)/2)]}'; }

echo "bench-bridge: iperf3 TCP A -> B, no dial, Linux bridge vs linklab's user engine, ${T}s each, median of $R (interleaved)"
for P in 1 4; do
	: > "$tmp/k$P"; : > "$tmp/u$P"; : > "$tmp/w$P"
	i=0
	while [ $i -lt "$R" ]; do
		tcp --engine kernel -- -P $P >> "$tmp/k$P"
		tcp --engine user -- -P $P >> "$tmp/u$P"
		tcp --engine user --workers 1 -- -P $P >> "$tmp/w$P"
		i=$((i + 1))
	done
	python3 - "$P" "$(med "$tmp/k$P")" "$(med "$tmp/u$P")" "$(cut -d' ' -f1 "$tmp/k$P" | tr '\n' ' ')" \
		"$(cut -d' ' -f1 "$tmp/u$P" | tr '\n' ' ')" "$(med "$tmp/w$P")" \
		"$(cut -d' ' -f1 "$tmp/w$P" | tr '\n' ' ')" <<'PY'
import sys
P=sys.argv[1]
kg,kc,ke,ks=map(float,sys.argv[2].split()); ug,uc,ue,us=map(float,sys.argv[3].split())
wg,wc,we,ws=map(float,sys.argv[6].split())
spg=lambda c,g,s: c/(g*s) if g else 0
print("bridge TCP -P %s: Linux bridge %6.2f Gbit/s (%.3f CPU s/Gbit)   user engine %6.2f Gbit/s (%.3f CPU s/Gbit, engine alone %.3f)   ratio %.2fx   (--workers 1: %.2f Gbit/s, %.2fx)   [runs: kernel %s| user %s| --workers 1 %s]"
      % (P, kg, spg(kc,kg,ks), ug, spg(uc,ug,us), spg(ue,ug,us), ug/kg if kg else 0,
         wg, wg/kg if kg else 0, sys.argv[4], sys.argv[5], sys.argv[7]))
PY
done

# --- a dial: delay 50 ms each way, loss 1 % -----------------------------------
# UDP: frames counted where they enter (veth-a's tx) and leave (veth-b's rx)
# the middle box, so B's own receive drops do not count against the engine
DIAL="--delay 50ms --loss 1%"
cnt() { ip netns exec "$1" cat /sys/class/net/"$2"/statistics/"$3"_packets; }
# shellcheck disable=SC2086
epid=$(engine $DIAL)
grep "memory bound" "$LL_LAB_DIR/engine.err" | sed 's/^linklab bridge: /bridge engine (dial delay 50ms + loss 1%): /' > "$tmp/mem.dial"
# two tries: with 1 % loss the test's own control connection can fail
for try in 1 2; do
	B iperf3 -s -1 -p 5432 > /dev/null 2>&1 &
	sp=$!; sleep 0.5
	a0=$(cnt "$LL_NS_A" veth-a tx); b0=$(cnt "$LL_NS_B" veth-b rx)
	A iperf3 -c 10.198.0.2 -p 5432 -u -b 1G -l 1448 -t "$T" -J > "$tmp/udp.json" 2>/dev/null
	ok=$?
	[ $ok = 0 ] || kill "$sp" 2>/dev/null
	wait $sp
	sleep 0.2
	a1=$(cnt "$LL_NS_A" veth-a tx); b1=$(cnt "$LL_NS_B" veth-b rx)
	[ $ok = 0 ] && break
done
$LBB stop-engine > "$tmp/udp.eng" 2>&1
python3 - "$tmp/udp.json" "$tmp/udp.eng" "$a0" "$a1" "$b0" "$b1" <<'PY'
import json,re,sys
try:
    s=json.load(open(sys.argv[1]))["end"]["sum"]
    rg=s["bits_per_second"]/1e9; rl=s["lost_percent"]
except Exception:
    rg=0; rl=100
inn=int(sys.argv[4])-int(sys.argv[3]); out=int(sys.argv[6])-int(sys.argv[5])
eng=open(sys.argv[2]).read()
m=re.search(r"A->B: rx (\d+) pkts.*?lost (\d+).*?limit drops (\d+).*?socket drops (\d+), tx errors (\d+)", eng)
el=("engine: lost %.3f %% of %s, limit drops %s, socket drops %s, tx errors %s"
    % (100*int(m.group(2))/max(1,int(m.group(1))), m.group(1), m.group(3), m.group(4), m.group(5))) if m else "engine counters: ?"
if rg == 0:
    print("bridge dial delay 50ms each way + loss 1%%, UDP -b 1G -l 1448: the iperf3 run failed (%d frames in), no figure" % inn)
    sys.exit(0)
print("bridge dial delay 50ms each way + loss 1%%, UDP -b 1G -l 1448: %d frames in, %d out = %.2f %% of what the dial lets through (in x 0.99); iperf3 receiver %.3f Gbit/s, loss %.2f %%; %s"
      % (inn, out, 100*out/(inn*0.99) if inn else 0, rg, rl, el))
PY
for P in 4; do
	# shellcheck disable=SC2086
	r=$(tcp $DIAL -- -P $P)
	$LBB stop-engine > "$tmp/tcp.eng" 2>&1
	python3 - "$P" "$r" "$tmp/tcp.eng" <<'PY'
import re,sys
g,c,e,s=map(float,sys.argv[2].split())
m=re.search(r"A->B: rx (\d+) pkts.*?lost (\d+)", open(sys.argv[3]).read())
el="engine lost %.3f %% of %s frames" % (100*int(m.group(2))/max(1,int(m.group(1))), m.group(1)) if m else "engine counters: ?"
print("bridge dial delay 50ms each way + loss 1%%, TCP -P %s: %.3f Gbit/s, engine CPU %.1f %% of a core (%s; TCP's own loss response sets the rate)"
      % (sys.argv[1], g, 100*e/s, el))
PY
done

# --- 64-byte frames -----------------------------------------------------------
# B drops the flood in its raw table (no socket, no ICMP port unreachable:
# the cheapest sink; veth-b's rx_packets has counted it by then)
B iptables -t raw -A PREROUTING -p udp --dport 5433 -j DROP 2>/dev/null ||
	echo "bench-bridge: no iptables in B: the flood gets ICMP port unreachable replies (rate-limited)"
smallpkt() { # engine options: prints "offered_mpps delivered_mpps"
	engine "$@" > /dev/null || { echo "0 0"; return; }
	n0=$(B cat /sys/class/net/veth-b/statistics/rx_packets)
	A "$UDPBLAST" tx 10.198.0.2 5433 "$T" 18 "$GT" > "$tmp/gen.out"
	sleep 0.2
	n1=$(B cat /sys/class/net/veth-b/statistics/rx_packets)
	awk -v n0="$n0" -v n1="$n1" '{printf "%.3f %.3f\n", $2/$3/1e6, (n1-n0)/$3/1e6}' "$tmp/gen.out"
}
: > "$tmp/sk"; : > "$tmp/su"
i=0
while [ $i -lt "$R" ]; do
	smallpkt --engine kernel | awk '{print $2, $1}' >> "$tmp/sk"
	smallpkt --engine user | awk '{print $2, $1}' >> "$tmp/su"
	i=$((i + 1))
done
python3 - "$(med "$tmp/sk")" "$(med "$tmp/su")" "$GT" <<'PY'
import sys
kd,ko=map(float,sys.argv[1].split()); ud,uo=map(float,sys.argv[2].split())
print("bridge 64-byte UDP frames (udpblast, %s sendmmsg thread(s)): Linux bridge %.3f Mpps (offered %.3f)   user engine %.3f Mpps (offered %.3f)   ratio %.2fx"
      % (sys.argv[3], kd, ko, ud, uo, ud/kd if kd else 0))
PY

# --- memory bound: what the engine prints at start ---------------------------
engine > /dev/null
grep "memory bound" "$LL_LAB_DIR/engine.err" | sed 's/^linklab bridge: /bridge engine (no dial): /'
cat "$tmp/mem.dial"
