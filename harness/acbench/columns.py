"""The column dictionary: every column of `acbench run`'s rows, with its type, unit, meaning and
source. The writers take their types from it (cells.parquet and cells.csv hold the same types),
`acbench columns [--markdown]` prints it, and a row with a column it does not know is refused.

Types: str, int, float, bool, datetime (UTC). Units: bytes, s, us (microseconds), ops/s, pp
(percentage points), fraction (0..1), count, items, requests, ratio; "" when none applies.
Conventions: sizes are bytes (`*_bytes`), times are named in the column (`*_s`, `*_us`);
`ac_<stat>` is the server's `stats anticache` line <stat> at the end of the run, as the server
prints it; `cell_*` covers the whole cell (load, warm-up, run), every other measured column the
measured run only (one window). Old names in committed results are renamed on reading
(RENAMED)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import pandas as pd


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    unit: str
    meaning: str
    source: str


TYPES = ("str", "int", "float", "bool", "datetime")
# pandas dtypes the frames hold (nullable, so a missing value never changes a column's type)
DTYPES = {"str": "string", "int": "Int64", "float": "float64", "bool": "boolean", "datetime": "datetime64[us, UTC]"}

SPEC, PLAN, DRIVER, SERVER, PROC, CG, DISK, PERF, OPT, DECOMP, HARNESS, MACHINE = (
    "spec", "memory plan (memory.py)", "driver result (run window)", "server: stats anticache",
    "/proc and wait4 of memcached-ac", "cell's cgroup", "/proc/diskstats of the spill device", "perf stat",
    "OPT pass (cellopt.py)", "loss decomposition (decompose.py)", "harness", "machine (sysinfo.py)")


def _c(name: str, type_: str, unit: str, meaning: str, source: str) -> Column:
    return Column(name, type_, unit, meaning, source)


# YCSB properties as p_<name> columns (the driver's -p; zipfianconstant and seed have columns of their own)
PROPERTY_TYPES = {
    "recordcount": ("int", "items"), "operationcount": ("int", "requests"), "workload": ("str", ""),
    "readproportion": ("float", "fraction"), "updateproportion": ("float", "fraction"),
    "insertproportion": ("float", "fraction"), "readmodifywriteproportion": ("float", "fraction"),
    "scanproportion": ("float", "fraction"), "requestdistribution": ("str", ""), "fieldcount": ("int", "count"),
    "fieldlength": ("int", "bytes"), "fieldlengthdistribution": ("str", ""), "insertorder": ("str", ""),
    "insertstart": ("int", "items"), "insertcount": ("int", "items"), "hotspotdatafraction": ("float", "fraction"),
    "hotspotopnfraction": ("float", "fraction"), "readallfields": ("bool", ""), "writeallfields": ("bool", ""),
    "zeropadding": ("int", "count"), "minscanlength": ("int", "items"), "maxscanlength": ("int", "items"), "scanlengthdistribution": ("str", ""),
    "threads": ("int", "count"), "warmupoperations": ("int", "requests"), "target": ("int", "ops/s"),
    "valuekind": ("str", ""),
}

_CELL = [
    _c("status", "str", "", "ok, or why the cell has no metrics (oom_killed)", HARNESS),
    _c("error", "str", "", "what went wrong (failed cells only)", HARNESS),
    _c("run_id", "str", "", "the run directory's name (--run-id)", HARNESS),
    _c("spec", "str", "", "the spec's name", SPEC),
    _c("cell_id", "str", "", "approach_workload_z<θ>_m<M/D>[_<grid key><value>]_r<repetition>", SPEC),
    _c("cell_key", "str", "", "digest of every setting that defines the cell (cellkey.py); resume compares it", HARNESS),
    _c("approach", "str", "", "the approach (approaches.py: a policy, tier and options)", SPEC),
    _c("workload", "str", "", "the workload file's name", SPEC),
    _c("replay_trace", "str", "", "[fixed] trace: the trace file replayed instead of YCSB requests (the workload is "
       "then its name, zipf_theta 0)", SPEC),
    _c("zipf_theta", "float", "", "θ of the request distribution ([grid] zipf_theta)", SPEC),
    _c("mem_ratio", "float", "ratio", "M/D: the item memory budget as a fraction of the data", SPEC),
    _c("repetition", "int", "count", "repetition index r (0-based)", SPEC),
    _c("seed", "int", "", "the request stream's seed (seed + r)", SPEC),
    _c("mode", "str", "", "in-process (driver inside memcached-ac) or network (ycsb-mc over TCP)", SPEC),
    _c("server_threads", "int", "count", "memcached's worker threads (-t): [run] server_threads, or the cell's driver "
       "threads (YCSB threads) by default", SPEC),
    _c("spill_device", "str", "", "where the spill files and swap file were: disk or ram (a zram device)", HARNESS),
    _c("regime", "str", "", "native (the disk as it is) or hdd (its reads and writes limited to io_limit_iops per "
       "second for the cell's processes: the paper's hard disk emulated; [run] regime)", HARNESS),
    _c("io_limit_iops", "int", "ops/s", "regime hdd: the read and the write IOPS limit on the spill disk", HARNESS),
    _c("io_limit_bps", "int", "B/s", "device_latency: the read and the write bytes/s limit on the RAM device (64 "
       "bytes per line latency: the NVM block device it stands for)", HARNESS),
    _c("io_limit_device", "str", "", "regime hdd or device_latency: MAJ:MIN of the limited device", HARNESS),
    _c("io_limit_from", "str", "", "regime hdd: run (the limit set before the measured run; load and warm-up at "
       "the disk's own speed) or load (the whole cell; always with device_latency)", HARNESS),
    _c("device_latency", "str", "", "NAME{device_latency=...}: the line latency of the NVM block device the RAM "
       "device stands for (Nx DRAM's, or ns)", HARNESS),
    _c("device_dram_ns", "float", "ns", "device_latency: DRAM's latency per line it multiplies (ac-dramlat, measured "
       "at the cell's start)", HARNESS),
    _c("disk_device", "str", "", "the block device of the spill directory (vda, zram1, ...)", DISK),
]
_PLAN = [
    _c("item_footprint", "int", "bytes", "bytes one record takes in memcached's slabs (measured or [memory])", PLAN),
    _c("data_bytes", "int", "bytes", "D = recordcount × item_footprint", PLAN),
    _c("item_memory_bytes", "int", "bytes", "memcached-ac -m (user-space approaches: what the limit leaves them, "
       "at most the item budget; paging ones: room for every item)", PLAN),
    _c("item_budget_bytes", "int", "bytes", "⌈M/D × D⌉ in whole MiB: what OPT gets", PLAN),
    _c("cgroup_limit_bytes", "int", "bytes", "the cell's cgroup memory limit = item budget + allowance (+ offline_bytes)",
       PLAN),
    _c("cgroup_swap_bytes", "int", "bytes", "swap the cgroup may use (0: none; paging approaches)", PLAN),
    _c("allowance_bytes", "int", "bytes", "the limit beyond the item budget: with provisioning equal, stock memcached's "
       "calibrated need (×1.15), the same for every approach of the cell; with own, the approach's own", PLAN),
    _c("provisioning", "str", "", "[memory] provisioning: equal (one limit per cell) or own (harness/acbench/memory.py)", PLAN),
    _c("offline_bytes", "int", "bytes", "provisioning equal: granted beside the common limit to an approach whose "
       "classifier the paper runs offline (logging-buffer: what it needs beyond stock memcached); 0 otherwise", PLAN),
    _c("approach_needs_bytes", "int", "bytes", "provisioning equal, user-space approaches: what the approach needs "
       "beside its items (×1.15 its calibrated overhead); its -m is what the limit leaves, at most the budget", PLAN),
    _c("allowance_source", "str", "", "spec, or the calibration it came from (calibrate.py)", PLAN),
    _c("opt_capacity", "int", "items", "C: OPT's capacity in objects = item budget / footprint", PLAN),
    _c("hashpower", "int", "count", "memcached's -o hashpower (sized so the table never grows)", PLAN),
    _c("page_cluster", "int", "count", "vm.page-cluster during the cell (paging approaches: 0)", HARNESS),
    _c("swap_file_bytes", "int", "bytes", "the swap area given to the cell (paging approaches): a swap file, or a zram device's uncompressed capacity", HARNESS),
    _c("psi_scope", "str", "", "ospaging-psi: whose PSI drove it: cgroup (v2's memory.pressure) or system (v1: /proc/pressure/memory)", HARNESS),
    _c("psi_target", "float", "fraction", "ospaging-psi: the stall share (PSI some) the controller aims under", HARNESS),
    _c("psi_limit_avg_bytes", "int", "bytes", "ospaging-psi: the time-weighted mean of the limit it set over the cell (compare others at this memory)", HARNESS),
    _c("psi_limit_min_bytes", "int", "bytes", "ospaging-psi: the lowest limit it set", HARNESS),
    _c("psi_limit_end_bytes", "int", "bytes", "ospaging-psi: the limit at the cell's end", HARNESS),
    _c("psi_steps", "int", "count", "ospaging-psi: limit changes it made", HARNESS),
    _c("psi_refused", "int", "count", "ospaging-psi: limit changes the kernel refused (v1: could not reclaim that far)", HARNESS),
    _c("psi_stall_avg", "float", "fraction", "ospaging-psi: the mean PSI some stall share it measured", HARNESS),
    _c("remote_server_bytes", "int", "bytes", "tier remote: the memory (-m) of each remote server the harness started outside the cell's cgroup (remote.py)", HARNESS),
    _c("ext_file_bytes", "int", "bytes", "extstore: the size of its file in the cell's spill directory (extstore.py: twice the data)", HARNESS),
    _c("nvm_file_bytes", "int", "bytes", "tier nvm: the region file the harness allocated on tmpfs outside the cell's cgroup (nvm.py)", HARNESS),
    _c("zram_mem_used_max_bytes", "int", "bytes", "swap_device zram: the device's peak RAM (compressed pages and its own book-keeping), charged to no cgroup; beside cg_swap_max_bytes (the same pages uncompressed)", HARNESS),
]
_RUN = [
    _c("operations", "int", "requests", "requests of the measured run", DRIVER),
    _c("run_duration_s", "float", "s", "wall time of the measured run", DRIVER),
    _c("throughput_ops_s", "float", "ops/s", "operations / run_duration_s", DRIVER),
    _c("load_duration_s", "float", "s", "wall time of the load phase", DRIVER),
    _c("reads_total", "int", "requests", "reads of the measured run (read-modify-writes included)", DRIVER),
    _c("hits", "int", "requests", "reads served from RAM with no disk I/O", DRIVER),
    _c("disk_hits", "int", "requests", "reads served after a read from the spill store or a major page fault", DRIVER),
    _c("misses", "int", "requests", "reads of an absent key (the stock cache: a dropped item)", DRIVER),
    _c("errors", "int", "requests", "requests answered with an error", DRIVER),
    _c("refills", "int", "requests", "look-aside stores after a read miss (approach memcached)", DRIVER),
    _c("refill_errors", "int", "requests", "refills the server refused", DRIVER),
    _c("hit_rate", "float", "fraction", "hits / (hits + disk hits + misses)", HARNESS),
    _c("reads_accounted", "bool", "", "hits + disk hits + misses = reads_total", HARNESS),
    _c("loss_pp", "float", "pp", "OPT's hit rate − hit_rate", HARNESS),
    _c("cpu_user_s", "float", "s", "user CPU of memcached-ac in the run", DRIVER),
    _c("cpu_sys_s", "float", "s", "system CPU of memcached-ac in the run", DRIVER),
    _c("major_faults", "int", "count", "major page faults of memcached-ac in the run", DRIVER),
    _c("minor_faults", "int", "count", "minor page faults of memcached-ac in the run", DRIVER),
    _c("vol_ctx_switches", "int", "count", "voluntary context switches in the run", DRIVER),
    _c("invol_ctx_switches", "int", "count", "involuntary context switches in the run", DRIVER),
    _c("io_read_bytes", "int", "bytes", "bytes memcached-ac caused to be read from storage (/proc/PID/io read_bytes)", DRIVER),
    _c("io_write_bytes", "int", "bytes", "bytes it caused to be written (/proc/PID/io write_bytes)", DRIVER),
    _c("swap_ins", "int", "count", "pages swapped in, machine-wide (/proc/vmstat pswpin)", DRIVER),
    _c("swap_outs", "int", "count", "pages swapped out, machine-wide (/proc/vmstat pswpout)", DRIVER),
    _c("disk_read_ios", "int", "count", "reads completed by the spill device", DRIVER),
    _c("disk_write_ios", "int", "count", "writes completed by the spill device", DRIVER),
    _c("disk_read_bytes", "int", "bytes", "bytes the spill device read", DRIVER),
    _c("disk_write_bytes", "int", "bytes", "bytes the spill device wrote", DRIVER),
    _c("cpu_us_per_op", "float", "us", "(cpu_user_s + cpu_sys_s) / operations", HARNESS),
    _c("disk_reads_per_op", "float", "ratio", "disk_read_ios / operations", HARNESS),
    _c("disk_read_time_us", "int", "us", "time the spill device spent on reads in the run window (diskstats field 4, "
       "counted in ms, summed over reads in flight)", DRIVER),
    _c("disk_read_ops_s", "float", "ops/s", "disk_read_ios / run_duration_s: the device's read requests per second "
       "(Fig 4's I/O request rate)", HARNESS),
    _c("disk_read_latency_us", "float", "us", "disk_read_time_us / disk_read_ios: the mean latency of the device's "
       "reads in the run (Fig 4's average read latency; none without reads)", HARNESS),
    _c("disk_read_bytes_per_op", "float", "bytes", "disk_read_bytes / operations", HARNESS),
    _c("major_faults_per_op", "float", "ratio", "major_faults / operations", HARNESS),
    _c("request_major_faults", "int", "count", "major faults of the run taken inside a request (paging tiers count "
       "them: the server's read_major_faults + write_major_faults over the run; writes in-process only)", HARNESS),
    _c("unattributed_major_faults", "int", "count", "major_faults − request_major_faults: faults no request "
       "asked for (memcached's LRU crawler or maintainer, a classifier thread; network mode: writes too)", HARNESS),
    _c("ctx_switches_per_op", "float", "ratio", "(vol + invol context switches) / operations", HARNESS),
    _c("read_amplification", "float", "ratio", "bytes the device read per byte of record or block the core asked "
       "the tier for", HARNESS),
    _c("spill_reads", "int", "count", "spill-file reads the I/O engine completed in the run (every tier's: records, "
       "blocks, uvmm's pages; 0 for the kernel-paged approaches, which read through page faults)", HARNESS),
    _c("spill_read_us_p50", "float", "us", "median latency of those reads, submission to completion (the lower bound "
       "of its 1/8-octave bucket; Fig 4's I/O latency)", HARNESS),
    _c("spill_read_us_p99", "float", "us", "99th percentile of the same (nearest rank, as lat_*_p99)", HARNESS),
    _c("resident_items_avg", "float", "items", "R: items in RAM over the run (in-process: the time average of "
       "resident_samples samples; network: the mean of its start and end; paging approaches: "
       "resident_bytes_avg / item_footprint)", HARNESS),
    _c("resident_samples", "int", "count", "samples of what the server held in RAM through the run (in-process driver)",
       DRIVER),
    _c("resident_bytes_avg", "float", "bytes", "paging approaches: resident bytes of the slab mapping over the run "
       "(mincore)", DRIVER),
]
for _op in ("read", "update"):
    for _q, _what in (("mean", "mean"), ("p50", "median"), ("p99", "99th percentile")):
        _RUN.append(_c(f"lat_{_op}_{_q}_us", "float", "us", f"{_what} latency of a {_op} in the run", DRIVER))

# the server's stats anticache (policies/README.md documents each)
_AC = [
    ("mem_hits", "int", "requests", "accesses served from RAM (whole server life)"),
    ("disk_hits", "int", "requests", "accesses that needed a read from the spill store (whole life)"),
    ("misses", "int", "requests", "memcached's get_misses + touch_misses (whole life)"),
    ("spilled_items", "int", "items", "items written to the cold tier"),
    ("lost_items", "int", "items", "items dropped (memcached's evictions): 0 under anti-caching; the stock cache's drops"),
    ("metadata_bytes", "int", "bytes", "book-keeping charged against -m now (policy tracking included)"),
    ("item_memory_limit", "int", "bytes", "what the slab allocator gets of -m now"),
    ("resident_items", "int", "items", "items in RAM now (memcached's curr_items counts these only)"),
    ("stub_items", "int", "items", "items spilled now (records in the cold tier)"),
    ("fetched_items", "int", "items", "spilled items brought back into RAM"),
    ("bytes_written", "int", "bytes", "bytes the tier wrote"),
    ("record_reads", "int", "count", "records read from the tier"),
    ("block_reads", "int", "count", "whole blocks read (block merges, compaction)"),
    ("io_errors", "int", "count", "spill-file reads or writes that failed"),
    ("checksum_errors", "int", "count", "records that failed their checksum"),
    ("read_major_faults", "int", "count", "paging tiers: major faults taken inside read windows"),
    ("write_major_faults", "int", "count", "paging tiers: major faults inside the in-process driver's stores"),
    ("slab_resident_bytes", "int", "bytes", "paging tiers: bytes of the slab mapping resident in RAM (mincore)"),
    ("major_faults", "int", "count", "major faults of the process (RUSAGE_SELF)"),
    ("refused_items", "int", "count", "allocations refused (sum of refused_*)"),
    ("refused_disk_full", "int", "count", "refused: the spill file system was full"),
    ("refused_io_error", "int", "count", "refused: a spill write failed"),
    ("refused_table_full", "int", "count", "refused: the evicted table could take no more"),
    ("refused_timeout", "int", "count", "refused: nothing to spill or borrow within ac_alloc_wait"),
    ("refused_nomem", "int", "count", "refused: no memory for a spill's record buffer"),
    ("pages_borrowed", "int", "count", "slab pages taken past the limit while being repaid"),
    ("spill_lock_waits", "int", "count", "takers of the spill lock that found it held (one spill round at a time)"),
    ("spill_lock_wait_ns", "int", "ns", "their total wait for it"),
    ("spilled_bytes", "int", "bytes", "bytes of items spilled"),
    ("fetched_bytes", "int", "bytes", "bytes of items fetched back"),
    ("read_through_items", "int", "items", "reads served from a record without bringing it in (logging)"),
    ("migrate_reads_saved", "int", "count", "migrations that reused their first read"),
    ("write_queue", "int", "count", "ac_write_queue: blocks a writer thread may hold"),
    ("write_timeouts", "int", "count", "flushes that waited ac_alloc_wait for the writer and failed"),
    ("policy", "str", "", "the policy in use"),
    ("tier", "str", "", "the cold tier in use"),
    ("merge", "str", "", "blocks tier: tuple or block merge"),
    ("evicted_table_bytes", "int", "bytes", "blocks tier: the evicted table's memory now"),
    ("block_size", "int", "bytes", "blocks tier: bytes per block"),
    ("bloom_bytes", "int", "bytes", "tuples tier: its Bloom filters' memory"),
    ("log_ring_bytes", "int", "bytes", "logging, effpaging: the access-log rings' memory"),
    ("vma_granule_bytes", "int", "bytes", "vma: bytes protected and tracked as one"),
    ("compression", "str", "", "codec of spilled values: none, lz4, zstd"),
    ("compress_in_bytes", "int", "bytes", "value bytes offered to the codec"),
    ("compress_out_bytes", "int", "bytes", "value bytes as stored"),
    ("compress_skipped", "int", "count", "values stored as they were (would not shrink)"),
    ("record_read_bytes", "int", "bytes", "bytes of records the core asked the tier for"),
    ("block_read_bytes", "int", "bytes", "bytes of whole blocks the core asked the tier for"),
    ("io_engine", "str", "", "the spill files' I/O engine in use (sync, threads, aio, uring)"),
    ("io_direct", "str", "", "O_DIRECT record reads asked for: on or off"),
    ("io_direct_files", "int", "count", "spill files read with O_DIRECT"),
    ("io_reads", "int", "count", "reads through the I/O engine"),
    ("io_read_bytes", "int", "bytes", "bytes read through the I/O engine"),
    ("driver_depth", "int", "count", "in-process driver: requests each thread kept in flight"),
    ("prefetch_reads", "int", "count", "reads sent ahead by the in-process driver"),
    ("prefetch_used", "int", "count", "reads sent ahead that served a fetch"),
    ("prefetch_unused", "int", "count", "reads sent ahead whose key was in RAM or gone"),
    ("migrate_prefetch_reads", "int", "count", "a migration's reads sent ahead"),
    ("migrate_prefetch_used", "int", "count", "a migration's reads sent ahead that it used"),
    ("merged_blocks", "int", "count", "blocks merged whole back into RAM"),
    ("merged_items", "int", "items", "items brought back by block merges"),
    ("compact", "str", "", "blocks tier: lazy compaction by merge or copy"),
    ("copied_blocks", "int", "count", "blocks whose live records lazy compaction copied on disk"),
    ("copied_items", "int", "items", "records copied"),
    ("copied_bytes", "int", "bytes", "bytes of records copied"),
    ("compact_thread", "str", "", "lazy compaction in a compactor thread: on or off"),
    ("compact_queued", "int", "count", "claims handed to the compactor thread"),
    ("lru_crawler", "str", "", "memcached's LRU crawler: on or off (off for the kernel-paged approaches)"),
    ("lru_maintainer", "str", "", "memcached's LRU maintainer (and segmented LRU): on or off"),
    ("lru_crawler_starts", "int", "count", "crawls memcached's LRU crawler started (whole life)"),
    ("lru_crawler_items_checked", "int", "items", "items the LRU crawler walked (whole life)"),
    ("lru_maintainer_juggles", "int", "count", "LRU maintainer passes (whole life)"),
    ("log_rounds", "int", "count", "logging, effpaging, emt's colours: classification rounds (whole life)"),
    ("log_drops", "int", "count", "logging, effpaging, emt's colours: access-log entries dropped (a full ring)"),
    ("log_waits", "int", "count", "logging (ac_log_offline=1): warm-up accesses whose worker waited for room in a "
                                  "full log ring (a lossless log)"),
    ("log_wait_ns", "int", "ns", "logging (ac_log_offline=1): the time those workers waited, in all"),
    ("log_offline_rounds", "int", "count", "logging (ac_log_offline=1): offline rounds (the warm-up's history "
                                           "classified before the run; 1)"),
    ("log_offline_ns", "int", "ns", "logging (ac_log_offline=1): the offline round's time (drain, classify, migrate), "
                                    "before the measured run"),
    ("eff_memory", "int", "bytes", "effpaging: memory it locked (hot region + classifier)"),
    ("eff_hot_bytes", "int", "bytes", "effpaging: its hot region"),
    ("eff_promoted", "int", "items", "effpaging: items moved into the hot region"),
    ("eff_demoted", "int", "items", "effpaging: items moved out of the hot region"),
    ("eff_hot_first_moves", "int", "count", "effpaging: hot items relinked ahead of a cold one in a hash chain"),
    ("lru_batch", "int", "count", "lru: accesses a worker buffers before it applies them (ac_lru_batch; 0: strict)"),
    ("lru_batches", "int", "count", "lru: buffers applied (whole life)"),
    ("lru_batched", "int", "count", "lru: buffered accesses applied or skipped (whole life)"),
    ("lru_batch_skipped", "int", "count", "lru: buffered accesses skipped: the item was gone, or its page epoch"),
    ("uvmm_evict", "str", "", "uvmm: its eviction strategy (clock, hints, fifo, random, lru)"),
    ("uvmm_compress", "str", "", "uvmm: the codec of pages written (none, lz4, zstd)"),
    ("uvmm_cap_pages", "int", "pages", "uvmm: resident pages allowed at the end (ac_uvmm_memory, or what the cgroup allows)"),
    ("uvmm_resident_pages", "int", "pages", "uvmm: pages of the region resident at the end"),
    ("uvmm_book_bytes", "int", "bytes", "uvmm: its page table (8 bytes a page; fifo's ring or lru's stamps add 4, read-ahead marks 1)"),
    ("uvmm_fetches", "int", "count", "uvmm: pages read back from the page file (whole life)"),
    ("uvmm_fetches_unattributed", "int", "count", "uvmm: fetches for threads that never asked (memcached's own)"),
    ("uvmm_zero_fills", "int", "count", "uvmm: first touches served with zeros"),
    ("uvmm_wp_faults", "int", "count", "uvmm: first writes to clean pages (ac_uvmm_clean=1)"),
    ("uvmm_waits_for_room", "int", "count", "uvmm: faults that waited for the evictor (the region at its cap)"),
    ("uvmm_evictions", "int", "count", "uvmm: pages dropped (whole life)"),
    ("uvmm_evictions_clean", "int", "count", "uvmm: pages dropped without a write (their copy on disk was valid)"),
    ("uvmm_bytes_written", "int", "bytes", "uvmm: bytes written to the page file (compressed, padded to the I/O unit)"),
    ("uvmm_page_bytes_written", "int", "bytes", "uvmm: bytes of the pages written, before compression"),
    ("uvmm_bytes_read", "int", "bytes", "uvmm: bytes read from the page file"),
    ("uvmm_fetch_ns_p50", "int", "ns", "uvmm: median time to serve a fetch (read, check, place; 1/8-octave buckets)"),
    ("uvmm_fetch_ns_p99", "int", "ns", "uvmm: 99th percentile of the same"),
    ("uvmm_readahead_max", "int", "pages", "uvmm/emt: the largest read-ahead window (0: none)"),
    ("uvmm_readahead_faults", "int", "count", "uvmm/emt: fetches followed by a read-ahead (whole life)"),
    ("uvmm_readahead_pages", "int", "pages", "uvmm/emt: pages read ahead of any access"),
    ("uvmm_readahead_used", "int", "pages", "uvmm/emt: of those, touched before their eviction"),
    ("uvmm_readahead_wasted", "int", "pages", "uvmm/emt: of those, evicted untouched"),
    ("uvmm_pinned_pages", "int", "pages", "emt: pages pinned at the end (ac_emt_colours=1: the classifier's hot set)"),
    ("uvmm_pin_skips", "int", "count", "emt: pinned pages the evictor passed over (whole life)"),
    ("uvmm_pin_overrides", "int", "count", "emt: pinned pages written out because no other page could go"),
    ("log_hot_keys", "int", "count", "logging, effpaging: keys in the last hot set; emt's colours: pages"),
    ("nvm_region_bytes", "int", "bytes", "nvm: the NVM region (index and records; off the cell's cgroup)"),
    ("nvm_index_slots", "int", "count", "nvm: slots of its hash index (in the region)"),
    ("nvm_records", "int", "items", "nvm: records in the region now"),
    ("nvm_live_bytes", "int", "bytes", "nvm: their bytes"),
    ("nvm_chunk_bytes", "int", "bytes", "nvm: the chunks they occupy (size classes 1.25x apart)"),
    ("nvm_carved_bytes", "int", "bytes", "nvm: record area handed out to the size classes so far"),
    ("nvm_full", "int", "count", "nvm: puts refused, the region or its index full"),
    ("nvm_gets", "int", "count", "nvm: records read (whole life)"),
    ("nvm_puts", "int", "count", "nvm: records written (whole life)"),
    ("nvm_drops", "int", "count", "nvm: records removed (whole life)"),
    ("nvm_lines_read", "int", "count", "nvm: cache lines of the region read (whole life)"),
    ("nvm_lines_written", "int", "count", "nvm: cache lines of the region written (whole life)"),
    ("nvm_dram_ns", "float", "ns", "nvm: DRAM's latency per line the emulation starts from (measured at start)"),
    ("nvm_dram_ns_source", "str", "", "nvm: measured, given or assumed"),
    ("nvm_accesses", "int", "count", "nvm: accesses to the region, each a run of contiguous lines (whole life)"),
    ("nvm_charge", "str", "", "nvm: what pays the extra latency: access (each run of lines) or line"),
    ("nvm_extra_ns", "int", "ns", "nvm: latency added per access (or line): NVM's minus DRAM's"),
    ("nvm_delay_ns", "int", "ns", "nvm: the emulated latency waited in all (whole life)"),
    ("remote_servers", "int", "count", "remote: servers holding the spilled records"),
    ("remote_copies", "int", "count", "remote: copies of each record (on different servers)"),
    ("remote_sets", "int", "count", "remote: records stored on a server (whole life; a record counts once per copy)"),
    ("remote_gets", "int", "count", "remote: records read from a server (whole life)"),
    ("remote_deletes", "int", "count", "remote: records deleted on a server (whole life)"),
    ("remote_bytes_sent", "int", "bytes", "remote: record bytes sent (whole life)"),
    ("remote_bytes_received", "int", "bytes", "remote: record bytes received (whole life)"),
    ("remote_failures", "int", "count", "remote: requests that failed (refused, timed out, closed, garbage)"),
    ("remote_garbage", "int", "count", "remote: replies outside memcached's protocol"),
    ("remote_skipped", "int", "count", "remote: requests not sent, their server having failed less than ac_remote_retry ago"),
    ("remote_degraded_puts", "int", "count", "remote: records stored on fewer servers than their copies"),
    ("remote_read_fallbacks", "int", "count", "remote: reads that went on to another copy"),
    ("remote_bad_records", "int", "count", "remote: values that were not the record (length or checksum)"),
    ("remote_missing", "int", "count", "remote: copies not found on their server (evicted or lost with it)"),
    ("remote_unreadable", "int", "count", "remote: reads no copy answered (an error to the client)"),
    ("ext_lost_ram", "int", "items", "extstore: items and headers evicted from RAM (memcached's evictions; whole life)"),
    ("ext_lost_disk", "int", "items", "extstore: live objects in disk pages it reclaimed (extstore_objects_evicted)"),
    ("ext_lost_compact", "int", "items", "extstore: objects compaction could not move (extstore_compact_lost)"),
    ("ext_reads", "int", "count", "extstore: gets that went to its file (get_extstore; whole life)"),
    ("ext_read_misses", "int", "count", "extstore: of those, misses: page gone or checksum failed (miss_from_extstore)"),
    ("ext_read_aborts", "int", "count", "extstore: reads aborted before they were issued (get_aborted_extstore)"),
    ("ext_read_oom", "int", "count", "extstore: reads refused for want of a buffer (get_oom_extstore)"),
    ("ext_recached", "int", "count", "extstore: values read back into RAM (recache_from_extstore)"),
    ("ext_objects_written", "int", "count", "extstore: objects flushed to its file (whole life)"),
    ("ext_bytes_written", "int", "bytes", "extstore: bytes flushed to its file (whole life)"),
    ("ext_bytes_read", "int", "bytes", "extstore: bytes read from its file (whole life)"),
    ("ext_bytes_used", "int", "bytes", "extstore: bytes of live objects in its file at the end"),
    ("ext_bytes_fragmented", "int", "bytes", "extstore: dead bytes in its used pages at the end"),
    ("ext_page_evictions", "int", "count", "extstore: pages reclaimed with live objects in them"),
    ("ext_pages", "int", "count", "extstore: pages of its file"),
]
_AC_COLUMNS = [_c(f"ac_{n}", t, u, m, f"{SERVER} {n}") for n, t, u, m in _AC]

_CELLWIDE = [
    _c("cell_cpu_user_s", "float", "s", "user CPU of memcached-ac over the whole cell (wait4)", PROC),
    _c("cell_cpu_sys_s", "float", "s", "system CPU over the whole cell (wait4)", PROC),
    _c("cell_major_faults", "int", "count", "major faults over the whole cell (wait4)", PROC),
    _c("cell_minor_faults", "int", "count", "minor faults over the whole cell (wait4)", PROC),
    _c("cell_vol_ctx_switches", "int", "count", "voluntary context switches over the whole cell", PROC),
    _c("cell_invol_ctx_switches", "int", "count", "involuntary context switches over the whole cell", PROC),
    _c("cell_block_read_bytes", "int", "bytes", "block input over the whole cell (wait4 ru_inblock × 512)", PROC),
    _c("cell_block_write_bytes", "int", "bytes", "block output over the whole cell (wait4 ru_oublock × 512)", PROC),
    _c("cell_disk_read_ios", "int", "count", "reads the spill device completed over the whole cell", DISK),
    _c("cell_disk_read_bytes", "int", "bytes", "bytes it read over the whole cell", DISK),
    _c("cell_disk_read_latency_mean_us", "float", "us", "its mean read latency over the whole cell", DISK),
    _c("cell_disk_write_ios", "int", "count", "writes it completed over the whole cell", DISK),
    _c("cell_disk_write_bytes", "int", "bytes", "bytes it wrote over the whole cell", DISK),
    _c("cell_wall_s", "float", "s", "wall time of the whole cell (cgroup set-up to clean-up); repetition_mode windows: "
       "the row's share of its process's (a later window's row its run, the first window's row the rest)", HARNESS),
    _c("repetition_mode", "str", "", "separate (a process per repetition) or windows (one process for a cell's "
       "repetitions: one load and warm-up, then one measured run window per repetition; [run] repetition_mode). "
       "With windows the whole-cell columns (cell_*, cg_*, proc_*, other_cpu_*) are the shared process's", HARNESS),
    _c("run_window", "int", "count", "repetition_mode windows: which measured window of its process the row is "
       "(0: the one right after the warm-up)", HARNESS),
    _c("window_of", "str", "", "repetition_mode windows: the cell_id whose process measured the row (its "
       "directory holds the process's files)", HARNESS),
    _c("process_wall_s", "float", "s", "repetition_mode windows: wall time of the whole process that measured the "
       "row's windows", HARNESS),
    _c("machine_busy_cpu_s", "float", "s", "CPU time the whole machine spent busy over the cell (/proc/stat)", HARNESS),
    _c("other_cpu_s", "float", "s", "of that, what was not the cell's (the harness and the processes it waited for: "
       "server, perf, ycsb-mc): other work beside the cell", HARNESS),
    _c("other_cpu_share", "float", "ratio", "other_cpu_s over the machine's capacity during the cell "
       "(wall × cores): near 0 on an idle machine", HARNESS),
    _c("loadavg_start", "float", "", "1-minute load average when the cell started", HARNESS),
    _c("loadavg_end", "float", "", "1-minute load average when it ended", HARNESS),
    _c("wait4_maxrss_bytes", "int", "bytes", "peak RSS of the process tree wait4 reaped", PROC),
    _c("peak_rss_bytes", "int", "bytes", "memcached-ac's VmHWM (last sample)", PROC),
    _c("proc_utime_s", "float", "s", "memcached-ac's user time (last /proc/PID/stat sample)", PROC),
    _c("proc_stime_s", "float", "s", "its system time (last sample)", PROC),
    _c("proc_read_bytes", "int", "bytes", "its /proc/PID/io read_bytes (last sample)", PROC),
    _c("proc_write_bytes", "int", "bytes", "its /proc/PID/io write_bytes (last sample)", PROC),
    _c("proc_syscr", "int", "count", "its read system calls (last sample)", PROC),
    _c("proc_syscw", "int", "count", "its write system calls (last sample)", PROC),
    _c("perf_task_clock_s", "float", "s", "CPU time perf counted for the cell's server (software event)", PERF),
    _c("perf_page_faults", "int", "count", "page faults perf counted", PERF),
    _c("perf_major_faults", "int", "count", "major faults perf counted", PERF),
    _c("perf_context_switches", "int", "count", "context switches perf counted", PERF),
    _c("cg_peak_bytes", "int", "bytes", "the cgroup's peak usage (non-reclaimable part, sampled)", CG),
    _c("cg_limit_hits", "int", "count", "times the cgroup hit its limit (v1 failcnt, v2 max events)", CG),
    _c("cg_oom_kills", "int", "count", "processes the cgroup's OOM killer killed", CG),
    _c("cg_pgmajfault", "int", "count", "major faults charged to the cgroup (memory.stat)", CG),
    _c("cg_pgfault", "int", "count", "page faults charged to the cgroup (memory.stat)", CG),
    _c("cg_usage_max_bytes", "int", "bytes", "the cgroup's peak usage with page cache (max_usage / peak)", CG),
    _c("cg_swap_max_bytes", "int", "bytes", "the cgroup's peak swap usage", CG),
    _c("cg_io_read_ios", "int", "count", "regime hdd: reads the cell's processes submitted to the limited disk "
       "(blkio.throttle.io_serviced, v2 io.stat)", CG),
    _c("cg_io_write_ios", "int", "count", "regime hdd: writes they submitted to it", CG),
]
_OPT = [
    _c("opt_requests", "int", "requests", "reads OPT scored (the run's reads)", OPT),
    _c("opt_scored_writes", "int", "requests", "writes of the run (placed in memory, not scored)", OPT),
    _c("opt_hits", "int", "requests", "Belady's OPT (bypass) hits at opt_capacity", OPT),
    _c("opt_hit_rate", "float", "fraction", "opt_hits / opt_requests", OPT),
    _c("opt_demand_hit_rate", "float", "fraction", "OPT with demand fetching (every miss enters)", OPT),
    _c("lru_ref_hit_rate", "float", "fraction", "exact LRU at opt_capacity on the same history", OPT),
    _c("opt_bytes_capacity", "int", "bytes", "[fixed] trace with varying sizes: opt_capacity × the mean object "
       "size, the capacity of the size-aware bounds", OPT),
    _c("opt_pfoo_l_hit_rate", "float", "fraction", "[fixed] trace with varying sizes: PFOO-L at opt_bytes_capacity, "
       "an upper bound on OPT's hit rate", OPT),
    _c("opt_size_belady_hit_rate", "float", "fraction", "[fixed] trace with varying sizes: size-aware Belady at "
       "opt_bytes_capacity, a feasible policy (a lower bound on OPT's)", OPT),
    _c("skew_top1_share", "float", "fraction", "share of the run's requests that went to the top 1 % of keys", OPT),
    _c("skew_top10_share", "float", "fraction", "share that went to the top 10 % of keys", OPT),
    _c("skew_fitted_theta", "float", "", "Zipf θ fitted to the run's key frequencies", OPT),
    _c("skew_requests", "int", "requests", "requests the skew was measured over", OPT),
    _c("skew_distinct_keys", "int", "items", "distinct keys requested in the run", OPT),
    _c("lru_c_hit_rate", "float", "fraction", "LRU(C): exact LRU at the OPT capacity", DECOMP),
    _c("lru_r_hit_rate", "float", "fraction", "LRU(R): exact LRU at the items the approach held", DECOMP),
    _c("loss_lru_pp", "float", "pp", "OPT(C) − LRU(C): what exact LRU loses", DECOMP),
    _c("loss_overhead_pp", "float", "pp", "LRU(C) − LRU(R): what memory overhead costs", DECOMP),
    _c("loss_policy_pp", "float", "pp", "LRU(R) − hit_rate: what the policy's choices cost", DECOMP),
]
_MACHINE = [
    _c("git_revision", "str", "", "git describe of the checkout (-dirty: uncommitted changes to tracked files outside experiments/results/, the published rows)", MACHINE),
    _c("binary_sha256", "str", "", "first 16 hex digits of memcached-ac's SHA-256", MACHINE),
    _c("kernel", "str", "", "uname -r", MACHINE),
    _c("cpu_model", "str", "", "the CPU's model name", MACHINE),
    _c("cpus", "int", "count", "online CPUs", MACHINE),
    _c("host", "str", "", "the host the cell ran on (its name; acbench run --cluster places cells on several)",
       MACHINE),
    _c("disk_iops", "float", "IOPS", "the host's random 4 KiB O_DIRECT reads per second in /var/tmp, one thread "
       "(diskprobe.py: check-env's probe, measured once per boot)", MACHINE),
    _c("cgroup_version", "int", "", "1 or 2: the memory controller the cell ran under", CG),
    _c("date", "datetime", "", "when the row was written (UTC)", HARNESS),
]
_PROPS = [_c(f"p_{k}", t, u, f"YCSB property {k} given to the driver", SPEC) for k, (t, u) in PROPERTY_TYPES.items()]

SCHEMA: dict[str, Column] = {c.name: c for c in _CELL + _PROPS + _PLAN + _RUN + _AC_COLUMNS + _CELLWIDE + _OPT + _MACHINE}

# run-level facts that are the same in every row of a run: kept in run.json, not in the rows
RUN_LEVEL = ("harness_version", "perf_used", "trace")
# names of older rows -> (name now, factor from the old unit to the new)
RENAMED: dict[str, tuple[str, float]] = {
    "item_memory_mb": ("item_memory_bytes", float(1 << 20)),
    "cell_disk_avg_read_latency_ms": ("cell_disk_read_latency_mean_us", 1000.0),
    "perf_task_clock": ("perf_task_clock_s", 0.001),
    "wall_s": ("cell_wall_s", 1.0),
}


class SchemaError(ValueError):
    pass


def unknown(names: Iterable[str]) -> list[str]:
    return [n for n in names if n not in SCHEMA]


def upgrade(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of an older acbench in today's names and units; run-level columns dropped."""
    out = df.drop(columns=[c for c in RUN_LEVEL if c in df.columns])
    renamed = {new: pd.to_numeric(out[old], errors="coerce") * factor for old, (new, factor) in RENAMED.items()
               if old in out.columns and new not in out.columns}
    out = out.drop(columns=[old for old in RENAMED if old in out.columns])
    return pd.concat([out, pd.DataFrame(renamed, index=out.index)], axis=1) if renamed else out


