# SPDX-License-Identifier: MIT
# tests/tui/lib.sh - what the console scenarios share (sourced): drive the
# real console under tmux (modelled on tmux's regress/: private socket, no
# config, fixed size, TERM=screen, bounded wait_for polling on capture-pane)
# against a lab of the scenario's own. A scenario is one script in
# tests/tui/, runnable alone:
#   LINKLAB=path/to/linklab sh tests/tui/NAME.sh      (default build/linklab)
# and prints PASS/FAIL/SKIP lines and "tui-NAME: N passed, N failed, N skipped".
# tests/tui/run.sh runs them all.
set -u

REPO=$(cd "$(dirname "$0")/../.." && pwd)
LL_PY_REPO=$REPO; . "$REPO/tests/python-path.sh"
BIN=${LINKLAB:-$REPO/build/linklab}
case "$BIN" in /*) ;; *) BIN=$REPO/$BIN ;; esac
TUI_SUITE=tui-$(basename "$0" .sh)
pass=0
fail=0
skipped=0

ok()   { pass=$((pass+1)); echo "PASS: $*"; }
bad()  { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { skipped=$((skipped+1)); echo "SKIP: $*"; }
finish() {
	echo "$TUI_SUITE: $pass passed, $fail failed, $skipped skipped"
	[ "$fail" = 0 ]
	exit $?
}
if [ ! -x "$BIN" ]; then
	bad "linklab binary not found at $BIN (run make)"
	finish
fi

# tui_need_root: the scenarios with a lab need root (namespaces) and tmux.
tui_need_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "not root: the console tests need network namespaces and an sshd (lab/lab.sh)"
		finish
	fi
	if ! command -v tmux >/dev/null 2>&1; then
		skip "tmux not installed"
		finish
	fi
}

# --- the lab, under this test's own names ------------------------------------
NS_A=llD3-a$$
NS_B=llD3-b$$
LAB_DIR=$(mktemp -d /tmp/llD3-lab.XXXXXX)
SOCK=llt$$
TMUX="tmux -L $SOCK -f /dev/null"
LOG=$LAB_DIR/../llD3-tui-$$.log
# the console's user data (profiles, saved runs) stays in the lab dir
XDG="XDG_DATA_HOME=$LAB_DIR/data XDG_CONFIG_HOME=$LAB_DIR/config"

labsh() { LL_NS_A=$NS_A LL_NS_B=$NS_B LL_LAB_DIR=$LAB_DIR sh "$REPO/lab/lab.sh" "$@"; }
# the middle-box lab (section 9): A - M (linklab bridge, sshd on mgmt) - B
NS_BA=llC2-a$$
NS_BM=llC2-m$$
NS_BB=llC2-b$$
BLAB_DIR=$LAB_DIR-bridge
blabsh() { LL_NS_A=$NS_BA LL_NS_M=$NS_BM LL_NS_B=$NS_BB LL_LAB_DIR=$BLAB_DIR LINKLAB=$BIN \
	sh "$REPO/lab/lab-bridge.sh" "$@"; }

# tui_cleanup_extra: a scenario's own clean-up, run first at exit (a
# scenario redefines it after sourcing this file).
tui_cleanup_extra() { :; }
cleanup() {
	tui_cleanup_extra
	$TMUX kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
	blabsh down >/dev/null 2>&1
	labsh down >/dev/null 2>&1
	rm -rf "$LAB_DIR" "$BLAB_DIR" "$LAB_DIR-blab.log" "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# tui_lab_up: the two-namespace lab (lab/lab.sh) under this scenario's names.
tui_lab_up() {
	if ! labsh up >"$LOG" 2>&1; then
		bad "lab.sh up failed: $(tail -3 "$LOG")"
		rm -f "$LOG"
		finish
	fi
	rm -f "$LOG"
	eval "$(labsh env)"
}

# S: the tmux session capture, wait_for, keys and console_pid act on.
S=tui
capture() { $TMUX capture-pane -p -t "$S" 2>/dev/null; }

# wait_for TEXT [TENTHS]: poll the pane until it contains TEXT (grep -E).
wait_for() {
	n=0
	lim=${2:-100}
	while [ $n -lt "$lim" ]; do
		if capture | grep -Eq -- "$1"; then
			return 0
		fi
		sleep 0.1
		n=$((n+1))
	done
	return 1
}

keys() { $TMUX send-keys -t "$S" "$@"; }

# console_pid: the console's pid in session S (the child of the pane's
# shell: ip netns exec execs it).
console_pid() {
	ppid=$($TMUX display -p -t "$S" '#{pane_pid}')
	ps -o pid= --ppid "$ppid" | head -1 | tr -d ' '
}

# dial_row NAME: j on the dial screen until its cursor is on field NAME, one
# key at a time (the screen redraws at most every 100 ms); 1 if never.
dial_row() {
	n=0
	while [ $n -lt 80 ] && ! capture | grep -Eq "^ > $1 "; do keys j; sleep 0.25; n=$((n+1)); done
	capture | grep -Eq "^ > $1 "
}

# tc -j qdisc of DEV in namespace NS, as one line.
tcj() { ip netns exec "$1" tc -j qdisc show dev "$2" 2>&1 | tr -d ' \n'; }

# tui_tmux_up: a session that lives for the whole scenario: killing the last
# session makes the tmux server exit, and a new-session racing that exit fails
# with "server exited unexpectedly" (seen in CI); with this one alive the
# server stays up until cleanup.
tui_tmux_up() { $TMUX new-session -d -s keep "sleep 100000"; }

# start_console [OPTION...]: a fresh console on A driving B in session tui
# (with the console options given), B's interface listed.
start_console() {
	$TMUX kill-session -t tui 2>/dev/null
	$TMUX new-session -d -s tui -x 120 -y 36 \
		"TERM=screen $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER $* 2>&1; echo console-exit=\$?; sleep 600"
	wait_for "veth-b" 150
}
# apply_rate: dial 10mbit on both and wait for the read-back.
apply_rate() {
	keys d
	wait_for "Impairment dial" 30
	keys e C-u 1 0 m b i t Enter Enter
	wait_for "y: apply anyway" 150 || return 1
	keys y
	wait_for "applied on A veth-a, B veth-b" 150
}
