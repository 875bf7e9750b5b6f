"""Start-up: bad -o ac_* settings are refused with a message naming the valid
choices (nonzero exit, exact text on stderr); the spill directory is created or
emptied with the right modes, never taken over when it holds foreign files, and
removed at exit."""
from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from mc_helpers import BIN, free_port

# in the order -o ac_help lists them: the core's, then each policy's and each
# tier's own table (the classifier's once, under logging)
OPTIONS = ("ac_policy, ac_tier, ac_os_backing, ac_spill_dir, ac_alloc_wait, ac_borrow_pages, ac_driver, "
           "ac_driver_out, ac_driver_gate, ac_driver_set, ac_driver_depth, ac_driver_trace, ac_driver_format, ac_park_threads, ac_lru_sample, ac_lru_batch, ac_alru_bits, ac_alru_samples, ac_alru_resolution, "
           "ac_alru_clock, ac_s3fifo_small, ac_s3fifo_promote, ac_wtlfu_window, "
           "ac_wtlfu_protected, ac_wtlfu_sample, ac_log_charge, ac_log_sample, ac_log_alpha, ac_log_round, ac_log_slice, ac_log_keys, "
           "ac_log_hot_fill, ac_log_offline, ac_eff_memory, ac_eff_madv_cold, ac_eff_lock, ac_eff_hot_first, ac_vma_reset, ac_vma_granule, ac_vma_samples, "
           "ac_block_size, ac_merge, ac_compact_fill, ac_evicted_max, ac_write_queue, ac_compress, ac_io, ac_io_threads, ac_io_direct, ac_fault, "
           "ac_compact, ac_compact_thread, ac_bloom_keys, ac_nvm_file, ac_nvm_size, ac_nvm_slots, ac_nvm_latency, ac_nvm_dram_ns, "
           "ac_nvm_charge, ac_remote, ac_remote_copies, ac_remote_timeout, ac_remote_retry, ac_remote_conns, ac_uvmm_mode, ac_uvmm_memory, ac_uvmm_evict, ac_uvmm_compress, ac_uvmm_clean, "
           "ac_uvmm_batch, ac_emt_cache, ac_emt_evict, ac_emt_low_water, ac_emt_evict_size, ac_emt_readahead_min, "
           "ac_emt_readahead_max, ac_emt_readahead_streams, ac_emt_colours")
OWNERS = ["the core", "policy lru", "policy alru", "policy s3fifo", "policy wtinylfu", "policy logging",
          "the classifier of logging, effpaging and emt's colours",
          "policy effpaging", "policy vma", "tier blocks", "spilled records (tiers blocks, tuples, nvm and remote)",
          "spill-file I/O (tiers blocks, tuples, uvmm and emt)", "lazy compaction (tier blocks)", "tier tuples",
          "tier nvm", "tier remote", "tier uvmm", "tier emt"]


def run_expect_failure(ac: str, mem: int = 16, extra: tuple[str, ...] = ()) -> str:
    argv = [str(BIN), "-U", "0", "-l", "127.0.0.1", "-p", str(free_port()), "-m", str(mem),
            "-u", "root", *extra, "-o", ac]
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    assert r.returncode != 0, f"{ac}: started (exit {r.returncode})"
    return r.stderr


