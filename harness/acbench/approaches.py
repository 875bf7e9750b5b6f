"""The approaches a spec may name: approach -> how memcached-ac runs it.

Adding an approach is one entry in APPROACHES. `options` are extra `-o` settings
(ac_* or upstream); `pages` says the kernel pages for it (-m covers the data, the runner sets
vm.page-cluster=0); `swap` that its cgroup gets a swap area (a file-backed mapping needs none), `swap_device` which
one: a swap file or a zram device (compressed swap in RAM); `pressure` that a PSI-driven controller
squeezes its cgroup through the cell (TMO's Senpai, pressure.py);
`spills` says items move to the spill directory; `driver` holds driver properties the
approach needs (`lookaside=true`: the client stores an item after a read miss, as a cache's users
do); `resident` how R of the loss decomposition is measured (acbench/decompose.py): "items" =
the items the server held in RAM, "pages" = the resident bytes of its slab mapping (mincore,
sampled through the run) / the item footprint (the kernel pages: RAM holds pages, not items);
`deterministic` that with one driver thread its counts repeat exactly (no thread whose timing
matters: alru's clock, logging's classifier, memcached's LRU maintainer, the kernel's reclaim),
so the CI baseline checks them exactly; `fills_limit` that its item pages take whatever the
cgroup limit leaves (ospaging, ospaging-file, effpaging's cold region), so its allowance is the
calibrated overhead alone, without safety factor or floor (slack would be item memory beyond
OPT's budget); `figures` that it is one of the paper's approaches (not a component pair of
experiments/components.toml), which the figure specs run; `in_process_only` that it cannot run
in network mode (refused before any cell starts), `network_only` that it cannot run in-process; `extstore`
that memcached's own extstore keeps its cold items, in a file of the cell's spill directory (extstore.py); `offline_classifier` that what it needs beyond stock memcached (its classifier, for
logging-buffer) is granted beside the cell's common limit, as the paper's Table II charges Siberia
(provisioning "equal", calibrate.equal_for; column offline_bytes); `ram_device` that the RAM device of
`[run] spill_device = "ram"` may stand in for the disk in its hit-rate runs (default: the approach is
`deterministic`); `windows` that its repetitions may be measured as windows of one process (`[run]
repetition_mode = "windows"`; default: the approach is `deterministic`; `in_windows`); `device_latency` that this RAM device stands for an NVM block device of that line latency
("2x", "8x": times DRAM's; "300ns"), its bandwidth limited for the cell's processes (nvm.py:
64 bytes per line latency), set as a variant, NAME{device_latency=8x}. Not for an approach whose hit rate depends on how many requests a second it
serves: alru's 22-bit clock of 1 µs wraps every 4.2 s, alru-redis ages in whole seconds, logging
classifies in rounds of its own thread, the kernel reclaims at its own pace. Measured at 1M
records, θ 0.99 and 0.5, M/D 1/2 (experiments/README.md "Fast device"): lru, alru-hstore and
memcached within 0.004 pp of the disk; alru +0.48 pp, logging -3.7 pp at θ 0.5, ospaging +0.9,
ospaging-file +1.3 pp. Their cells run on the disk in such a grid.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from acbench import components


@dataclass(frozen=True)
class Approach:
    name: str
    policy: str                      # ac_policy=
    options: dict[str, str] = field(default_factory=dict)
    pages: bool = False              # kernel paging: -m covers the data, page-cluster 0
    swap: bool = False               # the cell gets a swap file and swap in its cgroup
    spills: bool = True              # user-space anti-caching: items spilled, never dropped
    driver: dict[str, str] = field(default_factory=dict)   # driver properties (-p) of the approach
    resident: str = "items"          # R of the decomposition: "items" or "pages" (resident bytes / footprint)
    deterministic: bool = False      # with one driver thread its counts repeat exactly (no timing-dependent thread)
    fills_limit: bool = False        # item pages take whatever the cgroup limit leaves: allowance without slack
    figures: bool = True             # one of the paper's approaches (its figure specs run every one of these)
    in_process_only: bool = False    # refused in network mode (policy vma: a socket would see EFAULT)
    ram_device: bool | None = None   # its hit rate does not depend on the device's speed (None: = deterministic)
    # its repetitions may be measured as windows of one process ([run] repetition_mode = "windows"): more
    # requests before a window do not move what it measures (None: = deterministic)
    windows: bool | None = None
    flags: tuple[str, ...] = ()      # bare -o flags of memcached's own (PAGING_FLAGS)
    # its classifier's memory is not charged to the cell (Siberia classifies offline: calibrate.equal_for)
    offline_classifier: bool = False
    swap_device: str = "file"        # with swap: a swap file, or "zram" (compressed swap in RAM, paging.py)
    network_only: bool = False       # refused in in-process mode (extstore: its reads finish on IO threads)
    extstore: bool = False           # memcached's extstore on a file in the cell's spill directory (extstore.py)
    pressure: bool = False           # a PSI-driven controller squeezes its cgroup (TMO's Senpai: pressure.py)
    device_latency: str = ""         # the RAM device stands for NVM of this line latency (nvm.py): "2x", "8x", "300ns"
    about: str = ""


# memcached's background walkers off for the kernel-paged approaches: its LRU maintainer (which also
# turns segmented LRU off: one flat LRU per class, bumped at most once a minute per item) and its LRU
# crawler. Both walk items the kernel may have swapped out and fault them in for no request; this is
# memcached as the paper ran it (1.4: a flat LRU, no crawler). The rows count what is left
# (unattributed_major_faults) and the walkers' own counters (ac_lru_crawler_starts, ac_lru_maintainer_juggles).
PAGING_FLAGS = ("no_lru_crawler", "no_lru_maintainer")
# effpaging keeps the maintainer (segmented LRU): with it off, its write-heavy CI cell (20k records,
# M/D 1/2) was OOM-killed in 5 of 12 runs (0 of 12 with it on); its passes and their faults are in
# the rows (ac_lru_maintainer_juggles, unattributed_major_faults: 9-29 faults of ~5,300 per run there)
EFFPAGING_FLAGS = ("no_lru_crawler",)


APPROACHES: dict[str, Approach] = {a.name: a for a in (
    Approach("memcached", "none", spills=False, driver={"lookaside": "true"}, ram_device=True,
             about="stock memcached as a look-aside cache: items are dropped when memory is full and the"
                   " client stores an item again after a read miss (baseline)"),
    Approach("memcached-static", "none", spills=False,
             about="stock memcached without refills: a dropped item stays missing for the run (a static set,"
                   " hit rate about M/D at any skew)"),
    Approach("lru", "lru", deterministic=True, about="H-Store anti-caching with an exact LRU"),
    Approach("alru-hstore", "lru", {"ac_lru_sample": "100"}, deterministic=True,
             about="H-Store aLRU: the LRU order is updated on 1 in 100 accesses"),
    Approach("alru", "alru", {"ac_alru_bits": "22", "ac_alru_resolution": "1us", "ac_alru_samples": "5"},
             about="Redis approximate LRU as the paper ran it: 22-bit clock of 1 us, 5 samples, pool of 16"),
    Approach("alru-redis", "alru", {"ac_alru_bits": "24", "ac_alru_resolution": "1s", "ac_alru_samples": "5"},
             about="Redis approximate LRU with Redis's defaults: 24-bit clock of 1 s, 5 samples, pool of 16"),
    Approach("logging", "logging",
             about="Siberia: sampled access log, exponential smoothing, hot set per round, tuple-level cold store"),
    # the paper's accounting of Siberia (Table II charges only its log buffer: Siberia classifies
    # offline): the estimate table lives beside -m and, with provisioning equal, beside the cell's
    # limit too (offline_classifier); the figure specs run it beside logging (everything charged).
    # Its hot set takes 0.9 of the item memory. Fill 1 (the hot set fills it) held more of OPT's
    # capacity at 200k records (experiments/results/logging-fill: 0.93-0.97 against 0.84-0.93) and won
    # 2.6-7.3 pp at θ 0.25 at the paper's scale, but there at θ 0.99 it lost 6.4 pp at M/D 3/4 and
    # 19 pp at 1/2 (3 runs each way): its rounds moved twice as many items, took up to 50 s and came
    # 3-4 times less often (experiments/results/faithful-paper, "Hot-set fill at the paper's scale")
    Approach("logging-buffer", "logging", {"ac_log_charge": "buffer", "ac_log_hot_fill": "0.9"},
             offline_classifier=True,
             about="logging as the paper's Table II charges it: only its log rings against -m; its estimate"
                   " table and classifier beside -m and beside the cell's limit (Siberia classifies offline)"),
    # the same policies over the other spilling tier (experiments/components.toml): what the
    # book-keeping and swapping components do apart from the policy
    # SIEVE (Zhang et al. NSDI 2024) over H-Store's blocks: a FIFO per class, visited bits and a
    # hand; no timing-dependent thread, so deterministic with one driver thread as lru
    Approach("sieve", "sieve", deterministic=True, figures=False,
             about="SIEVE (NSDI 2024): a FIFO per slab class, a visited bit per item and a moving hand,"
                   " over H-Store's blocks"),
    Approach("sieve-tuples", "sieve", {"ac_tier": "tuples"}, deterministic=True, figures=False,
             about="SIEVE over Siberia's cold store (Bloom filter + on-disk index, one record per item)"),
    # S3-FIFO (Yang et al. SOSP 2023): small, main and ghost FIFOs per class, 2-bit frequencies;
    # no timing-dependent thread, so deterministic with one driver thread as lru
    Approach("s3fifo", "s3fifo", deterministic=True, figures=False,
             about="S3-FIFO (SOSP 2023): a small FIFO of 10 %, a main FIFO, a ghost FIFO of keys and 2-bit"
                   " frequencies per slab class, over H-Store's blocks"),
    Approach("s3fifo-tuples", "s3fifo", {"ac_tier": "tuples"}, deterministic=True, figures=False,
             about="S3-FIFO over Siberia's cold store (Bloom filter + on-disk index, one record per item)"),
    # W-TinyLFU (Einziger et al. ToS 2017): a 1 % window LRU, count-min sketch admission, a 20/80
    # SLRU main per class; no timing-dependent thread, so deterministic with one driver thread
    Approach("wtinylfu", "wtinylfu", deterministic=True, figures=False,
             about="W-TinyLFU (ToS 2017): a window LRU of 1 %, TinyLFU's count-min sketch with aging for"
                   " admission and a 20/80 SLRU main per slab class, over H-Store's blocks"),
    Approach("wtinylfu-tuples", "wtinylfu", {"ac_tier": "tuples"}, deterministic=True, figures=False,
             about="W-TinyLFU over Siberia's cold store (Bloom filter + on-disk index, one record per item)"),
    # the anti-cache in NVM instead of on disk (Arulraj, DeBrabant, Pavlo et al., 004 of the seed papers):
    # records in a hash table in a tmpfs region the harness allocates outside the cell's cgroup
    # (nvm.py), every cache line of it touched paying NVM's extra latency (2x DRAM here; the spec's
    # lru-nvm{ac_nvm_latency=8x} the paper's worst case); no timing-dependent thread
    Approach("lru-nvm", "lru", {"ac_tier": "nvm", "ac_nvm_latency": "2x"}, deterministic=True, figures=False,
             about="H-Store anti-caching with an exact LRU, its cold items in an NVM region (a hash table of"
                   " records, 2x DRAM latency per cache line emulated) instead of on disk"),
    # another server's memory as the tier below local memory (RAM-DUR, Sciascia & Pedone, 003 of the
    # seed papers): two stock servers the harness starts outside the cell's cgroup (remote.py), every
    # record on both; a read goes over loopback TCP
    Approach("lru-remote", "lru", {"ac_tier": "remote"}, deterministic=True, figures=False,
             about="H-Store anti-caching with an exact LRU, its cold items in two other memcached servers'"
                   " memory (two copies each, over TCP) instead of on disk"),
    Approach("lru-tuples", "lru", {"ac_tier": "tuples"}, figures=False,
             about="lru's exact LRU over Siberia's cold store (Bloom filter + on-disk index, one record per item)"),
    Approach("alru-tuples", "alru", {"ac_tier": "tuples", "ac_alru_bits": "22", "ac_alru_resolution": "1us",
                                     "ac_alru_samples": "5"}, figures=False,
             about="alru as the paper ran it, over Siberia's cold store"),
    Approach("logging-blocks", "logging", {"ac_tier": "blocks"}, figures=False,
             about="Siberia's classification over H-Store's evicted table and blocks (reads of cold items stay cold)"),
    # H-Store's block-level choices (DeBrabant et al. (VLDB 2013) §5.1, §5.2: block merge against tuple merge, the block
    # size); experiments/claims-paper.toml
    Approach("lru-block-merge", "lru", {"ac_merge": "block"}, deterministic=True, figures=False,
             about="lru fetching a spilled item's whole block back into RAM (H-Store's block merge)"),
    Approach("lru-4m", "lru", {"ac_block_size": "4M"}, deterministic=True, figures=False,
             about="lru over blocks of 4 MiB (the default is 1 MiB)"),
    # lazy compaction off the request path (policies/README.md "Block merges"): when a merge
    # runs depends on the compactor thread's timing, so not deterministic
    Approach("lru-compact-thread", "lru", {"ac_compact_thread": "on"}, figures=False,
             about="lru with lazy compaction's block merges in a compactor thread instead of in the lookup"),
    # lazy compaction without un-eviction (DeBrabant et al. (VLDB 2013) §6.2's future work): a block's live records are
    # copied block to block on disk, never into RAM; in the lookup, so its counts repeat
    Approach("lru-compact-copy", "lru", {"ac_compact": "copy"}, deterministic=True, figures=False,
             about="lru whose lazy compaction copies a block's live records to the open block on disk"
                   " instead of merging them back into RAM"),
    # compressed spilled records (Zhang et al. (ICDE 2015) §IV-E: lz4 against spill I/O); experiments/compression.toml
    Approach("lru-lz4", "lru", {"ac_compress": "lz4"}, deterministic=True, figures=False,
             about="lru with each spilled value lz4-compressed (kept as is when it would not shrink)"),
    Approach("lru-zstd", "lru", {"ac_compress": "zstd"}, deterministic=True, figures=False,
             about="lru with each spilled value zstd-compressed (level 1)"),
    Approach("logging-lz4", "logging", {"ac_compress": "lz4"}, figures=False,
             about="logging with each spilled value lz4-compressed"),
    # VMA protection tracking (Zhang et al. (ICDE 2015) §IV-B): in-process mode only (a socket would see EFAULT)
    Approach("vma", "vma", figures=False, in_process_only=True,
             about="VMA protection tracking (mprotect + SIGSEGV, reset every 1 s), page-granular not-recently-used"
                   " victims, over H-Store's blocks"),
    Approach("vma-tuples", "vma", {"ac_tier": "tuples"}, figures=False, in_process_only=True,
             about="VMA protection tracking over Siberia's cold store"),
    Approach("ospaging", "ospaging", {"ac_os_backing": "anon"}, pages=True, swap=True, spills=False, windows=True,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS, about="OS paging: no eviction, slab memory in one anonymous mapping, the kernel swaps"),
    # the kernel's compressed swap (zram, lz4) instead of the disk: the modern offloading baseline. zswap
    # here accepts only lzo and deflate; zram offers lz4. Its RAM is charged to no cgroup: the rows
    # give its peak (zram_mem_used_max_bytes) beside the cell's own
    Approach("ospaging-zram", "ospaging", {"ac_os_backing": "anon"}, pages=True, swap=True, spills=False,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS, figures=False, swap_device="zram",
             about="OS paging to compressed swap in RAM: a zram device (lz4) instead of a swap file; its"
                   " memory is outside the cell's cgroup (zram_mem_used_max_bytes)"),
    # TMO (Weiner et al., ASPLOS 2022): ospaging whose cgroup a controller squeezes while the memory
    # pressure (PSI "some") stays under a target, and lets out above it (acbench/pressure.py); the rows
    # give its average limit (psi_limit_avg_bytes) to compare the others at
    Approach("ospaging-psi", "ospaging", {"ac_os_backing": "anon"}, pages=True, swap=True, spills=False,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS, figures=False, pressure=True,
             about="OS paging with TMO's Senpai: memory.high (v1: the limit) lowered while PSI memory pressure"
                   " stays under 0.1 %, raised above it; the average limit in the rows"),
    Approach("ospaging-file", "ospaging", {"ac_os_backing": "file"}, pages=True, spills=False,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS,
             about="OS paging of a shared file mapping in the spill directory: the page cache writes it back, no swap"),
    # the disk-oriented design the NVM paper compares anti-caching with (its MySQL: a DRAM buffer pool
    # over data files on NVM): ospaging-file, whose page cache is the buffer pool (charged to the cell),
    # over a file on the RAM device (`[run] spill_device = "ram"`, a zram block device outside the cell's
    # cgroup) that stands for an NVM block device. As it is, nothing limits that device (faster than the
    # paper's: it favours this design); ospaging-nvmfile{device_latency=2x|8x} limits it for the cell to
    # 64 bytes per line latency (nvm.py; this machine has no device-mapper delay target)
    Approach("ospaging-nvmfile", "ospaging", {"ac_os_backing": "file"}, pages=True, spills=False,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS, figures=False, ram_device=True,
             about="the disk-oriented design over NVM: a buffer pool (the page cache of a shared file mapping,"
                   " charged to the cell) over a file on the RAM block device standing for NVM"),
    Approach("effpaging", "effpaging", pages=True, swap=True, spills=False,
             resident="pages", fills_limit=True, flags=EFFPAGING_FLAGS,
             about="Efficient OS paging: hot items (logging's classifier) in mlocked memory sized to what the"
                   " cgroup allows, cold items in memory the kernel swaps"),
    # the paper's own approach (Zhang et al. (ICDE 2015) §VI): our user-space pager under the slab memory,
    # userfaultfd faults served by its fault thread, page-granular eviction by a clock weighted by the
    # items' access marks ("hints": the paper's WSCLOCK with the application's access log), lz4-compressed
    # pages; the cgroup gives no swap (only the pager moves pages) and its resident cap is what the
    # cgroup allows (policies/README.md "Tier uvmm"). The I/O engine, measured (20k records, θ 0.5,
    # 8 MiB cap, 200k reads, 2 runs each, the evictor's writes of a round in flight together): the fault
    # thread reads one page at a time and sync served uvmm best (11.8-12.1k against 9.5-11.0k ops/s with
    # uring); uvmm-check's workers did better with uring (16.2-16.7k against 14.7k)
    Approach("uvmm", "none", {"ac_tier": "uvmm", "ac_io": "sync", "ac_uvmm_evict": "hints"}, pages=True,
             spills=False, resident="pages", fills_limit=True, flags=PAGING_FLAGS,
             about="UVMM: the slab memory in one region paged by our user-space pager (userfaultfd), pages"
                   " evicted by a clock weighted by the items' accesses, lz4-compressed"),
    # vmcache's way of finding a missing page (Leis et al., SIGMOD 2023): the item path checks each page's
    # state and reads a missing one in itself; the fault path stays as the safety net
    Approach("uvmm-check", "none", {"ac_tier": "uvmm", "ac_io": "uring", "ac_uvmm_evict": "hints",
                                    "ac_uvmm_mode": "check"}, pages=True, spills=False, resident="pages",
             fills_limit=True, flags=PAGING_FLAGS, figures=False,
             about="uvmm whose item path checks page states and reads missing pages itself (vmcache)"),
    # the same without compression: what lz4 saves in spill I/O on page units (experiments/uvmm-demo.toml)
    Approach("uvmm-raw", "none", {"ac_tier": "uvmm", "ac_io": "sync", "ac_uvmm_evict": "hints",
                                  "ac_uvmm_compress": "none"}, pages=True, spills=False,
             resident="pages", fills_limit=True, flags=PAGING_FLAGS, figures=False,
             about="uvmm writing its pages uncompressed"),
    # an EMT-style page cache (Meyer et al., seed paper 001) on the same pager: a fixed cache (what the
    # cgroup allows), sampled LRU, low water level and eviction size of 64 pages, read-ahead 1..32 pages
    # doubling on sequential faults, direct I/O, no compression (policies/README.md "Tier emt")
    Approach("emt", "none", {"ac_tier": "emt", "ac_io": "sync"}, pages=True, spills=False, resident="pages",
             fills_limit=True, flags=PAGING_FLAGS, figures=False,
             about="EMT: the slab memory paged by our pager as an application page cache with LRU eviction,"
                   " a low water level, dynamic read-ahead and direct I/O"),
    # the same without keeping hot items ahead of cold ones in memcached's hash chains: what that costs
    Approach("effpaging-unordered", "effpaging", {"ac_eff_hot_first": "0"}, pages=True, swap=True, spills=False,
             resident="pages", fills_limit=True, flags=EFFPAGING_FLAGS, figures=False,
             about="effpaging with its hash chains as memcached links them: a hot read walks through (and"
                   " faults in) the cold items ahead of it"),
    # memcached 1.6.18's own extstore (the binary we fork, ac_policy=none): item headers and recent items
    # in RAM, values flushed to a file in the cell's spill directory (extstore.py sizes it: twice the
    # data, its documented settings otherwise). It drops items when its flusher falls behind the writes,
    # when disk pages are reclaimed and when compaction cannot move an object; stats anticache counts
    # them (policies/core/ac_extstore.c) and a miss is refilled by the client as for the cache. Its reads
    # finish on its IO threads, which the in-process driver cannot wait for: network mode only
    Approach("extstore", "none", spills=False, driver={"lookaside": "true"}, network_only=True, extstore=True,
             figures=False,
             about="memcached's own extstore: values flushed to a file, headers in RAM; drops items when its"
                   " flusher or disk falls behind (counted in lost_items); the client refills a miss"),
)}


class ApproachError(ValueError):
    pass


def in_windows(a: Approach) -> bool:
    """a's repetitions may be windows of one process (windows, else deterministic). Measured at the
    paper's scale, θ 0.25 M/D 3/4 and θ 0.99 M/D 1/4 (experiments/windows-check-*.toml, harness/README.md
    "Repetitions in windows"): lru and ospaging are; alru (1 µs clock) is not: its later windows read
    1.3 and 3.5 pp below its separate repetitions at θ 0.99 M/D 1/4. Every approach not measured runs
    its repetitions separately unless it is deterministic. Only where the warm-up leaves the store
    settled: at θ 0.99 M/D 1/2 lru's later windows read 1.1 pp above exact LRU of a separate
    repetition's state, so the paper grids run separate (harness/README.md, same section)."""
    return a.deterministic if a.windows is None else a.windows


