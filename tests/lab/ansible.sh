#!/bin/sh
# SPDX-License-Identifier: MIT
# ansible.sh - the Ansible collection linklab.lab (contrib/ansible) against a
# lab of five namespace hosts, each with its own real sshd and fresh keys:
# two pairs a1-b1 and a2-b2 (each pair joined by its own veth "d0"), and
# "bare" without linklab. ansible-playbook runs in a sixth, control
# namespace that reaches every host's sshd over a management veth.
#  role: installs linklab on the four pair hosts (again in classroom.yml:
#  nothing changes);
#  linklab_impair: first run changed, second changed=0, --check reports and
#  touches nothing (tc -j), --diff shows before/after in tc terms, a bad dial
#  fails that host with linklab's message and changes nothing there while
#  the other host goes on, a host without linklab says so and names the
#  role, delay is refused on a kernel without sch_netem (engine passed
#  through), state=absent restores the journalled original (a non-default
#  bfifo on a2), also in check mode without touching; an ingress dial;
#  linklab_test with peer (server started over SSH);
#  classroom.yml: profile, test, CSV and SVG of both pairs' SUM rates,
#  every pair restored; apply --check by itself; the inventory example;
#  ansible-doc renders every module and the role, the documented options
#  match the modules' argument specs, and the ansible-test sanity tests
#  that run offline pass.
. "$(dirname "$0")/lib.sh"
need_root ansible
if ! command -v ansible-playbook >/dev/null || [ ! -x /usr/bin/python3 ]; then
	fail "ansible-playbook not found: install ansible-core (make deps, scripts/deps.sh)"
	summary ansible; exit 1
fi
if [ ! -x "$LINKLAB" ]; then
	fail "no linklab binary at $LINKLAB (make)"; summary ansible; exit 1
fi
COLL=$LL_REPO/contrib/ansible
S=$(mktemp -d /tmp/llans.XXXXXX)
chmod 700 "$S"
P=llan$$
CTL=${P}c
HOSTS="a1 b1 a2 b2 bare"
T0=$(date +%s)

