#!/bin/sh
# SPDX-License-Identifier: MIT
# hostile.sh - hostile and odd input, in a private namespace (loopback and a
# veth pair of its own; nothing outside it is touched):
#  - escape sequences from the network: a fake client (fake_iperf3.py)
#    sending ESC/BEL/C1/DEL instead of parameters to `linklab serve`, a fake
#    server answering `linklab test` with them: the log, the error text and
#    -J / --json-stream carry no raw control byte, the JSON parses
#  - interface names and profile descriptions with escapes: links, show,
#    profile list/show print them made visible
#  - profiles: a FIFO and an over-size file in the folder are skipped at
#    once, named with the reason; save --force over a symlink replaces the
#    link, never writes its target
#  - tbf: rates and bursts whose buffer overflows the kernel's 32-bit tick
#    field are refused with the range, nothing applied; 48bit reads back its
#    1514b bucket
#  - an option given twice is refused naming it (all problems at once,
#    nothing applied); apply -J prints one JSON document with "error"
# Ends with "hostile: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
need_root hostile
[ -x "$LINKLAB" ] || { fail "no binary $LINKLAB"; summary hostile; exit 1; }
command -v python3 >/dev/null || { skip "python3 not installed (fake peers)"; summary hostile; exit 0; }
NS="llhost-$$"
FAKE="$LL_REPO/tests/lab/fake_iperf3.py"
T=$(mktemp -d)
export LINKLAB_RUN_DIR="$T/run"
cleanup() {
	for pid in $(ip netns pids "$NS" 2>/dev/null); do kill "$pid" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
ip netns add "$NS" && ip -n "$NS" link set lo up &&
ip -n "$NS" link add vh0 type veth peer name vh1 &&
ip -n "$NS" link set vh0 up && ip -n "$NS" link set vh1 up || {
	fail "namespace and veth"; summary hostile; exit 1; }
inn() { ip netns exec "$NS" "$@"; }
ESC=$(printf '\033'); BEL=$(printf '\007')
# no raw ESC, BEL, C1 (as UTF-8 or a raw byte) or DEL in file $1
clean() { ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177\200-\237]')" "$1" &&
	  ! grep -q "$(printf '\302[\200-\237]')" "$1"; }