def on_ram_device(a: Approach) -> bool:
    """The RAM device may stand in for the disk in a's hit-rate runs (ram_device, else deterministic)."""
    return a.deterministic if a.ram_device is None else a.ram_device


def pair_of(a: Approach, data: dict[str, Any]) -> dict[str, Any] | None:
    """The binary's pair (components.pair) that approach a runs: its policy (or alias) over the tier
    its options name (ac_tier, or ac_os_backing's swap / mmapfile), else the default."""
    tier = a.options.get("ac_tier") or {"anon": "swap", "file": "mmapfile"}.get(a.options.get("ac_os_backing", ""))
    return components.pair(data, a.policy, tier)


def from_binary(name: str, data: dict[str, Any]) -> Approach | None:
    """An approach the table does not name, made from a pair of the binary: "P" (policy P over its
    default tier) or "P+T"; None when the binary has no such pair. What it is follows from the
    tier's shape: a spilling tier spills, a paging one pages (with swap when its memory is
    anonymous; R of the decomposition = the budget), "evict" is the stock cache."""
    policy, _, tier = name.partition("+")
    p = components.pair(data, policy, tier or None)
    if p is None or (tier and p["default"]):
        return None          # "lru+blocks" is spelt "lru"
    shape, t = p["shape"], components.tier(data, p["tier"])
    pol = components.policy(data, p["policy"])
    return Approach(name, p["policy"], {"ac_tier": p["tier"]} if tier else {}, pages=shape == "page",
                    swap=shape == "page" and "anon" in t["caps"], spills=shape == "spill",
                    resident="pages" if shape == "page" else "items", fills_limit=shape == "page", figures=False,
                    flags=PAGING_FLAGS if shape == "page" else (),
                    in_process_only=not pol["network"], about=f"{pol['summary']}, over {t['summary']}")


