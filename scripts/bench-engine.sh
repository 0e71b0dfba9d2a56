#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, endpoint-engine part (run alone: sudo sh scripts/bench-engine.sh;
# BENCH_TIME=N seconds per run, default 5, each run N+5 s).
set -u
cd "$(dirname "$0")/.." || exit 1
LINKLAB=${LINKLAB:-$PWD/build/linklab}
T=${BENCH_TIME:-5}
if [ "$(id -u)" != 0 ]; then echo "bench engine: needs root (private netns)"; exit 1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- endpoint engine: linklab's netem-semantics engine on both peers' egress --
# Two-namespace lab (lab/lab.sh, private names); iperf3 TCP A -> B with
# `apply` on each peer (this kernel has no netem: the user engine, netfilter
# queue + `linklab engine`). Plain path, the engine with delay 0 (every packet
# through the queue, verdict accept: plain forwarding through the engine, as a
# ratio against the plain path), and delay 50ms each way (100 ms RTT; every
# packet held and re-sent), 1 and 4 streams. CPU: utime+stime of both engine
# processes (/proc) per Gbit moved over the whole run, the 3 omitted seconds
# counted at the measured rate (target <= 0.2 CPU s/Gbit). Last, seed 000's
# dial (rate 1gbit, delay 50ms each way: 4 streams near 931 Mbit/s).
# Wake-ups/s: both engines' voluntary context switches (each sleep that ended).
engine_bench() {
	export LL_NS_A=llbea$$ LL_NS_B=llbeb$$ LL_LAB_DIR="$tmp/engine-lab" LINKLAB
	export LINKLAB_RUN_DIR="$tmp/engine-run"
	if ! sh lab/lab.sh up > "$tmp/engine-up.log" 2>&1; then
		echo "engine: lab up failed:"; cat "$tmp/engine-up.log"; return 1
	fi
	eval "$(sh lab/lab.sh env)"
	ET=$((T + 5))
	echo "engine: iperf3 TCP A -> B through linklab's endpoint engine on both peers, ${ET}s each (first 3 s omitted)"
	base1=""; base4=""
	while IFS='|' read -r label dial; do
		[ -n "$label" ] || continue
		if [ -n "$dial" ]; then
			ip netns exec $LL_NS_A "$LINKLAB" apply --dev veth-a $dial > /dev/null 2>&1 &&
			ip netns exec $LL_NS_B "$LINKLAB" apply --dev veth-b $dial > /dev/null 2>&1 ||
				{ echo "engine: apply $dial failed"; continue; }
		fi
		pids=$(cat "$LINKLAB_RUN_DIR"/engine-*.hook 2>/dev/null | sed -n 's/.*"pid":[^0-9]*\([0-9]*\).*/\1/p' | tr '\n' ' ')
		for P in 1 4; do
			c0=0; w0=0; for p in $pids; do c0=$((c0 + $(cut -d' ' -f14,15 /proc/$p/stat | tr ' ' '+'))); w0=$((w0 + $(sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' /proc/$p/status))); done
			ip netns exec $LL_NS_B iperf3 -s -1 -p 5601 > /dev/null 2>&1 &
			sp=$!; sleep 0.5
			ip netns exec $LL_NS_A iperf3 -c $LL_ADDR_B -p 5601 -P $P -t $ET -O 3 -J > "$tmp/eng.json" 2>/dev/null
			wait $sp
			c1=0; w1=0; for p in $pids; do c1=$((c1 + $(cut -d' ' -f14,15 /proc/$p/stat | tr ' ' '+'))); w1=$((w1 + $(sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' /proc/$p/status))); done
			g=$(python3 -c "import json; print('%.3f' % (json.load(open('$tmp/eng.json'))['end']['sum_received']['bits_per_second']/1e9))" 2>/dev/null || echo 0)
			[ "$label" = plain ] && { [ $P = 1 ] && base1=$g || base4=$g; }
			python3 -c "import sys
g=float(sys.argv[1]); cpu=(int(sys.argv[2])-int(sys.argv[3]))/int(sys.argv[4]); t=float(sys.argv[5])
b=float(sys.argv[8] or 0)
moved=g*t
print('engine: %-22s -P %s %6.3f Gbit/s%s%s' % (sys.argv[6], sys.argv[7], g,
      ('  (%.2fx the plain path)' % (g/b)) if b and sys.argv[6] != 'plain' else '',
      ('  engine CPU %.2f s, %.3f CPU s/Gbit (target <= 0.2), %d wake-ups/s' % (cpu, cpu/moved, int(sys.argv[10])/t)) if sys.argv[9] and moved else ''))" \
				"$g" "$c1" "$c0" "$(getconf CLK_TCK)" "$((ET + 3))" "$label" "$P" \
				"$([ $P = 1 ] && echo "$base1" || echo "$base4")" "$pids" "$((w1 - w0))"
		done
		ip netns exec $LL_NS_A "$LINKLAB" clear --dev veth-a > /dev/null 2>&1
		ip netns exec $LL_NS_B "$LINKLAB" clear --dev veth-b > /dev/null 2>&1
	done <<'EOF_DIALS'
plain|
engine, delay 0|--engine user --delay 0ms
engine, delay 50ms each|--delay 50ms
seed 000: 1gbit + 50ms|--rate 1gbit --delay 50ms
EOF_DIALS
	sh lab/lab.sh down > /dev/null 2>&1
}
engine_bench