root_kind_h() { inn tc -j qdisc show dev "$1" | python3 -c '
import json,sys
q=[x for x in json.load(sys.stdin) if x.get("root")]
print(q[0]["kind"] if q else "none")'; }

# --- escapes from the network ----------------------------------------------
inn "$LINKLAB" serve -p 5391 > "$T/serve.out" 2>&1 &
SPID=$!
i=0; while ! grep -q listening "$T/serve.out" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
inn python3 "$FAKE" client 5391 2> "$T/fake1.err"
sleep 0.5
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
if grep -q 'peer sent invalid JSON: "\\x1b\]2;PWN\\x07\\x1b\[2J\\xc2\\x9b31m\\x7fevil"' "$T/serve.out" && clean "$T/serve.out"; then
	pass "fake client sending ESC/BEL/C1/DEL: serve's log shows them as \\xNN, no raw control byte"
else
	fail "serve log: $(od -c "$T/serve.out" | head -12) / $(cat "$T/fake1.err")"
fi
inn python3 "$FAKE" server 5392 2> "$T/fake2.err" &
FPID=$!
sleep 0.5
inn "$LINKLAB" test -c 127.0.0.1 -p 5392 -t 1 > "$T/test.out" 2>&1
rc=$?
wait "$FPID" 2>/dev/null
if [ $rc = 1 ] && grep -q 'error - peer sent invalid JSON: "\\x1b\]2;PWN\\x07' "$T/test.out" && clean "$T/test.out"; then
	pass "fake server answering with escapes: test's error text made visible, exit 1"
else
	fail "test text (rc $rc): $(od -c "$T/test.out" | tail -8) / $(cat "$T/fake2.err")"
fi
for mode in -J --json-stream; do
	inn python3 "$FAKE" server 5393 2>/dev/null &
	FPID=$!
	sleep 0.5
	inn "$LINKLAB" test -c 127.0.0.1 -p 5393 -t 1 $mode > "$T/test.json" 2> "$T/test.jerr"
	wait "$FPID" 2>/dev/null
	if clean "$T/test.json" && clean "$T/test.jerr" && python3 -c '
import json,sys
lines=open(sys.argv[1]).read()
docs=[json.loads(l) for l in lines.splitlines() if l.strip()] if sys.argv[2]=="--json-stream" else [json.loads(lines)]
err=[d.get("error") or (d.get("data") if d.get("event")=="error" else None) for d in docs]
assert any(e and "PWN" in e for e in err), err
' "$T/test.json" "$mode"; then
		pass "test $mode against the fake server: valid JSON with the error, no raw control byte"
	else
		fail "test $mode: $(head -c 300 "$T/test.json") / $(head -3 "$T/test.jerr")"
	fi
done

# --- interface names with escapes -------------------------------------------
EV="e${ESC}]2;PWN${BEL}"
if inn ip link add "$EV" type veth peer name "f${ESC}[2J"; then
	inn "$LINKLAB" links > "$T/links.out" 2>&1
	inn "$LINKLAB" show --dev "$EV" >> "$T/links.out" 2>&1
	if grep -q 'e\\x1b\]2;PWN\\x07' "$T/links.out" && grep -q 'f\\x1b\[2J' "$T/links.out" && clean "$T/links.out"; then
		pass "interface names with ESC/BEL: links and show print \\x1b / \\x07"
	else
		fail "names: $(od -c "$T/links.out" | head -10)"
	fi
	inn "$LINKLAB" links -J > "$T/links.json" 2>&1
	if clean "$T/links.json" && python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
names=[l["name"] for l in d["a"]["links"]]
assert sys.argv[2] in names, names' "$T/links.json" "$EV"; then
		pass "links -J: the exact name, JSON-escaped (\\u001b), no raw control byte"
	else
		fail "links -J: $(head -c 400 "$T/links.json")"
	fi
	inn ip link del "$EV"
else
	skip "ip link add refused a name with ESC"
fi

# --- profiles ------------------------------------------------------------------
P="$T/profiles"; mkdir -p "$P"
printf '[profile]\ndescription = \033]2;PWN\007\033[2J \302\233 bad\n[dial]\nrate = 10mbit\n' > "$P/evil.ini"
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile list > "$T/plist" 2>&1
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile show evil >> "$T/plist" 2>&1
if grep -q 'evil.*\\x1b\]2;PWN\\x07\\x1b\[2J \\xc2\\x9b bad' "$T/plist" && clean "$T/plist"; then
	pass "profile description with escapes: list and show make them visible"
else
	fail "profile escapes: $(od -c "$T/plist" | head -10)"
fi
rm -f "$P/evil.ini"
# profile show: the schema's order (as `profile fields`), not the file's;
# [a] before [b]; -h says so
printf '[b]\nloss = 2%%\n[dial]\nloss = 1%%\ndelay = 10ms\nrate = 5mbit\n[a]\njitter = 1ms\n' > "$P/order.ini"
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile show order > "$T/porder" 2>&1; rc=$?
got=$(grep -v '^;' "$T/porder" | tr '\n' ' ')
want="[a] rate = 5mbit delay = 10ms jitter = 1ms loss = 1% [b] rate = 5mbit delay = 10ms loss = 2% "
sch=$("$LINKLAB" profile fields | awk '{print $1}' | grep -nxE 'rate|delay|jitter|loss' | cut -d: -f2 | tr '\n' ' ')
if [ $rc = 0 ] && [ "$got" = "$want" ] && [ "$sch" = "rate delay jitter loss " ] &&
   "$LINKLAB" profile -h | grep -q "order of .linklab profile fields. (the schema's), whatever the file's order"; then
	pass "profile show: keys in the schema's order whatever the file's, [a] then [b]; -h says so"
else
	fail "profile show order (rc $rc): '$got' / fields '$sch'"
fi
rm -f "$P/order.ini"
# names with an escape, an accent and wide characters: the next column starts
# at the same screen column on every line (padded after escaping, by width)
for nm in "$(printf 'x\033y')" "caf$(printf '\303\251')" plain "$(printf '\346\227\245\346\234\254')"; do
	printf '[dial]\nrate = 1mbit\n' > "$P/$nm.ini"
done
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile list > "$T/pcols" 2>&1
cols=$(python3 -c '
import sys, unicodedata
def w(s): return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
out, users = [], 0
for l in open(sys.argv[1], encoding="utf-8"):
    i = l.find(" user ")
    users += i >= 0
    i = i if i >= 0 else l.find(" built ")
    out.append(str(w(l[:i])) if i >= 0 else "?")
print(" ".join(sorted(set(out))), users)' "$T/pcols")
if [ "$cols" = "22 4" ] && grep -q '^x\\x1by ' "$T/pcols"; then
	pass "profile list: escaped, accented and wide names keep the columns aligned (column 22 on every line)"
else
	fail "profile list columns: $cols: $(cat "$T/pcols")"
fi
for nm in "$(printf 'x\033y')" "caf$(printf '\303\251')" plain "$(printf '\346\227\245\346\234\254')"; do
	rm -f "$P/$nm.ini"
done
# a UTF-8 byte order mark (Windows editors) is read past; a message about a
# profile names the user's file, never the descriptor iniparser read
printf '\357\273\277[profile]\nname = bom\ndescription = with BOM\n[dial]\nrate = 10mbit\n' > "$P/bom.ini"
printf '[dial] junk\nrate = 10mbit\n' > "$P/junk.ini"
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile show bom > "$T/pbom" 2>&1; rc=$?
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile show junk > "$T/pjunk" 2>&1; rc2=$?
if [ $rc = 0 ] && grep -q '^rate = 10mbit$' "$T/pbom" && grep -q '^; with BOM$' "$T/pbom" &&
   [ $rc2 != 0 ] && grep -q "$P/junk.ini" "$T/pjunk" && ! grep -q /proc/self/fd "$T/pjunk"; then
	pass "profile with a UTF-8 BOM loads; a bad profile's messages name its file, not /proc/self/fd"
else
	fail "BOM / file name (rc $rc, $rc2): $(cat "$T/pbom" "$T/pjunk")"
fi
rm -f "$P/bom.ini" "$P/junk.ini"
# a line iniparser cannot read does not hide the bad values of the others
printf '[dial]\nrate = 50furlong\ngarbage line\njitter = 3ms\n[a] ; side\nloss-corr = 5%%\n' > "$P/mixed.ini"
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile show mixed > "$T/pmixed" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "mixed.ini:3: expected 'key = value'" "$T/pmixed" &&
   grep -q "mixed.ini:5: text after the section header: '; side'" "$T/pmixed" &&
   grep -q "mixed.ini:2: \[dial\] rate: '50furlong': unknown rate unit" "$T/pmixed" &&
   grep -q "jitter 3ms needs a delay" "$T/pmixed" && grep -q "loss-corr 5% needs a loss" "$T/pmixed"; then
	pass "profile with bad lines and bad values: every problem named at once ($(wc -l < "$T/pmixed") lines)"
else
	fail "profile structure + values (rc $rc): $(cat "$T/pmixed")"
fi
rm -f "$P/mixed.ini"
mkfifo "$P/fifo.ini"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("[dial]\n")
    for i in range(300000):
        f.write("k%d = 1\n" % i)' "$P/big.ini"
t0=$(date +%s%N)
LINKLAB_PROFILE_PATH="$P" timeout 20 "$LINKLAB" profile list > "$T/plist2" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $rc = 0 ] && [ $ms -lt 3000 ] && grep -q "fifo.ini: skipped: not a regular file (a FIFO)" "$T/plist2" &&
   grep -q "big.ini: skipped: [0-9]* bytes, over the 1048576-byte limit" "$T/plist2"; then
	pass "a FIFO and a 300k-key file in the profiles folder: skipped in $ms ms, each named with the reason"
else
	fail "FIFO/big profile (rc $rc, $ms ms): $(cat "$T/plist2" | head -5)"
fi
t0=$(date +%s%N)
LINKLAB_PROFILE_PATH="$P" timeout 20 "$LINKLAB" apply --dev vh0 --profile fifo --dry-run > "$T/pfifo" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 2 ] && [ $ms -lt 3000 ] && grep -q "skipped: not a regular file" "$T/pfifo" &&
	pass "apply --profile naming a FIFO: refused at once ($ms ms)" || fail "apply --profile fifo (rc $rc, $ms ms): $(cat "$T/pfifo")"
