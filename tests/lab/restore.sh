#!/bin/sh
# SPDX-License-Identifier: MIT
# restore.sh - linklab puts back the whole prior tc state of an interface:
# the matrix {noqueue, pfifo, bfifo, tbf with peakrate, htb bare, htb tree
# with classes + child qdiscs + u32 filters, ingress with filters, clsact with
# filters, mq with per-queue children on a 4-queue veth} x {local, peer over
# SSH} x {clear}: the dump of tc -j qdisc / tc class / tc -j filter of every
# block before equals the dump after (counters ignored, tests/lab/restore/
# norm.py). Fault tests: a kind linklab cannot rebuild (refused, --force),
# a state changed by hand after apply (refused, --force), 0-byte and corrupt
# records (reported by path, --forget), a record whose numbers were recycled
# by another interface (dropped, not restored), a full journal directory
# (nothing changed, no empty record), show --journal.
. "$(dirname "$0")/lib.sh"
need_root restore
T=$(mktemp -d /tmp/ll-restore.XXXXXX)
cleanup() { tmux -L llrst$$ -f /dev/null kill-server 2>/dev/null; lab_down; rm -f "$LL_LAB_DIR.uperr"; umount "$T/full" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -x "$LINKLAB" ] || { fail "no linklab binary at $LINKLAB"; summary restore; exit 1; }
if ! lab_up rst$$; then fail "lab up"; summary restore; exit 1; fi
NORM="$LL_REPO/tests/lab/restore/norm.py"
export LINKLAB_RUN_DIR="$T/run"

# set up prior state $3 on dev $2 in namespace $1 by hand
prior() {
	t() { ip netns exec "$1" tc "$@"; }
	ns=$1 d=$2
	tt() { ip netns exec "$ns" tc "$@"; }
	case $3 in
	noqueue) ;;
	pfifo) tt qdisc add dev $d root handle 1: pfifo limit 77;;
	bfifo) tt qdisc add dev $d root handle 1: bfifo limit 4242;;
	tbfpeak) tt qdisc add dev $d root handle 7: tbf rate 3mbit burst 7777 peakrate 5mbit mtu 1600 limit 33333;;
	htb) tt qdisc add dev $d root handle 1: htb default 20 r2q 5;;
	htbtree) tt qdisc add dev $d root handle 1: htb default 20 r2q 5
		tt class add dev $d parent 1: classid 1:1 htb rate 10mbit ceil 20mbit burst 15k
		tt class add dev $d parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit prio 1
		tt class add dev $d parent 1:1 classid 1:20 htb rate 2mbit
		tt qdisc add dev $d parent 1:10 handle 10: pfifo limit 30
		tt qdisc add dev $d parent 1:20 handle 20: tbf rate 1mbit burst 10k latency 50ms
		tt filter add dev $d parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.1/32 flowid 1:10
		tt filter add dev $d parent 1: protocol ip prio 2 u32 match ip dport 80 0xffff flowid 1:20;;
	ingress) tt qdisc add dev $d ingress
		tt filter add dev $d parent ffff: protocol ip prio 3 u32 match ip src 1.2.3.4/32 action mirred egress mirror dev lo
		tt filter add dev $d parent ffff: protocol ip prio 4 u32 match ip sport 22 0xffff;;
	clsact) tt qdisc add dev $d clsact
		tt filter add dev $d ingress protocol ip prio 3 u32 match ip src 1.2.3.4/32 action mirred egress redirect dev lo
		tt filter add dev $d egress protocol ip prio 5 u32 match ip dst 5.6.7.8/32;;
	mq) tt qdisc add dev $d root handle 1: mq
		tt qdisc replace dev $d parent 1:2 handle 12: pfifo limit 44
		tt qdisc replace dev $d parent 1:3 handle 13: tbf rate 2mbit burst 5000 limit 20000;;
	esac 2>/dev/null
}
# normalised dump of every qdisc, class and filter block of $2 in $1
dump() {
	ip netns exec "$1" sh -c '
D=$1
tc -j -d -raw qdisc show dev $D; echo @@SEP@@
tc -d -raw class show dev $D; echo @@SEP@@
for p in $(tc qdisc show dev $D | awk "{print \$2\" \"\$3}" | while read k h; do case $k in ingress) echo ffff:;; clsact) echo ffff:fff2 ffff:fff3;; htb) echo $h;; esac; done) $(tc class show dev $D | awk "\$2==\"htb\"{print \$3}"); do tc -j filter show dev $D parent $p 2>/dev/null; echo @@SEP@@; done
' sh "$2" | python3 "$NORM"
}
mkdev() { ip -n "$1" link add "$2" numtxqueues 4 numrxqueues 4 type veth peer name "$2p" numtxqueues 4 numrxqueues 4 &&
	ip -n "$1" link set "$2" up && ip -n "$1" link set "$2p" up; }
L() { ina "$LINKLAB" "$@"; }
R() { c=$1; shift; ina "$LINKLAB" "$c" -F "$LL_SSH_CONFIG" --peer peer-b --remote "$@"; }

