#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/notty.sh - the console's refusals without a terminal (no root, no lab).
. "$(dirname "$0")/lib.sh"
# --- checks that need no privileges -----------------------------------------
out=$("$BIN" console </dev/null 2>&1 | cat)
case "$out" in
*"needs a terminal"*) ok "refuses the console when stdout is not a tty" ;;
*) bad "no refusal without a tty: $out" ;;
esac
out=$(TERM=dumb script -qec "$BIN console" /dev/null 2>&1 </dev/null)
case "$out" in
*"TERM is dumb"*) ok "refuses the console with TERM=dumb" ;;
*) bad "no refusal with TERM=dumb: $out" ;;
esac
case "$out" in
*"A (this host) "*"path: A->B "*"theory (1 stream, A->B): "*) ok "TERM=dumb: plain line output (held qdisc, path, theory)" ;;
*) bad "TERM=dumb: no plain output: $out" ;;
esac

finish