rm -f "$P/fifo.ini" "$P/big.ini"
echo precious > "$T/target"
ln -s "$T/target" "$P/x.ini"
LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile save x --force --rate 5mbit > "$T/psave" 2>&1
if [ "$(cat "$T/target")" = precious ] && [ -f "$P/x.ini" ] && [ ! -L "$P/x.ini" ] && grep -q 'rate = 5mbit' "$P/x.ini"; then
	pass "profile save --force over a symlink: the link is replaced, its target untouched"
else
	fail "save over symlink: target=$(cat "$T/target") $(ls -l "$P") $(cat "$T/psave")"
fi

# --- tbf buffer overflow ---------------------------------------------------------
r=$(inn "$LINKLAB" apply --dev vh0 --rate 40bit 2>&1); rc=$?
if [ $rc = 2 ] && case "$r" in *"rate: 40bit is too low for tbf"*"accepted: rate 48bit .. 4tbit"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ]; then
	pass "--rate 40bit: refused with the accepted range, nothing applied"
else
	fail "--rate 40bit (rc $rc): $r / $(inn tc qdisc show dev vh0)"
fi
r=$(inn "$LINKLAB" apply --dev vh0 --rate 1mbit --burst 1gb 2>&1); rc=$?
if [ $rc = 2 ] && case "$r" in *"burst: 1gb at rate 1mbit takes 8589.9 s"*"burst up to 34359738b, or rate 31250kbit or more"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ]; then
	pass "--burst 1gb at 1mbit: refused with the accepted burst and rate, nothing applied"
