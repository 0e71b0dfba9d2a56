#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/console.sh - one console session through every screen: unknown TERM,
# peers, resize, dial, help, profiles, tests, resize storm, quit restores.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_lab_up
tui_tmux_up

# 0. an unknown TERM falls back to vt100 instead of dying in initscr
$TMUX new-session -d -s tui -x 100 -y 30 \
	"TERM=xyzzy-unknown $XDG ip netns exec $NS_A $BIN console 2>&1; echo console-exit=\$?; sleep 600"
if wait_for "terminal type unknown: running as vt100" 50; then ok "unknown TERM: falls back to vt100 and says so"; else bad "unknown TERM"; capture; fi
keys q
if wait_for "console-exit=0" 50; then ok "unknown TERM: quits cleanly"; else bad "unknown TERM: no clean exit"; capture; fi
$TMUX kill-session -t tui 2>/dev/null

$TMUX new-session -d -s tui -x 120 -y 36 \
	"TERM=screen $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --peer $LL_PEER 2>&1; echo console-exit=\$?; sleep 600"

# 1. both peers' interfaces are listed, the routing one marked
if wait_for "veth-b" 150 && capture | grep -q "veth-a"; then
	ok "both peers' interfaces listed (veth-a, veth-b)"
else
	bad "interfaces not listed"; capture
fi
if capture | grep -Eq '\* veth-a .*\(to peer\)' && capture | grep -Eq '\* veth-b .*\(to peer\)'; then
	ok "interfaces routing to the other peer preselected and marked"
else
	bad "no preselected veth-a/veth-b"
fi

# 2. resize: too small, then back
$TMUX resize-window -t tui -x 40 -y 10
if wait_for "terminal too small" 30; then ok "terminal too small notice at 40x10"; else bad "no too-small notice"; fi
$TMUX resize-window -t tui -x 120 -y 36
if wait_for "veth-b" 30; then ok "redraws after resize back to 120x36"; else bad "no redraw after resize"; fi

# 3. dial: rate 50mbit on both peers via the line editor, Enter applies
keys d
wait_for "Impairment dial" 30 || bad "dial screen did not open"
# 3a. g/G: first field / last row; every field name stands apart from
#     its value (the name column is as wide as the longest name)
keys G
if wait_for "^ > \[ Apply \]" 20; then ok "dial: G goes to the last row ([ Apply ])"; else bad "dial: G did nothing"; capture | grep "^ >"; fi
keys g
if wait_for "^ > rate " 20; then ok "dial: g goes back to the first field (rate)"; else bad "dial: g did nothing"; capture | grep "^ >"; fi
n=0
seen=" "
joined=""
cur=$(capture | grep -E "^ > " | head -1)
while [ $n -lt 80 ]; do
	case "$cur" in " > target "*) break ;; esac
	echo "$cur" | grep -Eq "^ > [a-z0-9-]+ +[^ ]" || joined="$joined [$cur]"
	seen="$seen$(echo "$cur" | awk '{print $2}') "
	keys j
	m=0
	prev=$cur
	while [ $m -lt 20 ] && [ "$cur" = "$prev" ]; do
		sleep 0.1
		cur=$(capture | grep -E "^ > " | head -1)
		m=$((m+1))
	done
	n=$((n+1))
done
nf=$("$BIN" profile fields | wc -l)   # the dial's fields, one a line
case "$seen" in
*" packet-overhead "*" "*) ;;
*) joined="$joined [packet-overhead not seen as a word]" ;;
esac
if [ -z "$joined" ] && [ "$n" = "$nf" ]; then
	ok "dial: all $n field names stand apart from their values (packet-overhead too)"
else
	bad "dial: $n of $nf fields walked; names run into values:$joined"
