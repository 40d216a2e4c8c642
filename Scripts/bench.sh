#!/usr/bin/env bash
# Lockstep's benchmarks (not tests; CI doesn't run them). Prints one table:
#
#   1. allocations per render cycle with 64 running queues (must be 0) and the time per cycle,
#      measured with ordo-one/benchmark's malloc counter (the package in Tests/Benchmarks): with
#      long buffers (steady mixing) and with short buffers recycled through the callback, plus a
#      control benchmark that allocates, to show the counter counts;
#   2. `lockstep render` of eight 60-second stereo float stems against `sox -m` and `ecasound`
#      mixing the same stems: median wall time of alternating runs, and a sample-by-sample check
#      that the three mixes agree (target: lockstep at least 2x faster than both);
#   3. the peak memory (RSS) of `lockstep render` on a 30-minute file against a 1-minute one.
#
# Exits non-zero if the render path allocates (or the malloc counter doesn't count, or a step
# fails). The speed, agreement and memory targets print PASS/FAIL without changing the status.
#
# Environment: LOCKSTEP_BENCH_RUNS (runs per tool in part 2, default 7),
# LOCKSTEP_BENCH_CACHE (generated audio, default ${TMPDIR:-/tmp}/lockstep-bench),
# LOCKSTEP_BENCH_FORCE_ALLOCATION=1 (make the measured render cycle allocate: the script must fail).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
export LC_ALL=C

RUNS=${LOCKSTEP_BENCH_RUNS:-7}
CACHE=${LOCKSTEP_BENCH_CACHE:-${TMPDIR:-/tmp}/lockstep-bench}
mkdir -p "$CACHE"
started=$(date +%s)

say() { echo "bench: $*" >&2; }
die() { echo "bench: error: $*" >&2; exit 1; }
now_ns() { date +%s%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Prints a/b with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# Succeeds when a >= b (floating point).
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# --- Tools ---------------------------------------------------------------------------------------
LOCKSTEP_BENCH=1 Scripts/setup.sh
if [[ ! -x /usr/bin/time ]]; then
    say "installing time"
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends time >/dev/null
fi

say "building lockstep (release)"
swift build -c release --product lockstep >&2
LOCKSTEP="$(swift build -c release --show-bin-path)/lockstep"
[[ -x "$LOCKSTEP" ]] || die "no lockstep binary at $LOCKSTEP"

# --- 1. Allocations and time per render cycle ----------------------------------------------------
say "1/3 render cycle: building and running Tests/Benchmarks (ordo-one/benchmark, release)"
ALLOC_LOG="$CACHE/render-benchmark.txt"
status=0
(cd Tests/Benchmarks && swift package benchmark --target RenderBenchmark --no-progress) \
    >"$ALLOC_LOG" 2>&1 || status=$?
if ((status != 0)); then
    cat "$ALLOC_LOG" >&2
    die "the render benchmark failed (status $status); its output is above and in $ALLOC_LOG"
fi

# Reads one row of a benchmark's table in ordo-one/benchmark's text output.
# $1: benchmark name (its heading line), $2: metric label prefix,
# $3: column (p0 p25 p50 p75 p90 p99 p100 samples).
metric() {
    awk -F'│' -v bench="$1" -v label="$2" -v column="$3" '
        BEGIN { split("p0 p25 p50 p75 p90 p99 p100 samples", names, " "); for (i in names) col[names[i]] = i + 2 }
        /^[^│╒╞├╘]/ && NF == 1 { current = $0; next }
        current == bench && index($2, " " label) == 1 { v = $col[column]; gsub(/[ ,]/, "", v); print v; exit }
    ' "$ALLOC_LOG"
}
RENDER_BENCH="render cycle, 64 queues, 256 frames"
RECYCLE_BENCH="render cycle, 64 queues, 256 frames, recycled 1024-frame buffers"
CONTROL_BENCH="control: cycle + masterLevels (allocates)"
mallocs_max=$(metric "$RENDER_BENCH" "Malloc (total)" p100)
cycles=$(metric "$RENDER_BENCH" "Malloc (total)" samples)
cycle_p50=$(metric "$RENDER_BENCH" "Time (wall clock)" p50)
cycle_p99=$(metric "$RENDER_BENCH" "Time (wall clock)" p99)
recycle_mallocs_max=$(metric "$RECYCLE_BENCH" "Malloc (total)" p100)
recycle_cycles=$(metric "$RECYCLE_BENCH" "Malloc (total)" samples)
recycle_p50=$(metric "$RECYCLE_BENCH" "Time (wall clock)" p50)
recycle_p99=$(metric "$RECYCLE_BENCH" "Time (wall clock)" p99)
control_mallocs=$(metric "$CONTROL_BENCH" "Malloc (total)" p50)
for v in mallocs_max cycles cycle_p50 cycle_p99 recycle_mallocs_max recycle_cycles recycle_p50 recycle_p99 control_mallocs; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || { cat "$ALLOC_LOG" >&2; die "could not read $v from the benchmark output ($ALLOC_LOG)"; }
done
grep -q "Time (wall clock) (ns)" "$ALLOC_LOG" || die "the benchmark's time unit is not ns ($ALLOC_LOG)"
us() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1000 }'; }
# Share of the realtime budget (256 frames at 48 kHz = 5333 us) a median cycle takes.
budget() { awk -v ns="$1" 'BEGIN { printf "%.2f%%", ns / (256 / 48000 * 1e9) * 100 }'; }