@pytest.mark.parametrize("ac,message", [
    ("ac_policy=x", 'memcached-ac: unknown ac_policy "x"; valid policies: none, lru, alru, sieve, s3fifo, wtinylfu, logging, effpaging, vma, ospaging'),
    ("ac_tier=disk", 'memcached-ac: unknown ac_tier "disk"; valid tiers: none, blocks, tuples, nvm, remote, swap, mmapfile, uvmm, emt'),
    # pairs that cannot work: refused at start, with the tiers the policy works over
    ("ac_policy=lru,ac_tier=swap",
     "memcached-ac: ac_policy=lru cannot work over ac_tier=swap; valid tiers for policy lru: blocks, tuples, nvm, remote"),
    ("ac_policy=alru,ac_tier=none",
     "memcached-ac: ac_policy=alru cannot work over ac_tier=none; valid tiers for policy alru: blocks, tuples, nvm, remote"),
    ("ac_policy=logging,ac_tier=mmapfile",
     "memcached-ac: ac_policy=logging cannot work over ac_tier=mmapfile; valid tiers for policy logging: tuples, blocks, nvm, remote"),
    ("ac_policy=none,ac_tier=blocks",
     "memcached-ac: ac_policy=none cannot work over ac_tier=blocks; valid tiers for policy none: none, swap, mmapfile, uvmm, emt"),
    ("ac_tier=tuples",
     "memcached-ac: ac_policy=none cannot work over ac_tier=tuples; valid tiers for policy none: none, swap, mmapfile, uvmm, emt"),
    ("ac_policy=effpaging,ac_tier=tuples",
     "memcached-ac: ac_policy=effpaging cannot work over ac_tier=tuples; valid tiers for policy effpaging: swap"),
    ("ac_policy=ospaging,ac_tier=blocks",
     "memcached-ac: ac_policy=ospaging cannot work over ac_tier=blocks; valid tiers for policy none: none, swap, mmapfile, uvmm, emt"),
    ("ac_policy=vma,ac_tier=swap",
     "memcached-ac: ac_policy=vma cannot work over ac_tier=swap; valid tiers for policy vma: blocks, tuples, nvm, remote"),
    # vma protects the slab memory: a socket touching it would get EFAULT
    ("ac_policy=vma", "memcached-ac: ac_policy=vma protects the slab memory (PROT_NONE) to see accesses, and the"
                      " kernel cannot read or write protected pages for a socket (EFAULT): it runs only with the"
                      " in-process driver (-o ac_driver=FILE)"),
    ("ac_policy=vma,ac_vma_reset=100us", 'memcached-ac: ac_vma_reset must be a duration from 1ms to 3600s with a'
                                         ' unit s or ms (the paper: 1s), got "100us"'),
    ("ac_policy=vma,ac_vma_granule=2k", 'memcached-ac: ac_vma_granule must be a size from 4K to 1G (a multiple of'
                                        ' the page size, e.g. 64K), got "2k"'),
    ("ac_policy=vma,ac_vma_samples=0", 'memcached-ac: ac_vma_samples must be an integer from 1 to 64, got "0"'),
    ("ac_policy=alru,ac_alru_clock=tick",
     'memcached-ac: ac_alru_clock must be "auto" (a timer for a resolution of 1ms or more, else per access (Redis'
     ' LRU_CLOCK)), "timer" (a thread advances it every resolution (the paper\'s 1us timer)) or "access"'
     ' (CLOCK_MONOTONIC read on every access), got "tick"'),
    ("ac_policy=lru,ac_compress=gzip",
     'memcached-ac: ac_compress must be "none" (values stored as they are), "lz4" (liblz4, fast) or "zstd"'
     ' (libzstd level 1, smaller), got "gzip"'),
    ("ac_policy=ospaging,ac_compress=lz4",
     "memcached-ac: ac_compress is an option of spilled records (tiers blocks, tuples, nvm and remote); it has no effect with"
     " ac_policy=none,ac_tier=swap (-o ac_help lists every option by component)"),
    ("ac_foo=1", f'memcached-ac: unknown option "ac_foo"; valid anti-caching options: {OPTIONS}'),
    ("ac_policy=lru,ac_bar", f'memcached-ac: unknown option "ac_bar"; valid anti-caching options: {OPTIONS}'),
    ("ac_block_size=1", 'memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got "1"'),
    ("ac_block_size=128M", 'memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got "128M"'),
    ("ac_compact_fill=2", 'memcached-ac: ac_compact_fill must be a number from 0 to 1, got "2"'),
    ("ac_compact_fill=-0.1", 'memcached-ac: ac_compact_fill must be a number from 0 to 1, got "-0.1"'),
    ("ac_merge=page", 'memcached-ac: ac_merge must be "tuple" or "block", got "page"'),
    ("ac_lru_sample=0", 'memcached-ac: ac_lru_sample must be an integer N from 1 to 1000000 '
                        '(order updated on 1 in N accesses), got "0"'),
    ("ac_evicted_max=0", 'memcached-ac: ac_evicted_max must be a count of items from 1 to 4294967294 '
                         '(K/M/G/T units allowed), got "0"'),
    ("ac_alloc_wait=5", 'memcached-ac: ac_alloc_wait must be 0 or a duration up to 600s with a unit'
                        ' s, ms or us (e.g. 5s), got "5"'),
    ("ac_alloc_wait=601s", 'memcached-ac: ac_alloc_wait must be 0 or a duration up to 600s with a unit'
                           ' s, ms or us (e.g. 5s), got "601s"'),
    ("ac_borrow_pages=65", 'memcached-ac: ac_borrow_pages must be a number of slab pages from 0 to 64'
                           ' (0: never borrow, only wait), got "65"'),
    ("ac_policy", "memcached-ac: ac_policy needs a value (ac_policy=VALUE)"),
    ("ac_policy=lru,ac_spill_dir=rel/dir",
     'memcached-ac: ac_spill_dir must be an absolute path shorter than 992 bytes, got "rel/dir"'),
    # the units a duration option names are the ones it takes; numbers are digits only
    ("ac_alloc_wait=500ns", 'memcached-ac: ac_alloc_wait must be 0 or a duration up to 600s with a unit'
                            ' s, ms or us (e.g. 5s), got "500ns"'),
    ("ac_borrow_pages=+1", 'memcached-ac: ac_borrow_pages must be a number of slab pages from 0 to 64'
                           ' (0: never borrow, only wait), got "+1" (not a size)'),
    ("ac_eff_memory= -1", 'memcached-ac: ac_eff_memory must be a size of at least 2M (e.g. 512M), the memory'
                          ' effpaging may lock for its hot region and its classifier, got " -1" (not a size)'),
    ("ac_help=1", "memcached-ac: ac_help takes no value (-o ac_help)"),
    # an option of a component that is not in use would have no effect: refused
    ("ac_policy=lru,ac_alru_bits=22",
     "memcached-ac: ac_alru_bits is an option of policy alru; it has no effect with ac_policy=lru,ac_tier=blocks"
     " (-o ac_help lists every option by component)"),
    ("ac_policy=lru,ac_tier=tuples,ac_block_size=1M",
     "memcached-ac: ac_block_size is an option of tier blocks; it has no effect with ac_policy=lru,ac_tier=tuples"
     " (-o ac_help lists every option by component)"),
    ("ac_policy=lru,ac_tier=tuples,ac_compact_thread=on",
     "memcached-ac: ac_compact_thread is an option of lazy compaction (tier blocks); it has no effect with"
     " ac_policy=lru,ac_tier=tuples (-o ac_help lists every option by component)"),
    ("ac_compact_thread=yes",
     'memcached-ac: ac_compact_thread must be "off" or "on", got "yes"'),
    ("ac_compact=move",
     'memcached-ac: ac_compact must be "merge" or "copy", got "move"'),
    ("ac_policy=lru,ac_merge=block,ac_compact=copy",
     "memcached-ac: ac_tier=blocks: ac_compact=copy copies the live records of blocks lazy compaction claims"
     " under tuple merge; with ac_merge=block every fetch merges its whole block back into RAM: drop one of the two"),
    ("ac_policy=lru,ac_tier=tuples,ac_compact=copy",
     "memcached-ac: ac_compact is an option of lazy compaction (tier blocks); it has no effect with"
     " ac_policy=lru,ac_tier=tuples (-o ac_help lists every option by component)"),
    # offline classification: 0 or 1; it needs the driver's phases, and effpaging refuses it
    ("ac_policy=logging,ac_log_offline=2", 'memcached-ac: ac_log_offline must be 0 or 1, got "2"'),
    ("ac_policy=logging,ac_log_offline=1",
     "memcached-ac: logging: ac_log_offline=1 needs the in-process driver (-o ac_driver=FILE): it classifies"
     " the warm-up's history when the measured run begins, and network clients signal no phases"),
    ("ac_policy=effpaging,ac_eff_memory=64M,ac_log_offline=1",
     "memcached-ac: effpaging: ac_log_offline=1 is not supported: its promotion candidates are the items logged"
     " since the last round, a bounded set that a warm-up without rounds would overflow; offline"
     " classification is policy logging's"),
    ("ac_log_keys=2000",
     "memcached-ac: ac_log_keys is an option of the classifier of logging, effpaging and emt's colours; it has no effect with"
     " ac_policy=none,ac_tier=none (-o ac_help lists every option by component)"),
    ("ac_policy=logging,ac_bloom_keys=4096,ac_lru_sample=2",
     "memcached-ac: ac_lru_sample is an option of policy lru; it has no effect with ac_policy=logging,ac_tier=tuples"
     " (-o ac_help lists every option by component)"),
    # sizes: the one grammar of docs/sizes.txt
    ("ac_block_size=1.5K", 'memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got "1.5K"'),
    ("ac_block_size=0.1M", 'memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got "0.1M"'
                           ' (a fraction of a byte)'),
    ("ac_block_size=1MB", 'memcached-ac: ac_block_size must be a size from 4K to 64M (e.g. 1M), got "1MB"'
                          ' (not a size)'),
    ("ac_evicted_max=16777216T", 'memcached-ac: ac_evicted_max must be a count of items from 1 to 4294967294'
                                 ' (K/M/G/T units allowed), got "16777216T" (too large: more than 2^64 - 1 bytes)'),
])
def test_bad_option(ac, message):
    assert run_expect_failure(ac) == message + "\n"


