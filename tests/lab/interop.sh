#!/bin/sh
# interop.sh - linklab's iperf3 protocol against the real iperf3 (3.12 on
# Debian 12), loopback only (127.0.0.1):
#   linklab test -> iperf3 -s -1,  iperf3 -c -> linklab serve -1,
#   linklab test -> linklab serve -1;  each -P 4 -t 2, normal and -R,
#   TCP and UDP (-u -b 10M); and --bidir -P 2 (4 streams) both ways.
# Every client runs with -J; the document is checked with python3:
# end.sum_received.bytes > 0, sum_sent >= sum_received, 4 streams.
# Prints PASS/FAIL/SKIP lines, then exactly one "interop: N passed, N failed".
# LINKLAB: path of the linklab binary (default build/linklab).
LINKLAB=${LINKLAB:-build/linklab}
IPERF3=${IPERF3:-/usr/bin/iperf3}
P=4
T=2
pass=0
fail=0
ncase=0
tmp=$(mktemp -d /tmp/linklab-interop.XXXXXX)
srv_pid=

cleanup() {
	if [ -n "$srv_pid" ] && kill -0 "$srv_pid" 2>/dev/null; then
		kill "$srv_pid" 2>/dev/null
		wait "$srv_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

ok()   { echo "PASS: $1"; pass=$((pass + 1)); }
bad()  { echo "FAIL: $1${2:+ ($2)}"; fail=$((fail + 1)); }
skip() { echo "SKIP: $1 ($2)"; }

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# check_json FILE NSTREAMS: iperf3 -J schema checks; prints a reason on failure
check_json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("not JSON: %s" % e); sys.exit(1)
n = int(sys.argv[2])
if d.get("error"):
    print("error: %s" % d["error"]); sys.exit(1)
end = d.get("end", {})
rcv = end.get("sum_received", {}).get("bytes", 0)
snd = end.get("sum_sent", {}).get("bytes", 0)
if not rcv > 0:
    print("end.sum_received.bytes = %r" % rcv); sys.exit(1)
if snd < rcv:
    print("sum_sent %d < sum_received %d" % (snd, rcv)); sys.exit(1)
if len(end.get("streams", [])) != n:
    print("end.streams has %d entries" % len(end.get("streams", []))); sys.exit(1)
if len(d.get("start", {}).get("connected", [])) != n:
    print("start.connected has %d entries" % len(d["start"]["connected"])); sys.exit(1)
iv = d.get("intervals", [])
if not iv or len(iv[0].get("streams", [])) != n or "sum" not in iv[0]:
    print("intervals[0] malformed"); sys.exit(1)
bps = end["sum_received"].get("bits_per_second", 0)
print("%.2f %s received" % ((bps / 1e9, "Gbit/s") if bps >= 1e9 else (bps / 1e6, "Mbit/s")))
EOF
}

# wait_listen FILE: wait up to 5 s for "Server listening on PORT"; print PORT
wait_listen() {
	i=0
	while [ $i -lt 50 ]; do
		port=$(sed -n 's/^Server listening on \([0-9][0-9]*\).*/\1/p' "$1" | head -1)
		if [ -n "$port" ]; then echo "$port"; return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start_server NAME CMD...: background server, sets srv_pid and port
start_server() {
	out=$tmp/$1.srv
	shift
	: >"$out"   # exists before the background child opens it
	"$@" >"$out" 2>&1 &
	srv_pid=$!
	port=$(wait_listen "$out") || port=
}

stop_server() {
	# one-off servers end by themselves; give them a moment, then end ours
	i=0
	while [ $i -lt 30 ] && kill -0 "$srv_pid" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$srv_pid" 2>/dev/null; then
		kill "$srv_pid" 2>/dev/null
		wait "$srv_pid" 2>/dev/null
		srv_rc=124
	else
		wait "$srv_pid" 2>/dev/null
		srv_rc=$?
	fi
	srv_pid=
}

# run_case NAME SERVER_KIND CLIENT_KIND "FLAGS" [NSTREAMS [PARALLEL]]
run_case() {
	name=$1 skind=$2 ckind=$3 rflag=$4 nst=${5:-$P} par=${6:-$P}
	ncase=$((ncase + 1))
	cf=case$ncase   # file names: no spaces or '>' from the case name
	case "$skind$ckind" in
	*iperf3*) if [ ! -x "$IPERF3" ]; then skip "$name" "no $IPERF3"; return; fi ;;
	esac
	if [ ! -x "$LINKLAB" ]; then skip "$name" "no linklab binary at $LINKLAB"; return; fi
	if [ "$skind" = iperf3 ]; then
		p0=$(free_port)
		start_server "$cf" "$IPERF3" -s -1 -p "$p0" -B 127.0.0.1 --forceflush
	else
		start_server "$cf" "$LINKLAB" serve -1 -p 0 -B 127.0.0.1
	fi
	if [ -z "$port" ]; then
		stop_server
		bad "$name" "server did not report 'Server listening on PORT'"
		return
	fi
	if [ "$ckind" = iperf3 ]; then
		timeout 30 "$IPERF3" -c 127.0.0.1 -p "$port" -P $par -t $T $rflag -J \
			>"$tmp/$cf.json" 2>"$tmp/$cf.err"
	else
		timeout 30 "$LINKLAB" test -c 127.0.0.1 -p "$port" -P $par -t $T $rflag -J \
			>"$tmp/$cf.json" 2>"$tmp/$cf.err"
	fi
	crc=$?
	stop_server
	why=$(check_json "$tmp/$cf.json" "$nst")
	jrc=$?
	if [ $crc -ne 0 ]; then
		bad "$name" "client exit $crc: $(head -c 300 "$tmp/$cf.err") $why"
	elif [ $jrc -ne 0 ]; then
		bad "$name" "$why"
	elif [ "$srv_rc" != 0 ]; then
		bad "$name" "server exit $srv_rc: $(tail -n 3 "$tmp/$cf.srv" | tr '\n' ' ')"
	else
		ok "$name: $why"
	fi
}

for u in "" "-u -b 10M"; do
	for r in "" "-R"; do
		f="$u${u:+${r:+ }}$r"
		tag=${f:+ $f}
		run_case "linklab test -> iperf3 -s$tag" iperf3 linklab "$f"
		run_case "iperf3 -c -> linklab serve$tag" linklab iperf3 "$f"
		run_case "linklab test -> linklab serve$tag" linklab linklab "$f"
	done
done

for f in "--bidir" "--bidir -u -b 10M"; do
	run_case "linklab test -> iperf3 -s -P 2 $f" iperf3 linklab "$f" 4 2
	run_case "iperf3 -c -> linklab serve -P 2 $f" linklab iperf3 "$f" 4 2
	run_case "linklab test -> linklab serve -P 2 $f" linklab linklab "$f" 4 2
done

echo "interop: $pass passed, $fail failed"
[ "$fail" = 0 ]
