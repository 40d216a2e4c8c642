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
    grep -E "✘|recorded an issue|error:|Fatal error|Expectation failed" "$log" | grep -v "^✘ Test run with" | head -60 >&2 || true
fi
exit "$status"
