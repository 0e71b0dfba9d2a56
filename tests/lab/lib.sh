# Shared helpers for the lab suites (sourced). Each suite uses its own
# namespace names and state dir so suites and a running demo never collide.
# the repository: two levels above a suite (tests/lab/NAME.sh), unless the
# sourcing script sits elsewhere and set it (tests/lint.sh)
LL_REPO=${LL_REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
LL_PY_REPO=$LL_REPO; . "$LL_REPO/tests/python-path.sh"
LINKLAB=${LINKLAB:-$LL_REPO/build/linklab}
PASS=0; FAIL=0; SKIP=0
pass() { PASS=$((PASS+1)); echo "PASS: $*"; }
fail() { FAIL=$((FAIL+1)); echo "FAIL: $*"; }
skip() { SKIP=$((SKIP+1)); echo "SKIP: $*"; }
summary() { echo "$1: $PASS passed, $FAIL failed, $SKIP skipped"; [ "$FAIL" = 0 ]; }
need_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1: needs root for network namespaces (run: sudo make check)"
		summary "$1"; exit 0
	fi
}
# lab_up SUFFIX: bring up a private two-namespace lab, export its settings.
lab_up() {
	export LL_NS_A="lla-$1$$" LL_NS_B="llb-$1$$" LL_LAB_DIR="${TMPDIR:-/tmp}/linklab-lab-$1$$"
	sh "$LL_REPO/lab/lab.sh" up >/dev/null 2>"$LL_LAB_DIR.uperr" || {
		cat "$LL_LAB_DIR.uperr"; return 1; }
	eval "$(sh "$LL_REPO/lab/lab.sh" env)"
}
lab_down() { sh "$LL_REPO/lab/lab.sh" down >/dev/null 2>&1; }
ina() { ip netns exec "$LL_NS_A" "$@"; }
inb() { ip netns exec "$LL_NS_B" "$@"; }
inm() { ip netns exec "$LL_NS_M" "$@"; }   # the middle box (lab/lab-bridge.sh)
# root qdisc kind of DEV in namespace NS ("none" when it has none): tc's
# "qdisc KIND HANDLE: root ..." line, read without a python3 start (the wait
# loops call this every 50-100 ms)
root_kind() {
	set -- $(ip netns exec "$1" tc qdisc show dev "$2" root 2>/dev/null)
	echo "${2:-none}"
}
# eventually TENTHS CMD...: true once CMD succeeds, tried every 0.1 s at
# most TENTHS times (a revert timer or hold guard removes its journal and
# exits a moment after the qdisc it restored is back)
eventually() {
	_ev_n=$1; shift
	while ! "$@"; do
		_ev_n=$((_ev_n - 1)); [ $_ev_n -gt 0 ] || return 1
		sleep 0.1
	done
}
# absent PATH...: none of the paths exists
absent() { for _ab_p in "$@"; do [ ! -e "$_ab_p" ] || return 1; done; }
# tbf rate of the root qdisc in bit/s (tc -j prints bytes/s)
root_tbf_rate() {
	ip netns exec "$1" tc -j qdisc show dev "$2" | python3 -c '
import json,sys
q=[x for x in json.load(sys.stdin) if x.get("root") and x["kind"]=="tbf"]
print(int(q[0]["options"]["rate"])*8 if q else 0)'
}
# wait_port NS PORT [tcp|udp] [SECONDS]: wait until a socket in namespace NS
# listens on (tcp, the default) or is bound to (udp) PORT, polling ss every
# 50 ms for at most SECONDS (default 5). 0 when it does, 1 on timeout (the
# caller's next step then fails and says so).
wait_port() {
	_wp_f=-ltn; [ "${3:-tcp}" = udp ] && _wp_f=-lun
	_wp_n=$(( ${4:-5} * 20 )); _wp_i=0
	while [ $_wp_i -lt $_wp_n ]; do
		[ -n "$(ip netns exec "$1" ss -H $_wp_f "sport = :$2" 2>/dev/null)" ] && return 0
		sleep 0.05; _wp_i=$((_wp_i + 1))
	done
	return 1
}