def typed(df: pd.DataFrame, strict: bool = True) -> pd.DataFrame:
    """df with every column in its schema type, in schema order (strict: an unknown column raises;
    else it is kept at the end as it is)."""
    extra = unknown(df.columns)
    if extra and strict:
        raise SchemaError(f"column(s) {', '.join(extra)} not in the column dictionary (acbench/columns.py): "
                          "add them there with type, unit, meaning and source")
    cols = {name: _as(df[name], SCHEMA[name].type, name) for name in SCHEMA if name in df.columns}
    cols.update({name: df[name] for name in extra})
    return pd.DataFrame(cols, index=df.index)


def _as(s: pd.Series, type_: str, name: str) -> pd.Series:
    try:
        if type_ == "datetime":
            return pd.to_datetime(s, utc=True, format="ISO8601").dt.as_unit("us")
        if type_ == "int":
            v = pd.to_numeric(s, errors="raise")
            return v.round().astype("Int64") if v.dtype.kind == "f" else v.astype("Int64")
        if type_ == "float":
            return pd.to_numeric(s, errors="raise").astype("float64")
        if type_ == "bool":
            if s.dtype == object or pd.api.types.is_string_dtype(s):
                s = s.map(lambda x: x if not isinstance(x, str) else {"true": True, "false": False}[x.strip().lower()])
            return s.astype("boolean")
        return s.astype("string")
    except (ValueError, TypeError, KeyError) as e:
        raise SchemaError(f"column {name}: values are not {type_} ({e})") from None


def markdown() -> str:
    lines = ["| column | type | unit | meaning | source |", "|---|---|---|---|---|"]
    for c in SCHEMA.values():
        lines.append(f"| `{c.name}` | {c.type} | {c.unit} | {c.meaning} | {c.source} |")
    return "\n".join(lines) + "\n"


def as_records() -> list[dict[str, Any]]:
    return [{"name": c.name, "type": c.type, "unit": c.unit, "meaning": c.meaning, "source": c.source}
            for c in SCHEMA.values()]
