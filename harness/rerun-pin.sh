#!/usr/bin/env bash
# rerun-pin.sh REVISION DIR: the programs a cell key names (memcached-ac, ycsb-trace, ycsb-mc,
# libacopt.so) built from REVISION in a git worktree of this checkout at DIR, for `make rerun` to run
# with (ACBENCH_BIN=DIR/build/bin, ACOPT_LIB=DIR/build/lib/libacopt.so): every piece of a rerun runs
# the binaries it pinned (acbench/rerun.py PIN), whatever the C code of the checkout. The builds are
# the same from any path (reproducible.mk). DIR is made with `git worktree add`, or, if it is already
# a worktree of this checkout, moved to REVISION; anything else at DIR is refused, never removed.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: rerun-pin.sh REVISION DIR" >&2
  exit 2
fi
rev=$1
top=$(cd "$(dirname "$0")/.." && pwd -P)
dir=$(realpath -m -- "$2")
case "$top/" in
  "${dir%/}/"*) echo "rerun-pin.sh: $dir holds the checkout $top: give a directory of its own (build/rerun-pin)" >&2
                exit 2 ;;
esac
full=$(git -C "$top" rev-parse --verify --quiet "$rev^{commit}") || {
  echo "rerun-pin.sh: $rev: not a commit of $top (the pinned revision must be in its history: git fetch?)" >&2
  exit 2
}
git -C "$top" worktree prune
if [ -e "$dir" ]; then
  if ! git -C "$top" worktree list --porcelain | grep -qxF "worktree $dir"; then
    echo "rerun-pin.sh: $dir exists and is not a worktree of $top: remove it, or give another DIR" >&2
    exit 2
  fi
  [ "$(git -C "$dir" rev-parse HEAD)" = "$full" ] || git -C "$dir" checkout --quiet --detach "$full"
else
  git -C "$top" worktree add --quiet --detach "$dir" "$full"
fi
# the upstream tarball already fetched and checked here is not fetched again
if [ -d "$top/build/dl" ] && [ ! -d "$dir/build/dl" ]; then
  mkdir -p "$dir/build" && cp -r "$top/build/dl" "$dir/build/dl"
fi
# the worktree's own TOP: a calling make (make rerun) exports this checkout's, and its command-line
# variables travel in MAKEFLAGS
for target in memcached:all ycsb-driver:all harness:lib; do
  env -u TOP -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$dir/${target%%:*}" "${target#*:}" TOP="$dir" >/dev/null
done
