"""Spec validation (exact messages), grid expansion, cell ids."""
from __future__ import annotations

from pathlib import Path

import pytest

from acbench.spec import SpecError, load_spec

GOOD = """
[fixed]
recordcount = 1000
operationcount = 2000
[grid]
approach = ["memcached", "lru"]
workload = ["readonly"]
zipf_theta = [0.99, 0.5]
mem_ratio = ["1/2", 0.25]
repetition = 2
"""


WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    p = tmp_path / name
    p.write_text(text)
    return p


def err(tmp_path: Path, text: str) -> str:
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, text))
    return str(e.value)


def test_grid_expansion_and_ids(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD))
    cells = spec.cells()
    assert len(cells) == 2 * 2 * 2 * 2
    assert cells[0].cell_id == "memcached_readonly_z0.99_m0.5_r0"
    assert cells[1].cell_id == "memcached_readonly_z0.99_m0.5_r1"
    assert cells[-1].cell_id == "lru_readonly_z0.5_m0.25_r1"
    assert len({c.cell_id for c in cells}) == 16
    assert cells[1].seed == 2 and cells[1].properties["seed"] == 2
    assert cells[2].properties["zipfianconstant"] == 0.99 and cells[2].mem_ratio == 0.25
    assert spec.name == "s"


def test_extra_grid_property(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD.replace("repetition = 2", "threads = [1, 2]")))
    ids = [c.cell_id for c in spec.cells()]
    assert "lru_readonly_z0.5_m0.25_threads2_r0" in ids
    assert len(ids) == 16


def test_interleaved_order(tmp_path: Path) -> None:
    """[run] order = "interleaved": repetition after repetition, each cell's approaches back to
    back; the same cells as grid order, and the order is not part of a cell's identity."""
    from acbench import cellkey
    grid = load_spec(write(tmp_path, GOOD)).cells()
    spec = load_spec(write(tmp_path, GOOD + '[run]\norder = "interleaved"\n', "i.toml"))
    ids = [c.cell_id for c in spec.cells()]
    assert ids[:5] == ["memcached_readonly_z0.99_m0.5_r0", "lru_readonly_z0.99_m0.5_r0",
                       "memcached_readonly_z0.99_m0.25_r0", "lru_readonly_z0.99_m0.25_r0",
                       "memcached_readonly_z0.5_m0.5_r0"]
    assert ids[7] == "lru_readonly_z0.5_m0.25_r0" and ids[8] == "memcached_readonly_z0.99_m0.5_r1"
    assert ids[-1] == "lru_readonly_z0.5_m0.25_r1"
    assert sorted(ids) == sorted(c.cell_id for c in grid)
    assert "order" in cellkey.NOT_IDENTITY_RUN
    assert "[run] order: 'random'; accepted: grid (approach after approach) or interleaved" in err(
        tmp_path, GOOD + '[run]\norder = "random"\n')


