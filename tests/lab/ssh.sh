#!/bin/sh
# SPDX-License-Identifier: MIT
# ssh.sh - the remote peer backend against a real sshd in the lab's peer B:
#  links/route over SSH, tbf applied remotely and read back with tc -j in B,
#  clear restores noqueue (and a non-default original), host-key refusal
#  (changed, unknown) and accept-new, hostile interface names, test server,
#  netem refused with the modprobe hint when the kernel lacks it.
#  Safety and authentication: passphrase keys (prompt, CLI askpass), ssh-agent, password prompt,
#  key types in failures; the session's own interface (refusal, warning,
#  --exclude-ssh); nothing left after a normal quit; sshd child killed
#  mid-apply / mid-test / under --hold; clear --all; --peer-data; offloads
#  and sysctls on both peers; ProxyJump; a 17 s idle session.
#  Scope and ingress: --dport and --direction ingress applied remotely read
#  back as the local backend reads them in A; clear, clear --all and the
#  revert timer leave noqueue and no IFB; a foreign ingress qdisc is refused.
#  Hostile and odd input: @revoked / @cert-authority known_hosts lines,
#  IdentitiesOnly with a real ssh-agent, an RSA key against OpenSSH 9,
#  a remote tc's real exit code, a failing session's own error, escape
#  sequences in B's interface names.
# Uses its own namespaces/state dir (lib.sh lab_up), so it never touches a demo.
# LL_BUILD also names the linklab binary the CLI checks run (lib.sh $LINKLAB)
[ -n "${LL_BUILD:-}" ] && : "${LINKLAB:=$LL_BUILD/linklab}"
. "$(dirname "$0")/lib.sh"
need_root ssh
SUF=ssh$$
T=$(mktemp -d /tmp/ll-sshtest.XXXXXX)
cleanup() {
	lab_down
	rm -f "$LL_LAB_DIR.uperr" /root/Lq
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the driver: linked against the core objects of a normal build --------
B=${LL_BUILD:-$LL_REPO/build}
# only the core objects (src/LAYER/*.c but the console's tui/): a half-written
# TUI file of someone else must not stop this suite
OBJS=$(cd "$LL_REPO" && for f in src/*/*.c; do case "$f" in src/tui/*) ;; *) f=${f#src/}; echo "$B/obj/${f%.c}.o";; esac; done)
if ! make -C "$LL_REPO" -s BUILD="$B" $OBJS > "$T/make.log" 2>&1; then
	fail "make BUILD=$B core objects: $(tail -5 "$T/make.log")"
	summary ssh; exit 1
fi
ar rcs "$T/libcore.a" $OBJS
PKGS="libnl-route-3.0 libssh2 ncursesw libcjson"
if ! cc -std=c11 -D_GNU_SOURCE -O1 -g -I"$LL_REPO/include" -o "$T/drv" \
	"$LL_REPO/tests/lab/remote_driver.c" "$T/libcore.a" \
	$(pkg-config --libs $PKGS) -liniparser -lpthread -lm 2> "$T/cc.err"; then
	fail "build remote_driver: $(head -5 "$T/cc.err")"
	summary ssh; exit 1
fi

# the CLI (for the checks that run linklab itself); a half-written TUI file
# of someone else only skips those
LLB="$B/linklab"
make -C "$LL_REPO" -s BUILD="$B" "$LLB" > "$T/make-ll.log" 2>&1 || rm -f "$LLB"

if ! lab_up "$SUF"; then fail "lab up"; summary ssh; exit 1; fi
DRV="$T/drv"
ssh-keygen -q -t ed25519 -N '' -f "$T/other" >/dev/null
NSID=$(inb stat -L -c %i /proc/self/ns/net)
# pids of processes named $1 (default iperf3) in B's network namespace
b_iperf3() {
	for p in $(ps -eo pid=,comm= | awk -v c="${1:-iperf3}" '$2==c{print $1}'); do
		[ "$(stat -L -c %i /proc/$p/ns/net 2>/dev/null)" = "$NSID" ] && echo "$p"
	done
}
D() { ina "$DRV" -F "$LL_SSH_CONFIG" "$@"; }
JDIR=/run/linklab

# lab.sh up is idempotent
if sh "$LL_REPO/lab/lab.sh" up | grep -q "already up"; then
	pass "lab.sh up twice: second run finds the lab up"
else
	fail "lab.sh up is not idempotent"
fi

# --- links and route ------------------------------------------------------
if D peer-b links > "$T/links" 2>&1 && grep -q '^veth-b|noqueue|1500|UP|10.199.0.2/24|fd99::2/64|fe80::' "$T/links" &&
   grep -q '^lo|noqueue|65536|UNKNOWN|127.0.0.1/8|::1$' "$T/links"; then
	pass "links over SSH: veth-b, noqueue, mtu 1500, addresses as the local lister shows them (::1, fe80 listed)"
else
	fail "links: $(cat "$T/links")"
fi
r=$(D peer-b route "$LL_ADDR_A" 2>&1)
[ "$r" = veth-b ] && pass "route_dev $LL_ADDR_A -> veth-b" || fail "route_dev: $r"
r=$(D peer-b route 'fd99::1' 2>&1)
[ "$r" = veth-b ] && pass "route_dev fd99::1 -> veth-b" || fail "route_dev v6: $r"

# --- apply / read back / clear --------------------------------------------
r=$(D peer-b dry veth-b 50mbit 2>&1)
case "$r" in
"tc qdisc replace dev 'veth-b' root handle 1: tbf rate "*) pass "dry-run prints quoted tc lines";;
*) fail "dry-run: $r";;
esac
if D peer-b apply veth-b 50mbit > "$T/apply" 2>&1; then pass "apply tbf 50mbit over SSH"; else fail "apply: $(cat "$T/apply")"; fi
rb=$(root_tbf_rate "$LL_NS_B" veth-b)
[ "$rb" = 50000000 ] && pass "B veth-b holds tbf 50Mbit (ip netns exec B tc -j)" || fail "B veth-b tbf rate=$rb"
ls $JDIR/remote-$NSID-veth-b.tc.json >/dev/null 2>&1 && pass "journal written under $JDIR" || fail "no journal in $JDIR"
[ -z "$(b_iperf3 sleep)" ] && pass "revert timer disarmed after the read-back" || fail "revert timer still armed: $(b_iperf3 sleep)"
r=$(D peer-b show veth-b 2>&1)
case "$r" in "tbf handle 1: rate 50000000 "*) pass "read_qdiscs over SSH: tbf 50000000 bit/s";; *) fail "show: $r";; esac
# a second process re-applies: the journal on the peer keeps the real original
D peer-b apply veth-b 20mbit >/dev/null 2>&1
if D peer-b clear veth-b > "$T/clear" 2>&1 && [ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ]; then
	pass "clear (from another session) -> noqueue back"
else
	fail "clear: $(cat "$T/clear") root=$(root_kind "$LL_NS_B" veth-b)"
fi
ls $JDIR/remote-$NSID-veth-b.tc.json >/dev/null 2>&1 && fail "journal left after clear" || pass "journal removed by clear"
r=$(D peer-b clear veth-b 2>&1)
[ "$r" = cleared ] && pass "clear on an untouched device is a no-op" || fail "second clear: $r"

# a non-default original (tbf 7: with a pfifo child) is rebuilt by clear
inb tc qdisc replace dev veth-b root handle 7: tbf rate 10mbit burst 5000 latency 50ms
inb tc qdisc add dev veth-b parent 7:1 handle 20: pfifo limit 33
D peer-b apply veth-b 30mbit >/dev/null 2>&1
D peer-b clear veth-b >/dev/null 2>&1
if inb tc -j qdisc show dev veth-b | grep -q '"handle":"7:".*"rate":1250000.*"handle":"20:".*"limit":33'; then
	pass "clear rebuilds an original tbf 7: + pfifo 20: limit 33"
else
	fail "original not rebuilt: $(inb tc -j qdisc show dev veth-b)"
fi
inb tc qdisc del dev veth-b root 2>/dev/null

# --- netem -----------------------------------------------------------------
r=$(D peer-b apply-netem veth-b 100ms 2>&1)
case "$r" in
*"modprobe sch_netem"*)
	[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && pass "netem missing: -ENOTSUP with modprobe hint, noqueue kept" \
		|| fail "netem failure left $(root_kind "$LL_NS_B" veth-b)";;
applied)
	skip "kernel has netem: refusal path not exercised"; D peer-b clear veth-b >/dev/null 2>&1;;
*) fail "apply netem: $r";;
esac

# --- test server -------------------------------------------------------------
r=$(D peer-b server 2>&1)
case "$r" in "port "[0-9]*) pass "server_start/stop on the peer ($r)";; *) fail "server: $r";; esac

# a busy 5201 on the peer: the server moves on to the next port
inb python3 -c 'import socket,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5201)); s.listen(1); time.sleep(60)' &
BUSY=$!
wait_port "$LL_NS_B" 5201
r=$(PATH=/usr/bin:/bin D peer-b server 2>&1)
kill $BUSY 2>/dev/null; wait $BUSY 2>/dev/null
case "$r" in "port 5201") skip "busy port test: linklab serve picked its own port";;
"port "[0-9]*) pass "5201 busy: server started on the next free port ($r)";; *) fail "server with 5201 busy: $r";; esac
if [ -n "$(b_iperf3)" ]; then
	fail "an iperf3 server was left running on the peer"
else
	pass "server_stop left no iperf3 server running"
fi

# --- ssh.h directly: exec, stderr, exit status, big output, timeout, signal --
r=$(D peer-b exec 0 'echo hi; echo oops >&2; exit 3' 2>&1)
[ "$r" = 'status 3 out 3 err 5 first-out "hi" first-err "oops"' ] && pass "ssh_exec: stdout, stderr and exit status apart" || fail "exec: $r"
r=$(D peer-b exec 0 'yes e | head -c 3000000 >&2; yes o | head -c 3000000' 2>&1)
case "$r" in "status 0 out 3000000 err 3000000 "*) pass "ssh_exec: 3 MB on stderr then 3 MB on stdout, no deadlock";; *) fail "big exec: $r";; esac
r=$(D peer-b exec 1000 'sleep 3' 2>&1)
case "$r" in *"did not finish within 1000 ms"*) pass "ssh_exec timeout reported";; *) fail "timeout: $r";; esac
r=$(D peer-b exec 0 'kill -9 $$' 2>&1)
case "$r" in "status 137 "*) pass "command killed by a signal: status 137";; *) fail "signal: $r";; esac
r=$(D peer-b exec 0 'kill -9 $PPID' 2>&1)
case "$r" in *"signal KILL"*) pass "remote shell killed: no exit status -> failure";; *) fail "shell killed: $r";; esac
r=$(D peer-b exec 0 'printf abc; printf "x\ny" >&2' 2>&1)
[ "$r" = 'status 0 out 3 err 3 first-out "abc" first-err "x"' ] && pass "ssh_exec: output without a final newline kept exactly" || fail "no-newline exec: $r"
r=$(D peer-b exec 0 "echo 'it'\''s'; exit 7" 2>&1)
[ "$r" = 'status 7 out 5 err 0 first-out "it'"'"'s" first-err ""' ] && pass "ssh_exec: quotes in the command survive the sh -c wrapper" || fail "quote exec: $r"
r=$(D peer-b alive 2>&1)
case "$r" in "alive fd 1 keepalive-in "*) pass "ssh_alive and keepalive";; *) fail "alive: $r";; esac

# --- host keys ---------------------------------------------------------------
echo "$LL_ADDR_B $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/kh_bad"
r=$(D --known-hosts "$T/kh_bad" peer-b connect 2>&1)
case "$r" in *"HOST KEY FOR $LL_ADDR_B HAS CHANGED"*) pass "changed host key refused loudly";; *) fail "mismatch: $r";; esac
r=$(D --known-hosts "$T/kh_bad" --accept-new peer-b connect 2>&1)
case "$r" in *"HAS CHANGED"*) pass "changed host key refused even with --accept-new";; *) fail "mismatch+accept-new: $r";; esac
: > "$T/kh_empty"
r=$(D --known-hosts "$T/kh_empty" peer-b connect 2>&1)
fp=$(ssh-keygen -lf "$LL_LAB_DIR/ssh_host_ed25519_key.pub" | awk '{print $2}')
case "$r" in
*"is not known"*"$fp"*) [ -s "$T/kh_empty" ] && fail "unknown key written without accept-new" || pass "unknown host refused, fingerprint shown, nothing written";;
*) fail "unknown: $r";;
esac
r=$(D --known-hosts "$T/kh_empty" --accept-new peer-b connect 2>&1)
if [ "$r" = "connected B (peer-b)" ] && grep -q "^$LL_ADDR_B ssh-ed25519 " "$T/kh_empty"; then
	pass "--accept-new connects and appends the key in OpenSSH format"
else
	fail "accept-new: $r / $(cat "$T/kh_empty")"
fi
r=$(D --known-hosts "$T/kh_empty" peer-b connect 2>&1)
[ "$r" = "connected B (peer-b)" ] && pass "the appended key is accepted next time" || fail "re-connect: $r"
r=$(D --known-hosts "$T/newdir/known_hosts" --accept-new peer-b connect 2>&1)
[ "$r" = "connected B (peer-b)" ] && [ -s "$T/newdir/known_hosts" ] && pass "accept-new creates a missing known_hosts directory" || fail "accept-new into new dir: $r"
# the written key matches what OpenSSH sees
if ina ssh -F "$LL_SSH_CONFIG" -o UserKnownHostsFile="$T/kh_empty" peer-b true 2>/dev/null; then
	pass "OpenSSH accepts the line linklab wrote"
else
	fail "OpenSSH rejects the known_hosts line linklab wrote"
fi

# hashed known_hosts entries (ssh-keygen -H) match too
cp "$LL_LAB_DIR/known_hosts" "$T/kh_hashed"
ssh-keygen -q -H -f "$T/kh_hashed" >/dev/null 2>&1; rm -f "$T/kh_hashed.old"
r=$(D --known-hosts "$T/kh_hashed" peer-b connect 2>&1)
if grep -q '^|1|' "$T/kh_hashed" && [ "$r" = "connected B (peer-b)" ]; then
	pass "hashed known_hosts entry accepted"
else
	fail "hashed known_hosts: $r"
fi

# a second sshd on port 2222: "[host]:port" entries
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2222 -o PidFile="$T/sshd2.pid" -E "$T/sshd2.log"
i=0; while [ ! -s "$T/sshd2.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
KEY="--ssh-key $LL_LAB_DIR/id_ed25519"
echo "[$LL_ADDR_B]:2222 $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/kh_port"
r=$(D --known-hosts "$T/kh_port" $KEY root@$LL_ADDR_B:2222 connect 2>&1)
case "$r" in *"HAS CHANGED"*) pass "port 2222: the [host]:2222 entry is the one checked";; *) fail "port 2222 mismatch: $r";; esac
: > "$T/kh_port"
r=$(D --known-hosts "$T/kh_port" $KEY root@$LL_ADDR_B:2222 connect 2>&1)
case "$r" in *"is not known"*) pass "port 2222: unknown without an entry";; *) fail "port 2222 unknown: $r";; esac
# IPv6 with a port: named as known_hosts and ssh-keyscan name it, [addr]:port
r=$(D --known-hosts "$T/kh_port" $KEY 'root@[fd99::2]:2222' connect 2>&1)
case "$r" in *"ssh root@[fd99::2]:2222: host key for [fd99::2]:2222 is not known"*"(ssh-keyscan -p 2222 fd99::2 | ssh-keygen -lf -)"*"(or ssh -p 2222 root@fd99::2)"*)
	pass "IPv6 port 2222 unknown key: [fd99::2]:2222 named, ssh-keyscan -p 2222 and ssh -p 2222 hints";;
*) fail "IPv6 port 2222 unknown: $r";; esac
r=$(D --known-hosts "$T/kh_port" $KEY --accept-new root@$LL_ADDR_B:2222 connect 2>&1)
if [ "$r" = "connected B (root@$LL_ADDR_B:2222)" ] && grep -q "^\[$LL_ADDR_B\]:2222 ssh-ed25519 " "$T/kh_port" &&
   ina ssh -F /dev/null -i "$LL_LAB_DIR/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=yes \
	-o UserKnownHostsFile="$T/kh_port" -p 2222 root@$LL_ADDR_B true 2>/dev/null; then
	pass "accept-new on port 2222 writes [host]:2222, OpenSSH accepts it"
else
	fail "port 2222 accept-new: $r / $(cat "$T/kh_port")"
fi
[ -s "$T/sshd2.pid" ] && kill "$(cat "$T/sshd2.pid")" 2>/dev/null

# a closed port: a clear connect error, no hang
r=$(D --known-hosts "$T/kh_empty" root@$LL_ADDR_B:2222 connect 2>&1)
case "$r" in *"cannot connect"*"refused"*) pass "closed port: connection refused reported";; *) fail "closed port: $r";; esac
# a key that is not authorised: the method and key tried are named
ssh-keygen -q -t ed25519 -N '' -f "$T/nokey" >/dev/null
r=$(ina env -u SSH_AUTH_SOCK "$DRV" --known-hosts "$T/kh_empty" --ssh-key "$T/nokey" root@$LL_ADDR_B connect 2>&1)
case "$r" in *"authentication failed"*"publickey ssh-ed25519 $T/nokey (refused by the server)"*) pass "auth failure names the method, key type and key tried";; *) fail "auth failure: $r";; esac

# --- hostile interface names on the peer -------------------------------------
rm -f /root/Lq
inb ip link add 'a;b' type veth peer name 'x$(id)' &&
inb ip link add ';touch${IFS}Lq' type veth peer name 'c`id`' &&
inb ip link set 'a;b' up && inb ip link set 'x$(id)' up &&
inb ip link set ';touch${IFS}Lq' up && inb ip link set 'c`id`' up || fail "cannot create hostile veth names in B"
D peer-b links > "$T/links2" 2>&1
if grep -q '^a;b|' "$T/links2" && grep -q '^x$(id)|' "$T/links2" && grep -q '^;touch${IFS}Lq|' "$T/links2"; then
	pass "hostile names listed verbatim"
else
	fail "hostile names not listed: $(cat "$T/links2")"
fi
ok=1
for dev in 'a;b' 'x$(id)' ';touch${IFS}Lq' 'c`id`'; do
	r=$(D peer-b apply "$dev" 10mbit 2>&1)
	rb=$(root_tbf_rate "$LL_NS_B" "$dev")
	[ "$r" = applied ] && [ "$rb" = 10000000 ] || { ok=0; fail "apply on '$dev': $r rate=$rb"; }
	r=$(D peer-b clear "$dev" 2>&1)
	[ "$r" = cleared ] && [ "$(root_kind "$LL_NS_B" "$dev")" = noqueue ] || { ok=0; fail "clear on '$dev': $r"; }
done
[ $ok = 1 ] && pass "hostile names shaped and cleared (tc -j in B confirms)"
[ -e /root/Lq ] && fail "INJECTION: /root/Lq was created" || pass "nothing injected (no /root/Lq)"
r=$(D peer-b apply 'bad/name' 10mbit 2>&1)
case "$r" in *"invalid"*) pass "'bad/name' refused before any command";; *) fail "bad/name: $r";; esac
r=$(D peer-b apply 'waytoolongname16' 10mbit 2>&1)
case "$r" in *"invalid"*) pass "16-character name refused";; *) fail "long name: $r";; esac
inb ip link del 'a;b' 2>/dev/null; inb ip link del ';touch${IFS}Lq' 2>/dev/null

# --- authentication --------------------------------------------------------------
EMPTYH="$T/emptyhome"; mkdir -p "$EMPTYH"
ssh-keygen -q -t ed25519 -N 'sekrit pass' -C ll-pass -f "$T/pkey" >/dev/null
ssh-keygen -q -t ecdsa -N '' -C ll-unauth -f "$T/ukey" >/dev/null
cat "$T/pkey.pub" >> "$LL_LAB_DIR/authorized_keys"
KH="--known-hosts $LL_LAB_DIR/known_hosts"
DN() { ina env -u SSH_AUTH_SOCK HOME="$EMPTYH" "$DRV" $KH "$@"; }
r=$(LL_ANSWER='sekrit pass' DN --ssh-key "$T/pkey" root@$LL_ADDR_B connect 2>"$T/p.err")
if [ "$r" = "connected B (root@$LL_ADDR_B)" ] && grep -q "^PROMPT: Enter passphrase for key '$T/pkey': " "$T/p.err"; then
	pass "passphrase key: asked once through the prompt callback (no echo), connected"
else
	fail "passphrase key: $r / $(cat "$T/p.err")"
fi
r=$(LL_ANSWER=wrong DN --ssh-key "$T/pkey" root@$LL_ADDR_B connect 2>"$T/p.err")
n=$(grep -c '^PROMPT: ' "$T/p.err")
case "$r" in *"publickey ssh-ed25519 $T/pkey (wrong passphrase, 3 tries)"*)
	[ "$n" = 3 ] && pass "wrong passphrase: asked 3 times, failure names method, key type and file" || fail "wrong passphrase asked $n times";;
*) fail "wrong passphrase: $r";; esac
r=$(DN --no-prompt --ssh-key "$T/pkey" root@$LL_ADDR_B connect 2>&1)
case "$r" in *"publickey ssh-ed25519 $T/pkey (passphrase-protected and no way to ask for it: add it to ssh-agent)"*)
	pass "no prompt available: the encrypted key is named, with the agent hint";; *) fail "no prompt: $r";; esac
r=$(DN --ssh-key "$T/ukey" root@$LL_ADDR_B connect 2>&1)
case "$r" in *"server offers publickey"*"publickey ecdsa-sha2-nistp256 $T/ukey (refused by the server)"*)
	pass "unauthorised ecdsa key: method, key type and file named";; *) fail "unauthorised key: $r";; esac
# the CLI asks through LINKLAB_ASKPASS (the tty reader's stand-in)
printf '#!/bin/sh\necho "$1" >> %s/askpass.log\necho "sekrit pass"\n' "$T" > "$T/askpass"; chmod +x "$T/askpass"
if ina env -u SSH_AUTH_SOCK HOME="$EMPTYH" LINKLAB_ASKPASS="$T/askpass" "$LINKLAB" links --peer root@$LL_ADDR_B \
	--ssh-key "$T/pkey" $KH > "$T/cli.out" 2>&1 && grep -q "veth-b" "$T/cli.out" && grep -q "Enter passphrase" "$T/askpass.log"; then
	pass "linklab links --ssh-key PASSPHRASE_KEY: the CLI prompt supplies the passphrase"
else
	fail "CLI passphrase: $(head -3 "$T/cli.out")"
fi
# a real ssh-agent started here holds the passphrase key
AGENT_OUT=$(ina ssh-agent -s -a "$T/agent.sock")
AGENT_PID=$(echo "$AGENT_OUT" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
printf '#!/bin/sh\necho "sekrit pass"\n' > "$T/sshaskpass"; chmod +x "$T/sshaskpass"
ina env SSH_AUTH_SOCK="$T/agent.sock" SSH_ASKPASS="$T/sshaskpass" SSH_ASKPASS_REQUIRE=force DISPLAY=:0 \
	ssh-add "$T/pkey" </dev/null >/dev/null 2>&1
r=$(ina env SSH_AUTH_SOCK="$T/agent.sock" HOME="$EMPTYH" "$DRV" --no-prompt $KH root@$LL_ADDR_B connect 2>&1)
[ "$r" = "connected B (root@$LL_ADDR_B)" ] && pass "agent auth: passphrase key unlocked in a real ssh-agent, no IdentityFile" || fail "agent: $r"
ina env SSH_AUTH_SOCK="$T/agent.sock" ssh-add -D >/dev/null 2>&1
ina env SSH_AUTH_SOCK="$T/agent.sock" ssh-add "$T/ukey" >/dev/null 2>&1
r=$(ina env SSH_AUTH_SOCK="$T/agent.sock" HOME="$EMPTYH" "$DRV" --no-prompt $KH root@$LL_ADDR_B connect 2>&1)
case "$r" in *"agent (1 key refused: ecdsa-sha2-nistp256)"*) pass "agent with a refused key: named by type";; *) fail "agent refused: $r";; esac
[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
# password: a second sshd that offers only passwords; the prompt is asked,
# a wrong answer is rejected and named (the host's real passwords are not
# touched, so success is not exercised here)
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2223 -o PidFile="$T/sshd3.pid" -E "$T/sshd3.log" \
	-o PubkeyAuthentication=no -o PasswordAuthentication=yes -o PermitRootLogin=yes
i=0; while [ ! -s "$T/sshd3.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
echo "[$LL_ADDR_B]:2223 $(cut -d' ' -f1,2 "$LL_LAB_DIR/ssh_host_ed25519_key.pub")" > "$T/kh3"
r=$(LL_ANSWER=not-the-password DN --known-hosts "$T/kh3" root@$LL_ADDR_B:2223 connect 2>"$T/p.err")
if grep -q "^PROMPT: root@$LL_ADDR_B's password: " "$T/p.err" && case "$r" in *"password (rejected)"*) true;; *) false;; esac; then
	pass "password: prompted as user@host's password, wrong one rejected and named"
else
	fail "password: $r / $(cat "$T/p.err")"
fi
r=$(DN --no-prompt --known-hosts "$T/kh3" root@$LL_ADDR_B:2223 connect 2>&1)
case "$r" in *"server offers password"*"password (no way to ask)"*) pass "password without a prompt: skipped and named";; *) fail "password no prompt: $r";; esac
[ -s "$T/sshd3.pid" ] && kill "$(cat "$T/sshd3.pid")" 2>/dev/null

# --- the session's own interface --------------------------------------------------
r=$(D peer-b ctl 2>&1)
case "$r" in "$LL_ADDR_A:"*" -> $LL_ADDR_B:22 dev veth-b") pass "sshflow: the session $r";; *) fail "ctl: $r";; esac
r=$(D peer-b check a veth-a 100% 2>&1)
case "$r" in *"A (this host) veth-a carries the SSH session to B"*"refused"*) pass "peerset_ssh_check: A's veth-a carries the session, 100% loss refused";; *) fail "check a: $r";; esac
r=$(D --force peer-b check a veth-a 100% 2>&1)
case "$r" in "ok warn: A (this host) veth-a carries the SSH session"*) pass "peerset_ssh_check --force: allowed with the warning";; *) fail "check a force: $r";; esac
r=$(D peer-b check b lo 100% 2>&1)
[ "$r" = ok ] && pass "peerset_ssh_check: B's lo does not carry it" || fail "check b lo: $r"
r=$(D peer-b apply-loss veth-b 100% 2>&1)
case "$r" in
*"veth-b carries this SSH session"*"refused"*"--force"*)
	[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && pass "100% loss on the session's interface refused without --force, nothing changed" \
		|| fail "refusal changed veth-b";;
*) fail "100% loss: $r";;
esac
r=$(D peer-b apply veth-b 20mbit 2>&1)
case "$r" in *"WARNING: veth-b on peer-b carries this SSH session"*) pass "rate on the session's interface: applied with a warning";; *) fail "warning: $r";; esac
D peer-b clear veth-b >/dev/null 2>&1
# --exclude-ssh: shape everything but the session (u32 to the unshaped class)
r=$(D --exclude-ssh peer-b apply veth-b 1mbit 2>&1)
if [ "$r" = applied ] && inb tc -j qdisc show dev veth-b | grep -q '"kind":"htb"' &&
   inb tc filter show dev veth-b | grep -q "flowid 1:2"; then
	pass "--exclude-ssh: htb default 1:1 (1mbit), SSH flow to 1:2"
else
	fail "exclude-ssh: $r / $(inb tc filter show dev veth-b | head -3)"
fi
D peer-b clear veth-b >/dev/null 2>&1
# the session itself stays fast under 8 kbit/s: 5 link listings (~1.2 KB
# each, ~6 s if shaped) on the session that applied the dial
r=$(D --exclude-ssh peer-b apply-time veth-b 8kbit 5 2>&1)
ms=${r#ms }
case "$r" in "ms "*) [ "$ms" -lt 1500 ] && pass "SSH flow excluded: 5 listings in $ms ms over an 8 kbit/s dial" || fail "excluded flow slow: $ms ms";;
*) fail "apply-time: $r";; esac
D peer-b clear veth-b >/dev/null 2>&1
[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && pass "clear after --exclude-ssh -> noqueue" || fail "clear exclude: $(root_kind "$LL_NS_B" veth-b)"

# --- nothing left behind after a normal session -------------------------------
r=$(D peer-b apply-server veth-b 30mbit 2>&1)
left="$(b_iperf3 sleep)$(b_iperf3 iperf3)$(b_iperf3 cat)$(b_iperf3 linklab)"
case "$r" in "applied, server on "*) [ -z "$left" ] && pass "normal quit: no revert timer, server or watchdog left on the peer" || fail "left on the peer: $left";;
*) fail "apply-server: $r";; esac
D peer-b clear veth-b >/dev/null 2>&1

# --- kill the session (sshd's child for our connection) --------------------
# the local port of the SSH connection of process $1 (in A)
client_port_of() {
	for p in $1 $(pgrep -P $1) $(for c in $(pgrep -P $1); do pgrep -P $c; done); do
		ina ss -tnp state established "( dport = :22 )" 2>/dev/null | grep "pid=$p," |
			awk '{split($3,a,":"); print a[length(a)]}' | head -1
	done | head -1
}
# our connection's sshd: a child of the lab sshd whose peer port is ours
sshd_child_of_port() {
	for p in $(pgrep -P "$(cat "$LL_LAB_DIR/sshd.pid")" sshd); do
		inb ss -tnp 2>/dev/null | grep "pid=$p," | grep -q ":$1 " && { echo "$p"; return; }
	done
}
# mid-apply: the driver holds 3 s between the change and its confirmation
# (LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS); the session is killed there
ina env LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=3000 "$DRV" -F "$LL_SSH_CONFIG" --revert-after 4 peer-b apply veth-b 1kbit > "$T/mid.out" 2>&1 &
DPID=$!
# the session's sshd child is found while the driver connects, so that only
# the wait for B's change stands between it and the kill (a busy host)
port=; i=0; while [ -z "$port" ] && [ $i -lt 100 ]; do port=$(client_port_of $DPID); [ -n "$port" ] || sleep 0.05; i=$((i+1)); done
child=$(sshd_child_of_port "$port")
i=0; while [ "$(root_kind "$LL_NS_B" veth-b)" != tbf ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
if [ -n "$child" ] && [ "$(root_kind "$LL_NS_B" veth-b)" = tbf ] && kill -0 $DPID 2>/dev/null; then
	kill -9 "$child"
	t0=$(date +%s)
	i=0; while [ "$(root_kind "$LL_NS_B" veth-b)" != noqueue ] && [ $i -lt 80 ]; do sleep 0.1; i=$((i+1)); done
	dt=$(( $(date +%s) - t0 ))
	if [ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && [ $dt -le 6 ]; then
		pass "session killed mid-apply: the peer reverted by its timer (${dt}s, timer 4 s)"
	else
		fail "no revert after killing the session: $(root_kind "$LL_NS_B" veth-b) after ${dt}s"
	fi
	wait $DPID
	grep -Eq "session lost (while applying to|before the change to) veth-b.*the peer restores the original within 4 s" "$T/mid.out" &&
		pass "the CLI reports the lost session and the pending revert" || fail "mid-apply report: $(cat "$T/mid.out")"
	eventually 30 absent $JDIR/remote-$NSID-veth-b.tc.json && pass "the revert removed the journal" || fail "journal left after the revert"
else
	wait $DPID
	fail "mid-apply: session not caught mid-apply (port $port child $child kind $(root_kind "$LL_NS_B" veth-b)): $(cat "$T/mid.out")"
fi
inb tc qdisc del dev veth-b root 2>/dev/null
# mid-test: the server's watchdog ends it with the session. The server is
# linklab serve when the peer finds linklab on its PATH (the lab puts the
# tree's build/ there), else iperf3: look for either.
b_server() { b_iperf3 iperf3; b_iperf3 linklab; }
: > "$T/hold.out"
PATH=/usr/bin:/bin D peer-b server-hold 30 > "$T/hold.out" 2>&1 &
DPID=$!
i=0; while ! grep -q '^port ' "$T/hold.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
port=$(client_port_of $DPID)
child=$(sshd_child_of_port "$port")
if [ -n "$(b_server)" ] && [ -n "$child" ]; then
	kill -9 "$child"
	i=0; while [ -n "$(b_server)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	[ -z "$(b_server)" ] && pass "session killed mid-test: the peer's test server ended with it" || fail "iperf3 left after the session died: $(b_server)"
else
	fail "mid-test: server $(b_server) child $child: $(cat "$T/hold.out")"
fi
kill $DPID 2>/dev/null; wait $DPID 2>/dev/null

# --- apply --split: the halves add back to the value given --------------------
r=$(ina "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --split --delay 1ns --exclude-ssh --dry-run -J 2>&1); rc=$?
ab=$(echo "$r" | python3 -c '
import json,sys
d=json.load(sys.stdin)
def dl(side):
    t=" ".join(d[side]["commands"])
    for w in ("--delay 1ns", "delay 1ns"):
        if w in t: return "1ns"
    return "0ns"
print(dl("a"), dl("b"))' 2>&1)
if [ $rc = 0 ] && [ "$ab" = "1ns 0ns" ]; then
	pass "apply --split --delay 1ns: A 1ns, B 0ns (they add back to 1ns, no longer 0ns + 0ns)"
else
	fail "apply --split --delay 1ns (rc $rc): $ab / $r"
fi
ka0=$(root_kind "$LL_NS_A" veth-a); kb0=$(root_kind "$LL_NS_B" veth-b)
r=$(ina "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer peer-b --split --delay 1ns --jitter 3ns --exclude-ssh 2>&1); rc=$?
if [ $rc = 2 ] && echo "$r" | grep -q "split: B's half of the dial: jitter 1ns needs a delay" &&
   [ "$(root_kind "$LL_NS_A" veth-a)" = "$ka0" ] && [ "$(root_kind "$LL_NS_B" veth-b)" = "$kb0" ]; then
	pass "apply --split leaving B jitter without delay: refused naming the side, nothing applied"
else
	fail "apply --split --delay 1ns --jitter 3ns (rc $rc): $r"
fi

# --- --peer-data, offloads and TCP sysctls on both peers -------------------
r=$(ina timeout 30 "$LINKLAB" test -F "$LL_SSH_CONFIG" --peer peer-b --peer-data fd99::2 -t 1 -J 2>&1 |
	python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["start"]["connected"][0]; print(c["remote_host"], d["end"]["sum_received"]["bits_per_second"] > 0)' 2>&1)
[ "$r" = "fd99::2 True" ] && pass "--peer-data fd99::2: SSH to $LL_ADDR_B, test traffic to fd99::2" || fail "--peer-data: $r"
if command -v ethtool >/dev/null; then
	a0=$(ina ethtool -k veth-a | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	b0=$(inb ethtool -k veth-b | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	r=$(ina "$LINKLAB" offload -F "$LL_SSH_CONFIG" --peer peer-b all off 2>&1)
	b1=$(inb ethtool -k veth-b | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	a1=$(ina ethtool -k veth-a | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	if echo "$r" | grep -q "^A (this host) veth-a: tso off gso off gro off" && echo "$r" | grep -q "^B (peer-b) veth-b: tso off gso off gro off" &&
	   [ "$a1" = "off off off " ] && [ "$b1" = "off off off " ]; then
		pass "offload all off on both peers (ioctl here, ethtool -K over SSH; ethtool -k confirms)"
	else
		fail "offload off: $r / A $a1 B $b1"
	fi
	ina "$LINKLAB" offload -F "$LL_SSH_CONFIG" --peer peer-b tso on >/dev/null 2>&1
	r=$(ina "$LINKLAB" offload -F "$LL_SSH_CONFIG" --peer peer-b --restore 2>&1)
	a2=$(ina ethtool -k veth-a | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	b2=$(inb ethtool -k veth-b | grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload:' | cut -d' ' -f2 | tr '\n' ' ')
	[ "$a2" = "$a0" ] && [ "$b2" = "$b0" ] && pass "offload --restore: both peers back to the first originals ($a0)" || fail "offload restore: A $a2 (was $a0) B $b2 (was $b0): $r"
else
	skip "ethtool not installed: offloads over SSH not exercised"
fi
sa0=$(ina cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
sb0=$(inb cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
r=$(ina "$LINKLAB" sysctl -F "$LL_SSH_CONFIG" --peer peer-b tcp_rmem=4096,65536,1000000 net.ipv4.tcp_congestion_control=reno 2>&1)
sb1=$(inb cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
sa1=$(ina cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
[ "$sa1" = "4096 65536 1000000 reno " ] && [ "$sb1" = "4096 65536 1000000 reno " ] &&
	pass "sysctl tcp_rmem and congestion control set on both peers" || fail "sysctl set: A $sa1 B $sb1: $r"
r=$(ina "$LINKLAB" sysctl -F "$LL_SSH_CONFIG" --peer peer-b 'tcp_congestion_control=$(id)' 2>&1); rc=$?
[ $rc = 2 ] && echo "$r" | grep -q "not a congestion control name" && pass "sysctl value checked before anything runs" || fail "bad sysctl value: rc $rc $r"
# a congestion control the kernel does not have: found on both peers before
# anything is written (tcp_adv_win_scale given first stays as it was)
wa0=$(ina cat /proc/sys/net/ipv4/tcp_adv_win_scale); wb0=$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)
r=$(ina "$LINKLAB" sysctl -F "$LL_SSH_CONFIG" --peer peer-b tcp_adv_win_scale=3 tcp_congestion_control=nosuchcc 2>&1); rc=$?
if [ $rc = 2 ] && [ "$(echo "$r" | grep -c '"nosuchcc" is not in this kernel.s tcp_available_congestion_control (')" = 2 ] &&
   echo "$r" | grep -q '^linklab sysctl: A (this host):' && echo "$r" | grep -q '^linklab sysctl: B (peer-b):' &&
   echo "$r" | grep -q "nothing was changed" &&
   [ "$(ina cat /proc/sys/net/ipv4/tcp_adv_win_scale)" = "$wa0" ] && [ "$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)" = "$wb0" ]; then
	pass "sysctl tcp_congestion_control=nosuchcc: refused on both peers before any write, exit 2"
else
	fail "sysctl unavailable cc (rc $rc): $r"
fi
ina "$LINKLAB" sysctl -F "$LL_SSH_CONFIG" --peer peer-b --restore >/dev/null 2>&1
sa2=$(ina cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
sb2=$(inb cat /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_congestion_control | tr -s '\t\n' '  ')
[ "$sa2" = "$sa0" ] && [ "$sb2" = "$sb0" ] && pass "sysctl --restore: both peers back ($sb0)" || fail "sysctl restore: A $sa2 B $sb2"
ls $JDIR/tune-remote-$NSID.txt >/dev/null 2>&1 && fail "remote tune journal left" || pass "tune journals removed by --restore"

# clear --all on B after a crash: every journal of B's netns and the tune
# journal restored (the process that applied them was killed -9)
ina "$DRV" -F "$LL_SSH_CONFIG" peer-b apply-wait veth-b 20mbit 30 > "$T/crash.out" 2>&1 &
DPID=$!
i=0; while ! grep -q '^applied' "$T/crash.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -9 $DPID; wait $DPID 2>/dev/null
ina "$LINKLAB" sysctl -F "$LL_SSH_CONFIG" --peer peer-b --remote tcp_adv_win_scale=3 >/dev/null 2>&1
r=$(ina "$LINKLAB" clear -F "$LL_SSH_CONFIG" --peer peer-b --remote --all 2>&1)
if [ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && [ "$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)" = 1 ] &&
   ! ls $JDIR/remote-$NSID-veth-b.tc.json >/dev/null 2>&1; then
	pass "clear --all after kill -9: B's qdisc and sysctls restored, journals gone"
else
	fail "clear --all on B: $r / $(root_kind "$LL_NS_B" veth-b) adv $(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)"
fi

# --- --hold (console mode): the peer restores when the session dies
: > "$T/hold2.out"
ina "$DRV" -F "$LL_SSH_CONFIG" --hold peer-b apply-wait veth-b 20mbit 30 > "$T/hold2.out" 2>&1 &
DPID=$!
i=0; while ! grep -q '^applied' "$T/hold2.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
port=$(client_port_of $DPID)
child=$(sshd_child_of_port "$port")
if [ "$(root_kind "$LL_NS_B" veth-b)" = tbf ] && [ -n "$child" ]; then
	kill -9 "$child"
	t0=$(date +%s%N)
	i=0; while [ "$(root_kind "$LL_NS_B" veth-b)" != noqueue ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] && pass "hold: session killed after a confirmed apply -> the guard restored the peer in $ms ms" \
		|| fail "hold: not restored after the session died: $(root_kind "$LL_NS_B" veth-b)"
	eventually 30 absent $JDIR/remote-$NSID-veth-b.tc.json && pass "hold: the guard removed the journal" || fail "hold: journal left"
else
	fail "hold: apply-wait $(cat "$T/hold2.out") child $child"
fi
kill $DPID 2>/dev/null; wait $DPID 2>/dev/null
inb tc qdisc del dev veth-b root 2>/dev/null
# the guard also replays the offload/sysctl journal
: > "$T/hold3.out"
ina "$DRV" -F "$LL_SSH_CONFIG" --hold peer-b sysctl-wait tcp_adv_win_scale 4 30 > "$T/hold3.out" 2>&1 &
DPID=$!
i=0; while ! grep -q '^set' "$T/hold3.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
port=$(client_port_of $DPID)
child=$(sshd_child_of_port "$port")
if [ "$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)" = 4 ] && [ -n "$child" ]; then
	kill -9 "$child"
	i=0; while [ "$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)" != 1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	[ "$(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)" = 1 ] && ! ls $JDIR/tune-remote-$NSID.txt >/dev/null 2>&1 &&
		pass "hold: session killed after a sysctl change -> the guard put tcp_adv_win_scale back" ||
		fail "hold sysctl: $(inb cat /proc/sys/net/ipv4/tcp_adv_win_scale)"
else
	fail "hold sysctl: $(cat "$T/hold3.out") child $child"
fi
kill $DPID 2>/dev/null; wait $DPID 2>/dev/null
inb sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_adv_win_scale'
r=$(D --hold peer-b apply-wait veth-b 20mbit 0 2>&1)
sleep 0.5
# guards in B's namespace only (other suites may run side by side)
guards=$(for p in $(pgrep -f 'linklab-guard$'); do [ "$(stat -L -c %i /proc/$p/ns/net 2>/dev/null)" = "$NSID" ] && echo "$p"; done | wc -l)
[ "$r" = applied ] && [ "$(root_kind "$LL_NS_B" veth-b)" = tbf ] && [ "$guards" = 0 ] &&
	pass "hold: a normal close disarms the guard (the dial stays, no guard process left)" || fail "hold normal close: $r kind $(root_kind "$LL_NS_B" veth-b) guards $guards"
D peer-b clear veth-b >/dev/null 2>&1

# --- ProxyJump (ssh -W through the jump, our session end to end) -------------
cp "$LL_SSH_CONFIG" "$T/jump_config"
printf 'Host via-b\n  HostName %s\n  User root\n  IdentityFile %s\n  UserKnownHostsFile %s\n  ProxyJump peer-b\n' \
	"$LL_ADDR_B" "$LL_LAB_DIR/id_ed25519" "$LL_LAB_DIR/known_hosts" >> "$T/jump_config"
: > "$T/jump.out"
ina "$DRV" -F "$T/jump_config" via-b server-hold 3 > "$T/jump.out" 2>&1 &
DPID=$!
i=0; while ! grep -q '^port ' "$T/jump.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
fwd=$(inb ss -tn state established "( dport = :22 )" 2>/dev/null | awk -v b="$LL_ADDR_B" 'NR>1 && index($4, b":")==1' | wc -l)
wait $DPID
if grep -q '^port ' "$T/jump.out" && [ "$fwd" -ge 1 ]; then
	pass "ProxyJump peer-b: session to $LL_ADDR_B:22 opened from the jump host itself (ssh -W), test server started"
else
	fail "ProxyJump: fwd=$fwd $(cat "$T/jump.out")"
fi
r=$(ina "$DRV" -F "$T/jump_config" via-b links 2>&1 | grep -c '^veth-b|')
[ "$r" = 1 ] && pass "ProxyJump: links over the jumped session" || fail "ProxyJump links: $r"
[ -z "$(ps -eo pid=,args= | grep -F -- "-W $LL_ADDR_B:22" | grep -v grep)" ] && pass "ProxyJump helper (ssh -W) gone after close" || fail "ssh -W helper left running"

# --- scoped and ingress dials applied remotely (the linklab CLI) ----------
# read back over SSH equal to what the local backend reads for the same dial
# in A; clear leaves noqueue, no ingress qdisc, no IFB, no journal
if [ ! -x "$LLB" ]; then
	skip "scoped/ingress over SSH: cannot build $LLB ($(tail -1 "$T/make-ll.log"))"
else
	L() { ina "$LLB" "$@"; }
	LR() { c=$1; shift; ina "$LLB" "$c" -F "$LL_SSH_CONFIG" --peer peer-b --remote "$@"; }
	readback() { sed -n "s/^$1[^:]*: //p"; }   # the part after "LABEL DEV ...: "
	IFBB=
	b_clean() {   # noqueue root, no ingress qdisc, no llifb link, no journal of veth-b
		[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] &&
		! inb tc qdisc show dev veth-b | grep -q '^qdisc ingress' &&
		! inb ip -br link | grep -q '^llifb' &&
		! ls $JDIR/remote-$NSID-veth-b.* >/dev/null 2>&1
	}
	b_clean && pass "B veth-b clean before the scoped/ingress checks" || fail "B veth-b not clean: $(inb tc qdisc show; ls $JDIR)"
	# scoped: --dport 5201 -> htb 1:, class 1:1 10Mbit, u32 filters
	la=$(L apply --dev veth-a --rate 10mbit --dport 5201 2>"$T/la.err" | readback 'A (this host) veth-a')
	lb=$(LR apply --rate 10mbit --dport 5201 2>"$T/lb.err" | readback 'B (peer-b) veth-b')
	if [ -n "$lb" ] && [ "$la" = "$lb" ] && [ "$lb" = "htb rate 10mbit burst 5000b (only dport 5201)" ]; then
		pass "scoped dial over SSH reads back as the local one: $lb"
	else
		fail "scoped read-back: local '$la' remote '$lb' $(cat "$T/lb.err")"
	fi
	inb tc class show dev veth-b | grep -q '^class htb 1:1 .*rate 10Mbit' &&
	[ "$(inb tc -j filter show dev veth-b parent 1: | grep -o '"flowid":"1:1"' | wc -l)" = 2 ] &&
		pass "B veth-b holds htb class 1:1 10Mbit and two u32 filters to 1:1" ||
		fail "B scoped state: $(inb tc class show dev veth-b) $(inb tc filter show dev veth-b parent 1:)"
	# ingress: IFB, ingress qdisc, mirred, tbf on the IFB
	la=$(L apply --dev veth-a --rate 10mbit --direction ingress 2>"$T/la.err" | readback 'A (this host) veth-a ingress via llifb[0-9a-f]*')
	lb=$(LR apply --rate 10mbit --direction ingress 2>"$T/lb.err" | readback 'B (peer-b) veth-b ingress via llifb[0-9a-f]*')
	IFBB=$(inb ip -br link | awk '/^llifb/{print $1}')
	if [ -n "$lb" ] && [ "$la" = "$lb" ] && [ "$lb" = "tbf rate 10mbit burst 5000b limit 67500b" ]; then
		pass "ingress dial over SSH reads back as the local one: $lb"
	else
		fail "ingress read-back: local '$la' remote '$lb' $(cat "$T/lb.err")"
	fi
	inb tc qdisc show dev veth-b | grep -q '^qdisc ingress ffff:' && [ -n "$IFBB" ] &&
	inb tc -j qdisc show dev "$IFBB" | grep -q '"kind":"tbf"' &&
	[ "$(cat $JDIR/remote-$NSID-veth-b.ifb 2>/dev/null)" = "$IFBB" ] &&
		pass "B: ingress qdisc on veth-b, $IFBB holds the tbf, IFB journalled in $JDIR" ||
		fail "B ingress state: ifb '$IFBB' $(inb tc qdisc show) $(ls $JDIR)"
	LR clear > "$T/clr" 2>&1
	b_clean && pass "remote clear after scoped+ingress: noqueue, no ingress qdisc, no IFB, no journal" ||
		fail "remote clear left: $(cat "$T/clr") $(inb tc qdisc show) $(inb ip -br link) $(ls $JDIR)"
	L clear --local --dev veth-a >/dev/null 2>&1
	# an ingress qdisc linklab did not create: refused, nothing changed
	inb tc qdisc add dev veth-b ingress
	if ! LR apply --rate 10mbit --direction ingress > "$T/busy" 2>&1 && grep -q 'ingress qdisc linklab did not create' "$T/busy" &&
	   ! inb ip -br link | grep -q '^llifb' && ! ls $JDIR/remote-$NSID-veth-b.* >/dev/null 2>&1 &&
	   inb tc qdisc show dev veth-b | grep -q '^qdisc ingress'; then
		pass "foreign ingress qdisc on B: refused, no IFB, no journal, theirs kept"
	else
		fail "foreign ingress: $(cat "$T/busy") $(inb ip -br link) $(ls $JDIR)"
	fi
	inb tc qdisc del dev veth-b ingress
	# the revert timer fires before the confirmation (held 5 s, timer 2 s):
	# it removes the IFB too; the failed apply leaves nothing
	if ! LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS=5000 LR apply --rate 10mbit --direction ingress --revert-after 2 > "$T/rev" 2>&1 &&
	   grep -q 'revert timer fired before the change was confirmed' "$T/rev" && b_clean; then
		pass "ingress apply whose revert timer fired: said so; IFB, ingress qdisc and journal gone"
	else
		fail "ingress revert timer: $(cat "$T/rev") $(inb tc qdisc show) $(inb ip -br link) $(ls $JDIR)"
	fi
	# kill -9 style leftovers: clear --all removes an IFB journalled on the peer
	LR apply --rate 10mbit --direction ingress >/dev/null 2>&1
	LR clear --all > "$T/all" 2>&1
	b_clean && pass "clear --all on B removes the IFB and its ingress qdisc" ||
		fail "clear --all: $(cat "$T/all") $(inb tc qdisc show) $(inb ip -br link) $(ls $JDIR)"
fi

# --- hostile and odd input: known_hosts markers, IdentitiesOnly, RSA, exit
# codes, a failing session, escapes in B's interface names -----------------
HK=$(cut -d' ' -f1,2 "$LL_LAB_DIR/ssh_host_ed25519_key.pub")
{ echo "@revoked * $HK"; cat "$LL_LAB_DIR/known_hosts"; } > "$T/kh_rev"
r=$(D --known-hosts "$T/kh_rev" peer-b connect 2>&1)
if case "$r" in *"is marked @revoked in $T/kh_rev:1; refusing to connect"*) true;; *) false;; esac &&
   ! ina ssh -F "$LL_SSH_CONFIG" -o UserKnownHostsFile="$T/kh_rev" peer-b true 2>/dev/null; then
	pass "@revoked host key (next to a valid line): refused, naming file:line (OpenSSH refuses too)"
else
	fail "@revoked: $r"
fi
echo "@revoked $LL_ADDR_B $HK" > "$T/kh_rev2"
cp "$T/kh_rev2" "$T/kh_rev2.orig"
r=$(D --known-hosts "$T/kh_rev2" --accept-new peer-b connect 2>&1)
case "$r" in *"@revoked"*"never adding it"*)
	cmp -s "$T/kh_rev2" "$T/kh_rev2.orig" && pass "--accept-new never appends a revoked key (file unchanged)" ||
		fail "--accept-new appended to a file with the key revoked: $(cat "$T/kh_rev2")";;
*) fail "@revoked + --accept-new: $r";; esac
echo "@cert-authority *.example $(cut -d' ' -f1,2 "$T/other.pub")" > "$T/kh_ca"
r=$(D --known-hosts "$T/kh_ca" peer-b connect 2>&1)
case "$r" in *"is not known"*"1 @cert-authority line, first at $T/kh_ca:1, ignored: host certificates are not supported"*)
	pass "@cert-authority line: said to be unsupported, the key stays unknown";; *) fail "@cert-authority: $r";; esac

# IdentitiesOnly yes: an agent holding the authorised lab key, the config
# naming another key: OpenSSH does not offer the agent's key, nor do we
sed -e "s|IdentityFile .*|IdentityFile $T/other|" "$LL_SSH_CONFIG" > "$T/cfg_io"
grep -q 'IdentitiesOnly yes' "$T/cfg_io" || echo "  IdentitiesOnly yes" >> "$T/cfg_io"
sed -e 's/IdentitiesOnly yes/IdentitiesOnly no/' "$T/cfg_io" > "$T/cfg_noio"
AGENT_OUT=$(ina ssh-agent -s -a "$T/agent2.sock")
AGENT2_PID=$(echo "$AGENT_OUT" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
ina env SSH_AUTH_SOCK="$T/agent2.sock" ssh-add "$LL_LAB_DIR/id_ed25519" >/dev/null 2>&1
r=$(ina env SSH_AUTH_SOCK="$T/agent2.sock" "$DRV" -F "$T/cfg_io" --no-prompt peer-b connect 2>&1)
r2=$(ina env SSH_AUTH_SOCK="$T/agent2.sock" "$DRV" -F "$T/cfg_noio" --no-prompt peer-b connect 2>&1)
if case "$r" in *"agent (1 key not offered: IdentitiesOnly yes and not an IdentityFile)"*"publickey ssh-ed25519 $T/other (refused by the server)"*) true;; *) false;; esac &&
   [ "$r2" = "connected B (peer-b)" ] &&
   ! ina env SSH_AUTH_SOCK="$T/agent2.sock" ssh -F "$T/cfg_io" peer-b true 2>/dev/null; then
	pass "IdentitiesOnly yes: the agent's other key is not offered (as OpenSSH); with 'no' it is"
else
	fail "IdentitiesOnly: yes -> $r / no -> $r2"
fi
# IdentityFile names only a .pub (private key in the agent only, as OpenSSH allows)
cp "$LL_LAB_DIR/id_ed25519.pub" "$T/agentonly.pub"
sed -e "s|IdentityFile .*|IdentityFile $T/agentonly|" "$T/cfg_io" > "$T/cfg_pub"
r=$(ina env SSH_AUTH_SOCK="$T/agent2.sock" "$DRV" -F "$T/cfg_pub" --no-prompt peer-b connect 2>&1)
[ "$r" = "connected B (peer-b)" ] && pass "IdentitiesOnly yes: the agent key matching the IdentityFile's .pub is offered" ||
	fail "IdentitiesOnly with the listed key in the agent: $r"
[ -n "$AGENT2_PID" ] && kill "$AGENT2_PID" 2>/dev/null

# an RSA key against OpenSSH >= 8.8
ssh-keygen -q -t rsa -b 2048 -N '' -C ll-rsa -f "$T/rsa" >/dev/null
cat "$T/rsa.pub" >> "$LL_LAB_DIR/authorized_keys"
r=$(DN --no-prompt --ssh-key "$T/rsa" root@$LL_ADDR_B connect 2>&1)
lv=$(pkg-config --modversion libssh2)
case "$lv" in
1.[0-9].*|1.10.*)
	case "$r" in *"publickey ssh-rsa $T/rsa (refused by the server; libssh2 $lv signs RSA only with SHA-1 ssh-rsa, refused by OpenSSH >= 8.8: use an ed25519/ECDSA key or libssh2 >= 1.11)"*)
		pass "RSA key with libssh2 $lv: refused, and the message says why and what works";;
	*) fail "RSA key: $r";; esac;;
*)
	[ "$r" = "connected B (root@$LL_ADDR_B)" ] && pass "RSA key with libssh2 $lv: rsa-sha2 signature accepted" || fail "RSA key ($lv): $r";;
esac

# a tc on B that exits 7: the real code is reported (a second sshd whose
# PATH starts with a fake tc that refuses 'qdisc del')
mkdir -p "$T/fakebin"
printf '#!/bin/sh\ncase "$*" in "qdisc replace dev "*) echo "fake tc: replace refused" >&2; exit 7;; esac\nexec %s "$@"\n' \
	"$(command -v tc)" > "$T/fakebin/tc"; chmod +x "$T/fakebin/tc"
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2226 -o PidFile="$T/sshd6.pid" -E "$T/sshd6.log" \
	-o "SetEnv=PATH=$T/fakebin:/usr/sbin:/usr/bin:/sbin:/bin"
i=0; while [ ! -s "$T/sshd6.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
echo "[$LL_ADDR_B]:2226 $HK" > "$T/kh6"
D6() { ina env -u SSH_AUTH_SOCK "$DRV" --known-hosts "$T/kh6" --ssh-key "$LL_LAB_DIR/id_ed25519" root@$LL_ADDR_B:2226 "$@"; }
r=$(D6 apply veth-b 10mbit 2>&1)
case "$r" in *"exit 7"*"fake tc: replace refused"*) pass "remote tc exiting 7: 'exit 7' reported with its message";; *) fail "exit code: $r";; esac
D6 clear veth-b >/dev/null 2>&1
[ -s "$T/sshd6.pid" ] && kill "$(cat "$T/sshd6.pid")" 2>/dev/null
D peer-b clear veth-b >/dev/null 2>&1
[ "$(root_kind "$LL_NS_B" veth-b)" = noqueue ] || fail "veth-b not restored after the exit-7 check"

# a session whose commands all fail (ForceCommand /bin/false): the SSH
# error is reported, not "no interface ... give --peer-dev"
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2225 -o PidFile="$T/sshd5.pid" -E "$T/sshd5.log" \
	-o ForceCommand=/bin/false
i=0; while [ ! -s "$T/sshd5.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
echo "[$LL_ADDR_B]:2225 $HK" > "$T/kh5"
if [ -x "$LLB" ]; then
	r=$(ina env -u SSH_AUTH_SOCK "$LLB" show --peer root@$LL_ADDR_B:2225 --ssh-key "$LL_LAB_DIR/id_ed25519" --known-hosts "$T/kh5" 2>&1)
	case "$r" in *"no interface"*) fail "failed session reported as no interface: $r";;
	*"the SSH session failed: ssh root@$LL_ADDR_B:2225: the peer sent no exit status"*)
		pass "failed SSH session: its error is reported, not 'give --peer-dev'";;
	*) fail "failed session: $r";; esac
else
	skip "failed-session check: the linklab binary did not build"
fi
[ -s "$T/sshd5.pid" ] && kill "$(cat "$T/sshd5.pid")" 2>/dev/null

# escapes in B's interface names reach the terminal made visible
if inb ip link add "e$(printf '\033')]2;PWN$(printf '\007')" type veth peer name "f$(printf '\033')[2J" 2>/dev/null && [ -x "$LLB" ]; then
	ina "$LLB" links -F "$LL_SSH_CONFIG" --peer peer-b > "$T/esc.out" 2>&1
	ina "$LLB" show -F "$LL_SSH_CONFIG" --peer peer-b --peer-dev "f$(printf '\033')[2J" >> "$T/esc.out" 2>&1
	if grep -q 'e\\x1b\]2;PWN\\x07' "$T/esc.out" && grep -q 'f\\x1b\[2J' "$T/esc.out" &&
	   ! grep -q "$(printf '\033')" "$T/esc.out" && ! grep -q "$(printf '\007')" "$T/esc.out"; then
		pass "B's interface names with ESC/BEL: links and show print \\x1b/\\x07, no raw control byte"
	else
		fail "escapes from B: $(od -c "$T/esc.out" | head -8)"
	fi
	inb ip link del "e$(printf '\033')]2;PWN$(printf '\007')" 2>/dev/null
else
	skip "escaped interface names: ip link add refused the name or linklab did not build"
fi

# B itself puts back what an apply --peer left there (its session cut by the
# dial, say): linklab clear --dev IF run on B restores the recorded tree
if [ -x "$LLB" ]; then
	inb tc qdisc replace dev veth-b root tbf rate 7mbit burst 10k latency 50ms
	rr0=$(inb tc qdisc show dev veth-b)
	if ina "$LLB" apply -F "$LL_SSH_CONFIG" --peer peer-b --remote --rate 3mbit > "$T/rr.out" 2>&1 &&
	   [ -f "$JDIR/remote-$NSID-veth-b.tc.json" ] &&
	   inb "$LLB" clear --dev veth-b > "$T/rr2.out" 2>&1 &&
	   grep -q "restored from the record a remote apply left" "$T/rr2.out" &&
	   [ "$(inb tc qdisc show dev veth-b)" = "$rr0" ] && [ ! -f "$JDIR/remote-$NSID-veth-b.tc.json" ]; then
		pass "clear --dev on B puts back what an apply --peer recorded there (tbf 7mbit again), record gone"
	else
		fail "clear on B of a remote record: $(cat "$T/rr.out" "$T/rr2.out"); now $(inb tc qdisc show dev veth-b), was $rr0"
	fi
	inb tc qdisc del dev veth-b root 2>/dev/null
	rm -f "$JDIR/remote-$NSID-veth-b".*
fi

# a console-like idle session (keepalives only) against an sshd that drops a
# client after 2 unanswered ClientAlive probes 3 s apart: 17 s idle is nearly
# three times that bound and past linklab's own 15 s keepalive (alone:
# the checks above kill sessions by port)
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2223 -o PidFile="$T/sshd3.pid" \
	-o ClientAliveInterval=3 -o ClientAliveCountMax=2 -E "$T/sshd3.log"
i=0; while [ ! -s "$T/sshd3.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
cp "$LL_LAB_DIR/known_hosts" "$T/kh_idle"
echo "[$LL_ADDR_B]:2223 $(cut -d' ' -f1,2 "$LL_LAB_DIR/ssh_host_ed25519_key.pub")" >> "$T/kh_idle"
r=$(D --known-hosts "$T/kh_idle" --ssh-key "$LL_LAB_DIR/id_ed25519" root@$LL_ADDR_B:2223 idle 17 2>&1)
[ "$r" = "alive after 17 s idle" ] &&
	pass "17 s idle with ssh_keepalive only (sshd ClientAliveInterval 3, CountMax 2): the session still answers" ||
	fail "idle session: $r"
[ -s "$T/sshd3.pid" ] && kill "$(cat "$T/sshd3.pid")" 2>/dev/null

summary ssh
