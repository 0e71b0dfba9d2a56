#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, console part: CPU and memory of the console while it shows a
# 128-stream test at a 1 s interval for 20 s (goal: < 2 % of a core for the
# screen, < 16 MB RSS). Everything runs in a private network namespace on
# loopback: `linklab serve` there, the console under a private tmux server,
# 128 TCP streams at -b 1mbit each (light traffic, so the figure is the
# console's, not the network's). CPU from /proc utime+stime: the whole
# process (screen thread + the test engine's stream threads) and its main
# thread alone (poll loop, event pump, drawing).
set -u
cd "$(dirname "$0")/.." || exit 1
LINKLAB=${LINKLAB:-$PWD/build/linklab}
DUR=${BENCH_CONSOLE_TIME:-20}
if [ "$(id -u)" != 0 ]; then echo "bench console: needs root (private netns)"; exit 1; fi
if ! command -v tmux >/dev/null 2>&1; then echo "bench console: SKIP (tmux not installed)"; exit 0; fi
NS=llbench-c$$
SOCK=llbc$$
TM="tmux -L $SOCK -f /dev/null"
spid=
cleanup() {
	$TM kill-server 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	ip netns del $NS 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add $NS || exit 1
ip -n $NS link set lo up
ip netns exec $NS "$LINKLAB" serve -p 5450 > /dev/null 2>&1 &
spid=$!
sleep 0.5
$TM new-session -d -s b -x 120 -y 40 \
	"TERM=screen XDG_DATA_HOME=/tmp/$SOCK ip netns exec $NS $LINKLAB console -c 127.0.0.1 -p 5450"
cap() { $TM capture-pane -p -t b 2>/dev/null; }
wait_for() { n=0; while [ $n -lt "$2" ]; do cap | grep -Eq -- "$1" && return 0; sleep 0.1; n=$((n+1)); done; return 1; }
wait_for "Peers" 50 || { echo "bench console: console did not start"; cap; exit 1; }
ppid=$($TM display -p -t b '#{pane_pid}')
cpid=$(ps -o pid= --ppid "$ppid" | head -1 | tr -d ' ')
[ "$(cat /proc/"$cpid"/comm 2>/dev/null)" = linklab ] || cpid=$ppid
# test form: 128 streams, DUR s, 1 s interval, -b 1mbit per stream
$TM send-keys -t b t e C-u 1 2 8 Enter j e C-u "$DUR" Enter j j j e C-u 1 m b i t Enter
wait_for "streams +128" 20 || { echo "bench console: form not set"; cap; exit 1; }
$TM send-keys -t b s
wait_for "running: 128 TCP streams" 100 || { echo "bench console: test did not start"; cap; exit 1; }
tck=$(getconf CLK_TCK)
p0=$(awk '{print $14+$15}' /proc/"$cpid"/stat)
m0=$(awk '{print $14+$15}' /proc/"$cpid"/task/"$cpid"/stat)
t0=$(date +%s.%N)
wait_for "done: 128 TCP streams" $((DUR * 10 + 150)) || { echo "bench console: test did not finish"; cap | tail -5; }
p1=$(awk '{print $14+$15}' /proc/"$cpid"/stat)
m1=$(awk '{print $14+$15}' /proc/"$cpid"/task/"$cpid"/stat)
t1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' /proc/"$cpid"/status)
rss=$(awk '/VmRSS/ {print $2}' /proc/"$cpid"/status)
rx=$(cap | grep -E '\[SUM\].*receiver' | grep -Eo '[0-9.]+ [kMG]?bit/s' | head -1)
python3 - "$p0" "$p1" "$m0" "$m1" "$t0" "$t1" "$tck" "$hwm" "$rss" "$rx" <<'PY'
import sys
p0,p1,m0,m1,t0,t1,tck,hwm,rss=(float(x) for x in sys.argv[1:10])
el=t1-t0
print("console: 128-stream test at -i 1 for %.0f s (SUM received %s)" % (el, sys.argv[10] or "?"))
print("  screen thread (loop, pump, draw): %5.2f %% of a core   goal < 2 %%" % (100*(m1-m0)/tck/el))
print("  whole process (+128 stream threads): %5.2f %% of a core" % (100*(p1-p0)/tck/el))
print("  RSS: peak %.1f MB, now %.1f MB                  goal < 16 MB" % (hwm/1024, rss/1024))
PY
$TM send-keys -t b q
sleep 1
rm -rf "/tmp/$SOCK"
