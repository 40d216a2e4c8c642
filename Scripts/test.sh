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
swift test "$@" 2>&1 | tee "$log" || status=$?
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
