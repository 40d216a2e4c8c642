#!/usr/bin/env bash
# Installs lockstep like a Linux tool: the binary (built in release mode with the Swift runtime
# linked in, so it runs without a Swift toolchain), its man page and shell completions.
#
#   Scripts/install.sh [PREFIX]               install under PREFIX (default /usr/local)
#   Scripts/install.sh --uninstall [PREFIX]   remove exactly what an install there put in place
#
#   PREFIX/bin/lockstep
#   PREFIX/share/man/man1/lockstep.1
#   PREFIX/share/bash-completion/completions/lockstep
#   PREFIX/share/zsh/site-functions/_lockstep
#   PREFIX/share/fish/vendor_completions.d/lockstep.fish
#   PREFIX/share/lockstep/install-manifest    (what --uninstall removes)
#
# DESTDIR stages the files under another root (for packaging). LOCKSTEP_INSTALL_BINARY names a
# binary already built to install instead of building one (the tests install the debug build).
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
    echo "install: removed lockstep from $prefix" >&2
    exit 0
fi

# The binary: built unless one is given.
binary=${LOCKSTEP_INSTALL_BINARY:-}
if [[ -z "$binary" ]]; then
    echo "install: building lockstep (release, Swift runtime linked in; a few minutes the first time)" >&2
    build=(swift build -c release --product lockstep --static-swift-stdlib --build-path .build-static)
    # Under sudo the build runs as the user who asked, so the checkout keeps no root-owned files.
    if [[ $EUID -eq 0 && -n "${SUDO_USER:-}" ]]; then
        sudo -u "$SUDO_USER" env PATH="$PATH" "${build[@]}" >&2
    else
        "${build[@]}" >&2
    fi
    binary=.build-static/release/lockstep
fi
[[ -x "$binary" ]] || fail "no executable at '$binary'"

# Every file, generated into a scratch folder first: nothing is put in place half-made.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp "$binary" "$scratch/lockstep"
cp Docs/lockstep.1 "$scratch/lockstep.1"
"$binary" --generate-completion-script bash >"$scratch/lockstep.bash"
"$binary" --generate-completion-script zsh >"$scratch/_lockstep"
"$binary" --generate-completion-script fish >"$scratch/lockstep.fish"

targets=(
    "$prefix/bin/lockstep:lockstep:755"
    "$prefix/share/man/man1/lockstep.1:lockstep.1:644"
    "$prefix/share/bash-completion/completions/lockstep:lockstep.bash:644"
    "$prefix/share/zsh/site-functions/_lockstep:_lockstep:644"
    "$prefix/share/fish/vendor_completions.d/lockstep.fish:lockstep.fish:644"
)
# Refuse to replace a file another install put there (one this script installed is replaced).
for entry in "${targets[@]}"; do
    target=${entry%%:*}
    if [[ -e "$root$target" ]] && ! { [[ -f "$manifest" ]] && grep -qxF "$target" "$manifest"; }; then
        fail "$root$target exists and was not installed by this script; remove it first, or choose another PREFIX"
    fi
done
for entry in "${targets[@]}"; do
    IFS=: read -r target source mode <<<"$entry"
    install -D -m "$mode" "$scratch/$source" "$root$target"
done
mkdir -p "$(dirname "$manifest")"
for entry in "${targets[@]}"; do echo "${entry%%:*}"; done >"$manifest.tmp"
mv "$manifest.tmp" "$manifest"
echo "install: lockstep $("$root$prefix/bin/lockstep" --version) in $prefix (man lockstep; completions for bash, zsh and fish)" >&2
