#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/exitpaths.sh - every way the console can end restores both
# peers and the terminal, driven under tmux against the two-namespace lab
# (like tests/tui/run.sh, runnable alone):
#   q, Ctrl-C, Ctrl-\ (SIGQUIT), SIGTERM, SIGHUP -> both peers back to
#   noqueue, exit 0 / 128+N, the pane back on the shell (no alternate
#   screen, cursor visible, stty echo icanon);
#   kill -9 -> the next console says what it found and its quit restores it;
#   two consoles -> the second refuses, naming pid, user and since when;
#   the CLI's apply on a side a console drives -> refused, naming it;
#   a profile whose [b] part fails on B -> A rolled back, said so;
#   B cannot arm its revert timer -> the console asks before applying;
#   a qdisc set by hand on A does not seed the Dial screen.
#   LINKLAB=path/to/linklab sh tests/tui/exitpaths.sh   (default build/linklab)
# Helpers (capture, wait_for, keys, console_pid on session $S): lib.sh.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_lab_up

noqueue_both() {
	case "$(tcj "$NS_A" veth-a)$(tcj "$NS_B" veth-b)" in
	*'"kind":"noqueue"'*'"kind":"noqueue"'*) return 0 ;;
	esac
	return 1
}
# after the console: its exit status, then the tty modes the shell sees
SHELL_TAIL='echo console-exit=$?; printf "stty:"; stty -a | tr " ;" "\n\n" | grep -Ex -- "-?(echo|icanon)" | tr "\n" " "; echo; sleep 600'
start_console() { # [SESSION]
	S=${1:-tui}
	$TMUX kill-session -t "$S" 2>/dev/null
	$TMUX new-session -d -s "$S" -x 120 -y 36 \
		"TERM=screen $XDG ${EP_ENV:-} ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER ${EP_OPTS:-} 2>&1; $SHELL_TAIL"
	wait_for "veth-b" 150
}
apply_rate() { # RATE: dial RATE on both, confirm the session warning
	keys d
	wait_for "Impairment dial" 30 || return 1
	keys e C-u
	keys "$1" Enter Enter
	wait_for "y: apply anyway" 150 || return 1
	keys y
	wait_for "applied on A veth-a, B veth-b" 150
}
term_sane() { # the pane is back on the shell: main screen, cursor shown, cooked tty
	st=$($TMUX display -p -t "$S" '#{alternate_on} #{cursor_flag}')
	[ "$st" = "0 1" ] && capture | grep "stty:" | grep -qw icanon &&
		capture | grep "stty:" | grep -qw echo
}

tui_tmux_up
# EP_ONLY="1 3": run only those sections (default: all)
only() { [ -z "${EP_ONLY:-}" ] && return 0; case " $EP_ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

# 1. every exit path of a running console
only 1 && for how in q INT QUIT TERM HUP; do
	if ! start_console; then bad "$how: console did not start"; capture | tail -3; continue; fi
	if ! apply_rate 10mbit; then bad "$how: apply failed"; capture | tail -4; continue; fi
	noqueue_both && bad "$how: no impairment before the exit"
	case $how in
	q) keys q; want=0 ;;
	INT) keys C-c; want=130 ;;
	QUIT) keys 'C-\'; want=131 ;;
	TERM) kill -TERM "$(console_pid)"; want=143 ;;
	HUP) kill -HUP "$(console_pid)"; want=129 ;;
	esac
	if ! wait_for "console-exit=" 200; then bad "$how: the console did not end"; capture | tail -4; continue; fi
	got=$(capture | grep -o 'console-exit=[0-9]*' | head -1 | cut -d= -f2)
	if [ "$got" = "$want" ] && capture | grep -q "restored A veth-a, B veth-b"; then
		ok "$how: exit $got after 'restored A veth-a, B veth-b'"
	else
		bad "$how: exit $got (want $want), summary: $(capture | grep -E 'linklab:' | head -2)"
	fi
	if noqueue_both; then ok "$how: both peers back to noqueue"; else bad "$how: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)"; fi
	if term_sane; then
		ok "$how: terminal restored (main screen, cursor visible, stty echo icanon)"
	else
		bad "$how: terminal: alternate/cursor '$($TMUX display -p -t "$S" '#{alternate_on} #{cursor_flag}')', $(capture | grep stty:)"
	fi
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth-b root 2>/dev/null
done

