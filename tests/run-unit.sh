#!/bin/sh
# Run each cmocka unit-test binary; print one closing line "N passed, N failed".
pass=0; fail=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
for t in "$@"; do
	if "$t"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $t"; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" = 0 ]
