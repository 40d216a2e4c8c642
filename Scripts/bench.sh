#!/usr/bin/env bash
# Lockstep's benchmarks (not tests; CI doesn't run them). Prints one table (measurement, value,
# target, PASS/FAIL) of the parts:
#   1. the render cycle, by ordo-one/benchmark's malloc counter (the package in Tests/Benchmarks):
#      allocations (must be 0) and time per cycle for 64 queues with long buffers and with short
#      ones recycled through the callback, and 4096 recycling queues (also per layer: p50 / 4096);
#      a control benchmark that allocates shows that the counter counts;
#   2. `lockstep render` of eight 60 s stereo float stems against `sox -m` and `ecasound`: median
#      wall time of alternating runs (targets: lockstep at least 3x faster than sox -m (issue 14), 2x than ecasound), and the
#      three mixes must agree sample by sample;
#   3. the peak memory (RSS) of `lockstep render` on a 30-minute file against a 1-minute one;
#   4. live, JACK DSP load: one `lockstep play` of the eight stems against eight `sndfile-jackplay`
#      clients (target: lockstep's load above the idle server's at most half of theirs), with an
#      idle server and a do-nothing client as references;
#   5. live, capacity: the most stereo layers one `lockstep play` sustains for 60 s (load under
#      50 %, no more xruns than the idle server, no underruns, start-up under 5 s; target 4096,
#      the most the engine takes), a client computing as long a cycle as the 4096-layer trial
#      (no memory: its xruns are the machine's), and an idle server at period 64;
#   6. recording: (a) the DSP load `lockstep record` of the two capture ports adds to an idle server
#      against `jack_capture` (target: at most jack_capture's); (b) a 10-minute take while two busy
#      loops keep both cores busy: 0 lost frames, exactly 600 x 48000 frames in the file;
#   7. `lockstep session render` of the eight stems on eight layers against `lockstep render` of
#      them: median wall time (target: at most 2x), and the same samples;
#   8. `lockstep session check` of 100 000 cues at given times and of a 100 000-long `after:` chain,
#      all playing one 10 ms WAV: median wall time of 3 runs each (target: under 2 s each);
#  10. live, session capacity: `lockstep session run` of 4096 looping stereo layers for 10 s (DSP load
#      p50 under 50 %, no more xruns than the idle server, no underruns, start-up under 5 s; issue 28;
#      LOCKSTEP_BENCH_SESSION_LAYERS, LOCKSTEP_BENCH_SESSION_SECONDS);
#   9. GO latency to the cue's first sample on a live session of 4096 layers (private dummy jackd,
#      period 256; the release test build in .build-rtests; issue 28's targets: p50 <= 3/4 period,
#      192 frames, p99 <= 1 period, 256), 200 GOs at random phases of the period each: typed
#      (GoLatencyTests: p50 / p99 / max, every cue on its reported sample, how many the armed
#      standby cue carried), by JACK MIDI notes (MIDIGoLatencyTests: from the note's frame, as
#      they come and with --midi-latency 512), by OSC /go on loopback (OSCGoLatencyTests: from
#      the datagram's arrival, kernel timestamp), by the web page's WebSocket (WebGoLatencyTests:
#      from the send); and the kernel's own cost of a loopback TCP write and UDP sendto
#      (Tests/Benchmarks/LoopbackSend), the floor under any GO timed from its send;
#      LOCKSTEP_BENCH_GO_COUNT, LOCKSTEP_BENCH_GO_LAYERS;
#  11. live, the show journal's cost: `lockstep session run` of 256 looping stereo layers and a cue
#      fired again every 0.25 s (a state record each, a clock record every 0.1 s), with --journal
#      and with --no-journal, alternating rounds: DSP load p50 of each (target: the journal's median
#      at most 1 point above the no-journal one; issue 32); LOCKSTEP_BENCH_JOURNAL_ROUNDS (default 3);
#  12. the JSON writer of every reply, update, status line and web push (`ControlValue.json`, the
#      ControlJSONBenchmark of Tests/Benchmarks): a value the size of the web page's state among
#      4096 layers (target: p99 under 50 ms; the writer that copied its output for each string
#      took 0.46-0.58 s, issue 28), a GO's reply, and a web GO parsed.
# Parts 4 and 5 (part 6: a server of its own, with -C 2 -P 2) run on one private realtime server,
# `jackd -n lockstep-bench-PID -R -d dummy -r 48000 -p 256`, each client on its dummy playback
# ports; Tests/Benchmarks/JackLoadMonitor/jack_load_monitor.c samples jack_cpu_load() every 100 ms
# after a 2 s warm-up and counts xruns. Period 256 (5.33 ms): on these 2-core machines an idle
# dummy server at period 64 already xruns (part 5 reports what it does here).
#
# Exits non-zero if the render path allocates, the malloc counter doesn't count or a step fails;
# the other targets print PASS/FAIL without changing the status. Environment:
# LOCKSTEP_BENCH_PARTS (the parts to run, default "1 2 3 4 5 6 7 8 9 10 11 12"), LOCKSTEP_BENCH_CACHE
# (generated audio and tools, default ${TMPDIR:-/tmp}/lockstep-bench), LOCKSTEP_BENCH_RUNS (timed
# rounds per tool in parts 2 and 7, default 7), LOCKSTEP_BENCH_FORCE_ALLOCATION=1 (the measured
# render cycle allocates: the script must fail), LOCKSTEP_BENCH_QUICK=1 (parts 4-6: 15 s capacity
# trials instead of 60 s, one load round instead of 3 (part 6a: 2), a 60 s take instead of 600 s;
# the full mode takes about 20 minutes for parts 4-5, 13 for part 6), LOCKSTEP_BENCH_LIVE_ROUNDS
# (rounds of parts 4 and 6a), LOCKSTEP_BENCH_LOAD_SECONDS (window of parts 4 and 6a, default 20, at
# most 50), LOCKSTEP_BENCH_CAPACITY_SECONDS (window of a part 5 trial, default 60, quick 15),
# LOCKSTEP_BENCH_CAP_LAYERS="N …" (part 5 tries only these layer counts, no search),
# LOCKSTEP_BENCH_RECORD_SECONDS (part 6b's take, default 600, quick 60).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH" LC_ALL=C
RUNS=${LOCKSTEP_BENCH_RUNS:-7} QUICK=${LOCKSTEP_BENCH_QUICK:-0}
CACHE=${LOCKSTEP_BENCH_CACHE:-${TMPDIR:-/tmp}/lockstep-bench}
STEMS="$CACHE/stems"
PARTS=" ${LOCKSTEP_BENCH_PARTS:-1 2 3 4 5 6 7 8 9 10 11 12} "
PARTS=${PARTS//,/ }
mkdir -p "$CACHE"
started=$(date +%s)

# --- Helpers -------------------------------------------------------------------------------------
say() { echo "bench: $*" >&2; }
die() { echo "bench: error: $*" >&2; exit 1; }
want() { local p; for p; do [[ $PARTS == *" $p "* ]] && return 0; done; return 1; }   # any of parts "$@"?
step() { say "$1/12 ${*:2}"; }                                                        # part $1's progress
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# One cell of a table in ordo-one/benchmark's text output $1, as an integer: benchmark $2 (its
# heading line), metric label prefix $3, column $4 (p0 p25 p50 p75 p90 p99 p100 samples).
bench_metric() {
    awk -F'│' -v bench="$2" -v label="$3" -v column="$4" '
        BEGIN { split("p0 p25 p50 p75 p90 p99 p100 samples", names, " "); for (i in names) col[names[i]] = i + 2 }
        /^[^│╒╞├╘]/ && NF == 1 { current = $0; next }
        current == bench && index($2, " " label) == 1 {
            v = $col[column]; gsub(/[ ,]/, "", v)
            if (v ~ /^[0-9.]+e\+[0-9]+$/) v = sprintf("%.0f", v)    # large values print as 1.03e+07
            print v; exit
        }' "$1"
}
# a/b with two decimals ("n/a" if b <= 0); awk's printf "$1" of the expression $2 over a=$3, b=$4.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }'; }
calc() { awk -v a="$3" -v b="${4:-0}" "BEGIN { printf \"$1\", $2 }"; }
# Compiles C source $1 into $CACHE/bin/$2 (linked with ${@:3}) unless it is there and newer;
# with $CC, else cc, else Swift's clang.
c_tool() {
    local cc=${CC:-cc} out="$CACHE/bin/$2"
    command -v "$cc" >/dev/null 2>&1 || cc=/opt/swift/usr/bin/clang
    mkdir -p "$CACHE/bin"
    [[ -x "$out" && ! "$1" -nt "$out" ]] || "$cc" -O2 -Wall -o "$out" "$1" "${@:3}"
}
# Whether "$1 $2 $3" holds ($2: < <= == >= >, as awk compares); PASS/FAIL of a command, of (( $1 )).
is() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }
pass() { if "$@"; then echo PASS; else echo FAIL; fi; }
ok() { if (($1)); then echo PASS; else echo FAIL; fi; }
# A table line: part, measurement, value, target, result; `row` keeps one for the table at the end.
line() { printf '%-2s %-52s %-48s %-22s %s\n' "$@"; }
declare -A ROWS=()
row() { ROWS[$1]+="$(line "$@")"$'\n'; }
# The largest |sample| sox stat finds in the audio of the sox inputs ${@:2} amplified $1 times
# (stat prints 6 decimals), scaled back.
peak() {
    sox "${@:2}" -n vol "$1" stat 2>&1 | awk -v g="$1" '/^Maximum amplitude/ { mx = $3 } /^Minimum amplitude/ { mn = $3 }
        END { if (mx == "" || mn == "") exit 1; if (mn < 0) mn = -mn; printf "%.9g\n", (mx > mn ? mx : mn) / g }'
}
# max |a - b| over every sample of files $1 and $2 (amplified $3 times before stat, default 1); %.3g.
max_abs_diff() { local d; d=$(peak "${3:-1}" -m -v 1 "$1" -v -1 "$2") || die "sox stat failed on $1 vs $2"; printf '%.3g\n' "$d"; }
# Runs the mixers "$@" once each, in order (mixer X: function mix_X, writing $CACHE/mix-X.wav);
# prints "X wall CPU" (seconds; CPU: user + system) for each.
mix_round() {
    local tool out times="$CACHE/times.txt" TIMEFORMAT='%3R %3U %3S'
    for tool; do
        out="$CACHE/mix-$tool.wav"
        rm -f "$out"
        { time "mix_$tool" 2>"$CACHE/$tool.err"; } 2>"$times" || { cat "$CACHE/$tool.err" >&2; die "$tool failed"; }
        [[ -s "$out" ]] || die "$tool wrote no $out"
        awk -v t="$tool" '{ printf "%s %.3f %.3f\n", t, $1, $2 + $3 }' "$times"
    done
}
# One untimed round of the mixers "$@" (it warms the caches), then $RUNS timed ones; sets TIMINGS
# to their lines. median_of: the median of field $2 (2: wall, 3: CPU) of mixer $1's lines in $3.
timed_rounds() {
    local r round
    mix_round "$@" >/dev/null
    TIMINGS=""
    for ((r = 1; r <= RUNS; r++)); do
        round=$(mix_round "$@")
        TIMINGS+=$round$'\n'
        say "  round $r (wall, CPU s): $(paste -sd, <<<"$round" | sed 's/,/, /g')"
    done
}
median_of() { awk -v t="$1" -v f="$2" '$1 == t { print $f }' <<<"$3" | median; }

