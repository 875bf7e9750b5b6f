"""acplot.rerun: the old-vs-new table of a rerun (experiments/results/faithful-paper/README.md)."""
import math

import pandas as pd
import pytest

from acplot.loss import ResultsError
from acplot.rerun import main, rerun_table, to_markdown

MIB = 1 << 20


def _row(approach, theta, ratio, hit, loss, **kw):
    row = {"approach": approach, "zipf_theta": theta, "mem_ratio": ratio, "status": "ok", "hit_rate": hit,
           "loss_pp": loss, "cgroup_limit_bytes": 100 * MIB, "disk_hits": 1000}
    row.update(kw)
    return row


OLD = pd.DataFrame([
    _row("lru", 0.99, 0.5, 0.91, 8.0),
    _row("effpaging", 0.99, 0.5, 0.69, 30.0, major_faults=3000),
    _row("logging", 0.99, 0.5, 0.88, 11.0, major_faults=0, cgroup_limit_bytes=90 * MIB),
])
NEW = pd.DataFrame([
    _row("effpaging", 0.99, 0.5, 0.80, 19.0, request_major_faults=1200, major_faults=1500,
         loss_lru_pp=8.6, loss_overhead_pp=1.0, loss_policy_pp=9.4, unattributed_major_faults=300),
    _row("effpaging{ac_eff_lock=0.7}", 0.99, 0.5, 0.82, 17.0, request_major_faults=1100,
         loss_lru_pp=8.6, loss_overhead_pp=2.0, loss_policy_pp=6.4, unattributed_major_faults=0),
    _row("logging-buffer", 0.99, 0.5, 0.89, 10.5, request_major_faults=0, offline_bytes=80 * MIB,
         loss_lru_pp=8.6, loss_overhead_pp=1.2, loss_policy_pp=0.7, unattributed_major_faults=0),
    {"approach": "effpaging", "zipf_theta": 0.25, "mem_ratio": 0.5, "status": "oom_killed"},
])


def test_each_new_cell_against_its_old_row_variant_and_named_substitute():
    t = rerun_table(OLD, NEW, {"logging-buffer": "logging"}).set_index(["approach", "θ"])
    e = t.loc[("effpaging", 0.99)]
    assert (e["hit old"], e["hit new"], e["lru old"], e["loss old"], e["loss new"]) == (0.69, 0.80, 0.91, 30.0, 19.0)
    assert e["faults/dh old"] == 3.0 and e["faults/dh new"] == 1.2     # old: every fault; new: requests'
    assert e["unattr faults"] == 300 and e["limit new MiB"] == 100.0
    v = t.loc[("effpaging{ac_eff_lock=0.7}", 0.99)]
    assert v["hit old"] == 0.69 and v["policy part"] == 6.4             # a variant: its base's old row
    b = t.loc[("logging-buffer", 0.99)]
    assert b["hit old"] == 0.88 and b["limit old MiB"] == 90.0 and b["beside MiB"] == 80.0
    k = t.loc[("effpaging", 0.25)]
    assert k["status"] == "oom_killed" and math.isnan(k["hit new"]) and math.isnan(k["hit old"])


def test_markdown_rows_and_dashes_for_missing_values():
    md = to_markdown(rerun_table(OLD, NEW, {"logging-buffer": "logging"}))
    lines = md.splitlines()
    assert lines[0].startswith("| approach | θ | M/D | status | hit old | hit new |")
    assert len(lines) == 2 + 4
    assert "| effpaging | 0.250 | 0.500 | oom_killed | – | – |" in md
    assert "| effpaging | 0.990 | 0.500 | ok | 0.690 | 0.800 | 0.910 | 30.00 | 19.00 |" in md


def test_errors_name_what_is_wrong(tmp_path, capsys):
    with pytest.raises(ResultsError, match="new rows lack zipf_theta"):
        rerun_table(OLD, pd.DataFrame([{"approach": "lru", "mem_ratio": 0.5}]))
    OLD.to_csv(tmp_path / "old.csv", index=False)
    NEW.to_csv(tmp_path / "new.csv", index=False)
    assert main([str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--old-as", "logging-buffer=logging"]) == 0
    out = capsys.readouterr().out
    assert "| logging-buffer | 0.990 | 0.500 | ok | 0.880 | 0.890 | 0.910 | 11.00 | 10.50 |" in out and "oom_killed" in out
    with pytest.raises(SystemExit):
        main([str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--old-as", "nonsense"])
    assert "expected NEW=OLD" in capsys.readouterr().err
