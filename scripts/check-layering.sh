#!/bin/sh
# The layers are folders (doc/architecture.md). Fails, naming the file, when
#  - a folder includes a header of a layer above it (the order below);
#  - a library appears outside the one folder that owns it (or an exception
#    listed for it is gone or no longer includes it);
#  - an engine (anything but cli/, tui/ and main.c) prints or calls exit();
#  - the model (pure data and rules) runs a program (popen, system, exec)
#    or reads the host's state (/proc/sys, /proc/net, /sys).
cd "$(dirname "$0")/.." || exit 1
bad=0
# Lowest first. A folder may include its own headers and those of the layers
# before it in this list.
ORDER="base model netlink remote peer traffic bridge engine console cli"
rank() { # layer -> index in ORDER (tui ranks above console, below cli)
	i=0; for l in $ORDER; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i+1)); done
	[ "$1" = tui ] && { echo 8; return; }
	echo 99
}
for f in $(find src include/linklab -name '*.[ch]' | sort); do
	case "$f" in
	src/main.c) me=cli ;;
	src/*/*) me=${f#src/}; me=${me%%/*} ;;
	include/linklab/*/*) me=${f#include/linklab/}; me=${me%%/*} ;;
	*) echo "layering: $f is outside a layer folder"; bad=1; continue ;;
	esac
	[ "$(rank "$me")" = 99 ] && { echo "layering: $f: unknown layer '$me'"; bad=1; continue; }
	rm_=$(rank "$me")
	[ "$me" = tui ] && rm_=9  # tui sits on the controller (console) and below cli
	for inc in $(sed -n 's|^#include "linklab/\([a-z]*\)/[a-z_0-9]*\.h".*|\1|p' "$f" | sort -u); do
		ri=$(rank "$inc")
		if [ "$ri" = 99 ] || { [ "$inc" != "$me" ] && [ "$ri" -gt "$rm_" ]; }; then
			echo "layering: $f ($me) includes a header of $inc (above it)"; bad=1
		fi
	done
done
# lib PATTERN LAYER [FILE...]: only the folder LAYER (src/LAYER/,
# include/linklab/LAYER/) includes <PATTERN...>; each FILE is an exception
# outside it that still does. An exception must exist and still include the
# library, so the list can never name a file that is gone (or no longer
# needs it): the rules are folders, the exceptions are checked.
lib() {
	pat=$1; dir=$2; shift 2
	for f in $(grep -rl "#include <$pat" src include 2>/dev/null | sort); do
		case "$f" in src/"$dir"/*|include/linklab/"$dir"/*) continue ;; esac
		ok=0; for x in "$@"; do [ "$f" = "$x" ] && ok=1; done
		[ $ok = 1 ] || { echo "layering: $f includes <$pat> (only $dir/ may)"; bad=1; }
	done
	for x in "$@"; do
		if [ ! -f "$x" ]; then
			echo "layering: exception $x for <$pat> does not exist (remove it from $0)"; bad=1
		elif ! grep -q "#include <$pat" "$x"; then
			echo "layering: exception $x no longer includes <$pat> (remove it from $0)"; bad=1
		fi
	done
}
lib 'n\?curses' tui
lib libssh2 remote
lib iniparser model
lib libnetfilter_queue engine
# libnl and rtnetlink: the netlink layer, and the local peer, which still
# holds libnl sockets of its own to hand to the netlink layer's calls.
lib netlink/ netlink src/peer/peer_local.c
lib linux/rtnetlink.h netlink src/peer/peer_local.c
for f in $(find src -name '*.c' | sort); do
	case "$f" in src/cli/*|src/tui/*|src/main.c) continue;; esac
	if grep -nE '\b(printf|puts|perror)\(|fprintf\((stdout|stderr)' "$f" | grep -v snprintf | grep -q .; then
		echo "layering: $f prints (engines must return messages)"; bad=1
	fi
	if grep -nE '\bexit\(' "$f" | grep -v '_exit(' | grep -q .; then
		echo "layering: $f calls exit() (engines must return errors)"; bad=1
	fi
done
for f in src/model/*.c; do
	if grep -nE '\b(popen|system|execv?p?e?)\(' "$f" | grep -q .; then
		echo "layering: $f runs a program (the model takes host facts as parameters)"; bad=1
	fi
	if grep -nE '"/(proc/sys|proc/net|sys)/' "$f" | grep -q .; then
		echo "layering: $f reads /proc/sys, /proc/net or /sys (the model takes host facts as parameters)"; bad=1
	fi
done
if [ $bad = 0 ]; then echo "layering: 1 passed, 0 failed"; else echo "layering: 0 passed, 1 failed"; fi
exit $bad