def test_repetition_mode_windows(tmp_path: Path) -> None:
    """[run] repetition_mode: separate (default) or windows, which is accepted only where one process can
    stand for every repetition; it is part of a cell's identity; units() groups a cell's consecutive
    repetitions to run (a finished one splits them), in the order of each group's first cell."""
    from acbench import cellkey
    from acbench.runner import units
    spec = load_spec(write(tmp_path, GOOD + '[run]\norder = "interleaved"\nrepetition_mode = "windows"\n', "w.toml"))
    assert spec.run["repetition_mode"] == "windows"
    assert load_spec(write(tmp_path, GOOD)).run["repetition_mode"] == "separate"
    assert "repetition_mode" not in cellkey.NOT_IDENTITY_RUN
    todo = spec.cells()
    got = units(spec, todo)
    # lru's repetitions go together; memcached's may not be windows (approaches.in_windows): one each
    assert [[c.cell_id for c in u] for u in got][:3] == [
        ["memcached_readonly_z0.99_m0.5_r0"], ["lru_readonly_z0.99_m0.5_r0", "lru_readonly_z0.99_m0.5_r1"],
        ["memcached_readonly_z0.99_m0.25_r0"]]
    assert len(got) == 12 and sorted(c.cell_id for u in got for c in u) == sorted(c.cell_id for c in todo)
    from acbench.approaches import get_approach, in_windows
    from acbench.placement import cell_repetition_mode
    assert [in_windows(get_approach(a)) for a in ("lru", "alru-hstore", "ospaging", "alru", "memcached")] == \
        [True, True, True, False, False]
    assert cell_repetition_mode(spec, todo[0]) == "separate" and cell_repetition_mode(spec, todo[1]) == "windows"
    three = load_spec(write(tmp_path, GOOD.replace("repetition = 2", "repetition = 3")
                            + '[run]\nrepetition_mode = "windows"\n', "t.toml"))
    mine = [c for c in three.cells() if c.cell_id.startswith("lru_readonly_z0.5_m0.25_")]
    assert [[c.repetition for c in u] for u in units(three, [mine[0], mine[2]])] == [[0], [2]]
    assert [[c.repetition for c in u] for u in units(three, mine[1:])] == [[1, 2]]
    sep = load_spec(write(tmp_path, GOOD, "s2.toml"))
    assert units(sep, sep.cells()[:3]) == [[c] for c in sep.cells()[:3]]
    w = '[run]\nrepetition_mode = "windows"\n'
    assert ("[run] repetition_mode: 'once'; accepted: separate (a process per repetition), windows (one process "
            "per cell: one load and warm-up, a measured window per repetition) or windows-all (windows for every "
            "approach, also those not shown to stand them: for checks)") in err(
        tmp_path, GOOD + '[run]\nrepetition_mode = "once"\n')
    # windows-all: every approach's repetitions in one process, memcached's too; refused where windows are
    every = load_spec(write(tmp_path, GOOD + '[run]\norder = "interleaved"\nrepetition_mode = "windows-all"\n', "a.toml"))
    assert [[c.cell_id for c in u] for u in units(every, every.cells())][:2] == [
        ["memcached_readonly_z0.99_m0.5_r0", "memcached_readonly_z0.99_m0.5_r1"],
        ["lru_readonly_z0.99_m0.5_r0", "lru_readonly_z0.99_m0.5_r1"]]
    assert {cell_repetition_mode(every, c) for c in every.cells()} == {"windows"}
    assert ("[run] repetition_mode: windows-all: [run] mode is network: the windows are the in-process driver's "
            "(runwindows); accepted: separate") in err(tmp_path, GOOD + '[run]\nrepetition_mode = "windows-all"\n'
                                                       'mode = "network"\n')
    assert ("[run] repetition_mode: windows: [run] mode is network: the windows are the in-process driver's "
            "(runwindows); accepted: separate") in err(tmp_path, GOOD + w + 'mode = "network"\n')
    assert ("[run] repetition_mode: windows: [grid] repetition is 9: one process measures at most 8 windows; "
            "accepted: separate") in err(tmp_path, GOOD.replace("repetition = 2", "repetition = 9") + w)
    (tmp_path / "workloadd").write_text((WORKLOADS / "workloadd").read_text())
    assert ("[run] repetition_mode: windows: workload workloadd inserts (insertproportion 0.05): a window's inserts "
            "would follow the previous window's, not be those of its own seed; accepted: separate") in err(
        tmp_path, GOOD.replace('["readonly"]', '["workloadd"]') + w)
    assert "workload readonly inserts (insertproportion 0.1)" in err(
        tmp_path, GOOD.replace("operationcount = 2000", "operationcount = 2000\ninsertproportion = 0.1\n"
                               "readproportion = 0.9\nupdateproportion = 0") + w)


