"""A rerun in pieces (rerun.py, deadline.py; analysis/tests/test_rerun.py is acplot.rerun's table):
deadlines parsed, process times expected, rows staged
and restored byte-for-byte as the runner reads them, grids run in order until the deadline, a
finished rerun published only when complete on one binary."""
from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from acbench import deadline, paths, rerun, runner
from acbench.results import RunDir, load_results
from acbench.spec import load_spec

NOW = dt.datetime(2026, 11, 30, 3, 0, 0, tzinfo=dt.timezone.utc)


def test_stop_by_forms() -> None:
    at = lambda t: dt.datetime.fromtimestamp(deadline.parse_stop_by(t, NOW), dt.timezone.utc)  # noqa: E731
    assert at("+2h") == NOW + dt.timedelta(hours=2)
    assert at("+1h30m") == NOW + dt.timedelta(minutes=90)
    assert at("+600s") == NOW + dt.timedelta(seconds=600)
    assert at("05:10") == NOW.replace(hour=5, minute=10)
    assert at("05:10 UTC") == at("05:10utc") == NOW.replace(hour=5, minute=10)     # as the --help writes it
    assert at("02:00") == NOW.replace(hour=2) + dt.timedelta(days=1)      # passed today: tomorrow's
    assert at("2026-11-30T04:00") == NOW.replace(hour=4)
    assert at("2026-11-30T05:00+01:00") == NOW.replace(hour=4)


@pytest.mark.parametrize("text, says", [
    ("2h", "not a time; accepted: +DURATION"), ("+", "not a time"), ("+2d", "not a time"), ("25:00", "not a time"), ("05:10 CET", "not a time"),
    ("soon", "not a time; accepted: +DURATION (+2h, +90m, +1h30m, +600s), HH:MM or HH:MM UTC (UTC, the next such time), or an ISO"),
    ("2026-11-30T02:00", "has passed (now 2026-11-30T03:00:00+00:00)"),
])
def test_stop_by_refused(text: str, says: str) -> None:
    with pytest.raises(deadline.StopByError, match=None) as e:
        deadline.parse_stop_by(text, NOW)
    assert f"--stop-by {text!r}: " in str(e.value) and says in str(e.value)


def rows(*specs: tuple[str, str, float, str | None, float]) -> pd.DataFrame:
    """(cell_id, approach, cell_wall_s, window_of, other_cpu_share) rows with status ok."""
    return pd.DataFrame([{"cell_id": c, "approach": a, "cell_wall_s": w, "window_of": of, "other_cpu_share": sh,
                          "status": "ok"} for c, a, w, of, sh in specs])


def test_expected_wall_per_process() -> None:
    """A windows process counts once, its wall shared over its cells; the median of the approach's
    processes per cell, times the cells of the one to start."""
    df = rows(("lru_r0", "lru", 100.0, "lru_r0", 0.0), ("lru_r1", "lru", 10.0, "lru_r0", 0.0),
              ("lru_r2", "lru", 10.0, "lru_r0", 0.0),                       # one process: 120 s, 3 cells
              ("lru_b_r0", "lru", 60.0, None, 0.0),                        # alone: 60 s
              ("lru_c_r0", "lru", 30.0, None, 0.0),
              ("alru_r0", "alru", 200.0, None, 0.0))
    walls = deadline.per_cell_walls(df)
    assert sorted(walls["lru"]) == [30.0, 40.0, 60.0] and walls["alru"] == [200.0]
    assert deadline.expected_wall(walls, "lru", 3) == 120.0
    assert deadline.expected_wall(walls, "alru", 1) == 200.0
    assert deadline.expected_wall(walls, "logging", 2) == 0.0      # none finished: 0 for --status's sum
    # a deadline assumes the slowest known approach's median per cell (alru's 200 s), not 0 s
    assert deadline.expected_wall(walls, "logging", 2, unknown_as_slowest=True) == 400.0
    assert deadline.expected_wall({}, "logging", 2, unknown_as_slowest=True) == 0.0
    failed = df.assign(status=["ok"] * 5 + ["oom_killed"])
    assert "alru" not in deadline.per_cell_walls(failed)


S99, S75, S50 = ("readonly", 0.99, 0.75), ("readonly", 0.75, 0.75), ("readonly", 0.5, 0.25)


def test_slice_model_times_an_approach_by_what_its_slice_costs() -> None:
    """Walls that are approach × slice exactly (lru 1, lru-block-merge 10; θ 0.99 costs 20 s, θ 0.75
    80 s): lru-block-merge at θ 0.75, not run, is timed 800 s (its median cell says 200 s); a slice
    the approach ran takes that slice's median; a slice or approach not run: None, and expected_wall
    falls back to the approach's median."""
    obs = [("lru", S99, 20.0), ("lru-block-merge", S99, 200.0), ("lru", S75, 80.0)]
    m = deadline.SliceModel(obs)
    assert m.predict("lru-block-merge", S75) == pytest.approx(800.0, rel=1e-6)
    assert m.predict("lru", S99) == 20.0 and m.predict("lru", S75) == 80.0
    assert m.predict("lru-block-merge", S50) is None and m.predict("alru", S99) is None
    two = deadline.SliceModel(obs + [("lru-block-merge", S99, 260.0)])
    assert two.predict("lru-block-merge", S99) == 230.0                       # its own slice: the median
    walls = {"lru": [20.0, 80.0], "lru-block-merge": [200.0]}
    assert deadline.expected_wall(walls, "lru-block-merge", 2, where=S75, model=m) == pytest.approx(1600.0)
    assert deadline.expected_wall(walls, "lru-block-merge", 2, where=S50, model=m) == 400.0
    assert deadline.expected_wall(walls, "lru-block-merge", 2) == 400.0
    # one slow cell does not move the others' terms much: medians
    noisy = deadline.SliceModel(obs + [("alru", S99, 30.0), ("alru", S75, 120.0), ("logging", S99, 50.0),
                                       ("logging", S75, 5000.0)])
    assert noisy.predict("lru-block-merge", S75) == pytest.approx(800.0, rel=0.05)


