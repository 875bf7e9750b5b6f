#!/usr/bin/env bash
# Two builds of memcached-ac side by side: the in-process driver's throughput of lru, alru and
# logging, all in RAM and spilling, RUNS alternating runs of each build per case, medians and
# the ratio NEW / OLD. A change of the request path must not cost the hot paths.
#   in RAM:   200k records of 1,000 B, true Zipf 0.99, 2M reads, -m 4096 (nothing spills)
#   spilling: 400k records of 1,000 B, true Zipf 0.99, 1M reads after 200k of warm-up, -m 96
#             (about a quarter of the data in RAM), 32 reads in flight per driver thread
# Usage: bench-builds.sh OLD_BINARY NEW_BINARY [RUNS]   (make bench-builds OLD=...)
set -euo pipefail
old=${1:?usage: bench-builds.sh OLD_BINARY NEW_BINARY [RUNS]}
new=${2:?usage: bench-builds.sh OLD_BINARY NEW_BINARY [RUNS]}
runs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
workload="$here/../experiments/workloads/readonly"
work=$(mktemp -d /var/tmp/memcached-ac-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

one_run() {  # binary policy case -> ops/s of the measured run
    local bin=$1 policy=$2 kase=$3 out="$work/r.json" mem props
    local common="ac_driver_set=requestdistribution=truezipf,ac_driver_set=zipfianconstant=0.99"
    if [ "$kase" = ram ]; then
        mem=4096; props="ac_driver_set=recordcount=200000,ac_driver_set=operationcount=2000000"
    else
        mem=96; props="ac_driver_set=recordcount=400000,ac_driver_set=operationcount=1000000,ac_driver_set=warmupoperations=200000,ac_driver_depth=32"
    fi
    rm -f "$out"
    "$bin" -u root -m "$mem" -t 1 -o "ac_policy=$policy,ac_spill_dir=$work/spill,ac_driver=$workload,ac_driver_out=$out,$common,$props" \
        >/dev/null 2>"$work/err" || { echo "bench-builds.sh: $bin ($policy, $kase) failed: $(tail -c 300 "$work/err")" >&2; exit 1; }
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r.get("status","ok")=="ok", r; print(round(r["run"]["throughput_ops_per_s"]))' "$out"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-8s %-9s %12s %12s %7s\n' policy case "old ops/s" "new ops/s" ratio
for kase in ram spill; do
    for policy in lru alru logging; do
        o=(); n=()
        for _ in $(seq "$runs"); do
            o+=("$(one_run "$old" "$policy" "$kase")")
            n+=("$(one_run "$new" "$policy" "$kase")")
        done
        mo=$(median "${o[@]}"); mn=$(median "${n[@]}")
        printf '%-8s %-9s %12s %12s %7s   (old: %s; new: %s)\n' "$policy" "$kase" "$mo" "$mn" \
            "$(awk -v a="$mn" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')" "${o[*]}" "${n[*]}"
    done
done
