#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, checks that the realtime path compiles
# with @_noAllocation/@_noLocks in an optimised build, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
echo "test: release build (realtime checks on the render path)" >&2
swift build -c release
echo "test: the man page (Docs/lockstep.1) against the definitions" >&2
bash Scripts/man.sh --check
echo "test: swift test" >&2
# The whole log is kept; on a failure, what failed is printed again at the end, where a CI log
# that shows only its tail still has it.
log=$(mktemp "${TMPDIR:-/tmp}/lockstep-test.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
# Two runs: every test but the netjack2 one (suites run in parallel, JACK suites one at a time),
# then the netjack2 test alone — three jackd servers and their clients on one 2-core machine
# measure alignment frame by frame for a minute, and the rest of the suite's load beside them
# made JACK xrun dozens of times (seen in CI: 75 xruns in 60 s).
if [ "$#" -eq 0 ]; then
    swift test --skip NetJackTests 2>&1 | tee "$log" || status=$?
    echo "test: the netjack2 test, alone" >&2
    swift test --skip-build --filter NetJackTests 2>&1 | tee -a "$log" || status=$?
else
    swift test "$@" 2>&1 | tee "$log" || status=$?
fi
if [ "$status" -ne 0 ]; then
    echo "test: FAILED (exit $status); what failed:" >&2
    # Each failed expectation with its message (the "↳" lines under it), so the measured
    # figures a test puts in its message reach the end of the log too.
    awk '/recorded an issue|error:|Fatal error|Expectation failed/ { print; keep = 1; next }
         /^✘/ && !/^✘ Test run with/ { print; keep = 0; next }
         keep && /↳/ { print; next }
         { keep = 0 }' "$log" | head -120 >&2 || true
fi
exit "$status"