# --- Tools: sox, ecasound, GNU time (parts 2, 3, 7), sndfile-jackplay (part 4's reference client),
# jack_capture (part 6's reference recorder), lockstep --------------------------------------------
packages=(sox ecasound time)
want 4 && packages+=(sndfile-tools)
want 6 && packages+=(jack-capture jq)
Scripts/setup.sh "${packages[@]}"
say "building lockstep (release)"
swift build -c release --product lockstep >&2
LOCKSTEP="$(swift build -c release --show-bin-path)/lockstep"
[[ -x "$LOCKSTEP" ]] || die "no lockstep binary at $LOCKSTEP"

# --- 1. Allocations and time per render cycle ----------------------------------------------------
if want 1; then
    step 1 "render cycle: building and running Tests/Benchmarks (ordo-one/benchmark, release)"
    ALLOC_LOG="$CACHE/render-benchmark.txt"
    (cd Tests/Benchmarks && swift package benchmark --target RenderBenchmark --no-progress) >"$ALLOC_LOG" 2>&1 ||
        { status=$?; cat "$ALLOC_LOG" >&2; die "the render benchmark failed (status $status); its output is above and in $ALLOC_LOG"; }
    metric() { bench_metric "$ALLOC_LOG" "$@"; }
    # The render benchmarks (names as in RenderBenchmark.swift) and their labels in the table.
    declare -A BENCH=([long]="render cycle, 64 queues, 256 frames"
        [recycle]="render cycle, 64 queues, 256 frames, recycled 1024-frame buffers"
        [wide]="render cycle, 4096 queues, 256 frames, recycled 4800-frame buffers")
    declare -A LABEL=([long]="64 long-buffer queues" [recycle]="64 queues recycling bufs" [wide]="4096 queues recycling bufs")
    declare -A M
    for key in long recycle wide; do
        M[$key.mallocs]=$(metric "${BENCH[$key]}" "Malloc (total)" p100)
        M[$key.cycles]=$(metric "${BENCH[$key]}" "Malloc (total)" samples)
        M[$key.p50]=$(metric "${BENCH[$key]}" "Time (wall clock)" p50)
        M[$key.p99]=$(metric "${BENCH[$key]}" "Time (wall clock)" p99)
    done
    M[control.mallocs]=$(metric "control: cycle + masterLevels (allocates)" "Malloc (total)" p50)
    for v in "${!M[@]}"; do
        [[ "${M[$v]}" =~ ^[0-9]+$ ]] || { cat "$ALLOC_LOG" >&2; die "could not read $v from the benchmark output ($ALLOC_LOG)"; }
    done
    grep -q "Time (wall clock) (ns)" "$ALLOC_LOG" || die "the benchmark's time unit is not ns ($ALLOC_LOG)"
    allocates=$((${M[long.mallocs]} + ${M[recycle.mallocs]} + ${M[wide.mallocs]} > 0))
    us() { calc %.1f 'a / 1000' "$1"; }
    for key in long recycle wide; do
        row 1 "mallocs per render cycle, ${LABEL[$key]}" "${M[$key.mallocs]} (max of ${M[$key.cycles]} cycles)" "0" "$(ok "M[$key.mallocs] == 0")"
    done
    row 1 "malloc counter control (cycle + masterLevels)" "${M[control.mallocs]} per iteration" "> 0" "$(ok "M[control.mallocs] > 0")"
    for key in long recycle wide; do    # result: the share of the realtime budget (256 frames at 48 kHz) a median cycle takes
        row 1 "render cycle, ${LABEL[$key]}: p50 / p99" "$(us "${M[$key.p50]}") / $(us "${M[$key.p99]}") us" "< 5333 us" \
            "$(calc '%.2f%%' 'a / (256 / 48000 * 1e9) * 100' "${M[$key.p50]}") of budget"
    done
    row 1 "render cycle, 4096 queues: per layer (p50 / 4096)" "$(calc %.0f 'a / 4096' "${M[wide.p50]}") ns per layer per cycle" "" ""
fi

# --- The stems (parts 2, 4, 5 and 7; the 10 ms "tiny" ones: part 2's fixed cost) -----------------
if want 2 4 5 7 10 11 && [[ ! -f "$STEMS/.done-v2" ]]; then
    say "generating eight 60 s stereo float stems in $STEMS"
    mkdir -p "$STEMS"
    synths=("sine 110 sine 165" "sine 220 sine 330" "sine 440 sine 660" "square 55 square 82.5"
        "sawtooth 880 sawtooth 1320" "triangle 1760 triangle 2640" "pinknoise" "brownnoise")
    for i in {1..8}; do
        # shellcheck disable=SC2086  # the synth spec is several words
        sox -R -n -r 48000 -c 2 -e floating-point -b 32 "$STEMS/s$i.wav" synth 60 ${synths[i - 1]} vol 0.1
        sox "$STEMS/s$i.wav" "$STEMS/tiny$i.wav" trim 0 0.01
    done
    touch "$STEMS/.done-v2"
fi

# --- 2. lockstep render against sox and ecasound -------------------------------------------------
if want 2; then
    # The mixers, on the stems named $STEM1…8 (s: 60 s; tiny: 10 ms, to see each tool's fixed cost).
    MIXERS=(lockstep sox ecasound)
    mix_lockstep() { "$LOCKSTEP" render "$STEMS/$STEM"{1..8}.wav -o "$CACHE/mix-lockstep.wav" --rate 48000 --channels 2 --sample-format f32 >/dev/null; }
    mix_sox() {
        local inputs=() i
        for i in {1..8}; do inputs+=(-v 1 "$STEMS/$STEM$i.wav"); done
        sox -m "${inputs[@]}" -e floating-point -b 32 "$CACHE/mix-sox.wav"
    }
    mix_ecasound() {
        local inputs=() i
        for i in {1..8}; do inputs+=("-a:$i" -i "$STEMS/$STEM$i.wav"); done
        ecasound -q "${inputs[@]}" -a:all -f:f32_le,2,48000 -o "$CACHE/mix-ecasound.wav" >/dev/null
    }
    step 2 "fixed cost per run: mixing eight 10 ms stems, 3 rounds"
    STEM=tiny
    fixed=$(for r in 1 2 3; do mix_round "${MIXERS[@]}"; done)
    STEM=s
    step 2 "mixing: one untimed round, then $RUNS alternating timed rounds (lockstep, sox, ecasound)"
    timed_rounds "${MIXERS[@]}"
    declare -A WALL CPU FIXED FRAMES
    for tool in "${MIXERS[@]}"; do
        WALL[$tool]=$(median_of "$tool" 2 "$TIMINGS")
        CPU[$tool]=$(median_of "$tool" 3 "$TIMINGS")
        FIXED[$tool]=$(median_of "$tool" 2 "$fixed")
        FRAMES[$tool]=$(soxi -s "$CACHE/mix-$tool.wav" 2>/dev/null)
    done
    # Agreement: frame counts equal, and the largest |a - b| over every sample: sox mixes a - b (from
    # its 32-bit integer samples: resolution 2^-31, 4.7e-10), amplifies it 1e6 times and stat reports
    # the extremes (6 decimals: 1e-12 once scaled back). A difference of 1e-6 or more clips at 1.
    TOLERANCE=1e-6
    agree() { [[ "$1" == "${FRAMES[lockstep]}" ]] && is "$2" '<' "$TOLERANCE"; }
    diff_sox=$(max_abs_diff "$CACHE/mix-lockstep.wav" "$CACHE/mix-sox.wav" 1000000)
    diff_eca=$(max_abs_diff "$CACHE/mix-lockstep.wav" "$CACHE/mix-ecasound.wav" 1000000)
    speedup_sox=$(ratio "${WALL[sox]}" "${WALL[lockstep]}")
    speedup_eca=$(ratio "${WALL[ecasound]}" "${WALL[lockstep]}")
    row 2 "lockstep render, 8 x 60 s stems: wall, median of $RUNS" "${WALL[lockstep]} s" "" ""
    row 2 "sox -m: wall, median of $RUNS" "${WALL[sox]} s = ${speedup_sox}x lockstep" "lockstep >= 3x" "$(pass is "$speedup_sox" '>=' 3)"
    row 2 "ecasound: wall, median of $RUNS" "${WALL[ecasound]} s = ${speedup_eca}x lockstep" "lockstep >= 2x" "$(pass is "$speedup_eca" '>=' 2)"
    row 2 "CPU user+sys, median: lockstep / sox / ecasound" "${CPU[lockstep]} / ${CPU[sox]} / ${CPU[ecasound]} s" "" "sox $(ratio "${CPU[sox]}" "${CPU[lockstep]}")x, eca $(ratio "${CPU[ecasound]}" "${CPU[lockstep]}")x"
    row 2 "fixed cost: wall on 8 x 10 ms stems, same order" "${FIXED[lockstep]} / ${FIXED[sox]} / ${FIXED[ecasound]} s" "" ""
    row 2 "max |lockstep - sox|, frames ${FRAMES[lockstep]} / ${FRAMES[sox]}" "$diff_sox (mix peak $(printf '%.3f' "$(peak 1 "$CACHE/mix-lockstep.wav")"))" "< $TOLERANCE" "$(pass agree "${FRAMES[sox]}" "$diff_sox")"
    row 2 "max |lockstep - ecasound|, frames ${FRAMES[lockstep]} / ${FRAMES[ecasound]}" "$diff_eca" "< $TOLERANCE" "$(pass agree "${FRAMES[ecasound]}" "$diff_eca")"