def test_slice_walls_per_process() -> None:
    """A windows process is one observation, in the slice of its cells; rows without slice columns
    give none; failed processes are left out."""
    df = rows(("lru_r0", "lru", 100.0, "lru_r0", 0.0), ("lru_r1", "lru", 20.0, "lru_r0", 0.0),
              ("alru_r0", "alru", 50.0, None, 0.0), ("alru_r1", "alru", 70.0, None, 0.0))
    assert deadline.slice_walls(df) == []
    df = df.assign(workload="readonly", zipf_theta=[0.99, 0.99, 0.75, 0.99], mem_ratio=0.5,
                   status=["ok", "ok", "ok", "oom_killed"])
    assert sorted(deadline.slice_walls(df)) == [("alru", ("readonly", 0.75, 0.5), 50.0),
                                                ("lru", ("readonly", 0.99, 0.5), 60.0)]


def test_status_times_cells_by_their_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fig4-paper-hdd (7 approaches × 12 slices × 3 repetitions) with lru and lru-block-merge run at
    θ 0.99 M/D 3/4 (20 s, 200 s) and lru at θ 0.75 M/D 3/4 (80 s): lru-block-merge's three cells there
    are expected to take 800 s each, not its median 200 s; the 210 cells of the 10 slices not begun
    are timed by medians and counted in the status line."""
    monkeypatch.setattr(rerun, "prior_sources", lambda grid: ({}, {}))
    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())
    monkeypatch.setattr(rerun, "prior_slices", lambda grid: deadline.SliceModel([]))
    d = tmp_path / "fig4-paper-hdd"
    d.mkdir()
    df = fake_rows(["lru_readonly_z0.99_m0.75_r0", "lru-block-merge_readonly_z0.99_m0.75_r0",
                    "lru_readonly_z0.75_m0.75_r0"])
    df = df.assign(approach=["lru", "lru-block-merge", "lru"], cell_wall_s=[20.0, 200.0, 80.0],
                   workload="readonly", zipf_theta=[0.99, 0.99, 0.75], mem_ratio=0.75)
    df.to_csv(d / "cells.csv", index=False)
    s = rerun.grid_state("fig4-paper-hdd", tmp_path)
    assert (s.finished, s.cells, s.unmeasured_slices) == (3, 252, 210)
    # θ 0.99: lru 2 × 20, lbm 2 × 200; θ 0.75: lru 2 × 80, lbm 3 × 800; 10 slices × 3: lru 50, lbm 200
    assert s.left_s == pytest.approx(40 + 400 + 160 + 2400 + 30 * 50 + 30 * 200, rel=1e-6)
    line = rerun.status_lines(tmp_path, ("fig4-paper-hdd",))[0]
    assert "; left ≈ 2.92 h (of its cells in slices not begun here, 210 by their approach's median cell, " \
           "not by what the slice costs) + alru, effpaging, logging, ospaging, uvmm (none finished yet)" in line, line
    # committed rows that ran θ 0.5 M/D 1/4 too: its 21 cells are timed by the slice's term borrowed from
    # them, the other 189 by medians
    sib = deadline.SliceModel([("x", S99, 10.0), ("x", S75, 20.0), ("x", S50, 30.0)])
    monkeypatch.setattr(rerun, "prior_slices", lambda grid: sib)
    s = rerun.grid_state("fig4-paper-hdd", tmp_path)
    assert (s.unmeasured_slices, s.borrowed_slices) == (189, 21)
    line = rerun.status_lines(tmp_path, ("fig4-paper-hdd",))[0]
    assert "(of its cells in slices not begun here, 21 timed by what their slices cost fig4-paper-hdd and " \
           "fig4-paper's committed cells; 189 by their approach's median cell, not by what the slice costs)" in line, line
    assert s.left_s > 2.92 * 3600          # θ 0.5 M/D 1/4 costs more than a median cell there


def test_slices_not_begun_borrowed_from_a_sibling_grid(tmp_path: Path) -> None:
    """A sibling run where θ 0.5 costs 4 × θ 0.99 and θ 0.75 2 ×, and this run's slices cost twice the
    sibling's ratios in log (HDD: steeper): with three shared slices the map s = c + b·s' has b = 2,
    so θ 0.25 (8 × θ 0.99 there) is 64 × here. With one shared slice, b = 1: the sibling's ratios.
    rerun.prior_slices reads the grid's and its siblings' committed rows; none: an empty model."""
    S25 = ("readonly", 0.25, 0.25)
    sib = deadline.SliceModel([("x", ("readonly", 0.99, 0.25), 10.0), ("x", ("readonly", 0.75, 0.25), 20.0),
                               ("x", S50, 40.0), ("x", S25, 80.0)])
    here = deadline.SliceModel([("lru", ("readonly", 0.99, 0.25), 5.0), ("lru", ("readonly", 0.75, 0.25), 20.0),
                                ("lru", S50, 80.0)])
    assert here.borrow_slices(sib) == [S25]
    assert here.predict("lru", S25) == pytest.approx(320.0, rel=1e-6)
    one = deadline.SliceModel([("lru", ("readonly", 0.99, 0.25), 5.0)])
    assert one.borrow_slices(sib) == [("readonly", 0.75, 0.25), S50, S25]
    assert one.predict("lru", S25) == pytest.approx(40.0, rel=1e-6)
    assert deadline.SliceModel([("lru", S99, 5.0)]).borrow_slices(sib) == []          # nothing shared
    (tmp_path / "fig4-paper").mkdir()
    pd.DataFrame([{"cell_id": f"lru_{i}", "approach": "lru", "status": "ok", "cell_wall_s": w, "workload": "readonly",
                   "zipf_theta": t, "mem_ratio": 0.25} for i, (t, w) in enumerate([(0.99, 10.0), (0.5, 40.0)])]
                 ).to_csv(tmp_path / "fig4-paper" / "cells.csv", index=False)
    prior = rerun.prior_slices("fig4-paper-hdd", tmp_path)
    assert prior.s[("readonly", 0.5, 0.25)] - prior.s[("readonly", 0.99, 0.25)] == pytest.approx(math.log(4))
    assert rerun.prior_slices("fig3-paper-rw", tmp_path).s == {}


def test_busy_cells_and_resume() -> None:
    df = rows(("a", "lru", 1.0, None, 0.02), ("b", "lru", 1.0, None, 0.16), ("c", "lru", 1.0, None, 0.10))
    assert runner.busy_cells(df, 0.10) == {"b"}
    assert runner.busy_cells(df, None) == set()
    assert runner.busy_cells(df.drop(columns="other_cpu_share"), 0.1) == set()

    class C:
        def __init__(self, cid: str) -> None:
            self.cell_id, self.approach = cid, "lru"
    cells = [C("a"), C("b"), C("c")]
    ident = {c.cell_id: {"x": 1} for c in cells}
    from acbench import cellkey
    finished = {c.cell_id: cellkey.key({"x": 1}) for c in cells}
    st = runner.resume_status(cells, ident, finished, {}, redo_ids={"b"})
    assert [c.cell_id for c in st.todo] == ["b"] and [c.cell_id for c in st.kept] == ["a", "c"]


def test_machine_slug_and_stage(tmp_path: Path) -> None:
    amd = {"cpu_model": "AMD EPYC", "cpus": "2", "kernel": "6.18.44-fc-v595"}
    xeon = {"cpu_model": "Intel(R) Xeon(R) Processor", "cpus": "2", "kernel": "6.18.44-fc-v669"}
    assert rerun.machine_slug(amd) == "amd-epyc-2cpu-6.18.44-fc-v595"
    assert rerun.machine_slug(xeon) == "intel-xeon-2cpu-6.18.44-fc-v669"
    d = rerun.stage_dir(tmp_path, amd)
    assert json.loads((d / "machine.json").read_text()) == amd and rerun.stage_dir(tmp_path, amd) == d
    (d / "machine.json").write_text(json.dumps({**amd, "kernel": "6.18.44-fc-v595 "}))
    with pytest.raises(rerun.RerunError, match="a directory name was reused"):
        rerun.stage_dir(tmp_path, amd)


def fake_rows(ids: list[str], approach: str = "memcached", share: float = 0.0, binary: str = "b" * 16) -> pd.DataFrame:
    return pd.DataFrame([{"cell_id": c, "approach": approach, "status": "ok", "cell_wall_s": 5.0,
                          "other_cpu_share": share, "binary_sha256": binary, "cell_key": "0123456789012345"}
                         for c in ids])


def test_publish_and_restore_round_trip(tmp_path: Path) -> None:
    """Staged rows come back as the run directory had them: same cells, keys (a key of digits stays
    text), values and run.json; restoring over a run directory with rows is refused."""
    rd = RunDir(tmp_path / "res" / "g" / "rerun")
    df = fake_rows(["c1", "c2"])
    df["hits"] = [7, 9]
    rd.write(df)
    rd.write_meta({"sessions": [{"wall_s": 12.5}], "cell_settings": {"c1": {"x": 1}}})
    stage = tmp_path / "stage" / "g"
    assert rerun.publish(rd, stage) == 2
    back = RunDir(tmp_path / "res2" / "g" / "rerun")
    assert rerun.restore(stage, back) == 2
    assert back.finished_keys() == rd.finished_keys() == {"c1": "0123456789012345", "c2": "0123456789012345"}
    assert back.read()["hits"].tolist() == [7, 9] and back.read_meta() == rd.read_meta()
    with pytest.raises(rerun.RerunError, match="already holds rows; restoring .* could lose cells"):
        rerun.restore(stage, back)
    assert rerun.restore(tmp_path / "nothing", RunDir(tmp_path / "r3")) == 0
    assert rerun.publish(RunDir(tmp_path / "empty"), tmp_path / "out") == 0 and not (tmp_path / "out").exists()


def spec_ids(grid: str) -> list[str]:
    return [c.cell_id for c in load_spec(paths.top() / "experiments" / f"{grid}.toml").cells()]


def test_piece_runs_grids_in_order_until_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())        # fake rows have no real cell keys
    """The first grid completes (its cell that ran beside other work run again at once), the second
    stops at the deadline: both staged, the third not started;
    the next piece restores the second from the stage (its run directory gone, as on a fresh
    checkout), redoes its busy cell, and goes on to Fig 2 only when an hour is left."""
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    from acbench import measure
    monkeypatch.setattr(measure, "_binary_id", lambda: "b1")             # the binary in use
    (tmp_path / "cache" / "allowance-lru-abc.json").write_text(      # probed the paper grids' sizes
        '{"key": {"bin": "b1", "runs": [[25000, 1, 1], [100000, 1, 1], [250000, 1, 1]]}, "value": 1}')
    stage, res = tmp_path / "stage", tmp_path / "res"
    calls: list[tuple[str, float]] = []
    inm, comp = spec_ids("inmemory-paper"), spec_ids("compression-paper")

    def grid(first_piece: bool):
        def run_grid(spec: Path, results: Path, run_id: str, until: float, busy: float, prior: dict) -> int:
            calls.append((spec.stem, busy))
            assert spec.stem != "compression-paper" or sorted(prior) == ["lru", "lru-lz4"]     # committed rows
            rd = RunDir(results / spec.stem / run_id)
            have = rd.read()
            if spec.stem == "inmemory-paper":      # complete, one cell beside a build: run again at once
                rd.write(fake_rows(inm) if len(have) else
                         pd.concat([fake_rows(inm[:-1]), fake_rows(inm[-1:], share=0.39)], ignore_index=True))
                return 0
            if first_piece:           # half the cells, one beside other work; then the deadline
                rd.write(pd.concat([fake_rows(comp[:5]), fake_rows(comp[5:6], share=0.3)], ignore_index=True))
                return runner.STOPPED_BY
            assert sorted(have["cell_id"]) == sorted(comp[:6])          # restored from the stage
            rd.write(fake_rows(comp))
            return 0
        return run_grid

    fig2: list[Path] = []
    grids = ("inmemory-paper", "compression-paper", "fig2", "blocks-paper")
    rc = rerun.run_piece(stage, res, "rerun", 1e12, grids, grid(True), lambda out: fig2.append(out) or 0, lambda s: None)
    assert rc == runner.STOPPED_BY and [c[0] for c in calls] == ["inmemory-paper", "inmemory-paper", "compression-paper"]
    assert calls[0][1] == rerun.BUSY
    st = {g: rerun.grid_state(g, stage) for g in grids}
    assert st["inmemory-paper"].complete and (st["compression-paper"].finished, st["compression-paper"].busy) == (6, 1)
    assert (stage / "calibrations" / "allowance-lru-abc.json").exists()

    # a run directory behind the stage (a later piece's rows pulled here) is not run over
    behind = RunDir(res / "compression-paper" / "rerun")
    behind.write(fake_rows(comp[:5]))
    with pytest.raises(rerun.RerunError, match=r"holds 1 finished cells that .* lacks \(e.g. " + comp[5]):
        rerun.run_piece(stage, res, "rerun", 1e12, grids, grid(False), fake_fig2_never, lambda s: None)
    import shutil
    shutil.rmtree(res)
    shutil.rmtree(tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    calls.clear()
    import time
    soon = time.time() + rerun.FIG2_S / 2         # Fig 2 does not fit
    rc = rerun.run_piece(stage, res, "rerun", soon, grids, grid(False), lambda out: fig2.append(out) or 0, lambda s: None)
    assert rc == runner.STOPPED_BY and [c[0] for c in calls] == ["compression-paper"] and fig2 == []
    assert (tmp_path / "cache" / "allowance-lru-abc.json").exists()          # the calibration came back
    assert rerun.grid_state("compression-paper", stage).complete

    interrupted = lambda spec, results, run_id, until, busy, prior: calls.append((spec.stem, busy)) or 130  # noqa: E731
    calls.clear()
    assert rerun.run_piece(stage, res, "rerun", 1e12, ("blocks-paper", "fig3-paper"), interrupted, fake_fig2_never,
                           lambda s: None) == 130
    assert [c[0] for c in calls] == ["blocks-paper"]          # an interrupted grid ends the piece

    def fake_fig2(out: Path) -> int:
        (out / "theta-0.99").mkdir(parents=True)
        (out / "theta-0.99" / "callgrind.out").write_text("big")
        (out / "fig2.csv").write_text("method\nlru\n")
        (out / "fig2-runs.csv").write_text("method\nlru\n")
        return 1                # as the real one when vma's callgrind run stops: its files are written
    calls.clear()
    rc = rerun.run_piece(stage, res, "rerun", 1e12, grids[:3], grid(False), fake_fig2, lambda s: None)
    assert rc == 0 and calls == [] and rerun.grid_state("fig2", stage).complete     # its 1: vma's callgrind failed
    assert json.loads((stage / "fig2" / "run.json").read_text())["exit_status"] == 1
    assert sorted(p.name for p in (stage / "fig2").iterdir()) == ["fig2-runs.csv", "fig2.csv", "run.json"]
    # a Fig 2 that wrote nothing, or was interrupted, stages nothing and ends the piece
    import shutil as sh
    sh.rmtree(stage / "fig2")
    assert rerun.run_piece(stage, res, "rerun", 1e12, grids[:3], grid(False), lambda out: 1, lambda s: None) == 2
    assert rerun.run_piece(stage, res, "rerun", 1e12, grids[:3], grid(False), lambda out: 130, lambda s: None) == 130
    assert not (stage / "fig2").exists()


def test_piece_sets_aside_an_earlier_pins_run_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run directory left by an earlier pin (rows of another memcached-ac, never staged) is renamed
    beside it, rows intact, and the grid restored from its staged rows; one of the pinned binary is
    run on; a second leftover of the same binary gets its own name."""
    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    stage, res = tmp_path / "stage", tmp_path / "res"
    comp = spec_ids("compression-paper")
    pinned, old = "p" * 16, "0" * 16
    seen: list[list[str]] = []

    def run_grid(spec: Path, results: Path, run_id: str, until: float, busy: float, prior: dict) -> int:
        rd = RunDir(results / spec.stem / run_id)
        have = rd.read()
        seen.append(sorted(have["cell_id"]) if not have.empty else [])
        rd.write(pd.concat([have, fake_rows(comp[len(have):len(have) + 2], binary=pinned)], ignore_index=True))
        return runner.STOPPED_BY

    said: list[str] = []
    rd = RunDir(res / "compression-paper" / "rerun")
    rd.write(fake_rows(comp, binary=old))                   # an earlier pin's whole grid, not staged
    rc = rerun.run_piece(stage, res, "rerun", 1e12, ("compression-paper",), run_grid, fake_fig2_never, said.append,
                         pinned)
    aside = res / "compression-paper" / f"rerun.unpinned-{old}"
    assert rc == runner.STOPPED_BY and seen == [[]]        # ran from nothing: nothing staged yet
    assert sorted(RunDir(aside).read()["cell_id"]) == sorted(comp) and set(RunDir(aside).read()["binary_sha256"]) == {old}
    assert any(f"moved to {aside}" in s and "another binary than the pinned pppppppppppppppp" in s for s in said)
    assert rerun.grid_state("compression-paper", stage).finished == 2

    # the pinned run directory is run on (no rename); a second leftover of the old binary: ".2"
    rerun.run_piece(stage, res, "rerun", 1e12, ("compression-paper",), run_grid, fake_fig2_never, said.append, pinned)
    assert seen[-1] == sorted(comp[:2]) and not (res / "compression-paper" / f"rerun.unpinned-{old}.2").exists()
    import shutil
    shutil.rmtree(rd.path)
    rd.write(pd.concat([fake_rows(comp[:1], binary=pinned), fake_rows(comp[1:3], binary=old)], ignore_index=True))
    rerun.run_piece(stage, res, "rerun", 1e12, ("compression-paper",), run_grid, fake_fig2_never, said.append, pinned)
    assert sorted(RunDir(res / "compression-paper" / f"rerun.unpinned-{old}.2").read()["cell_id"]) == sorted(comp[:3])
    assert seen[-1] == sorted(comp[:4])                     # restored from the stage's 4 pinned rows
    assert rerun.set_aside_unpinned(RunDir(tmp_path / "none"), pinned) is None
    full = RunDir(tmp_path / "full")                        # the pinned binary's whole checksum: the same binary
    full.write(fake_rows(comp[:1], binary=pinned + "f" * 48))
    assert rerun.set_aside_unpinned(full, pinned) is None and full.path.exists()


