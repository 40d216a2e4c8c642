#!/usr/bin/env bash
# Lockstep's fuzzing: builds the libFuzzer targets of Fuzz/ and runs each for a bounded time.
#
#   Scripts/fuzz.sh [SECONDS]      # SECONDS per target, default 60
#
# Targets (Fuzz/Sources/*):
#   session  a session file (UTF-8 text) checked as `lockstep session check` does: the YAML reader,
#            the parser, the audio files it names, the timeline at several rates, manual cues fired;
#   audio    an audio file (any bytes) opened with AudioFileReader (tolerating and rejecting
#            truncation), read in blocks as floats, integers and doubles, sought and peak-scanned;
#   osc      an OSC packet (any bytes): liblo's message and bundle decoders, QLab's address space
#            and its argument conversion (OSCAddressSpace.requests(in:));
#   control  typed control lines (--control): ControlLine.parse, line by line;
#   web      a web page command (a WebSocket message or POST body): WebCommand.parse;
#   numbers  every time, sample count, gain, ramp and channel map parser, and the first 8 bytes as
#            an OSC/JSON double through ControlRange.
#   The control targets (osc, control, web) assert that every command they build is in range
#   (ControlCommand.checked) and converts to samples without a trap.
#
# Each target is built with -sanitize=fuzzer,address (Swift) and -fsanitize=fuzzer-no-link,address
# (C: libyaml) in .build-fuzz/ (never by `swift build` or `swift test` of the package), then run as
#   .build-fuzz/fuzz-TARGET .build-fuzz/corpus/TARGET Fuzz/corpus/TARGET -max_total_time=SECONDS …
# starting from the seeds in Fuzz/corpus/TARGET (kept in git) and the inputs earlier runs found
# (.build-fuzz/corpus/TARGET), with the dictionary Fuzz/TARGET.dict when there is one. Each input must finish within LOCKSTEP_FUZZ_TIMEOUT seconds (default
# 10) and 2 GB. A crash, a timeout or running out of memory stops that target: the script goes on
# with the others, prints where each failing input was written (.build-fuzz/crashes/TARGET-…) and
# how to replay it, and exits 1. Replay one input: .build-fuzz/fuzz-TARGET FILE.
#
# Environment: LOCKSTEP_FUZZ_TARGETS (default "session audio osc control web numbers"), LOCKSTEP_FUZZ_TIMEOUT (seconds per
# input, default 10), LOCKSTEP_FUZZ_CONFIG (release or debug, default release: debug adds Swift's
# assertions and runs several times slower), LOCKSTEP_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=2).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
export LC_ALL=C

SECONDS_EACH=${1:-60}
[[ $SECONDS_EACH =~ ^[0-9]+$ && $SECONDS_EACH -gt 0 ]] || { echo "usage: Scripts/fuzz.sh [SECONDS per target, default 60]" >&2; exit 64; }
TARGETS=${LOCKSTEP_FUZZ_TARGETS:-session audio osc control web numbers}
TIMEOUT=${LOCKSTEP_FUZZ_TIMEOUT:-10}
CONFIG=${LOCKSTEP_FUZZ_CONFIG:-release}
BUILD=.build-fuzz
say() { echo "fuzz: $*" >&2; }
die() { echo "fuzz: error: $*" >&2; exit 1; }

# --- Build -----------------------------------------------------------------------------------------
# SwiftPM compiles the targets and everything they use with the sanitizers; libFuzzer supplies main,
# so each target (a library defining LLVMFuzzerTestOneInput) is linked here, with swiftc.
say "building Fuzz/ ($CONFIG, -sanitize=fuzzer,address) in $BUILD"
SWIFTPM=(swift build --package-path Fuzz --scratch-path "$BUILD" -c "$CONFIG"
    -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address)
"${SWIFTPM[@]}" >&2 || die "the fuzz build failed"
BIN=$("${SWIFTPM[@]}" --show-bin-path)