# NAME{option=value,...}: approach NAME with these -o settings added (a sensitivity sweep lists one
# per value: experiments/effpaging-lock.toml); the server checks each value when the cell starts.
# The harness's own settings of an approach (not -o settings) are set the same way:
_VARIANT = re.compile(r"^([^{}]+)\{([^{}]*)\}$")
HARNESS_SETTINGS = {
    # the RAM device of [run] spill_device = "ram" limited to an NVM block device's bandwidth (nvm.py)
    "device_latency": "the line latency of the NVM block device the RAM device stands for",
}


def variant(name: str) -> Approach | None:
    """The approach a name NAME{k=v,...} means (None: not of that form); ApproachError when its
    base is unknown or an option is not one the binary lists."""
    m = _VARIANT.match(name)
    if m is None:
        return None
    base = lookup(m.group(1))
    if base is None:
        raise ApproachError(f"{name}: unknown approach {m.group(1)!r}; accepted: {', '.join(accepted_names())}")
    try:
        keys = components.option_keys()
    except components.ComponentsError as e:
        raise ApproachError(f"{name}: {e}") from None
    opts: dict[str, str] = {}
    own: dict[str, str] = {}
    for part in m.group(2).split(","):
        k, sep, v = (x.strip() for x in part.partition("="))
        if not sep or not k or not v:
            raise ApproachError(f"{name}: {part.strip()!r} is not option=value; accepted: NAME{{option=value,...}}")
        if k in HARNESS_SETTINGS:
            own[k] = v
        elif k not in keys:
            raise ApproachError(f"{name}: {k!r} is not an option of memcached-ac nor a setting of the harness; "
                                f"accepted: {', '.join(sorted(keys | set(HARNESS_SETTINGS)))}")
        else:
            opts[k] = v
    if "device_latency" in own:
        from acbench import nvm
        try:
            nvm.parse_device_latency(own["device_latency"])
        except nvm.NvmError as e:
            raise ApproachError(f"{name}: {e}") from None
        if not on_ram_device(base):
            raise ApproachError(f"{name}: device_latency limits the RAM device, and {base.name}'s cells never run on "
                                "it (its hit rate depends on the device's speed: approaches.py ram_device)")
    settings = ", ".join(f"{k}={v}" for k, v in {**opts, **own}.items())
    return dataclasses.replace(base, name=name, options={**base.options, **opts}, figures=False,
                               about=f"{base.about} (with {settings})", **own)


