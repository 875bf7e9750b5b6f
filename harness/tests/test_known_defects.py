"""CI's retries of a regression run whose only failures are effpaging's known OOM kills."""
from pathlib import Path

import pandas as pd

from acbench.known_defects import main, retry_allowed


def _run(tmp_path: Path, rows: list[dict]) -> Path:
    d = tmp_path / "regress"
    d.mkdir()
    pd.DataFrame(rows).to_csv(d / "cells.csv", index=False)
    return d


OK = {"cell_id": "lru_readonly_z0.99_m0.5_r0", "approach": "lru", "status": "ok"}


def test_only_effpagings_oom_kills_are_retried(tmp_path, capsys):
    d = _run(tmp_path, [OK, {"cell_id": "effpaging_writeheavy_z0.99_m0.5_r0", "approach": "effpaging",
                             "status": "oom_killed"}])
    ok, why = retry_allowed(d)
    assert ok and why == ("OOM-killed by a known defect, retried: effpaging_writeheavy_z0.99_m0.5_r0 "
                          "(policies/README.md, effpaging, \"OOM kills at small limits\")")
    assert main([str(d)]) == 0 and "regress: OOM-killed by a known defect" in capsys.readouterr().err


def test_any_other_failure_is_not(tmp_path, capsys):
    d = _run(tmp_path, [OK, {"cell_id": "effpaging_x", "approach": "effpaging", "status": "oom_killed"},
                        {"cell_id": "lru_y", "approach": "lru", "status": "oom_killed"},
                        {"cell_id": "effpaging_z", "approach": "effpaging", "status": "failed"}])
    ok, why = retry_allowed(d)
    assert not ok and why.endswith("failed cells that are not a known defect: lru_y (oom_killed), effpaging_z (failed)")
    assert main([str(d)]) == 1 and "regress: no retry:" in capsys.readouterr().err
    (tmp_path / "c").mkdir()
    clean = _run(tmp_path / "c", [OK])
    assert retry_allowed(clean) == (False, f"{clean}: no failed cell (the run failed for another reason)")
    assert main([str(tmp_path / "nothing")]) == 1


def test_cells_killed_in_every_try_are_listed_for_compare_to_skip(tmp_path, capsys):
    d = _run(tmp_path, [OK, {"cell_id": "effpaging_writeheavy_z0.99_m0.5_r0", "approach": "effpaging",
                             "status": "oom_killed"},
                        {"cell_id": "effpaging_readonly_z0.99_m0.5_r0", "approach": "effpaging", "status": "oom_killed"}])
    assert main(["--cells", str(d)]) == 0
    out, err = capsys.readouterr()
    assert out == "effpaging_readonly_z0.99_m0.5_r0 effpaging_writeheavy_z0.99_m0.5_r0\n"
    assert err == ("regress: killed by a known defect in every try, their checks not made: "
                   "effpaging_readonly_z0.99_m0.5_r0, effpaging_writeheavy_z0.99_m0.5_r0\n")
    (tmp_path / "o").mkdir()
    other = _run(tmp_path / "o", [OK, {"cell_id": "lru_y", "approach": "lru", "status": "oom_killed"}])
    assert main(["--cells", str(other)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "failed cells that are not a known defect: lru_y (oom_killed)" in err
