#!/usr/bin/env bash
# Builds a Debian package of lockstep: the files Scripts/install.sh puts under /usr (the binary with
# the Swift runtime linked in, the man page, bash/zsh/fish completions, the C API's library, headers
# and pkg-config file), depending on the Debian packages of the C libraries the binary and the
# library link.
#
#   Scripts/package.sh [OUTDIR]      writes OUTDIR/lockstep_VERSION_ARCH.deb (default: the current folder)
#   sudo apt install ./lockstep_0.1.0_amd64.deb      sudo apt remove lockstep
#
# LOCKSTEP_INSTALL_BINARY and LOCKSTEP_INSTALL_LIBRARY name a binary and library already built (as
# for install.sh; the tests use them).
# A library no Debian package owns (the Swift runtime of a debug build) is an error, unless
# LOCKSTEP_PACKAGE_SKIP_UNOWNED=1 (the tests' debug build: the package then runs only where it is).
# LOCKSTEP_PACKAGE_COMPRESSION: dpkg-deb's -Z (default xz; the tests use none).
set -euo pipefail
out=$(realpath "${1:-.}")
cd "$(dirname "$0")/.."
fail() { echo "package: $*" >&2; exit 1; }
[[ -d "$out" ]] || fail "'$out' is not a folder"
command -v dpkg-deb >/dev/null || fail "dpkg-deb is missing (a Debian machine has it in package dpkg)"

stage=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-package.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
DESTDIR="$root" bash Scripts/install.sh /usr
rm -rf "$root/usr/share/lockstep"          # dpkg keeps the list of files itself
binary="$root/usr/bin/lockstep"
library="$root/usr/lib/liblockstep-audiotoolbox.so.0"
version=$("$binary" --version)
arch=$(dpkg --print-architecture)

# The packages of the libraries the binary and the library themselves need (NEEDED), found through
# the paths ldd resolves them to (as registered by dpkg, with or without /usr in front).
declare -A paths=()
# (The dynamic loader has no "=>": ldd prints its path first.)
while read -r name path; do [[ -n "${path:-}" ]] && paths[$name]=$path; done < <(ldd "$binary" "$library" |
    awk '/=>/ {print $1, $3; next} $1 ~ /^\// {n = split($1, part, "/"); print part[n], $1}')
depends=()
for name in $(objdump -p "$binary" "$library" | awk '/NEEDED/ {print $2}' | sort -u); do
    path=${paths[$name]:-}
    [[ -n "$path" ]] || fail "the binary needs $name, which this machine does not have"
    if ! package=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null); then
        [[ "${LOCKSTEP_PACKAGE_SKIP_UNOWNED:-}" == 1 ]] && continue
        fail "no Debian package owns $path (needed by the binary as $name); build with the Swift runtime linked in (leave LOCKSTEP_INSTALL_BINARY unset)"
    fi
    depends+=("${package%%:*}")
done
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')

mkdir -p "$root/DEBIAN" "$root/usr/share/doc/lockstep"
installed_size=$(du -sk "$root/usr" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: lockstep
Version: $version
Architecture: $arch
Maintainer: Lockstep developers <lockstep@localhost>
Installed-Size: $installed_size
Depends: $depends_line
Recommends: jackd2
Section: sound
Priority: optional
Description: plays many audio streams in sample-accurate sync through JACK
 Layers start on the same sample and stay there: one JACK client, one shared
 timeline, per-layer gain and meters, every discontinuity reported with its
 sample time. Cue-list sessions, live or rendered offline to the same samples,
 driven from a terminal, OSC, JACK MIDI and a web cue page.
EOF
cp README.md "$root/usr/share/doc/lockstep/README.md"
deb="$out/lockstep_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"${LOCKSTEP_PACKAGE_COMPRESSION:-xz}" --build "$root" "$deb.tmp" >&2
mv "$deb.tmp" "$deb"
echo "package: wrote $deb (depends on: $depends_line)" >&2