else
	fail "--burst 1gb (rc $rc): $r"
fi
r=$(inn "$LINKLAB" apply --dev vh0 --rate 48bit 2>&1); rc=$?
if [ $rc = 0 ] && case "$r" in *"tbf rate 48bit burst 1514b"*) true;; *) false;; esac; then
	pass "--rate 48bit: applied, burst reads back 1514b (MTU + 14)"
else
	fail "--rate 48bit (rc $rc): $r"
fi
r=$(inn "$LINKLAB" apply --dev vh0 --rate 1mbit --burst 34359738b 2>&1); rc=$?
case "$r" in *"burst 34359738b"*) [ $rc = 0 ] && pass "the largest burst at 1mbit (34359738b) applies and reads back exactly" || fail "max burst rc $rc";;
*) fail "max burst (rc $rc): $r";; esac
inn "$LINKLAB" clear --dev vh0 >/dev/null 2>&1

# --- repeated options, apply -J failures --------------------------------------------
r=$(inn "$LINKLAB" apply --dev vh0 --rate 10mbit --rate 20mbit --dev vh1 2>&1); rc=$?
if [ $rc = 2 ] && case "$r" in *"option --rate given twice ('10mbit', then '20mbit')"*) true;; *) false;; esac &&
   case "$r" in *"option --dev given twice ('vh0', then 'vh1')"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ] && [ "$(root_kind_h vh1)" = noqueue ]; then
	pass "apply with --rate and --dev twice: both named with their values, nothing applied"
else
	fail "repeated apply options (rc $rc): $r"
fi
r=$(inn "$LINKLAB" test -c 127.0.0.1 -t 1 -t 2 -P 1 --parallel 2 2>&1); rc=$?
case "$r" in *"option -t given twice ('1', then '2')"*"option -P given twice ('1', then '2')"*)
	[ $rc = 2 ] && pass "test -t/-P twice: both refused at once, nothing run" || fail "test repeat rc $rc";;
*) fail "test repeated (rc $rc): $r";; esac
r=$("$LINKLAB" test --peer nosuch-peer.invalid -c 10.199.0.2 -t 2 2>&1); rc=$?
case "$r" in *"--peer and -c both name the server: give one"*)
	case "$r" in *"given twice"*) fail "test --peer -c: still says given twice: $r";;
	*) [ $rc = 2 ] && pass "test --peer with -c: refused as naming the server twice, nothing run" || fail "test --peer -c rc $rc";; esac;;
*) fail "test --peer -c (rc $rc): $r";; esac
r=$(inn "$LINKLAB" apply --dev vh0 --jitter 10ms --reorder 25% 2>&1); rc=$?
if [ $rc = 2 ] && case "$r" in *"jitter 10ms needs a delay (--delay > 0)"*"reorder 25% needs a delay (--delay > 0)"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ]; then
	pass "apply --jitter/--reorder without delay: both named with their value and what is needed"
else
	fail "jitter/reorder without delay (rc $rc): $r"
fi
r=$(inn "$LINKLAB" apply --split --local --rate 10mbit --dev vh0 --dry-run --check --peer-dev vh1 2>&1); rc=$?
if [ $rc = 2 ] && case "$r" in *"--dry-run and --check exclude each other"*) true;; *) false;; esac &&
   case "$r" in *"--split halves the dial between both peers: it cannot be combined with --local"*) true;; *) false;; esac &&
   case "$r" in *"--peer-dev 'vh1' names the peer's interface: it needs --peer HOST"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ]; then
	pass "apply --split --local --dry-run --check --peer-dev: the three conflicts named at once, exit 2"