STATES=${RESTORE_STATES:-noqueue pfifo bfifo tbfpeak htb htbtree ingress clsact mq}
# cell SIDE STATE PATH PASS|FAIL|SKIP: one cell of the matrix (printed at the end)
cell() { echo "$1 $2 $3 $4" >> "$T/matrix"; }
: > "$T/matrix"
for side in local peer; do
	for S in $STATES; do
		if [ $side = local ]; then ns=$LL_NS_A; else ns=$LL_NS_B; fi
		mkdev "$ns" rt0 || { fail "$side $S: cannot create a 4-queue veth"; continue; }
		prior "$ns" rt0 $S
		dump "$ns" rt0 > "$T/before"
		if [ $side = local ]; then
			L apply --dev rt0 --rate 10mbit > "$T/apply" 2>&1; ra=$?
			mid=$(root_kind "$ns" rt0)
			L clear --dev rt0 > "$T/clear" 2>&1; rc=$?
		else
			R apply --peer-dev rt0 --rate 10mbit > "$T/apply" 2>&1; ra=$?
			mid=$(root_kind "$ns" rt0)
			R clear --peer-dev rt0 > "$T/clear" 2>&1; rc=$?
		fi
		dump "$ns" rt0 > "$T/after"
		if [ $ra = 0 ] && [ "$mid" = tbf ] && [ $rc = 0 ] && cmp -s "$T/before" "$T/after" &&
		   [ "$(wc -c < "$T/before")" -gt 10 ]; then
			pass "$side $S: apply (root tbf) then clear: the dump before equals the dump after"
			cell $side $S clear PASS
		else
			fail "$side $S: apply=$ra (root $mid) clear=$rc: $(cat "$T/apply" "$T/clear" | tr '\n' ' ' | cut -c1-300); before $(cut -c1-200 "$T/before") after $(cut -c1-200 "$T/after")"
			cell $side $S clear FAIL
		fi
		ip -n "$ns" link del rt0 2>/dev/null
		# each cell on its own: a record a failed cell kept goes
		rm -f "$LINKLAB_RUN_DIR"/*.json "/run/linklab/remote-$(inb stat -L -c %i /proc/self/ns/net)-rt0.tc.json"
	done
done

# --- the other exit paths, both sides in one run ----------------------------
# rtm with prior state S on A and on B; one console dials both (--dev rtm
# --peer-dev rtm): its quit (q) and SIGTERM must put both back; kill -9 of a
# CLI apply to both, held between B's change and its confirmation, then the
# next start (`linklab clear --dev rtm --peer-dev rtm`) must put both back.
TMUX="tmux -L llrst$$ -f /dev/null"
capture() { $TMUX capture-pane -p -t c 2>/dev/null; }
wait_for() { n=0; while [ $n -lt "${2:-100}" ]; do capture | grep -Eq -- "$1" && return 0; sleep 0.1; n=$((n+1)); done; return 1; }
both_same() { # PATH STATE: both dumps equal the ones before; cells
	ok=0
	for sd in local peer; do
		if [ $sd = local ]; then ns=$LL_NS_A; else ns=$LL_NS_B; fi
		if dump "$ns" rtm | cmp -s - "$T/bm-$sd" && [ "$(wc -c < "$T/bm-$sd")" -gt 10 ]; then
			cell $sd $2 $1 PASS
		else
			cell $sd $2 $1 FAIL; ok=1
			echo "  $sd $2 $1: before $(cut -c1-200 "$T/bm-$sd") after $(dump "$ns" rtm | cut -c1-200)"
			[ $sd = peer ] && echo "  peer's verdict: $(head -1 /run/linklab/remote-$(inb stat -L -c %i /proc/self/ns/net)-rtm.revert 2>&1)"
		fi
	done
	return $ok
}
console_run() { # HOW (q | TERM) STATE
	$TMUX kill-session -t c 2>/dev/null
	$TMUX new-session -d -s c -x 120 -y 36 \
		"TERM=screen LINKLAB_RUN_DIR=$LINKLAB_RUN_DIR XDG_DATA_HOME=$T/xd XDG_CONFIG_HOME=$T/xc ip netns exec $LL_NS_A $LINKLAB console -F $LL_SSH_CONFIG --peer peer-b --dev rtm --peer-dev rtm 2>&1; echo console-exit=\$?; sleep 600"
	if ! wait_for "rtm" 150; then fail "$2 console $1: the console did not start: $(capture | tail -3 | tr '\n' ' ')"; return 1; fi
	$TMUX send-keys -t c d; wait_for "Impairment dial" 30
	$TMUX send-keys -t c e C-u; $TMUX send-keys -t c 10mbit Enter Enter
	if ! wait_for "applied on A rtm, B rtm" 150 || [ "$(root_kind "$LL_NS_A" rtm)$(root_kind "$LL_NS_B" rtm)" != tbftbf ]; then
		fail "$2 console $1: the dial was not applied: $(capture | grep -E 'error|applied' | head -2 | tr '\n' ' ')"; return 1
	fi
	if [ "$1" = q ]; then $TMUX send-keys -t c q; want=0
	else kill -TERM "$(ps -o pid= --ppid "$($TMUX display -p -t c '#{pane_pid}')" | head -1)"; want=143; fi
	if wait_for "console-exit=$want" 150 && capture | grep -q "restored A rtm, B rtm"; then
		return 0
	fi
	fail "$2 console $1: $(capture | grep -E 'linklab:|console-exit' | head -3 | tr '\n' ' ')"; return 1
}
have_tmux=1; command -v tmux >/dev/null 2>&1 || have_tmux=0
[ $have_tmux = 1 ] && $TMUX new-session -d -s keep "sleep 100000"
for S in $STATES; do
	for ns in "$LL_NS_A" "$LL_NS_B"; do mkdev "$ns" rtm && prior "$ns" rtm $S; done
	dump "$LL_NS_A" rtm > "$T/bm-local"; dump "$LL_NS_B" rtm > "$T/bm-peer"
	for how in q TERM; do
		path=quit; [ $how = TERM ] && path=SIGTERM
		if [ $have_tmux = 0 ]; then
			skip "$S console $how: tmux not installed"; cell local $S $path SKIP; cell peer $S $path SKIP; continue
		fi
		if console_run $how $S && both_same $path $S; then
			pass "$S: console $path with the dial on A rtm and B rtm: both dumps equal the ones before"
		elif ! grep -q "^local $S $path" "$T/matrix"; then
			cell local $S $path FAIL; cell peer $S $path FAIL
		else
			fail "$S: console $path: a dump differs after the restore"
		fi
	done
	$TMUX kill-session -t c 2>/dev/null
	ip netns exec "$LL_NS_A" env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=20000 "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --revert-after 15 \
		--dev rtm --peer-dev rtm --rate 10mbit > "$T/k9apply" 2>&1 &
	KP=$!
	# A is applied first; B's change is held before its confirmation
	i=0; while [ $i -lt 200 ] && ! inb tc qdisc show dev rtm | grep -q "^qdisc tbf 1: root"; do sleep 0.05; i=$((i+1)); done
	kill -9 $KP 2>/dev/null; wait $KP 2>/dev/null
	mid="$(root_kind "$LL_NS_A" rtm)/$(root_kind "$LL_NS_B" rtm)"
	ina "$LINKLAB" clear -F "$LL_SSH_CONFIG" --peer peer-b --dev rtm --peer-dev rtm > "$T/k9" 2>&1; rc=$?
	if [ "$mid" = tbf/tbf ] && [ $rc = 0 ] && both_same kill-9 $S; then
		pass "$S: kill -9 of an apply to both (B held before its confirmation), then the next clear: both dumps equal the ones before"
	else
		fail "$S: kill -9: roots after the kill $mid, next clear rc=$rc: $(tr '\n' ' ' < "$T/k9" | cut -c1-300); the apply said: $(tr '\n' ' ' < "$T/k9apply" | cut -c1-300)"
		grep -q "^local $S kill-9" "$T/matrix" || { cell local $S kill-9 FAIL; cell peer $S kill-9 FAIL; }
	fi
	ip -n "$LL_NS_A" link del rtm 2>/dev/null; ip -n "$LL_NS_B" link del rtm 2>/dev/null
	rm -f "$LINKLAB_RUN_DIR"/*.json "/run/linklab/remote-$(inb stat -L -c %i /proc/self/ns/net)-rtm".*
done
$TMUX kill-server 2>/dev/null

# --- faults (local) --------------------------------------------------------
mkdev "$LL_NS_A" rt1
ina tc qdisc add dev rt1 clsact
ina tc filter add dev rt1 egress bpf bytecode '1,6 0 0 4294967295,'
dump "$LL_NS_A" rt1 > "$T/b1"
r=$(L apply --dev rt1 --rate 10mbit 2>&1); ra=$?
if [ $ra != 0 ] && echo "$r" | grep -q "filter bpf parent ffff:fff3" && echo "$r" | grep -q "nothing changed" &&
   dump "$LL_NS_A" rt1 | cmp -s - "$T/b1" && [ -z "$(ls "$LINKLAB_RUN_DIR" 2>/dev/null)" ]; then
	pass "a cls_bpf filter linklab cannot rebuild: apply refused before any change, naming it"
else
	fail "unrebuildable part: rc=$ra: $r"
fi
if L apply --dev rt1 --rate 10mbit --force >/dev/null 2>&1 && [ "$(root_kind "$LL_NS_A" rt1)" = tbf ]; then
	pass "--force applies over it anyway"
else
	fail "--force did not apply"
fi
r=$(L clear --dev rt1 2>&1); rc=$?
if [ $rc = 0 ] && [ "$(ina tc qdisc show dev rt1 | grep -c clsact)" = 1 ] &&
   [ -z "$(ina tc filter show dev rt1 egress)" ]; then
	pass "clear after --force: exit 0, clsact back, the bpf filter (accepted as lost) not"
else
	fail "clear after --force: rc=$rc: $r"
fi
ip -n "$LL_NS_A" link del rt1

mkdev "$LL_NS_A" rt2
prior "$LL_NS_A" rt2 htb
dump "$LL_NS_A" rt2 > "$T/b2"
L apply --dev rt2 --rate 10mbit >/dev/null 2>&1
ina tc qdisc del dev rt2 root; ina tc qdisc add dev rt2 root handle 9: pfifo limit 33
r=$(L clear --dev rt2 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "holds qdisc pfifo 9: root" && [ "$(root_kind "$LL_NS_A" rt2)" = pfifo ]; then
	pass "state changed by hand after apply: clear refuses and names what it found (pfifo 9:), pfifo kept"
else
	fail "hand-changed state: rc=$rc root $(root_kind "$LL_NS_A" rt2): $r"
fi
if L clear --dev rt2 --force >/dev/null 2>&1 && dump "$LL_NS_A" rt2 | cmp -s - "$T/b2"; then
	pass "clear --force restores the record over it (htb back)"
else
	fail "clear --force did not restore"
fi
ip -n "$LL_NS_A" link del rt2

# 0-byte and corrupt records
mkdir -p "$LINKLAB_RUN_DIR"
: > "$LINKLAB_RUN_DIR/123-4.json"; echo '{"x":' > "$LINKLAB_RUN_DIR/123-5.json"
r=$(L clear --all 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "123-4.json is empty or damaged" && echo "$r" | grep -q "123-5.json is empty or damaged"; then
	pass "clear --all reports both the 0-byte and the corrupt record by path and fails"
else
	fail "damaged records: rc=$rc: $r"
fi
r=$(L show --journal 2>&1)
if echo "$r" | grep -q "DAMAGED ? $LINKLAB_RUN_DIR/123-4.json"; then pass "show --journal lists the damaged records"; else fail "show --journal: $r"; fi
r=$(L clear --all --forget 2>&1); rc=$?
r2=$(L clear --all 2>&1); rc2=$?
if [ $rc = 0 ] && [ ! -e "$LINKLAB_RUN_DIR/123-4.json" ] && [ $rc2 = 0 ]; then
	pass "clear --all --forget drops them; the next clear --all exits 0"
else
	fail "forget: rc=$rc $r / rc2=$rc2 $r2"
fi

# recycled numbers: the record of a dead interface carries the netns cookie
# and the link address; put under the numbers of a new interface (as a
# recycled netns inode + ifindex would) it must not be restored onto it
mkdev "$LL_NS_A" rt3
prior "$LL_NS_A" rt3 bfifo
L apply --dev rt3 --rate 10mbit >/dev/null 2>&1
old=$(ls "$LINKLAB_RUN_DIR"/*-*.json | head -1)
cp "$old" "$T/oldrec"; rm -f "$old"
ip -n "$LL_NS_A" link del rt3
mkdev "$LL_NS_A" rt3
ina tc qdisc add dev rt3 root handle 1: tbf rate 5mbit burst 5000 limit 10000
nsino=$(ina stat -L -c %i /proc/self/ns/net); idx=$(ina cat /sys/class/net/rt3/ifindex)
jq -c ".ifindex = $idx" "$T/oldrec" > "$LINKLAB_RUN_DIR/$nsino-$idx.json"
r=$(L clear --dev rt3 2>&1); rc=$?
if [ $rc = 0 ] && echo "$r" | grep -q "no longer exists" && [ "$(root_kind "$LL_NS_A" rt3)" = tbf ] &&
   [ ! -e "$LINKLAB_RUN_DIR/$nsino-$idx.json" ]; then
	pass "a record whose netns inode + ifindex were recycled is dropped with a line, bfifo 4242 not put onto the new rt3"
else
	fail "recycled record: rc=$rc root $(root_kind "$LL_NS_A" rt3): $r"
fi
ip -n "$LL_NS_A" link del rt3

# a full journal directory: nothing changed, no empty record left
mkdir -p "$T/full" && mount -t tmpfs -o size=4k tmpfs "$T/full" &&
	dd if=/dev/zero of="$T/full/fill" bs=1k count=4 2>/dev/null
mkdev "$LL_NS_A" rt4
prior "$LL_NS_A" rt4 pfifo
r=$(LINKLAB_RUN_DIR="$T/full" L apply --dev rt4 --rate 10mbit 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "nothing changed" && [ "$(root_kind "$LL_NS_A" rt4)" = pfifo ] &&
   [ -z "$(find "$T/full" -name '*.json')" ]; then
	pass "full journal directory (tmpfs 4k): apply refused, nothing changed, no empty record"
else
	fail "full dir: rc=$rc root $(root_kind "$LL_NS_A" rt4): $r; $(ls -la "$T/full")"
fi
umount "$T/full"
ip -n "$LL_NS_A" link del rt4

# a sysctl record that can never be written (the value does not exist):
# reported once, dropped, so clear --all does not fail for ever
nsa=$(ina stat -L -c %i /proc/self/ns/net)
echo "sysctl net.ipv4.tcp_congestion_control nosuch-cc" > "$LINKLAB_RUN_DIR/tune-$nsa.txt"
r=$(L clear --all 2>&1); rc=$?
r2=$(L clear --all 2>&1); rc2=$?
if [ $rc != 0 ] && echo "$r" | grep -q "record dropped" && [ $rc2 = 0 ] && [ ! -e "$LINKLAB_RUN_DIR/tune-$nsa.txt" ]; then
	pass "an unwritable sysctl record: the first clear --all says so and drops it, the next exits 0"
else
	fail "sysctl record: rc=$rc $r / rc2=$rc2 $r2"
fi

# kill -9 of apply half-way (after the record, before the change is
# confirmed: held by the test hook), then clear --all puts it all back
mkdev "$LL_NS_A" rt6
prior "$LL_NS_A" rt6 htbtree
dump "$LL_NS_A" rt6 > "$T/b6"
mkdev "$LL_NS_B" rt6
prior "$LL_NS_B" rt6 htbtree
dump "$LL_NS_B" rt6 > "$T/b6b"
ip netns exec "$LL_NS_A" "$LINKLAB" apply --dev rt6 --rate 10mbit >/dev/null 2>&1 &
LLPID=$!
ip netns exec "$LL_NS_A" env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=20000 "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --remote --peer-dev rt6 --rate 10mbit >/dev/null 2>&1 &
RPID=$!
i=0; while [ $i -lt 100 ] && [ "$(root_kind "$LL_NS_B" rt6)" != tbf ]; do sleep 0.1; i=$((i+1)); done
wait $LLPID
kill -9 $RPID 2>/dev/null; wait $RPID 2>/dev/null
ra=$(root_kind "$LL_NS_A" rt6); rb=$(root_kind "$LL_NS_B" rt6)
L clear --all > "$T/ca" 2>&1; c1=$?
R clear --all > "$T/cb" 2>&1; c2=$?
if [ "$ra" = tbf ] && [ "$rb" = tbf ] && [ $c1 = 0 ] && [ $c2 = 0 ] &&
   dump "$LL_NS_A" rt6 | cmp -s - "$T/b6" && dump "$LL_NS_B" rt6 | cmp -s - "$T/b6b"; then
	pass "kill -9 of a remote apply mid-way (and a finished local one), then clear --all on both: both htb trees back exactly"
else
	fail "kill -9 then clear --all: roots after kill A $ra B $rb, clear A=$c1 B=$c2: $(cat "$T/ca" "$T/cb" | tr '\n' ' ')"
fi
ip -n "$LL_NS_A" link del rt6; ip -n "$LL_NS_B" link del rt6

# --- faults (peer) ---------------------------------------------------------
mkdev "$LL_NS_B" rt5
prior "$LL_NS_B" rt5 pfifo
nsb=$(inb stat -L -c %i /proc/self/ns/net)
: > "/run/linklab/remote-$nsb-rt5.tc.json"
r=$(R apply --peer-dev rt5 --rate 10mbit 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "remote-$nsb-rt5.tc.json is empty or damaged" &&
   [ "$(root_kind "$LL_NS_B" rt5)" = pfifo ]; then
	pass "0-byte remote journal: apply refuses naming the file, nothing changed"
else
	fail "0-byte remote journal: rc=$rc: $r"
fi
rm -f "/run/linklab/remote-$nsb-rt5.tc.json"
R apply --peer-dev rt5 --rate 10mbit >/dev/null 2>&1
inb tc qdisc del dev rt5 root; inb tc qdisc add dev rt5 root handle 9: bfifo limit 3333
r=$(R clear --peer-dev rt5 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "holds qdisc bfifo 9:" && [ "$(root_kind "$LL_NS_B" rt5)" = bfifo ]; then
	pass "peer: state changed by hand after apply: clear refuses and names bfifo 9:"
else
	fail "peer hand-changed: rc=$rc: $r"
fi
if R clear --peer-dev rt5 --force >/dev/null 2>&1 && [ "$(root_kind "$LL_NS_B" rt5)" = pfifo ]; then
	pass "peer: clear --force restores the recorded pfifo"
else
	fail "peer clear --force: root $(root_kind "$LL_NS_B" rt5)"
fi
ip -n "$LL_NS_B" link del rt5

# a part the peer's record cannot rebuild: refused, --force keeps the rest
mkdev "$LL_NS_B" rt6
inb tc qdisc add dev rt6 clsact
inb tc filter add dev rt6 egress bpf bytecode '1,6 0 0 4294967295,'
inb tc filter add dev rt6 ingress protocol ip prio 3 u32 match ip src 1.2.3.4/32
r=$(R apply --peer-dev rt6 --rate 10mbit 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "filter bpf parent ffff:fff3" && [ "$(root_kind "$LL_NS_B" rt6)" = noqueue ] &&
   [ ! -e "/run/linklab/remote-$nsb-rt6.tc.json" ]; then
	pass "peer: a cls_bpf filter: apply refused before any change, naming it, no record left"
else
	fail "peer unrebuildable: rc=$rc: $r"
fi
r=$(R apply --peer-dev rt6 --rate 10mbit --force 2>&1); ra=$?
r2=$(R clear --peer-dev rt6 2>&1); rc=$?
if [ $ra = 0 ] && [ $rc = 0 ] && [ "$(inb tc qdisc show dev rt6 | grep -c clsact)" = 1 ] &&
   inb tc filter show dev rt6 ingress | grep -q "match 01020304/ffffffff at 12" && [ -z "$(inb tc filter show dev rt6 egress)" ]; then
	pass "peer: --force applies; clear brings back clsact and its u32 filter, not the bpf one"
else
	fail "peer --force: apply=$ra clear=$rc: $r $r2"
fi
ip -n "$LL_NS_B" link del rt6

# every failing record is reported; a record of a gone interface is dropped
for d in rt7 rt8 rt9; do mkdev "$LL_NS_B" $d; prior "$LL_NS_B" $d pfifo; R apply --peer-dev $d --rate 10mbit >/dev/null 2>&1; done
for d in rt7 rt8; do inb tc qdisc del dev $d root; inb tc qdisc add dev $d root handle 9: pfifo limit 33; done
ip -n "$LL_NS_B" link del rt9
: > "/run/linklab/remote-$nsb-rtz.tc.json"
r=$(R show --journal 2>&1)
if echo "$r" | grep -q "rt7 /run/linklab/remote-$nsb-rt7.tc.json: pfifo 1: root" && echo "$r" | grep -q "DAMAGED rtz"; then
	pass "show --journal on the peer lists the records (pfifo 1: of rt7) and the 0-byte one"
else
	fail "peer show --journal: $r"
fi
r=$(L show --journal -J 2>&1)
if echo "$r" | jq -e '.a.records' >/dev/null 2>&1; then pass "show --journal -J: JSON with the records of A"; else fail "show -J: $r"; fi
r=$(R clear --all 2>&1); rc=$?
if [ $rc != 0 ] && echo "$r" | grep -q "rt7 holds qdisc pfifo 9:" && echo "$r" | grep -q "rt8 holds qdisc pfifo 9:" &&
   echo "$r" | grep -q "remote-$nsb-rtz.tc.json is empty or damaged" &&
   echo "$r" | grep -q "rt9: record .* dropped: the interface no longer exists" && echo "$r" | grep -q "3 records not restored" &&
   [ "$(root_kind "$LL_NS_B" rt7)" = pfifo ]; then
	pass "peer clear --all names every failing record (rt7, rt8 changed by hand, the 0-byte one) and drops the gone rt9's"
else
	fail "peer clear --all: rc=$rc: $r"
fi
r=$(R clear --forget --peer-dev rt7 2>&1); rc=$?
r2=$(R clear --all --forget 2>&1); rc2=$?
r3=$(R clear --all 2>&1); rc3=$?
if [ $rc = 0 ] && echo "$r" | grep -q "remote-$nsb-rt7.tc.json dropped" && [ $rc2 = 0 ] && [ $rc3 = 0 ] &&
   [ ! -e "/run/linklab/remote-$nsb-rtz.tc.json" ] && [ "$(inb tc qdisc show dev rt7 | head -1 | cut -d' ' -f2-3)" = "pfifo 9:" ]; then
	pass "peer clear --forget drops a record (pfifo 9: stays), --all --forget the rest; then clear --all exits 0"
else
	fail "peer forget: $rc $r / $rc2 $r2 / $rc3 $r3"
fi
for d in rt7 rt8; do ip -n "$LL_NS_B" link del $d; done

# clear without a record says so
mkdev "$LL_NS_A" rn0; mkdev "$LL_NS_B" rn0
r=$(ina "$LINKLAB" clear -F "$LL_SSH_CONFIG" --peer peer-b --dev rn0 --peer-dev rn0 2>&1); rc=$?
if [ $rc = 0 ] && echo "$r" | grep -q "A (this host): nothing to restore on rn0" &&
   echo "$r" | grep -q "B (peer-b): nothing to restore on rn0" && ! echo "$r" | grep -q restored; then
	pass "clear without a record: 'nothing to restore on rn0' on both sides, not 'restored'"
else
	fail "clear without a record: rc=$rc: $r"
fi
# clear --forget --dev A with --peer drops only A's record
ina "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --dev rn0 --peer-dev rn0 --rate 10mbit >/dev/null 2>&1
r=$(ina "$LINKLAB" clear --forget -F "$LL_SSH_CONFIG" --peer peer-b --dev rn0 2>&1); rc=$?
if [ $rc = 0 ] && [ -z "$(ls "$LINKLAB_RUN_DIR"/*.json 2>/dev/null)" ] && [ -e "/run/linklab/remote-$nsb-rn0.tc.json" ]; then
	pass "clear --forget --dev rn0 with --peer: A's record dropped, B's kept"
else
	fail "forget only A: rc=$rc: $r; B record: $(ls /run/linklab/remote-$nsb-rn0.tc.json 2>&1)"
fi
# an unreachable peer: show --journal still lists A's records and says why B's could not be read
ina tc qdisc del dev rn0 root 2>/dev/null
L apply --dev rn0 --rate 10mbit >/dev/null 2>&1
r=$(ina "$LINKLAB" show --journal -F "$LL_SSH_CONFIG" --peer nosuch.invalid --peer-timeout 3 2>&1); rc=$?
if [ $rc = 1 ] && echo "$r" | grep -q "A (this host): 1 record" && echo "$r" | grep -q "  rn0 " &&
   echo "$r" | grep -q "B (nosuch.invalid): its records could not be read: .*nosuch.invalid"; then
	pass "show --journal, peer unreachable: A's record listed, B named with why ($(echo "$r" | grep -o 'could not be read: .*' | cut -c1-80))"
else
	fail "show --journal unreachable: rc=$rc: $r"
fi
L clear --dev rn0 >/dev/null 2>&1; R clear --peer-dev rn0 >/dev/null 2>&1

# apply --force over a class the peer cannot rebuild (a rate tc prints
# rounded), with a child qdisc and a filter below it: clear exits 0, says
# what did not come back, and the rest reads back as recorded
inb tc qdisc add dev rn0 root handle 1: htb default 1
inb tc class add dev rn0 parent 1: classid 1:1 htb rate 1234567bit
inb tc class add dev rn0 parent 1:1 classid 1:5 htb rate 1mbit
inb tc qdisc add dev rn0 parent 1:5 handle 5: pfifo limit 9
inb tc filter add dev rn0 parent 1: protocol ip prio 4 u32 match ip dst 1.2.3.4/32 classid 1:1
R apply --peer-dev rn0 --rate 10mbit --force >/dev/null 2>&1; ra=$?
r=$(R clear --peer-dev rn0 2>&1); rc=$?
if [ $ra = 0 ] && [ $rc = 0 ] && echo "$r" | grep -q "restored, except what apply --force accepted losing: class htb 1:1" &&
   [ "$(root_kind "$LL_NS_B" rn0)" = htb ] && inb tc filter show dev rn0 | grep -q "match 01020304/ffffffff" &&
   [ ! -e "/run/linklab/remote-$nsb-rn0.tc.json" ]; then
	pass "peer: --force over an unrebuildable class (+ child + filter): clear exits 0, names what did not come back, htb and its filter back"
else
	fail "peer --force then clear: apply=$ra clear=$rc: $r"
fi
ip -n "$LL_NS_A" link del rn0; ip -n "$LL_NS_B" link del rn0

# the peer's record names its namespace by cookie: one whose cookie is
# not this namespace's (a recycled inode) is dropped, not restored
mkdev "$LL_NS_B" rc0; prior "$LL_NS_B" rc0 pfifo
R apply --peer-dev rc0 --rate 10mbit >/dev/null 2>&1
f=/run/linklab/remote-$nsb-rc0.tc.json
if grep -q '"cookie":"[0-9][0-9]*"' "$f" 2>/dev/null; then
	sed -i 's/"cookie":"[0-9]*"/"cookie":"1"/' "$f"
	r=$(R clear --peer-dev rc0 2>&1); rc=$?
	if [ $rc = 0 ] && echo "$r" | grep -q "netns cookie 1; now" && echo "$r" | grep -q "dropped, nothing restored" &&
	   [ "$(root_kind "$LL_NS_B" rc0)" = tbf ] && [ ! -e "$f" ]; then
		pass "peer: a record of another namespace cookie is dropped with a line, not restored onto rc0"
	else
		fail "peer cookie: rc=$rc: $r; root $(root_kind "$LL_NS_B" rc0)"
	fi
else
	skip "peer record carries no netns cookie (no python3 or kernel < 5.14 on the peer): $(head -c 200 "$f")"
fi
ip -n "$LL_NS_B" link del rc0

# a full /run/linklab on the peer: a second sshd in B with its own mount
# namespace, a full 8 KiB tmpfs on /run/linklab there
sed -e 's/^Port .*/Port 2224/' -e "s|^PidFile .*|PidFile $T/sshd-full.pid|" "$LL_LAB_DIR/sshd_config" > "$T/sshd-full_config"
cp "$LL_LAB_DIR/ssh_config" "$T/ssh_full"
printf 'Host peer-full\n  HostName %s\n  Port 2224\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n' \
	"$LL_ADDR_B" "$LL_LAB_DIR/id_ed25519" "$T/known_full" >> "$T/ssh_full"
{ cat "$LL_LAB_DIR/known_hosts"; echo "[$LL_ADDR_B]:2224 $(cut -d' ' -f1,2 "$LL_LAB_DIR/ssh_host_ed25519_key.pub")"; } > "$T/known_full"
mkdev "$LL_NS_B" rf0; prior "$LL_NS_B" rf0 pfifo
if inb unshare -m --propagation private sh -c "mkdir -p /run/linklab && mount -t tmpfs -o size=8k tmpfs /run/linklab &&
	dd if=/dev/zero of=/run/linklab/fill bs=1k count=8 2>/dev/null; exec $(command -v sshd) -f $T/sshd-full_config -E $T/sshd-full.log" &&
   wait_port "$LL_NS_B" 2224 tcp 5; then
	r=$(ina "$LINKLAB" apply -F "$T/ssh_full" --peer peer-full --remote --peer-dev rf0 --rate 10mbit 2>&1); rc=$?
	if [ $rc != 0 ] && echo "$r" | grep -q "cannot write its record /run/linklab/remote-$nsb-rf0.tc.json: no space left on device" &&
	   echo "$r" | grep -q "nothing changed" && [ "$(root_kind "$LL_NS_B" rf0)" = pfifo ]; then
		pass "peer: full /run/linklab: apply refused naming the record path and 'no space left on device', pfifo untouched"
	else
		fail "peer full /run/linklab: rc=$rc root $(root_kind "$LL_NS_B" rf0): $r"
	fi
	kill "$(cat "$T/sshd-full.pid")" 2>/dev/null