fi

# --- 7. Session render against plain render ------------------------------------------------------
if want 7; then
    step 7 "session render: the eight stems as a session on eight layers, against lockstep render, $RUNS rounds"
    SESSION_FILE="$CACHE/stems-session.yaml"
    { echo "rate: 48000"; echo "cues:"
      for i in {1..8}; do echo "  - { name: s$i, layer: l$i, file: $STEMS/s$i.wav, at: 0 }"; done; } >"$SESSION_FILE"
    mix_session() { "$LOCKSTEP" session render "$SESSION_FILE" -o "$CACHE/mix-session.wav" --sample-format f32 >/dev/null; }
    mix_plain() { "$LOCKSTEP" render "$STEMS"/s{1..8}.wav -o "$CACHE/mix-plain.wav" --sample-format f32 >/dev/null; }
    timed_rounds session plain
    med_session=$(median_of session 2 "$TIMINGS")
    med_plain=$(median_of plain 2 "$TIMINGS")
    session_ratio=$(ratio "$med_session" "$med_plain")
    session_diff=$(max_abs_diff "$CACHE/mix-session.wav" "$CACHE/mix-plain.wav")
    row 7 "session render, 8 stems on 8 layers: wall, median" "$med_session s = ${session_ratio}x lockstep render ($med_plain s)" "<= 2x" "$(pass is "$session_ratio" '<=' 2)"
    row 7 "max |session - render|, frames $(soxi -s "$CACHE/mix-session.wav") / $(soxi -s "$CACHE/mix-plain.wav")" "$session_diff" "0" "$(pass is "$session_diff" == 0)"
fi

# --- 8. Checking huge sessions (both were quadratic: 40 s and 101 s) -----------------------------
# --- 12. The JSON writer --------------------------------------------------------------------------
if want 12; then
    step 12 "JSON writer: building and running Tests/Benchmarks' ControlJSONBenchmark (release)"
    JSON_LOG="$CACHE/json-benchmark.txt"
    (cd Tests/Benchmarks && swift package benchmark --target ControlJSONBenchmark --no-progress) >"$JSON_LOG" 2>&1 ||
        { status=$?; cat "$JSON_LOG" >&2; die "the JSON benchmark failed (status $status); its output is above and in $JSON_LOG"; }
    json_metric() { bench_metric "$JSON_LOG" "$1" "Time (wall clock) (ns)" "$2"; }
    json_state=$(grep -o '^control JSON: the web state of 4096 layers ([0-9]* kB)' "$JSON_LOG" | head -n 1)
    json_p50=$(json_metric "$json_state" p50) json_p99=$(json_metric "$json_state" p99)
    reply_p50=$(json_metric "control JSON: a GO's reply" p50) parse_p50=$(json_metric "control JSON: a web GO parsed" p50)
    for v in "$json_p50" "$json_p99" "$reply_p50" "$parse_p50"; do
        [[ $v =~ ^[0-9]+$ ]] || { cat "$JSON_LOG" >&2; die "could not read the JSON benchmark's times from $JSON_LOG"; }
    done
    row 12 "JSON, web state of 4096 layers${json_state##*layers}: p50 / p99" \
        "$(calc %.1f 'a / 1e6' "$json_p50") / $(calc %.1f 'a / 1e6' "$json_p99") ms" "p99 < 50 ms" "$(pass is "$json_p99" '<' 50000000)"
    row 12 "JSON, a GO's reply: p50" "$(calc %.1f 'a / 1000' "$reply_p50") us" "" ""
    row 12 "JSON, a web GO parsed (before it is carried out): p50" "$(calc %.1f 'a / 1000' "$parse_p50") us" "" ""
fi

if want 8; then
    HUGE="$CACHE/huge-sessions" HUGE_CUES=100000
    step 8 "session check: $HUGE_CUES cues on one 10 ms WAV, and a $HUGE_CUES-long after chain, 3 runs each"
    mkdir -p "$HUGE"
    [[ -s "$HUGE/tick.wav" ]] || sox -n -r 48000 -c 1 -b 16 "$HUGE/tick.wav" synth 0.01 sine 1000 vol 0.5
    if [[ ! -s "$HUGE/cues.yaml" || ! -s "$HUGE/chain.yaml" ]]; then
        awk -v n="$HUGE_CUES" 'BEGIN { print "rate: 48000"; print "cues:"
            for (i = 0; i < n; i++) printf "  - { name: c%d, file: tick.wav, at: \"%d samples\" }\n", i, i * 960 }' >"$HUGE/cues.yaml"
        awk -v n="$HUGE_CUES" 'BEGIN { print "rate: 48000"; print "cues:"; print "  - { name: c0, file: tick.wav, at: 0 }"
            for (i = 1; i < n; i++) printf "  - { name: c%d, file: tick.wav, after: c%d }\n", i, i - 1 }' >"$HUGE/chain.yaml"
    fi
    # The median wall time (s) of 3 runs of `lockstep session check $1`, each ending at sample $2.
    check_time() {
        local times="$CACHE/check-times.txt" out="$CACHE/check-out.txt" TIMEFORMAT='%3R' r
        for r in 1 2 3; do
            { time "$LOCKSTEP" session check "$1" >"$out"; } 2>>"$times" || die "lockstep session check $1 failed"
            grep -q "^$HUGE_CUES cues on 1 layers at 48000 Hz.*($2 samples)" "$out" || die "session check $1 printed: $(tail -n 1 "$out")"
        done
        median <"$times"
        rm -f "$times"
    }
    check_cues=$(check_time "$HUGE/cues.yaml" $(((HUGE_CUES - 1) * 960 + 480)))
    check_chain=$(check_time "$HUGE/chain.yaml" $((HUGE_CUES * 480)))
    row 8 "session check, $HUGE_CUES cues: wall, median of 3" "$check_cues s" "< 2 s" "$(pass is "$check_cues" '<' 2)"
    row 8 "session check, $HUGE_CUES-long after chain: median" "$check_chain s" "< 2 s" "$(pass is "$check_chain" '<' 2)"
fi

