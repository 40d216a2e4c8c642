#!/usr/bin/env bash
# Installs lockstep like a Linux tool: the binary (built in release mode with the Swift runtime
# linked in, so it runs without a Swift toolchain), its man page and shell completions; and the C
# API of Audio Queue Services (Docs/CAPI.md): the library (Swift runtime linked in too), Apple's
# AudioToolbox headers under include/lockstep (so they clash with no other package's) and the
# pkg-config file that points there.
#
#   Scripts/install.sh [PREFIX]               install under PREFIX (default /usr/local)
#   Scripts/install.sh --uninstall [PREFIX]   remove exactly what an install there put in place
#
#   PREFIX/bin/lockstep
#   PREFIX/share/man/man1/lockstep.1
#   PREFIX/share/bash-completion/completions/lockstep
#   PREFIX/share/zsh/site-functions/_lockstep
#   PREFIX/share/fish/vendor_completions.d/lockstep.fish
#   PREFIX/lib/liblockstep-audiotoolbox.so.0 (and the liblockstep-audiotoolbox.so link to it)
#   PREFIX/lib/pkgconfig/lockstep-audiotoolbox.pc
#   PREFIX/include/lockstep/{AudioToolbox,CoreAudio,CoreAudioTypes,CoreFoundation}/*.h, CAudioQueueTypes.h
#   PREFIX/share/lockstep/install-manifest    (what --uninstall removes)
#
#   cc prog.c $(pkg-config --cflags --libs lockstep-audiotoolbox)   (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
#   if pkg-config does not look there; run `ldconfig` after installing into a system prefix)
#
# DESTDIR stages the files under another root (for packaging). LOCKSTEP_INSTALL_BINARY names a
# binary already built to install instead of building one (the tests install the debug build);
# LOCKSTEP_INSTALL_LIBRARY likewise names a built liblockstep-audiotoolbox.so.
# It never overwrites a file it did not install: an existing lockstep of another origin is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

fail() { echo "install: $*" >&2; exit 1; }