cleanup() {
	# LL_ANSIBLE_KEEP=DIR keeps the classroom playbook's CSV and SVG
	[ -n "${LL_ANSIBLE_KEEP:-}" ] && mkdir -p "$LL_ANSIBLE_KEEP" && cp "$S"/out/* "$LL_ANSIBLE_KEEP"/ 2>/dev/null
	for ns in "$CTL" $(for h in $HOSTS; do echo "$P$h"; done); do
		ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$ns" || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
	done
	sleep 0.3
	for ns in "$CTL" $(for h in $HOSTS; do echo "$P$h"; done); do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the lab ------------------------------------------------------------------
ip netns add "$CTL" && ip -n "$CTL" link set lo up || { fail "netns $CTL"; summary ansible; exit 1; }
i=0
for h in $HOSTS; do
	i=$((i+1)); ns=$P$h
	ip netns add "$ns" && ip -n "$ns" link set lo up &&
	ip link add "m$i" netns "$CTL" type veth peer name m0 netns "$ns" &&
	ip -n "$CTL" addr add "10.231.$i.1/24" dev "m$i" &&
	ip -n "$ns" addr add "10.231.$i.2/24" dev m0 &&
	ip -n "$CTL" link set "m$i" up && ip -n "$ns" link set m0 up ||
		{ fail "lab: host $h"; summary ansible; exit 1; }
done
for k in 1 2; do
	ip link add d0 netns "${P}a$k" type veth peer name d0 netns "${P}b$k" &&
	ip -n "${P}a$k" addr add "10.232.$k.1/24" dev d0 &&
	ip -n "${P}b$k" addr add "10.232.$k.2/24" dev d0 &&
	ip -n "${P}a$k" link set d0 up && ip -n "${P}b$k" link set d0 up ||
		{ fail "lab: pair $k"; summary ansible; exit 1; }
done
# a2's link starts with a non-default root qdisc: state=absent must bring it back
ip netns exec "${P}a2" tc qdisc add dev d0 root handle 5: bfifo limit 30000

ssh-keygen -q -t ed25519 -N '' -C llans-host -f "$S/hostkey" &&
ssh-keygen -q -t ed25519 -N '' -C llans-client -f "$S/id" || { fail "ssh-keygen"; summary ansible; exit 1; }
cp "$S/id.pub" "$S/authorized_keys"
mkdir -p /run/sshd "$S/run" "$S/cp" "$S/rtmp" "$S/ltmp" "$S/out"
key=$(cut -d' ' -f1,2 "$S/hostkey.pub")
: > "$S/known_hosts"
i=0
for h in $HOSTS; do
	i=$((i+1))
	mkdir -p "$S/hosts/$h/bin"
	# the servers also listen on their pair's link (linklab test --peer)
	data_listen=""
	case $h in b[12]) data_listen="ListenAddress 10.232.${h#b}.2" ;; esac
	cat > "$S/sshd-$h.conf" <<EOC
Port 22
ListenAddress 10.231.$i.2
HostKey $S/hostkey
PidFile $S/sshd-$h.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile $S/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
MaxSessions 50
MaxStartups 50
$data_listen
SetEnv PATH=$S/hosts/$h/bin:/usr/sbin:/usr/bin:/sbin:/bin LINKLAB_RUN_DIR=$S/run
EOC
	echo "10.231.$i.2 $key" >> "$S/known_hosts"
	[ -n "$data_listen" ] && echo "10.232.${h#b}.2 $key" >> "$S/known_hosts"
	ip netns exec "$P$h" /usr/sbin/sshd -f "$S/sshd-$h.conf" -E "$S/sshd-$h.log" ||
		{ fail "sshd in $h: $(cat "$S/sshd-$h.log")"; summary ansible; exit 1; }
done
i=0
for h in $HOSTS; do
	i=$((i+1)); n=0
	until ip netns exec "$CTL" ssh -F /dev/null -i "$S/id" -o IdentitiesOnly=yes \
		-o UserKnownHostsFile="$S/known_hosts" -o StrictHostKeyChecking=yes \
		-o BatchMode=yes -o ConnectTimeout=3 "root@10.231.$i.2" true 2>"$S/ssh.err"; do
		n=$((n+1))
		[ $n -ge 50 ] && { fail "ssh to $h: $(cat "$S/ssh.err" "$S/sshd-$h.log")"; summary ansible; exit 1; }
		sleep 0.2
	done
done

cat > "$S/ansible.cfg" <<EOC
[defaults]
inventory = $S/inventory.yml
forks = 10
remote_tmp = $S/rtmp
local_tmp = $S/ltmp
gathering = explicit
retry_files_enabled = False
interpreter_python = /usr/bin/python3
host_key_checking = True
[ssh_connection]
pipelining = True
control_path_dir = $S/cp
ssh_args = -F /dev/null -o ControlMaster=auto -o ControlPersist=30s -o IdentitiesOnly=yes -o UserKnownHostsFile=$S/known_hosts -o StrictHostKeyChecking=yes
EOC
hv() { # host index: the host's inventory lines
	echo "          ansible_host: 10.231.$2.2"
	echo "          linklab_prefix: $S/hosts/$1"
}
{
	cat <<EOC
all:
  vars:
    ansible_user: root
    ansible_ssh_private_key_file: $S/id
    linklab_binary: $LINKLAB
    linklab_profiles_dir: $LL_REPO/profiles
    linklab_install_packages: false
  children:
    pairs:
      children:
        clients:
        servers:
    linklab_clients:
      children:
        clients:
    linklab_servers:
      children:
        servers:
    clients:
      hosts:
        a1:
EOC
	hv a1 1
	echo "          linklab_pair: pair1"
	echo "          linklab_peer: b1"
	echo "          linklab_peer_addr: 10.232.1.2"
	echo "        a2:"
	hv a2 3
	echo "          linklab_pair: pair2"
	echo "          linklab_peer: b2"
	echo "          linklab_peer_addr: 10.232.2.2"
	echo "    servers:"
	echo "      hosts:"
	echo "        b1:"
	hv b1 2
	echo "        b2:"
	hv b2 4
	echo "    others:"
	echo "      hosts:"
	echo "        bare:"
	hv bare 5
} > "$S/inventory.yml"

# ap OUT PLAYBOOK [args]: ansible-playbook in the control namespace, the
# lljson callback document in $S/OUT.json, stderr in $S/OUT.err; the run's
# seconds in $S/OUT.sec
ap() {
	out=$1; pb=$2; shift 2
	t=$(date +%s.%N)
	ip netns exec "$CTL" env ANSIBLE_CONFIG="$S/ansible.cfg" \
		ANSIBLE_COLLECTIONS_PATH="$COLL" ANSIBLE_STDOUT_CALLBACK=lljson \
		ANSIBLE_CALLBACK_PLUGINS="$LL_REPO/tests/lab/ansible/callback_plugins" \
		ANSIBLE_NOCOLOR=1 HOME="$S" TMPDIR="$S" ansible-playbook "$pb" "$@" \
		> "$S/$out.json" 2> "$S/$out.err"
	rc=$?
	echo "$(date +%s.%N) $t" | awk '{printf "%.1f", $1 - $2}' > "$S/$out.sec"
	echo "  ($out: ansible-playbook rc $rc, $(cat "$S/$out.sec") s)"
	return 0
}
# aj OUT EXPR: evaluate EXPR over the json callback document of run OUT:
# stats(h) -> the host's counters, res(h) -> the host's result of the last
# task it ran (res(h, "task name") for a named one); prints true/false,
# numbers, strings or JSON
cat > "$S/aj.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
def stats(h):
    return d.get("stats", {}).get(h, {})
def res(h, name=None):
    r = {}
    for play in d.get("plays", []):
        for t in play.get("tasks", []):
            if h in t.get("hosts", {}) and (name is None or t["task"]["name"] == name):
                r = t["hosts"][h]
    return r
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
EOF
aj() { /usr/bin/python3 "$S/aj.py" "$S/$1.json" "$2" 2>>"$S/aj.err"; }
tcj() { ip netns exec "$P$1" tc -j qdisc show dev d0; }
rate_of() { root_tbf_rate "$P$1" d0; }
kind_of() { root_kind "$P$1" d0; }

# --- the role -------------------------------------------------------------------
PB=$LL_REPO/tests/lab/ansible
ap inst1 "$PB/install.yml"
if [ "$(aj inst1 'all(stats(h).get("failures", 1) == 0 and stats(h).get("changed", 0) >= 1 for h in ("a1","b1","a2","b2"))')" = true ] &&
   cmp -s "$LINKLAB" "$S/hosts/a1/bin/linklab" && [ -f "$S/hosts/b2/share/linklab/profiles/rate-50mbit.ini" ] &&
   [ ! -e "$S/hosts/bare/bin/linklab" ]; then
	pass "role linklab: binary and profiles installed on a1 b1 a2 b2 (changed $(aj inst1 'stats("a1")["changed"]') on a1), not on bare"
else
	fail "role linklab first run: $(aj inst1 'stats("a1")') $(tail -3 "$S/inst1.err")"
fi
# the source mode builds linklab on the host (a minute or two on 2 cores): opt-in
if [ "${LL_ANSIBLE_SOURCE:-0}" = 1 ]; then
	ap src "$PB/source.yml" -e linklab_source_dir="$LL_REPO" -e linklab_prefix="$S/hosts/a1-src" \
		-e linklab_build_dir="$S/hosts/a1-build" -e linklab_source_tar="$S/src.tgz"
	if [ "$(aj src 'stats("a1").get("failures", 1) == 0')" = true ] &&
	   "$S/hosts/a1-src/bin/linklab" apply -h > /dev/null 2>&1 &&
	   [ -f "$S/hosts/a1-src/share/linklab/profiles/rate-50mbit.ini" ]; then
		ap src2 "$PB/source.yml" -e linklab_source_dir="$LL_REPO" -e linklab_prefix="$S/hosts/a1-src" \
			-e linklab_build_dir="$S/hosts/a1-build" -e linklab_source_tar="$S/src.tgz"
		if [ "$(aj src2 'stats("a1").get("changed") == 0 and stats("a1").get("failures") == 0')" = true ]; then
			pass "role linklab, source mode: the tree built on a1 in $(cat "$S/src.sec") s, installed, runs; second run changed=0"
		else
			fail "role source mode second run: $(aj src2 'stats("a1")') $(aj src2 '[t["task"]["name"] for p in d["plays"] for t in p["tasks"] if t["hosts"].get("a1", {}).get("changed")]')"
		fi
	else
		fail "role source mode: $(aj src 'res("a1").get("msg") or res("a1").get("stderr", "")[-300:]') $(tail -3 "$S/src.err")"
	fi
else
	skip "role linklab, source mode (builds linklab on a host, a minute or two): set LL_ANSIBLE_SOURCE=1"
fi

# --- linklab_impair: first run, second run ---------------------------------------
ap run1 "$PB/impair.yml" -e rate=20mbit
if [ "$(aj run1 'stats("a1").get("changed") == 1 and stats("a2").get("changed") == 1')" = true ] &&
   [ "$(rate_of a1)" = 20000000 ] && [ "$(rate_of a2)" = 20000000 ] &&
   [ "$(aj run1 'res("a1")["dial"]')" = '{"rate": "20mbit"}' ] && [ "$(aj run1 'res("a1")["dev"]')" = d0 ]; then
	pass "first run: changed on a1 and a2, tc -j reads tbf 20000000 bit/s on both d0, returned dial {rate: 20mbit}, dev d0 found from peer_addr"
else
	fail "first run: stats $(aj run1 'stats("a1")') / $(aj run1 'stats("a2")'), tc a1 $(rate_of a1) a2 $(rate_of a2), $(aj run1 'res("a1").get("msg") or res("a1").get("dial")')"
fi
before_a1=$(tcj a1); before_a2=$(tcj a2)
ap run2 "$PB/impair.yml" -e rate=20mbit
if [ "$(aj run2 'stats("a1").get("changed") == 0 and stats("a2").get("changed") == 0 and stats("a1").get("ok") == 1')" = true ] &&
   [ "$(tcj a1)" = "$before_a1" ] && [ "$(tcj a2)" = "$before_a2" ]; then
	pass "second run: changed=0 on a1 and a2, the kernels' trees unchanged"
else
	fail "second run: $(aj run2 'stats("a1")') / $(aj run2 'stats("a2")')"
fi

# --- check mode and diff mode ------------------------------------------------------
ap chk "$PB/impair.yml" -e rate=30mbit --check
if [ "$(aj chk 'stats("a1").get("changed") == 1 and stats("a2").get("changed") == 1')" = true ] &&
   [ "$(tcj a1)" = "$before_a1" ] && [ "$(tcj a2)" = "$before_a2" ] &&
   [ "$(aj chk '"tbf rate 30mbit" in res("a1")["after"] and "tbf rate 20mbit" in res("a1")["before"]')" = true ]; then
	pass "--check (rate 30mbit): changed reported on a1 and a2, tc -j identical before and after (tbf 20mbit kept), after = '$(aj chk 'res("a1")["after"]')'"
else
	fail "--check: $(aj chk 'stats("a1")') tc a1 $(rate_of a1) $(aj chk 'res("a1").get("after")')"
fi
ap diff "$PB/impair.yml" -e rate=30mbit --diff
if [ "$(aj diff '"tbf rate 20mbit burst 10000b" in res("a1")["diff"]["before"] and "tbf rate 30mbit burst 15000b" in res("a1")["diff"]["after"]')" = true ] &&
   [ "$(rate_of a1)" = 30000000 ] && [ "$(rate_of a2)" = 30000000 ]; then
	pass "--diff: before '$(aj diff 'res("a1")["diff"]["before"].strip()')' after '$(aj diff 'res("a1")["diff"]["after"].strip()')'; tc -j now 30 Mbit/s"
else
	fail "--diff: $(aj diff 'res("a1").get("diff")') tc a1 $(rate_of a1)"
fi

# --- a bad dial on one host, the other goes on -----------------------------------------
held_a1=$(tcj a1)
ap bad "$PB/impair.yml" -e rate=40mbit -e bad_host=a1
msg=$(aj bad 'res("a1").get("msg", "")')
case "$msg" in
*loss*200%*"0% .. 100%"*) okmsg=1 ;;
*) okmsg=0 ;;
esac
if [ "$okmsg" = 1 ] && [ "$(aj bad 'stats("a1").get("failures") == 1 and stats("a2").get("changed") == 1')" = true ] &&
   [ "$(tcj a1)" = "$held_a1" ] && [ "$(rate_of a2)" = 40000000 ]; then
	pass "bad dial on a1: task failed with linklab's message ('$msg'), a1's tree unchanged, a2 went on to 40 Mbit/s"
else
	fail "bad dial: msg '$msg', stats $(aj bad 'stats("a1")') / $(aj bad 'stats("a2")'), tc a1 $(rate_of a1) a2 $(rate_of a2)"
fi

# --- a host without linklab ----------------------------------------------------------
ap bare "$PB/impair.yml" -e target=bare -e dev=m0 -e rate=10mbit
msg=$(aj bare 'res("bare").get("msg", "")')
case "$msg" in
*"not installed"*linklab.lab.linklab*) pass "host without linklab: '$msg'" ;;
*) fail "host without linklab: '$msg' $(tail -2 "$S/bare.err")" ;;
esac
[ "$(root_kind "${P}bare" m0)" = noqueue ] || fail "bare: m0 was changed: $(root_kind "${P}bare" m0)"

# --- delay on this kernel, the engine option passed through --------------------------------
held_a1=$(tcj a1)
if ip netns exec "${P}a1" tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
	ip netns exec "${P}a1" tc qdisc del dev lo root 2>/dev/null
	ap delay "$PB/impair.yml" -e target=a1 -e delay=10ms
	if [ "$(aj delay 'stats("a1").get("changed") == 1')" = true ]; then
		pass "delay 10ms applied (this kernel has netem)"
	else
		fail "delay 10ms with netem present: $(aj delay 'res("a1").get("msg")')"
	fi
else
	# no sch_netem here: auto puts delay on linklab's endpoint engine
	ap delay "$PB/impair.yml" -e target=a1 -e delay=10ms
	ap delay2 "$PB/impair.yml" -e target=a1 -e delay=10ms
	eng=$(ip netns exec "${P}a1" env LINKLAB_RUN_DIR="$S/run" "$LINKLAB" show --dev d0 2>&1 | grep -c "user engine\|engine: user")
	if [ "$(aj delay 'stats("a1").get("changed") == 1 and stats("a1").get("failures") == 0')" = true ] &&
	   [ "$(aj delay2 'stats("a1").get("changed") == 0 and stats("a1").get("failures") == 0')" = true ] && [ "$eng" -ge 1 ]; then
		pass "delay 10ms without sch_netem: held by the endpoint engine (engine=auto), changed, then changed=0"
	else
		fail "delay with the endpoint engine: $(aj delay 'res("a1").get("msg")') / $(aj delay2 'stats("a1")') / show: $eng"
	fi
	held_a1=$(tcj a1)
	ap engine "$PB/impair.yml" -e target=a1 -e delay=20ms -e engine=kernel
	msg=$(aj engine 'res("a1").get("msg", "")')
	case "$msg" in
	*netem*"modprobe sch_netem"*)
		if [ "$(tcj a1)" = "$held_a1" ]; then
			pass "engine=kernel: delay refused on this kernel (no sch_netem): '$msg'; a1 unchanged"
		else
			fail "engine=kernel refused but a1 changed: $(tcj a1)"
		fi ;;
	*) fail "engine=kernel without netem: '$msg' ($(aj engine '" ".join(res("a1").get("cmd") or [])'))" ;;
	esac
	ap re30 "$PB/impair.yml" -e target=a1 -e rate=30mbit
	if [ "$(rate_of a1)" = 30000000 ] && [ "$(aj re30 'stats("a1").get("changed") == 1')" = true ]; then
		pass "back to rate 30mbit on a1 (the engine's dial replaced by tbf)"
	else
		fail "re30: $(rate_of a1) $(aj re30 'res("a1").get("msg")')"
	fi
fi

# --- an ingress dial (through the IFB device linklab creates) ---------------------------
ap in1 "$PB/impair.yml" -e target=a1 -e rate=5mbit -e direction=ingress
ap in2 "$PB/impair.yml" -e target=a1 -e rate=5mbit -e direction=ingress
ifb=$(aj in1 'res("a1").get("ingress", {}).get("ifb", "")')
if [ "$(aj in1 'stats("a1").get("changed") == 1 and res("a1")["ingress"]["dial"] == {"rate": "5mbit"}')" = true ] &&
   [ "$(aj in2 'stats("a1").get("changed") == 0 and stats("a1").get("failures") == 0')" = true ] &&
   [ -n "$ifb" ] && [ "$(root_tbf_rate "${P}a1" "$ifb")" = 5000000 ] && [ "$(rate_of a1)" = 30000000 ]; then
	pass "ingress rate 5mbit on a1: changed, then changed=0; tc -j reads tbf 5000000 bit/s on $ifb, d0's egress 30 Mbit/s kept"
else
	fail "ingress: $(aj in1 'stats("a1")') $(aj in2 'stats("a1")') ifb '$ifb' $(aj in1 'res("a1").get("msg") or res("a1").get("ingress")')"
fi

# --- state=absent: check mode first, then restore, then nothing to do -------------------
held_a1=$(tcj a1); held_a2=$(tcj a2)
ap abs0 "$PB/impair.yml" -e state=absent --check
if [ "$(aj abs0 'stats("a1").get("changed") == 1 and stats("a2").get("changed") == 1')" = true ] &&
   [ "$(tcj a1)" = "$held_a1" ] && [ "$(tcj a2)" = "$held_a2" ]; then
	pass "state=absent --check: changed reported, nothing touched ($(aj abs0 'res("a2")["after"]'))"
else
	fail "state=absent --check: $(aj abs0 'stats("a1")') $(aj abs0 'res("a2").get("msg")')"
fi
ap abs1 "$PB/impair.yml" -e state=absent
a2q=$(tcj a2 | /usr/bin/python3 -c 'import json,sys; q=[x for x in json.load(sys.stdin) if x.get("root")][0]; print(q["kind"], q["handle"], q["options"].get("limit"))')
if [ "$(aj abs1 'stats("a1").get("changed") == 1 and stats("a2").get("changed") == 1')" = true ] &&
   [ "$(kind_of a1)" = noqueue ] && [ "$a2q" = "bfifo 5: 30000" ] &&
   [ "$(aj abs1 'res("a2")["journalled"]')" = false ]; then
	pass "state=absent: a1 back to noqueue, a2 back to its original 'bfifo 5: limit 30000' (linklab's journal), journal entry gone"
	nin=$(tc -n "${P}a1" qdisc show dev d0 ingress | wc -l)
	if [ -n "$ifb" ] && { ip -n "${P}a1" link show "$ifb" > /dev/null 2>&1 || [ "$nin" != 0 ]; }; then
		fail "state=absent: a1's ingress side left: $ifb $(ip -n "${P}a1" -br link show "$ifb" 2>&1), $nin ingress qdisc lines"
	elif [ -n "$ifb" ]; then
		pass "state=absent: a1's ingress side gone too ($ifb deleted, no ingress qdisc on d0)"
	fi
else
	fail "state=absent: $(aj abs1 'stats("a1")') a1 $(kind_of a1) a2 '$a2q' $(aj abs1 'res("a2").get("msg")')"
fi
ap abs2 "$PB/impair.yml" -e state=absent
if [ "$(aj abs2 'stats("a1").get("changed") == 0 and stats("a2").get("changed") == 0 and stats("a1").get("failures") == 0')" = true ]; then
	pass "state=absent again: changed=0"
else
	fail "state=absent again: $(aj abs2 'stats("a1")') / $(aj abs2 'stats("a2")')"
fi

# --- the classroom playbook ----------------------------------------------------------------
ap class "$COLL/ansible_collections/linklab/lab/playbooks/classroom.yml" \
	-e classroom_duration=3 -e classroom_out="$S/out" -e classroom_profile=rate-50mbit
csv=$S/out/classroom.csv
if [ -f "$csv" ]; then
	r=$(/usr/bin/python3 - "$csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
for r in rows:
    try:
        v = float(r["received_bps"])
    except ValueError:
        bad.append("%s: %s" % (r["pair"], r["status"])); continue
    # tbf 50mbit: the TCP frame ceiling is 47.8 Mbit/s (+-5% on veth)
    if not (35e6 < v < 55e6) or r["status"] != "ok" or r["restored"] != "True" or "tbf rate 50mbit" not in r["dial"]:
        bad.append("%s: %.1f Mbit/s %s restored=%s dial=%s" % (r["pair"], v / 1e6, r["status"], r["restored"], r["dial"]))
print("%d %s" % (len(rows), "; ".join(bad) or "ok"))
print(", ".join("%s %.2f Mbit/s" % (r["pair"], float(r["received_bps"] or 0) / 1e6) for r in rows))
EOF
)
	case "$r" in
	"2 ok"*) pass "classroom.yml: classroom.csv has both pairs at the 50mbit profile: $(echo "$r" | tail -1)" ;;
	*) fail "classroom.csv: $r $(head -3 "$csv")" ;;
	esac
else
	fail "classroom.yml: no classroom.csv ($(aj class 'dict((h, stats(h)) for h in ("a1","a2"))') $(tail -3 "$S/class.err"))"
fi
svg=$S/out/classroom.svg
r=$(/usr/bin/python3 - "$svg" "$csv" <<'EOF' 2>&1
import csv, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
bars = [e for e in root.iter(ns + "rect") if e.get("class") == "pair"]
rows = list(csv.DictReader(open(sys.argv[2])))
w = [float(b.get("width")) for b in bars]
v = [float(r["received_bps"]) for r in rows]
# bar widths proportional to the CSV's rates (same scale)
ok = len(bars) == 2 and all(x > 0 for x in w) and abs(w[0] / w[1] - v[0] / v[1]) < 0.01
print("ok" if ok else "bars %s rates %s" % (w, v))
EOF
)
[ "$r" = ok ] && pass "classroom.svg: one chart, one bar per pair, widths in proportion to the CSV's SUM rates" ||
	fail "classroom.svg: $r"
if [ "$(kind_of a1)" = noqueue ] && [ "$(tcj a2 | grep -c bfifo)" = 1 ] &&
   [ "$(aj class 'stats("a1").get("failures") == 0 and stats("a2").get("failures") == 0')" = true ] &&
   [ "$(aj class 'all(not t["hosts"].get(h, {}).get("changed", False) for t in d["plays"][0]["tasks"] for h in ("a1","b1","a2","b2"))')" = true ]; then
	pass "classroom.yml: every pair restored afterwards (a1 noqueue, a2 its bfifo), no failures; its role play (the role's second run) changed nothing on a1 b1 a2 b2"
else
	fail "classroom.yml restore: a1 $(kind_of a1), a2 $(tcj a2), $(aj class 'stats("a1")') $(tail -3 "$S/class.err")"
fi

# --- linklab_test with peer: linklab starts the server over SSH ----------------------------
ap peer "$PB/test.yml" -e key="$S/id" -e known="$S/known_hosts"
r=$(aj peer 'res("a1", "linklab_test").get("sum_received_bps", 0)')
if [ "$(aj peer 'stats("a1").get("failures") == 0 and len(res("a1", "linklab_test")["result"]["end"]["streams"]) == 2 and res("a1", "linklab_test")["ansible_facts"]["linklab_test"]["end"]["sum_received"]["bits_per_second"] == res("a1", "linklab_test")["sum_received_bps"] > 0')" = true ]; then
	pass "linklab_test peer=root@10.232.1.2: linklab started the server over SSH, 2 streams, SUM $(echo "$r" | awk '{printf "%.0f", $1/1e6}') Mbit/s, the document also as fact linklab_test"
else
	fail "linklab_test peer: $(aj peer 'res("a1").get("msg")') $(tail -3 "$S/peer.err")"
fi
if [ "$(aj peer 'res("a1", "linklab_test verify").get("ok") is True and res("a1", "linklab_test verify")["not_ok"] == [] and any(c["quantity"] == "rate" and c["ok"] for c in res("a1", "linklab_test verify")["result"]["checks"])')" = true ]; then
	pass "linklab_test measure=verify: the 20mbit dial a1 holds is ok row by row (rate, rtt, loss)"
else
	fail "linklab_test verify: $(aj peer 'res("a1", "linklab_test verify")' | head -c 600)"
fi
if [ "$(aj peer '(lambda r: r.get("rpm", 0) > 0 and r["ansible_facts"]["linklab_rpm"]["working_rtt_ms"] > 0 and r["result"]["confidence"] in ("low", "medium", "high"))(res("a1", "linklab_test rpm"))')" = true ]; then
	pass "linklab_test measure=rpm: RPM $(aj peer 'round(res("a1", "linklab_test rpm")["rpm"])') returned, the document as fact linklab_rpm"
else
	fail "linklab_test rpm: $(aj peer 'res("a1", "linklab_test rpm")' | head -c 600)"
fi
if [ "$(kind_of a1)" = noqueue ]; then pass "after verify/rpm: a1 restored (noqueue)"; else fail "a1 left with $(kind_of a1)"; fi

# --- apply --check by itself (what the module's idempotence rests on) ------------------
LLA() { ip netns exec "${P}a1" env LINKLAB_RUN_DIR="$S/run" "$LINKLAB" "$@"; }
t0=$(tcj a1)
c1=$(LLA apply --dev d0 --rate 10mbit --dst 10.232.1.2 --check 2>&1)
j1=$(LLA show --dev d0 -J | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["a"]["journalled"])')
if [ "$(tcj a1)" = "$t0" ] && [ "$j1" = False ] && case "$c1" in *"would change: noqueue -> htb rate 10mbit"*"dst 10.232.1.2/32"*) true;; *) false;; esac; then
	pass "apply --check on a fresh d0: '$c1'; tree and journal untouched"
else
	fail "apply --check fresh: '$c1' journalled $j1"
fi
r=""
for d in "--rate 10mbit --dst 10.232.1.2" "--rate 7mbit --direction ingress" "--rate 3300kbit" "--rate 123456789bit --burst 70000b"; do
	LLA apply --dev d0 $d > /dev/null 2>&1 || r="$r [apply $d failed]"
	c=$(LLA apply --dev d0 $d --check 2>&1)
	case "$c" in *"no change"*) ;; *) r="$r [$d: $c]";; esac
done
# tc keeps the bucket as ticks: 70000b reads back as 69999b
c=$(LLA apply --dev d0 --rate 123456789bit --burst 90000b --check -J | /usr/bin/python3 -c '
import json,sys
d = json.load(sys.stdin); b = d["a"]["before"]["dial"]
ok = d["changed"] and b["rate"] == "123456784bit" and abs(int(b["burst"][:-1]) - 70000) <= 700 and d["a"]["after"]["commands"]
print("ok" if ok else d)')
[ "$c" = ok ] || r="$r [burst 90000b: $c]"
LLA clear --dev d0 > /dev/null 2>&1
if [ -z "$r" ] && [ "$(kind_of a1)" = noqueue ]; then
	pass "apply --check after apply: no change for a scoped (--dst), an ingress, a 3300kbit and a 123456789bit/70000b dial; a burst 90000b would change (before.dial: the kernel's rate 123456784bit and burst 70000b within tc's rounding)"
else
	fail "apply --check after apply:$r"
fi

# --- the shipped inventory example -------------------------------------------------------
EX=$COLL/ansible_collections/linklab/lab/inventory/classroom.example.yml
g=$(ANSIBLE_COLLECTIONS_PATH="$COLL" HOME="$S" ansible-inventory -i "$EX" --list 2>"$S/inv.err" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
c, s = d["linklab_clients"]["hosts"], d["linklab_servers"]["hosts"]
hv = d["_meta"]["hostvars"]
ok = all(hv[h]["linklab_peer"] in s and hv[h]["linklab_peer_addr"] for h in c)
print(len(c), len(s), ok)' 2>>"$S/inv.err")
if [ "$g" = "2 2 True" ] && ANSIBLE_COLLECTIONS_PATH="$COLL" HOME="$S" ansible-playbook -i "$EX" \
	"$COLL/ansible_collections/linklab/lab/playbooks/classroom.yml" --syntax-check > "$S/syn.out" 2>&1; then
	pass "inventory/classroom.example.yml: 2 client and 2 server hosts, every client names its server and its address; classroom.yml passes --syntax-check with it"
else
	fail "inventory example: '$g' $(tail -3 "$S/inv.err" "$S/syn.out")"
fi

# --- documentation ------------------------------------------------------------------
for m in linklab_impair linklab_test; do
	if ANSIBLE_COLLECTIONS_PATH="$COLL" HOME="$S" ansible-doc -t module "linklab.lab.$m" > "$S/doc-$m.txt" 2>&1 &&
	   grep -q "^OPTIONS" "$S/doc-$m.txt" && grep -q "^EXAMPLES" "$S/doc-$m.txt" && grep -q "^RETURN VALUES" "$S/doc-$m.txt" &&
	   ! grep -qi "error\|warning" "$S/doc-$m.txt"; then
		pass "ansible-doc linklab.lab.$m renders (OPTIONS, EXAMPLES, RETURN VALUES; $(wc -l < "$S/doc-$m.txt") lines)"
	else
		fail "ansible-doc linklab.lab.$m: $(head -5 "$S/doc-$m.txt")"
	fi
done
if ANSIBLE_COLLECTIONS_PATH="$COLL" HOME="$S" ansible-doc -t role linklab.lab.linklab > "$S/doc-role.txt" 2>&1 &&
   grep -q "linklab_binary" "$S/doc-role.txt"; then
	pass "ansible-doc -t role linklab.lab.linklab renders its argument spec"
else
	fail "ansible-doc role: $(head -5 "$S/doc-role.txt")"
fi
/usr/bin/python3 "$LL_REPO/tests/lab/ansible_docs.py" "$COLL" linklab_impair linklab_test > "$S/docs.out" 2>&1
while IFS= read -r line; do
	case "$line" in
	PASS:*) pass "${line#PASS: }" ;;
	FAIL:*) fail "${line#FAIL: }" ;;
	*) fail "ansible_docs.py: $line" ;;
	esac
done < "$S/docs.out"
# ansible-test sanity: these tests build a venv and pip-install pinned
# requirements from PyPI, which this machine cannot reach
NEEDPIP="ansible-doc import pep8 pylint runtime-metadata validate-modules yamllint"
if command -v ansible-test >/dev/null; then
	set --
	for t in $NEEDPIP; do set -- "$@" --skip-test "$t"; done
	had_out=0; [ -d "$COLL/ansible_collections/linklab/lab/tests" ] && had_out=1
	(cd "$COLL/ansible_collections/linklab/lab" && HOME="$S" PATH=/usr/bin:/bin:/usr/sbin:/sbin \
		ansible-test sanity --local --python "$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "$@") \
		> "$S/sanity.log" 2>&1
	rc=$?
	# ansible-test writes its results under the collection's tests/output
	[ $had_out = 0 ] && rm -rf "$COLL/ansible_collections/linklab/lab/tests"
	n=$(grep -c '^Running sanity test' "$S/sanity.log")
	if [ $rc = 0 ] && [ "$n" -ge 15 ]; then
		pass "ansible-test sanity: $n tests passed offline (compile, shebang, no-assert, future-import/metaclass boilerplate, ...)"
	else
		fail "ansible-test sanity rc $rc: $(grep -E 'ERROR|FATAL' "$S/sanity.log" | head -5)"
	fi
	skip "ansible-test sanity $NEEDPIP: they pip-install pinned requirements from PyPI into a venv, not reachable here (ansible-doc and the docs/argspec check above stand in for ansible-doc and validate-modules)"
else
	skip "ansible-test not installed (ansible-core ships it)"
fi

echo "ansible suite: $(( $(date +%s) - T0 )) s; playbook runs: $(for f in "$S"/*.sec; do n=${f##*/}; printf '%s %ss ' "${n%.sec}" "$(cat "$f")"; done)"
summary ansible
