#!/bin/sh
# Hit rates of the anti-caching policies side by side on the paper's set-up
# (Zhang et al. ICDE 2015 §IV): YCSB read-only, Zipf 0.99, 30000 records of one
# 1000-byte field (~33 MB of items) under -m 16 (memory : data ~ 1 : 2), one
# worker, in-process driver; 400000 warm-up and 400000 measured reads; three
# seeds, the median printed. Usage: policies/bench.sh [POLICY ...]
set -eu
TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BIN=$TOP/build/bin/memcached-ac
WL=$TOP/experiments/workloads/readonly
POLICIES=${*:-lru alru logging}
OUT=$(mktemp -d /tmp/ac-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT INT TERM
[ -x "$BIN" ] || { echo "bench: $BIN is missing: run make -C memcached all" >&2; exit 1; }
printf '%-8s %-22s %-8s %-9s %-9s %s\n' policy "hit rate (3 seeds)" median resident metadata "run s"
for p in $POLICIES; do
    rates=""
    for seed in 1 2 3; do
        "$BIN" -u root -m 16 -t 1 -o "ac_policy=$p,ac_spill_dir=$OUT/spill,ac_driver=$WL,ac_driver_out=$OUT/$p.$seed.json,\
ac_driver_set=recordcount=30000,ac_driver_set=fieldcount=1,ac_driver_set=fieldlength=1000,\
ac_driver_set=warmupoperations=400000,ac_driver_set=operationcount=400000,ac_driver_set=seed=$seed" \
            >/dev/null 2>"$OUT/$p.$seed.err" || { cat "$OUT/$p.$seed.err" >&2; exit 1; }
    done
    python3 - "$OUT" "$p" <<'PY'
import json, statistics, sys
out, p = sys.argv[1], sys.argv[2]
rows = [json.load(open(f"{out}/{p}.{s}.json")) for s in (1, 2, 3)]
rates = [r["run"]["reads"]["hit"] / (r["run"]["reads"]["hit"] + r["run"]["reads"]["disk_hit"]) for r in rows]
med = sorted(range(3), key=lambda i: rates[i])[1]
a = rows[med]["server"]["anticache"]
print(f"{p:<8} {' '.join(f'{x:.4f}' for x in rates):<22} {statistics.median(rates):<8.4f} "
      f"{a['resident_items']:<9} {a['metadata_bytes']:<9} {rows[med]['run']['duration_s']:.2f}")
PY
done
