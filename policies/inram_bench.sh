#!/bin/bash
# In-RAM throughput of the policies against stock memcached (make -C policies bench-inram): what
# a policy's tracking costs when nothing has to spill. memcached-ac -m 4096 (everything fits),
# RECORDS records of 10 x 100 B loaded, then read-only true Zipf 0.99 (requestdistribution=
# truezipf) for OPS reads per driver thread, in-process driver (ac_driver, no network), the
# driver's threads = memcached's -t, for 1 and 2 threads. Runs alternate run by run over the
# thread counts, policies and binaries, RUNS of each; printed: the median ops/s of the measured
# phase, its ratio to none's median (same binary, same threads), the lowest and highest run (the
# machine's noise) and the median of the reads that were not RAM hits (0 when everything stays in
# RAM).
# Usage: policies/inram_bench.sh [BINARY ...]   (default build/bin/memcached-ac; several
#        binaries are measured side by side, e.g. a build before a change and the one after)
#        env RUNS (5), THREADS ("1 2"), POLICIES ("none lru alru logging"; an entry may carry
#        -o options after the policy: "lru,ac_lru_batch=0"), RECORDS (200000),
#        OPS (2000000 reads per driver thread), DIR (/var/tmp: the spill directory's parent),
#        QUIET (30: seconds each run may wait for the machine to have no other runnable thread;
#        0: start at once), MEM (4096: -m in MB; a smaller one makes the policies spill, e.g.
#        MEM=96 RECORDS=400000), DEPTH (1: requests each driver thread keeps in flight,
#        -o ac_driver_depth)
set -eu
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
WL=$TOP/experiments/workloads/readonly
RUNS=${RUNS:-5}
THREADS=${THREADS:-1 2}
POLICIES=${POLICIES:-none lru alru logging}
RECORDS=${RECORDS:-200000}
OPS=${OPS:-2000000}
DIR=${DIR:-/var/tmp}
MEM=${MEM:-4096}
DEPTH=${DEPTH:-1}
[ $# -gt 0 ] || set -- "$TOP/build/bin/memcached-ac"
for b in "$@"; do
    [ -x "$b" ] || { echo "bench-inram: $b is missing (make -C memcached all)" >&2; exit 1; }
done
QUIET=${QUIET:-30}
OUT=$(mktemp -d "$DIR/ac-inram-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM

# Waits (at most QUIET s) until /proc/loadavg has counted no runnable thread but the one reading it
# three times in a row, 0.2 s apart: on a small machine another process's run halves ours.
busy=0
wait_quiet() {
    local calm=0 tries=$((QUIET * 5))
    while [ "$calm" -lt 3 ] && [ "$tries" -gt 0 ]; do
        read -r _ _ _ running _ </proc/loadavg
        if [ "${running%/*}" -le 1 ]; then calm=$((calm + 1)); else calm=0; fi
        tries=$((tries - 1))
        sleep 0.2
    done
    [ "$calm" -ge 3 ] || [ "$QUIET" = 0 ] || busy=$((busy + 1))
}

echo "== -m $MEM, depth $DEPTH, $RECORDS records of 10 x 100 B, read-only true Zipf 0.99, $OPS reads per" \
     "driver thread, in-process, $RUNS alternating runs each (medians)"
for b in "$@"; do echo "   binary $b ($(sha256sum "$b" | cut -c1-12))"; done
for run in $(seq 1 "$RUNS"); do
    for t in $THREADS; do
        for p in $POLICIES; do
            i=0
            for b in "$@"; do
                i=$((i + 1))
                tag="$i-$t-${p//[,=]/_}-$run"
                wait_quiet
                "$b" -u root -m "$MEM" -t "$t" -o "ac_policy=$p,ac_spill_dir=$OUT/spill,ac_driver=$WL,ac_driver_depth=$DEPTH,\
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
def vals(b, t, p, f):
    tag = p.replace(",", "_").replace("=", "_")
    return [f(json.load(open(f"{out}/{b}-{t}-{tag}-{r}.json"))["run"]) for r in range(1, runs + 1)]
ops = lambda r: r["throughput_ops_per_s"]
notram = lambda r: r["reads"]["total"] - r["reads"]["hit"]
width = max(8, *(len(p) for p in policies))
head = f"{'threads':>7} {'policy':<{width}}"
for b in range(1, nbin + 1):
    head += f" | {'ops/s' if nbin == 1 else f'ops/s ({b})':>10} {'/ none':>6} {'min-max (k)':>11} {'not RAM':>8}"
print(head)
for t in threads:
    for p in policies:
        line = f"{t:>7} {p:<{width}}"
        for b in range(1, nbin + 1):
            v = vals(b, t, p, ops)
            m = statistics.median(v)
            ratio = f"{m / statistics.median(vals(b, t, 'none', ops)):.2f}" if "none" in policies else "-"
            spread = f"{min(v) / 1e3:.0f}-{max(v) / 1e3:.0f}"
            line += f" | {m:>10,.0f} {ratio:>6} {spread:>11} {statistics.median(vals(b, t, p, notram)):>8,.0f}"
        print(line)
PY
[ "$busy" = 0 ] || echo "bench-inram: $busy runs started while other threads were runnable (after waiting ${QUIET}s): their numbers are noisy"