def test_first_repetitions_selected(tmp_path: Path) -> None:
    """acbench run --repetitions N: the cells of the first N repetitions, in the spec's order; a
    count outside 1..[grid] repetition is refused, naming what is accepted."""
    from acbench.runner import RunError, select_cells
    spec = load_spec(write(tmp_path, GOOD + '[run]\norder = "interleaved"\n', "i.toml"))
    first = [c.cell_id for c in select_cells(spec, [], [], 1)]
    assert first == [c.cell_id for c in spec.cells()][:8] and all(i.endswith("_r0") for i in first)
    assert [c.cell_id for c in select_cells(spec, ["lru"], [], 2)] == \
        [c.cell_id for c in spec.cells() if c.approach == "lru"]
    for bad in (0, 3):
        with pytest.raises(RunError, match=rf"^--repetitions {bad}: i.toml has 2 \(accepted: 1 to 2\)$"):
            select_cells(spec, [], [], bad)


@pytest.mark.parametrize("old,new,message", [
    ('approach = ["memcached", "lru"]', 'approach = ["memcached", "nope"]',
     "s.toml: [grid] approach: unknown approach 'nope'; accepted: memcached, memcached-static, lru, alru-hstore"),
    ("zipf_theta = [0.99, 0.5]", "zipf_theta = [1.0]",
     "s.toml: [grid] zipf_theta: θ = 1 is accepted only with requestdistribution = \"truezipf\" in [fixed] "
     "(YCSB's zipfian divides by 1 − θ)"),
    ("zipf_theta = [0.99, 0.5]", "zipf_theta = [12]",
     "s.toml: [grid] zipf_theta: 12 is not accepted; accepted: numbers with 0 < θ <= 10 (θ = 1 only with "
     "requestdistribution = \"truezipf\")"),
    ("[fixed]", "[fixed]\nlookaside = true",
     "s.toml: [fixed] lookaside: set by the approach (memcached refills after a miss, memcached-static does not)"),
    ('mem_ratio = ["1/2", 0.25]', 'mem_ratio = ["half"]',
     "s.toml: [grid] mem_ratio: 'half' is not a ratio; accepted: numbers or fractions like \"1/4\" with 0 < M/D <= 4"),
    ('mem_ratio = ["1/2", 0.25]', "mem_ratio = [0]",
     "s.toml: [grid] mem_ratio: 0 is out of range; accepted: 0 < M/D <= 4"),
    ("repetition = 2", "repetition = 0",
     "s.toml: [grid] repetition: 0; accepted: a whole number >= 1"),
    ("repetition = 2", "colour = [1]",
     "s.toml: [grid]: unknown key 'colour'; accepted: approach, zipf_theta, mem_ratio, workload, repetition "
     "or a YCSB property given as a list"),
    ("operationcount = 2000", "operationcount = 2000\nzipfianconstant = 0.5",
     "s.toml: [fixed] zipfianconstant: use [grid] zipf_theta"),
    ("operationcount = 2000", "operationcount = 2000\nbogus = 1",
     "s.toml: [fixed]: unknown key 'bogus'; accepted: YCSB properties"),
    ("recordcount = 1000\n", "",
     "s.toml: [fixed] recordcount: missing; the data size D = recordcount × item footprint needs it "
     "(a whole number >= 1)"),
    ('workload = ["readonly"]', 'workload = ["no-such-workload"]',
     "s.toml: [grid] workload: no workload file 'no-such-workload'"),
    ('zipf_theta = [0.99, 0.5]\n', "",
     "s.toml: [grid] zipf_theta: missing; required: a non-empty list"),
    ("[fixed]", "speed = 1\n[fixed]",
     "s.toml: top level: unknown key 'speed'; accepted: name, description, fixed, grid, run, memory, per_approach"),
    ("repetition = 2", "repetition = 2\n[per_approach.logging]\noperationcount = 5",
     "s.toml: [per_approach.logging]: 'logging' is not in [grid] approach; accepted: memcached, lru"),
    ("repetition = 2", "repetition = 2\n[per_approach.lru]\nrecordcount = 5",
     "s.toml: [per_approach.lru] recordcount: not settable per approach (every approach of a slice sees the same "
     "data and requests); accepted: operationcount, warmupoperations"),
    ("repetition = 2", "repetition = 2\n[per_approach.lru]\noperationcount = 0",
     "s.toml: [per_approach.lru] operationcount: 0; accepted: a whole number >= 1"),
    ("repetition = 2", "repetition = 2\n[per_approach]\nlru = 5",
     "s.toml: [per_approach.lru]: must be a table with one or more of operationcount, warmupoperations"),
    ("[fixed]", "[run]\nmode = \"rocket\"\n[fixed]",
     "s.toml: [run] mode: 'rocket'; accepted: in-process, network"),
    ("[fixed]", "[run]\nturbo = true\n[fixed]",
     "s.toml: [run]: unknown key 'turbo'; accepted: mode, server_threads, perf, timeout_s, network_conns, network_depth, "
     "driver_depth, io_engine, io_direct, spill_device"),
    ("[fixed]", "[run]\ndriver_depth = 512\n[fixed]",
     "s.toml: [run] driver_depth: 512; accepted: 1 to 256 (requests each in-process driver thread keeps in flight)"),
    ("[fixed]", "[run]\ndriver_depth = 0\n[fixed]",
     "s.toml: [run] driver_depth: 0; accepted: a whole number >= 1"),
    ("[fixed]", "[run]\nio_direct = \"yes\"\n[fixed]",
     "s.toml: [run] io_direct: 'yes'; accepted: true or false"),
    ("[fixed]", "[run]\nio_engine = \"turbo\"\n[fixed]",
     "s.toml: [run] io_engine: 'turbo'; accepted: sync, threads, aio, uring"),
    ("[fixed]", "[run]\nspill_device = \"tmpfs\"\n[fixed]",
     "s.toml: [run] spill_device: 'tmpfs'; accepted: disk (the disk under /var/tmp) or ram (a zram device: "
     "hit rates only, throughput is not the disk's)"),
    ("[fixed]", "[run]\nregime = \"ssd\"\n[fixed]",
     "s.toml: [run] regime: 'ssd'; accepted: native (the disk as it is) or hdd (its reads and writes limited to "
     "hdd_iops per second for each cell: a hard disk emulated)"),
    ("[fixed]", "[run]\nhdd_iops = 0\n[fixed]",
     "s.toml: [run] hdd_iops: 0; accepted: a whole number from 1 to 100000 (I/O operations per second of the "
     "emulated disk)"),
    ("[fixed]", "[run]\nhdd_from = \"warmup\"\n[fixed]",
     "s.toml: [run] hdd_from: 'warmup'; accepted: run (load and warm-up at the disk's own speed, the measured run "
     "on the emulated disk) or load (the whole cell on it)"),
    ("[fixed]", "[run]\nregime = \"hdd\"\nspill_device = \"ram\"\n[fixed]",
     "s.toml: [run] regime: hdd emulates a slow disk and needs spill_device = \"disk\" (a RAM device has no disk "
     "to limit)"),
    ("[fixed]", "[memory]\nallowance = \"lots\"\n[fixed]",
     "s.toml: [memory] allowance: 'lots'; accepted: \"auto\" or a whole number of bytes (4096) or a number "
     "with a binary unit K, M, G or T (512M, 1G, 1.5G)"),
    ("[fixed]", "[memory]\nswap = \"0.1K\"\n[fixed]",
     "s.toml: [memory] swap: '0.1K' (a fraction of a byte); accepted: \"auto\" or a whole number of bytes "
     "(4096) or a number with a binary unit K, M, G or T (512M, 1G, 1.5G)"),
    ("[fixed]", "[memory]\nprovisioning = \"same\"\n[fixed]",
     's.toml: [memory] provisioning: \'same\'; accepted: "equal", "own"'),
    ("[fixed]", "[memory]\nallowance_margin = \"4M\"\n[fixed]",
     's.toml: [memory] allowance_margin: applies to provisioning = "own" only'),
    ("[fixed]", "[memory]\nallowance_margin = \"8 M\"\n[fixed]",
     "s.toml: [memory] allowance_margin: '8 M'; accepted: a whole number of bytes (4096) or a number "
     "with a binary unit K, M, G or T (512M, 1G, 1.5G)"),
    ("[fixed]", "[memory]\nitem_footprint = 10\n[fixed]",
     "s.toml: [memory] item_footprint: 10; accepted: \"auto\" (measured) or bytes per item, a whole number >= 48"),
])
def test_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    assert err(tmp_path, GOOD.replace(old, new)).startswith(message)


