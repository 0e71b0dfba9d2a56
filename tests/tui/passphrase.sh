#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/passphrase.sh - an encrypted key's passphrase asked on the console's screen.
. "$(dirname "$0")/lib.sh"
tui_need_root
tui_lab_up
tui_tmux_up

# 8. an encrypted key: the passphrase is asked on the console's own screen
#    (curses, through po.ssh.prompt) and never echoed
$TMUX kill-session -t tui 2>/dev/null
if ssh-keygen -q -t ed25519 -N 'pp-s3cret' -C llD3-pp -f "$LAB_DIR/pp_key" 2>/dev/null; then
	cat "$LAB_DIR/pp_key.pub" >> "$LAB_DIR/authorized_keys"
	$TMUX new-session -d -s tui -x 120 -y 36 \
		"TERM=screen SSH_AUTH_SOCK= $XDG ip netns exec $NS_A $BIN console -F $LL_SSH_CONFIG --ssh-key $LAB_DIR/pp_key --peer $LL_PEER 2>&1; echo console-exit=\$?; sleep 600"
	if wait_for "Enter passphrase for key '$LAB_DIR/pp_key'" 150; then
		ok "passphrase asked on the console's screen"
		$TMUX send-keys -t tui -l 'pp-s3cret'
		if wait_for "not shown: 9 characters typed" 30 && ! capture | grep -q 'pp-s3cret'; then
			ok "passphrase not echoed (only the count of typed characters)"
		else
			bad "passphrase echoed or not counted"; capture
		fi
		keys Enter
		fp=$(ssh-keygen -lf "$LAB_DIR/pp_key.pub" | awk '{print $2}')
		if wait_for "veth-b" 150 && grep -q "Accepted publickey.*$fp" "$LAB_DIR/sshd.log" 2>/dev/null; then
			ok "logged in with the passphrase-protected key ($fp)"
		elif capture | grep -q "veth-b"; then
			ok "connected after the passphrase (sshd.log has no key fingerprint to compare)"
		else
			bad "not connected after the passphrase"; capture
		fi
		keys q
		if wait_for "console-exit=0" 150; then ok "passphrase run: quits cleanly"; else bad "passphrase run: no clean exit"; capture | tail -3; fi
	else
		bad "no passphrase prompt on the console's screen"; capture
	fi
else
	skip "ssh-keygen could not make a passphrase key"
fi


finish
