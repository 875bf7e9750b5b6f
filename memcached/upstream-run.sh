#!/usr/bin/env bash
# Runs memcached's own suite (prove t/) on the fork: stock (ac_policy none) and under each POLICY
# given (upstream-suite.sh), UPSTREAM_SUITES of them at once (default 2: the suite is mostly sleeps,
# 37 CPU-s in ~70 s at prove -j6), each suite's output kept and printed whole, in the order given,
# when it ends. Exits non-zero if any suite failed, naming them.
# Usage: upstream-run.sh SRC_DIR [POLICY ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:?usage: upstream-run.sh SRC_DIR [POLICY ...]}" && pwd)
shift
logs=$(mktemp -d "/var/tmp/memcached-ac-upstream.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    rm -rf "$logs"
}
trap cleanup EXIT
suite() {      # suite NAME: stock ("none") or one policy
    if [ "$1" = none ]; then
        (cd "$src" && prove -j"${UPSTREAM_JOBS:-6}" $("$here/upstream-order.sh" t/*.t))
    else
        "$here/upstream-suite.sh" "$src" "$1"
    fi
}
names=(none "$@")
declare -A pid_of=()
failed=()
finish() {     # finish NAME: wait for its suite, print its output
    local rc=0
    wait "${pid_of[$1]}" || rc=$?
    echo "== memcached's suite under ac_policy=$1 (exit $rc)"
    cat "$logs/$1.log"
    [ "$rc" -eq 0 ] || failed+=("$1")
}
at_once=${UPSTREAM_SUITES:-2}
next=0
for i in "${!names[@]}"; do
    if [ "$i" -ge "$at_once" ]; then
        finish "${names[$next]}"
        next=$((next + 1))
    fi
    suite "${names[$i]}" > "$logs/${names[$i]}.log" 2>&1 &
    pid_of[${names[$i]}]=$!
    pids+=($!)
done
while [ "$next" -lt "${#names[@]}" ]; do
    finish "${names[$next]}"
    next=$((next + 1))
done
pids=()
if [ "${#failed[@]}" -gt 0 ]; then
    echo "memcached's suite failed under: ${failed[*]}" >&2
    exit 1
fi
