#!/bin/bash
# In-RAM throughput of the policies against stock memcached (make -C policies bench-inram): what
# a policy's tracking costs when nothing has to spill. memcached-ac -m 4096 (everything fits),
# RECORDS records of 10 x 100 B loaded, then read-only true Zipf 0.99 (requestdistribution=
# truezipf) for OPS reads per driver thread, in-process driver (ac_driver, no network), the
# driver's threads = memcached's -t, for 1 and 2 threads. Runs alternate run by run over the
# thread counts, policies and binaries, RUNS of each; printed: the median ops/s of the measured
# phase, its ratio to none's median (same binary, same threads) and the median of the reads that
# were not RAM hits (0 when everything stays in RAM).
# Usage: policies/inram_bench.sh [BINARY ...]   (default build/bin/memcached-ac; several
#        binaries are measured side by side, e.g. a build before a change and the one after)
#        env RUNS (5), THREADS ("1 2"), POLICIES ("none lru alru logging"), RECORDS (200000),
#        OPS (2000000 reads per driver thread), DIR (/var/tmp: the spill directory's parent)
set -eu
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
WL=$TOP/experiments/workloads/readonly
RUNS=${RUNS:-5}
THREADS=${THREADS:-1 2}
POLICIES=${POLICIES:-none lru alru logging}
RECORDS=${RECORDS:-200000}
OPS=${OPS:-2000000}
DIR=${DIR:-/var/tmp}
[ $# -gt 0 ] || set -- "$TOP/build/bin/memcached-ac"
for b in "$@"; do
    [ -x "$b" ] || { echo "bench-inram: $b is missing (make -C memcached all)" >&2; exit 1; }
done
OUT=$(mktemp -d "$DIR/ac-inram-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM

echo "== in RAM: -m 4096, $RECORDS records of 10 x 100 B, read-only true Zipf 0.99, $OPS reads per" \
     "driver thread, in-process, $RUNS alternating runs each (medians)"
for b in "$@"; do echo "   binary $b ($(sha256sum "$b" | cut -c1-12))"; done
for run in $(seq 1 "$RUNS"); do
    for t in $THREADS; do
        for p in $POLICIES; do
            i=0
            for b in "$@"; do
                i=$((i + 1))
                tag="$i-$t-$p-$run"
                "$b" -u root -m 4096 -t "$t" -o "ac_policy=$p,ac_spill_dir=$OUT/spill,ac_driver=$WL,\
ac_driver_out=$OUT/$tag.json,ac_driver_set=recordcount=$RECORDS,ac_driver_set=operationcount=$((OPS * t)),\
ac_driver_set=requestdistribution=truezipf,ac_driver_set=zipfianconstant=0.99,ac_driver_set=threads=$t,\
ac_driver_set=seed=$run" >/dev/null 2>"$OUT/$tag.err" \
                    || { echo "bench-inram: $b ($p, $t threads) failed:" >&2; cat "$OUT/$tag.err" >&2; exit 1; }
            done
        done
    done
done

python3 - "$OUT" "$RUNS" "$THREADS" "$POLICIES" "$#" <<'PY'
import json, statistics, sys
out, runs, threads, policies, nbin = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5])
def med(b, t, p, f):
    return statistics.median(f(json.load(open(f"{out}/{b}-{t}-{p}-{r}.json"))["run"]) for r in range(1, runs + 1))
ops = lambda r: r["throughput_ops_per_s"]
notram = lambda r: r["reads"]["total"] - r["reads"]["hit"]
head = f"{'threads':>7} {'policy':<8}"
for b in range(1, nbin + 1):
    head += f" | {'ops/s' if nbin == 1 else f'ops/s ({b})':>12} {'/ none':>6} {'not RAM':>8}"
print(head)
for t in threads:
    for p in policies:
        line = f"{t:>7} {p:<8}"
        for b in range(1, nbin + 1):
            m = med(b, t, p, ops)
            ratio = f"{m / med(b, t, 'none', ops):.2f}" if "none" in policies else "-"
            line += f" | {m:>12,.0f} {ratio:>6} {med(b, t, p, notram):>8,.0f}"
        print(line)
PY
