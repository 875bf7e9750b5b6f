"""acplot.modern on hand-made rows: the loss table's means over repetitions, the best online policy
against lru (and the target judged at θ 0.99 only), extstore's table with its served share and its
drops, and the memory each kernel baseline really had."""
from __future__ import annotations

import math

import pandas as pd

from acplot import modern

MIB = 1 << 20


def _row(approach: str, theta: float, loss: float, rep: int = 0, **kw) -> dict:
    r = {"approach": approach, "workload": "readonly", "zipf_theta": theta, "mem_ratio": 0.5, "repetition": rep,
         "hit_rate": 0.9 - loss / 100, "opt_hit_rate": 0.9, "loss_pp": loss, "loss_lru_pp": 2.0,
         "loss_overhead_pp": 1.0, "loss_policy_pp": loss - 3.0, "ac_lost_items": 0, "throughput_ops_s": 1e4,
         "hits": 900, "disk_hits": 100, "misses": 0}
    r.update(kw)
    return r


def test_loss_table_means_repetitions() -> None:
    df = pd.DataFrame([_row("lru", 0.99, 4.0, 0), _row("lru", 0.99, 6.0, 1), _row("sieve", 0.99, 3.0)])
    t = modern.loss_table(df).set_index("approach")
    assert t.loc["lru", "loss_pp"] == 5.0 and t.loc["lru", "runs"] == 2
    assert t.loc["sieve", "loss_policy_pp"] == 0.0
    assert list(t.index) == ["sieve", "lru"]                 # smallest loss first within the slice


def test_best_over_lru_and_target() -> None:
    df = pd.DataFrame([_row("lru", 0.99, 6.0), _row("sieve", 0.99, 2.5), _row("s3fifo", 0.99, 3.5),
                       _row("ospaging", 0.99, 1.0),          # not an online policy of ONLINE: ignored
                       _row("lru", 0.5, 10.0), _row("wtinylfu", 0.5, 4.0),
                       _row("lru", 0.75, 0.0), _row("alru", 0.75, 1.0),
                       _row("memcached", 0.25, 3.0)])        # no lru there: no row
    b = modern.best_over_lru(df).set_index("zipf_theta")
    assert b.loc[0.99, "best"] == "sieve" and math.isclose(b.loc[0.99, "ratio"], 2.5 / 6.0)
    assert bool(b.loc[0.99, "meets_target"])
    assert b.loc[0.5, "best"] == "wtinylfu" and math.isclose(b.loc[0.5, "ratio"], 0.4)
    assert pd.isna(b.loc[0.5, "meets_target"])               # judged at θ 0.99 only
    assert pd.isna(b.loc[0.75, "ratio"])                     # lru lost nothing: no ratio
    assert 0.25 not in b.index


def test_extstore_table() -> None:
    df = pd.DataFrame([
        _row("extstore", 0.99, 20.0, hits=600, disk_hits=300, misses=100, ac_lost_items=5000, ac_ext_lost_ram=4000,
             ac_ext_lost_disk=900, ac_ext_lost_compact=100, ext_file_bytes=256 * MIB, item_memory_bytes=20 * MIB,
             cgroup_limit_bytes=40 * MIB),
        _row("lru", 0.99, 8.0, hits=800, disk_hits=200, misses=0, cgroup_limit_bytes=40 * MIB),
        _row("memcached", 0.99, 10.0, hits=850, disk_hits=0, misses=150, ac_lost_items=7000,
             cgroup_limit_bytes=40 * MIB)])
    e = modern.extstore_table(df).iloc[0]
    assert e["extstore_served"] == 0.9 and e["lru_served"] == 1.0 and e["memcached_served"] == 0.85
    assert e["extstore_lost_items"] == 5000 == e["lost_in_ram"] + e["lost_on_disk"] + e["lost_in_compaction"]
    assert e["memcached_lost_items"] == 7000 and e["lru_lost_items"] == 0
    assert e["extstore_file_mb"] == 256 and e["limit_mb"] == 40


def test_kernel_memory_had() -> None:
    df = pd.DataFrame([
        _row("ospaging", 0.99, 9.0, cgroup_limit_bytes=100 * MIB, cg_pgmajfault=10),
        _row("ospaging-psi", 0.99, 12.0, cgroup_limit_bytes=100 * MIB, psi_limit_avg_bytes=70 * MIB, cg_pgmajfault=20),
        _row("ospaging-zram", 0.99, 8.0, cgroup_limit_bytes=100 * MIB, zram_mem_used_max_bytes=30 * MIB,
             cg_pgmajfault=30)])
    k = modern.kernel_table(df).set_index("approach")
    assert k.loc["ospaging", "memory_had_mb"] == 100
    assert k.loc["ospaging-psi", "memory_had_mb"] == 70 and k.loc["ospaging-psi", "limit_mb"] == 100
    assert k.loc["ospaging-zram", "memory_had_mb"] == 130
