#!/bin/sh
# SPDX-License-Identifier: MIT
# ssh.sh - the remote peer backend against a real sshd in the lab's peer B:
#  links/route over SSH, tbf applied remotely and read back with tc -j in B,
#  clear restores noqueue (and a non-default original), host-key refusal
#  (changed, unknown) and accept-new, hostile interface names, test server,
#  netem refused with the modprobe hint when the kernel lacks it.
#  Issue 5: passphrase keys (prompt, CLI askpass), ssh-agent, password prompt,
#  key types in failures; the session's own interface (refusal, warning,
#  --exclude-ssh); nothing left after a normal quit; sshd child killed
#  mid-apply / mid-test / under --hold; clear --all; --peer-data; offloads
#  and sysctls on both peers; ProxyJump; a 50 s idle session.
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

EMPTYH="$T/emptyhome"; mkdir -p "$EMPTYH"
ssh-keygen -q -t ed25519 -N 'sekrit pass' -C ll-pass -f "$T/pkey" >/dev/null
ssh-keygen -q -t ecdsa -N '' -C ll-unauth -f "$T/ukey" >/dev/null
cat "$T/pkey.pub" >> "$LL_LAB_DIR/authorized_keys"
KH="--known-hosts $LL_LAB_DIR/known_hosts"
DN() { ina env -u SSH_AUTH_SOCK HOME="$EMPTYH" "$DRV" $KH "$@"; }
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
printf '#!/bin/sh\ncase "$*" in "qdisc del dev "*) echo "fake tc: del refused" >&2; exit 7;; esac\nexec %s "$@"\n' \
	"$(command -v tc)" > "$T/fakebin/tc"; chmod +x "$T/fakebin/tc"
inb /usr/sbin/sshd -f "$LL_LAB_DIR/sshd_config" -o Port=2226 -o PidFile="$T/sshd6.pid" -E "$T/sshd6.log" \
	-o "SetEnv=PATH=$T/fakebin:/usr/sbin:/usr/bin:/sbin:/bin"
i=0; while [ ! -s "$T/sshd6.pid" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
echo "[$LL_ADDR_B]:2226 $HK" > "$T/kh6"
D6() { ina env -u SSH_AUTH_SOCK "$DRV" --known-hosts "$T/kh6" --ssh-key "$LL_LAB_DIR/id_ed25519" root@$LL_ADDR_B:2226 "$@"; }
D6 apply veth-b 10mbit >/dev/null 2>&1
r=$(D6 clear veth-b 2>&1)
case "$r" in *"failed (exit 7): fake tc: del refused"*) pass "remote tc exiting 7: 'exit 7' reported with its message";; *) fail "exit code: $r";; esac
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

summary ssh-part