fi
keys g
wait_for "^ > rate " 20 || bad "dial: g did not return to rate"
keys e C-u 5 0 x y z Enter
if wait_for "rate.*50xyz" 20; then ok "bad dial value refused with a message naming field and value"; else bad "no message for rate 50xyz"; capture; fi
# the editor stays open after a refusal: said on the field's own row, and
# the footer lists the editor's keys (not the screen's j/k, e, x ...)
if capture | grep -Eq "^ > rate +50xyz +REFUSED \(Esc cancels\): '50xyz' is not a rate" &&
   capture | tail -1 | grep -q "^Enter accept  Esc cancel edit" &&
   ! capture | tail -1 | grep -q "e edit"; then
	ok "refused value: REFUSED on the edited row, footer 'Enter accept  Esc cancel edit'"
	# the whole message, wrapped under the row: the accepted range shows
	if capture | grep -q "accepted: 8bit \.\. 4tbit"; then
		ok "refused value: the whole message under the row, with the accepted range (8bit .. 4tbit)"
	else
		bad "refused value: the accepted range is not on the screen"; capture | head -12
	fi
else
	bad "refused value: not obvious on the row / footer"; capture | grep -E "^ > |accept"
fi
keys Escape
if wait_for "^ > rate +off" 20 && ! capture | grep -q "REFUSED"; then
	ok "Esc after a refusal: editor closed, the field keeps its value, no stale error"
else
	bad "Esc after a refusal"; capture | grep -E "^ > |REFUSED"
fi
keys e C-u 5 0 m b i t Enter
if wait_for "dial: rate 50mbit" 30; then ok "dial field edited to 50mbit"; else bad "dial edit not shown"; capture; fi
if capture | grep -q "A: now nothing (kernel default) -> to apply rate 50mbit" && \
   capture | grep -q "B: now nothing (kernel default) -> to apply rate 50mbit"; then
	ok "dial: now -> to apply line per side"
else
	bad "no now -> to apply lines"; capture | grep -E "^ +[AB]:"
fi
keys Enter
# veth-a and veth-b carry the console's own SSH session: asked first
if wait_for "y: apply anyway" 150 && capture | grep -q "veth-a carries the SSH session" && \
   capture | grep -q "veth-b carries the SSH session"; then
	ok "apply on the session's interfaces: warning shown, y/n asked"
else
	bad "no warning/confirmation before applying on the session's interfaces"; capture
fi
keys y
if wait_for "applied on A veth-a, B veth-b" 150; then
	ok "apply reported on both sides"
else
	bad "apply not reported"; capture
fi
if capture | grep -Eiq "A veth-a holds: tbf rate 50mbit" && \
   capture | grep -Eiq "B veth-b holds: tbf rate 50mbit"; then
	ok "read back shows tbf 50Mbit on both sides"
else
	bad "read back does not show tbf 50Mbit on both sides"; capture | grep holds
fi
ja=$(tcj "$NS_A" veth-a)
jb=$(tcj "$NS_B" veth-b)
case "$ja" in *'"kind":"tbf"'*'"rate":6250000'*) ok "tc -j in $NS_A: tbf 50mbit on veth-a" ;;
*) bad "tc -j in $NS_A: $ja" ;; esac
case "$jb" in *'"kind":"tbf"'*'"rate":6250000'*) ok "tc -j in $NS_B: tbf 50mbit on veth-b" ;;
*) bad "tc -j in $NS_B: $jb" ;; esac

# 3b. peers screen: live counters, the path and the theory line
keys p
if wait_for "tbf: sent .* pkt, drops" 30; then ok "peers: live tbf counters shown"; else bad "no qdisc counters"; capture; fi
if capture | grep -q "path: A->B 50mbit/0ns/0% | B->A 50mbit"; then ok "peers: path A->B with what each side holds"; else bad "no path line"; capture | grep path; fi
if capture | grep -q "theory (1 stream, A->B): rate-limited: 50.0 Mbit/s x 1448/1514 (frame headers) = 47.8 Mbit/s"; then
	ok "peers: theory line rate-limited 47.8 Mbit/s"
else
	bad "no theory line"; capture | grep theory