# --- 9. GO latency -------------------------------------------------------------------------------
if want 9; then
    GO_COUNT=${LOCKSTEP_BENCH_GO_COUNT:-200} GO_LAYERS=${LOCKSTEP_BENCH_GO_LAYERS:-4094}
    step 9 "GO latency: $GO_COUNT GOs on a live session of $((GO_LAYERS + 2)) layers, period 256 (release test build)"
    # The JACK test $2 run with $1=$GO_COUNT among $GO_LAYERS more looping layers, built for speed
    # (a debug build cannot compute thousands of layers in time; its output in $CACHE/$3.txt):
    # prints its line "$4: …".
    latency_test() {
        local log="$CACHE/$3.txt"
        env "$1=$GO_COUNT" LOCKSTEP_GO_LAYERS="$GO_LAYERS" swift test -c release -Xswiftc -enable-testing \
            --build-path .build-rtests --filter "JACKTests/$2/" >"$log" 2>&1 || die "the $4 test failed (see $log)"
        grep -m 1 "^$4:" "$log" || die "no $4 line in $log"
    }
    num() { sed -E "s/.*$1 (-?[0-9]+) .*/\1/" <<<"$2"; }    # the number after the words $1 in $2
    ms() { calc %.2f 'a * 1000 / 48000' "$1"; }
    go_line=$(latency_test LOCKSTEP_GO_COUNT GoLatencyTests go-latency "GO latency")
    go_p50=$(num p50 "$go_line") go_p99=$(num p99 "$go_line") go_max=$(num max "$go_line")
    midi_line=$(latency_test LOCKSTEP_MIDI_GO_COUNT MIDIGoLatencyTests midi-go-latency "MIDI GO latency")
    midi_p50=$(num p50 "$midi_line") midi_p99=$(num p99 "$midi_line") midi_max=$(num max "$midi_line")
    midi_fixed=$(grep -m 1 "^MIDI GO latency, fixed:" "$CACHE/midi-go-latency.txt") || die "no fixed-latency MIDI line"
    midi_lead=$(num "first sample" "$midi_fixed")
    midi_left=$(sed -E 's/.*carried out p50 ([0-9]+) frames.*min (-?[0-9]+) .*/\1 \/ \2/' <<<"$midi_fixed")
    web_line=$(latency_test LOCKSTEP_WEB_GO_COUNT WebGoLatencyTests web-go-latency "web GO latency")
    web_p50=$(num p50 "$web_line") web_p99=$(num p99 "$web_line") web_max=$(num max "$web_line")
    osc_line=$(latency_test LOCKSTEP_OSC_GO_COUNT OSCGoLatencyTests osc-go-latency "OSC GO latency")
    osc_arrival=$(sed -E 's/.*arrival to first sample (.*); from the send.*/\1/' <<<"$osc_line")
    osc_p50=$(num p50 "$osc_arrival") osc_p99=$(num p99 "$osc_arrival") osc_max=$(num max "$osc_arrival")
    go_standby=$(sed -E 's/.*standby StandbyStatistics\((.*)\)$/\1/' <<<"$go_line")
    row 9 "GO to first sample, $GO_COUNT GOs among $((GO_LAYERS + 2)) layers: p50 / p99" "$go_p50 / $go_p99 frames ($(ms "$go_p50") / $(ms "$go_p99") ms)" "<= 192 / 256" \
        "$(pass awk -v a="$go_p50" -v b="$go_p99" 'BEGIN { exit !(a <= 192 && b <= 256) }')"
    row 9 "GO to first sample: max; the standby cue's GOs" "$go_max frames ($(ms "$go_max") ms); $go_standby" "" ""
    row 9 "MIDI note's frame to first sample, $GO_COUNT GOs: p50 / p99" "$midi_p50 / $midi_p99 frames ($(ms "$midi_p50") / $(ms "$midi_p99") ms)" "<= 192 / 256" \
        "$(pass awk -v a="$midi_p50" -v b="$midi_p99" 'BEGIN { exit !(a <= 192 && b <= 256) }')"
    row 9 "MIDI: max; with --midi-latency 512, every GO (none late)" "$midi_max frames; $midi_lead frames" "= 512" "$(pass is "$midi_lead" '==' 512)"
    row 9 "MIDI, --midi-latency 512: frames of the period left when carried out, p50 / min" "$midi_left" "> 0" ""
    row 9 "web GO (WebSocket, loopback) send to first sample, $GO_COUNT GOs: p50 / p99" "$web_p50 / $web_p99 frames ($(ms "$web_p50") / $(ms "$web_p99") ms)" "<= 192 / 256" \
        "$(pass awk -v a="$web_p50" -v b="$web_p99" 'BEGIN { exit !(a <= 192 && b <= 256) }')"
    row 9 "web GO: max from the send; each cue on its replied sample" "$web_max frames ($(ms "$web_max") ms); all" "" ""
    row 9 "OSC /go (UDP, loopback) datagram arrival to first sample, $GO_COUNT GOs: p50 / p99" "$osc_p50 / $osc_p99 frames ($(ms "$osc_p50") / $(ms "$osc_p99") ms)" "<= 192 / 256" \
        "$(pass awk -v a="$osc_p50" -v b="$osc_p99" 'BEGIN { exit !(a <= 192 && b <= 256) }')"
    row 9 "OSC /go: max from arrival; each cue on its replied sample" "$osc_max frames ($(ms "$osc_max") ms); all" "" ""
    # The kernel's own cost of a send on loopback, before any of Lockstep's code runs: a GO sent
    # in the last that-many µs of a period lands a period later, whatever the server does.
    floor_tool="$CACHE/bin/loopback-send"
    c_tool Tests/Benchmarks/LoopbackSend/loopback_send.c loopback-send -lpthread ||
        die "cannot compile Tests/Benchmarks/LoopbackSend/loopback_send.c (needs a C compiler)"
    floor=$("$floor_tool") || die "loopback-send failed"
    floor_tcp=$(grep '^tcp' <<<"$floor" | sed -E 's/.*p50 +([0-9.]+).*p99 +([0-9.]+).*/\1 \2/')
    floor_udp=$(grep '^udp' <<<"$floor" | sed -E 's/.*p50 +([0-9.]+).*p99 +([0-9.]+).*/\1 \2/')
    share() { calc %.1f 'a / 53.33' "$1"; }    # µs as a percentage of the 5333 µs period
    read -r tcp50 tcp99 <<<"$floor_tcp"
    read -r udp50 udp99 <<<"$floor_udp"
    row 9 "kernel floor: loopback TCP write to a waiting reader's read, p50 / p99" "$tcp50 / $tcp99 us (a send in the last $tcp50 us of a period: $(share "$tcp50") % of sends)" "" ""
    row 9 "kernel floor: one loopback UDP sendto, p50 / p99" "$udp50 / $udp99 us ($(share "$udp50") % of sends)" "" ""
fi

# --- 3. Peak memory against input length ---------------------------------------------------------
if want 3; then
    step 3 "memory: rendering a 1-minute and a 30-minute mono 16-bit 44.1 kHz file"
    SHORT="$CACHE/short-1min.wav" LONG="$CACHE/long-30min.wav"
    [[ -s "$SHORT" ]] || sox -n -r 44100 -c 1 -e signed-integer -b 16 "$SHORT" synth 60 sine 440 vol 0.5
    [[ -s "$LONG" ]] || sox -n -r 44100 -c 1 -e signed-integer -b 16 "$LONG" synth 1800 sine 440 vol 0.5
    # `lockstep render $1` under GNU time: prints "peak-RSS-KiB wall-seconds".
    rss_render() {
        local out="$CACHE/rss-out.wav" report="$CACHE/rss-time.txt"
        rm -f "$out"
        /usr/bin/time -f '%M %e' -o "$report" "$LOCKSTEP" render "$1" -o "$out" >/dev/null || die "lockstep render $1 failed"
        rm -f "$out"
        tail -n 1 "$report"
    }
    short=$(rss_render "$SHORT")
    long=$(rss_render "$LONG")
    rss_growth=$(ratio "${long% *}" "${short% *}")
    row 3 "peak RSS, render 1-min mono s16 44.1 kHz" "$(calc '%.1f MiB' 'a / 1024' "${short% *}") (${short#* } s)" "" ""
    row 3 "peak RSS, render 30-min mono s16 44.1 kHz" "$(calc '%.1f MiB' 'a / 1024' "${long% *}") (${long#* } s)" "<= 1.25x 1-min" "$(pass is "$rss_growth" '<=' 1.25) (${rss_growth}x)"
fi

