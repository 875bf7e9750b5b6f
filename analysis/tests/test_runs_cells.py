"""acplot.runs (input/output of a notebook) and acplot.cells (per-slice means)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from acplot import ResultsError
from acplot.cells import approach_order, by_cell, hit_rates, slice_means
from acplot.runs import describe_run, figures_dir, load_run, require


def rows() -> pd.DataFrame:
    return pd.DataFrame([
        {"approach": "logging", "workload": "C", "zipf_theta": 0.99, "mem_ratio": 0.5, "hits": 60, "disk_hits": 40,
         "misses": 0, "status": "ok"},
        {"approach": "lru", "workload": "C", "zipf_theta": 0.99, "mem_ratio": 0.5, "hits": 80, "disk_hits": 20,
         "misses": 0, "status": "ok"},
        {"approach": "lru", "workload": "C", "zipf_theta": 0.99, "mem_ratio": 0.5, "hits": 70, "disk_hits": 30,
         "misses": 0, "status": "ok"},
        {"approach": "memcached", "workload": "C", "zipf_theta": 0.5, "mem_ratio": 0.5, "hits": 50, "disk_hits": 0,
         "misses": 50, "status": "ok"},
        {"approach": "lru", "workload": "C", "zipf_theta": 0.5, "mem_ratio": 0.5, "hits": 0, "disk_hits": 0,
         "misses": 0, "status": "oom_killed"},
    ])


def test_load_run_parquet_csv_and_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows().to_csv(tmp_path / "cells.csv", index=False)
    monkeypatch.setenv("ACBENCH_RESULTS", str(tmp_path))
    df = load_run()
    assert len(df) == 4 and set(df["status"]) == {"ok"}            # the oom_killed row is left out
    rows().assign(hits=1).to_parquet(tmp_path / "cells.parquet")   # parquet wins over csv
    assert (load_run(tmp_path)["hits"] == 1).all()
    assert len(load_run(tmp_path / "cells.csv")) == 4


def test_load_run_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACBENCH_RESULTS", raising=False)
    with pytest.raises(ResultsError, match="^ACBENCH_RESULTS is not set"):
        load_run()
    with pytest.raises(ResultsError, match="no cells.parquet or cells.csv"):
        load_run(tmp_path)
    with pytest.raises(ResultsError, match="no such file or directory"):
        load_run(tmp_path / "nope")
    rows().head(0).to_csv(tmp_path / "cells.csv", index=False)
    with pytest.raises(ResultsError, match="no rows with status ok"):
        load_run(tmp_path)
    with pytest.raises(ResultsError, match="^results lack column\\(s\\) x, y needed for Fig 9$"):
        require(rows(), ["hits", "x", "y"], "Fig 9")


def test_figures_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACBENCH_FIGURES", raising=False)
    with pytest.raises(ResultsError, match="^ACBENCH_FIGURES is not set"):
        figures_dir()
    monkeypatch.setenv("ACBENCH_FIGURES", str(tmp_path / "a" / "b"))
    assert figures_dir() == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()


def test_hit_rates_and_slices() -> None:
    df = rows()
    df = df[df["status"] == "ok"]
    assert hit_rates(df).tolist() == [0.6, 0.8, 0.7, 0.5]           # memcached's misses count as reads
    with pytest.raises(ResultsError, match="rows with no reads have no hit rate: lru"):
        hit_rates(rows())
    t = slice_means(df.assign(hr=hit_rates(df)), "hr")
    # harness order: memcached, lru, ..., logging; θ from high to low; repetitions averaged
    assert list(t.columns) == ["memcached", "lru", "logging"]
    assert t.index.tolist() == [("C", 0.99, 0.5), ("C", 0.5, 0.5)]
    assert t.loc[("C", 0.99, 0.5), "lru"] == pytest.approx(0.75)
    assert pd.isna(t.loc[("C", 0.99, 0.5), "memcached"])
    b = by_cell(df.assign(hr=hit_rates(df)), "hr")
    assert b.index.tolist() == [("C", "memcached"), ("C", "lru"), ("C", "logging")]
    assert list(b.columns) == [(0.99, 0.5), (0.5, 0.5)]
    assert b.loc[("C", "lru"), (0.99, 0.5)] == pytest.approx(0.75)
    assert approach_order(["zz", "logging", "aa", "lru"]) == ["lru", "logging", "aa", "zz"]


def test_describe_run() -> None:
    d = describe_run(rows().assign(date=["2026-01-02", "2026-01-01", "2026-01-03", "2026-01-01", "x"]).head(4))
    assert d["θ"] == "0.5, 0.99" and d["approaches"] == "logging, lru, memcached" and d["cells"] == "4"
    assert d["date"] == "2026-01-01 .. 2026-01-03" and d["records"] == "–" and d["machines"] == "–"
    two = rows().head(4).assign(cpu_model="AMD EPYC", cpus=2.0, kernel=["k1", "k1", "k2", "k2"],
                                spec=["fig4-paper", "fig4-paper", "fig4-paper-hdd", "fig3-paper-rw"])
    assert describe_run(two)["machines"] == ("AMD EPYC, 2 cpus, kernel k1 (fig4-paper); "
                                             "AMD EPYC, 2 cpus, kernel k2 (fig3-paper-rw, fig4-paper-hdd)")
    assert describe_run(two.assign(kernel="k1"))["machines"] == "AMD EPYC, 2 cpus, kernel k1"


def test_several_runs_and_disk_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ACBENCH_RESULTS=A:B reads both runs; disk_rows keeps the rows that did not run on the RAM device
    (rows without spill_device are the disk's)."""
    from acplot.runs import disk_rows
    (tmp_path / "ram").mkdir()
    (tmp_path / "disk").mkdir()
    rows().assign(spill_device="ram").to_csv(tmp_path / "ram" / "cells.csv", index=False)
    rows().assign(spill_device="disk").to_parquet(tmp_path / "disk" / "cells.parquet")
    monkeypatch.setenv("ACBENCH_RESULTS", f"{tmp_path / 'ram'}:{tmp_path / 'disk'}")
    both = load_run()
    assert len(both) == 8 and list(both["spill_device"]) == ["ram"] * 4 + ["disk"] * 4
    assert list(disk_rows(both).index) == [0, 1, 2, 3] and set(disk_rows(both)["spill_device"]) == {"disk"}
    assert disk_rows(both[both["spill_device"] == "ram"]).empty
    assert len(disk_rows(rows())) == len(rows())
    with pytest.raises(ResultsError, match="nope: no such file or directory"):
        load_run(f"{tmp_path / 'ram'}:{tmp_path / 'nope'}")