# 1b. the terminal itself goes away (the tmux session killed: SIGHUP, the
#     pty gone): the restore still happens
if ! only 1; then :
elif start_console && apply_rate 10mbit; then
	cpid=$(console_pid)
	$TMUX kill-session -t "$S"
	n=0; while [ $n -lt 150 ] && ! noqueue_both; do sleep 0.1; n=$((n+1)); done
	if noqueue_both; then
		ok "terminal closed: both peers back to noqueue after $((n/10)).$((n%10)) s"
	else
		bad "terminal closed: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)"
		echo "  B's records and guards:"; ip netns exec "$NS_B" sh -c 'ls -l /run/linklab 2>&1; ps -eo pid,args | grep -E "linklab-(guard|revert)" | grep -v grep' | sed 's/^/    /'
	fi
	n=0; while [ $n -lt 50 ] && [ -d /proc/"$cpid" ]; do sleep 0.1; n=$((n+1)); done
	[ -d /proc/"$cpid" ] && bad "terminal closed: console pid $cpid still runs" || ok "terminal closed: the console ended"
	# what a failure left must not fail the cases after this one
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth-b root 2>/dev/null
else
	bad "1b: console or apply failed"
fi

# 2. two consoles: the second refuses, naming the first
if ! only 2; then :
elif start_console tui; then
	cpid=$(console_pid)
	start_console tui2
	if wait_for "console-exit=1" 150 &&
	   capture | grep -Eq "driven by console pid $cpid \(user root, uid 0, on host [^)]*\) since [0-9]{2}:[0-9]{2}:[0-9]{2}"; then
		ok "second console refused: $(capture | grep -o 'is driven by console pid [^;]*' | head -1)"
	else
		bad "second console not refused"; capture | tail -4
	fi
	$TMUX kill-session -t tui2 2>/dev/null
	# another local interface (--dev lo): A is free, the peer B is not
	S=tui2
	$TMUX new-session -d -s tui2 -x 120 -y 36 \
		"TERM=screen $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER --dev lo 2>&1; $SHELL_TAIL"
	if wait_for "console-exit=1" 150 &&
	   capture | grep -Eq "the peer is driven by console pid $cpid \(user root, uid 0, on host [^)]*\) since [0-9:]{8}"; then
		ok "second console on another local interface: B refused ($(capture | grep -o 'the peer is driven by console pid [^;]*' | head -1))"
	else
		bad "second console --dev lo: B not refused"; capture | tail -4
	fi
	$TMUX kill-session -t tui2 2>/dev/null
	# the CLI on a side the console drives: refused naming it, nothing changed
	for side in "--local --dev veth-a:A veth-a" "--remote --peer-dev veth-b:B veth-b"; do
		out=$(env $XDG ip netns exec $NS_A $BIN apply -F $LL_SSH_CONFIG --peer $LL_PEER ${side%%:*} --rate 5mbit 2>&1); rc=$?
		if [ $rc != 0 ] && echo "$out" | grep -q "${side#*:} is driven by console pid $cpid" &&
		   echo "$out" | grep -q "nothing changed" && noqueue_both; then
			ok "apply ${side%%:*} under the console: refused, naming it ($(echo "$out" | grep -o 'driven by console pid [0-9]*' | head -1)); both still noqueue"
		else
			bad "apply ${side%%:*} under the console (rc $rc): $out"
		fi
	done
	S=tui
	keys q
	wait_for "console-exit=0" 150 || bad "first console: no clean quit"
	# after the first quit, a new console takes the peer
	if start_console tui2 && ! capture | grep -q "driven by"; then
		ok "after the first console quit, the next one starts"
	else
		bad "next console after the quit: $(capture | tail -3)"
	fi
	keys q; wait_for "console-exit=0" 150
	$TMUX kill-session -t tui2 2>/dev/null
else
	bad "two consoles: the first did not start"