# --- 4, 5 and 6. Live through JACK: what they share ----------------------------------------------
if want 4 5 6 10 11; then
    live_started=$(date +%s)
    LIVE_RATE=48000 LIVE_PERIOD=256
    LIVE_WARMUP=2                                   # seconds between "clients up" and sampling
    LOAD_WINDOW=${LOCKSTEP_BENCH_LOAD_SECONDS:-20}  # part 4 and 6a sampling window (the stems last 60 s)
    ((LOAD_WINDOW >= 1 && LOAD_WINDOW <= 50)) || die "LOCKSTEP_BENCH_LOAD_SECONDS must be 1…50 (the stems last 60 s)"
    SERVER="lockstep-bench-$$"
    # The clients that don't take a server name (sndfile-jackplay, the null client) use this one,
    # and nothing starts a default server behind our back.
    export JACK_DEFAULT_SERVER="$SERVER" JACK_NO_START_SERVER=1 JACK_NO_AUDIO_RESERVATION=1
    # The monitor (DSP load, xruns, CPU time of given processes) and a do-nothing client.
    for tool in jack_load_monitor jack_null_client; do
        c_tool "Tests/Benchmarks/JackLoadMonitor/$tool.c" "${tool//_/-}" -ljack ||
            die "cannot compile Tests/Benchmarks/JackLoadMonitor/$tool.c (needs a C compiler and libjack-jackd2-dev)"
    done
    MONITOR="$CACHE/bin/jack-load-monitor" NULL_CLIENT="$CACHE/bin/jack-null-client"

    # The processes the live parts started (keys), stopped at exit whatever happens. spawn: starts
    # "$@" in the background (redirect the call), sets PID; stop_pids: TERM, then KILL after 10 s;
    # wait_pid: waits for process $1 to end by itself, sets STATUS.
    declare -A LIVE=()
    spawn() { "$@" & PID=$!; LIVE[$PID]=1; }
    stop_pids() {
        local pid i
        for pid; do
            kill -TERM "$pid" 2>/dev/null && for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            unset "LIVE[$pid]"
        done
    }
    wait_pid() { STATUS=0; wait "$1" || STATUS=$?; unset "LIVE[$1]"; }
    stop_live() { stop_pids "${!LIVE[@]}"; }
    trap stop_live EXIT
    trap 'exit 130' INT TERM
    # Starts `jackd -n $SERVER ARGS…` and waits until it answers; sets JACKD_PID.
    start_server() {
        local log="$CACHE/jackd-$SERVER.log" i
        spawn jackd -n "$SERVER" "$@" >"$log" 2>&1
        JACKD_PID=$PID
        for ((i = 0; i < 100; i++)); do
            "$MONITOR" --probe --server "$SERVER" --name probe 2>/dev/null && break
            kill -0 "$JACKD_PID" 2>/dev/null || die "jackd -n $SERVER $* failed to start; see $log"
            sleep 0.1
        done
        ((i < 100)) || die "jackd -n $SERVER did not answer within 10 s; see $log"
        grep -q "realtime mode" "$log" || die "jackd $* did not start in realtime mode; see $log"
    }
    stop_server() { stop_pids "$JACKD_PID"; }
    # The monitor on $SERVER for $1 s after the warm-up; with more arguments, once $3 ports matching
    # $2 are connected, with the CPU time of processes ${@:4}. Sets LINE (its result) and MSTATUS.
    monitor() {
        local args=(--seconds "$1") pid
        (($# > 1)) && args+=(--wait-ports "$2" --wait-count "$3" --wait-connected)
        for pid in "${@:4}"; do args+=(--pid "$pid"); done
        MSTATUS=0
        LINE=$("$MONITOR" --server "$SERVER" --warmup "$LIVE_WARMUP" --wait-timeout 300 "${args[@]}") || MSTATUS=$?
    }
    # The idle server for $1 s (default the load window); $2 names it in the error.
    load_idle() { monitor "${1:-$LOAD_WINDOW}"; ((MSTATUS == 0)) || die "the load monitor failed on the ${2:-idle} server"; }
    # After the monitor of clients ${@:2} that play until stopped: stops them; dies if the monitor
    # failed (with $1).
    stop_clients() { stop_pids "${@:2}"; ((MSTATUS == 0)) || die "the load monitor failed with $1"; }
    # After the monitor of a client $PID that ends by itself (named $1, its errors in $LOG.err):
    # dies if the monitor failed, waits for the client and dies if it failed.
    fail() { cat "$LOG.err" >&2; die "$@"; }
    finish() {
        ((MSTATUS == 0)) || fail "the load monitor failed with $1"
        wait_pid "$PID"
        ((STATUS == 0)) || fail "$1 failed (status $STATUS)"
    }

    # Values of key $1 in the monitor lines $2 (one per line); their median; their sum.
    get() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (substr($i, 1, n - 1) == k) print substr($i, n + 1) } }' <<<"$2"; }
    median_key() { get "$@" | median; }
    sum_key() { get "$@" | awk '{ s += $1 } END { print s + 0 }'; }
    # Discontinuities of kind $1 in lockstep's JSON summary $2: its total by kind
    # (discontinuityCounts), else the entries of its list.
    json_count() {
        local counts
        counts=$(grep -o '"discontinuityCounts":{[^}]*}' "$2" | tail -n 1)
        if [[ -n $counts ]]; then
            { grep -o "\"$1\":[0-9]*" <<<"$counts" || true; } | cut -d: -f2 | awk '{ n += $1 } END { print n + 0 }'
        else
            awk -v k="\"kind\":\"$1\"" '{ n += gsub(k, "") } END { print n + 0 }' "$2"
        fi
    }
    # ", CPU c %" if the monitor line $1 measured clients' CPU time.
    cpu_note() { local cpu; cpu=$(get cpu "$1"); [[ -z $cpu || $cpu == -1* ]] || echo ", CPU $cpu %"; }
    # "load % (xruns N, CPU all/realtime threads %, RT faults F)" for the monitor lines $1.
    load_cell() {
        local extra=""
        [[ -n $(cpu_note "$1") ]] &&
            extra=", CPU $(median_key cpu "$1")/$(median_key rt_cpu "$1") %, RT faults $(sum_key rt_faults "$1")"
        echo "$(median_key mean "$1") % (xruns $(sum_key xruns "$1")$extra)"
    }
    # Median load of part $1's trial $2 above its idle server's, %.2f.
    above() { calc %.2f 'a - b' "$(median_key mean "${LINES[$1.$2]}")" "$(median_key mean "${LINES[$1.idle]}")"; }
    # Part $1's rounds: $2 rounds of the trials ${@:3} (functions load_NAME, each setting LINE);
    # LINES[PART.NAME] gathers each trial's lines; TRIAL names them in the progress lines.
    declare -A LINES=() TRIAL=([null]="null client" [jackplay]="8 x sndfile-jackplay" [record]="lockstep record")
    rounds() {
        local part=$1 count=$2 r t progress
        for ((r = 1; r <= count; r++)); do
            progress=""
            for t in "${@:3}"; do
                "load_$t"
                LINES[$part.$t]+=$LINE$'\n'
                progress+=", ${TRIAL[$t]:-$t} $(get mean "$LINE") ($(get xruns "$LINE")$(cpu_note "$LINE"))"
            done
            say "  round $r, DSP load % (xruns):${progress#,}"
        done
    }
    # Appends to LINE the underruns and xruns in lockstep's summary (play or session run) ($LOG.json), and the
    # start-up: seconds from the spawn (the monitor's start_frame) to the first sample (the
    # summary's startJACKFrame), on JACK's 32-bit frame clock.
    play_counts() {
        local first start
        first=$({ grep -o '"startJACKFrame":[0-9]*' "$LOG.json" || true; } | tail -n 1 | cut -d: -f2)
        start=$(get start_frame "$LINE")
        LINE+=" underruns=$(json_count underrun "$LOG.json") lockstep_xruns=$(json_count xrun "$LOG.json")"
        # lockstep's own process callback (callbackTime): median, p99, longest in ms; cycles past the period.
        local key value
        for key in medianSeconds p99Seconds maxSeconds overPeriodCycles; do
            value=$({ grep -o "\"$key\":[0-9.e+-]*" "$LOG.json" || true; } | tail -n 1 | cut -d: -f2)
            [[ -z $value ]] && continue
            [[ $key == *Seconds ]] && value=$(calc %.2f 'a * 1000' "$value")
            LINE+=" cb_${key%Seconds}=$value"
        done
        # The render helper's share (renderHelper: absent when the engine rendered on one thread).
        for key in sharedCycles helperChunks; do
            value=$({ grep -o "\"$key\":[0-9]*" "$LOG.json" || true; } | tail -n 1 | cut -d: -f2)
            LINE+=" $key=${value:-0}"
        done
        [[ -n $first && -n $start ]] &&
            LINE+=" startup=$(awk -v f="$first" -v s="$start" -v r="$LIVE_RATE" 'BEGIN { d = f - s; if (d < 0) d += 4294967296; printf "%.2f", d / r }')"
    }
fi

# --- 4 and 5. Live playback through JACK ---------------------------------------------------------
if want 4 5; then
    if [[ $QUICK == 1 ]]; then CAP_WINDOW=15 LIVE_ROUNDS=1; else CAP_WINDOW=60 LIVE_ROUNDS=3; fi
    CAP_WINDOW=${LOCKSTEP_BENCH_CAPACITY_SECONDS:-$CAP_WINDOW} LIVE_ROUNDS=${LOCKSTEP_BENCH_LIVE_ROUNDS:-$LIVE_ROUNDS}
    CAP_TARGET=4096                                 # issue 14: 4096 stereo layers at period 256
    CAP_LIMIT=4096                                  # Engine(maximumQueues:) accepts at most 4096
    CAP_MAX_LOAD=50 CAP_MAX_STARTUP=5               # %; seconds from the spawn to the first sample
    SERVER_ARGS=(-R -d dummy -r "$LIVE_RATE" -p "$LIVE_PERIOD")
    say "4-5 live: starting jackd -n $SERVER ${SERVER_ARGS[*]}"
    start_server "${SERVER_ARGS[@]}"
    # `lockstep play "${@:2}"` on $SERVER for the $1 s window (and the warm-up) under the monitor
    # (its summary in $LOG.json, its errors in $LOG.err).
    play_trial() {
        spawn "$LOCKSTEP" play "${@:2}" --server "$SERVER" --start-server never \
            --duration $((LIVE_WARMUP + $1 + 3)) --json >"$LOG.json" 2>"$LOG.err"
        monitor "$1" '^lockstep:out_' 2 "$PID"
    }
    # The trials of part 4 besides load_idle.
    load_null() {
        spawn "$NULL_CLIENT" --name null-client
        monitor "$LOAD_WINDOW" '^null-client:out_' 2 "$PID"
        stop_clients "the null client" "$PID"
    }
    load_lockstep() {
        LOG="$CACHE/live-lockstep"
        play_trial "$LOAD_WINDOW" "$STEMS"/s{1..8}.wav
        finish "lockstep play"
        play_counts
    }
    load_jackplay() {
        local pids=() i
        for i in {1..8}; do spawn sndfile-jackplay "$STEMS/s$i.wav" >/dev/null 2>"$CACHE/jackplay-$i.err"; pids+=("$PID"); done
        monitor "$LOAD_WINDOW" '^jackplay[^:]*:out_' 16 "${pids[@]}"
        stop_clients "8 sndfile-jackplay clients; see $CACHE/jackplay-*.err" "${pids[@]}"
    }
fi