def lookup(name: str) -> Approach | None:
    """The table's approach, a variant NAME{option=value,...} of one, or one made from the binary's
    pairs, or None. A malformed variant raises ApproachError."""
    if name in APPROACHES:
        return APPROACHES[name]
    v = variant(name)
    if v is not None:
        return v
    try:
        return from_binary(name, components.listing())
    except components.ComponentsError:
        return None


def get_approach(name: str) -> Approach:
    a = lookup(name)
    if a is None:
        raise ApproachError(f"unknown approach {name!r}; accepted: {', '.join(accepted_names())}")
    return a


def accepted_names() -> list[str]:
    """The table's names, then the binary's pairs no entry of the table runs."""
    try:
        data = components.listing()
    except components.ComponentsError:
        return list(APPROACHES)
    covered = {(p["policy"], p["tier"]) for p in map(lambda a: pair_of(a, data), APPROACHES.values()) if p}
    return list(APPROACHES) + [components.pair_names(data)[i] for i, p in enumerate(data["pairs"])
                               if (p["policy"], p["tier"]) not in covered]


def check_table(data: dict[str, Any]) -> list[str]:
    """What the table says that the binary contradicts: a pair it does not have, or a flag (pages,
    spills, swap, in_process_only) its shape and capabilities deny."""
    problems = []
    for a in APPROACHES.values():
        p = pair_of(a, data)
        if p is None:
            problems.append(f"{a.name}: the binary has no pair for policy {a.policy} with options {a.options}")
            continue
        t, pol = components.tier(data, p["tier"]), components.policy(data, p["policy"])
        want = {"pages": p["shape"] == "page", "spills": p["shape"] == "spill",
                "swap": p["shape"] == "page" and "anon" in t["caps"] and a.options.get("ac_os_backing") != "file",
                "in_process_only": not pol["network"]}
        for flag, value in want.items():
            if getattr(a, flag) != value:
                problems.append(f"{a.name}: {flag} = {getattr(a, flag)} but the binary's {p['policy']} over "
                                f"{p['tier']} ({p['shape']}) says {value}")
    return problems