fi

# 3. kill -9: the next console finds what was left and its quit restores it
S=tui
if ! only 3; then :
elif start_console && apply_rate 10mbit; then
	kill -KILL "$(console_pid)"
	wait_for "-exit=137" 150 || bad "kill -9: no exit 137 ($(capture | tail -3 | tr "\n" "|"))"
	case "$(tcj "$NS_A" veth-a)" in
	*'"kind":"tbf"'*) ok "kill -9: A left impaired (tbf on veth-a), as expected of a killed process" ;;
	*) bad "kill -9: veth-a: $(tcj "$NS_A" veth-a)" ;;
	esac
	# B restores itself (the session died: the hold guard on B)
	n=0; while [ $n -lt 100 ]; do case "$(tcj "$NS_B" veth-b)" in *'"kind":"noqueue"'*) break ;; esac; sleep 0.1; n=$((n+1)); done
	case "$(tcj "$NS_B" veth-b)" in
	*'"kind":"noqueue"'*) ok "kill -9: B restored itself ($((n/10)).$((n%10)) s)" ;;
	*) bad "kill -9: veth-b: $(tcj "$NS_B" veth-b)" ;;
	esac
	# a CLI run says so too
	out=$(ip netns exec "$NS_A" "$BIN" show 2>&1 >/dev/null)
	case "$out" in
	*"leftovers: veth-a on this host is still as console pid "*"left it"*) ok "CLI show after kill -9: '$out'" ;;
	*) bad "CLI show after kill -9 says nothing of the leftovers: '$out'" ;;
	esac
	if start_console && wait_for "leftovers found: A veth-a, quit restores them \(left by console pid [0-9]+" 50; then
		ok "next console: '$(capture | grep -o 'leftovers found: .*' | head -1)'"
	else
		bad "next console does not mention the leftovers"; capture | tail -3
	fi
	keys q
	if wait_for "console-exit=0" 150 && capture | grep -q "restored A veth-a"; then
		ok "its quit: $(capture | grep -o 'linklab: restored.*' | head -1)"
	else
		bad "its quit: $(capture | grep 'linklab:' | head -2)"
	fi
	case "$(tcj "$NS_A" veth-a)" in
	*'"kind":"noqueue"'*) ok "kill -9 leftovers: veth-a back to noqueue" ;;
	*) bad "kill -9 leftovers: veth-a: $(tcj "$NS_A" veth-a)" ;;
	esac
	# and the one after that has nothing to report
	if start_console && ! capture | grep -q "leftovers found"; then ok "the console after that finds nothing left"; else bad "leftovers reported twice"; fi
	keys q; wait_for "console-exit=0" 150
else
	bad "kill -9: console or apply failed"; capture | tail -3
fi

# 3b. kill -9 when B's hold guard is gone too (killed first): B stays
#     impaired; the next console finds it through B's owner record and its
#     quit restores B
NSID_B=$(ip netns exec "$NS_B" stat -L -c %i /proc/self/ns/net)
b_procs() { # processes in B's namespace whose command line ends in $1
	for p in $(pgrep -f -- "$1\$" 2>/dev/null); do
		[ "$(stat -L -c %i /proc/$p/ns/net 2>/dev/null)" = "$NSID_B" ] && echo "$p"
	done
}
if ! only 3; then :
elif start_console && apply_rate 10mbit; then
	g=$(b_procs linklab-guard)
	if [ -n "$g" ]; then
		kill -KILL $g
		sleep 0.5
		kill -KILL "$(console_pid)"
		wait_for "console-exit=137" 50
		sleep 2
		case "$(tcj "$NS_B" veth-b)" in
		*'"kind":"tbf"'*) ok "kill -9 with the guard gone: B left impaired (tbf on veth-b)" ;;
		*) bad "kill -9 without guard: veth-b $(tcj "$NS_B" veth-b)" ;;
		esac
		if start_console && wait_for "leftovers found: A veth-a, B veth-b" 50; then
			ok "next console: '$(capture | grep -o 'leftovers found: [^(]*' | head -1)'"
		else
			bad "next console: B's leftovers not named"; capture | tail -3
		fi
		keys q
		if wait_for "console-exit=0" 150 && capture | grep -q "restored A veth-a, B veth-b" && noqueue_both; then
			ok "its quit restores both ($(capture | grep -o 'linklab: restored.*' | head -1))"
		else
			bad "quit after B leftovers: $(capture | grep 'linklab:' | head -2) $(tcj "$NS_B" veth-b)"
		fi
	else
		bad "3b: B's hold guard (linklab-guard) not found"
	fi
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth-b root 2>/dev/null
else
	bad "3b: console or apply failed"