fi
# the counters move on their own (1 s refresh, no key pressed; B's
# read over SSH every 5 s is traffic through veth-a)
c1=$(capture | grep -o "tbf: sent [^,]*" | head -1)
n=0
c2=$c1
while [ $n -lt 90 ] && [ "$c1" = "$c2" ]; do
	sleep 0.1
	c2=$(capture | grep -o "tbf: sent [^,]*" | head -1)
	n=$((n+1))
done
if [ -n "$c1" ] && [ "$c1" != "$c2" ]; then ok "peers: counters refresh by themselves ($c1 -> $c2)"; else bad "counters did not move: '$c1' '$c2'"; fi

# 3c. help: generated from the key table and the dial fields, scrolls
keys '?'
if wait_for "Keys on every screen" 20 && capture | grep -q "Peers screen" && capture | grep -q "Dial screen"; then ok "help screen lists the keys per screen"; else bad "help screen"; capture; fi
keys G
if wait_for "slot-bytes|seed" 20; then ok "help scrolls to the dial fields (impair_fields)"; else bad "help did not scroll to the fields"; capture; fi
keys Escape
# F-keys like htop: F4 test, F3 dial, F2 peers
keys F4
if wait_for "Throughput test" 20; then ok "F4 opens the test screen"; else bad "F4"; fi
keys F2
if wait_for "kernel holds on veth-a" 20; then ok "F2 back to the peers screen"; else bad "F2"; fi

# 3d. profiles: save what both peers hold, clear, load it back, rename, delete
keys o
if wait_for "transpacific +built" 30; then ok "profiles: shipped profiles listed"; else bad "no shipped profiles"; capture; fi
keys s C-u t u i r t Enter
if wait_for "saved profile tuirt" 50 && wait_for "tuirt +user" 20; then ok "profiles: saved the held dial as user profile tuirt"; else bad "profile save"; capture; fi
if [ -f "$LAB_DIR/config/linklab/profiles/tuirt.ini" ] && grep -q "rate = 50mbit" "$LAB_DIR/config/linklab/profiles/tuirt.ini"; then
	ok "profiles: tuirt.ini holds rate = 50mbit"
else
	bad "tuirt.ini missing or wrong"
fi
keys c
if wait_for "cleared A veth-a, B veth-b" 150; then ok "cleared both peers"; else bad "clear"; capture | tail -3; fi
case "$(tcj "$NS_A" veth-a)" in *'"kind":"noqueue"'*) ;; *) bad "veth-a not cleared" ;; esac
keys g Enter
if wait_for "profile tuirt: applied on A veth-a" 150; then ok "profiles: tuirt applied back"; else bad "profile apply"; capture | tail -3; fi
case "$(tcj "$NS_A" veth-a)$(tcj "$NS_B" veth-b)" in
*'"kind":"tbf"'*'"rate":6250000'*'"kind":"tbf"'*'"rate":6250000'*) ok "profiles: round trip: tc -j shows tbf 50mbit on both again" ;;
*) bad "after profile apply: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)" ;;
esac
keys n C-u t u i r t 2 Enter
if wait_for "renamed profile tuirt to tuirt2" 50; then ok "profiles: renamed"; else bad "rename"; capture | tail -3; fi
keys x
if wait_for "delete tuirt2 .*y/n" 20; then ok "profiles: delete asks first"; else bad "no delete confirmation"; capture | tail -4; fi
keys y
if wait_for "deleted profile tuirt2" 50 && [ ! -f "$LAB_DIR/config/linklab/profiles/tuirt2.ini" ]; then ok "profiles: deleted"; else bad "delete"; fi
keys G x
if wait_for "read-only" 20; then ok "profiles: shipped profiles are read-only"; else bad "shipped delete not refused"; capture | tail -3; fi
# a profile with 100% loss on the interface that carries the SSH session:
# refused as on the Dial screen, nothing changed (both keep tuirt's tbf)
printf '[dial]\nloss = 100%%\n' > "$LAB_DIR/config/linklab/profiles/aacut.ini"
keys r
if wait_for "aacut +user" 30; then
	keys g Enter
	if wait_for "profile aacut: .*carries the SSH session" 50; then
		case "$(tcj "$NS_A" veth-a)$(tcj "$NS_B" veth-b)" in
		*'"kind":"tbf"'*'"rate":6250000'*'"kind":"tbf"'*'"rate":6250000'*)
			ok "profiles: 100% loss on the session's interface refused, both peers unchanged" ;;
		*) bad "profile aacut changed a peer: $(tcj "$NS_A" veth-a) / $(tcj "$NS_B" veth-b)" ;;
		esac
	else
		bad "profile aacut (100% loss) not refused"; capture | tail -3
	fi
