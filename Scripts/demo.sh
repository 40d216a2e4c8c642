#!/usr/bin/env bash
# The main job: plays the layered example in Examples/Layers live through one JACK client, every
# layer's first frame on one sample. Where no JACK server runs, lockstep starts a private one
# (the dummy driver on a machine without a sound card) and stops it at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
Scripts/setup.sh
swift build -c release --product lockstep >&2
echo "demo: playing the layered example (drums 44.1 kHz WAV, bass 48 kHz FLAC, pad 22.05 kHz AIFF one second later) through JACK" >&2
.build/release/lockstep play \
    Examples/Layers/drums.wav Examples/Layers/bass.flac Examples/Layers/pad.aiff \
    --gain -3 --gain -2 --gain -9 --offset 0 --offset 0 --offset 1.0 "$@"