fi

# 3c. kill -9 with the console's FIN dropped (iptables in A): B's sshd
#     still keeps the dead session (its keeper holds B). The next
#     console on this host sees the holder's pid is no linklab any more,
#     ends that session on B (its hold guard restores B) and takes over.
if ! only 3; then :
elif start_console && apply_rate 10mbit; then
	cpid=$(console_pid)
	# the console's own connection: drop what it sends from now on (its
	# FIN and RST included), in A's namespace only
	cport=$(ip netns exec "$NS_A" ss -tnpH state established '( dport = :22 )' 2>/dev/null |
		grep "pid=$cpid," | head -1 | awk '{print $3}' | sed 's/.*://')
	if [ -n "$cport" ] && ip netns exec "$NS_A" iptables -I OUTPUT -p tcp --sport "$cport" -j DROP; then
		kill -KILL "$cpid"
		wait_for "console-exit=137" 50
		sleep 1
		old=$(for p in $(pgrep -f linklab-owner); do [ "$(stat -L -c %i /proc/$p/ns/net 2>/dev/null)" = "$NSID_B" ] && echo $p; done | tr '\n' ' ')
		[ -n "$old" ] && ok "kill -9 with the FIN dropped: B still runs the dead console's keeper ($old)" ||
			bad "no keeper left on B after the dropped FIN (the test cannot show the takeover)"
		if start_console && ! capture | grep -q "driven by"; then
			ok "the next console takes B over (the holder's pid $cpid is no linklab): started"
		else
			bad "the next console is refused: $(capture | grep -o '.*driven by.*' | head -1)"
		fi
		ip netns exec "$NS_A" iptables -D OUTPUT -p tcp --sport "$cport" -j DROP
		n=0; while [ $n -lt 30 ]; do left=""; for p in $old; do [ -d /proc/$p ] && left="$left $p"; done; [ -z "$left" ] && break; sleep 0.1; n=$((n+1)); done
		[ -z "$left" ] && ok "the dead console's keeper on B ended" ||
			bad "the dead console's keeper$left still runs on B: $(ps -o pid,ppid,comm,args -p ${left# } | cut -c1-150)"
	else
		bad "3c: the console's client port not found or iptables failed ('$cport')"
	fi
	capture | grep -q "leftovers found: A veth-a" && ok "... and names A veth-a as left over" ||
		bad "no leftovers named: $(capture | grep -o 'leftovers.*' | head -1)"
	keys q
	wait_for "console-exit=0" 150
	if noqueue_both; then ok "its quit: both peers back to noqueue"; else bad "after quit: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)"; fi
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth-b root 2>/dev/null
else
	bad "3c: console or apply failed"
fi

# 4. a profile whose [b] part fails on B: A is rolled back (the console
#    with --engine kernel: B has no netem for [b]'s delay; rate alone is tbf)
mkdir -p "$LAB_DIR/config/linklab/profiles"
cat > "$LAB_DIR/config/linklab/profiles/aaa-bfail.ini" <<'EOP'
[profile]
name = bfail
description = [a] takes on A, [b] fails on B (a delay needs netem, which this kernel lacks)

[a]
rate = 20mbit

[b]
delay = 10ms
EOP
EP_OPTS="--engine kernel"
if ! only 4; then :
elif unshare -n sh -c 'tc qdisc add dev lo root netem delay 1ms' 2>/dev/null; then
	skip "profile [b] failing on B: this kernel has sch_netem, so [b]'s delay would not fail"
