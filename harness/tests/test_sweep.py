"""Sensitivity sweeps (acbench/sweep.py): variants NAME{option=value} read as one option swept."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from acbench.approaches import ApproachError, lookup
from acbench.sweep import plot_sweeps, sweep_rows, sweep_table


def _rows() -> pd.DataFrame:
    rows = []
    for value, losses in (("0.5", (9.0, 20.0)), ("0.7", (6.0, 22.0)), ("0.9", (7.5, 25.0))):
        for ratio, loss in zip((0.75, 0.5), losses):
            for rep, jitter in ((0, -0.5), (1, 0.5)):
                rows.append({"approach": f"effpaging{{ac_eff_lock={value}}}", "workload": "readonly",
                             "zipf_theta": 0.99, "mem_ratio": ratio, "repetition": rep, "loss_pp": loss + jitter,
                             "status": "ok", "recordcount": 1000, "fieldcount": 1, "fieldlength": 100})
    rows.append({"approach": "lru", "workload": "readonly", "zipf_theta": 0.99, "mem_ratio": 0.5, "repetition": 0,
                 "loss_pp": 1.0, "status": "ok"})
    rows.append({"approach": "effpaging{ac_eff_lock=0.3}", "workload": "readonly", "zipf_theta": 0.99,
                 "mem_ratio": 0.5, "repetition": 0, "loss_pp": None, "status": "oom_killed"})
    return pd.DataFrame(rows)


def test_variant_approaches() -> None:
    a = lookup("effpaging{ac_eff_lock=0.7, ac_eff_hot_first=0}")
    assert a is not None and a.pages and a.flags == lookup("effpaging").flags and not a.figures
    assert a.options == {"ac_eff_lock": "0.7", "ac_eff_hot_first": "0"}
    assert lookup("lru{ac_block_size=4M}").options == {"ac_block_size": "4M"}
    with pytest.raises(ApproachError, match=r"'ac_eff_lok' is not an option of memcached-ac nor a setting of the harness; accepted: .*ac_eff_lock"):
        lookup("effpaging{ac_eff_lok=0.7}")
    with pytest.raises(ApproachError, match=r"'ac_eff_lock' is not option=value"):
        lookup("effpaging{ac_eff_lock}")
    with pytest.raises(ApproachError, match=r"unknown approach 'efpaging'"):
        lookup("efpaging{ac_eff_lock=1}")


def test_device_latency_is_the_harnesss_setting_not_the_servers() -> None:
    a = lookup("ospaging-nvmfile{device_latency=8x}")
    assert a.device_latency == "8x" and a.options == lookup("ospaging-nvmfile").options
    assert lookup("lru{device_latency=300ns, ac_block_size=4M}").options == {"ac_block_size": "4M"}
    assert lookup("ospaging-nvmfile").device_latency == ""
    with pytest.raises(ApproachError, match=r"device_latency '8'; accepted: Nx \(N times DRAM's latency per cache "
                                            r"line, N from 1 to 100, e.g. 2x, 8x\) or Nns"):
        lookup("ospaging-nvmfile{device_latency=8}")
    with pytest.raises(ApproachError, match=r"alru's cells never run on it"):
        lookup("alru{device_latency=2x}")


def test_sweep_table_best_and_spread() -> None:
    rows = sweep_rows(_rows())
    assert len(rows) == 12 and set(rows["value"]) == {0.5, 0.7, 0.9}      # lru and the killed cell left out
    t = sweep_table(_rows()).set_index("mem_ratio")
    assert (t.loc[0.75, "best_value"], t.loc[0.75, "best_loss_pp"], t.loc[0.75, "spread_pp"]) == (0.7, 6.0, 3.0)
    assert (t.loc[0.5, "best_value"], t.loc[0.5, "worst_loss_pp"], t.loc[0.5, "values"]) == (0.5, 25.0, 3)


def test_the_base_approachs_own_setting_is_a_point_of_its_sweep() -> None:
    """logging-buffer sets ac_log_hot_fill=0.9 itself: its rows are the sweep's value 0.9 beside the
    variants' 1; a base that does not set the swept option (effpaging and ac_eff_lock) stays out."""
    rows = []
    for approach, losses in (("logging-buffer", (6.0, 20.0)), ("logging-buffer{ac_log_hot_fill=1}", (5.0, 30.0)),
                             ("effpaging", (1.0, 1.0)), ("effpaging{ac_eff_lock=0.5}", (2.0, 2.0))):
        for theta, loss in zip((0.99, 0.25), losses):
            rows.append({"approach": approach, "workload": "readonly", "zipf_theta": theta, "mem_ratio": 0.5,
                         "repetition": 0, "loss_pp": loss, "status": "ok"})
    df = pd.DataFrame(rows)
    got = sweep_rows(df)
    assert sorted(set(zip(got["base"], got["value"]))) == [("effpaging", 0.5), ("logging-buffer", 0.9),
                                                          ("logging-buffer", 1.0)]
    t = sweep_table(df).set_index(["base", "zipf_theta"])
    assert t.loc[("logging-buffer", 0.99), "best_value"] == 1.0 and t.loc[("logging-buffer", 0.99), "spread_pp"] == 1.0
    assert t.loc[("logging-buffer", 0.25), "best_value"] == 0.9 and t.loc[("logging-buffer", 0.25), "values"] == 2
    # the value the cells ran with (run.json's cell settings) wins over today's table
    df3 = df.assign(cell_id=[f"c{i}" for i in range(len(df))])
    ran = {f"c{i}": {"approach.option.ac_log_hot_fill": "0.8"} for i in range(len(df))}
    got3 = sweep_rows(df3, ran)
    assert sorted(set(got3.loc[got3["base"] == "logging-buffer", "value"])) == [0.8, 1.0]
    # a variant of the base's own value: the base's rows are not counted twice
    df2 = pd.concat([df, df[df["approach"] == "logging-buffer"].assign(approach="logging-buffer{ac_log_hot_fill=0.9}")])
    assert len(sweep_rows(df2)) == len(got)


def test_plot_sweeps(tmp_path: Path) -> None:
    paths = plot_sweeps(_rows(), tmp_path)
    assert sorted(p.name for p in paths) == ["sweep-effpaging-ac_eff_lock-readonly.md",
                                             "sweep-effpaging-ac_eff_lock-readonly.pdf",
                                             "sweep-effpaging-ac_eff_lock-readonly.png"]
    md = (tmp_path / "sweep-effpaging-ac_eff_lock-readonly.md").read_text().splitlines()
    assert md[2] == "| readonly | 0.99 | 0.5 | 3 | 0.5 | 20.00 | 25.00 | 5.00 |"
    assert md[3] == "| readonly | 0.99 | 0.75 | 3 | 0.7 | 6.00 | 9.00 | 3.00 |"
    assert plot_sweeps(_rows()[lambda d: d.approach == "lru"], tmp_path / "none") == []
