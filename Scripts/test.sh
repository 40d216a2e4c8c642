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
swift test "$@"
