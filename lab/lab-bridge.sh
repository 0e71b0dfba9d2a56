#!/bin/sh
# SPDX-License-Identifier: MIT
# lab-bridge.sh - the three-namespace lab for middle-box mode:
#   peer A (veth-a) -- (veth-ma) middle (veth-mb) -- (veth-b) peer B
#   peer A (mgmt-a) -- (mgmt-m) middle          management link, never bridged
# The bridge ports have no IP address; `linklab bridge veth-ma veth-mb`
# forwards between the two veths. A real sshd runs in B, as in lab.sh, and
# one in the middle on its management address (ssh_config alias `middle`,
# as on a real NETem box: the console drives it with --middle middle).
#   lab-bridge.sh up | down | status | env | demo
#   lab-bridge.sh engine [linklab bridge options]  (re)start the engine in the
#                 middle (no options: plain forwarding); output in $STATE/engine.out
#   lab-bridge.sh stop-engine                      SIGTERM it, print its output
#   LL_DEMO_ENGINE=auto|kernel|user lab-bridge.sh demo   the console starts the
#                 bridge itself (--bridge veth-ma,veth-mb --middle-engine E) instead
# Env: LL_NS_A, LL_NS_M, LL_NS_B (namespace names, default linklab-ba,
#      linklab-bm, linklab-bb), LL_LAB_DIR (state dir, default
#      <repo>/lab/run-bridge), LINKLAB (binary, default <repo>/build/linklab).
set -u

REPO=$(cd "$(dirname "$0")/.." && pwd)
NS_A=${LL_NS_A:-linklab-ba}
NS_M=${LL_NS_M:-linklab-bm}
NS_B=${LL_NS_B:-linklab-bb}
STATE=${LL_LAB_DIR:-$REPO/lab/run-bridge}
LINKLAB=${LINKLAB:-$REPO/build/linklab}
ADDR_A=10.198.0.1
ADDR_B=10.198.0.2
ADDR_MGMT_A=10.198.1.1
ADDR_M=10.198.1.2
LAB=lab-bridge.sh
SSHD_PATH_DIR=$(dirname "$LINKLAB")
. "$REPO/lab/common.sh"

engine_pid() { our_pid "$STATE/engine.pid" linklab "veth-ma veth-mb"; }