def test_per_approach_run_length(tmp_path: Path) -> None:
    """[per_approach.NAME]: that approach's cells get its operationcount (and only they); the others
    keep [fixed]'s; the property is a cell parameter like any other (p_operationcount)."""
    spec = load_spec(write(tmp_path, GOOD + "[per_approach.lru]\noperationcount = 4000\nwarmupoperations = 0\n"))
    by = {c.approach: c for c in spec.cells()}
    assert by["lru"].properties["operationcount"] == 4000 and by["lru"].properties["warmupoperations"] == 0
    assert by["memcached"].properties["operationcount"] == 2000 and "warmupoperations" not in by["memcached"].properties
    assert by["lru"].params()["p_operationcount"] == 4000 and spec.fixed["operationcount"] == 2000


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    assert err(tmp_path, "[grid\n").startswith("s.toml: not valid TOML: ")
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "absent.toml")


def test_repo_specs_expand() -> None:
    root = Path(__file__).resolve().parents[2] / "experiments"
    counts = {n: len(load_spec(root / f"{n}.toml").cells()) for n in ("demo", "ci", "fig3-hitrate", "fig4-throughput")}
    assert counts == {"demo": 44, "ci": 26, "fig3-hitrate": 432, "fig4-throughput": 1296}


def test_theta_one_with_the_true_zipf(tmp_path: Path) -> None:
    f = write(tmp_path, GOOD.replace("zipf_theta = [0.99, 0.5]", "zipf_theta = [1.0]")
              .replace("[fixed]", '[fixed]\nrequestdistribution = "truezipf"'))
    assert [c.zipf_theta for c in load_spec(f).cells()][0] == 1.0


