"""sysinfo.git_revision: a row's revision says -dirty for uncommitted code, not for published
results (make paper writes experiments/results/<grid>/ between grids)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acbench import paths, sysinfo


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(autouse=True)
def _own_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """git here must see the test's repository, also when the suite runs from a git hook."""
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    r = tmp_path / "checkout"
    (r / "harness").mkdir(parents=True)
    (r / "experiments" / "results" / "fig3-paper").mkdir(parents=True)
    (r / "harness" / "runner.py").write_text("x = 1\n")
    (r / "experiments" / "results" / "fig3-paper" / "cells.csv").write_text("a\n1\n")
    (r / "experiments" / "fig3-paper.toml").write_text("[run]\n")
    _git(r, "init", "-q")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "one")
    monkeypatch.setattr(paths, "top", lambda: r)
    return r


def test_clean_and_published_results(repo: Path) -> None:
    head = _git(repo, "rev-parse", "--short=12", "HEAD")
    assert sysinfo.git_revision() == head
    # a grid published (tracked rows rewritten, a new grid's directory added): still the commit
    (repo / "experiments" / "results" / "fig3-paper" / "cells.csv").write_text("a\n2\n")
    (repo / "experiments" / "results" / "fig4-paper").mkdir()
    (repo / "experiments" / "results" / "fig4-paper" / "cells.csv").write_text("a\n3\n")
    assert sysinfo.git_revision() == head
    _git(repo, "add", "experiments/results")
    assert sysinfo.git_revision() == head


@pytest.mark.parametrize("path", ["harness/runner.py", "experiments/fig3-paper.toml"])
def test_code_or_spec_changed_is_dirty(repo: Path, path: str) -> None:
    head = _git(repo, "rev-parse", "--short=12", "HEAD")
    (repo / path).write_text("changed\n")
    assert sysinfo.git_revision() == f"{head}-dirty"
    _git(repo, "add", path)                      # staged, not committed: still dirty
    assert sysinfo.git_revision() == f"{head}-dirty"
    _git(repo, "commit", "-q", "-m", "two")
    assert sysinfo.git_revision() == _git(repo, "rev-parse", "--short=12", "HEAD")


def test_not_a_repository_or_no_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "top", lambda: tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert sysinfo.git_revision() == "unknown"
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x\n")
    assert sysinfo.git_revision() == "unknown"


def test_diff_that_fails_is_dirty(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """describe answers but the diff cannot: the revision is kept, and not claimed clean."""
    head = _git(repo, "rev-parse", "--short=12", "HEAD")
    run = subprocess.run

    def failing_diff(args: list[str], **kw):  # type: ignore[no-untyped-def]
        if "diff" in args:
            raise subprocess.TimeoutExpired(args, 30)
        return run(args, **kw)
    monkeypatch.setattr(sysinfo.subprocess, "run", failing_diff)
    assert sysinfo.git_revision() == f"{head}-dirty"