# The modules each target links, besides its own, and the system libraries beyond libsndfile's.
CONTROL="FuzzSupport LockstepControl LockstepSession LockstepSchema LockstepFiles Lockstep CYaml"
declare -A MODULES=([session]="SessionFuzz LockstepSession LockstepSchema LockstepFiles Lockstep CYaml"
    [audio]="AudioFileFuzz LockstepFiles Lockstep"
    [osc]="OSCFuzz LockstepOSC $CONTROL" [control]="ControlFuzz $CONTROL" [web]="WebCommandFuzz $CONTROL"
    [numbers]="NumbersFuzz LockstepSession LockstepSchema LockstepFiles Lockstep CYaml")
declare -A LIBRARIES=([osc]="liblo")
for target in $TARGETS; do
    [[ -n ${MODULES[$target]:-} ]] || die "unknown target '$target'; the targets are ${!MODULES[*]}"
    objects=()
    for module in ${MODULES[$target]}; do
        [[ -d "$BIN/$module.build" ]] || die "no $BIN/$module.build: the build did not compile $module"
        while IFS= read -r -d '' object; do objects+=("$object"); done < <(find "$BIN/$module.build" -name '*.o' -print0)
    done
    # (gold warns about every sanitizer helper it cannot export: the output shows only on failure.)
    # shellcheck disable=SC2046  # pkg-config prints several flags
    swiftc -sanitize=fuzzer,address "${objects[@]}" $(pkg-config --libs sndfile soxr ${LIBRARIES[$target]:-}) -lm \
        -o "$BUILD/fuzz-$target" >"$BUILD/link-$target.log" 2>&1 ||
        { cat "$BUILD/link-$target.log" >&2; die "linking $BUILD/fuzz-$target failed"; }
done

# --- Run -------------------------------------------------------------------------------------------
mkdir -p "$BUILD/crashes"
# Swift's own crash backtracer reads the crashed process's stack, which AddressSanitizer reports as
# a stack-buffer-underflow of its own; libFuzzer reports the crash (with a stack) instead.
export SWIFT_BACKTRACE=enable=no
# Leaks inside system libraries (libsndfile's Vorbis reader) are not Lockstep's: Fuzz/lsan.supp.
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
failed=()
for target in $TARGETS; do
    corpus="$BUILD/corpus/$target"
    mkdir -p "$corpus"
    before=$(find "$BUILD/crashes" -name "$target-*" | wc -l)
    log="$BUILD/fuzz-$target.log"
    say "running $target for $SECONDS_EACH s (log: $log)"
    status=0
    dict=()
    [[ -f "Fuzz/$target.dict" ]] && dict=(-dict="Fuzz/$target.dict")
    # shellcheck disable=SC2086  # LOCKSTEP_FUZZ_ARGS is a list of flags
    "$BUILD/fuzz-$target" "$corpus" "Fuzz/corpus/$target" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$target-" \
        "${dict[@]}" ${LOCKSTEP_FUZZ_ARGS:-} >"$log" 2>&1 || status=$?
    grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$log" | sed "s/^/fuzz: $target: /" >&2 || true
    if ((status != 0)); then
        grep -E '^==[0-9]+==ERROR|^SUMMARY|Fatal error|ALARM: working on the last Unit|out-of-memory' "$log" | head -n 5 | sed "s/^/fuzz: $target: /" >&2 || true
        failed+=("$target")
        say "$target FAILED (status $status); the input that failed:"
        find "$BUILD/crashes" -name "$target-*" | sort | tail -n $(($(find "$BUILD/crashes" -name "$target-*" | wc -l) - before)) |
            sed "s|^|fuzz:   |; s|\$|   (replay: $BUILD/fuzz-$target FILE)|" >&2
        tail -n 40 "$log" >&2
    else
        say "$target: no crash, hang or leak in $SECONDS_EACH s; corpus now $(find "$corpus" -type f | wc -l) inputs"
    fi
done
if ((${#failed[@]} > 0)); then
    say "FAILED: ${failed[*]} (inputs in $BUILD/crashes, logs in $BUILD/fuzz-*.log)"
    exit 1
fi
say "every target ran $SECONDS_EACH s without a finding"