def fake_fig2_never(out: Path) -> int:
    raise AssertionError("Fig 2 must not run")


AMD = {"cpu_model": "AMD EPYC", "cpus": "2", "kernel": "6.18.44-fc-v595"}
AMD2 = {**AMD, "kernel": "6.18.44-fc-v857"}


def stage_rows(stage: Path, grid: str, ids: list[str], binary: str = "b" * 16) -> None:
    (stage / grid).mkdir(parents=True, exist_ok=True)
    fake_rows(ids, binary=binary).to_csv(stage / grid / "cells.csv", index=False)
    (stage / grid / "run.json").write_text("{}")


def test_finish_only_complete_on_one_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())
    root, dest = tmp_path / "stage", tmp_path / "results"
    stage = rerun.stage_dir(root, AMD)
    grids = ("inmemory-paper", "compression-paper")
    for g in grids:
        stage_rows(stage, g, spec_ids(g)[:-1])
    with pytest.raises(rerun.RerunError, match=rf"not complete: on {stage.name}: inmemory-paper \(9/10\); "
                                               rf"on {stage.name}: compression-paper \(11/12\)"):
        rerun.finish(root, dest, grids)
    stage_rows(stage, "inmemory-paper", spec_ids("inmemory-paper"))
    stage_rows(stage, "compression-paper", spec_ids("compression-paper"), binary="c" * 16)
    with pytest.raises(rerun.RerunError, match="the grids ran 2 binaries \\(bbbbbbbbbbbbbbbb, cccccccccccccccc\\)"):
        rerun.finish(root, dest, grids)
    assert not dest.exists()
    stage_rows(stage, "compression-paper", spec_ids("compression-paper"))
    assert rerun.finish(root, dest, grids) == [(str(dest / g), stage.name) for g in grids]
    assert len(load_results(dest / "compression-paper" / "cells.csv")) == 12


