#!/bin/sh
# SPDX-License-Identifier: MIT
# lab.sh - the two-namespace lab: peer A and peer B joined by a veth pair, a
# real sshd in B with fresh keys, an ssh config to reach it from A.
#   lab.sh up | down | demo | status | env
# Env: LL_NS_A, LL_NS_B (namespace names, default linklab-a / linklab-b),
#      LL_LAB_DIR (state directory, default <repo>/lab/run).
set -u

REPO=$(cd "$(dirname "$0")/.." && pwd)
NS_A=${LL_NS_A:-linklab-a}
NS_B=${LL_NS_B:-linklab-b}
STATE=${LL_LAB_DIR:-$REPO/lab/run}
ADDR_A=10.199.0.1
ADDR_B=10.199.0.2
ADDR6_A=fd99::1
ADDR6_B=fd99::2
LAB=lab.sh
SSHD_PATH_DIR=$REPO/build
. "$REPO/lab/common.sh"

do_down() {
	if pid=$(sshd_pid); then kill_wait "$pid"; fi
	for ns in "$NS_A" "$NS_B"; do
		# what still runs in the lab's namespace (a detached linklab
		# engine, a test server) would keep it alive after the del
		ns_exists "$ns" && for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null; done
		ns_exists "$ns" && ip netns del "$ns"
	done
	rm -f "$STATE/sshd.pid"
	if [ -d "$STATE" ] && [ -f "$STATE/.linklab-lab" ]; then
		rm -rf "$STATE"
	fi
	return 0
}

do_up() {
	if ns_exists "$NS_A" || ns_exists "$NS_B" || [ -e "$STATE/sshd.pid" ]; then
		if [ -f "$STATE/.linklab-lab" ] && sshd_pid >/dev/null && ssh_ok; then
			say "lab already up ($NS_A, $NS_B, state $STATE)"
			return 0
		fi
		say "half-present lab found: taking it down first"
		do_down
	fi
	if [ -e "$STATE" ] && [ ! -f "$STATE/.linklab-lab" ] && [ -n "$(ls -A "$STATE" 2>/dev/null)" ]; then
		die "$STATE exists and is not a lab state directory; set LL_LAB_DIR"
	fi
	mkdir -p "$STATE" && chmod 700 "$STATE" && : > "$STATE/.linklab-lab" || die "cannot create $STATE"

	ip netns add "$NS_A" || die "cannot create namespace $NS_A"
	ip netns add "$NS_B" || { do_down; die "cannot create namespace $NS_B"; }
	ip link add veth-a netns "$NS_A" type veth peer name veth-b netns "$NS_B" ||
		{ do_down; die "cannot create the veth pair"; }
	ip -n "$NS_A" link set lo up
	ip -n "$NS_B" link set lo up
	ip -n "$NS_A" addr add $ADDR_A/24 dev veth-a
	ip -n "$NS_B" addr add $ADDR_B/24 dev veth-b
	ip -n "$NS_A" addr add $ADDR6_A/64 dev veth-a nodad
	ip -n "$NS_B" addr add $ADDR6_B/64 dev veth-b nodad
	ip -n "$NS_A" link set veth-a up
	ip -n "$NS_B" link set veth-b up

	write_peer_ssh
	wait_veths_up
	start_sshd
	say "lab up: $NS_A ($ADDR_A) <-> $NS_B ($ADDR_B, sshd pid $(cat "$STATE/sshd.pid")), ssh config $STATE/ssh_config, peer peer-b"
}

do_status() {
	for ns in "$NS_A" "$NS_B"; do
		if ns_exists "$ns"; then echo "namespace $ns: present"; else echo "namespace $ns: absent"; fi
	done
	if pid=$(sshd_pid); then echo "sshd: running (pid $pid)"; else echo "sshd: not running"; fi
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
	echo "LL_ADDR_A=$ADDR_A"
	echo "LL_ADDR_B=$ADDR_B"
	echo "LL_NS_A='$NS_A'"
	echo "LL_NS_B='$NS_B'"
	echo "LL_LAB_DIR='$STATE'"
	echo "LL_SSH_KEY='$STATE/id_ed25519'"
	echo "LL_KNOWN_HOSTS='$STATE/known_hosts'"
}

cmd=${1:-}
case "$cmd" in
up)     need_root up; do_up ;;
down)   need_root down; do_down; say "lab down" ;;
status) need_root status; do_status ;;
env)    do_env ;;
demo)
	need_root demo
	[ -x "$REPO/build/linklab" ] || die "$REPO/build/linklab not built (run make)"
	do_up || exit 1
	trap 'do_down; say "lab down"' EXIT
	trap 'exit 130' INT TERM HUP
	ip netns exec "$NS_A" "$REPO/build/linklab" console -F "$STATE/ssh_config" --peer peer-b
	;;
*)      echo "usage: $0 up|down|demo|status|env" >&2; exit 2 ;;
esac
