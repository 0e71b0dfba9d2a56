#!/bin/sh
# make bench: speed figures as ratios against iperf3 (and tc) measured in the
# same run, on loopback inside a private network namespace. Prints figures;
# targets are in the README/issue notes, not asserted here (the machine is
# noisy: compare within one run).
set -u
cd "$(dirname "$0")/.." || exit 1
LINKLAB=${LINKLAB:-$PWD/build/linklab}
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

# --- bridge: the userspace engine forwarding A -> middle -> B ------------------
# Three-namespace lab (lab/lab-bridge.sh, private names); iperf3 TCP through
# `linklab bridge` with 50 ms each way (100 ms RTT), and the plain engine for
# reference. CPU of the engine process (utime+stime from /proc) per Gbit moved.
bridge_bench() {
	LBB="sh lab/lab-bridge.sh"
	export LL_NS_A=llbench-ba$$ LL_NS_M=llbench-bm$$ LL_NS_B=llbench-bb$$
	export LL_LAB_DIR="$tmp/bridge-lab" LINKLAB
	trap 'ip netns del $NS 2>/dev/null; $LBB down >/dev/null 2>&1' EXIT INT TERM
	if ! $LBB up > "$tmp/bridge-up.log" 2>&1; then
		echo "bridge: lab up failed:"; cat "$tmp/bridge-up.log"; return 1
	fi
	echo "bridge: iperf3 TCP A -> B through linklab's userspace engine, ${T}s each"
	for dial in "plain" "delay 50ms each way (RTT 100 ms)"; do
		case "$dial" in
		plain) $LBB engine > /dev/null 2>&1 ;;
		*)     $LBB engine --delay 50ms > /dev/null 2>&1 ;;
		esac
		epid=$(cat "$LL_LAB_DIR/engine.pid")
		for P in 1 4; do
			c0=$(awk '{print $14+$15}' /proc/"$epid"/stat)
			ip netns exec "$LL_NS_B" iperf3 -s -1 -p 5411 > /dev/null 2>&1 &
			sp=$!; sleep 0.5
			ip netns exec "$LL_NS_A" iperf3 -c 10.198.0.2 -p 5411 -P $P -t $T -J \
				> "$tmp/br.json" 2>/dev/null
			wait $sp
			c1=$(awk '{print $14+$15}' /proc/"$epid"/stat)
			python3 - "$tmp/br.json" "$c0" "$c1" "$(getconf CLK_TCK)" "$dial" "$P" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=d["end"]["sum_received"]
cpu=(float(sys.argv[3])-float(sys.argv[2]))/float(sys.argv[4])
gbits=s["bytes"]*8/1e9; secs=s["seconds"]
print("  %-36s -P %s  %6.2f Gbit/s   engine CPU %5.1f%% of a core, %.3f CPU s/Gbit"
      % (sys.argv[5], sys.argv[6], s["bits_per_second"]/1e9, 100*cpu/secs, cpu/gbits if gbits else 0))
PY
		done
	done
	$LBB down > /dev/null 2>&1
}
bridge_bench
rm -rf "$tmp"