POLICIES = ("none", "lru", "alru", "sieve", "s3fifo", "wtinylfu", "logging", "effpaging", "vma", "ospaging")
TIERS = ("none", "blocks", "tuples", "nvm", "remote", "swap", "mmapfile", "uvmm", "emt")


def run_help(*pre: str) -> subprocess.CompletedProcess[str]:
    argv = [str(BIN), "-U", "0", "-l", "127.0.0.1", "-p", str(free_port()), "-m", "16", "-u", "root",
            *pre]
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)


def option_blocks(out: str) -> dict[str, str]:
    """ac_help / -h text -> {key: its lines (help, then default and accepted values)}"""
    blocks: dict[str, str] = {}
    key = None
    for line in out.splitlines():
        if line.startswith("   - ac_"):
            key = line.split()[1]
            blocks[key] = line
        elif key is not None and line.startswith("     ") and not line.startswith(("     policies",
                                                                                       "     options of")):
            blocks[key] += "\n" + line
        else:
            key = None
    return blocks


def test_ac_help_lists_every_option_with_its_default_and_exits():
    r = run_help("-o", "ac_help")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", "a default in the table is not the initial value, or help printed to stderr"
    blocks = option_blocks(r.stdout)
    keys = OPTIONS.split(", ")
    assert list(blocks) == keys + ["ac_help", "ac_list"]
    for key in keys:
        assert "default: " in blocks[key] and "accepted: " in blocks[key], blocks[key]
    assert "default: 1M, or -m/16 if smaller; accepted: a size from 4K to 64M" in blocks["ac_block_size"]
    assert "default: 1; accepted: an integer N from 1 to 1000000" in blocks["ac_lru_sample"]
    assert "default: 32; accepted: a count of accesses from 0 to 1024" in blocks["ac_lru_batch"]
    assert "default: 5s; accepted: 0 or a duration up to 600s with a unit s, ms or us" in blocks["ac_alloc_wait"]
    assert "default: 100000; accepted: a count of logged accesses from 1 to 1000000000" in blocks["ac_log_round"]
    assert "default: tuple; accepted: \"tuple\" or \"block\"" in blocks["ac_merge"]
    assert "default: 0.05; accepted: a number in (0, 1]" in blocks["ac_log_alpha"]
    # grouped by the component that declares them
    owners = [line[len("     options of "):-1] for line in r.stdout.splitlines()
              if line.startswith("     options of ")]
    assert owners == OWNERS
    # the policies and tiers, each on a line of its own list
    pol = r.stdout.index("     policies (ac_policy)")
    tie = r.stdout.index("     tiers (ac_tier):")
    assert pol < tie
    listed_policies = {line.split()[0] for line in r.stdout[pol:tie].splitlines()[1:]}
    listed_tiers = {line.split()[0] for line in r.stdout[tie:].splitlines()[1:]}
    assert listed_policies == set(POLICIES) and listed_tiers == set(TIERS)
    assert f"accepted: one of {', '.join(POLICIES)}" in blocks["ac_policy"]
    assert f"accepted: one of {', '.join(TIERS)}" in blocks["ac_tier"]


