"""The column dictionary (columns.py): every column the runner can write is in it, with a type and a
meaning; Parquet and CSV read back with the same types (all-null columns and text columns that look
like numbers included); rows of an older acbench are read in today's names and units; a column the
dictionary lacks is refused by name."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from acbench import cell, collect, columns, decompose, memory, runner, sysinfo
from acbench.approaches import get_approach
from acbench.results import ResultsError, RunDir, load_results
from acbench.spec import YCSB_PROPERTIES


def _producible() -> set[str]:
    """Every column name the runner's row builders can produce (each called with nothing measured)."""
    names: set[str] = set()
    names |= set(cell._driver_metrics({}, "run"))
    names |= set(cell.run_window(None))
    names |= set(runner.per_op({}))
    names |= {f"cell_{k}" for k in collect.disk_delta(None, None)}
    names |= set(collect.parse_perf(""))
    names |= set(memory.plan(get_approach("lru"), 10000, 1000, 0.5, 0).as_row())
    names |= set(decompose.decompose(1, np.zeros(1), 1, 1.0, 0.5, 1))
    names |= set(sysinfo.machine())
    # cell.py's run_cell and _finish_common, runner.build_row/failed_row and opt_columns: named in the source
    src = Path(cell.__file__).read_text() + Path(runner.__file__).read_text()
    for name in columns.SCHEMA:
        if f'"{name}"' in src:
            names.add(name)
    return names


def test_every_producible_column_is_documented() -> None:
    missing = sorted(n for n in _producible() if n not in columns.SCHEMA)
    assert not missing, f"columns without an entry in columns.py: {missing}"
    for c in columns.SCHEMA.values():
        assert c.type in columns.TYPES and c.meaning and c.source, c
        if c.name.endswith("_bytes"):
            assert c.unit == "bytes", c
        if c.name.endswith("_s") and not c.name.endswith("_ops_s"):
            assert c.unit == "s", c
        if c.name.endswith("_us"):
            assert c.unit == "us", c
        assert not c.name.endswith(("_mb", "_ms")), f"{c.name}: bytes and seconds or us, named in the column"
    # every YCSB property a spec may set has its p_ column
    assert {f"p_{k}" for k in YCSB_PROPERTIES if k not in ("zipfianconstant", "seed")} <= set(columns.SCHEMA)
    for name in columns.RUN_LEVEL:
        assert name not in columns.SCHEMA


def _row(**over: object) -> dict[str, object]:
    row: dict[str, object] = {"status": "ok", "run_id": "r", "spec": "s", "cell_id": "a", "approach": "lru",
                              "zipf_theta": 0.99, "mem_ratio": 0.5, "repetition": 0, "hits": 90, "disk_hits": 10,
                              "lat_update_p99_us": None, "ac_bloom_bytes": None, "ac_driver_depth": None,
                              "ac_policy": "lru", "reads_accounted": True, "git_revision": "0123456789ab",
                              "binary_sha256": "0000111122223333", "date": sysinfo.now(), "p_recordcount": 1000,
                              "p_requestdistribution": "truezipf", "p_readallfields": True}
    row.update(over)
    return row


def test_parquet_and_csv_have_the_same_types(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    rd.append(_row())
    rd.append(_row(cell_id="b", ac_driver_depth=8, lat_update_p99_us=12.5, ac_bloom_bytes=4096))
    pq, csv = load_results(rd.path), load_results(rd.path / "cells.csv")
    assert list(pq.columns) == list(csv.columns)
    for c in pq.columns:
        assert pq[c].dtype == csv[c].dtype, (c, pq[c].dtype, csv[c].dtype)
        assert str(pq[c].dtype) == columns.DTYPES[columns.SCHEMA[c].type], c
    pd.testing.assert_frame_equal(pq, csv)
    # the git revision "0123456789ab" is text in both, an int column holds ints (no "8.0" in the CSV)
    assert csv.loc[0, "git_revision"] == "0123456789ab"
    text = (rd.path / "cells.csv").read_text()
    assert ",8," in text and "8.0" not in text
    assert pq["date"].dt.tz is not None


def test_unknown_column_refused_by_name(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    with pytest.raises(columns.SchemaError, match=r"column\(s\) speed_mph not in the column dictionary"):
        rd.append(_row(speed_mph=3))
    with pytest.raises(columns.SchemaError, match="column hits: values are not int"):
        rd.append(_row(hits="many"))
    assert not (rd.path / "cells.parquet").exists()


def test_older_rows_read_in_todays_names_and_units(tmp_path: Path) -> None:
    old = pd.DataFrame([{"cell_id": "a", "status": "ok", "item_memory_mb": 12, "cell_disk_avg_read_latency_ms": 0.25,
                         "perf_task_clock": 1500.0, "wall_s": 3.5, "harness_version": 1, "perf_used": True,
                         "trace": "/x.actrace", "date": "2026-11-26T08:35:11+00:00"}])
    f = tmp_path / "cells.csv"
    old.to_csv(f, index=False)
    df = load_results(f)
    assert df.loc[0, "item_memory_bytes"] == 12 << 20 and df.loc[0, "cell_disk_read_latency_mean_us"] == 250.0
    assert df.loc[0, "perf_task_clock_s"] == 1.5 and df.loc[0, "cell_wall_s"] == 3.5
    for gone in ("item_memory_mb", "wall_s", "harness_version", "perf_used", "trace"):
        assert gone not in df.columns
    assert df.loc[0, "date"] == pd.Timestamp("2026-11-26T08:35:11Z")
    f.write_text("cell_id,hits\na,lots\n")
    with pytest.raises(ResultsError, match="column hits: values are not int"):
        load_results(f)


def test_committed_results_have_no_unknown_column() -> None:
    top = Path(__file__).resolve().parents[2] / "experiments" / "results"
    for f in sorted(top.rglob("cells.csv")):      # staged reruns (rerun/<machine>/<grid>/) too
        df = load_results(f)
        assert not columns.unknown(df.columns), (f, columns.unknown(df.columns))


def test_fig4_io_panels_per_run_window() -> None:
    """The spill device's read requests per second of the run and their mean latency."""
    from acbench import runner
    out = runner.per_op({"operations": 1000, "disk_read_ios": 400, "disk_read_time_us": 100000, "run_duration_s": 2.0,
                         "cpu_user_s": 0.5, "cpu_sys_s": 0.25})
    assert out["disk_read_ops_s"] == 200.0 and out["disk_read_latency_us"] == 250.0
    assert out["cpu_us_per_op"] == 750.0 and out["disk_reads_per_op"] == 0.4
    none = runner.per_op({"operations": 1000, "disk_read_ios": 0, "disk_read_time_us": 0, "run_duration_s": 2.0})
    assert none["disk_read_ops_s"] == 0.0 and none["disk_read_latency_us"] is None