else
	fail "a second sshd with a full /run/linklab did not start: $(tail -2 "$T/sshd-full.log" 2>/dev/null)"
fi
ip -n "$LL_NS_B" link del rf0

# the revert timer after a kill -9: restores, reads back and leaves its
# verdict (equal); a stale timer never undoes a later dial nor a change by
# hand; a verdict whose read-back differs puts the record back for clear
mkdev "$LL_NS_B" rv0; prior "$LL_NS_B" rv0 htbtree; dump "$LL_NS_B" rv0 > "$T/bv"
hold_apply() { # RATE REVERT: a remote apply held before its confirmation, killed -9 once B holds tbf
	ip netns exec "$LL_NS_A" env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=20000 "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --remote \
		--peer-dev rv0 --revert-after "$2" --rate "$1" >/dev/null 2>&1 &
	HP=$!
	i=0; while [ $i -lt 100 ] && [ "$(root_tbf_rate "$LL_NS_B" rv0)" != "${1%mbit}000000" ]; do sleep 0.05; i=$((i+1)); done
	kill -9 $HP 2>/dev/null; wait $HP 2>/dev/null
}
vfile=/run/linklab/remote-$nsb-rv0.revert
wait_verdict() { i=0; while [ $i -lt 100 ] && [ ! -s "$vfile" ]; do sleep 0.1; i=$((i+1)); done; }
hold_apply 5mbit 2; wait_verdict
r=$(R show --journal 2>&1)
if dump "$LL_NS_B" rv0 | cmp -s - "$T/bv" && echo "$r" | grep -q "rv0 $vfile: revert timer pid [0-9]* at [0-9:]*: restored, read back equal to the record"; then
	pass "kill -9 mid-apply: the timer restored the htb tree, read it back; show --journal: '$(echo "$r" | grep -o 'revert timer.*' | head -1)'"