def test_ac_help_after_other_options_starts_nothing(tmp_path):
    """ac_help ends the start-up where it stands: exit 0, no spill directory, no listener."""
    r = run_help("-o", f"ac_policy=lru,ac_spill_dir={tmp_path}/s,ac_help,ac_block_size=1")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "   - ac_block_size" in r.stdout
    assert not (tmp_path / "s").exists()


def test_usage_shows_the_same_options_as_ac_help():
    helped = run_help("-o", "ac_help")
    usage = run_help("-h")
    assert helped.returncode == 0 and usage.returncode == 0
    body = helped.stdout.split("\n", 1)[1]          # without ac_help's title line
    assert body in usage.stdout


def test_book_keeping_larger_than_half_of_memory(tmp_path):
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={tmp_path}/s,ac_block_size=9M")
    assert err == ("memcached-ac: the book-keeping of ac_policy=lru (0 bytes) and ac_tier=blocks (9437184 bytes)"
                   " exceeds half of -m (16777216 bytes); raise -m or lower ac_block_size or ac_write_queue\n"), err
    assert not (tmp_path / "s").exists()
    # the write queue's blocks count too: 3 x 3 MiB
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={tmp_path}/s,ac_block_size=3M,ac_write_queue=2")
    assert "ac_tier=blocks (9437184 bytes) exceeds half of -m (16777216 bytes)" in err, err
    assert not (tmp_path / "s").exists()


