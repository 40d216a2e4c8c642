#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, checks that the realtime path compiles
# with @_noAllocation/@_noLocks in an optimised build, then runs every test: the live ones one at
# a time, those that need no JACK server beside them in the time the live ones leave idle.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
# The realtime path (Lockstep's render loop, LockstepJACK's process callback) is checked with
# @_noAllocation/@_noLocks, which only an optimised build checks: those two targets, in release,
# in a build folder of their own, beside the debug build (its one big compile, the Lockstep
# module, keeps one core busy while the debug build has few jobs to run).
log=$(mktemp "${TMPDIR:-/tmp}/lockstep-test.XXXXXX")
realtime_log=$(mktemp "${TMPDIR:-/tmp}/lockstep-realtime.XXXXXX")
realtime_pid=
cleanup() {
    # The background build is a process group of its own (setsid): its compilers stop with it.
    if [[ -n "$realtime_pid" ]]; then kill -- "-$realtime_pid" 2>/dev/null || true; wait "$realtime_pid" 2>/dev/null || true; fi
    rm -f "$log" "$realtime_log"
}
trap cleanup EXIT
swift package resolve
echo "test: release build of the realtime path (its @_noAllocation/@_noLocks checks), in the background" >&2
setsid swift build -c release --target LockstepJACK --scratch-path .build-realtime >"$realtime_log" 2>&1 &
realtime_pid=$!
# One debug build of everything and the tests, then swift-argument-parser's generate-manual
# (ManPageTests checks Docs/lockstep.1 with it). Building the tool as a product, not through the
# plugin, keeps the test build's flags: the plugin's build would compile every module again.
echo "test: debug build of the package and its tests" >&2
started=$SECONDS
swift build --build-tests
swift build --product generate-manual
echo "test: the debug build took $((SECONDS - started)) s" >&2
if ! wait "$realtime_pid"; then
    realtime_pid=
    cat "$realtime_log" >&2
    echo "test: FAILED: the release build of the realtime path" >&2
    exit 1
fi
realtime_pid=
grep -E "error|warning: .*(noAllocation|noLocks)|complete" "$realtime_log" >&2 || true
echo "test: the realtime path's release build is done ($((SECONDS - started)) s after the debug build began)" >&2
# The whole log is kept; on a failure, what failed is printed again at the end, where a CI log
# that shows only its tail still has it.
status=0
# Every test that needs no JACK server, suites in parallel, and the live suites (every suite
# nested in `JACKTests`: each starts its own realtime jackd), one at a time, at once: the live
# ones leave most of the two cores idle while they play in real time, and the others take
# that idle time only (SCHED_IDLE: they never run while a live test's thread wants the core;
# JACK's threads are realtime anyway). A live test's xruns are then the machine's own, and a
# check that holds only without xruns can be strict (XrunRetry.swift). The test bundle is run
# directly: two `swift test` would wait for each other's lock on the build folder.
bundle="$(swift build --show-bin-path)/LockstepPackageTests.xctest"
offline_log=$(mktemp "${TMPDIR:-/tmp}/lockstep-offline.XXXXXX")
offline_pid=
cleanup_tests() {
    if [[ -n "$offline_pid" ]]; then kill -- "-$offline_pid" 2>/dev/null || true; wait "$offline_pid" 2>/dev/null || true; fi
    rm -f "$offline_log"
    cleanup
}
trap cleanup_tests EXIT
if [ "$#" -eq 0 ]; then
    started=$SECONDS
    echo "test: the tests that need no JACK server (SCHED_IDLE, in the background) and the live (JACK) tests, one at a time" >&2
    setsid chrt --idle 0 "$bundle" --testing-library swift-testing --skip '\.JACKTests/' >"$offline_log" 2>&1 &
    offline_pid=$!
    "$bundle" --testing-library swift-testing --filter '\.JACKTests/' 2>&1 | tee -a "$log" || status=$?
    echo "test: the live tests took $((SECONDS - started)) s" >&2
    offline_status=0
    wait "$offline_pid" || offline_status=$?
    offline_pid=
    echo "test: the tests that need no JACK server took $((SECONDS - started)) s (exit $offline_status); their output:" >&2
    tee -a "$log" <"$offline_log"
    [ "$offline_status" -eq 0 ] || status=$offline_status
else
    echo "test: swift test $*" >&2
    swift test "$@" 2>&1 | tee -a "$log" || status=$?
fi
# Every rerun after a server xrun (XrunRetry.swift), so a run's report can say what happened.
reruns=$(grep -c "; once more$" "$log" || true)
echo "test: $reruns scenario rerun(s) after a server xrun" >&2
grep "; once more$" "$log" >&2 || true
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
