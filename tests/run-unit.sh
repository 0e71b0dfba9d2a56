#!/bin/sh
# Run each cmocka unit-test binary; print one closing line
# "unit: N passed, N failed, N skipped (cases: N run)": the binaries that
# passed and failed, and the cases they skipped (LL_SKIP, tests/unit/fixture.h,
# each with its reason printed above). The binaries run UNIT_JOBS at a time
# (default: the CPUs here; nothing in them is timed, each netns case has an
# anonymous namespace of its own); their outputs are printed in order.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 1)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# worker K runs binaries K, K+jobs, K+2*jobs, ... and records each exit status
k=0
while [ $k -lt "$jobs" ]; do
	(i=0; for t in "$@"; do
		if [ $((i % jobs)) = $k ]; then
			"$t" > "$out/$i.log" 2>&1; echo $? > "$out/$i.rc"
		fi
		i=$((i + 1))
	done) &
	k=$((k + 1))
done
wait
pass=0; fail=0; skipped=0; cases=0; i=0
for t in "$@"; do
	cat "$out/$i.log"
	if [ "$(cat "$out/$i.rc" 2>/dev/null)" = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $t"; fi
	# the binary's closing summary (a NETNS_CASE child's own is not relayed)
	n=$(sed -n 's/^\[==========\] \([0-9][0-9]*\) test(s) run\..*/\1/p' "$out/$i.log" | tail -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test(s), listed below:.*/\1/p' "$out/$i.log" | tail -1)
	cases=$((cases + ${n:-0})); skipped=$((skipped + ${s:-0}))
	i=$((i + 1))
done
echo "unit: $pass passed, $fail failed, $skipped skipped (cases: $cases run)"
[ "$fail" = 0 ]