if want 4; then
    step 4 "DSP load: $LIVE_ROUNDS round(s) of idle, null client, lockstep play (8 stems), 8 x sndfile-jackplay; $LOAD_WINDOW s each after ${LIVE_WARMUP} s"
    rounds 4 "$LIVE_ROUNDS" idle null lockstep jackplay
    load_ls_above=$(above 4 lockstep) load_jp_above=$(above 4 jackplay)
    load_ratio=$(ratio "$load_ls_above" "$load_jp_above")
    row 4 "idle server: JACK DSP load, median of $LIVE_ROUNDS x $LOAD_WINDOW s" "$(load_cell "${LINES[4.idle]}")" "" ""
    row 4 "1 do-nothing client (2 ports, writes silence)" "$(load_cell "${LINES[4.null]}")" "" "JACK's per-client floor"
    row 4 "lockstep play, 8 stems, one client" "$(load_cell "${LINES[4.lockstep]}"), underruns $(sum_key underruns "${LINES[4.lockstep]}")" "" ""
    row 4 "8 x sndfile-jackplay, the same stems" "$(load_cell "${LINES[4.jackplay]}")" "" ""
    row 4 "load above idle: lockstep / 8 x sndfile-jackplay" "$load_ls_above / $load_jp_above % = $load_ratio" "<= 0.50" \
        "$(pass awk -v r="$load_ratio" 'BEGIN { exit !(r != "n/a" && r <= 0.5) }')"
    # Any one client costs the server the do-nothing client's load: when that floor is above half
    # of the eight players' load, no single client can meet the target; what each adds over the
    # floor is then the comparison left.
    load_null_above=$(above 4 null)
    load_ls_over=$(awk -v a="$load_ls_above" -v f="$load_null_above" 'BEGIN { if (a == "n/a" || f == "n/a") print "n/a"; else printf "%.2f", a - f }')
    load_jp_over=$(awk -v a="$load_jp_above" -v f="$load_null_above" 'BEGIN { if (a == "n/a" || f == "n/a") print "n/a"; else printf "%.2f", a - f }')
    row 4 "above the do-nothing client: lockstep / 8 x jackplay" \
        "$load_ls_over / $load_jp_over % = $(ratio "$load_ls_over" "$load_jp_over") (floor $load_null_above %, target $(awk -v j="$load_jp_above" 'BEGIN { if (j == "n/a") print "n/a"; else printf "%.2f", j / 2 }') %)" "" ""
fi

if want 5; then
    step 5 "capacity: idle server for $CAP_WINDOW s, then lockstep play with N looping stereo layers, $CAP_WINDOW s each"
    load_idle "$CAP_WINDOW"
    cap_idle=$LINE
    cap_idle_xruns=$(get xruns "$cap_idle")
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true        # one open file per layer
    # Each trial's monitor line, why it failed (empty: it passed), whether it ran twice.
    declare -A T_LINE T_WHY T_RETRIED
    # One trial: N layers (the eight stems over and over), looping, for the window. Sets T_*[N].
    cap_trial() {
        local n=$1 files=() i t0 why="" load xruns under startup
        LOG="$CACHE/capacity-$n"
        for ((i = 0; i < n; i++)); do files+=("$STEMS/s$((i % 8 + 1)).wav"); done
        t0=$(date +%s)
        play_trial "$CAP_WINDOW" "${files[@]}" --loop
        if ((MSTATUS != 0)) && kill -0 "$PID" 2>/dev/null; then stop_pids "$PID"; STATUS=-1; else wait_pid "$PID"; fi
        kill -0 "$JACKD_PID" 2>/dev/null || die "jackd went away during the $n-layer trial; see $CACHE/jackd-$SERVER.log"
        play_counts
        load=$(get mean "$LINE") xruns=$(get xruns "$LINE") under=$(get underruns "$LINE") startup=$(get startup "$LINE")
        ((MSTATUS == 0)) || why+="monitor status $MSTATUS; "
        ((STATUS == 0)) || why+="lockstep status $STATUS: $(tail -n 1 "$LOG.err"); "
        if [[ -n $load ]]; then
            is "$load" '<' "$CAP_MAX_LOAD" || why+="load ${load}% >= ${CAP_MAX_LOAD}%; "
            ((xruns <= cap_idle_xruns)) || why+="xruns $xruns > idle's $cap_idle_xruns; "
            ((under == 0)) || why+="$under underruns; "
        fi
        [[ -z $startup ]] || is "$startup" '<' "$CAP_MAX_STARTUP" || why+="start-up ${startup} s >= ${CAP_MAX_STARTUP} s; "
        T_LINE[$n]=$LINE T_WHY[$n]=${why%; }
        say "  $n layers: start-up $startup s, load $load % (p95 $(get p95 "$LINE"), max $(get max "$LINE")), xruns $xruns (idle $cap_idle_xruns), callback $(get cb_median "$LINE")/$(get cb_p99 "$LINE")/$(get cb_max "$LINE") ms ($(get cb_overPeriodCycles "$LINE") past the period), underruns $under, CPU $(get cpu "$LINE") % (realtime thread $(get rt_cpu "$LINE") %, $(get rt_faults "$LINE") page faults): $([[ -z $why ]] && echo ok || echo "FAIL (${T_WHY[$n]})") [$(($(date +%s) - t0)) s]"
    }
    # A trial that fails on xruns alone (the VM's scheduling hiccups hit an idle server too) runs
    # once more; the second result stands.
    cap_ok() {
        cap_trial "$1"
        if [[ ${T_WHY[$1]} == xruns* && ${T_WHY[$1]} != *";"* ]]; then
            say "  $1 layers failed on xruns only: once more"
            T_RETRIED[$1]=1
            cap_trial "$1"
        fi
        [[ -z ${T_WHY[$1]} ]]
    }
    cap_lo=0 cap_hi=0
    if [[ -n ${LOCKSTEP_BENCH_CAP_LAYERS:-} ]]; then    # only these counts: the largest that passes stands
        for n in $LOCKSTEP_BENCH_CAP_LAYERS; do if cap_ok "$n" && ((n > cap_lo)); then cap_lo=$n; fi; done
    elif cap_ok "$CAP_TARGET"; then                     # the target passes: doubling up to the limit
        cap_lo=$CAP_TARGET
        for ((n = CAP_TARGET * 2; n <= CAP_LIMIT; n *= 2)); do if cap_ok "$n"; then cap_lo=$n; else cap_hi=$n; break; fi; done
    else                                                # it fails: halving down to 8
        cap_hi=$CAP_TARGET
        for ((n = CAP_TARGET / 2; n >= 8; n /= 2)); do if cap_ok "$n"; then cap_lo=$n; break; else cap_hi=$n; fi; done
    fi
    # Bisect to within an eighth of the passing count (multiples of 8 layers).
    while ((cap_lo > 0 && cap_hi > 0 && cap_hi - cap_lo > (cap_lo / 8 > 16 ? cap_lo / 8 : 16))); do
        n=$(((cap_lo + cap_hi) / 2 / 8 * 8))
        ((n > cap_lo && n < cap_hi)) || break
        if cap_ok "$n"; then cap_lo=$n; else cap_hi=$n; fi
    done
    cap_max=$cap_lo

    # The machine's own stalls at that load: a client computing for as long as the target trial's
    # load above idle (a fixed amount of arithmetic a cycle, no memory), same window. Its xruns
    # are the VM's (a stalled vCPU, an interrupt), not the cost of mixing anything.
    busy_line=""
    if [[ -n ${T_LINE[$CAP_TARGET]:-} && -n $(get mean "${T_LINE[$CAP_TARGET]}") ]]; then
        busy_us=$(calc %.0f "(a - b) / 100 * $LIVE_PERIOD / $LIVE_RATE * 1e6" "$(get mean "${T_LINE[$CAP_TARGET]}")" "$(get mean "$cap_idle")")
        step 5 "reference: a client computing $busy_us us a cycle (the $CAP_TARGET-layer trial's load) for $CAP_WINDOW s"
        spawn "$NULL_CLIENT" --name busy-client --busy-us "$busy_us"
        monitor "$CAP_WINDOW" '^busy-client:out_' 2 "$PID"
        stop_clients "the busy client" "$PID"
        busy_line=$LINE
    fi

    # The claim behind period 256: an idle realtime dummy server at period 64, same window.
    step 5 "idle server at period 64 for $CAP_WINDOW s (reference for the choice of period 256)"
    stop_server
    SERVER="$SERVER-p64" start_server -R -d dummy -r "$LIVE_RATE" -p 64
    SERVER="$SERVER-p64" load_idle "$CAP_WINDOW" period-64
    p64_line=$LINE
    stop_server

    row 5 "idle server, $CAP_WINDOW s: DSP load, xruns" "$(get mean "$cap_idle") % (xruns $cap_idle_xruns)" "" ""
    if ((cap_max > 0)); then
        max_cell="$cap_max layers: $(get mean "${T_LINE[$cap_max]}") % (p95 $(get p95 "${T_LINE[$cap_max]}")), xruns $(get xruns "${T_LINE[$cap_max]}")"
        ((cap_max >= CAP_LIMIT)) && max_cell+=" (the engine's limit)"
    else
        max_cell="none of the counts tried ($(printf '%s\n' "${!T_LINE[@]}" | sort -n | paste -sd ' '))"
    fi
    row 5 "most layers sustained $CAP_WINDOW s: load < ${CAP_MAX_LOAD}%, xruns <= idle" "$max_cell" ">= $CAP_TARGET layers" "$(ok "cap_max >= CAP_TARGET")"
    [[ -z ${T_LINE[$CAP_TARGET]:-} ]] || row 5 "$CAP_TARGET layers, $CAP_WINDOW s: DSP load mean (p95), xruns, start-up" "$(get mean "${T_LINE[$CAP_TARGET]}") % ($(get p95 "${T_LINE[$CAP_TARGET]}")), xruns $(get xruns "${T_LINE[$CAP_TARGET]}"), underruns $(get underruns "${T_LINE[$CAP_TARGET]}"), RT faults $(get rt_faults "${T_LINE[$CAP_TARGET]}"), start-up $(get startup "${T_LINE[$CAP_TARGET]}") s" "< ${CAP_MAX_LOAD}%, xruns <= $cap_idle_xruns, < ${CAP_MAX_STARTUP} s" "$(pass test -z "${T_WHY[$CAP_TARGET]}")"
    ((cap_hi == 0)) || row 5 "fewest layers that failed" "$cap_hi: ${T_WHY[$cap_hi]}" "" ""
    [[ -z ${T_LINE[$CAP_TARGET]:-} ]] || row 5 "$CAP_TARGET layers: lockstep's callback median / p99 / longest, cycles past the period" "$(get cb_median "${T_LINE[$CAP_TARGET]}") / $(get cb_p99 "${T_LINE[$CAP_TARGET]}") / $(get cb_max "${T_LINE[$CAP_TARGET]}") ms, $(get cb_overPeriodCycles "${T_LINE[$CAP_TARGET]}"); render helper: $(get helperChunks "${T_LINE[$CAP_TARGET]}") chunks of 128 layers in $(get sharedCycles "${T_LINE[$CAP_TARGET]}") shared cycles" "" "period $(calc %.2f "a / $LIVE_RATE * 1000" "$LIVE_PERIOD") ms"
    [[ -z $busy_line ]] || row 5 "reference: a client computing $busy_us us a cycle, $CAP_WINDOW s: DSP load, xruns" "$(get mean "$busy_line") % (p95 $(get p95 "$busy_line"), max $(get max "$busy_line")), xruns $(get xruns "$busy_line")" "" "the machine's stalls at that load"
    row 5 "idle server at period 64, $CAP_WINDOW s: DSP load, xruns" "$(get mean "$p64_line") % (xruns $(get xruns "$p64_line"))" "" ""
