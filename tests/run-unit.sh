#!/bin/sh
# Run each cmocka unit-test binary; print one closing line
# "unit: N passed, N failed, N skipped (cases: N run)": the binaries that
# passed and failed, and the cases they skipped (LL_SKIP, tests/unit/fixture.h,
# each with its reason printed above).
pass=0; fail=0; skipped=0; cases=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	if "$t" > "$out" 2>&1; then ok=1; else ok=0; fi
	cat "$out"
	if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $t"; fi
	# the binary's closing summary (a NETNS_CASE child's own is not relayed)
	n=$(sed -n 's/^\[==========\] \([0-9][0-9]*\) test(s) run\..*/\1/p' "$out" | tail -1)
	k=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test(s), listed below:.*/\1/p' "$out" | tail -1)
	cases=$((cases + ${n:-0})); skipped=$((skipped + ${k:-0}))
done
echo "unit: $pass passed, $fail failed, $skipped skipped (cases: $cases run)"
[ "$fail" = 0 ]