else
	fail "timer verdict: $(echo "$r" | grep rv0); dump equal: $(dump "$LL_NS_B" rv0 | cmp -s - "$T/bv" && echo yes || echo no)"
fi
r=$(R clear --peer-dev rv0 2>&1); rc=$?
[ $rc = 0 ] && echo "$r" | grep -q "rv0: revert timer .* read back equal" && [ ! -e "$vfile" ] &&
	pass "the next clear reports the timer's verdict and drops it" || fail "clear after the timer: rc=$rc: $r"
hold_apply 5mbit 3
R apply --peer-dev rv0 --rate 7mbit >/dev/null 2>&1
wait_verdict
if [ "$(root_tbf_rate "$LL_NS_B" rv0)" = 7000000 ] && grep -q "timer kept: changed since its apply" "$vfile"; then
	pass "a stale timer of a killed apply does not undo the later 7mbit dial (verdict: kept)"
else
	fail "stale timer vs a later dial: rate $(root_tbf_rate "$LL_NS_B" rv0), verdict $(head -1 "$vfile" 2>&1)"
fi
R clear --peer-dev rv0 >/dev/null 2>&1; rm -f "$vfile"
hold_apply 5mbit 3
inb tc qdisc del dev rv0 root; inb tc qdisc add dev rv0 root handle 9: bfifo limit 999
wait_verdict
if [ "$(root_kind "$LL_NS_B" rv0)" = bfifo ] && grep -q "timer kept" "$vfile"; then
	pass "a stale timer does not undo a change by hand (bfifo 9: kept)"