else
	fail "apply conflicting options (rc $rc): $r"
fi
r=$(inn "$LINKLAB" apply --split --rate 10mbit --dev vh0 2>&1); rc=$?
[ $rc = 2 ] && [ "$(root_kind_h vh0)" = noqueue ] &&
	case "$r" in *"--split halves the dial between two peers: it needs --peer HOST"*) true;; *) false;; esac &&
	pass "apply --split without a peer: refused, nothing applied" || fail "apply --split alone (rc $rc): $r"
inn "$LINKLAB" apply --dev vh0 --rate 10mbit >/dev/null 2>&1
r=$(inn "$LINKLAB" clear --dev vh0 --peer-dev vh1 2>&1); rc=$?
[ $rc = 2 ] && [ "$(root_kind_h vh0)" = tbf ] &&
	case "$r" in *"--peer-dev 'vh1' names the peer's interface: it needs --peer HOST"*) true;; *) false;; esac &&
	pass "clear --peer-dev without --peer: refused, nothing cleared" || fail "clear --peer-dev alone (rc $rc, root $(root_kind_h vh0)): $r"
inn "$LINKLAB" clear --dev vh0 >/dev/null 2>&1
r=$("$LINKLAB" engine -h 2>&1); rc=$?
[ $rc = 0 ] && case "$r" in "usage: linklab engine --dev DEV"*) true;; *) false;; esac &&
	pass "engine -h: usage, exit 0" || fail "engine -h (rc $rc): $r"
r=$("$LINKLAB" help 2>&1)
ok=1; for o in --middle --bridge --middle-engine "--engine auto" --force --stdin-lease --exclude-ssh --peer-timeout; do
	case "$r" in *"$o"*) ;; *) ok=0; echo "help lacks $o";; esac; done
for c in apply show clear; do
	h=$("$LINKLAB" $c -h 2>&1)
	for o in -F --exclude-ssh --peer-timeout --ssh-key; do
		case "$h" in *"$o"*) ;; *) ok=0; echo "$c -h lacks $o";; esac; done
done
grep -q 'stdin\\-lease' "$LL_REPO/doc/linklab.1" && grep -q '\\-\\-force' "$LL_REPO/doc/linklab.1" || { ok=0; echo "man page lacks bridge --force/--stdin-lease"; }
[ $ok = 1 ] && pass "help, apply/show/clear -h and the man page list the options they accept" || fail "usage texts incomplete"
r=$(inn timeout 5 "$LINKLAB" serve -p 5394 -p 5395 2>&1); rc=$?
case "$r" in *"option -p given twice ('5394', then '5395')"*) [ $rc = 2 ] && pass "serve -p twice: refused" || fail "serve repeat rc $rc";;
*) fail "serve repeated (rc $rc): $r";; esac
r=$(LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile save y --rate 1mbit --rate 2mbit 2>&1); rc=$?
[ $rc = 2 ] && [ ! -e "$P/y.ini" ] && case "$r" in *"option --rate given twice"*) true;; *) false;; esac &&
	pass "profile save --rate twice: refused, nothing saved" || fail "profile save repeated (rc $rc): $r"
for nm in "$(printf 'a\033]0;x\007b')" "" "../../etc/evil" "-x" "x.ini"; do
	r=$(LINKLAB_PROFILE_PATH="$P" "$LINKLAB" profile save "$nm" --rate 1mbit 2>&1); rc=$?
	case "$r" in *"profile name '"*) [ $rc = 2 ] && ! printf '%s' "$r" | grep -q "$(printf '\033')" &&
		pass "profile save with bad name '$(printf '%s' "$nm" | od -An -c | tr -s ' ')': exit 2, named" ||
		fail "profile save bad name rc $rc";;
	*) fail "profile save bad name (rc $rc): $r";; esac
done
r=$(inn "$LINKLAB" bridge vh0 vh1 --rate 1mbit --rate=2mbit -t 1 -t 2 2>&1); rc=$?
r2=$(inn "$LINKLAB" bridge --set --delay 1ms --delay 2ms 2>&1); rc2=$?
if [ $rc = 2 ] && [ $rc2 = 2 ] && case "$r" in *"option --rate given twice ('1mbit', then '2mbit')"*"option -t given twice ('1', then '2')"*) true;; *) false;; esac &&
   case "$r2" in *"option --delay given twice ('1ms', then '2ms')"*) true;; *) false;; esac &&
   [ "$(root_kind_h vh0)" = noqueue ]; then
	pass "bridge and bridge --set with an option twice: refused naming it, nothing started"