uninstall=0
if [[ "${1:-}" == "--uninstall" ]]; then uninstall=1; shift; fi
[[ $# -le 1 ]] || fail "usage: Scripts/install.sh [--uninstall] [PREFIX]"
prefix=${1:-/usr/local}
[[ "$prefix" == /* ]] || fail "PREFIX '$prefix' must be an absolute path (e.g. /usr/local or \$HOME/.local)"
root=${DESTDIR:-}
manifest="$root$prefix/share/lockstep/install-manifest"

if ((uninstall)); then
    [[ -f "$manifest" ]] || fail "nothing to remove: $manifest does not exist (was lockstep installed under $prefix?)"
    while IFS= read -r file; do
        [[ -n "$file" ]] && rm -f "$root$file"
    done <"$manifest"
    rm -f "$manifest"
    rmdir "$root$prefix/share/lockstep" 2>/dev/null || true
    if [[ -d "$root$prefix/include/lockstep" ]]; then find "$root$prefix/include/lockstep" -depth -type d -empty -delete; fi
    echo "install: removed lockstep from $prefix" >&2
    exit 0
fi

# Builds a product in release mode: build_product NAME BUILD_PATH [ARGS…].
build_product() {
    local build=(swift build -c release --product "$1" --build-path "$2" "${@:3}")
    # Under sudo the build runs as the user who asked, so the checkout keeps no root-owned files.
    if [[ $EUID -eq 0 && -n "${SUDO_USER:-}" ]]; then
        sudo -u "$SUDO_USER" env PATH="$PATH" "${build[@]}" >&2
    else
        "${build[@]}" >&2
    fi
}

# The binary: built unless one is given.
binary=${LOCKSTEP_INSTALL_BINARY:-}
if [[ -z "$binary" ]]; then
    echo "install: building lockstep (release, Swift runtime linked in; a few minutes the first time)" >&2
    build_product lockstep .build-static --static-swift-stdlib
    binary=.build-static/release/lockstep
fi
[[ -x "$binary" ]] || fail "no executable at '$binary'"

# The C API's library: built unless one is given. --static-swift-stdlib links the runtime into
# executables only: a shared library takes swiftc's -static-stdlib (Swift runtime, Foundation and
# ICU inside: about 80 MB, and no Swift toolchain needed to use it). Their symbols stay inside it
# (--exclude-libs), so it clashes with no other Swift or CoreFoundation library in a process. Its
# own build folder: other compiler flags than the binary's would rebuild everything each time.
library=${LOCKSTEP_INSTALL_LIBRARY:-}
if [[ -z "$library" ]]; then
    echo "install: building liblockstep-audiotoolbox (release, Swift runtime linked in)" >&2
    build_product lockstep-audiotoolbox .build-static-lib -Xswiftc -static-stdlib -Xlinker --exclude-libs -Xlinker ALL \
        -Xlinker -soname -Xlinker liblockstep-audiotoolbox.so.0
    library=.build-static-lib/release/liblockstep-audiotoolbox.so
fi
[[ -f "$library" ]] || fail "no library at '$library'"

# Every file, generated into a scratch folder first: nothing is put in place half-made.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp "$binary" "$scratch/lockstep"
cp Docs/lockstep.1 "$scratch/lockstep.1"
"$binary" --generate-completion-script bash >"$scratch/lockstep.bash"
"$binary" --generate-completion-script zsh >"$scratch/_lockstep"
"$binary" --generate-completion-script fish >"$scratch/lockstep.fish"
cp "$library" "$scratch/liblockstep-audiotoolbox.so.0"
cat >"$scratch/lockstep-audiotoolbox.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: lockstep-audiotoolbox
Description: Apple's Audio Queue Services C API (AudioToolbox) on Lockstep's JACK engine
Version: $("$binary" --version)
Cflags: -I\${includedir}/lockstep
Libs: -L\${libdir} -llockstep-audiotoolbox
EOF

targets=(
    "$prefix/bin/lockstep:lockstep:755"
    "$prefix/share/man/man1/lockstep.1:lockstep.1:644"
    "$prefix/share/bash-completion/completions/lockstep:lockstep.bash:644"
    "$prefix/share/zsh/site-functions/_lockstep:_lockstep:644"
    "$prefix/share/fish/vendor_completions.d/lockstep.fish:lockstep.fish:644"
    "$prefix/lib/liblockstep-audiotoolbox.so.0:liblockstep-audiotoolbox.so.0:644"
    "$prefix/lib/liblockstep-audiotoolbox.so:liblockstep-audiotoolbox.so.0:link"
    "$prefix/lib/pkgconfig/lockstep-audiotoolbox.pc:lockstep-audiotoolbox.pc:644"
)
# The headers, in Apple's layout under include/lockstep; the structures' one definition beside them.
headers=("$(pwd)/Sources/CAudioQueueTypes/include/CAudioQueueTypes.h:CAudioQueueTypes.h")
while IFS= read -r header; do
    headers+=("$(pwd)/Sources/LockstepAudioToolbox/include/$header:$header")
done < <(cd Sources/LockstepAudioToolbox/include && find . -name '*.h' | sed 's|^\./||' | sort)
for entry in "${headers[@]}"; do
    IFS=: read -r source relative <<<"$entry"
    mkdir -p "$scratch/include/$(dirname "$relative")"
    cp "$source" "$scratch/include/$relative"
    targets+=("$prefix/include/lockstep/$relative:include/$relative:644")
done
# Refuse to replace a file another install put there (one this script installed is replaced).
for entry in "${targets[@]}"; do
    target=${entry%%:*}
    if [[ -e "$root$target" || -L "$root$target" ]] && ! { [[ -f "$manifest" ]] && grep -qxF "$target" "$manifest"; }; then
        fail "$root$target exists and was not installed by this script; remove it first, or choose another PREFIX"
    fi
done
for entry in "${targets[@]}"; do
    IFS=: read -r target source mode <<<"$entry"
    if [[ "$mode" == link ]]; then
        mkdir -p "$(dirname "$root$target")"
        ln -sfn "$source" "$root$target"
    else
        install -D -m "$mode" "$scratch/$source" "$root$target"
    fi
done
mkdir -p "$(dirname "$manifest")"
for entry in "${targets[@]}"; do echo "${entry%%:*}"; done >"$manifest.tmp"
mv "$manifest.tmp" "$manifest"
echo "install: lockstep $("$root$prefix/bin/lockstep" --version) in $prefix (man lockstep; completions for bash, zsh" \
    "and fish; the C API: pkg-config lockstep-audiotoolbox)" >&2