def test_figure_specs_use_the_true_zipf_and_every_approach() -> None:
    from acbench.approaches import APPROACHES
    root = Path(__file__).resolve().parents[2] / "experiments"
    for name in ("demo", "fig3-hitrate", "fig4-throughput"):
        spec = load_spec(root / f"{name}.toml")
        assert spec.fixed["requestdistribution"] == "truezipf", name
        paper = {n for n, a in APPROACHES.items() if a.figures}
        missing = paper - set(spec.grid["approach"]) - {"memcached-static", "alru-redis"}
        assert not missing, (name, missing)


def test_run_overrides_are_checked_as_the_spec_s_own(tmp_path):
    """acbench run --run-set KEY=VALUE: TOML values (or bare text), merged into [run] and validated."""
    from acbench.spec import load_spec, parse_run_setting
    assert parse_run_setting("io_engine=uring") == ("io_engine", "uring")
    assert parse_run_setting("io_engine=\"aio\"") == ("io_engine", "aio")
    assert parse_run_setting("driver_depth=32") == ("driver_depth", 32)
    assert parse_run_setting(" io_direct = true") == ("io_direct", True)
    for bad in ("depth", "=3", ""):
        with pytest.raises(SpecError, match="accepted: KEY=VALUE with KEY a \\[run\\] setting"):
            parse_run_setting(bad)
    p = write(tmp_path, GOOD.replace("[fixed]", "[run]\nio_engine = \"aio\"\n[fixed]"))
    s = load_spec(p, {"driver_depth": 32, "io_direct": True})
    assert (s.run["io_engine"], s.run["driver_depth"], s.run["io_direct"]) == ("aio", 32, True)
    assert load_spec(p, {"io_engine": "uring"}).run["io_engine"] == "uring"
    with pytest.raises(SpecError, match=r"s.toml: \[run\] io_direct: 'on'; accepted: true or false"):
        load_spec(p, {"io_direct": "on"})
    with pytest.raises(SpecError, match=r"s.toml: \[run\]: unknown key 'depth'"):
        load_spec(p, {"depth": 3})


