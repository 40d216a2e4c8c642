#!/usr/bin/env bash
# The main job: renders the layered example in Examples/Layers to Examples/Layers/mix.wav,
# sample-aligned, and prints what it did. (Live playback through JACK comes next.)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
swift build -c release --product lockstep >&2
out="${1:-Examples/Layers/mix.wav}"
echo "demo: rendering the layered example (drums 44.1 kHz WAV, bass 48 kHz FLAC, pad 22.05 kHz AIFF) to $out" >&2
.build/release/lockstep render \
    Examples/Layers/drums.wav Examples/Layers/bass.flac Examples/Layers/pad.aiff \
    --gain -3 --gain -2 --gain -9 --offset 0 --offset 0 --offset 1.0 \
    -o "$out"
.build/release/lockstep info "$out"