WORKLOADC = Path(__file__).resolve().parents[2] / "experiments" / "workloads" / "workloadc"


def test_vma_granule_refusals_name_what_fits(tmp_path):
    """vma (in-process driver): a granule that is no page multiple, and more granules than
    vm.max_map_count leaves room for, are refused before anything is mapped or created."""
    drv = f"ac_driver={WORKLOADC},ac_spill_dir={tmp_path}/s"
    err = run_expect_failure(f"ac_policy=vma,ac_vma_granule=6k,{drv}")
    assert err == "memcached-ac: ac_vma_granule must be a multiple of the page size (4096 bytes), got 6144 bytes\n"
    maps = int(Path("/proc/sys/vm/max_map_count").read_text())
    mem = 8 * maps // 1024                  # MB: about twice as many 4 KiB granules as the map count
    err = run_expect_failure(f"ac_policy=vma,{drv}", mem=mem)
    m = re.fullmatch(r"memcached-ac: ac_policy=vma: the slab memory \((\d+) bytes\) is (\d+) granules of 4096 "
                     r"bytes, each of which can become a mapping of its own: more than vm.max_map_count "
                     rf"\({maps}\) less 4096 for the rest of the process; set ac_vma_granule to (\d+) or more, "
                     r"or raise vm.max_map_count\n", err)
    assert m, err
    size, granules, need = (int(x) for x in m.groups())
    assert granules == size // 4096 and granules > maps - 4096
    assert need % 4096 == 0 and -(-size // need) <= maps - 4096 < -(-size // (need - 4096))
    assert not (tmp_path / "s").exists()


def test_evicted_table_that_cannot_address_the_blocks(tmp_path):
    # 64 MiB blocks (26 offset bits) and 1 GiB items (31 length bits) leave 7 bits of block id
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={tmp_path}/s,ac_block_size=64M", mem=4096,
                             extra=("-I", "1024m"))
    assert err == ("memcached-ac: ac_tier=blocks: the evicted table cannot address blocks of 67108864 bytes holding items"
                   " of up to 1073741824 bytes (-I) in 64 bits with 2^16 blocks or more;"
                   " lower ac_block_size or -I\n"), err
    assert not (tmp_path / "s").exists()


