#!/bin/sh
# make check: every suite, then one closing line "N passed, N failed, N skipped".
# Suites print their own "NAME: N passed, N failed[, N skipped]" line.
#
# Three phases:
#  1. the build-heavy checks, alone: layering, lint, the unit tests under
#     ASan/UBSan (some of them time an emulated delay) and the fuzz targets;
#  2. the suites that time nothing and mostly wait (on revert timers, SSH
#     sessions, the console's screens) run side by side in LANES: a lane runs
#     its suites one after the other, the lanes run at once; each suite's
#     output is held and printed whole, in the order of SIDE_BY_SIDE, when
#     the phase ends;
#  3. the suites that time what they measure (throughput, RTT, loss, the
#     console's live tests) run alone, one after the other.
# CHECK_SERIAL=1 runs phase 2 one suite at a time too (for a busy machine).
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
J=$(nproc 2>/dev/null || echo 1)
log=$(mktemp)
held=$(mktemp -d)
trap 'rm -rf "$log" "$held"' EXIT
rcs=0
LL_PY_REPO=$PWD; . tests/python-path.sh

FIRST="sh scripts/check-layering.sh|sh tests/lint.sh|\
make --no-print-directory -j$J BUILD=$BUILD unit|make --no-print-directory BUILD=$BUILD fuzz-check"

# Phase 2's lanes, separated by '|'; a lane's suites separated by ','. Alone
# on the 2-core CI machine (wall s / CPU s): restore 187/53 + the console's
# fault scenarios 90/12; ssh 155/41 + exitpaths 45/5 + hostile 15/17;
# ansible 141/62 + the console's exit paths 96/23. Together they keep well
# under one core busy; the phase takes about as long as its longest lane.
SIDE_BY_SIDE="sh tests/lab/restore.sh, sh tests/tui/notty.sh, sh tests/tui/signals.sh, sh tests/tui/lost.sh, sh tests/tui/passphrase.sh, sh tests/tui/input.sh|\
sh tests/lab/ssh.sh, sh tests/lab/exitpaths.sh, sh tests/lab/hostile.sh|\
sh tests/lab/ansible.sh, sh tests/tui/exitpaths.sh"

ALONE="sh tests/tui/golden.sh|sh tests/lab/run.sh|sh tests/lab/interop.sh|sh tests/lab/bridge.sh|\
sh tests/lab/bridgectl.sh|sh tests/lab/impair.sh|sh tests/lab/rpm.sh|\
sh tests/lab/verify.sh|sh tests/lab/engine.sh|sh tests/tui/console.sh|\
sh tests/tui/middle.sh|sh tests/tui/verify.sh|sh tests/tui/freeze.sh|\
sh tests/tui/engine.sh"

# missing SUITE...: true (and counted as a failure) when the suite's script is gone
missing() {
	[ "$1" = sh ] && [ ! -f "$2" ] || return 1
	echo "$2: 0 passed, 1 failed" >> "$log"
	return 0
}

# run_held N SUITE...: run one suite, its output to $held/N.out, its exit
# status and seconds to $held/N.rc
run_held() {
	n=$1; shift
	t0=$(date +%s)
	LINKLAB="$PWD/$BUILD/linklab" "$@" > "$held/$n.out" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" > "$held/$n.rc"
}

# run_alone LIST: the suites of LIST ('|'-separated) one at a time, output live
run_alone() {
	IFS='|'; for suite in $1; do
		unset IFS
		set -- $suite
		if missing "$@"; then echo "=== $suite: missing"; rcs=1; IFS='|'; continue; fi
		echo "=== $suite"
		t0=$(date +%s)
		{ LINKLAB="$PWD/$BUILD/linklab" "$@" 2>&1; echo "rc=$?" > "$log.rc"; } | tee -a "$log"
		echo "=== $suite: $(( $(date +%s) - t0 )) s"
		grep -q '^rc=0$' "$log.rc" || rcs=1
		rm -f "$log.rc"
		IFS='|'
	done
	unset IFS
}

# phase 1
run_alone "$FIRST"

# phase 2: start every lane, wait for all, print each suite's held output
t1=$(date +%s)
n=0
IFS='|'; for lane in $SIDE_BY_SIDE; do
	lanelist=
	IFS=','; for suite in $lane; do
		n=$((n+1)); lanelist="$lanelist $n"
		echo "$suite" | sed 's/^ *//' > "$held/$n.name"
	done
	unset IFS
	(
		for k in $lanelist; do
			set -- $(cat "$held/$k.name")
			if missing "$@"; then echo "1 0" > "$held/$k.rc"; : > "$held/$k.out"; continue; fi
			run_held "$k" "$@"
		done
	) &
	[ -n "${CHECK_SERIAL:-}" ] && wait
	IFS='|'
done
unset IFS
wait
k=1
while [ $k -le $n ]; do
	name=$(cat "$held/$k.name")
	set -- $(cat "$held/$k.rc" 2>/dev/null || echo "1 0")
	echo "=== $name (side by side)"
	tee -a "$log" < "$held/$k.out"
	[ -s "$held/$k.out" ] || echo "=== $name: missing"
	echo "=== $name: $1 exit, $2 s"
	[ "$1" = 0 ] || rcs=1
	k=$((k+1))
done
echo "=== side-by-side phase: $(( $(date +%s) - t1 )) s"

# phase 3
run_alone "$ALONE"

p=0; f=0; s=0
for x in $(sed -n 's/.*[: ]\([0-9][0-9]*\) passed.*/\1/p' "$log"); do p=$((p+x)); done
for x in $(sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p' "$log"); do f=$((f+x)); done
for x in $(sed -n 's/.* \([0-9][0-9]*\) skipped.*/\1/p' "$log"); do s=$((s+x)); done
echo
grep -E '^[a-z-]+: [0-9]+ passed' "$log" | sed 's/^/  /'
[ "$rcs" != 0 ] && [ "$f" = 0 ] && f=1
echo "check: $p passed, $f failed, $s skipped"
[ "$f" = 0 ]
