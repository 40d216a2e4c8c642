#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then runs the live (JACK) tests one
# at a time while, at the lowest priority beside them, the realtime path's optimised build (its
# @_noAllocation/@_noLocks checks) and the tests that need no JACK server run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
log=$(mktemp "${TMPDIR:-/tmp}/lockstep-test.XXXXXX")
realtime_log=$(mktemp "${TMPDIR:-/tmp}/lockstep-realtime.XXXXXX")
offline_log=$(mktemp "${TMPDIR:-/tmp}/lockstep-offline.XXXXXX")
beside_status=$(mktemp "${TMPDIR:-/tmp}/lockstep-beside.XXXXXX")
beside_pid=
cleanup() {
    # What runs beside the live tests is a process group of its own: its compilers and test
    # processes stop with it.
    if [[ -n "$beside_pid" ]]; then kill -- "-$beside_pid" 2>/dev/null || true; wait "$beside_pid" 2>/dev/null || true; fi
    rm -f "$log" "$realtime_log" "$offline_log" "$beside_status"
}
trap cleanup EXIT
# One build of everything and the tests, unoptimised (-Onone, as a debug build) but in the
# release configuration: each module is one compile (whole-module: on two cores a quarter
# faster than debug's batches), and DEBUG is not defined, in which swift-argument-parser checks
# every command's definition on each parse (0.1 s of each of the thousand-odd lockstep processes
# the tests start). The realtime checks need optimisation: LOCKSTEP_UNOPTIMIZED leaves them to
# the release build below. No debug information (-gnone): the build takes 6 % less time and the
# test bundle is 40 % smaller; a crash's backtrace still names its functions. Its own build
# folder, where it resolves the dependencies itself (`swift package resolve` would fill `.build`,
# 30 s for nothing here): the release builds of Scripts/demo.sh and bench.sh in .build stay as
# they are.
build=(--scratch-path .build-tests -c release -Xswiftc -Onone -Xswiftc -gnone -Xswiftc -enable-testing -Xswiftc -DLOCKSTEP_UNOPTIMIZED)
echo "test: build of the package and its tests (release configuration, unoptimised)" >&2
started=$SECONDS
swift build "${build[@]}" --build-tests
echo "test: the build took $((SECONDS - started)) s" >&2
# The whole log is kept; on a failure, what failed is printed again at the end, where a CI log
# that shows only its tail still has it.
status=0
phase() {   # phase NAME ARGS…: runs `swift test ARGS…`, appending to the log; times it
    local name=$1 started=$SECONDS
    shift
    echo "test: $name" >&2
    swift test "$@" 2>&1 | tee -a "$log" || status=$?
    echo "test: $name took $((SECONDS - started)) s" >&2
}
# Beside the live tests, on every core but the first and at the lowest priority (SCHED_IDLE:
# the CPU time no other thread wants): the release build of the realtime path (Lockstep's
# render loop, LockstepJACK's process callback: its @_noAllocation/@_noLocks checks happen only
# in an optimised build); swift-argument-parser's generate-manual (ManPageTests checks
# Docs/lockstep.1 with it), built as a product, not through the plugin, whose build would
# compile every module again with other flags; then every test that needs no JACK server,
# suites in parallel. The live tests mostly wait on the audio clock, so these take the time
# they leave; a live scenario whose server xrunned is run again (XrunRetry.swift), and the
# script lists each rerun.
beside() {
    local cpus=0 started=$SECONDS rc=0
    if (( $(nproc) > 1 )); then cpus="1-$(( $(nproc) - 1 ))"; fi
    taskset -p -c "$cpus" "$BASHPID" >/dev/null
    chrt --idle -p 0 "$BASHPID"
    swift build -c release --target LockstepJACK --scratch-path .build-realtime >"$realtime_log" 2>&1 || rc=$?
    echo "realtime $rc $((SECONDS - started))" >"$beside_status"
    started=$SECONDS rc=0
    swift build "${build[@]}" --ignore-lock --product generate-manual >"$offline_log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        swift test "${build[@]}" --skip-build --ignore-lock --skip '\.JACKTests/' >>"$offline_log" 2>&1 || rc=$?
    fi
    echo "offline $rc $((SECONDS - started))" >>"$beside_status"
}
if [ "$#" -eq 0 ]; then
    # What the build wrote goes to disk first, not in the live tests' cycles.
    sync
    echo "test: beside the live tests (SCHED_IDLE): the realtime path's release build, then the tests that need no JACK server" >&2
    set -m; ( beside ) & beside_pid=$!; set +m
    # The live suites (every suite nested in `JACKTests`: each starts its own realtime jackd)
    # run one at a time, never two realtime servers at once.
    phase "the live (JACK) tests, one at a time" "${build[@]}" --skip-build --filter '\.JACKTests/'
    wait "$beside_pid" || true
    beside_pid=
    while read -r what rc took; do
        if [ "$what" = realtime ]; then
            grep -E "error|warning: .*(noAllocation|noLocks)|complete" "$realtime_log" >&2 || true
            echo "test: the realtime path's release build took $took s" >&2
            if [ "$rc" -ne 0 ]; then
                cat "$realtime_log" >&2
                echo "test: FAILED: the release build of the realtime path" >&2
                status=$rc
            fi
        else
            echo "test: the tests that need no JACK server (beside the live ones):" >&2
            tee -a "$log" <"$offline_log"
            echo "test: the tests that need no JACK server took $took s" >&2
            if [ "$rc" -ne 0 ]; then status=$rc; fi
        fi
    done <"$beside_status"
    grep -q '^offline ' "$beside_status" || { echo "test: FAILED: the tests beside the live ones did not finish" >&2; status=1; }
else
    swift build "${build[@]}" --product generate-manual
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
