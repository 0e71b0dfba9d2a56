#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/lost.sh - B's SSH session dies under the console.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_lab_up
tui_tmux_up

# 7. B's session dies under the console: shown on the status line, B
#    restores itself (hold guard / revert timer), A stays usable and quit
#    restores A.
lost_ok=0
if ! start_console; then
	bad "console (lost-session run) did not start"
elif ! apply_rate; then
	bad "apply before the lost session failed"; capture
else
	# 100 % loss on the session's interface: refused without force, n cancels
	keys j j j e C-u 1 0 0 % Enter Enter
	if wait_for "Refused without force" 100 && capture | grep -q "y: force it"; then
		ok "100% loss on the session's interface refused without force (y forces)"
	else
		bad "100% loss not refused"; capture
	fi
	keys n
	if wait_for "apply cancelled" 50; then ok "n cancels the apply"; else bad "n did not cancel"; capture; fi
	# the console's connection: its client port in A, then the sshd
	# processes holding that connection in B (ours: the lab's sshd forked them)
	cport=$(ip netns exec "$NS_A" ss -tnpH state established '( dport = :22 )' 2>/dev/null |
		grep '"linklab"' | head -1 | awk '{print $3}' | sed 's/.*://')
	pids=""
	if [ -n "$cport" ]; then
		pids=$(ip netns exec "$NS_B" ss -tnpH state established "( sport = :22 and dport = :$cport )" 2>/dev/null |
			grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' ')
	fi
	if [ -z "$pids" ]; then
		bad "lost session: the console's sshd child not found (client port '$cport')"
	else
		t0=$(date +%s%N)
		for p in $pids; do
			[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sshd ] && kill -KILL "$p"
		done
		if wait_for "peer B lost: it restores itself within [0-9]+ s" 100; then
			ms=$(( ($(date +%s%N) - t0) / 1000000 ))
			ok "killed sshd child ($pids): 'peer B lost' on the status line within $ms ms"
			lost_ok=1
		else
			bad "no lost-session message after killing sshd ($pids)"; capture
		fi
	fi
	if [ $lost_ok = 1 ]; then
		n=0
		while [ $n -lt 100 ]; do
			case "$(tcj "$NS_B" veth-b)" in *'"kind":"noqueue"'*) break ;; esac
			sleep 0.1; n=$((n+1))
		done
		case "$(tcj "$NS_B" veth-b)" in
		*'"kind":"noqueue"'*) ok "B restored itself after the session died ($((n/10)).$((n%10)) s)" ;;
		*) bad "veth-b not restored after the session died: $(tcj "$NS_B" veth-b)" ;;
		esac
		# A stays usable: change A's rate, read back on A
		keys x k k k e C-u 2 0 m b i t Enter Enter
		if wait_for "applied on A veth-a" 150; then
			case "$(tcj "$NS_A" veth-a)" in
			*'"rate":2500000'*) ok "A still applies after B was lost (tbf 20mbit on veth-a)" ;;
			*) bad "A after B lost: $(tcj "$NS_A" veth-a)" ;;
			esac
		else
			bad "A apply after B lost not reported"; capture
		fi
	fi
	keys q
	if wait_for "console-exit=3" 150 && capture | grep -q "restored A veth-a, B lost (restores itself)"; then
		ok "lost session: quits with exit 3 (B restores itself), summary names A restored and B lost"
	else
		bad "lost session: no clean quit"; capture | tail -5
	fi
	case "$(tcj "$NS_A" veth-a)" in
	*'"kind":"noqueue"'*) ok "lost session: veth-a restored on quit" ;;
	*) bad "lost session: veth-a after quit: $(tcj "$NS_A" veth-a)" ;;
	esac
fi

finish