else
	fail "bridge repeated (rc $rc/$rc2): $r / $r2"
fi
for args in "--dev nosuchdev --rate 10mbit" "--dev vh0 --rate 10mbit --rate 20mbit" "--dev vh0 --rate 40bit"; do
	inn "$LINKLAB" apply -J $args > "$T/aj.out" 2> "$T/aj.err"; rc=$?
	if [ $rc != 0 ] && python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["error"] and d["changed"] is False and d["problems"], d' "$T/aj.out"; then
		pass "apply -J $args: exit $rc, one JSON document with error and problems"
	else
		fail "apply -J $args (rc $rc): $(cat "$T/aj.out") / $(cat "$T/aj.err")"
	fi
done
# a failure of the kernel itself (netem missing here, or an ingress dial on
# a device whose IFB cannot be made) still gives one JSON document
inn "$LINKLAB" apply -J --dev vh0 --engine kernel --delay 10ms > "$T/aj.out" 2> "$T/aj.err"; rc=$?
if [ $rc = 0 ]; then
	skip "apply -J kernel failure: this kernel has netem (the apply worked)"
	inn "$LINKLAB" clear --dev vh0 >/dev/null 2>&1
elif python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["error"], d' "$T/aj.out"; then
	pass "apply -J refused by the kernel (exit $rc): one JSON document with the error"
else
	fail "apply -J kernel failure (rc $rc): $(cat "$T/aj.out") / $(cat "$T/aj.err")"
fi

# --- exit status of a refusal by state ------------------------------------------
# a console holds vh0 (its owner record and a live flock, peer_lock.h): apply is
# refused naming it, exit 1 as a second console; with a bad value too, exit 2
lk="$LINKLAB_RUN_DIR/owner-$(inn stat -L -c %i /proc/self/ns/net)-$(inn cat /sys/class/net/vh0/ifindex).lock"
mkdir -p "$LINKLAB_RUN_DIR"
printf 'pid 4242\nuid 1000\nuser alice\nhost lab\nsince %s\nifindex %s\ndev vh0\n' "$(date +%s)" \
	"$(inn cat /sys/class/net/vh0/ifindex)" > "$lk"
python3 -c "import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)" "$lk" > "$T/fl.out" &
FL=$!
k0=$(root_kind_h vh0)
i=0; while ! grep -q held "$T/fl.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
r=$(inn "$LINKLAB" apply --dev vh0 --rate 10mbit 2>&1); rc=$?
r2=$(inn "$LINKLAB" apply --dev vh0 --rate 10mbit --delay 5furlong 2>&1); rc2=$?
k2=$(root_kind_h vh0)
# clear under the console: refused naming it (the console restores on quit);
# --force clears anyway
inn tc qdisc replace dev vh0 root tbf rate 7mbit burst 10k latency 50ms
k1=$(root_kind_h vh0)
r3=$(inn "$LINKLAB" clear --dev vh0 2>&1); rc3=$?
k3=$(root_kind_h vh0)
r4=$(inn "$LINKLAB" clear --dev vh0 --force 2>&1); rc4=$?
kill $FL 2>/dev/null; wait $FL 2>/dev/null; rm -f "$lk"
if [ $rc3 = 1 ] && echo "$r3" | grep -q "A vh0 is driven by console pid 4242 (user alice" &&
   echo "$r3" | grep -q "nothing changed" && [ "$k3" = "$k1" ] && [ $rc4 = 0 ]; then
	pass "clear on an interface a console holds: refused naming it, exit 1, nothing changed; --force clears"
else
	fail "clear under a console's lock: rc $rc3 ($r3), root $k3 (was $k1); --force rc $rc4 ($r4)"
fi
inn tc qdisc del dev vh0 root 2>/dev/null
if [ $rc = 1 ] && echo "$r" | grep -q "A vh0 is driven by console pid 4242 (user alice" &&
   [ $rc2 = 2 ] && echo "$r2" | grep -q "driven by console pid 4242" && echo "$r2" | grep -q "delay: '5furlong'" &&
   [ "$k2" = "$k0" ]; then
	pass "apply on an interface a console holds: refused naming it, exit 1 (2 with a bad value as well, both named)"
else
	fail "apply under a console's lock: rc $rc ($r) / rc $rc2 ($r2)"
fi

summary hostile