# --- 2. lockstep render against sox and ecasound -------------------------------------------------
STEMS="$CACHE/stems"
mkdir -p "$STEMS"
if [[ ! -f "$STEMS/.done-v1" ]]; then
    say "2/3 generating eight 60 s stereo float stems in $STEMS"
    synths=(
        "sine 110 sine 165"
        "sine 220 sine 330"
        "sine 440 sine 660"
        "square 55 square 82.5"
        "sawtooth 880 sawtooth 1320"
        "triangle 1760 triangle 2640"
        "pinknoise"
        "brownnoise"
    )
    for i in "${!synths[@]}"; do
        # shellcheck disable=SC2086  # the synth spec is several words
        sox -R -n -r 48000 -c 2 -e floating-point -b 32 "$STEMS/s$((i + 1)).wav" synth 60 ${synths[$i]} vol 0.1
    done
    touch "$STEMS/.done-v1"
fi
if [[ ! -f "$STEMS/.done-tiny-v1" ]]; then
    for i in {1..8}; do sox "$STEMS/s$i.wav" "$STEMS/tiny$i.wav" trim 0 0.01; done
    touch "$STEMS/.done-tiny-v1"
fi
OUT_LOCKSTEP="$CACHE/mix-lockstep.wav"
OUT_SOX="$CACHE/mix-sox.wav"
OUT_ECA="$CACHE/mix-ecasound.wav"
# The mixers, on the stems named s1…s8 (or tiny1…tiny8: 10 ms each, to see each tool's fixed cost).
STEM=s
run_lockstep() { "$LOCKSTEP" render "$STEMS/$STEM"{1..8}.wav -o "$OUT_LOCKSTEP" --rate 48000 --channels 2 --sample-format f32 >/dev/null; }
run_sox() {
    local inputs=() i
    for i in {1..8}; do inputs+=(-v 1 "$STEMS/$STEM$i.wav"); done
    sox -m "${inputs[@]}" -e floating-point -b 32 "$OUT_SOX"
}
run_ecasound() {
    local inputs=() i
    for i in {1..8}; do inputs+=("-a:$i" -i "$STEMS/$STEM$i.wav"); done
    ecasound -q "${inputs[@]}" -a:all -f:f32_le,2,48000 -o "$OUT_ECA" >/dev/null
}

# Runs a mixer once; prints its wall time and CPU time (user + system), in seconds.
timed() {
    local out=$1 cmd=$2 times="$CACHE/times.txt" TIMEFORMAT='%3R %3U %3S'
    rm -f "$out"
    { time "$cmd" 2>"$CACHE/$cmd.err"; } 2>"$times" || { cat "$CACHE/$cmd.err" >&2; die "$cmd failed"; }
    [[ -s "$out" ]] || die "$cmd wrote no $out"
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$times"
}
# Median of field $1 (1: wall, 2: CPU) of timed's lines on standard input.
median_of() { awk -v f="$1" '{ print $f }' | median; }

say "2/3 fixed cost per run: mixing eight 10 ms stems, 3 rounds"
STEM=tiny
fixed=()
for ((r = 1; r <= 3; r++)); do
    fixed+=("lockstep $(timed "$OUT_LOCKSTEP" run_lockstep)" "sox $(timed "$OUT_SOX" run_sox)" "ecasound $(timed "$OUT_ECA" run_ecasound)")
done
fixed_of() { printf '%s\n' "${fixed[@]}" | awk -v t="$1" '$1 == t { print $2 }' | median; }