else
	bad "profile aacut not listed after r"; capture | tail -3
fi
rm -f "$LAB_DIR/config/linklab/profiles/aacut.ini"
# a description with a right-to-left override (U+202E) from a hand-written
# file: shown as \xNN on the screen, never obeyed
printf '[profile]\ndescription = evil \342\200\256gnp.exe here\n[dial]\ndelay = 5ms\n' \
	> "$LAB_DIR/config/linklab/profiles/aabidi.ini"
keys r
if wait_for "aabidi +user" 30; then
	keys g
	if wait_for 'evil .xe2.x80.xaegnp' 20 && ! capture | grep -q "$(printf '\342\200\256')"; then
		ok "profiles: a bidi override in a description is shown escaped (\\xe2\\x80\\xae)"
	else
		bad "profiles: bidi override reached the screen raw"; capture | grep -a evil
	fi
else
	bad "profile aabidi not listed after r"; capture | tail -3
fi
rm -f "$LAB_DIR/config/linklab/profiles/aabidi.ini"
keys r

# 4. a 2-stream 3-second test: stream bars and a SUM line with figures
keys t
wait_for "Throughput test" 30 || bad "test screen did not open"
keys G
if wait_for "> +\[ Start \]" 20; then ok "test form: G goes to [ Start ]"; else bad "test form: G did nothing"; capture | grep ">"; fi
keys g
if wait_for "> streams " 20; then ok "test form: g goes back to the first field"; else bad "test form: g did nothing"; capture | grep ">"; fi
keys l j e C-u 3 Enter
if wait_for "streams +2" 20 && wait_for "duration +3 s" 20; then
	ok "test form set to 2 streams, 3 s"
else
	bad "test form not set"; capture
fi
keys Enter
if wait_for '\[SUM\] .*[0-9.]+ [kMG]?bit/s' 150; then
	ok "SUM bar with a bit rate appears"
else
	bad "no SUM bar"; capture
fi
if wait_for '^ *\[ *[0-9]+\] .*bit/s.*\[ *[0-9]+\]|^ *\[ *[0-9]+\] .*bit/s' 10 && \
   [ "$(capture | grep -Ec '^ *\[ *[0-9]+\] .*bit/s')" -ge 2 ]; then
	ok "one bar per stream (2) with figures"
else
	# the test may already have finished: the summary lists both streams
	if [ "$(capture | grep -Ec '^ *\[ *[0-9]+\] .*(sender|receiver)')" -ge 4 ]; then
		ok "both streams listed (summary)"
	else
		bad "stream bars missing"; capture
	fi
fi
if wait_for '\[SUM\].*sender' 150 && capture | grep -Eq '\[SUM\].*receiver'; then
	ok "summary with sender and receiver totals"
else
	bad "no end summary"; capture
fi
sumline=$(capture | grep -E '\[SUM\].*receiver' | head -1)
case "$sumline" in
*Mbit/s*) ok "summary rate: $(echo "$sumline" | sed 's/  */ /g')" ;;
*) bad "summary rate not in Mbit/s: $sumline" ;;
esac
if capture | grep -q "theory: rate-limited: 50.0 Mbit/s x 1448/1514 (frame headers) = 47.8 Mbit/s"; then
	ok "test: theory overlay line"