def test_units_and_machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Grids whose disk cells share a slice are one unit; a unit another machine started is skipped
    by a piece here unless taken over, a unit no machine started runs here; finish takes each unit
    from the machine where it is complete, and refuses a unit split over machines."""
    units = rerun.machine_units()
    assert ("compression-paper", "uvmm-compression-paper", "fig4-paper", "blocks-paper", "fig3-paper") in units
    assert ("inmemory-paper",) in units and ("fig4-paper-hdd",) in units and ("fig2",) in units
    assert ("fig3-paper-rw",) in units and sorted(g for u in units for g in u) == sorted(rerun.GRIDS)
    # fig4-paper-hdd's slices are fig4-paper's at another regime: not shared
    assert {s[1:] for s in rerun.disk_slices("fig4-paper-hdd")} == {s[1:] for s in rerun.disk_slices("fig4-paper")}

    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    root, res = tmp_path / "stage", tmp_path / "res"
    old, new = rerun.stage_dir(root, AMD), rerun.stage_dir(root, AMD2)
    grids = ("inmemory-paper", "compression-paper", "uvmm-compression-paper")
    stage_rows(old, "compression-paper", spec_ids("compression-paper"))          # complete there
    stage_rows(old, "uvmm-compression-paper", spec_ids("uvmm-compression-paper")[:3])
    ran: list[str] = []

    def run_grid(spec: Path, results: Path, run_id: str, until: float, busy: float, prior: dict) -> int:
        ran.append(spec.stem)
        RunDir(results / spec.stem / run_id).write(fake_rows(spec_ids(spec.stem)))
        return 0

    said: list[str] = []
    unit = "compression-paper, uvmm-compression-paper, fig4-paper, blocks-paper, fig3-paper"
    assert rerun.run_piece(new, res, "rerun", 1e12, grids, run_grid, fake_fig2_never, said.append) == 0
    assert ran == ["inmemory-paper"]                # nowhere else: here; the unit: left to the other machine
    assert f"uvmm-compression-paper: skipped: its unit ({unit}) ran on {old.name} and is left to it; " \
           "--take-over uvmm-compression-paper runs them here from the first cell" in said
    assert not (new / "uvmm-compression-paper").exists() and rerun.holds(new, "inmemory-paper")
    lines = rerun.status_lines(new, grids)
    assert any(line.startswith(f"uvmm-compression-paper   on {old.name}:    3/12") for line in lines)
    assert sum("skipped here" in line for line in lines) == 1          # not for the grid complete there
    with pytest.raises(rerun.RerunError, match=rf"not complete: on {old.name}: uvmm-compression-paper \(3/12\)"):
        rerun.finish(root, tmp_path / "dest", grids)

    # taken over: the whole unit runs here (the grid complete there too), the other's rows stay
    ran.clear()
    assert rerun.run_piece(new, res, "rerun", 1e12, grids, run_grid, fake_fig2_never, said.append,
                           take_over=("uvmm-compression-paper",)) == 0
    assert ran == ["compression-paper", "uvmm-compression-paper"]
    assert len(load_results(old / "uvmm-compression-paper" / "cells.csv")) == 3
    ran.clear()                                     # from now on the unit goes on here unasked
    (new / "compression-paper" / "cells.csv").unlink()
    rerun.run_piece(new, res, "rerun", 1e12, grids, run_grid, fake_fig2_never, said.append)
    assert ran == ["compression-paper"]
    done = rerun.finish(root, tmp_path / "dest", grids)
    assert [m for _, m in done] == [new.name] * 3
    stage_rows(old, "uvmm-compression-paper", spec_ids("uvmm-compression-paper"))     # now complete on both
    with pytest.raises(rerun.RerunError, match=f"complete on 2 machines \\({old.name}, {new.name}\\)"):
        rerun.finish(root, tmp_path / "dest", grids)


def test_binaries_name_no_checkout_path() -> None:
    """reproducible.mk: the programs a cell key names hold no byte of the checkout's path (debug
    information and __FILE__ relative to it), so another clone of the revision builds the same."""
    from acbench import core
    top = str(paths.top()).encode()
    for f in (paths.binary("memcached-ac"), paths.binary("ycsb-trace"), core.lib_path()):
        assert f.exists(), f
        assert top not in f.read_bytes(), f"{f} names {top.decode()}"


def test_prior_walls_from_committed_rows(tmp_path: Path) -> None:
    """An approach not run yet on this machine is expected to take what the grid's committed rows
    took: blocks-paper's lru-block-merge 2099 s a cell (a separate process: its wall_s read as
    cell_wall_s)."""
    walls = rerun.prior_walls("blocks-paper")
    assert walls["lru-block-merge"] == [pytest.approx(2099.435186)] and walls["lru-4m"] == [pytest.approx(32.612229)]
    assert rerun.prior_walls("blocks-paper", tmp_path) == {} and rerun.prior_walls("no-such-grid") == {}


def test_scaled_walls_from_a_check_run() -> None:
    """A check process at other run lengths: its set-up (wall less measured runs) plus the grid's
    operations at the rate its measured runs went; a failed process and an approach the grid lacks
    give nothing."""
    df = pd.DataFrame([
        {"cell_id": "u_r0", "approach": "uvmm", "window_of": "u_r0", "cell_wall_s": 700.0, "run_duration_s": 300.0,
         "operations": 1000, "status": "ok"},          # set-up 400 s, then 1000 ops in 300 s
        {"cell_id": "u_r1", "approach": "uvmm", "window_of": "u_r0", "cell_wall_s": 300.0, "run_duration_s": 300.0,
         "operations": 1000, "status": "ok"},
        {"cell_id": "l_r0", "approach": "lru", "window_of": None, "cell_wall_s": 50.0, "run_duration_s": 40.0,
         "operations": 4000, "status": "ok"},
        {"cell_id": "a_r0", "approach": "alru", "window_of": None, "cell_wall_s": 90.0, "run_duration_s": 80.0,
         "operations": 1000, "status": "oom_killed"},
        {"cell_id": "m_r0", "approach": "memcached", "window_of": None, "cell_wall_s": 5.0, "run_duration_s": 4.0,
         "operations": 1000, "status": "ok"}])
    walls = deadline.scaled_walls(df, {"uvmm": 3000, "lru": 1000, "alru": 1000})
    assert walls == {"uvmm": [pytest.approx(400.0 + 900.0)], "lru": [pytest.approx(10.0 + 10.0)]}
    assert deadline.scaled_walls(df.drop(columns=["operations"]), {"uvmm": 1}) == {}


def test_prior_walls_of_a_grid_never_run_from_its_checks(tmp_path: Path) -> None:
    """fig3-paper-rw has no committed rows: its approaches take fig3-rw-reads-check's processes (one
    of 1M warm-up + 2 windows of 1M each), scaled to the grid's 2M measured (uvmm: the whole 954 s
    process) and lru's 1M; with neither rows nor checks, nothing."""
    walls = rerun.prior_walls("fig3-paper-rw")
    assert sorted(walls) == ["alru", "effpaging", "logging", "logging-buffer", "lru", "memcached", "ospaging",
                             "uvmm"]
    assert walls["uvmm"] == [pytest.approx(673.698798 + 280.239370)]
    lru_setup = 34.169619 + 14.543407 - 14.340034 - 14.543407
    assert walls["lru"] == [pytest.approx(lru_setup + (14.340034 + 14.543407) / 2)]
    assert sorted(rerun.prior_walls("fig4-paper-hdd")) == ["lru", "ospaging"]
    assert rerun.prior_walls("fig3-paper-rw", tmp_path) == {}
    # fig3-paper's committed rows time their approaches; the three they lack come from both checks
    mixed = rerun.prior_walls("fig3-paper")
    committed = deadline.per_cell_walls(load_results(paths.top() / "experiments/results/fig3-paper/cells.csv"))
    assert {a: mixed[a] for a in committed} == committed
    assert sorted(set(mixed) - set(committed)) == ["logging-buffer", "uvmm", "uvmm-check"]
    assert all(len(mixed[a]) == 2 for a in ("logging-buffer", "uvmm", "uvmm-check"))
    assert rerun.prior_sources("fig3-paper") == (committed, {a: mixed[a] for a in ("logging-buffer", "uvmm",
                                                                                 "uvmm-check")})


