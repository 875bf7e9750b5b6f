#!/bin/bash
# The fetch path against the device, side by side in one run (make -C policies bench-io):
#  - fio: 4 KiB random reads with O_DIRECT at queue depth 1 and 32, on a file in the file system
#    of the spill directory (IOPS);
#  - memcached-ac: in-process, lru over blocks, read-only, true Zipf theta 0.5, M/D 1/4 (RECORDS
#    records of 10 x 100 B, -m a quarter of the items), in a memory group of -m + ROOM, so that
#    the spill file's pages mostly come from the device; ac_driver_depth 1 and 32, each I/O engine
#    (ac_io sync, threads, aio, uring), record reads through the page cache and with O_DIRECT
#    (ac_io_direct off, on; DIRECTS), blocks written by the thread that closes them or by the
#    writer thread (ac_write_queue; WQS, default 0 only), lazy compaction at the default
#    ac_compact_fill 0.5 or off (FILLS="0.5 0": 0 merges no block whole, so the run measures the
#    fetch path without the 1 MiB block reads and rewrites compaction adds), a compacted block's
#    live records merged back into RAM or copied to the open block on disk (ac_compact;
#    MODES="merge copy"), in the lookup or in the compactor thread (ac_compact_thread;
#    COMPACTS="off on"), THREADS driver
#    threads (default 1, as fio's one job; 2 lets both cores serve, each keeping
#    ac_driver_depth reads in flight).
# fio's IOPS and its CPU microseconds per read (its job's user + system time / its reads),
# medians of REPS runs.
# Per configuration the median of REPS runs: disk hits per second and as a ratio of fio's IOPS at
# the same depth, CPU microseconds per disk hit (user + system of the whole process over the
# measured run, divided by its disk hits), read amplification (bytes the process read from
# the device / bytes of records asked for), and lazy compaction's blocks in the measured run
# (merged_blocks + copied_blocks) with the block-mates it moved (into RAM or to the open block:
# merged_items + copied_items).
# Usage: policies/io_bench.sh   (root; env RECORDS, ROOM, REPS, OPS, DIR, ENGINES, DIRECTS, WQS, FILLS, MODES,
#        COMPACTS, THREADS)
set -eu
. "$(dirname "$0")/bench_env.sh"
command -v fio >/dev/null || { echo "bench-io: fio is missing (make -C policies deps installs it)" >&2; exit 1; }
OUT=$(mktemp -d "$DIR/ac-io-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM

echo "== fio: 4 KiB random reads, O_DIRECT, 1 GiB file in $DIR, 10 s per depth, $REPS runs each"
for rep in $(seq 1 "$REPS"); do
    for qd in 1 32; do
        fio --name=randread --filename="$OUT/fio.dat" --size=1G --rw=randread --bs=4k --direct=1 \
            --ioengine=io_uring --iodepth=$qd --runtime=10 --time_based --output-format=json \
            --output="$OUT/fio-$qd-$rep.json" >/dev/null
    done
done
rm -f "$OUT/fio.dat"

ENGINES=${ENGINES:-sync threads aio uring}
DIRECTS=${DIRECTS:-off on}
WQS=${WQS:-0}
FILLS=${FILLS:-0.5}
MODES=${MODES:-merge}
COMPACTS=${COMPACTS:-off}
THREADS=${THREADS:-1}
echo "== memcached-ac: $RECORDS records, -m $MEM, group limit $((MEM + ROOM)) MiB, $OPS reads, $THREADS driver thread(s), $REPS runs each"
for depth in 1 32; do
    for direct in $DIRECTS; do
    for wq in $WQS; do
    for fill in $FILLS; do
    for mode in $MODES; do
    for compact in $COMPACTS; do
    [ "$fill" = 0 ] && { [ "$compact" = on ] || [ "$mode" = copy ]; } && continue     # nothing to compact
    ct=""                                                   # the defaults: a build before the options runs too
    [ "$compact" = off ] || ct=",ac_compact_thread=$compact"
    [ "$mode" = merge ] || ct="$ct,ac_compact=$mode"
    for engine in $ENGINES; do
        for rep in $(seq 1 "$REPS"); do
            j="$OUT/mc-$engine-$direct-$wq-$fill-$mode-$compact-$depth-$rep.json"
            "$ACG" run --name "ac-io-bench-$$" --memory "$((MEM + ROOM))M" -- "$BIN" -u root -t 1 -m "$MEM" -o \
"ac_policy=lru,ac_io=$engine,ac_io_direct=$direct,ac_write_queue=$wq,ac_compact_fill=$fill$ct,ac_driver_depth=$depth,ac_spill_dir=$OUT/spill,ac_driver=$WL,ac_driver_out=$j,\
ac_driver_set=recordcount=$RECORDS,ac_driver_set=operationcount=$OPS,ac_driver_set=warmupoperations=$((OPS / 2)),\
ac_driver_set=requestdistribution=truezipf,ac_driver_set=zipfianconstant=0.5,ac_driver_set=seed=$rep,ac_driver_set=threads=$THREADS" \
                >"$OUT/acg.json" 2>"$OUT/err" || { cat "$OUT/err" >&2; exit 1; }
        done
    done
    done
    done
    done
    done
    done
done

python3 - "$OUT" "$REPS" "$ENGINES" "$DIRECTS" "$WQS" "$FILLS" "$MODES" "$COMPACTS" <<'PY'
import itertools, json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
engines, directs, wqs, fills, modes, compacts = (a.split() for a in sys.argv[3:9])
fio = {qd: [json.load(open(f"{out}/fio-{qd}-{rep}.json"))["jobs"][0] for rep in range(1, reps + 1)] for qd in (1, 32)}
iops = {qd: statistics.median(j["read"]["iops"] for j in js) for qd, js in fio.items()}
# fio's own CPU per read (user + system of its job over its run time): what a read costs in this
# kernel and VM before any work of ours, the floor for the CPU column below
fio_us = {qd: statistics.median((j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e3 / max(j["read"]["total_ios"], 1)
                                for j in js) for qd, js in fio.items()}
print(f"fio (medians of {reps}): IOPS depth 1 {iops[1]:,.0f}, depth 32 {iops[32]:,.0f}; "
      f"CPU us per read depth 1 {fio_us[1]:.1f}, depth 32 {fio_us[32]:.1f}")
print(f"{'engine':<8} {'direct':>6} {'wq':>3} {'fill':>4} {'mode':>5} {'thread':>6} {'depth':>5} {'disk hits/s':>12} {'/ fio':>6} {'CPU us/disk hit':>16} {'read amp':>9} "
      f"{'hit rate':>9} {'used/sent':>10} {'compacted':>9} {'moved':>8}")
for depth, direct, wq, fill, mode, compact, engine in itertools.product((1, 32), directs, wqs, fills, modes, compacts, engines):
    if fill == "0" and (compact == "on" or mode == "copy"):
        continue
    rows = []
    for rep in range(1, reps + 1):
        d = json.load(open(f"{out}/mc-{engine}-{direct}-{wq}-{fill}-{mode}-{compact}-{depth}-{rep}.json"))
        run, a = d["run"], d["server"]["anticache"]
        start = run["server_start"]["anticache"]
        dh = run["reads"]["disk_hit"]
        asked = a["record_read_bytes"] - start["record_read_bytes"] + a["block_read_bytes"] - start["block_read_bytes"]
        res = run["resources"]
        rows.append((dh / run["duration_s"], (res["cpu_user_s"] + res["cpu_sys_s"]) * 1e6 / max(dh, 1),
                     res["read_bytes"] / max(asked, 1), run["reads"]["hit"] / run["reads"]["total"],
                     f"{a['prefetch_used']}/{a['prefetch_reads']}",
                     sum(a.get(k, 0) - start.get(k, 0) for k in ("merged_blocks", "copied_blocks")),
                     sum(a.get(k, 0) - start.get(k, 0) for k in ("merged_items", "copied_items"))))
    med = lambda i: statistics.median(r[i] for r in rows)
    print(f"{engine:<8} {direct:>6} {wq:>3} {fill:>4} {mode:>5} {compact:>6} {depth:>5} {med(0):>12,.0f} {med(0) / iops[depth]:>6.2f} {med(1):>16.1f} "
          f"{med(2):>9.2f} {med(3):>9.4f} {rows[0][4]:>10} {med(5):>9,.0f} {med(6):>8,.0f}")
PY