def test_hit_rate_rows_one_per_cell() -> None:
    """A cell that ran on both devices counts once for hit rates: its RAM-device row; a cell only on
    the disk keeps its row; rows without a device column pass as they are."""
    from acplot.runs import hit_rate_rows
    ram = pd.DataFrame({"cell_id": ["a", "b"], "spill_device": ["ram", "ram"], "hits": [1, 2]})
    disk = pd.DataFrame({"cell_id": ["a", "b", "c"], "spill_device": ["disk", "disk", "disk"], "hits": [10, 20, 30]})
    both = hit_rate_rows(pd.concat([disk, ram], ignore_index=True))
    assert sorted(zip(both["cell_id"], both["hits"])) == [("a", 1), ("b", 2), ("c", 30)]
    assert hit_rate_rows(disk).equals(disk) and hit_rate_rows(rows()).equals(rows())
    # the emulated hard disk's rows serve times only; rows without a regime ran native
    hdd = disk.assign(regime=["native", None, "hdd"])
    assert list(hit_rate_rows(hdd)["cell_id"]) == ["a", "b"]


def test_shortage_rows_leave_the_in_memory_cells_out() -> None:
    """The figures plot the cells whose data does not fit (M/D < 1); M/D 1 and above are left out."""
    from acplot.runs import shortage_rows
    df = pd.DataFrame({"cell_id": ["a", "b", "c", "d"], "mem_ratio": [0.25, 0.75, 1.0, 1.25]})
    assert list(shortage_rows(df)["cell_id"]) == ["a", "b"]
    assert shortage_rows(df.drop(columns="mem_ratio")).equals(df.drop(columns="mem_ratio"))