def test_stale_cells(tmp_path: Path) -> None:
    """Staged cells whose key is not the one the spec and the pinned binaries give now: counted, the
    grid not complete, and --finish refuses it (a spec edited after its cells ran)."""
    from acbench import cellkey
    spec = load_spec(paths.top() / "experiments" / "inmemory-paper.toml")
    cells = spec.cells()
    bins = {"libacopt.so": "1" * 16, "memcached-ac": "2" * 16, "ycsb-trace": "3" * 16}

    ident = runner.identities(spec, cells, spec.run["mode"], bool(spec.run["perf"]) and runner.perf_available(), bins)
    df = fake_rows([c.cell_id for c in cells]).assign(cell_key=[cellkey.key(ident[c.cell_id]) for c in cells])
    assert rerun.stale_cells(spec, cells, df, bins) == set()
    df.loc[0, "cell_key"] = "0" * 16
    assert rerun.stale_cells(spec, cells, df, bins) == {cells[0].cell_id}
    assert len(rerun.stale_cells(spec, cells, df, {**bins, "memcached-ac": "9" * 16})) == len(cells)
    stage = rerun.stage_dir(tmp_path, AMD)          # STAGE/<machine>/, the pin in STAGE/
    (stage / "inmemory-paper").mkdir(parents=True)
    df.to_csv(stage / "inmemory-paper" / "cells.csv", index=False)
    s = rerun.grid_state("inmemory-paper", stage, bins=bins)
    assert (s.finished, s.stale, s.complete) == (10, 1, False)
    (tmp_path / "pin.json").write_text(json.dumps({"revision": "r", "binaries": bins}))
    assert rerun.grid_state("inmemory-paper", stage).stale == 1       # the pin's binaries by default
    with pytest.raises(rerun.RerunError, match=r"inmemory-paper \(10/10, 1 with other settings than the spec's\)"):
        rerun.finish(tmp_path, tmp_path / "out", ("inmemory-paper",))


