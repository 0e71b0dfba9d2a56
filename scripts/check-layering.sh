#!/bin/sh
# Each library lives behind one module (design.md). Fail on a violation.
cd "$(dirname "$0")/.." || exit 1
bad=0
check() { # pattern allowed-files-regex
	for f in $(grep -l "#include <$1" src/*.c src/tui/*.c src/tui/*.h include/linklab/*.h 2>/dev/null); do
		echo "$f" | grep -Eq "$2" || { echo "layering: $f includes <$1> (only $2 may)"; bad=1; }
	done
}
check 'n\?curses' '^src/tui/'
check 'libssh2' '^src/ssh\.c$'
check 'iniparser' '^src/profile\.c$'
# the netlink backend: nl*.c, peer_local.c, journal.c, flowfilter.c, ifb.c, links.c
check 'netlink/' '^src/(nl[a-z_]*|peer_local|journal|flowfilter|ifb|links)\.c$|^include/linklab/nl[a-z_]*\.h$'
# engines never print: no stdout/stderr printing outside commands and the console
for f in src/*.c; do
	case "$f" in src/cmd_*|src/cli.c|src/main.c) continue;; esac
	if grep -nE '\b(printf|puts|perror)\(|fprintf\((stdout|stderr)' "$f" | grep -v snprintf | grep -q .; then
		echo "layering: $f prints (engines must return messages)"; bad=1
	fi
	if grep -nE '\bexit\(' "$f" | grep -v '_exit(' | grep -q .; then
		echo "layering: $f calls exit() (engines must return errors)"; bad=1
	fi
done
if [ $bad = 0 ]; then echo "layering: 1 passed, 0 failed"; else echo "layering: 0 passed, 1 failed"; fi
exit $bad
