"""acplot.windows: Welch's interval against a hand computation, and the table of two modes' rows."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from acplot.windows import markdown, welch, windows_table


def test_welch_by_hand() -> None:
    # [2, 3, 4] − [1, 2, 3]: difference 1, s² = 1 each, se = √(1/3 + 1/3) = 0.8165, Welch–Satterthwaite
    # dof = (2/3)² / ((1/3)²/2 + (1/3)²/2) = 4, t(4) = 2.776: half-width 2.2666
    d = welch([2, 3, 4], [1, 2, 3])
    assert d.mean == pytest.approx(1.0) and d.n == 6
    assert d.hi - d.mean == pytest.approx(2.776 * math.sqrt(2 / 3), rel=1e-9)
    assert d.mean - d.lo == pytest.approx(2.2666, abs=1e-4)
    # unequal spreads: dof 2.03 -> 2, t(2) = 4.303, se = √(4/3 + 0.01/3)
    u = welch([1, 3, 5], [2.9, 3.0, 3.1])
    assert u.mean == pytest.approx(0.0, abs=1e-12)
    assert u.hi == pytest.approx(4.303 * math.sqrt(4 / 3 + 0.01 / 3), rel=1e-9)
    one = welch([5.0], [1, 2, 3])
    assert one.mean == pytest.approx(3.0) and math.isnan(one.lo) and one.n == 1
    same = welch([2, 2], [1, 1])
    assert (same.lo, same.hi) == (1.0, 1.0)
    with pytest.raises(ValueError):
        welch([], [1.0])


def rows(hits: list[float], tput: list[float], approach: str = "lru") -> pd.DataFrame:
    return pd.DataFrame({"approach": approach, "zipf_theta": 0.99, "mem_ratio": 0.25, "repetition": range(len(hits)),
                         "hit_rate": hits, "throughput_ops_s": tput, "status": "ok"})


def test_table_flags_only_a_difference_outside_the_noise() -> None:
    sep = pd.concat([rows([0.80, 0.81, 0.82], [1000, 1100, 1200]), rows([0.5, 0.5, 0.5], [1, 1, 1], "alru")])
    win = pd.concat([rows([0.80, 0.815, 0.83], [1000, 1000, 1300]), rows([0.6, 0.61, 0.62], [1, 1, 1], "alru")])
    t = windows_table(sep, win).set_index(["approach", "figure"])
    lru = t.loc[("lru", "hit rate")]
    assert not lru["differs"] and lru["windows − separate"].mean == pytest.approx(0.5)
    assert lru["separate"].mean == pytest.approx(81.0) and lru["r0 windows − separate"] == pytest.approx(0.0)
    assert lru["sd ratio"] == pytest.approx(1.5)              # sd 1.5 pp against 1 pp
    assert math.isnan(t.loc[("alru", "hit rate"), "sd ratio"])   # no spread among the separate runs
    assert t.loc[("lru", "throughput"), "windows − separate"].mean == pytest.approx(0.0)
    assert t.loc[("alru", "hit rate"), "differs"]            # 11 pp apart, no spread on one side
    assert t.loc[("alru", "hit rate"), "r0 windows − separate"] == pytest.approx(10.0)
    text = markdown(windows_table(sep, win))
    assert "| lru | 0.99 | 0.25 | hit rate (%) | +81.00 [+78.52, +83.48] |" in text
    assert "**differs**" in text.split("| alru |")[1]
    # a cell only one mode ran is left out
    assert windows_table(sep, win[win["approach"] == "lru"])["approach"].unique().tolist() == ["lru"]
