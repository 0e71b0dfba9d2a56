#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/input.sh - the console's handling of odd input, under tmux
# against the labs (same harness as tests/tui/run.sh; runnable alone):
#  - a non-ASCII character typed in a dial field ("1０0mbit") is refused with
#    the CLI's own message, not silently dropped
#  - the lock-out warning box blanks its whole band: no dial row shows
#    through at its left edge
#  - s in the Profiles screen over an existing user profile asks first; n
#    leaves the file as it was, y overwrites
#  - with a middle box: edits made for "both peers" survive a change of the
#    target to the bridge, and Enter applies them there
#   LINKLAB=path/to/linklab sh tests/tui/input.sh      (helpers: lib.sh)
# Prints PASS/FAIL/SKIP lines and "tui-input: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
tui_need_root
# UTF-8 in the pane (the non-ASCII key)
TMUX="tmux -u -L $SOCK -f /dev/null"
LOC="LC_ALL=C.UTF-8"
tui_lab_up
tui_tmux_up
# a user profile that a save must not overwrite silently
mkdir -p "$LAB_DIR/config/linklab/profiles"
printf '[profile]\ndescription = mine, keep me\n[dial]\nrate = 7mbit\n' > "$LAB_DIR/config/linklab/profiles/mine.ini"
cp "$LAB_DIR/config/linklab/profiles/mine.ini" "$LAB_DIR/mine.orig"
$TMUX new-session -d -s tui -x 120 -y 36 \
	"TERM=screen $LOC $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER 2>&1; echo console-exit=\$?; sleep 600"
wait_for "veth-b" 150 || { bad "console did not start"; capture; finish; }

# 1. "1０0mbit" (a FULLWIDTH DIGIT ZERO inside) in the rate field
cli=$(ip netns exec "$NS_A" "$BIN" apply --dev veth-a --dry-run --rate '1０0mbit' 2>&1 | head -1)
want=$(echo "$cli" | sed -n "s/.*\(unknown rate unit '[^']*'\).*/\1/p")
keys d
wait_for "Impairment dial" 30 || bad "dial screen did not open"
keys g
wait_for "^ > rate " 20 || bad "dial: no rate row"
keys e C-u 1
$TMUX send-keys -t tui -l '０'
keys 0 m b i t Enter
if [ -n "$want" ] && wait_for "REFUSED" 30 && capture | grep -q -- "$want" && ! wait_for "^ > rate +10mbit" 5; then
	ok "'1０0mbit' in the rate field: refused with the CLI's message ($want)"
else
	bad "non-ASCII in a field: CLI said '$cli'"; capture | grep -E "^ > rate|REFUSED|unknown"
fi
keys Escape

# 2. the warning box over the dial: columns 0-3 of its band are blank
keys e C-u 5 0 m b i t Enter
wait_for "dial: rate 50mbit" 30 || bad "dial: rate 50mbit not taken"
keys Enter
if wait_for "y: apply anyway" 150; then
	top=$(capture | grep -n "Warning:" | head -1 | cut -d: -f1)
	bot=$(capture | grep -n "y: apply anyway" | head -1 | cut -d: -f1)
	edge=$(capture | sed -n "$((top-1)),$((bot+1))p" | cut -c1-4 | tr -d ' \n')
	if [ -n "$top" ] && [ -n "$bot" ] && [ -z "$edge" ]; then
		ok "warning box: its whole band is blank at the left edge (rows $top-$bot)"
	else
		bad "warning box: the left edge shows '$edge'"; capture | sed -n "$((top-1)),$((bot+1))p"
	fi
	keys y
	wait_for "applied on A veth-a, B veth-b" 150 || bad "apply after y not reported"
else
	bad "no warning box before applying on the session's interfaces"; capture
fi

