"""acplot.readcount: window 0 of a process against its windows pooled (hdd-reads-check.toml,
fig3-reads-check.toml)."""
from __future__ import annotations

import pandas as pd
import pytest

from acplot.loss import ResultsError
from acplot.readcount import main, markdown, pool_table


def process(name: str, tputs: list[float], hits: list[float], ops: int = 25000) -> list[dict]:
    return [{"cell_id": f"{name}_r{k}", "approach": name, "zipf_theta": 0.99, "mem_ratio": 0.25, "run_window": k,
             "window_of": f"{name}_r0", "operations": ops, "run_duration_s": ops / t, "throughput_ops_s": t,
             "hit_rate": h, "status": "ok"} for k, (t, h) in enumerate(zip(tputs, hits))]


def test_pool_and_verdicts() -> None:
    df = pd.DataFrame(process("lru", [100.0, 102.0, 98.0, 100.0], [0.80, 0.81, 0.79, 0.80])
                      + process("ospaging", [130.0, 100.0, 100.0, 100.0], [0.70, 0.70, 0.70, 0.70]))
    t = pool_table(df).set_index(["approach", "figure"])
    lru = t.loc[("lru", "throughput_ops_s")]
    # pooled: 100,000 reads over 250 + 245.098 + 255.102 + 250 s
    assert lru["pool"] == pytest.approx(100000 / (250 + 25000 / 102 + 25000 / 98 + 250))
    assert lru["windows"] == 4 and lru["reads per window"] == 25000 and lru["agrees"]
    assert lru["windows mean"].mean == pytest.approx(100.0)
    assert lru["variation"] == pytest.approx(100 * pd.Series([100.0, 102.0, 98.0, 100.0]).std() / 100.0)
    osp = t.loc[("ospaging", "throughput_ops_s")]      # window 0 22 % above the pool, 14 % variation
    assert not osp["agrees"] and osp["window 0 − pool"] == pytest.approx(100 * (130 - osp["pool"]) / osp["pool"])
    assert osp["variation"] == pytest.approx(100 * 15.0 / 107.5) and osp["unit"] == "%"
    # hit rates in points: lru's windows 80/81/79/80 % pool at 80 %, window 0 on it, sd 0.816 points
    lh = t.loc[("lru", "hit_rate")]
    assert lh["pool"] == pytest.approx(80.0) and lh["window 0 − pool"] == pytest.approx(0.0) and lh["unit"] == "pp"
    assert lh["variation"] == pytest.approx(pd.Series([80.0, 81.0, 79.0, 80.0]).std())
    assert not lh["agrees"] and t.loc[("ospaging", "hit_rate"), "agrees"]   # 0.82 points > 0.2; 0 <= 0.2
    # window 0 at 103, the rest at 100: 2.2 % above the pool, 1.5 % variation: within 3 %, not 2 %
    flat = pd.DataFrame(process("lru", [103.0, 100.0, 100.0, 100.0], [0.8] * 4))
    assert bool(pool_table(flat).set_index("figure").loc["throughput_ops_s", "agrees"]) is True
    assert bool(pool_table(flat, 0.02).set_index("figure").loc["throughput_ops_s", "agrees"]) is False
    assert bool(pool_table(df, hit_tolerance_pp=1.0).set_index(["approach", "figure"]).loc[("lru", "hit_rate"), "agrees"])
    md = markdown(t.reset_index())
    assert "| lru | 0.99 | 0.25 | throughput (ops/s) | 4 × 25,000 | 100 | +100.00 [+97.40, +102.60] | 99.98 | +0.02 % | " \
        "1.63 % | yes |" in md, md
    assert "| lru | 0.99 | 0.25 | hit rate (%) | 4 × 25,000 | 80 | +80.00 [+78.70, +81.30] | 80 | +0.00 pp | 0.82 pp | " \
        "**no** |" in md, md
    # fig3's check: 2 windows of 1M reads, hit rates 0.84540 and 0.84573: window 0 0.0165 points under the pool
    two = pool_table(pd.DataFrame(process("lru", [390000.0, 380000.0], [0.84540, 0.84573], ops=1000000)))
    h2 = two.set_index("figure").loc["hit_rate"]
    assert h2["window 0 − pool"] == pytest.approx(-0.0165) and h2["agrees"] and h2["reads per window"] == 1000000


def test_first_windows_pooled() -> None:
    """--first 2: windows 0 and 1 as one run (50,000 reads) against the pool of all four."""
    df = pd.DataFrame(process("ospaging", [90.0, 110.0, 100.0, 100.0], [0.70, 0.72, 0.71, 0.71]))
    t = pool_table(df, first=2).set_index("figure")
    head = 50000 / (25000 / 90 + 25000 / 110)           # 99.0: two windows' operations over their time
    pool = 100000 / (25000 / 90 + 25000 / 110 + 250 + 250)
    assert t.loc["throughput_ops_s", "window 0"] == pytest.approx(head)
    assert t.loc["throughput_ops_s", "window 0 − pool"] == pytest.approx(100 * (head - pool) / pool)
    assert t.loc["hit_rate", "window 0"] == pytest.approx(71.0) and t.loc["hit_rate", "window 0 − pool"] == pytest.approx(0.0)
    assert "| ospaging | 0.99 | 0.25 | hit rate (%) | 4 × 25,000 | 71 |" in markdown(t.reset_index())
    assert "windows 0–1 pooled − pool" in markdown(t.reset_index())
    with pytest.raises(ResultsError, match="no process with windows 0 to 3 and a later window"):
        pool_table(df, first=4)


def test_refusals(tmp_path) -> None:
    with pytest.raises(ResultsError, match="rows lack run_window, window_of"):
        pool_table(pd.DataFrame({"approach": ["lru"], "zipf_theta": [0.9], "mem_ratio": [0.5], "operations": [1],
                                 "run_duration_s": [1.0], "throughput_ops_s": [1.0], "hit_rate": [0.5]}))
    separate = pd.DataFrame(process("lru", [1.0, 1.0], [0.5, 0.5])).assign(window_of=None)
    with pytest.raises(ResultsError, match="no rows of a windows process"):
        pool_table(separate)
    f = tmp_path / "cells.csv"
    pd.DataFrame(process("lru", [100.0, 100.0], [0.5, 0.5])).to_csv(f, index=False)
    assert main([str(f)]) == 0
    assert main([str(tmp_path / "none.csv")]) == 2
    with pytest.raises(SystemExit):
        main([str(f), "--hit-tolerance", "-1"])
    with pytest.raises(SystemExit):
        main([str(f), "--first", "0"])