def test_status_expects_the_time_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compression-paper (separate processes): lru's 3 finished cells took 20, 30 and 40 s, so its 3
    left are expected to take 3 × 30 s; lru-lz4 has none finished and is named as not measured (no
    committed rows or checks either: prior_sources gives none)."""
    monkeypatch.setattr(rerun, "prior_sources", lambda grid: ({}, {}))
    monkeypatch.setattr(rerun, "stale_cells", lambda *a: set())
    lru = [c for c in spec_ids("compression-paper") if c.startswith("lru_")]
    d = tmp_path / "compression-paper"
    d.mkdir()
    df = fake_rows(lru[:3], approach="lru")
    df["cell_wall_s"] = [20.0, 30.0, 40.0]
    df.to_csv(d / "cells.csv", index=False)
    s = rerun.grid_state("compression-paper", tmp_path)
    assert (s.finished, s.cells, s.left_s, s.unmeasured) == (3, 12, 90.0, ("lru-lz4",))
    line = rerun.status_lines(tmp_path, ("compression-paper",))[0]
    assert line.endswith("3/12   cells, 0.00 h, binaries bbbbbbbbbbbbbbbb; left ≈ 0.03 h + lru-lz4 (none finished yet)"), line


def test_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first piece pins its revision and binaries; a later piece with other binaries is refused,
    naming each that differs and how to get the pinned ones; one not on its own build, or on
    uncommitted code, cannot pin."""
    bins = {"libacopt.so": "1" * 16, "memcached-ac": "2" * 16, "ycsb-trace": "3" * 16}
    monkeypatch.setattr(rerun, "pin_binaries", lambda: dict(bins))
    with pytest.raises(rerun.RerunError, match="the first piece pins the checkout's own build"):
        rerun.check_pin(tmp_path, lambda: "abc", own_build=False)
    with pytest.raises(rerun.RerunError, match=r"its tracked files differ from it \(git status\): commit them"):
        rerun.check_pin(tmp_path, lambda: "f" * 40 + "-dirty", own_build=True)
    assert not (tmp_path / "pin.json").exists()
    pin = rerun.check_pin(tmp_path, lambda: "f" * 40, own_build=True)
    assert pin["revision"] == "f" * 40 and pin["binaries"] == bins
    assert json.loads((tmp_path / "pin.json").read_text()) == pin
    assert rerun.check_pin(tmp_path, lambda: "other", own_build=False) == pin     # the pinned ones, from anywhere
    bins["memcached-ac"] = "9" * 16
    with pytest.raises(rerun.RerunError) as e:
        rerun.check_pin(tmp_path, lambda: "other", own_build=True)
    assert (f"the rerun runs revision ffffffffffff's binaries; these differ (memcached-ac: {'2' * 16} pinned, "
            f"{'9' * 16} here). `make rerun` builds that revision in build/rerun-pin") in str(e.value)


