#!/bin/sh
# capture-tc.sh - regenerate the golden tc-*.hex files: the exact RTM_NEWQDISC
# bytes iproute2's own tc sends for a set of qdisc commands. Each command runs
# in a private, throw-away network namespace (unshare -n) on its own lo, so no
# host interface is touched; tc sends the request even where the kernel then
# refuses it (no sch_netem here). Needs root (or unshare -Urn), strace, tc.
#
# Output format (tests/unit/test_nlqdisc.c reads it): lines starting with '#'
# are comments (the first one is the tc command), every other line holds hex
# byte pairs separated by spaces; the bytes are the whole netlink message
# (nlmsghdr + tcmsg + attributes) of the first RTM_NEWQDISC sendmsg.
set -eu
cd "$(dirname "$0")"
# optional arguments: capture only these names (e.g. netem-ecn netem-slot)
ONLY=" $* "

cap() {
	name=$1; shift
	if [ "$ONLY" != "  " ] && [ "${ONLY#* $name }" = "$ONLY" ]; then
		return 0
	fi
	out="tc-$name.hex"
	{
		echo "# tc qdisc add dev lo root $*"
		echo "# $(tc -V 2>&1 | head -1); captured by capture-tc.sh"
		unshare -n strace -f -e trace=sendmsg -e write=3 -X raw -s 4096 \
			tc qdisc add dev lo root "$@" 2>&1 >/dev/null |
		awk '/^sendmsg\(/ { on = (index($0, "nlmsg_type=0x24") > 0); seen += on; next }
		     on && seen == 1 && /^ \| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / {
			line = substr($0, 11, 49); gsub(/  +/, " ", line);
			sub(/^ /, "", line); sub(/ $/, "", line); print line }'
	} > "$out.tmp"
	if [ "$(grep -vc '^#' "$out.tmp")" -eq 0 ]; then
		echo "capture-tc: no RTM_NEWQDISC seen for: $*" >&2
		rm -f "$out.tmp"; exit 1
	fi
	mv "$out.tmp" "$out"
	echo "wrote $out"
}

cap tbf-50mbit     tbf rate 50mbit burst 25000b limit 337500b
cap tbf-10mbit     tbf rate 10mbit burst 5000b limit 67500b
cap tbf-1gbit      tbf rate 1gbit burst 500000b limit 6750000b
cap tbf-10gbit     tbf rate 10gbit burst 5000000b limit 67500000b
cap tbf-40gbit     tbf rate 40gbit burst 20000000b limit 270000000b
cap netem-delay    netem delay 100ms
cap netem-jitter   netem delay 100ms 10ms 25%
cap netem-loss1    netem loss 1%
cap netem-loss75   netem loss 75%
cap netem-delay200 netem delay 200s
cap netem-dup      netem duplicate 2% 10%
cap netem-corrupt  netem corrupt 0.1% 5%
cap netem-reorder  netem delay 10ms reorder 25% 50% gap 5
cap netem-limit    netem limit 8334 delay 50ms loss 0.5%
# every other netem knob (tc 6.1 has no "seed": checked by value)
cap netem-dist-normal  netem delay 100ms 10ms distribution normal
cap netem-dist-pareto  netem delay 50ms 20ms 10% distribution pareto
cap netem-dist-pn      netem delay 10ms 5ms distribution paretonormal
cap netem-state1   netem loss state 1%
cap netem-state5   netem loss state 1% 30% 2% 90% 0.5%
cap netem-ge1      netem loss gemodel 1%
cap netem-ge4      netem loss gemodel 1% 30% 80% 0.1%
cap netem-ecn      netem loss 1% ecn
cap netem-rate     netem rate 8mbit
cap netem-rate-cells netem rate 1mbit -14 48 5
cap netem-rate64   netem rate 40gbit
cap netem-slot     netem slot 800us 1ms packets 10 bytes 64kb
cap netem-slot1    netem slot 2ms
cap netem-combo    netem limit 20000 delay 100ms 10ms 25% distribution normal loss gemodel 1% 30% ecn corrupt 0.1% reorder 5% gap 3 rate 100mbit slot 1ms 2ms
# ingress (IFB + mirred), per-flow scope (htb + u32). capx NAME
# TYPE(hex nlmsg_type) SETUP TC-ARGS...: SETUP runs first in the namespace.
capx() {
	name=$1; type=$2; setup=$3; shift 3
	if [ "$ONLY" != "  " ] && [ "${ONLY#* $name }" = "$ONLY" ]; then
		return 0
	fi
	out="tc-$name.hex"
	{
		echo "# $setup; tc $*"
		echo "# $(tc -V 2>&1 | head -1); captured by capture-tc.sh"
		unshare -n sh -c "$setup; strace -f -e trace=sendmsg -e write=3 -X raw -s 4096 tc $*" 2>&1 >/dev/null |
		awk -v t="nlmsg_type=$type" '/sendmsg\(/ { on = (index($0, t) > 0); seen += on; next }
		     on && seen == 1 && /^ \| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / {
			line = substr($0, 11, 49); gsub(/  +/, " ", line);
			sub(/^ /, "", line); sub(/ $/, "", line); print line }'
	} > "$out.tmp"
	if [ "$(grep -vc '^#' "$out.tmp")" -eq 0 ]; then
		echo "capture-tc: no request seen for: $*" >&2
		rm -f "$out.tmp"; exit 1
	fi
	mv "$out.tmp" "$out"
	echo "wrote $out"
}
capx ingress 0x24 "ip link set lo up" qdisc replace dev lo ingress
capx filter-mirred 0x2c "ip link add ifb0 type ifb" filter replace dev lo parent ffff: protocol all prio 1 handle 800::800 u32 match u32 0 0 action mirred egress redirect dev ifb0
capx filter-flow 0x2c "true" filter add dev lo parent 1: protocol ip prio 1 u32 match ip dst 10.9.0.0/16 match ip dport 5201 0xffff flowid 1:1
capx filter-dport 0x2c "true" filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport 5201 0xffff flowid 1:1
capx htb 0x24 "true" qdisc replace dev lo root handle 1: htb default 2
capx htb-class 0x28 "tc qdisc add dev lo root handle 1: htb default 2" class replace dev lo parent 1: classid 1:1 htb rate 50mbit ceil 50mbit burst 25000b cburst 25000b
capx htb-class64 0x28 "tc qdisc add dev lo root handle 1: htb default 2" class replace dev lo parent 1: classid 1:2 htb rate 40gbit ceil 40gbit burst 20000000b cburst 20000000b
capx filter-flow6 0x2c "true" filter add dev lo parent 1: protocol ipv6 prio 2 u32 match ip6 dst fd00:1::/48 match ip6 dport 5201 0xffff flowid 1:1
capx filter-dport6 0x2c "true" filter add dev lo parent 1: protocol ipv6 prio 2 u32 match ip6 dport 5201 0xffff flowid 1:1
capx filter-dst6-128 0x2c "true" filter add dev lo parent 1: protocol ipv6 prio 2 u32 match ip6 dst fd00:1:2:3:4:5:6:7/128 flowid 1:1
