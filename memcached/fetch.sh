#!/usr/bin/env bash
# Fetch memcached's orig tarball from Debian's source package, check its sha256,
# unpack it into $BUILD/upstream/memcached-$VERSION and apply memcached/patches/series.
# The download is cached in $BUILD/dl; the unpacked tree is recreated when the
# patches change (stamp file). Usage: fetch.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: fetch.sh BUILD_DIR}
# shellcheck source=/dev/null
. "$here/UPSTREAM"
dl="$build/dl"; mkdir -p "$dl"
tarball="$dl/$ORIG_TARBALL"

check_sum() { echo "$ORIG_SHA256  $1" | sha256sum -c --status; }

if [ ! -f "$tarball" ] || ! check_sum "$tarball"; then
    rm -f "$tarball"
    apt_dir=$(mktemp -d)
    trap 'rm -rf "$apt_dir"' EXIT
    mkdir -p "$apt_dir/lists/partial"
    if grep -rqs "^deb-src .*debian.* $DEBIAN_SUITE " /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
       || grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ 2>/dev/null; then
        apt_opts=()
    else
        # No deb-src entry on this machine: a temporary sources list for Debian main.
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $DEBIAN_SUITE main" \
            > "$apt_dir/sources.list"
        apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                  -o "Dir::State::Lists=$apt_dir/lists")
        apt-get -qq "${apt_opts[@]}" update
    fi
    (cd "$dl" && apt-get -qq "${apt_opts[@]}" source --download-only "$DEBIAN_PACKAGE=$DEBIAN_VERSION" 2>&1 \
        | grep -v "unsandboxed as root" || true)
    if [ ! -f "$tarball" ]; then
        echo "fetch.sh: apt-get source did not produce $ORIG_TARBALL" >&2; exit 1
    fi
    if ! check_sum "$tarball"; then
        echo "fetch.sh: sha256 of $ORIG_TARBALL is $(sha256sum "$tarball" | cut -d' ' -f1), expected $ORIG_SHA256" >&2
        rm -f "$tarball"; exit 1
    fi
fi

src="$build/upstream/memcached-$VERSION"
stamp="$src/.ac-patched"
want=$(cat "$here/patches/series" $(sed "s|^|$here/patches/|" "$here/patches/series") | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
rm -rf "$src"; mkdir -p "$build/upstream"
tar -xf "$tarball" -C "$build/upstream"
while read -r p; do
    [ -z "$p" ] && continue
    patch -s -p1 -d "$src" < "$here/patches/$p"
done < "$here/patches/series"
echo "$want" > "$stamp"
