"""acplot.verdicts: two reports' claims matched, kinds compared, and bad input refused with its reason."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from acplot.loss import ResultsError
from acplot.verdicts import compare, counts, main, markdown, read_report

HEADER = "source,claim,verdict,strict,figure\n"


def _write(path: Path, rows: list[tuple[str, str, str]]) -> str:
    df = pd.DataFrame([{"source": s, "claim": c, "verdict": v, "strict": v, "figure": ""} for s, c, v in rows])
    df.to_csv(path, index=False)
    return str(path)


OLD = [("002 §IV-C", "Logging has the highest hit rate", "contradicted (holds in 0 of 12 slices)"),
       ("002 §IV-F", "LRU degrades", "reproduced"),
       ("002 §IV-B", "ALRU ~90 % of L1I misses", "not testable with these results: no counters"),
       ("000 §5.1", "Tuple merge beats block merge", "reproduced (holds in 1 of 1 slices, 1 run)")]
NEW = [("002 §IV-C", "Logging has the highest hit rate", "not decided (intervals overlap in 3 of 12 slices)"),
       ("002 §IV-F", "LRU degrades", "reproduced (holds in 12 of 12 slices)"),
       ("002 §IV-B", "ALRU ~90 % of L1I misses", "not testable with these results: no counters"),
       ("002 §IV-F", "Kernel approaches win under shortage", "regime-dependent (holds under hdd only)")]


def test_compare_kinds_and_changes(tmp_path: Path) -> None:
    table = compare(read_report(_write(tmp_path / "old.csv", OLD)), read_report(_write(tmp_path / "new.csv", NEW)))
    assert list(table["change"]) == ["moved", "same", "same", "added", "dropped"]
    assert list(table["before"]) == ["contradicted", "reproduced", "not testable", "", "reproduced"]
    assert list(table["after"]) == ["not decided", "reproduced", "not testable", "regime-dependent", ""]
    # the same kind with other figures is "same"; the full texts are kept
    assert table.loc[1, "verdict before"] == "reproduced"
    assert table.loc[1, "verdict after"] == "reproduced (holds in 12 of 12 slices)"
    assert table.loc[4, "claim"] == "Tuple merge beats block merge" and table.loc[4, "verdict after"] == ""
    assert counts(table) == "moved 1, same 2, added 1, dropped 1"
    md = markdown(table).splitlines()
    assert md[2] == "| 002 §IV-C | Logging has the highest hit rate | contradicted | not decided | moved |"
    assert md[5] == "| 002 §IV-F | Kernel approaches win under shortage | — | regime-dependent | added |"


def test_main_prints_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _write(tmp_path / "old.csv", OLD), _write(tmp_path / "new.csv", NEW)
    assert main([old, new]) == 0
    out = capsys.readouterr().out
    assert ("002 §IV-C: Logging has the highest hit rate\n  moved: contradicted -> not decided\n"
            "    before: contradicted (holds in 0 of 12 slices)\n"
            "    after:  not decided (intervals overlap in 3 of 12 slices)\n") in out
    assert out.rstrip().endswith("moved 1, same 2, added 1, dropped 1")


def test_git_revision_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True)
    _write(repo / "report.csv", OLD)
    subprocess.run(git + ["add", "report.csv"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "old"], check=True)
    _write(repo / "report.csv", NEW)
    monkeypatch.chdir(repo)
    table = compare(read_report("HEAD:report.csv"), read_report("report.csv"))
    assert counts(table) == "moved 1, same 2, added 1, dropped 1"
    with pytest.raises(ResultsError, match=r"HEAD:nothere.csv: neither a file nor a git revision:path"):
        read_report("HEAD:nothere.csv")


def test_bad_reports_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ResultsError, match=r"nothere.csv: no such file \(a report.csv, or GIT_REVISION:PATH\)"):
        read_report(str(tmp_path / "nothere.csv"))
    with pytest.raises(ResultsError, match=r": not a file \(a report.csv, or GIT_REVISION:PATH\)"):
        read_report(str(tmp_path))
    (tmp_path / "latin1.csv").write_bytes("source,claim,verdict\n\u00a7,x,reproduced\n".encode("latin-1"))
    with pytest.raises(ResultsError, match=r"latin1.csv: cannot be read as a report.csv \('utf-8' codec"):
        read_report(str(tmp_path / "latin1.csv"))
    (tmp_path / "cells.csv").write_text("approach,zipf_theta\nlru,0.99\n")
    with pytest.raises(ResultsError, match=r"not a report.csv: it lacks the column\(s\) source, claim, verdict "
                                           r"\(it has approach, zipf_theta\)"):
        read_report(str(tmp_path / "cells.csv"))
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ResultsError, match="not a report.csv"):
        read_report(str(tmp_path / "empty.csv"))
    bad = _write(tmp_path / "bad.csv", [("x", "a claim", "probably true")])
    with pytest.raises(ResultsError, match=r"the claim x \"a claim\" has no verdict this code knows: 'probably true'"):
        read_report(bad)
    twice = _write(tmp_path / "twice.csv", [("x", "a", "reproduced"), ("x", "a", "contradicted")])
    with pytest.raises(ResultsError, match=r"the claim x \"a\" is listed more than once"):
        read_report(twice)
    assert main([bad, bad]) == 2
    assert "acplot.verdicts: " in capsys.readouterr().err
