"""A cell's identity (cellkey.py) and what resume does with a finished cell (runner.resume_status):
each kind of setting that reaches a cell changes its key, and a refusal names the change."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acbench import approaches, cellkey
from acbench.approaches import Approach
from acbench.results import RunDir
from acbench.runner import HARNESS_VERSION, resume_status
from acbench.spec import load_spec

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
SPEC = """
name = "k"
[fixed]
recordcount = 4000
operationcount = 10000
[grid]
approach = ["memcached", "lru"]
workload = ["readonly"]
zipf_theta = [0.9]
mem_ratio = ["1/2"]
{grid_extra}
[run]
driver_depth = 1
{run_extra}
[memory]
provisioning = "own"
allowance_margin = "8M"
"""
BINS = {"memcached-ac": "aaaa", "ycsb-trace": "bbbb", "libacopt.so": "cccc"}


def _spec(tmp: Path, text: str, workload: str | None = None) -> Any:
    (tmp / "readonly").write_text(workload if workload is not None else (WORKLOADS / "readonly").read_text())
    f = tmp / "k.toml"
    f.write_text(text)
    return load_spec(f)


def _identity(spec: Any, bins: dict[str, str] = BINS, mode: str = "in-process") -> dict[str, dict[str, Any]]:
    return {c.cell_id: cellkey.settings(c, spec.run, spec.memory, mode=mode, spill_device="disk", perf=True,
                                        bins=bins, harness_version=HARNESS_VERSION) for c in spec.cells()}


def _base(extra_grid: str = "", extra_run: str = "") -> str:
    return SPEC.format(grid_extra=extra_grid, run_extra=extra_run)


# (what is changed, the spec text after the change, the workload text after it, the setting named)
CHANGES = [
    ("[fixed]", _base().replace("operationcount = 10000", "operationcount = 20000"), None,
     "property.operationcount: 10000 then, 20000 now"),
    ("[fixed] new key", _base().replace("[grid]", "fieldlength = 50\n[grid]"), None,
     "property.fieldlength: unset then, 50 now"),
    ("[run]", _base(extra_run="io_engine = \"sync\""), None, "run.io_engine: 'uring' then, 'sync' now"),
    ("[run] driver_depth", _base().replace("driver_depth = 1", "driver_depth = 4"), None,
     "run.driver_depth: 1 then, 4 now"),
    ("[memory]", _base().replace('allowance_margin = "8M"', 'allowance_margin = "16M"'), None,
     "memory.allowance_margin: 8388608 then, 16777216 now"),
    ("workload file contents", _base(), (WORKLOADS / "readonly").read_text() + "fieldlength=50\n",
     "workload.sha256:"),
]


@pytest.mark.parametrize("what,text,workload,named", CHANGES, ids=[c[0] for c in CHANGES])
def test_each_kind_of_setting_changes_the_key(tmp_path: Path, what: str, text: str, workload: str | None,
                                              named: str) -> None:
    old = _identity(_spec(tmp_path, _base()))
    new = _identity(_spec(tmp_path, text, workload))
    assert set(old) == set(new)
    for cid in old:
        assert cellkey.key(old[cid]) != cellkey.key(new[cid]), (what, cid)
        why = cellkey.changes(old[cid], new[cid])
        assert len(why) == 1 and why[0].startswith(named), why


def test_unchanged_spec_same_key_and_timeout_is_not_identity(tmp_path: Path) -> None:
    a = _identity(_spec(tmp_path, _base()))
    b = _identity(_spec(tmp_path, _base(extra_run="timeout_s = 99")))
    assert {k: cellkey.key(v) for k, v in a.items()} == {k: cellkey.key(v) for k, v in b.items()}


def test_approach_options_and_binaries_change_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path, _base())
    old = _identity(spec)
    monkeypatch.setitem(approaches.APPROACHES, "lru", Approach("lru", "lru", {"ac_lru_sample": "4"}, deterministic=True))
    new = _identity(spec)
    cid = "lru_readonly_z0.9_m0.5_r0"
    assert cellkey.changes(old[cid], new[cid]) == ["approach.option.ac_lru_sample: unset then, '4' now"]
    assert cellkey.key(old["memcached_readonly_z0.9_m0.5_r0"]) == cellkey.key(new["memcached_readonly_z0.9_m0.5_r0"])
    rebuilt = _identity(spec, {**BINS, "memcached-ac": "dddd"})
    why = cellkey.changes(new[cid], rebuilt[cid])
    assert why == ["binary.memcached-ac: 'aaaa' then, 'dddd' now"] and cellkey.only_binaries(why)
    # network mode runs ycsb-mc too: its checksum is part of those cells only
    net = _identity(spec, {**BINS, "ycsb-mc": "eeee"}, mode="network")
    assert "binary.ycsb-mc: unset then, 'eeee' now" in cellkey.changes(new[cid], net[cid])
    assert "run.mode: 'in-process' then, 'network' now" in cellkey.changes(new[cid], net[cid])


def _finished(ident: dict[str, dict[str, Any]]) -> dict[str, str | None]:
    return {cid: cellkey.key(s) for cid, s in ident.items()}


def test_resume_keeps_refuses_and_forces(tmp_path: Path) -> None:
    spec = _spec(tmp_path, _base())
    cells = spec.cells()
    ran = _identity(spec)
    st = resume_status(cells, ran, _finished(ran), ran)
    assert [c.cell_id for c in st.kept] == [c.cell_id for c in cells] and not st.todo and not st.stale
    assert st.refusal(RunDir(tmp_path / "rd")) is None
    changed = _spec(tmp_path, CHANGES[0][1])
    now = _identity(changed)
    st = resume_status(changed.cells(), now, _finished(ran), ran)
    assert not st.kept and not st.todo and len(st.stale) == 2
    msg = st.refusal(RunDir(tmp_path / "rd"))
    assert msg is not None
    assert "holds 2 finished cells run with other settings than the spec gives now" in msg
    assert "property.operationcount: 10000 then, 20000 now (2 cells, e.g. memcached_readonly_z0.9_m0.5_r0)" in msg
    assert "--force reruns every cell" in msg and "--allow-mixed" not in msg
    st = resume_status(changed.cells(), now, _finished(ran), ran, force=True)
    assert len(st.todo) == 2 and not st.stale
    st = resume_status(changed.cells(), now, _finished(ran), ran, redo=["lru"])
    assert [c.approach for c in st.todo] == ["lru"] and [c.approach for c, _ in st.stale] == ["memcached"]
    # --redo-stale: the stale cells run again, each with what changed, and nothing refuses; once they
    # have run with the new settings, a resumed run keeps them (it redoes nothing twice)
    st = resume_status(changed.cells(), now, _finished(ran), ran, redo_stale=True)
    assert sorted(c.approach for c in st.todo) == ["lru", "memcached"] and not st.stale and not st.kept
    assert st.refusal(RunDir(tmp_path / "rd")) is None
    assert all(why == ["property.operationcount: 10000 then, 20000 now"] for _, why in st.redone_stale)
    st = resume_status(changed.cells(), now, _finished(now), now, redo_stale=True)
    assert len(st.kept) == 2 and not st.todo and not st.redone_stale
    # a cell not finished yet is run; a row of an older acbench (no key) is stale, said so
    st = resume_status(cells, ran, {"lru_readonly_z0.9_m0.5_r0": None}, {})
    assert [c.approach for c in st.todo] == ["memcached"]
    assert st.stale[0][1] == ["its settings were not recorded (a run of an older acbench)"]


def test_allow_mixed_keeps_only_binary_changes(tmp_path: Path) -> None:
    spec = _spec(tmp_path, _base())
    ran = _identity(spec)
    rebuilt = _identity(spec, {**BINS, "memcached-ac": "ffff"})
    st = resume_status(spec.cells(), rebuilt, _finished(ran), ran)
    msg = st.refusal(RunDir(tmp_path / "rd"))
    assert msg is not None and "binary.memcached-ac: 'aaaa' then, 'ffff' now" in msg and "--allow-mixed keeps them" in msg
    st = resume_status(spec.cells(), rebuilt, _finished(ran), ran, allow_mixed=True)
    assert len(st.kept) == 2 and len(st.mixed) == 2 and not st.stale
    # --allow-mixed never keeps a cell whose settings changed
    changed = _spec(tmp_path, CHANGES[0][1])
    now = _identity(changed, {**BINS, "memcached-ac": "ffff"})
    st = resume_status(changed.cells(), now, _finished(ran), ran, allow_mixed=True)
    assert len(st.stale) == 2 and not st.kept


def test_machine_changes_name_each_fact(tmp_path: Path) -> None:
    """A run directory's kept cells ran on another machine: each differing fact named, with how many
    cells ran on it; facts read back as floats (2.0) equal the machine's int; older rows without a
    fact's column say nothing of it."""
    import pandas as pd
    from acbench.runner import machine_changes, machine_refusal
    spec = _spec(tmp_path, _base())
    cells = spec.cells()
    now = {"kernel": "6.18.44", "cpu_model": "Intel(R) Xeon(R) Processor", "cpus": 2, "host": "vm"}
    rows = pd.DataFrame({"cell_id": [c.cell_id for c in cells], "kernel": ["6.18.44", "6.18.44"],
                         "cpu_model": ["AMD EPYC", "Intel(R) Xeon(R) Processor"], "cpus": [2.0, 4.0],
                         "host": ["vm", "other"]})
    got = machine_changes(rows, cells, now)
    assert got == ["cpu_model: 'AMD EPYC' then (1 cell), 'Intel(R) Xeon(R) Processor' now",
                   "cpus: '4' then (1 cell), '2' now"]
    # only the kept cells count: the second cell's row alone differs in cores
    assert machine_changes(rows, cells[1:], now) == ["cpus: '4' then (1 cell), '2' now"]
    assert machine_changes(rows.assign(cpus=[2.0, 2.0], cpu_model=now["cpu_model"]), cells, now) == []
    assert machine_changes(rows[["cell_id", "kernel"]], cells, now) == []      # an older acbench's rows
    assert machine_changes(pd.DataFrame(), cells, now) == [] and machine_changes(rows, [], now) == []
    msg = machine_refusal(RunDir(tmp_path / "rd"), got)
    assert msg.startswith(f"{tmp_path / 'rd'} holds finished cells run on another machine; resuming would mix "
                          "machines in one grid")
    assert "\n  cpu_model: 'AMD EPYC' then (1 cell), 'Intel(R) Xeon(R) Processor' now\n" in msg
    assert "--allow-mixed keeps them" in msg and "--force reruns every cell here" in msg
