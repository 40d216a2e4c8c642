#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build, test and run Lockstep.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

# Arguments: more packages to install (Scripts/bench.sh passes the tools it compares against).
packages=(pkg-config libsndfile1-dev libsoxr-dev libjack-jackd2-dev jackd2 pipewire pipewire-jack liblo-dev liblo-tools sox libsox-fmt-all opus-tools tmux libncurses-dev
          chromium chromium-driver python3-selenium python3-mido fonts-dejavu-core
          librsvg2-dev iproute2 nftables   # session check --png; the netjack2 test (ip netns, nft)
          libltc-dev                   # LTC out (SMPTE linear timecode)
          libavformat-dev libavcodec-dev libavutil-dev ffmpeg   # compressed formats (AudioQueueCompat)
          libfaketime                  # a jackd on a clock of its own (the free-clock backup test)
          binutils gcc g++ "$@")                              # objdump: Scripts/package.sh; cc/c++: the C API tests

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""
    if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
    # jackd2 asks whether to enable realtime scheduling: answer for it.
    echo "jackd2 jackd/tweak_rt_limits boolean true" | $SUDO debconf-set-selections 2>/dev/null || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    if [[ -x /opt/swift/usr/bin/swift ]]; then
        echo "setup: swift is at /opt/swift/usr/bin; add it to PATH" >&2
    else
        echo "setup: Swift 6.1 or later is required (https://www.swift.org/install/linux/)" >&2
        exit 1
    fi
fi
echo "setup: ok" >&2
