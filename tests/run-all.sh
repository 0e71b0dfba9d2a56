#!/bin/sh
# make check: every suite, then one closing line "N passed, N failed, N skipped".
# Suites print their own "NAME: N passed, N failed[, N skipped]" line.
# One suite at a time: the unit tests time an emulated delay, the lab and
# console suites time what they measure, and even the suites that only wait
# (restore, ssh, exit paths) start sshd sessions and processes on the peer
# that, side by side on the 2-core CI machine, doubled their run times and
# broke their bounded waits.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rcs=0
LL_PY_REPO=$PWD; . tests/python-path.sh
# the unit binaries build and run J at a time (test_bridge times a 20 ms
# delay with 2-10 ms to spare: one neighbour is fine, a busy lab suite not)
J=$(nproc 2>/dev/null || echo 1)
for suite in "sh scripts/check-layering.sh" "sh tests/lint.sh" "make --no-print-directory -j$J BUILD=$BUILD unit" "make --no-print-directory BUILD=$BUILD fuzz-check" \
	"sh tests/lab/run.sh" "sh tests/lab/interop.sh" "sh tests/lab/ssh.sh" "sh tests/lab/bridge.sh" "sh tests/lab/bridgectl.sh" "sh tests/lab/impair.sh" "sh tests/lab/restore.sh" "sh tests/lab/rpm.sh" "sh tests/lab/verify.sh" "sh tests/lab/ansible.sh" "sh tests/lab/engine.sh" "sh tests/lab/hostile.sh" "sh tests/lab/exitpaths.sh" \
	"sh tests/tui/run.sh"; do
	set -- $suite
	if [ "$1" = sh ] && [ ! -f "$2" ]; then
		echo "=== $suite: missing"; echo "$2: 0 passed, 1 failed" >> "$log"
		rcs=1; continue
	fi
	echo "=== $suite"
	t0=$(date +%s)
	{ LINKLAB="$PWD/$BUILD/linklab" $suite 2>&1; echo "rc=$?" > "$log.rc"; } | tee -a "$log"
	echo "=== $suite: $(( $(date +%s) - t0 )) s"
	if ! grep -q '^rc=0$' "$log.rc"; then rcs=1; fi
	rm -f "$log.rc"
done
p=0; f=0; s=0
for n in $(sed -n 's/.*[: ]\([0-9][0-9]*\) passed.*/\1/p' "$log"); do p=$((p+n)); done
for n in $(sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p' "$log"); do f=$((f+n)); done
for n in $(sed -n 's/.* \([0-9][0-9]*\) skipped.*/\1/p' "$log"); do s=$((s+n)); done
echo
grep -E '^[a-z-]+: [0-9]+ passed' "$log" | sed 's/^/  /'
[ "$rcs" != 0 ] && [ "$f" = 0 ] && f=1
echo "check: $p passed, $f failed, $s skipped"
[ "$f" = 0 ]