STEM=s
say "2/3 mixing: one untimed round, then $RUNS alternating timed rounds (lockstep, sox, ecasound)"
timed "$OUT_LOCKSTEP" run_lockstep >/dev/null
timed "$OUT_SOX" run_sox >/dev/null
timed "$OUT_ECA" run_ecasound >/dev/null
t_lockstep=() t_sox=() t_eca=()
for ((r = 1; r <= RUNS; r++)); do
    t_lockstep+=("$(timed "$OUT_LOCKSTEP" run_lockstep)")
    t_sox+=("$(timed "$OUT_SOX" run_sox)")
    t_eca+=("$(timed "$OUT_ECA" run_ecasound)")
    say "  round $r (wall, CPU s): lockstep ${t_lockstep[-1]}, sox ${t_sox[-1]}, ecasound ${t_eca[-1]}"
done
med_lockstep=$(printf '%s\n' "${t_lockstep[@]}" | median_of 1)
med_sox=$(printf '%s\n' "${t_sox[@]}" | median_of 1)
med_eca=$(printf '%s\n' "${t_eca[@]}" | median_of 1)
cpu_lockstep=$(printf '%s\n' "${t_lockstep[@]}" | median_of 2)
cpu_sox=$(printf '%s\n' "${t_sox[@]}" | median_of 2)
cpu_eca=$(printf '%s\n' "${t_eca[@]}" | median_of 2)
speedup_sox=$(ratio "$med_sox" "$med_lockstep")
speedup_eca=$(ratio "$med_eca" "$med_lockstep")
cpu_ratio_sox=$(ratio "$cpu_sox" "$cpu_lockstep")
cpu_ratio_eca=$(ratio "$cpu_eca" "$cpu_lockstep")

# Agreement: frame counts equal, and the largest |a - b| over every sample: sox mixes a - b (from
# its 32-bit integer samples: resolution 2^-31, 4.7e-10), amplifies it 1e6 times and stat reports
# the extremes (6 decimals: 1e-12 once scaled back). A difference of 1e-6 or more clips at 1.
frames() { soxi -s "$1" 2>/dev/null; }
max_abs_diff() {
    sox -m -v 1 "$1" -v -1 "$2" -n vol 1000000 stat 2>&1 | awk '
        /^Maximum amplitude/ { mx = $3 } /^Minimum amplitude/ { mn = $3 }
        END { if (mx == "" || mn == "") exit 1; if (mn < 0) mn = -mn; printf "%.3g\n", (mx > mn ? mx : mn) / 1e6 }'
}
TOLERANCE=1e-6
f_lockstep=$(frames "$OUT_LOCKSTEP")
f_sox=$(frames "$OUT_SOX")
f_eca=$(frames "$OUT_ECA")
diff_sox=$(max_abs_diff "$OUT_LOCKSTEP" "$OUT_SOX") || die "sox stat failed on $OUT_LOCKSTEP vs $OUT_SOX"
diff_eca=$(max_abs_diff "$OUT_LOCKSTEP" "$OUT_ECA") || die "sox stat failed on $OUT_LOCKSTEP vs $OUT_ECA"
peak_mix=$(sox "$OUT_LOCKSTEP" -n stat 2>&1 | awk '/^Maximum amplitude/ { mx = $3 } /^Minimum amplitude/ { mn = -$3 } END { printf "%.3f", (mx > mn ? mx : mn) }')
agree() { [[ "$1" == "$f_lockstep" ]] && awk -v d="$2" -v t="$TOLERANCE" 'BEGIN { exit !(d < t) }'; }

# --- 3. Peak memory against input length ---------------------------------------------------------
say "3/3 memory: rendering a 1-minute and a 30-minute mono 16-bit 44.1 kHz file"
LONG="$CACHE/long-30min.wav"
SHORT="$CACHE/short-1min.wav"
[[ -s "$SHORT" ]] || sox -n -r 44100 -c 1 -e signed-integer -b 16 "$SHORT" synth 60 sine 440 vol 0.5
[[ -s "$LONG" ]] || sox -n -r 44100 -c 1 -e signed-integer -b 16 "$LONG" synth 1800 sine 440 vol 0.5
# Prints "peak-RSS-KiB seconds".
rss_render() {
    local out="$CACHE/rss-out.wav" report="$CACHE/rss-time.txt" t0 t1
    rm -f "$out"
    t0=$(now_ns)
    /usr/bin/time -f '%M' -o "$report" "$LOCKSTEP" render "$1" -o "$out" >/dev/null || die "lockstep render $1 failed"
    t1=$(now_ns)
    rm -f "$out"
    echo "$(tail -n 1 "$report") $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f", d / 1e9 }')"
}
result=$(rss_render "$SHORT")
read -r rss_short time_short <<<"$result"
result=$(rss_render "$LONG")
read -r rss_long time_long <<<"$result"
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
long_input_mib=$(awk -v b="$(stat -c %s "$LONG")" 'BEGIN { printf "%.0f", b / 1048576 }')
rss_growth=$(ratio "$rss_long" "$rss_short")