def test_spill_dir_with_foreign_file_is_refused(tmp_path):
    d = tmp_path / "spill"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={d}")
    assert err == (f'memcached-ac: ac_spill_dir {d} holds "notes.txt", which is not a memcached-ac '
                   "spill file; use an empty or new directory\n")
    assert (d / "notes.txt").read_text() == "mine", "the foreign file was touched"
    assert sorted(p.name for p in d.iterdir()) == ["notes.txt"]


def test_spill_dir_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={f}")
    assert err == f"memcached-ac: ac_spill_dir {f} exists and is not a directory\n"
    assert f.read_text() == "x"


def test_existing_spill_dir_is_emptied_and_made_private(server, tmp_path):
    """A directory left by a crash (0755, a stale 0644 blocks.dat and the other
    stores' files) is reused: 0700, each leftover removed by name (and said so
    on stderr), blocks.dat created anew, empty and 0600; removed at exit
    (fixture teardown)."""
    d = tmp_path / "stale"
    d.mkdir()
    os.chmod(d, 0o755)
    for name in LEFTOVERS:
        (d / name).write_bytes(b"stale records" * 1000)
        os.chmod(d / name, 0o644)
    srv = server(ac={"ac_spill_dir": str(d)}, check_dir_modes=False)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert sorted(p.name for p in d.iterdir()) == ["blocks.dat"]
    assert (d / "blocks.dat").stat().st_size == 0
    mode = stat.S_IMODE((d / "blocks.dat").stat().st_mode)
    assert mode == 0o600, f"blocks.dat kept mode {oct(mode)} from the previous run"
    for name in LEFTOVERS:
        assert f"memcached-ac: removed {d}/{name}, left by an earlier run\n" in srv.stderr()


LEFTOVERS = ("blocks.dat", "cold.dat", "cold.idx", "cold.idx.new", "ospaging.mem")


def test_spill_dir_symlink_is_refused(tmp_path):
    """A symlink to a directory is refused, and nothing in its target is touched."""
    target = tmp_path / "real"
    target.mkdir(mode=0o700)
    (target / "blocks.dat").write_text("someone's")
    link = tmp_path / "link"
    link.symlink_to(target)
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={link}")
    assert err == f"memcached-ac: ac_spill_dir {link} is a symbolic link; give the directory itself\n"
    assert (target / "blocks.dat").read_text() == "someone's" and link.is_symlink()


@pytest.mark.parametrize("mode", [0o770, 0o720, 0o703, 0o777, 0o1777])
def test_spill_dir_writable_by_others_is_refused(tmp_path, mode):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, mode)
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={d}")
    assert err == (f"memcached-ac: ac_spill_dir {d} is group- or world-writable (mode {mode:04o});"
                   " use a directory only its owner can write (e.g. chmod 0700)\n")
    assert stat.S_IMODE(d.stat().st_mode) == mode and not any(d.iterdir())


def test_spill_dir_of_another_user_is_refused(tmp_path):
    """The server runs as root (-u root): a directory owned by nobody is refused."""
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)
    err = run_expect_failure(f"ac_policy=lru,ac_spill_dir={d}")
    assert err == (f"memcached-ac: ac_spill_dir {d} is owned by uid 65534, not by the server's user"
                   f" (uid {os.geteuid()}); use a directory of that user\n")
    assert not any(d.iterdir())


