#!/usr/bin/env bash
# Writes Docs/lockstep.1, the man page, from the CLI's ArgumentParser definitions with
# swift-argument-parser's own generate-manual tool (the same help text `lockstep --help` shows).
#   Scripts/man.sh           regenerate Docs/lockstep.1 (dated today)
#   Scripts/man.sh --check   exit 1 if Docs/lockstep.1 is not what the definitions give now
#                            (keeping the page's date); ManPageTests checks the same in swift test
# Read it with: man Docs/lockstep.1
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
page=Docs/lockstep.1
if [[ "${1:-}" == "--check" ]]; then
    # The date the committed page carries (".Dd November 24, 2026"), as yyyy-mm-dd.
    date=$(date -d "$(sed -n 's/^\.Dd //p' "$page")" +%F)
else
    date=$(date +%F)
fi
# The tool is a product of the argument-parser dependency: built as one, it shares the debug
# build's modules (the generate-manual plugin would build the package a second time).
swift build --product lockstep >&2
swift build --product generate-manual >&2
bin=$(swift build --show-bin-path)
out=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-man.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$bin/generate-manual" "$bin/lockstep" --date "$date" --output-directory "$out" >&2
generated=$out/lockstep.1
if [[ "${1:-}" == "--check" ]]; then
    if ! diff -u "$page" "$generated"; then
        echo "man: $page is out of date; run Scripts/man.sh and commit it" >&2
        exit 1
    fi
    echo "man: $page is current" >&2
else
    cp "$generated" "$page"
    echo "man: wrote $page" >&2
fi
