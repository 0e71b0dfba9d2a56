#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/golden.sh - the console's static screens against golden captures:
# the peers screen with no peer and the help screen, at 100x30 under tmux, in
# a network namespace of this scenario's own with only `lo` (down, no
# address, no traffic), so nothing on the screen depends on the host. Each
# `tmux capture-pane -p` must equal its file in tests/data/screens/ line for
# line (polled until it does, at most 3 s; on a difference the diff is shown).
#   LINKLAB=path/to/linklab sh tests/tui/golden.sh
# Regenerate the files after a deliberate change of a screen (then read the
# diff in git before committing them):
#   GOLDEN_UPDATE=1 sh tests/tui/golden.sh
# Prints PASS/FAIL/SKIP lines and "tui-golden: N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
tui_need_root
GOLD=$REPO/tests/data/screens
NS_G=llGd-$$
tui_cleanup_extra() { ip netns del "$NS_G" 2>/dev/null; }
if ! ip netns add "$NS_G"; then
	bad "cannot create network namespace $NS_G"
	finish
fi
# UTF-8 forced on both sides, so the line drawing does not depend on the
# caller's locale
TMUX="tmux -u -L $SOCK -f /dev/null"
tui_tmux_up
$TMUX new-session -d -s tui -x 100 -y 30 \
	"TERM=screen LC_ALL=C.UTF-8 $XDG ip netns exec $NS_G $BIN console 2>&1; echo console-exit=\$?; sleep 600"

# golden NAME WHAT: the pane equals tests/data/screens/NAME.txt (or, with
# GOLDEN_UPDATE=1, becomes it).
golden() {
	f=$GOLD/$1.txt
	if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
		capture > "$f"
		skip "$2: GOLDEN_UPDATE=1 wrote tests/data/screens/$1.txt ($(wc -l < "$f") lines), nothing compared"
		return
	fi
	if [ ! -f "$f" ]; then
		bad "$2: no golden file tests/data/screens/$1.txt (GOLDEN_UPDATE=1 writes it)"
		return
	fi
	n=0
	while [ $n -lt 30 ]; do
		capture > "$LAB_DIR/$1.now"
		cmp -s "$LAB_DIR/$1.now" "$f" && { ok "$2: equals tests/data/screens/$1.txt"; return; }
		sleep 0.1; n=$((n+1))
	done
	bad "$2: differs from tests/data/screens/$1.txt:"
	diff -u "$f" "$LAB_DIR/$1.now" | head -40 | tr -d '\000-\010\013-\037\177'
}

if wait_for "no peer: start with --peer HOST" 100 && wait_for "^ready" 30; then
	golden peers-empty "peers screen, no peer, 100x30"
else
	bad "the console did not show the peers screen"; capture | head -5
fi
keys '?'
if wait_for "Keys on every screen" 30 && wait_for "^j/k scroll" 30; then
	golden help "help screen, 100x30"
else
	bad "the help screen did not open"; capture | head -5
fi
keys Escape
wait_for "no peer: start with --peer HOST" 30 || bad "Esc from help: not back on the peers screen"
keys q
wait_for "console-exit=0" 50 || bad "the console did not quit cleanly"
finish
