#!/usr/bin/env bash
# Prints memcached's test files (the arguments, t/NAME.t) longest first, so
# that `prove -jN` starts them at once and the suite takes about as long as
# its longest file. upstream-slow.txt lists the slow files, longest first
# (timed with `prove --timer`); the others follow in the order given. Files
# the list names that are not among the arguments are left out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
declare -A given=()
for t in "$@"; do given[$(basename "$t")]=$t; done
while read -r name _; do
    [ -n "$name" ] && [ "${name#\#}" = "$name" ] || continue
    if [ -n "${given[$name]:-}" ]; then
        echo "${given[$name]}"
        unset "given[$name]"
    fi
done < "$here/upstream-slow.txt"
for t in "$@"; do
    [ -n "${given[$(basename "$t")]:-}" ] && echo "$t"
done
exit 0