def test_workloads_found_beside_the_spec_then_here_then_in_the_repo(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec in a directory of its own finds the repository's workloads; a file beside the spec
    wins over one in the current directory, which wins over the repository's."""
    from acbench.spec import find_workload
    specdir, here = tmp_path / "specs", tmp_path / "here"
    specdir.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)
    spec = specdir / "mine.toml"
    spec.write_text(GOOD)
    assert load_spec(spec).grid["workload"] == [("readonly", str((WORKLOADS / "readonly").resolve()))]
    (here / "workloads").mkdir()
    (here / "workloads" / "readonly").write_text("readproportion=1\n")
    assert find_workload(spec, "readonly")[1] == str(here / "workloads" / "readonly")
    (specdir / "readonly").write_text("readproportion=1\n")
    assert find_workload(spec, "readonly")[1] == str(specdir / "readonly")
    with pytest.raises(SpecError) as e:
        find_workload(spec, "nope")
    msg = str(e.value)
    assert msg.startswith(f"mine.toml: [grid] workload: no workload file 'nope'; looked in {specdir}, "
                          f"{specdir / 'workloads'}, {here}, {here / 'workloads'}, {WORKLOADS.resolve()} (in that order)")


def test_init_writes_a_spec_that_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """acbench init NAME: a commented template that loads as it is (workloads from the repository)
    and is never written over an existing file."""
    from typer.testing import CliRunner

    from acbench.cli import app
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["init", "mine"])
    assert r.exit_code == 0 and "wrote mine.toml" in r.output
    text = (tmp_path / "mine.toml").read_text()
    spec = load_spec(tmp_path / "mine.toml")
    assert spec.name == "mine" and len(spec.cells()) == 6
    assert spec.fixed["requestdistribution"] == "truezipf" and spec.grid["approach"] == ["memcached", "lru", "alru"]
    # every [run] key is shown with its default, every [memory] key commented
    from acbench.spec import MEMORY_DEFAULTS, RUN_DEFAULTS
    for k in list(RUN_DEFAULTS) + list(MEMORY_DEFAULTS):
        assert f"\n{k} = " in text or f"\n# {k} = " in text, k
    r = CliRunner().invoke(app, ["init", "mine"])
    assert r.exit_code == 2 and "mine.toml exists; it is left as it is" in r.output
    assert (tmp_path / "mine.toml").read_text() == text
    r = CliRunner().invoke(app, ["init", "../x"])
    assert r.exit_code == 2 and "accepted: 1 to 64 characters" in r.output


def test_scan_workloads_accepted(tmp_path: Path) -> None:
    """A scan is the gets of consecutive keys (ycsb-driver/README.md): workload E's mix runs."""
    (tmp_path / "scans").write_text("# a scan mix\nreadproportion: 0.5\nscanproportion: 0.5\n")
    spec = load_spec(write(tmp_path, GOOD.replace('workload = ["readonly"]', 'workload = ["scans"]').replace(
        "operationcount = 2000", "operationcount = 2000\nminscanlength = 5\nmaxscanlength = 20")))
    cell = spec.cells()[0]
    assert cell.workload == "scans"
    assert cell.properties["minscanlength"] == 5 and cell.properties["maxscanlength"] == 20


def test_every_committed_spec_loads() -> None:
    """Each spec in experiments/ loads and lists its cells, as `acbench run` would; a spec that
    replays a generated trace (build/traces/, `make -C harness trace-demo`) may only miss that file."""
    specs = sorted(WORKLOADS.parent.glob("*.toml"))
    assert len(specs) >= 40, specs
    for f in specs:
        try:
            assert load_spec(f).cells(), f
        except SpecError as e:
            assert "[fixed] trace:" in str(e) and "build/traces/" in str(e) and "is missing" in str(e), str(e)