# 3. s over an existing user profile asks; n keeps the file, y overwrites
keys o
wait_for "mine +user" 50 || bad "profiles: mine not listed"
keys s C-u m i n e Enter
if wait_for "overwrite your profile mine\? y/n" 30 && cmp -s "$LAB_DIR/config/linklab/profiles/mine.ini" "$LAB_DIR/mine.orig"; then
	ok "profiles: s over the user profile mine asks first (nothing written yet)"
else
	bad "profiles: no overwrite question"; capture | tail -3
fi
keys n
if wait_for "save cancelled: mine kept as it was" 30 && cmp -s "$LAB_DIR/config/linklab/profiles/mine.ini" "$LAB_DIR/mine.orig"; then
	ok "profiles: n cancels, mine.ini unchanged"
else
	bad "profiles: n did not keep mine.ini"; capture | tail -3
fi
keys s C-u m i n e Enter
wait_for "overwrite your profile mine\? y/n" 30 || bad "profiles: second save did not ask"
keys y
if wait_for "saved profile mine" 50 && grep -q "rate = 50mbit" "$LAB_DIR/config/linklab/profiles/mine.ini"; then
	ok "profiles: y overwrites mine with what the peers hold (rate = 50mbit)"
else
	bad "profiles: y did not overwrite: $(cat "$LAB_DIR/config/linklab/profiles/mine.ini")"; capture | tail -3
fi
keys q
wait_for "console-exit=" 150 || bad "console did not exit"
$TMUX kill-session -t tui 2>/dev/null
labsh down >/dev/null 2>&1

# 4. the middle box: edits for "both peers" kept when the target becomes the bridge
if ! blabsh up > "$BLAB_DIR.log" 2>&1; then
	bad "lab-bridge.sh up: $(tail -3 "$BLAB_DIR.log")"; rm -f "$BLAB_DIR.log"; finish
fi
rm -f "$BLAB_DIR.log"
blabsh engine >/dev/null 2>&1 || bad "bridge engine did not start"
probe=$(ip netns exec "$NS_BM" timeout 10 "$BIN" bridge --attach </dev/null 2>&1 | head -1)
case "$probe" in
'{'*'"engine"'*)
	$TMUX new-session -d -s tui -x 120 -y 40 \
		"TERM=screen $LOC $XDG ip netns exec $NS_BA $BIN console -F $BLAB_DIR/ssh_config --peer peer-b --middle middle 2>&1; echo console-exit=\$?; sleep 600" 3>&-
	if wait_for "M \(middle\): bridge" 150; then
		keys d
		wait_for "Impairment dial" 30 || bad "dial screen did not open"
		dial_row delay || bad "dial: no delay row"
		keys e C-u 4 0 m s Enter
		wait_for "^ > delay +40ms" 30 || bad "dial: delay 40ms not taken"
		n=0
		while [ $n -lt 80 ] && ! capture | grep -q "^ > target"; do keys j; sleep 0.2; n=$((n+1)); done
		keys l; sleep 0.3; keys l; sleep 0.3; keys l
		if wait_for "target +bridge A->B \(middle box\)" 30 && wait_for "your edits are kept for bridge A->B" 20 &&
		   capture | grep -Eq "^ +delay +40ms"; then
			ok "dial: target both peers -> bridge A->B keeps the unapplied delay 40ms and says so"
		else
			bad "dial: edits lost on the target change"; capture | grep -E "target|delay|edits|loaded"
		fi
		keys Enter
		if wait_for "applied on bridge A->B: .*40ms" 100 &&
		   ip netns exec "$NS_BM" "$BIN" bridge --status 2>&1 | grep -q "40ms"; then
			ok "dial: Enter applies the kept edits on the bridge (bridge --status shows 40ms)"
		else
			bad "dial: kept edits not applied on the bridge"; capture | tail -4
		fi
		keys q
		wait_for "console-exit=" 150 || bad "console (middle) did not exit"
	else
		bad "console with --middle did not start"; capture
	fi
	;;
*) skip "middle box: this linklab has no working 'bridge --attach': $probe" ;;
esac
finish
