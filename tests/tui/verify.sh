#!/bin/sh
# The console's verify key on the real binary under tmux: a held dial
# (tbf 20mbit on both peers) -> `v` shows the table with every row ok; the
# next saved run carries verify.json; `x` closes the table; a test cannot
# start while verify measures. Runs alone: sh tests/tui/verify.sh
. "$(dirname "$0")/../lab/lib.sh"
need_root tui-verify
command -v tmux >/dev/null 2>&1 || { skip "tmux not installed"; summary tui-verify; exit 0; }
SOCK=llv$$
TMUX="tmux -L $SOCK -f /dev/null"
cleanup() { $TMUX kill-server 2>/dev/null; lab_down; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
if ! lab_up tv; then fail "lab up"; summary tui-verify; exit 1; fi
D=$(mktemp -d)
XDG="XDG_DATA_HOME=$D/data XDG_CONFIG_HOME=$D/config"
capture() { $TMUX capture-pane -p -t tui 2>/dev/null; }
wait_for() { # TEXT [TENTHS]
	n=0; while [ $n -lt "${2:-100}" ]; do
		capture | grep -Eq -- "$1" && return 0; sleep 0.1; n=$((n+1)); done; return 1; }
wait_gone() { # TEXT [TENTHS]
	n=0; while [ $n -lt "${2:-30}" ]; do
		capture | grep -Eq -- "$1" || return 0; sleep 0.1; n=$((n+1)); done; return 1; }
keys() { $TMUX send-keys -t tui "$@"; }

ina "$LINKLAB" apply -F "$LL_SSH_CONFIG" --peer "$LL_PEER" --rate 20mbit > "$D/apply.out" 2>&1 ||
	fail "apply 20mbit: $(cat "$D/apply.out")"
$TMUX new-session -d -s keep "sleep 100000"
$TMUX new-session -d -s tui -x 140 -y 40 \
	"TERM=screen $XDG ip netns exec $LL_NS_A $LINKLAB console -F $LL_SSH_CONFIG --peer $LL_PEER 2>&1; echo console-exit=\$?; sleep 600"
if wait_for "path: " 150; then pass "console up"; else fail "console did not start: $(capture | tail -5)"; fi
keys v
if wait_for "verify: measuring" 30; then pass "v: the table says it is measuring"
else fail "v: no 'measuring' line: $(capture | tail -8)"; fi
# keys still answer while verify runs (it is a child process)
keys '?'
if wait_for "Peers screen" 20; then pass "help opens while verify measures"; else fail "help while verify: $(capture | head -5)"; fi
keys Escape
keys t
keys s
if wait_for "verify is measuring the path" 30; then pass "a test is refused while verify measures"
else fail "test during verify: $(capture | tail -4)"; fi
keys p
if wait_for "every row ok: the path holds the dial" 600; then
	pass "verify table: every row ok on a held dial"
else fail "verify table: $(capture | tail -14)"; fi
scr=$(capture)
for q in "rate  *a-to-b" "rate  *b-to-a" "rtt  *both" "loss  *a-to-b"; do
	if echo "$scr" | grep -Eq "^ *$q .* ok \(tolerance"; then pass "row: $q ok"
	else fail "row $q missing or not ok: $(echo "$scr" | tail -12)"; fi
done
# a short test, then w saves it with the verify table
keys t
keys s
wait_for "saved to" 300
dir=$(ls -d "$D"/data/linklab/results/* 2>/dev/null | tail -1)
if [ -n "$dir" ] && [ -f "$dir/verify.json" ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is True and len(d["checks"]) >= 4' "$dir/verify.json"; then
	pass "the saved run carries verify.json"
else fail "no verify.json in the saved run ($dir): $(capture | tail -4)"; fi
scr=$(capture)
if echo "$scr" | grep -Eq "responsiveness: RPM [0-9]+  working RTT [0-9.]+ .?s  idle RTT"; then
	pass "test screen: RPM, working and idle RTT ($(echo "$scr" | grep -o 'responsiveness: .*' | head -1))"
else fail "test screen: no RPM line: $(echo "$scr" | tail -12)"; fi
if [ -n "$dir" ] && grep -q "responsiveness: idle RTT [0-9.]* ms, working RTT [0-9.]* ms, RPM [0-9]" "$dir/run.svg"; then
	pass "run.svg caption: idle vs working RTT and RPM"
else fail "run.svg: no responsiveness caption"; fi
keys p
wait_for "every row ok" 30
keys x
if wait_gone "every row ok"; then pass "x closes the table"; else fail "x did not close the table"; fi
keys q
if wait_for "console-exit=0" 150; then pass "quit: exit 0"; else fail "quit: $(capture | tail -4)"; fi
summary tui-verify
