#!/usr/bin/env bash
# Runs memcached's own test suite (prove t/) against the fork with an
# anti-caching policy: every server the suite starts gets
# -o ac_policy=POLICY and a spill directory of its own.
# Usage: upstream-suite.sh SRC_DIR POLICY [TEST.t ...]   (default: all of t/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:?usage: upstream-suite.sh SRC_DIR POLICY}" && pwd)
policy=${2:?usage: upstream-suite.sh SRC_DIR POLICY}
run=$(mktemp -d "/var/tmp/memcached-ac-suite.XXXXXX")
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$run"; }
trap cleanup EXIT
# MemcachedTest.pm runs $cwd/memcached-debug and $cwd/timedrun with t/ under $cwd.
for f in t timedrun sizes testapp memcached doc; do
    [ -e "$src/$f" ] && ln -s "$src/$f" "$run/$f"
done
# A private copy of the binary: a rebuild during the run does not disturb it.
cp "$src/memcached-debug" "$run/memcached-debug.bin"
cat > "$run/memcached-debug" <<WRAP
#!/bin/sh
exec "$run/memcached-debug.bin" "\$@" 2>>$run/stderr.log -o ac_policy=$policy,ac_spill_dir=$run/spill.\$\$
WRAP
chmod +x "$run/memcached-debug"
cd "$run"
# Tests that cannot hold with anti-caching (any spilling policy), each with the
# reason, are skipped: upstream-skip.txt, and upstream-skip-POLICY.txt for what
# one policy adds. A line "NAME.t reason" skips the file, "NAME.t:N-M reason"
# only those subtests (the file's other checks run).
skip_lists=("$here/upstream-skip.txt")
[ -f "$here/upstream-skip-$policy.txt" ] && skip_lists+=("$here/upstream-skip-$policy.txt")
tests=()
shift 2
[ $# -gt 0 ] && set -- "${@/#/t/}" || set -- t/*.t
for t in "$@"; do
    reason=$(grep -h "^$(basename "$t") " "${skip_lists[@]}" | head -1 || true)
    if [ -n "$reason" ]; then
        echo "skipped $reason"
        continue
    fi
    grep -h "^$(basename "$t"):" "${skip_lists[@]}" | sed 's/^/skipped subtests of /' || true
    tests+=("$t")
done
# subtests listed as "NAME.t:N[-M] reason" become skips (upstream-tap.sh)
# the slowest files first, UPSTREAM_JOBS at once (the top Makefile's; upstream-order.sh)
mapfile -t tests < <("$here/upstream-order.sh" "${tests[@]}")
AC_SKIP_LISTS="${skip_lists[*]}" prove -j"${UPSTREAM_JOBS:-6}" --exec "$here/upstream-tap.sh" "${tests[@]}"