# --- Table ---------------------------------------------------------------------------------------
pass() { if "$@"; then echo PASS; else echo FAIL; fi; }
long_result=$( ((mallocs_max == 0)) && echo PASS || echo FAIL)
recycle_result=$( ((recycle_mallocs_max == 0)) && echo PASS || echo FAIL)
control_result=$( ((control_mallocs > 0)) && echo PASS || echo FAIL)
row() { printf '%-2s %-52s %-27s %-19s %s\n' "$@"; }
echo
echo "Lockstep benchmarks: $(uname -m), $(nproc) cores, $(swift --version 2>/dev/null | head -n 1 | sed 's/ (.*//')"
row "#" "measurement" "value" "target" "result"
row "--" "----------------------------------------------------" "---------------------------" "-------------------" "------"
row 1 "mallocs per render cycle, 64 long-buffer queues" "$mallocs_max (max of $cycles cycles)" "0" "$long_result"
row 1 "mallocs per render cycle, 64 queues recycling bufs" "$recycle_mallocs_max (max of $recycle_cycles cycles)" "0" "$recycle_result"
row 1 "malloc counter control (cycle + masterLevels)" "$control_mallocs per iteration" "> 0" "$control_result"
row 1 "render cycle, 64 long-buffer queues: p50 / p99" "$(us "$cycle_p50") / $(us "$cycle_p99") us" "< 5333 us" "$(budget "$cycle_p50") of budget"
row 1 "render cycle, 64 queues recycling bufs: p50 / p99" "$(us "$recycle_p50") / $(us "$recycle_p99") us" "< 5333 us" "$(budget "$recycle_p50") of budget"
row 2 "lockstep render, 8 x 60 s stems: wall, median of $RUNS" "$med_lockstep s" "" ""
row 2 "sox -m: wall, median of $RUNS" "$med_sox s = ${speedup_sox}x lockstep" "lockstep >= 2x" "$(pass at_least "$speedup_sox" 2)"
row 2 "ecasound: wall, median of $RUNS" "$med_eca s = ${speedup_eca}x lockstep" "lockstep >= 2x" "$(pass at_least "$speedup_eca" 2)"
row 2 "CPU user+sys, median: lockstep / sox / ecasound" "$cpu_lockstep / $cpu_sox / $cpu_eca s" "" "sox ${cpu_ratio_sox}x, eca ${cpu_ratio_eca}x"
row 2 "fixed cost: wall on 8 x 10 ms stems, same order" "$(fixed_of lockstep) / $(fixed_of sox) / $(fixed_of ecasound) s" "" ""
row 2 "max |lockstep - sox|, frames $f_lockstep / $f_sox" "$diff_sox (mix peak $peak_mix)" "< $TOLERANCE" "$(pass agree "$f_sox" "$diff_sox")"
row 2 "max |lockstep - ecasound|, frames $f_lockstep / $f_eca" "$diff_eca" "< $TOLERANCE" "$(pass agree "$f_eca" "$diff_eca")"
row 3 "peak RSS, render 1-min mono s16 44.1 kHz" "$(mib "$rss_short") ($time_short s)" "" ""
row 3 "peak RSS, render 30-min mono s16 44.1 kHz" "$(mib "$rss_long") ($time_long s)" "<= 1.25x 1-min" "$(pass at_least 1.25 "$rss_growth") (${rss_growth}x)"
echo "(30-min input: $long_input_mib MiB on disk. Benchmark tables: $ALLOC_LOG. bench.sh took $(($(date +%s) - started)) s.)"

if [[ $long_result != PASS || $recycle_result != PASS ]]; then
    say "FAIL: the render path allocates; where (ordo-one/benchmark's --allocation-stacks):"
    (cd Tests/Benchmarks && swift package benchmark --target RenderBenchmark --filter 'render cycle.*' \
        --allocation-stacks --no-progress) 2>&1 | sed -n '/^Allocation stacks/,$p' >&2 || true
    exit 1
fi
if [[ $control_result != PASS ]]; then
    say "FAIL: the control benchmark reports no allocation: the malloc counter is not counting"
    exit 1
fi
