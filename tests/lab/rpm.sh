#!/bin/sh
# linklab rpm: responsiveness under load on the two-namespace lab.
#  - bufferbloat: tbf 20mbit with a deep queue (limit 400000 b) vs a shallow
#    one (15000 b), cubic load: the deep queue's working RTT is several times
#    the shallow one's and its RPM lower; -J carries the draft's keys
#  - a stock iperf3 -s server: no echo -> the note says what is missing,
#    self probes still give a working RTT
#  - bad input (exit 2, every problem at once), unreachable server (exit 1)
. "$(dirname "$0")/lib.sh"
need_root rpm
trap 'kill $SRV 2>/dev/null; lab_down' EXIT INT TERM
if ! lab_up rpm; then fail "lab up"; summary rpm; exit 1; fi
T=$(mktemp -d)
inb "$LINKLAB" serve -p 5311 > "$T/serve.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5311 || fail "linklab serve did not listen"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2]))' "$1" "$2"; }
run_rpm() { # limit out
	ina tc qdisc replace dev veth-a root tbf rate 20mbit burst 15000 limit "$1"
	ina "$LINKLAB" rpm -c "$LL_ADDR_B" -p 5311 -t 12 -C cubic -J > "$2" 2> "$2.err"
}
run_rpm 400000 "$T/deep.json"; rc1=$?
run_rpm 15000 "$T/shallow.json"; rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && python3 - "$T/deep.json" "$T/shallow.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=json.load(open(sys.argv[2]))
for k in ("rpm","idle_rtt_ms","working_rtt_ms","goodput_bps","confidence","p50_ms","p90_ms","p99_ms"):
    assert k in d and k in s, k
print("figure: rpm deep  working %.1f ms RPM %.0f (%s), idle %.2f ms, goodput %.2f Mbit/s" % (d["working_rtt_ms"], d["rpm"], d["confidence"], d["idle_rtt_ms"], d["goodput_bps"]/1e6))
print("figure: rpm shallow working %.1f ms RPM %.0f (%s), idle %.2f ms, goodput %.2f Mbit/s" % (s["working_rtt_ms"], s["rpm"], s["confidence"], s["idle_rtt_ms"], s["goodput_bps"]/1e6))
assert d["working_rtt_ms"] > 3 * s["working_rtt_ms"], "deep not several times shallow"
assert d["rpm"] < s["rpm"]
assert 15e6 < d["goodput_bps"] < 20.5e6 and 15e6 < s["goodput_bps"] < 20.5e6, "goodput"
# 400000 b at 20 Mbit/s is 160 ms of queue: the working RTT cannot exceed it much
assert d["working_rtt_ms"] < 200
assert d["foreign_samples"] > 0 and d["self_samples"] > 0
PY
then pass "bufferbloat: deep queue working RTT > 3x shallow, RPM lower"
else fail "bufferbloat pair: rc $rc1/$rc2 $(head -c 300 "$T/deep.json") $(cat "$T/deep.json.err" "$T/shallow.json.err" | head -c 300)"; fi

# text output names the figures
ina tc qdisc del dev veth-a root 2>/dev/null
if ina "$LINKLAB" rpm -c "$LL_ADDR_B" -p 5311 -t 6 -R > "$T/text.out" 2>&1 &&
   grep -q "^download (server sends)" "$T/text.out" && grep -q "working RTT" "$T/text.out" &&
   grep -q "RPM " "$T/text.out"; then pass "rpm -R text: download block with idle/working RTT and RPM"
else fail "rpm -R text: $(head -c 400 "$T/text.out")"; fi

kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
inb iperf3 -s -p 5312 > "$T/iperf3.out" 2>&1 & SRV=$!
wait_port "$LL_NS_B" 5312 || fail "iperf3 -s did not listen"
if ina "$LINKLAB" rpm -c "$LL_ADDR_B" -p 5312 -t 6 -J > "$T/stock.json" 2>"$T/stock.err" &&
   python3 - "$T/stock.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
assert d["idle_rtt_ms"] is None and d["foreign_samples"] == 0
assert "stock iperf3" in d["note"] and "linklab serve" in d["note"]
assert d["self_samples"] > 0 and d["working_rtt_ms"] > 0
PY
then pass "stock iperf3 -s: self probes only, the note says what is missing"
else fail "stock iperf3 -s: $(head -c 400 "$T/stock.json") $(head -c 200 "$T/stock.err")"; fi
kill $SRV 2>/dev/null; wait $SRV 2>/dev/null; SRV=

ina "$LINKLAB" rpm -c "$LL_ADDR_B" -t 0 -P 500 > "$T/bad.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q -- "-t '0'" "$T/bad.out" && grep -q -- "-P '500'" "$T/bad.out"; then
	pass "bad input: exit 2, -t and -P both named with their ranges"
else fail "bad input: rc=$rc $(cat "$T/bad.out")"; fi
ina "$LINKLAB" rpm -c "$LL_ADDR_B" -p 5399 -t 6 > "$T/unreach.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "linklab rpm:" "$T/unreach.out"; then
	pass "nothing listening: exit 1 with the reason ($(tail -1 "$T/unreach.out" | cut -c1-80))"
else fail "unreachable: rc=$rc $(cat "$T/unreach.out")"; fi
rm -rf "$T"
summary rpm
