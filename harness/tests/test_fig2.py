"""`acbench fig2` on a tiny real run (memcached-ac in-process, valgrind's callgrind): one row per
method, overheads against the baseline, what each method's server reported, the figure; and the
refusals of bad arguments. Also the callgrind parser and the overhead arithmetic."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from acbench import fig2

METHODS = "none,lru,alru,alru-clock,vma"


def acbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acbench", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("fig2")
    cp = acbench("fig2", "--out", str(out), "--records", "2000", "--reads", "20000", "--cg-reads", "5000",
                 "--repeats", "2", "--methods", METHODS)
    return out, cp


def test_rows_and_overheads(tiny: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, cp = tiny
    assert cp.returncode == 0, cp.stderr
    df = pd.read_csv(out / "fig2.csv").set_index("tracking_method")
    assert list(df.index) == METHODS.split(",")
    assert (df["records"] == 2000).all() and (df["cg_reads"] == 5000).all() and (df["repeats"] == 2).all()
    assert df["counter_source"].str.startswith("callgrind cache simulation: I1 32 KiB 8-way").all()
    for short, col in fig2.METRICS:
        assert df.loc["none", f"{short}_overhead_pct"] == 0.0
        assert (df[col] > 0).all() or short == "l1i", col
    # an exact LRU moves the item on every access: more instructions than stock memcached
    assert df.loc["lru", "instructions_per_access"] > 1.05 * df.loc["none", "instructions_per_access"]
    lru_pct = 100 * (df.loc["lru", "instructions_per_access"] / df.loc["none", "instructions_per_access"] - 1)
    assert math.isclose(df.loc["lru", "instructions_overhead_pct"], lru_pct, rel_tol=1e-9)
    # two timed runs per method, their median reported
    runs = pd.read_csv(out / "fig2-runs.csv")
    assert len(runs) == 2 * len(df)
    for m, r in runs.groupby("tracking_method"):
        assert math.isclose(df.loc[m, "ns_per_access"], r["ns_per_access"].median(), rel_tol=1e-9)
    for name in METHODS.split(","):
        assert (out / "callgrind" / f"{name}.out").stat().st_size > 0
    assert (out / "fig2.png").stat().st_size > 0 and (out / "fig2.pdf").stat().st_size > 0


def test_servers_ran_the_methods(tiny: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, cp = tiny
    assert cp.returncode == 0, cp.stderr

    def anticache(m: str) -> dict:
        return json.loads((out / f"{m}.json").read_text())["server"]["anticache"]
    assert anticache("alru")["alru_clock_source"] == "timer"
    assert anticache("alru")["alru_resolution_ns"] == 1000 and anticache("alru")["alru_timer_ticks"] > 0
    assert anticache("alru-clock")["alru_clock_source"] == "access"
    assert anticache("alru-clock")["alru_timer_ticks"] == 0
    vma = anticache("vma")
    assert vma["policy"] == "vma" and vma["vma_granule_bytes"] == 4096 and vma["vma_reset_ns"] == 10**9
    assert vma["vma_faults"] > 0                      # the load wrote every granule it used
    for m in METHODS.split(","):
        a = anticache(m)
        assert a.get("spilled_items", 0) == 0 and a.get("lost_items", 0) == 0


def test_bad_arguments() -> None:
    cp = acbench("fig2", "--methods", "none,lru,mprotect")
    assert cp.returncode == 2
    assert "unknown tracking method(s) mprotect; known: none, lru, alru, alru-redis" in cp.stderr
    cp = acbench("fig2", "--methods", "lru,vma")
    assert cp.returncode == 2
    assert "the methods must include none (the baseline every overhead is relative to)" in cp.stderr
    cp = acbench("fig2", "--records", "10")
    assert cp.returncode == 2 and "--records must be at least 100, got 10" in cp.stderr
    cp = acbench("fig2", "--theta", "0")
    assert cp.returncode == 2 and "--theta must be in (0, 10], got 0.0" in cp.stderr


def test_parse_callgrind(tmp_path: Path) -> None:
    p = tmp_path / "cg.out"
    p.write_text("version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nfn=x\n1 2\n"
                 "summary: 1000 200 100 3 40 5 1 2 0\ntotals: 1000 200 100 3 40 5 1 2 0\n")
    assert fig2.parse_callgrind(p) == {"Ir": 1000, "Dr": 200, "Dw": 100, "I1mr": 3, "D1mr": 40, "D1mw": 5,
                                       "ILmr": 1, "DLmr": 2, "DLmw": 0}
    p.write_text("not callgrind\n")
    with pytest.raises(fig2.Fig2Error, match="no events/totals lines"):
        fig2.parse_callgrind(p)


def test_overheads() -> None:
    rows = [{"tracking_method": "none", "instructions_per_access": 500.0, "l1i_misses_per_access": 0.0,
             "l1d_misses_per_access": 10.0, "ns_per_access": 100.0},
            {"tracking_method": "lru", "instructions_per_access": 650.0, "l1i_misses_per_access": 0.5,
             "l1d_misses_per_access": 12.0, "ns_per_access": 250.0}]
    lru = fig2.overheads(rows)[1]
    assert lru["instructions_overhead_pct"] == 30.0 and lru["l1d_overhead_pct"] == 20.0
    assert lru["time_overhead_pct"] == 150.0
    assert math.isnan(lru["l1i_overhead_pct"])       # no baseline misses: no ratio
    with pytest.raises(fig2.Fig2Error, match="no row of the baseline"):
        fig2.overheads(rows[1:])


def test_vma_granule_fits_the_map_count() -> None:
    room = fig2.max_map_count() - 4096
    for mb in (64, 217, 1700, 20000):
        g = fig2.vma_granule(mb)
        assert g >= 4096 and g & (g - 1) == 0
        assert math.ceil((mb + fig2.VMA_HEADROOM_MB) * fig2.MIB / g) <= room
        assert g == 4096 or math.ceil((mb + fig2.VMA_HEADROOM_MB) * fig2.MIB / (g // 2)) > room