else
	bad "test: no theory line"; capture | grep theory
fi
if capture | grep -Eq "received .* = [0-9]+% of the expected 47.8 Mbit/s"; then
	ok "test: $(capture | grep -Eo 'received .* of the expected 47.8 Mbit/s')"
else
	bad "test: no measured vs expected line"
fi
if capture | grep -q "0 SUM"; then ok "test: SUM history chart drawn"; else bad "no chart"; capture; fi
if wait_for "saved: $LAB_DIR/data/linklab/results/" 20; then
	run=$(ls -d "$LAB_DIR"/data/linklab/results/*/ | head -1)
	if [ -s "$run/run.svg" ] && [ -s "$run/intervals.csv" ] && grep -q "rate = 50mbit" "$run/profile.ini"; then
		ok "test: run saved (run.svg, intervals.csv, profile.ini)"
	else
		bad "saved run incomplete: $(ls "$run")"
	fi
	if command -v xmllint >/dev/null 2>&1; then
		if xmllint --noout "$run/run.svg" 2>/dev/null; then ok "test: run.svg is well-formed XML"; else bad "run.svg not well-formed"; fi
	else
		skip "xmllint not installed: SVG well-formedness not checked"
	fi
else
	bad "run not saved"; capture | tail -4
fi

# 4b. UDP at twice the dialled rate: the receiver reports the loss
# (form cursor on duration; -b is per stream: 2 x 50mbit = 2 x the dial;
# typed in iperf3's form, 50M, shown back as 50mbit)
keys j j l j e C-u 5 0 M Enter
keys k k k e C-u 2 Enter
if wait_for "protocol +UDP" 20 && wait_for "bitrate -b 50mbit" 20; then ok "test form: UDP, 2 streams x -b 50M (iperf3's form) = 50mbit, 2 s"; else bad "UDP form"; capture; fi
keys s
if wait_for 'done: 2 UDP streams' 200; then
	if capture | grep -Eq '\[SUM\].*receiver'; then ok "UDP test done with a receiver summary"; else bad "UDP summary"; capture; fi
	rx=$(capture | grep -E '\[SUM\].*receiver' | grep -Eo '[0-9.]+ Mbit/s' | head -1)
	case "$rx" in
	4[0-9].*|5[0-2].*) ok "UDP at 2 x the dial: receiver gets ~the dialled rate ($rx)" ;;
	*) bad "UDP receiver rate $rx not near 50 Mbit/s" ;;
	esac
else
	bad "UDP test did not finish"; capture
fi

# 4c. resize storm while showing the test, then a fixed size again
i=0
while [ $i -lt 20 ]; do
	$TMUX resize-window -t tui -x $((60 + (i * 7) % 80)) -y $((14 + (i * 5) % 30))
	i=$((i+1))
done
$TMUX resize-window -t tui -x 120 -y 36
if wait_for "Throughput test" 30 && ! capture | grep -q "console-exit"; then ok "resize storm (20 sizes): still running and redrawn"; else bad "after resize storm"; capture; fi

# 5. quit restores both peers
keys q
if wait_for "console-exit=0" 150; then ok "console exited 0"; else bad "console did not exit cleanly"; capture; fi
if capture | grep -q "restored A veth-a, B veth-b"; then
	ok "one-line restore summary printed"
else
	bad "no restore summary"; capture | tail -5
fi
ja=$(tcj "$NS_A" veth-a)
jb=$(tcj "$NS_B" veth-b)
case "$ja" in *'"kind":"noqueue"'*) ok "veth-a back to noqueue" ;; *) bad "veth-a after quit: $ja" ;; esac
case "$jb" in *'"kind":"noqueue"'*) ok "veth-b back to noqueue" ;; *) bad "veth-b after quit: $jb" ;; esac

finish
