#!/bin/bash
# Parked gets over the network, side by side in one run (make -C policies bench-park):
# memcached-ac with one worker thread (-t 1), lru over blocks, RECORDS records of 10 x 100 B, -m a
# quarter of the items, in a memory group of -m + ROOM MiB (the spill file's pages mostly come from
# the device); ycsb-mc loads it, then CONNS connections send read-only true-Zipf theta 0.5 gets
# (one request at a time each) for OPS operations after OPS/2 of warm-up. Configurations:
# ac_park_threads 0 (the worker reads each spilled item itself) and 4, with ac_io sync and uring.
# Per configuration the median of REPS runs: operations/s, disk hits/s, mean and p99 latency of a
# read, parked gets, and the server's CPU microseconds per operation.
# Usage: policies/park_bench.sh   (root; env RECORDS, ROOM, REPS, OPS, CONNS, DIR)
set -eu
. "$(dirname "$0")/bench_env.sh"
MC=$TOP/build/bin/ycsb-mc
CONNS=${CONNS:-32}
[ -x "$MC" ] || { echo "bench-park: $MC is missing: run make -C ycsb-driver" >&2; exit 1; }
OUT=$(mktemp -d "$DIR/ac-park-bench.XXXXXX")
SERVER=
cleanup() {
    if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then kill "$SERVER"; wait "$SERVER" || true; fi
    rm -rf "$OUT"
}
trap cleanup EXIT INT TERM
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PROPS=(-p recordcount="$RECORDS" -p operationcount="$OPS" -p warmupoperations=$((OPS / 2))
       -p requestdistribution=truezipf -p zipfianconstant=0.5)

echo "== memcached-ac -t 1 -m $MEM (lru over blocks), group limit $((MEM + ROOM)) MiB; ycsb-mc: $RECORDS records," \
     "$CONNS connections, $OPS reads after $((OPS / 2)) of warm-up, $REPS runs each"
for engine in sync uring; do
    for park in 0 4; do
        for rep in $(seq 1 "$REPS"); do
            tag="$engine-$park-$rep"
            "$ACG" run --name "ac-park-bench-$$" --memory "$((MEM + ROOM))M" -- "$BIN" -u root -t 1 -m "$MEM" \
                -l 127.0.0.1 -p "$PORT" -U 0 \
                -o "ac_policy=lru,ac_io=$engine,ac_park_threads=$park,ac_spill_dir=$OUT/spill" \
                >"$OUT/acg-$tag.json" 2>"$OUT/err-$tag" &
            SERVER=$!
            for _ in $(seq 100); do
                (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
                sleep 0.1
            done
            "$MC" -P "$WL" "${PROPS[@]}" -p seed="$rep" --server "127.0.0.1:$PORT" --threads 1 --conns "$CONNS" \
                --phase both -o "$OUT/mc-$tag.json" >/dev/null 2>"$OUT/mcerr-$tag" \
                || { cat "$OUT/mcerr-$tag" "$OUT/err-$tag" >&2; exit 1; }
            kill "$SERVER"; wait "$SERVER" || true; SERVER=
        done
    done
done

python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
print(f"{'ac_io':<6} {'park':>4} {'ops/s':>9} {'disk hits/s':>12} {'read mean us':>13} {'read p99 us':>12} "
      f"{'parked':>8} {'server CPU us/op':>17}")
for engine in ("sync", "uring"):
    for park in (0, 4):
        rows = []
        for rep in range(1, reps + 1):
            d = json.load(open(f"{out}/mc-{engine}-{park}-{rep}.json"))
            run, end = d["run"], d["server"]
            start = run["server_start"]          # the server's stats when the measured run began
            delta = lambda part, k: float(end[part][k]) - float(start[part][k])
            lat = run["latency_us"]["read"]
            cpu = delta("stats", "rusage_user") + delta("stats", "rusage_system")
            rows.append((run["throughput_ops_per_s"], delta("anticache", "disk_hits") / run["duration_s"],
                         lat["mean"], lat["p99"], delta("anticache", "parked_gets"), cpu * 1e6 / run["operations"]))
        med = lambda i: statistics.median(r[i] for r in rows)
        print(f"{engine:<6} {park:>4} {med(0):>9,.0f} {med(1):>12,.0f} {med(2):>13.0f} {med(3):>12.0f} "
              f"{med(4):>8,.0f} {med(5):>17.1f}")
PY
