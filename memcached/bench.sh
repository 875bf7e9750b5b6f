#!/usr/bin/env bash
# Throughput of memcached-ac (ac_policy=lru, everything fits in RAM) against the
# same upstream source built without our patch: memcaslap (Debian
# libmemcached-tools) on 127.0.0.1, RUNS alternating runs of each, medians and
# their ratio. With 2 or more CPUs the server (one worker thread) runs on CPU 0
# and memcaslap on CPU 1, so client and server do not steal each other's core.
# Usage: bench.sh MEMCACHED_AC MEMCACHED_STOCK [RUNS] [SECONDS]
set -euo pipefail
ac=${1:?usage: bench.sh MEMCACHED_AC MEMCACHED_STOCK [RUNS] [SECONDS]}
stock=${2:?usage: bench.sh MEMCACHED_AC MEMCACHED_STOCK [RUNS] [SECONDS]}
runs=${3:-7}
secs=${4:-10}
if [ "$(nproc)" -ge 2 ]; then srv_cpu=(taskset -c 0); cli_cpu=(taskset -c 1); threads=1
else srv_cpu=(); cli_cpu=(); threads=2; fi
command -v memcaslap >/dev/null || { echo "bench.sh: memcaslap missing (apt-get install libmemcached-tools)" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work=$(mktemp -d /var/tmp/memcached-ac-bench.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

one_run() {  # binary extra-args -> ops/s
    "${srv_cpu[@]}" "$1" -l 127.0.0.1 -p "$port" -U 0 -m 1024 -t "$threads" -u root $2 & pid=$!
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
    # 64-byte values, 90% get / 10% set, 32 concurrent clients in one thread.
    "${cli_cpu[@]}" memcaslap -s 127.0.0.1:"$port" -T 1 -c 32 -X 64 -t "${secs}s" 2>&1 \
        | awk '/^Run time/ {for (i=1;i<=NF;i++) if ($i=="TPS:") print $(i+1)}' | tail -1
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

ac_tps=(); stock_tps=()
for i in $(seq "$runs"); do
    stock_tps+=("$(one_run "$stock" "")")
    ac_tps+=("$(one_run "$ac" "-o ac_policy=lru,ac_spill_dir=$work/spill")")
    echo "run $i: stock ${stock_tps[-1]} ops/s, memcached-ac(lru) ${ac_tps[-1]} ops/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ms=$(median "${stock_tps[@]}"); ma=$(median "${ac_tps[@]}")
echo "median stock ${ms} ops/s, memcached-ac(lru) ${ma} ops/s, ratio $(awk -v a="$ma" -v s="$ms" 'BEGIN {printf "%.3f", a/s}')"