do_stop_engine() {
	if pid=$(engine_pid); then
		kill_wait "$pid"
		# wait for the wrapper shell to have written the exit status
		i=0
		while [ ! -s "$STATE/engine.rc" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
	fi
	rm -f "$STATE/engine.pid"
	[ -f "$STATE/engine.out" ] && cat "$STATE/engine.out"
	return 0
}

do_engine() {
	[ -x "$LINKLAB" ] || die "$LINKLAB not built (run make)"
	do_stop_engine >/dev/null
	rm -f "$STATE/engine.out" "$STATE/engine.err" "$STATE/engine.rc"
	# the subshell records the exit status; $! of the inner command is the engine
	(
		ip netns exec "$NS_M" "$LINKLAB" bridge veth-ma veth-mb "$@" \
			> "$STATE/engine.out" 2> "$STATE/engine.err" &
		echo $! > "$STATE/engine.pid"
		wait $!
		echo $? > "$STATE/engine.rc"
	) </dev/null >/dev/null 2>&1 &
	i=0
	while [ $i -lt 50 ]; do
		grep -q "forwarding\|kernel engine" "$STATE/engine.err" 2>/dev/null && return 0
		[ -s "$STATE/engine.rc" ] && { cat "$STATE/engine.err" >&2; die "engine exited"; }
		sleep 0.1; i=$((i+1))
	done
	cat "$STATE/engine.err" >&2
	die "engine did not start"
}

do_down() {
	do_stop_engine >/dev/null
	if pid=$(sshd_pid); then kill_wait "$pid"; fi
	if pid=$(middle_sshd_pid); then kill_wait "$pid"; fi
	for ns in "$NS_A" "$NS_M" "$NS_B"; do
		ns_exists "$ns" && ip netns del "$ns"
	done
	if [ -d "$STATE" ] && [ -f "$STATE/.linklab-lab" ]; then
		rm -rf "$STATE"
	fi
	return 0
}

do_up() {
	if ns_exists "$NS_A" || ns_exists "$NS_M" || ns_exists "$NS_B"; then
		if [ -f "$STATE/.linklab-lab" ] && sshd_pid >/dev/null && middle_sshd_pid >/dev/null &&
		   engine_pid >/dev/null && ssh_ok; then
			say "lab already up ($NS_A, $NS_M, $NS_B, state $STATE)"
			return 0
		fi
		say "half-present lab found: taking it down first"
		do_down
	fi
	if [ -e "$STATE" ] && [ ! -f "$STATE/.linklab-lab" ] && [ -n "$(ls -A "$STATE" 2>/dev/null)" ]; then
		die "$STATE exists and is not a lab state directory; set LL_LAB_DIR"
	fi
	[ -x "$LINKLAB" ] || die "$LINKLAB not built (run make)"
	mkdir -p "$STATE" && chmod 700 "$STATE" && : > "$STATE/.linklab-lab" || die "cannot create $STATE"

	for ns in "$NS_A" "$NS_M" "$NS_B"; do
		ip netns add "$ns" || { do_down; die "cannot create namespace $ns"; }
		ip -n "$ns" link set lo up
	done
	ip link add veth-a netns "$NS_A" type veth peer name veth-ma netns "$NS_M" &&
	ip link add veth-b netns "$NS_B" type veth peer name veth-mb netns "$NS_M" &&
	ip link add mgmt-a netns "$NS_A" type veth peer name mgmt-m netns "$NS_M" ||
		{ do_down; die "cannot create the veth pairs"; }
	# the bridge ports have no address at all (no IPv6 link-local chatter
	# either); the middle is reached over mgmt-m only
	ip netns exec "$NS_M" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6;
		echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null
	# room for a 1 Gbit/s x 100 ms window in the peers (per-namespace sysctls)
	for ns in "$NS_A" "$NS_B"; do
		ip netns exec "$ns" sh -c 'echo "4096 131072 67108864" > /proc/sys/net/ipv4/tcp_rmem;
			echo "4096 131072 67108864" > /proc/sys/net/ipv4/tcp_wmem' 2>/dev/null
	done
	ip -n "$NS_A" addr add $ADDR_A/24 dev veth-a
	ip -n "$NS_B" addr add $ADDR_B/24 dev veth-b
	# management: A <-> M only (the bridge never carries it)
	ip -n "$NS_A" addr add $ADDR_MGMT_A/24 dev mgmt-a
	ip -n "$NS_M" addr add $ADDR_M/24 dev mgmt-m
	for l in "$NS_A veth-a" "$NS_M veth-ma" "$NS_M veth-mb" "$NS_B veth-b" \
		 "$NS_A mgmt-a" "$NS_M mgmt-m"; do
		set -- $l
		ip -n "$1" link set "$2" up
	done

	write_peer_ssh
	write_middle_ssh
	wait_veths_up
	do_engine || { do_down; exit 1; }
	start_sshd "$STATE/engine.err"
	start_middle_sshd
	say "lab up: $NS_A ($ADDR_A) <-> $NS_M (linklab bridge veth-ma veth-mb, pid $(engine_pid); sshd on $ADDR_M via mgmt-a) <-> $NS_B ($ADDR_B, sshd), ssh config $STATE/ssh_config, peer peer-b, middle middle"
}

do_status() {
	for ns in "$NS_A" "$NS_M" "$NS_B"; do
		if ns_exists "$ns"; then echo "namespace $ns: present"; else echo "namespace $ns: absent"; fi
	done
	if pid=$(engine_pid); then echo "engine: running (pid $pid)"; else echo "engine: not running"; fi
	if pid=$(sshd_pid); then echo "sshd: running (pid $pid)"; else echo "sshd: not running"; fi
	if pid=$(middle_sshd_pid); then echo "sshd (middle): running (pid $pid)"; else echo "sshd (middle): not running"; fi
	if ns_exists "$NS_A" && [ -f "$STATE/ssh_config" ] && middle_ssh_ok; then
		echo "ssh middle: reachable"
	else
		echo "ssh middle: not reachable"
	fi
	if ns_exists "$NS_A" && [ -f "$STATE/ssh_config" ] && ssh_ok; then
		echo "ssh peer-b: reachable"
	else
		echo "ssh peer-b: not reachable"
		return 1
	fi
}

do_env() {
	echo "LL_SSH_CONFIG='$STATE/ssh_config'"
	echo "LL_PEER=peer-b"
	echo "LL_MIDDLE=middle"
	echo "LL_ADDR_M=$ADDR_M"
	echo "LL_ADDR_A=$ADDR_A"
	echo "LL_ADDR_B=$ADDR_B"
	echo "LL_NS_A='$NS_A'"
	echo "LL_NS_M='$NS_M'"
	echo "LL_NS_B='$NS_B'"
	echo "LL_LAB_DIR='$STATE'"
	echo "LL_SSH_KEY='$STATE/id_ed25519'"
	echo "LL_KNOWN_HOSTS='$STATE/known_hosts'"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up)          need_root up; do_up ;;
down)        need_root down; do_down; say "lab down" ;;
status)      need_root status; do_status ;;
env)         do_env ;;
engine)      need_root engine; do_engine "$@" ;;
stop-engine) need_root stop-engine; do_stop_engine ;;
demo)
	need_root demo
	do_up || exit 1
	trap 'do_down; say "lab down"' EXIT
	trap 'exit 130' INT TERM HUP
	if [ -n "${LL_DEMO_ENGINE:-}" ]; then
		# the console starts (and at quit stops) the bridge itself
		do_stop_engine >/dev/null
		ip netns exec "$NS_A" "$LINKLAB" console -F "$STATE/ssh_config" --peer peer-b \
			--middle middle --bridge veth-ma,veth-mb --middle-engine "$LL_DEMO_ENGINE"
	else
		ip netns exec "$NS_A" "$LINKLAB" console -F "$STATE/ssh_config" --peer peer-b --middle middle
	fi
	;;
*)  echo "usage: $0 up|down|demo|status|env|engine [bridge options]|stop-engine" >&2; exit 2 ;;
esac