else
	fail "stale timer vs a hand change: root $(root_kind "$LL_NS_B" rv0), verdict $(head -1 "$vfile" 2>&1)"
fi
R clear --peer-dev rv0 --force >/dev/null 2>&1; rm -f "$vfile"
if dump "$LL_NS_B" rv0 | cmp -s - "$T/bv"; then
	R apply --peer-dev rv0 --rate 5mbit >/dev/null 2>&1
	rec=$(cat "/run/linklab/remote-$nsb-rv0.tc.json")
	R clear --peer-dev rv0 >/dev/null 2>&1
	# a verdict as the timer writes it, whose read-back lacks the child tbf 20:
	{ echo "$(date +%s) 4242 timer restored 0"; echo "@@linklab-verdict@@"; echo "$rec"; echo "@@linklab-verdict@@"
	  echo "$rec" | sed 's/,{"kind":"tbf","handle":"20:"[^}]*}[^}]*}//'; } > "$vfile"
	r=$(R show --journal 2>&1); r2=$(R clear --peer-dev rv0 2>&1); rc=$?
	if echo "$r" | grep -q "restored, but the read-back differs from the record" && echo "$r2" | grep -q "record put back" &&
	   [ $rc = 0 ] && dump "$LL_NS_B" rv0 | cmp -s - "$T/bv" && [ ! -e "$vfile" ]; then
		pass "a verdict whose read-back differs: show --journal says so, clear puts the record back and restores it (exit 0)"
	else
		fail "differing verdict: show: $(echo "$r" | grep rv0) clear rc=$rc: $r2"
	fi
else
	fail "clear --force did not bring the htb tree back"
fi
ip -n "$LL_NS_B" link del rv0; rm -f /run/linklab/remote-$nsb-rv0.*
# the matrix: prior state x side -> result per exit path
echo "MATRIX (dump before == dump after):"
awk -v states="$STATES" 'BEGIN { np = split("clear quit SIGTERM kill-9", P, " ") }
	{ R[$1 " " $2 " " $3] = $4 }
	END {
		printf "%-8s %-8s", "state", "side"; for (k = 1; k <= np; k++) printf " %-8s", P[k]; print ""
		ns = split(states, S, " ")
		for (i = 1; i <= ns; i++) for (sd = 1; sd <= 2; sd++) {
			side = sd == 1 ? "local" : "peer"
			printf "%-8s %-8s", S[i], side
			for (k = 1; k <= np; k++) { v = R[side " " S[i] " " P[k]]; printf " %-8s", v == "" ? "-" : v }
			print ""
		}
	}' "$T/matrix"
summary restore