fi

# --- 10. Session capacity -----------------------------------------------------------------------
# `lockstep session run` of N looping stereo layers (a session of N layers, each one cue of a stem,
# `at: 0`, `loop: forever`) on a private realtime server of its own, as part 5's `play` trial.
if want 10; then
    SESSION_LAYERS=${LOCKSTEP_BENCH_SESSION_LAYERS:-4096} SESSION_WINDOW=${LOCKSTEP_BENCH_SESSION_SECONDS:-10}
    step 10 "session capacity: idle server, then session run of $SESSION_LAYERS looping stereo layers, $SESSION_WINDOW s each"
    main_server=$SERVER SERVER="$SERVER-session"
    start_server -R -d dummy -r "$LIVE_RATE" -p "$LIVE_PERIOD"
    load_idle "$SESSION_WINDOW" "session part's idle"
    sess_idle=$LINE
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true        # one open file per cue
    SESSION_FILE="$CACHE/capacity-session-$SESSION_LAYERS.yaml"
    {
        echo "layers:"
        for ((i = 0; i < SESSION_LAYERS; i++)); do echo "  l$i: {}"; done
        echo "cues:"
        for ((i = 0; i < SESSION_LAYERS; i++)); do
            echo "  - { name: c$i, layer: l$i, file: '$STEMS/s$((i % 8 + 1)).wav', at: 0, loop: forever }"
        done
    } >"$SESSION_FILE"
    LOG="$CACHE/session-capacity"
    spawn "$LOCKSTEP" session run "$SESSION_FILE" --server "$SERVER" --start-server never \
        --duration $((LIVE_WARMUP + SESSION_WINDOW + 3)) --json >"$LOG.json" 2>"$LOG.err"
    monitor "$SESSION_WINDOW" '^lockstep:out_' 2 "$PID"
    finish "lockstep session run"
    play_counts
    sess_line=$LINE why=""
    is "$(get p50 "$sess_line")" '<' 50 || why+="load p50 $(get p50 "$sess_line") % >= 50 %; "
    (($(get xruns "$sess_line") <= $(get xruns "$sess_idle"))) || why+="xruns $(get xruns "$sess_line") > idle's $(get xruns "$sess_idle"); "
    (($(get underruns "$sess_line") == 0)) || why+="$(get underruns "$sess_line") underruns; "
    [[ -n $(get startup "$sess_line") ]] && is "$(get startup "$sess_line")" '<' 5 || why+="start-up $(get startup "$sess_line") s; "
    say "  $SESSION_LAYERS layers: start-up $(get startup "$sess_line") s, load p50 $(get p50 "$sess_line") % (mean $(get mean "$sess_line"), max $(get max "$sess_line")), xruns $(get xruns "$sess_line") (idle $(get xruns "$sess_idle")), underruns $(get underruns "$sess_line"), callback $(get cb_median "$sess_line")/$(get cb_p99 "$sess_line")/$(get cb_max "$sess_line") ms, CPU $(get cpu "$sess_line") % (realtime threads $(get rt_cpu "$sess_line") %, $(get rt_faults "$sess_line") page faults)"
    row 10 "idle server, $SESSION_WINDOW s: DSP load p50, xruns" "$(get p50 "$sess_idle") % (xruns $(get xruns "$sess_idle"))" "" ""
    row 10 "session run, $SESSION_LAYERS looping stereo layers, $SESSION_WINDOW s: DSP load p50 (max), xruns, underruns, start-up" \
        "$(get p50 "$sess_line") % ($(get max "$sess_line")), xruns $(get xruns "$sess_line"), underruns $(get underruns "$sess_line"), start-up $(get startup "$sess_line") s" \
        "< 50 %, xruns <= idle, 0, < 5 s" "$(pass test -z "$why")"
    row 10 "the same: lockstep's callback median / p99 / longest, CPU of the process" \
        "$(get cb_median "$sess_line") / $(get cb_p99 "$sess_line") / $(get cb_max "$sess_line") ms, CPU $(get cpu "$sess_line") % of one core" "" ""
    stop_server
    SERVER=$main_server
fi

# --- 11. The show journal's cost ------------------------------------------------------------------
# A session run with and without its journal, alternating, on a private realtime server of its own;
# a cue fired again every 0.25 s through typed commands keeps the journal writing state records.
if want 11; then
    JOURNAL_ROUNDS=${LOCKSTEP_BENCH_JOURNAL_ROUNDS:-3} JOURNAL_LAYERS=256 JOURNAL_WINDOW=10
    step 11 "journal cost: $JOURNAL_ROUNDS round(s) of session run ($JOURNAL_LAYERS layers, a go every 0.25 s) with and without --journal, $JOURNAL_WINDOW s each"
    main_server=$SERVER SERVER="$SERVER-journal"
    start_server -R -d dummy -r "$LIVE_RATE" -p "$LIVE_PERIOD"
    JOURNAL_SESSION="$CACHE/journal-session.yaml"
    {
        echo "layers:"
        for ((i = 0; i < JOURNAL_LAYERS; i++)); do echo "  l$i: {}"; done
        echo "  fx: {}"
        echo "cues:"
        for ((i = 0; i < JOURNAL_LAYERS; i++)); do
            echo "  - { name: c$i, layer: l$i, file: '$STEMS/s$((i % 8 + 1)).wav', at: 0, loop: forever }"
        done
        echo "  - { name: bell, layer: fx, file: '$STEMS/s1.wav', to: 0.2, at: manual }"
    } >"$JOURNAL_SESSION"
    declare -A JLINES=()
    for ((r = 1; r <= JOURNAL_ROUNDS; r++)); do
        for mode in journal none; do
            LOG="$CACHE/journal-$mode-$r"
            if [[ $mode == journal ]]; then jargs=(--journal "$LOG.journal"); else jargs=(--no-journal); fi
            spawn bash -c 'while sleep 0.25; do echo "go bell" || exit 0; done | exec "$@"' gos "$LOCKSTEP" session run "$JOURNAL_SESSION" \
                --server "$SERVER" --start-server never --control - "${jargs[@]}" \
                --duration $((LIVE_WARMUP + JOURNAL_WINDOW + 3)) --json >"$LOG.json" 2>"$LOG.err"
            monitor "$JOURNAL_WINDOW" '^lockstep:out_' 2
            # (Counted while the run goes on: a run that ends with nothing to recover removes it.)
            records=""
            [[ $mode == none ]] || records=", journal records: $(grep -c '"kind":"state"' "$LOG.journal" 2>/dev/null || echo 0) state, $(grep -c '"kind":"clock"' "$LOG.journal" 2>/dev/null || echo 0) clock"
            finish "lockstep session run ($mode)"
            JLINES[$mode]+="$LINE"$'\n'
            say "  round $r, $mode: load p50 $(get p50 "$LINE") %, xruns $(get xruns "$LINE")$records"
        done
    done
    with=$(median_key p50 "${JLINES[journal]}") without=$(median_key p50 "${JLINES[none]}")
    row 11 "session run, $JOURNAL_LAYERS layers, a go every 0.25 s: DSP load p50, --no-journal" "$without % (xruns $(sum_key xruns "${JLINES[none]}"))" "" ""
    row 11 "the same with --journal (state records per go, clock every 0.1 s)" "$with % (xruns $(sum_key xruns "${JLINES[journal]}"))" "<= no-journal + 1" "$(pass is "$with" '<=' "$(calc %.2f 'a + 1' "$without")")"
    stop_server
    SERVER=$main_server
fi