elif start_console; then
	keys o
	wait_for "aaa-bfail" 30 || bad "profile aaa-bfail not listed"
	keys g Enter
	if wait_for "\[b\] failed on B, A rolled back \(veth-a: noqueue" 200; then
		ok "profile [b] failed: '$(capture | grep -o '\[b\] failed on B, A rolled back[^:]*' | head -1)'"
	else
		bad "profile [b] failure: no rollback said"; capture | tail -4
	fi
	if noqueue_both; then ok "profile [b] failed: A back to noqueue, B untouched"; else bad "after the failed profile: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)"; fi
	keys q
	wait_for "console-exit=0" 150 || bad "profile run: no clean quit"
	noqueue_both || bad "profile run: after quit $(tcj "$NS_A" veth-a)"
else
	bad "profile run: console did not start"
fi
EP_OPTS=

# 5. B cannot arm its revert timer (fault injection LINKLAB_TEST_ARM_FAIL):
#    the console says so before applying and asks; n leaves both as they
#    were, y applies without the timer
if ! only 5; then :
elif EP_ENV="LINKLAB_TEST_ARM_FAIL=1" start_console; then
	keys d
	wait_for "Impairment dial" 30
	keys e C-u 1 0 m b i t Enter Enter
	wait_for "y: apply anyway" 150 && keys y
	if wait_for "no revert timer could be armed for veth-b" 150 && wait_for "y: apply anyway" 20; then
		ok "unarmed timer: the console asks first ($(capture | grep -o 'no revert timer could be armed for veth-b[^:]*' | head -1))"
	else
		bad "unarmed timer: no question"; capture | tail -6
	fi
	if noqueue_both; then ok "unarmed timer: nothing changed while asking (A rolled back, B untouched)"; else bad "while asking: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)"; fi
	keys n
	wait_for "apply cancelled" 50 || bad "unarmed timer: n did not cancel"
	noqueue_both && ok "unarmed timer: n cancels, both still noqueue" || bad "after n: $(tcj "$NS_A" veth-a)"
	keys e Enter Enter
	wait_for "y: apply anyway" 150 && keys y
	wait_for "no revert timer could be armed" 150 && keys y
	if wait_for "applied on A veth-a, B veth-b" 150; then
		case "$(tcj "$NS_B" veth-b)" in
		*'"kind":"tbf"'*) ok "unarmed timer: y applies without it (tbf on veth-b)" ;;
		*) bad "after y: veth-b $(tcj "$NS_B" veth-b)" ;;
		esac
	else
		bad "unarmed timer: y did not apply"; capture | tail -4
	fi
	keys q
	wait_for "console-exit=0" 150 && noqueue_both && ok "unarmed timer run: quit restores both" || bad "unarmed run quit: $(tcj "$NS_B" veth-b)"
else
	bad "unarmed timer: console did not start"
fi


# 7. a qdisc set by hand on A is not linklab's dial: the Dial screen does
#    not start from it (it would go to both peers with the next apply), and
#    quit leaves it as it was
if ! only 7; then :
else
	ip netns exec "$NS_A" tc qdisc replace dev veth-a root tbf rate 80mbit burst 20kb latency 30ms
	if start_console; then
		keys d
		if wait_for "Impairment dial" 30 && wait_for "^ *dial: .* ->" 30 &&
		   ! capture | grep -q "dial: .*80mbit"; then
			ok "hand-set tbf on A: not taken into the dial ($(capture | grep -o 'dial: .*' | head -1))"
		else
			bad "hand-set tbf on A taken into the dial: $(capture | grep 'dial:' | head -2)"
		fi
		keys Escape q
		wait_for "console-exit=0" 150 || bad "hand-set tbf: the console did not quit cleanly"
	else
		bad "hand-set tbf: console did not start"; capture | tail -3
	fi
	case "$(tcj "$NS_A" veth-a)" in
	*'"kind":"tbf"'*'"rate":10000000'*) ok "hand-set tbf on A: still there after quit" ;;
	*) bad "hand-set tbf after quit: $(tcj "$NS_A" veth-a)" ;;
	esac
	ip netns exec "$NS_A" tc qdisc del dev veth-a root 2>/dev/null
fi
finish
