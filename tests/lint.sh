#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lint.sh - repository checks that need no root and no build:
#  - the lab scripts the docs run as `lab/lab.sh up` are executable, on disk
#    and in git;
#  - README.md and doc/bridge.md name the middle namespace lab-bridge.sh
#    creates, in the command they show;
#  - comments in src/, include/ and tests/ say what the code does, not which
#    issue or developer added it;
#  - the man page's SYNOPSIS names every command of the CLI's table
#    (src/cli/cli.c) and every option its usage text lists for verify, rpm,
#    show and clear.
LL_REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/lab/lib.sh"
LL_REPO=$(cd "$(dirname "$0")/.." && pwd)  # lib.sh assumes tests/lab/
cd "$LL_REPO" || exit 1
for s in lab.sh lab-bridge.sh; do
	mode=$(git -C "$LL_REPO" ls-files -s "lab/$s" 2>/dev/null | cut -c1-6)
	if [ -x "$LL_REPO/lab/$s" ] && { [ -z "$mode" ] || [ "$mode" = 100755 ]; }; then
		pass "lint: lab/$s is executable (git mode ${mode:-untracked})"
	else
		fail "lint: lab/$s not executable (git mode $mode)"
	fi
done
nsm=$(sed -n 's/^NS_M=\${LL_NS_M:-\(.*\)}$/\1/p' "$LL_REPO/lab/lab-bridge.sh")
for d in README.md doc/bridge.md; do
	if [ -n "$nsm" ] && grep -q "ip netns exec $nsm build/linklab bridge --status" "$LL_REPO/$d"; then
		pass "lint: $d says how to run a command in the middle ($nsm)"
	else
		fail "lint: $d does not name the middle namespace '$nsm'"
	fi
done
hist=$(grep -rnE '(added by|additions) \(?issue|\(issue [0-9]+\)|\bissue[- ][0-9]+[:) ]|developer [A-Z][0-9]' \
	src include tests/unit tests/lab tests/tui tests/*.sh 2>/dev/null | grep -v '^tests/lint.sh:')
if [ -z "$hist" ]; then
	pass "lint: no history notes (\"added by issue N\") in src/ include/ tests/"
else
	fail "lint: history notes in comments (say what the code does):"
	echo "$hist" | sed 's/^/  /'
fi
cmds=$(sed -n 's/^	{ "\([a-z]*\)", cmd_.*/\1/p' src/cli/cli.c)
syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' doc/linklab.1 | sed 's/\\-/-/g')
miss=
for c in $cmds; do
	echo "$syn" | grep -q "^\.B linklab $c\b" || { [ "$c" = console ] && echo "$syn" | grep -q "console"; } ||
		miss="$miss $c"
done
# the options of a command's usage line in cli.c (its first two lines)
for c in verify rpm show clear; do
	u=$(awk -v c="$c" 'index($0, "\t{ \"" c "\", cmd_") == 1 { on = 1 } on { print } on && /},$/ { exit }' \
		src/cli/cli.c | grep -o -- '--[a-z][a-z-]*' | sort -u)
	s=$(echo "$syn" | sed -n "/^\.B linklab $c\$/,/^\.br/p" | grep -o -- '--[a-z][a-z-]*' | sort -u)
	for o in $u; do echo "$s" | grep -qx -- "$o" || miss="$miss $c:$o"; done
done
if [ -n "$cmds" ] && [ -z "$miss" ]; then
	pass "lint: man page SYNOPSIS has every command ($(echo $cmds | wc -w)) and the verify/rpm/show/clear options"
else
	fail "lint: man page SYNOPSIS lacks:$miss (commands found: $(echo $cmds))"
fi
summary lint
