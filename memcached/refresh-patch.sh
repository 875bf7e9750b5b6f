#!/usr/bin/env bash
# Regenerates patches/0001-anticaching-hooks.patch from the edited upstream tree
# (build/upstream/memcached-VERSION) against the pristine orig tarball: every
# upstream .c/.h file that differs goes into the patch. For developers changing
# the hooks: edit the tree, run this, rebuild (the stamp makes fetch.sh re-apply).
# Usage: refresh-patch.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: refresh-patch.sh BUILD_DIR}" && pwd)
# shellcheck source=/dev/null
. "$here/UPSTREAM"
tree="$build/upstream/memcached-$VERSION"
pristine=$(mktemp -d)
trap 'rm -rf "$pristine"' EXIT
mkdir -p "$pristine/a"
tar -xf "$build/dl/$ORIG_TARBALL" -C "$pristine/a" --strip-components=1
out="$here/patches/0001-anticaching-hooks.patch"
: > "$out.new"
for f in $(cd "$pristine/a" && ls ./*.c ./*.h | sed 's|^\./||' | sort); do
    if ! cmp -s "$pristine/a/$f" "$tree/$f"; then
        (cd "$pristine" && ln -sfn "$tree" b && diff -u --label "a/$f" --label "b/$f" "a/$f" "b/$f" >> "$out.new" || true)
    fi
done
mv "$out.new" "$out"
echo "$(grep -c '^[+-][^+-]' "$out") changed upstream lines in $(grep -c '^--- a/' "$out") files -> $out"