def test_calibrations_staged_for_the_binary_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """save_calibrations stages the cached calibrations of the binary in use only (their key's bin is
    its SHA-256: measure._binary_id) that probed the grid's sizes, not those of other builds, of a
    test's small grid run with the same binary, or unreadable files; restore puts them back into an
    empty cache byte for byte and keeps a cached one."""
    from acbench import measure
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(paths, "cache_dir", lambda: cache)
    monkeypatch.setattr(measure, "_binary_id", lambda: "aaaa000011112222")
    paper = [[25000, 25000, 12500], [100000, 100000, 50000], [250000, 250000, 125000]]
    mine = {"key": {"bin": "aaaa000011112222", "approach": "lru", "runs": paper}, "value": {"a": 1}}
    (cache / "allowance-lru-1.json").write_text(json.dumps(mine))
    (cache / "allowance-lru-2.json").write_text(json.dumps({"key": {"bin": "2544488-1796018042", "runs": paper},
                                                             "value": {}}))
    small = {"key": {"bin": "aaaa000011112222", "approach": "lru", "runs": [[20000, 20000, 10000]]}, "value": {}}
    (cache / "allowance-lru-4.json").write_text(json.dumps(small))     # a test's grid of 20,000 records
    (cache / "allowance-lru-3.json").write_text("{not json")
    (cache / "footprint-1.json").write_text(json.dumps(mine))          # not an allowance calibration
    stage = tmp_path / "stage"
    spec = load_spec(paths.top() / "experiments" / "fig4-paper.toml")
    assert rerun.probe_sizes(spec) == {(25000, 100000, 250000)}
    assert rerun.save_calibrations(stage, rerun.probe_sizes(spec)) == 1
    assert sorted(p.name for p in (stage / rerun.CALIBRATIONS).iterdir()) == ["allowance-lru-1.json"]
    assert rerun.save_calibrations(stage, rerun.probe_sizes(spec)) == 0    # new ones only
    for p in cache.iterdir():
        p.unlink()
    (cache / "allowance-lru-1.json").write_text("kept")
    assert rerun.restore_calibrations(stage) == 0 and (cache / "allowance-lru-1.json").read_text() == "kept"
    (cache / "allowance-lru-1.json").unlink()
    assert rerun.restore_calibrations(stage) == 1
    assert json.loads((cache / "allowance-lru-1.json").read_text()) == mine
