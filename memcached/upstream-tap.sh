#!/usr/bin/env bash
# prove --exec wrapper for memcached's own suite under an anti-caching policy:
# runs one t/*.t file with perl and turns the failures of the subtests that
# upstream-skip*.txt lists for it ("NAME.t:N" or "NAME.t:A-B", with a reason)
# into skips, so a file's unrelated checks still run. Exits with the number
# of failures left (as Test::More does). The skip lists: $AC_SKIP_LISTS.
set -uo pipefail
t=${1:?usage: upstream-tap.sh TEST.t}
name=$(basename "$t")
# the subtest ranges for this file: "A B reason" per line
ranges=$(grep -h "^$name:" $AC_SKIP_LISTS 2>/dev/null |
         sed -E 's/^[^:]+:([0-9]+)(-([0-9]+))? (.*)$/\1 \3 \4/' || true)
perl "$t" | awk -v ranges="$ranges" '
    BEGIN {
        n = split(ranges, lines, "\n")
        for (i = 1; i <= n; i++) {
            if (lines[i] == "") continue
            split(lines[i], f, " ")
            lo[i] = f[1]; hi[i] = (f[2] == "" || f[2] !~ /^[0-9]+$/) ? f[1] : f[2]
            r = lines[i]; sub(/^[0-9]+ +([0-9]+ +)?/, "", r); why[i] = r
        }
        left = 0
    }
    /^not ok [0-9]+/ {
        num = $3 + 0
        for (i = 1; i <= n; i++)
            if (num >= lo[i] && num <= hi[i]) {
                print "ok " num " # skip anti-caching: " why[i]
                next
            }
        left++
    }
    { print }
    END { exit (left > 254 ? 254 : left) }'
exit "${PIPESTATUS[1]}"   # the failures left, not perl's count
