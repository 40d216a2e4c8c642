#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, checks that the realtime path compiles
# with @_noAllocation/@_noLocks in an optimised build, then runs every test: first those that
# need no JACK server, then the live ones, alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
# The realtime path (Lockstep's render loop, LockstepJACK's process callback) is checked with
# @_noAllocation/@_noLocks, which only an optimised build checks: those two targets, in release,
# in a build folder of their own, beside the tests' build (its one big compile, the Lockstep
# module, keeps one core busy while the other has few jobs to run).
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
# One build of everything and the tests, then swift-argument-parser's generate-manual
# (ManPageTests checks Docs/lockstep.1 with it). Building the tool as a product, not through the
# plugin, keeps the test build's flags: the plugin's build would compile every module again.
# The build is unoptimised (-Onone, as a debug build) but in the release configuration: each
# module is one compile (whole-module: on two cores a quarter faster than debug's batches), and
# DEBUG is not defined, in which swift-argument-parser checks every command's definition on each
# parse (0.1 s of each of the thousand-odd lockstep processes the tests start). The realtime
# checks need optimisation: LOCKSTEP_UNOPTIMIZED leaves them to the build above. No debug
# information (-gnone): the build takes 6 % less time and the test bundle is 40 % smaller; a
# crash's backtrace still names its functions. Its own build folder: the release builds of
# Scripts/demo.sh and bench.sh in .build stay as they are.
build=(--scratch-path .build-tests -c release -Xswiftc -Onone -Xswiftc -gnone -Xswiftc -enable-testing -Xswiftc -DLOCKSTEP_UNOPTIMIZED)
echo "test: build of the package and its tests (release configuration, unoptimised)" >&2
started=$SECONDS
swift build "${build[@]}" --build-tests
swift build "${build[@]}" --product generate-manual
echo "test: the build took $((SECONDS - started)) s" >&2
if ! wait "$realtime_pid"; then
    realtime_pid=
    cat "$realtime_log" >&2
    echo "test: FAILED: the release build of the realtime path" >&2
    exit 1
fi
realtime_pid=
grep -E "error|warning: .*(noAllocation|noLocks)|complete" "$realtime_log" >&2 || true
echo "test: the realtime path's release build is done ($((SECONDS - started)) s after the tests' build began)" >&2
# The whole log is kept; on a failure, what failed is printed again at the end, where a CI log
# that shows only its tail still has it.
status=0
# Two runs. First every test that needs no JACK server, suites in parallel. Then the live
# suites (every suite nested in `JACKTests`: each starts its own realtime jackd), one at a time
# and alone, so that a realtime test never shares the two cores with a compiling or computing
# suite: their xruns are then the machine's own, and a check that holds only without xruns can
# be strict (XrunRetry.swift).
phase() {   # phase NAME ARGS…: runs `swift test ARGS…`, appending to the log; times it
    local name=$1 started=$SECONDS
    shift
    echo "test: $name" >&2
    swift test "$@" 2>&1 | tee -a "$log" || status=$?
    echo "test: $name took $((SECONDS - started)) s" >&2
}
if [ "$#" -eq 0 ]; then
    phase "the tests that need no JACK server" "${build[@]}" --skip-build --skip '\.JACKTests/'
    # What the build and the first phase wrote goes to disk first, not in the live tests' cycles.
    sync
    phase "the live (JACK) tests, one at a time" "${build[@]}" --skip-build --filter '\.JACKTests/'
else
    phase "swift test $*" "${build[@]}" "$@"
fi
# Every rerun after a server xrun (XrunRetry.swift), so a run's report can say what happened.
reruns=$(grep -c "; once more$" "$log" || true)
echo "test: $reruns scenario rerun(s) after a server xrun" >&2
grep "; once more$" "$log" >&2 || true
if [ "$status" -ne 0 ]; then
    echo "test: FAILED (exit $status); what failed:" >&2
    # Each failed expectation with its message (the "↳" lines under it), so the measured
    # figures a test puts in its message reach the end of the log too.
    # (Not the lines that announce or pass a test: names and arguments may say "error:".)
    awk '/^◇|^✔/ { keep = 0; next }
         /recorded an issue|error:|Fatal error|Expectation failed/ { print; keep = 1; next }
         /^✘/ && !/^✘ Test run with/ { print; keep = 0; next }
         keep && /↳/ { print; next }
         { keep = 0 }' "$log" | head -120 >&2 || true
fi
exit "$status"
