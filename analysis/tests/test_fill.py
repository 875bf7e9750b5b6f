"""acplot.fill: logging-buffer's fill table from rows with known values, and the error for rows that
are not acbench's."""
import pandas as pd
import pytest

from acplot.fill import fill_table, main, markdown
from acplot.loss import ResultsError


def rows() -> pd.DataFrame:
    out = []
    for rep, (resident, hit) in enumerate([(900, 0.80), (950, 0.82), (1000, 0.84)]):
        out.append({"approach": "logging-buffer{ac_log_hot_fill=1}", "workload": "readonly", "zipf_theta": 0.99,
                    "mem_ratio": 0.5, "repetition": rep, "resident_items_avg": resident, "opt_capacity": 1000,
                    "hit_rate": hit, "opt_hit_rate": 0.9, "loss_pp": 100 * (0.9 - hit), "loss_lru_pp": 3.0,
                    "loss_overhead_pp": 4.0, "loss_policy_pp": 100 * (0.9 - hit) - 7.0, "ac_refused_items": rep,
                    "ac_log_drops": 10 * rep, "ac_log_rounds": 4 + rep, "ac_fetched_items": 100 * rep,
                    "throughput_ops_s": 1000.0 * (rep + 1)})
    out.append({**out[0], "approach": "lru", "resident_items_avg": 990, "hit_rate": 0.86, "loss_pp": 4.0,
                "ac_log_drops": float("nan"), "ac_refused_items": 0})
    return pd.DataFrame(out)


def test_fill_table_means_intervals_and_parts():
    t = fill_table(rows()).set_index("approach")
    r = t.loc["logging-buffer{ac_log_hot_fill=1}"]
    assert r["runs"] == 3 and r["R / C"].startswith("0.950 [") and r["hit"].startswith("0.8200 [")
    assert r["hit / OPT"] == f"{0.82 / 0.9:.3f}" and r["loss pp"] == "8.00"
    assert (r["lru part"], r["overhead part"], r["policy part"]) == ("3.00", "4.00", "1.00")
    assert r["refused"] == 3 and r["log drops"] == 10 and r["ops/s"] == "2,000"
    assert r["rounds"] == 5 and r["fetched"] == 100
    lru = t.loc["lru"]
    assert lru["runs"] == 1 and lru["R / C"] == "0.990" and lru["log drops"] == "" and lru["rounds"] == 4
    md = markdown(fill_table(rows()))
    assert md.splitlines()[0].startswith("| approach | workload | θ | M/D | runs | R / C |") and len(md.splitlines()) == 4


def test_rows_without_the_columns_are_refused(tmp_path, capsys):
    with pytest.raises(ResultsError, match="the rows lack resident_items_avg, opt_capacity"):
        fill_table(pd.DataFrame({"approach": ["lru"], "workload": ["readonly"], "zipf_theta": [0.99],
                                 "mem_ratio": [0.5], "hit_rate": [0.5], "opt_hit_rate": [0.6], "loss_pp": [10.0]}))
    assert main([str(tmp_path / "nothing")]) == 2
    assert "acplot.fill:" in capsys.readouterr().err