# --- 6. Recording --------------------------------------------------------------------------------
# A private realtime dummy server of its own (two capture ports giving silence: enough for load and
# for counting frames). (b): the two busy loops (normal priority) compete with the writer thread,
# not with the realtime thread.
if want 6; then
    rec_started=$(date +%s)
    if [[ $QUICK == 1 ]]; then REC_SECONDS=60 REC_ROUNDS=1; else REC_SECONDS=600 REC_ROUNDS=2; fi
    REC_SECONDS=${LOCKSTEP_BENCH_RECORD_SECONDS:-$REC_SECONDS} REC_ROUNDS=${LOCKSTEP_BENCH_LIVE_ROUNDS:-$REC_ROUNDS}
    REC_SERVER_ARGS=(-R -d dummy -r "$LIVE_RATE" -p "$LIVE_PERIOD" -C 2 -P 2)
    REC_PORTS=(system:capture_1 system:capture_2)
    REC_DIR="$CACHE/record"
    rm -rf "$REC_DIR"
    mkdir -p "$REC_DIR"
    # Value of the number field $1 (its first occurrence) in the JSON file $2.
    json_num() { grep -o "\"$1\":-\\{0,1\\}[0-9.e+]*" "$2" | head -n 1 | cut -d: -f2; }
    # `lockstep record` of the capture ports for $1 s into $LOG.wav (summary $LOG.json, errors
    # $LOG.err), under the monitor for $2 s.
    record() {
        rm -f "$LOG.wav"
        spawn "$LOCKSTEP" record -o "$LOG.wav" --server "$SERVER" --port "${REC_PORTS[0]}" --port "${REC_PORTS[1]}" \
            --duration "$1" --json >"$LOG.json" 2>"$LOG.err"
        monitor "$2" '^lockstep-record:in_' 2 "$PID"
    }
    load_record() {
        LOG="$REC_DIR/lockstep-load"
        record $((LIVE_WARMUP + LOAD_WINDOW + 3)) "$LOAD_WINDOW"
        finish "lockstep record"
        LINE+=" lost=$(json_num lostFrames "$LOG.json") overflows=$(json_count overflow "$LOG.json")"
        rm -f "$LOG.wav"
    }
    load_jack_capture() {
        LOG="$REC_DIR/jack_capture-load"
        rm -f "$LOG.wav"
        # Float WAV like lockstep's default; no console (lockstep shows no meter off a terminal).
        spawn jack_capture -dc -ns -s -f wav -b FLOAT -c 2 -p "${REC_PORTS[0]}" -p "${REC_PORTS[1]}" \
            -d $((LIVE_WARMUP + LOAD_WINDOW + 3)) "$LOG.wav" >"$LOG.err" 2>&1 </dev/null
        monitor "$LOAD_WINDOW" '^jack_capture[^:]*:' 2 "$PID"
        finish jack_capture
        [[ -s "$LOG.wav" ]] || fail "jack_capture wrote no $LOG.wav"
        rm -f "$LOG.wav"
    }

    [[ -n ${JACKD_PID:-} ]] && stop_server    # part 4's server, if it still runs (same name)
    step 6 "recording: starting jackd -n $SERVER ${REC_SERVER_ARGS[*]}"
    start_server "${REC_SERVER_ARGS[@]}"
    step 6 "recorder load: $REC_ROUNDS round(s) of idle, lockstep record, jack_capture (2 capture ports); $LOAD_WINDOW s each after ${LIVE_WARMUP} s"
    rounds 6 "$REC_ROUNDS" idle record jack_capture
    rec_ls_above=$(above 6 record) rec_jc_above=$(above 6 jack_capture)
    row 6 "idle server (-C 2 -P 2): DSP load, median of $REC_ROUNDS x $LOAD_WINDOW s" "$(load_cell "${LINES[6.idle]}")" "" ""
    row 6 "lockstep record, system:capture_1/2 (f32 WAV)" "$(load_cell "${LINES[6.record]}"), lost $(sum_key lost "${LINES[6.record]}")" "" ""
    row 6 "jack_capture, the same ports (float WAV)" "$(load_cell "${LINES[6.jack_capture]}")" "" ""
    row 6 "load above idle: lockstep record / jack_capture" "$rec_ls_above / $rec_jc_above % = $(ratio "$rec_ls_above" "$rec_jc_above")" "lockstep <= jack_capture" \
        "$(pass is "$(median_key mean "${LINES[6.record]}")" '<=' "$(median_key mean "${LINES[6.jack_capture]}")")"

    # (b) The long take under CPU load: the server's xruns and load over (nearly) the whole take,
    # and the recorder's CPU time.
    step 6 "long take: lockstep record of ${REC_PORTS[*]} for $REC_SECONDS s with 2 busy loops"
    busy_pids=()
    for i in 1 2; do spawn sh -c 'while :; do :; done'; busy_pids+=("$PID"); done
    LOG="$REC_DIR/take"
    take_t0=$(date +%s)
    record "$REC_SECONDS" $((REC_SECONDS > 10 ? REC_SECONDS - 5 : 1))
    take_line=$LINE
    wait_pid "$PID"
    take_seconds=$(($(date +%s) - take_t0))
    stop_pids "${busy_pids[@]}"
    ((STATUS == 0)) || fail "lockstep record (the $REC_SECONDS s take) failed (status $STATUS)"
    ((MSTATUS == 0)) || say "  warning: the load monitor ended with status $MSTATUS during the take"
    take_expected=$((REC_SECONDS * LIVE_RATE))
    take_written=$(jq -r .frames "$LOG.json")
    take_lost=$(jq -r .lostFrames "$LOG.json")
    take_overflows=$(json_count overflow "$LOG.json")
    take_ls_xruns=$(json_count xrun "$LOG.json")
    take_file_frames=$("$LOCKSTEP" info "$LOG.wav" --json | grep -o '"frames":[0-9]*' | head -n 1 | cut -d: -f2) ||
        die "lockstep info $LOG.wav failed"
    [[ -n $take_written && -n $take_lost && -n $take_file_frames ]] ||
        { cat "$LOG.json" >&2; die "could not read the take's summary ($LOG.json) or length"; }
    take_server="xruns $take_ls_xruns (lockstep) / $(get xruns "$take_line") (server), load $(get mean "$take_line") %"
    say "  take: $take_file_frames frames in the file (expected $take_expected), written $take_written, lostFrames $take_lost, overflows $take_overflows, $take_server, recorder CPU $(get cpu "$take_line") % [$take_seconds s]"
    rm -f "$LOG.wav"
    stop_server
    rec_seconds=$(($(date +%s) - rec_started))
    row 6 "$REC_SECONDS s take, 2 busy loops: frames in file" "$take_file_frames (written $take_written)" "= $take_expected" "$(ok "take_file_frames == take_expected")"
    row 6 "$REC_SECONDS s take: lostFrames, overflows, xruns" "lost $take_lost, overflows $take_overflows, $take_server" "lost 0" \
        "$(ok "take_lost == 0 && take_file_frames == take_expected")"
fi

# --- Table ---------------------------------------------------------------------------------------
echo
echo "Lockstep benchmarks: $(uname -m), $(nproc) cores, $(swift --version 2>/dev/null | head -n 1 | sed 's/ (.*//')"
line "#" "measurement" "value" "target" "result"
line "--" "----------------------------------------------------" "------------------------------------------------" "----------------------" "------"
for p in {1..12}; do printf '%s' "${ROWS[$p]:-}"; done
want 3 && echo "(30-min input: $(calc %.0f 'a / 1048576' "$(stat -c %s "$LONG")") MiB on disk.)"
want 1 && echo "(Benchmark tables: $ALLOC_LOG.)"
if want 4 5; then
    echo "(Parts 4-5: private jackd -n $SERVER ${SERVER_ARGS[*]}; every client connected to the dummy playback ports."
    echo " On these 2-core machines an idle dummy server at period 64 already xruns; measured at period $LIVE_PERIOD ($(calc %.2f 'a / b * 1000' "$LIVE_PERIOD" "$LIVE_RATE") ms)$(want 5 && echo " (the last row 5 shows this run's idle period-64 server)")."
    echo " DSP load: jack_cpu_load(), mean of 100 ms samples after ${LIVE_WARMUP} s of playback; CPU: user+sys of the client processes,"
    echo " all threads / realtime threads, % of one core; RT faults: page faults the clients' realtime threads took (should be 0);"
    echo " xruns: xrun notifications in the window. Live parts took $(($(date +%s) - live_started)) s.)"
fi
if want 6; then
    echo "(Part 6: private jackd -n $SERVER ${REC_SERVER_ARGS[*]}; the dummy capture ports give silence. Load as in part 4,"
    echo " $REC_ROUNDS-round median (full mode 2, LOCKSTEP_BENCH_QUICK=1 1); CPU: the recorder process. The take: $REC_SECONDS s (full mode 600,"
    echo " quick 60) while 2 busy loops ran; PASS iff lostFrames = 0 and the file holds exactly ${REC_SECONDS} x $LIVE_RATE frames. Part 6 took $rec_seconds s.)"
fi
if want 5; then
    trials=""
    for n in $(printf '%s\n' "${!T_LINE[@]}" | sort -n); do
        trials+=" $n: $(get mean "${T_LINE[$n]}") %/$(get xruns "${T_LINE[$n]}") xr/$(get underruns "${T_LINE[$n]}") ur$([[ -z ${T_WHY[$n]} ]] || echo " FAIL")$([[ -z ${T_RETRIED[$n]:-} ]] || echo " (retried)");"
    done
    echo "(Part 5 trials, $CAP_WINDOW s each (full mode 60 s, LOCKSTEP_BENCH_QUICK=1 15 s), N: load/xruns/underruns:${trials%;}.)"
fi
echo "(bench.sh took $(($(date +%s) - started)) s.)"

if want 1 && ((allocates)); then
    say "FAIL: the render path allocates; where (ordo-one/benchmark's --allocation-stacks):"
    (cd Tests/Benchmarks && swift package benchmark --target RenderBenchmark --filter 'render cycle.*' \
        --allocation-stacks --no-progress) 2>&1 | sed -n '/^Allocation stacks/,$p' >&2 || true
    exit 1
elif want 1 && [[ ${M[control.mallocs]} == 0 ]]; then
    say "FAIL: the control benchmark reports no allocation: the malloc counter is not counting"
    exit 1
fi