def test_device_pairs_and_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acplot.devices import check_path, device_pairs, summary
    base = {"approach": "lru", "zipf_theta": 0.99, "mem_ratio": 0.5, "disk_hits": 0, "misses": 0}
    df = pd.DataFrame([
        {**base, "cell_id": "a", "spill_device": "ram", "hits": 900, "disk_hits": 100, "cell_wall_s": 10.0},
        {**base, "cell_id": "a", "spill_device": "disk", "hits": 899, "disk_hits": 101, "cell_wall_s": 30.0},
        {**base, "cell_id": "b", "spill_device": "ram", "hits": 500, "disk_hits": 500, "cell_wall_s": 20.0,
         "zipf_theta": 0.5},
        {**base, "cell_id": "b", "spill_device": None, "hits": 503, "disk_hits": 497, "cell_wall_s": 100.0,
         "zipf_theta": 0.5},
        {**base, "cell_id": "c", "spill_device": "ram", "hits": 1, "disk_hits": 1, "cell_wall_s": 1.0},
    ])
    pairs = device_pairs(df)
    assert list(pairs["cell_id"]) == ["a", "b"]
    assert pairs["diff_pp"].round(6).tolist() == [0.1, -0.3]
    assert summary(pairs) == ("2 cells on both devices: hit rates differ by 0.3000 pp at most (lru θ 0.5 M/D 0.5), "
                              "by 0.2000 pp in the median; a cell takes 4.0× as long on the disk (median)")
    assert summary(device_pairs(df[df["spill_device"] == "ram"])) == "no cell ran on both the RAM device and the disk"
    monkeypatch.setenv("ACBENCH_DEVICE_CHECK", str(tmp_path))
    assert check_path() == tmp_path
    monkeypatch.delenv("ACBENCH_DEVICE_CHECK")
    assert check_path(tmp_path) is None


def test_ycsb_rows_one_per_configuration_and_figure_rows() -> None:
    """Rows over text values are left out; a configuration two grids both ran counts once (the row
    read first); the figures also leave out the harness's variants (figures = False) and M/D ≥ 1."""
    from acplot.runs import figure_rows, ycsb_rows
    base = {"workload": "readonly", "zipf_theta": 0.99, "repetition": 0, "spill_device": "disk",
            "p_recordcount": 1000}
    df = pd.DataFrame([
        {**base, "cell_id": "fig4", "approach": "lru", "mem_ratio": 0.5, "p_valuekind": None},
        {**base, "cell_id": "comp-ycsb", "approach": "lru", "mem_ratio": 0.5, "p_valuekind": "ycsb"},
        {**base, "cell_id": "comp-text", "approach": "lru", "mem_ratio": 0.5, "p_valuekind": "text"},
        {**base, "cell_id": "lz4", "approach": "lru-lz4", "mem_ratio": 0.5, "p_valuekind": "ycsb"},
        {**base, "cell_id": "rep1", "approach": "lru", "mem_ratio": 0.5, "repetition": 1, "p_valuekind": None},
        {**base, "cell_id": "other-n", "approach": "lru", "mem_ratio": 0.5, "p_recordcount": 2000},
        {**base, "cell_id": "inmem", "approach": "memcached", "mem_ratio": 1.25},
    ])
    assert list(ycsb_rows(df)["cell_id"]) == ["fig4", "lz4", "rep1", "other-n", "inmem"]
    assert list(figure_rows(df)["cell_id"]) == ["fig4", "rep1", "other-n"]
    # without the column every row is YCSB's: the three lru rows at repetition 0 are one configuration
    assert list(ycsb_rows(df.drop(columns=["p_valuekind"]))["cell_id"]) == ["fig4", "lz4", "rep1", "other-n", "inmem"]
    assert ycsb_rows(df.iloc[:0]).empty and list(ycsb_rows(df[["cell_id"]])["cell_id"]) == list(df["cell_id"])


