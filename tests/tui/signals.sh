#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/signals.sh - Ctrl-C and SIGTERM restore both peers before the console
# leaves.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_lab_up
tui_tmux_up

# 6. Ctrl-C and SIGTERM also restore both peers before leaving
for how in INT TERM; do
	if ! start_console; then bad "console ($how run) did not start"; continue; fi
	if ! apply_rate; then bad "apply before SIG$how failed"; capture; continue; fi
	case "$(tcj "$NS_B" veth-b)" in *'"kind":"tbf"'*) ;; *) bad "SIG$how: no tbf on veth-b before the signal" ;; esac
	if [ $how = INT ]; then
		keys C-c
	else
		# the console is the child of the pane's shell (ip netns exec execs it)
		ppid=$($TMUX display -p -t tui '#{pane_pid}')
		cpid=$(ps -o pid= --ppid "$ppid" | head -1 | tr -d ' ')
		[ -n "$cpid" ] && kill -TERM "$cpid"
	fi
	if wait_for "console-exit=" 150 && capture | grep -q "restored A veth-a, B veth-b"; then
		ok "SIG$how: restore summary printed after the signal"
	else
		bad "SIG$how: no restore summary"; capture | tail -5
	fi
	want=130; [ $how = TERM ] && want=143
	if capture | grep -q "console-exit=$want"; then
		ok "SIG$how: exit status $want (128 + signal) after the restore"
	else
		bad "SIG$how: exit status not $want: $(capture | grep -o 'console-exit=[0-9]*')"
	fi
	ja=$(tcj "$NS_A" veth-a)
	jb=$(tcj "$NS_B" veth-b)
	case "$ja$jb" in
	*'"kind":"noqueue"'*'"kind":"noqueue"'*) ok "SIG$how: both peers back to noqueue" ;;
	*) bad "SIG$how: after the signal: $ja / $jb" ;;
	esac
done

finish
