#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tui/run.sh - every console scenario, one after the other (each one
# is also runnable alone: sh tests/tui/NAME.sh; helpers in tests/tui/lib.sh).
#   LINKLAB=path/to/linklab sh tests/tui/run.sh      (default build/linklab)
# Each scenario prints its PASS/FAIL/SKIP lines and its own
# "tui-NAME: N passed, N failed, N skipped" (tests/run-all.sh adds them up);
# the exit status is 1 when any scenario failed.
cd "$(dirname "$0")" || exit 1
rc=0
for s in notty golden console signals lost passphrase middle verify freeze engine input exitpaths; do
	t0=$(date +%s)
	sh "./$s.sh" || rc=1
	echo "  tui-$s: $(( $(date +%s) - t0 )) s"
done
exit $rc