def test_symlink_planted_as_spill_file_is_not_followed(server, tmp_path):
    """A symlink named like one of our files is removed as a leftover (the link,
    not its target); the store creates a real file."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    d = tmp_path / "spill"
    d.mkdir(mode=0o700)
    (d / "blocks.dat").symlink_to(victim)
    srv = server(ac={"ac_spill_dir": str(d)})
    cli = srv.client()
    for i in range(400):
        cli.set(f"k{i}", bytes([i % 251]) * 100_000)
    assert srv.ac()["spilled_items"] > 0
    f = d / "blocks.dat"
    assert not f.is_symlink() and f.stat().st_size > 0
    assert victim.read_bytes() == b"precious"


def test_default_spill_dir():
    """Without ac_spill_dir: /var/tmp/memcached-ac.PID, 0700, gone after SIGTERM."""
    port = free_port()
    argv = [str(BIN), "-U", "0", "-l", "127.0.0.1", "-p", str(port), "-m", "16", "-u", "root",
            "-o", "ac_policy=lru"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    d = Path(f"/var/tmp/memcached-ac.{proc.pid}")
    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.02)
        assert d.is_dir() and stat.S_IMODE(d.stat().st_mode) == 0o700
        assert [p.name for p in d.iterdir()] == ["blocks.dat"]
    finally:
        proc.terminate()            # SIGTERM to this PID only
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0
    assert not d.exists()


@pytest.mark.parametrize("pair,policy,tier", [
    ("ac_policy=lru", "lru", "blocks"),
    ("ac_policy=alru", "alru", "blocks"),
    ("ac_policy=logging", "logging", "tuples"),
    ("ac_policy=lru,ac_tier=tuples", "lru", "tuples"),
    ("ac_policy=alru,ac_tier=tuples", "alru", "tuples"),
    ("ac_policy=logging,ac_tier=blocks", "logging", "blocks"),
    ("ac_policy=lru,ac_tier=nvm", "lru", "nvm"),
    ("ac_policy=lru,ac_tier=remote", "lru", "remote"),
    ("ac_policy=ospaging", "none", "swap"),
    ("ac_policy=ospaging,ac_os_backing=file", "none", "mmapfile"),
    ("ac_policy=none,ac_tier=mmapfile", "none", "mmapfile"),
    ("ac_policy=none,ac_tier=uvmm,ac_uvmm_memory=8M", "none", "uvmm"),
    ("ac_policy=none", "none", "none"),
])
def test_every_valid_pair_starts_and_says_what_it_runs(server, tmp_path, pair, policy, tier):
    ac = dict(kv.split("=", 1) for kv in pair.split(","))
    spill = tmp_path / "spill"
    srv = server(mem=64, ac={**ac, "ac_spill_dir": str(spill)}, check_dir_modes=False)
    st = srv.ac()
    assert (st["policy"], st["tier"]) == (policy, tier)
    files = {"blocks": {"blocks.dat"}, "tuples": {"cold.dat", "cold.idx"}, "mmapfile": {"ospaging.mem"},
             "uvmm": {"uvmm.pages"}}
    if tier in files:
        assert {p.name for p in spill.iterdir()} == files[tier]
        assert st["spill_dir"] == str(spill)
    else:
        assert not spill.exists(), "a tier without files made the spill directory"
    srv.stop()
    assert not spill.exists(), "the spill directory outlived the server"


def test_ac_list_prints_the_components_and_the_pairs_that_work_as_json():
    r = run_help("-o", "ac_list")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    listing = json.loads(r.stdout)
    assert set(listing) == {"policies", "tiers", "pairs", "aliases"}
    assert [p["name"] for p in listing["policies"]] == list(POLICIES[:-1])      # ospaging is an alias
    assert [t["name"] for t in listing["tiers"]] == list(TIERS)
    assert listing["aliases"] == [{"name": "ospaging", "policy": "none", "tier": "swap"}]
    shapes = {t["name"]: t["shape"] for t in listing["tiers"]}
    assert shapes == {"none": "evict", "blocks": "spill", "tuples": "spill", "nvm": "spill", "remote": "spill",
                      "swap": "page", "mmapfile": "page", "uvmm": "page", "emt": "page"}
    caps = {t["name"]: set(t["caps"]) for t in listing["tiers"]}
    assert caps["swap"] == {"page", "anon"} and caps["mmapfile"] == {"page", "files"}
    assert caps["uvmm"] == {"page", "files"}
    assert caps["blocks"] >= {"spill", "blocks", "read_ahead", "move", "files"}
    assert caps["tuples"] >= {"spill", "read_ahead", "files"} and "blocks" not in caps["tuples"]
    assert caps["nvm"] == {"spill"} and caps["remote"] == {"spill"}       # no files, no reads ahead
    # the valid tiers of each policy, its default first: the same as the refusal messages say
    tiers = {p["name"]: p["tiers"] for p in listing["policies"]}
    spill = ["nvm", "remote"]
    assert tiers == {"none": ["none", "swap", "mmapfile", "uvmm", "emt"], "lru": ["blocks", "tuples", *spill],
                     "alru": ["blocks", "tuples", *spill], "sieve": ["blocks", "tuples", *spill],
                     "s3fifo": ["blocks", "tuples", *spill], "wtinylfu": ["blocks", "tuples", *spill],
                     "logging": ["tuples", "blocks", *spill], "effpaging": ["swap"], "vma": ["blocks", "tuples", *spill]}
    pairs = {(p["policy"], p["tier"]): p["default"] for p in listing["pairs"]}
    assert pairs == {(p, t): i == 0 for p, ts in tiers.items() for i, t in enumerate(ts)}
    net = {p["name"]: p["network"] for p in listing["policies"]}
    assert net["vma"] is False and all(v for k, v in net.items() if k != "vma")
    opts = {p["name"]: p["options"] for p in listing["policies"]}
    assert opts["lru"] == ["ac_lru_sample", "ac_lru_batch"] and "ac_log_alpha" in opts["logging"]
    assert "ac_block_size" in next(t["options"] for t in listing["tiers"] if t["name"] == "blocks")
    assert run_help("-o", "ac_list=1").stderr == "memcached-ac: ac_list takes no value (-o ac_list)\n"


@pytest.mark.parametrize("mem", ["-5", "-1"])
@pytest.mark.parametrize("ac", ["ac_policy=none", "ac_policy=lru"])
def test_negative_memory_limit_is_refused(tmp_path, mem, ac):
    """memcached takes -m with atoi: -5 would wrap to a limit of almost 2^64 bytes and start."""
    argv = [str(BIN), "-U", "0", "-l", "127.0.0.1", "-p", str(free_port()), "-m", mem, "-u", "root",
            "-o", f"{ac},ac_spill_dir={tmp_path / 'spill'}"]
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    assert (r.returncode, r.stderr) == (1, f"memcached-ac: -m {mem}: the memory limit must be a positive number "
                                           "of megabytes\n")
    assert not (tmp_path / "spill").exists()


def test_driver_gate_names_each_phase_and_waits_for_the_answer(tmp_path):
    """-o ac_driver_gate=PREFIX: the in-process driver writes each phase's name to PREFIX.phase and
    starts it once PREFIX.go names it; a prefix it cannot write to stops the run with the reason."""
    import json
    import subprocess
    import threading
    import time
    from mc_helpers import ROOT
    prefix = tmp_path / "gate"
    out = tmp_path / "out.json"
    opts = (f"ac_policy=lru,ac_spill_dir={tmp_path}/spill,ac_driver={ROOT / 'experiments' / 'workloads' / 'readonly'},"
            f"ac_driver_out={out},ac_driver_set=recordcount=2000,ac_driver_set=operationcount=2000,"
            f"ac_driver_set=warmupoperations=1000,ac_driver_gate={prefix}")
    seen = []

    def answer():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(seen) < 3:
            p = tmp_path / "gate.phase"
            if p.exists():
                phase = p.read_text().strip()
                if not seen or seen[-1] != phase:
                    seen.append(phase)
                    time.sleep(0.05)         # the driver must wait for the answer
                    (tmp_path / "gate.go.tmp").write_text(phase + "\n")
                    (tmp_path / "gate.go.tmp").rename(tmp_path / "gate.go")
            time.sleep(0.005)

    t = threading.Thread(target=answer)
    t.start()
    r = subprocess.run([str(BIN), "-u", "root", "-m", "64", "-o", opts], capture_output=True, text=True, timeout=120)
    t.join()
    assert r.returncode == 0, r.stderr
    assert seen == ["load", "warmup", "run"]
    assert json.loads(out.read_text())["run"]["operations"] == 2000
    bad = opts.replace(f"ac_driver_gate={prefix}", f"ac_driver_gate={tmp_path}/no/such/dir/gate")
    r = subprocess.run([str(BIN), "-u", "root", "-m", "64", "-o", bad], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert not (tmp_path / "spill").exists()            # the spill directory is removed on the way out
    assert f"memcached-ac: ac_driver_gate: cannot write {tmp_path}/no/such/dir/gate.phase: No such file or directory" \
        in r.stderr
