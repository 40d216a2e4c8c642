#!/usr/bin/env bash
# Builds the Debian packages of lockstep from the files Scripts/install.sh puts under /usr, split as
# Debian splits a library:
#   lockstep                      the binary (the Swift runtime linked in), its man page, bash/zsh/fish
#                                 completions and the C API's shared library liblockstep-audiotoolbox.so.0;
#                                 it depends on the Debian packages of the C libraries both link
#   liblockstep-audiotoolbox-dev  what compiling against the C API needs: the headers, the
#                                 liblockstep-audiotoolbox.so link and the pkg-config file; it depends on
#                                 lockstep of the same version
#
#   Scripts/package.sh [OUTDIR]      writes lockstep_VERSION_ARCH.deb and
#                                    liblockstep-audiotoolbox-dev_VERSION_ARCH.deb to OUTDIR (default: here)
#   sudo apt install ./lockstep_0.1.0_amd64.deb ./liblockstep-audiotoolbox-dev_0.1.0_amd64.deb
#   sudo apt remove liblockstep-audiotoolbox-dev lockstep
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


# The -dev package's files move to a root of their own.
dev="$stage/dev"
for file in usr/include usr/lib/liblockstep-audiotoolbox.so usr/lib/pkgconfig; do
    mkdir -p "$dev/$(dirname "$file")"
    mv "$root/$file" "$dev/$file"
done

# Writes the control file of the package in root $1 named $2: the common fields, then stdin.
control() {
    mkdir -p "$1/DEBIAN"
    {
        echo "Package: $2"
        echo "Version: $version"
        echo "Architecture: $arch"
        echo "Maintainer: Lockstep developers <lockstep@localhost>"
        echo "Installed-Size: $(du -sk "$1/usr" | cut -f1)"
        cat
    } >"$1/DEBIAN/control"
}

mkdir -p "$root/usr/share/doc/lockstep"
cp README.md "$root/usr/share/doc/lockstep/README.md"
control "$root" lockstep <<EOF
Depends: $depends_line
Recommends: jackd2
Suggests: liblockstep-audiotoolbox-dev
Section: sound
Priority: optional
Description: plays many audio streams in sample-accurate sync through JACK
 Layers start on the same sample and stay there: one JACK client, one shared
 timeline, per-layer gain and meters, every discontinuity reported with its
 sample time. Cue-list sessions, live or rendered offline to the same samples,
 driven from a terminal, OSC, JACK MIDI and a web cue page. Also Apple's Audio
 Queue Services for C and C++ programs: liblockstep-audiotoolbox.so.0.
EOF

mkdir -p "$dev/usr/share/doc/liblockstep-audiotoolbox-dev"
cp Docs/CAPI.md "$dev/usr/share/doc/liblockstep-audiotoolbox-dev/CAPI.md"
control "$dev" liblockstep-audiotoolbox-dev <<EOF
Depends: lockstep (= $version), pkgconf | pkg-config
Section: libdevel
Priority: optional
Description: Apple's Audio Queue Services for C and C++ on Lockstep (development files)
 The headers in Apple's layout (AudioToolbox/AudioToolbox.h, CoreAudio/CoreAudioTypes.h and
 the Core Foundation pieces they use) under /usr/include/lockstep, the
 liblockstep-audiotoolbox.so link and the pkg-config file lockstep-audiotoolbox:
 cc prog.c \$(pkg-config --cflags --libs lockstep-audiotoolbox)
EOF

for built in "$root:lockstep" "$dev:liblockstep-audiotoolbox-dev"; do
    deb="$out/${built#*:}_${version}_${arch}.deb"
    dpkg-deb --root-owner-group -Z"${LOCKSTEP_PACKAGE_COMPRESSION:-xz}" --build "${built%%:*}" "$deb.tmp" >&2
    mv "$deb.tmp" "$deb"
    echo "package: wrote $deb" >&2
done
echo "package: lockstep depends on: $depends_line" >&2