def test_throughput_of_hosts_that_differ_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """disk_rows refuses rows of hosts whose machine facts differ (kernel, CPU, cores, or disk IOPS
    beyond 25 %), naming them, unless ACBENCH_MIXED_HOSTS=1 or mixed_hosts=True; hosts alike pass."""
    from acplot.runs import ResultsError, disk_rows
    monkeypatch.delenv("ACBENCH_MIXED_HOSTS", raising=False)
    alike = rows().assign(host=["a", "a", "b", "b", "b"], kernel="6.18.0", cpu_model="EPYC", cpus=2,
                          disk_iops=[20000.0, 20000.0, 24000.0, 24000.0, 24000.0])
    assert len(disk_rows(alike)) == 5
    slower = alike.assign(disk_iops=[20000.0, 20000.0, 150.0, 150.0, 150.0])
    with pytest.raises(ResultsError, match=r"from 2 machines whose facts differ in disk_iops \(a: disk_iops "
                                           r"20000.0; b: disk_iops 150.0\).*set ACBENCH_MIXED_HOSTS=1"):
        disk_rows(slower)
    other = alike.assign(kernel=["6.18.0", "6.18.0", "6.1.0", "6.1.0", "6.1.0"], cpus=[2, 2, 8, 8, 8])
    with pytest.raises(ResultsError, match=r"differ in kernel, cpus \(a: kernel 6.18.0, cpus 2; b: kernel 6.1.0, cpus 8\)"):
        disk_rows(other)
    assert len(disk_rows(other, mixed_hosts=True)) == 5
    # one host name on two CPUs (a VM started on another host): two machines, refused
    moved = alike.assign(host="vm", cpu_model=["AMD EPYC", "AMD EPYC", "Intel Xeon", "Intel Xeon", "Intel Xeon"])
    with pytest.raises(ResultsError, match=r"from 2 machines whose facts differ in cpu_model \(vm: cpu_model "
                                           r"AMD EPYC; vm: cpu_model Intel Xeon\)"):
        disk_rows(moved)
    # a fact read back as a float is the same count; a gap (an older row) is no fact
    assert len(disk_rows(alike.assign(cpus=[2.0, 2.0, 2.0, 2.0, None]))) == 5
    assert len(disk_rows(alike.assign(cpu_model=["EPYC", None, "EPYC", "EPYC", "EPYC"]))) == 5
    monkeypatch.setenv("ACBENCH_MIXED_HOSTS", "1")
    assert len(disk_rows(slower)) == 5


def test_grids_compared_only_within_their_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grids from two machines pass when no slice joins them (each grid's rows from one machine);
    a grid sharing a slice with another, directly or through a third, must share its machine."""
    from acplot.runs import ResultsError, comparison_groups, disk_rows
    monkeypatch.delenv("ACBENCH_MIXED_HOSTS", raising=False)
    base = rows().iloc[:4].assign(host="vm", cpu_model="EPYC", cpus=2)
    a = base.assign(spec="fig4-paper", kernel="k1")                           # θ 0.99 and 0.5, M/D 1/2
    hdd = base.assign(spec="fig4-paper-hdd", kernel="k2", regime="hdd")       # the same slices, another regime
    rw = base.assign(spec="fig3-paper-rw", kernel="k2", workload="readheavy")
    both = pd.concat([a.assign(regime="native"), hdd, rw], ignore_index=True)
    assert len(disk_rows(both)) == 12
    assert comparison_groups(both).nunique() == 3
    # a grid that shares θ 0.5's slice with fig4-paper, on the other kernel: refused, both named
    blocks = base.iloc[3:].assign(spec="blocks-paper", kernel="k2", regime="native", approach="lru-block-merge")
    with pytest.raises(ResultsError, match=r"rows of blocks-paper, fig4-paper come from 2 machines whose facts "
                                           r"differ in kernel \(vm: kernel k1; vm: kernel k2\)"):
        disk_rows(pd.concat([both, blocks], ignore_index=True))
    # joined through a third grid: fig3-paper shares θ 0.99 with fig4-paper and M/D 1/4 with blocks-paper
    far = base.iloc[3:].assign(spec="blocks-paper", kernel="k2", regime="native", mem_ratio=0.25)
    assert len(disk_rows(pd.concat([both, far], ignore_index=True))) == 13
    link = pd.concat([base.iloc[:1], base.iloc[3:].assign(mem_ratio=0.25)]).assign(spec="fig3-paper", kernel="k1",
                                                                                     regime="native")
    with pytest.raises(ResultsError, match=r"rows of blocks-paper, fig3-paper, fig4-paper come from 2 machines"):
        disk_rows(pd.concat([both, far, link], ignore_index=True))
