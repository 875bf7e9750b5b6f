"""`acbench fig2` on tiny real runs (memcached-ac in-process, valgrind's callgrind, perf where it
works): one row per method and θ, overheads against the baseline (none-flat), the kernel-time and
perf columns, what each method's server reported, vma's 4 KiB granules and vm.max_map_count raised
for them and restored (a fake sysctl file for the raise, the refusal and an interrupt; one real run
that needs the raise), the table's noise marks, the figure; and the refusals of bad arguments."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from acbench import fig2, fig2_cmd, leftovers

# runs real cells (vma raises vm.max_map_count for them): one such module at a time under pytest-xdist
# (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

METHODS = "none-flat,none,lru,alru,vma"
MAP_COUNT = Path("/proc/sys/vm/max_map_count")


def acbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acbench", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def perf_why(tmp_path_factory: pytest.TempPathFactory) -> str:
    return fig2.perf_status(tmp_path_factory.mktemp("perf"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess, str]:
    out = tmp_path_factory.mktemp("fig2")
    before = MAP_COUNT.read_text()
    cp = acbench("fig2", "--out", str(out), "--records", "2000", "--reads", "100000", "--cg-reads", "5000",
                 "--repeats", "2", "--theta", "0.99", "--methods", METHODS)
    return out, cp, before


def test_rows_and_overheads(tiny: tuple[Path, subprocess.CompletedProcess, str]) -> None:
    out, cp, _ = tiny
    assert cp.returncode == 0, cp.stderr
    df = pd.read_csv(out / "fig2.csv").set_index("tracking_method")
    assert list(df.index) == METHODS.split(",")
    assert (df["records"] == 2000).all() and (df["cg_reads"] == 5000).all() and (df["repeats"] == 2).all()
    assert (df["zipf_theta"] == 0.99).all() and (df["baseline"] == "none-flat").all()
    assert df["counter_source"].str.startswith("callgrind cache simulation: I1 32 KiB 8-way").all()
    for short, col in fig2.METRICS:
        assert df.loc["none-flat", f"{short}_overhead_pct"] == 0.0
        assert df.loc["none", f"{short}_overhead_vs_none_pct"] == 0.0
        assert (df[col] > 0).all() or short == "l1i", col
    # an exact LRU moves the item on every access: more instructions than no tracking at all
    assert df.loc["lru", "instructions_per_access"] > 1.05 * df.loc["none-flat", "instructions_per_access"]
    lru_pct = 100 * (df.loc["lru", "instructions_per_access"] / df.loc["none-flat", "instructions_per_access"] - 1)
    assert math.isclose(df.loc["lru", "instructions_overhead_pct"], lru_pct, rel_tol=1e-9)
    vs_none = 100 * (df.loc["lru", "instructions_per_access"] / df.loc["none", "instructions_per_access"] - 1)
    assert math.isclose(df.loc["lru", "instructions_overhead_vs_none_pct"], vs_none, rel_tol=1e-9)
    # two timed runs per method, their medians reported
    runs = pd.read_csv(out / "fig2-runs.csv")
    timed = runs[runs["run"] == "timed"]
    assert len(timed) == 2 * len(df) and (timed["reads"] == 100000).all()
    for m, r in timed.groupby("tracking_method"):
        assert math.isclose(df.loc[m, "ns_per_access"], r["ns_per_access"].median(), rel_tol=1e-9)
        assert math.isclose(df.loc[m, "sys_ns_per_access"], r["sys_ns_per_access"].median(), rel_tol=1e-9, abs_tol=1e-9)
    for name in METHODS.split(","):
        assert (out / "theta-0.99" / "callgrind" / f"{name}.out").stat().st_size > 0
    assert (out / "fig2.png").stat().st_size > 0 and (out / "fig2.pdf").stat().st_size > 0


def test_callgrind_counts_the_measured_reads_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The callgrind run's load is uninstrumented and its warm-up zeroed by the driver thread itself
    (callgrind keeps counts per thread): a warm-up 20 times the measured reads leaves the instructions
    per read where a run without one has them (a warm-up counted would make them ~21 times as many)."""
    cfg = fig2.Config(records=2000, reads=1000, cg_reads=2000, repeats=1)
    m = next(x for x in fig2.METHODS if x.name == "lru")
    per_read = {}
    for warm in (0, 40_000):
        monkeypatch.setattr(fig2, "CG_WARMUP", warm)
        per_read[warm] = fig2.callgrind_run(m, cfg, 0.99, tmp_path / f"w{warm}")["instructions_per_access"]
        js = json.loads((tmp_path / f"w{warm}" / "lru-callgrind.json").read_text())
        assert js["warmup"]["reads"]["total"] == warm and js["run"]["reads"]["total"] == 2000
    assert math.isclose(per_read[40_000], per_read[0], rel_tol=0.05), per_read


def test_a_failed_callgrind_run_leaves_its_row_without_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """valgrind stopping on one method (its mapping table full: vma's open granules at 1M records)
    costs that row's counts, not the other methods' runs; the command writes everything, then fails
    naming the row."""
    from typer.testing import CliRunner

    from acbench.cli import app

    def fake(m: fig2.Method, cfg: fig2.Config, theta: float, workdir: Path, granule: int = fig2.PAGE) -> dict:
        if m.name == "lru":
            raise fig2.Fig2Error("lru: memcached-ac exited with status 1: VG_N_SEGMENTS is too low")
        return {"instructions_per_access": 700.0, "l1i_misses_per_access": 0.5, "l1d_misses_per_access": 17.0}

    monkeypatch.setattr(fig2, "callgrind_run", fake)
    out = tmp_path / "f2"
    r = CliRunner().invoke(app, ["fig2", "--out", str(out), "--records", "2000", "--reads", "20000",
                                 "--cg-reads", "1000", "--repeats", "1", "--theta", "0.99",
                                 "--methods", "none-flat,lru,alru"])
    assert r.exit_code == 1, r.output
    assert "the callgrind run of lru at θ 0.99 failed" in " ".join(r.output.split())
    df = pd.read_csv(out / "fig2.csv").set_index("tracking_method")
    assert list(df.index) == ["none-flat", "lru", "alru"]
    assert "VG_N_SEGMENTS" in df.loc["lru", "callgrind_error"] and df["callgrind_error"].isna().sum() == 2
    assert math.isnan(df.loc["lru", "instructions_per_access"]) and df.loc["alru", "instructions_per_access"] == 700.0
    assert df.loc["lru", "ns_per_access"] > 0 and (out / "fig2-runs.csv").exists()


def test_kernel_time_and_perf_columns(tiny: tuple[Path, subprocess.CompletedProcess, str], perf_why: str) -> None:
    out, cp, _ = tiny
    assert cp.returncode == 0, cp.stderr
    df = pd.read_csv(out / "fig2.csv").set_index("tracking_method")
    assert (df["kernel_time_source"] == fig2.KERNEL_TIME_SOURCE).all()
    assert (df["user_ns_per_access"] > 0).all()
    # alru's timer thread sleeps 1 us at a time: system calls all through the read phase
    assert df.loc["alru", "sys_ns_per_access"] > 0
    assert (df["sys_ns_per_access"] >= 0).all()
    cpu = df["user_ns_per_access"] + df["sys_ns_per_access"]
    assert ((df["cpu_ns_per_access"] - cpu).abs() < 1e-6).all()      # medians of two runs: means, which add up
    runs = pd.read_csv(out / "fig2-runs.csv")
    if perf_why:        # no perf here: empty columns, the reason in perf_source, no load-only runs
        assert df["faults_per_access"].isna().all() and df["ctx_switches_per_access"].isna().all()
        assert (df["perf_source"] == perf_why).all() and (runs["run"] == "timed").all()
        return
    assert (df["perf_source"] == fig2.PERF_SOURCE).all()
    load = runs[runs["run"] == "load-only"].set_index("tracking_method")
    assert sorted(load.index) == sorted(METHODS.split(",")) and (load["reads"] == 0).all()
    assert (load["page_faults"] > 0).all() and (load["context_switches"] > 0).all()
    timed = runs[runs["run"] == "timed"]
    for m, r in timed.groupby("tracking_method"):
        want = (r["page_faults"].median() - load.loc[m, "page_faults"]) / 100000
        assert math.isclose(df.loc[m, "faults_per_access"], want, rel_tol=1e-9, abs_tol=1e-12)
        want = (r["context_switches"].median() - load.loc[m, "context_switches"]) / 100000
        assert math.isclose(df.loc[m, "ctx_switches_per_access"], want, rel_tol=1e-9, abs_tol=1e-12)
    for m in METHODS.split(","):
        assert (out / "theta-0.99" / "perf" / f"{m}-load.txt").exists()


def test_servers_ran_the_methods(tiny: tuple[Path, subprocess.CompletedProcess, str]) -> None:
    out, cp, before = tiny
    assert cp.returncode == 0, cp.stderr

    def anticache(m: str) -> dict:
        return json.loads((out / "theta-0.99" / f"{m}.json").read_text())["server"]["anticache"]
    assert anticache("none-flat")["lru_maintainer"] == "off" and anticache("none")["lru_maintainer"] == "on"
    assert anticache("alru")["alru_clock_source"] == "timer"
    assert anticache("alru")["alru_resolution_ns"] == 1000 and anticache("alru")["alru_timer_ticks"] > 0
    vma = anticache("vma")
    assert vma["policy"] == "vma" and vma["vma_granule_bytes"] == 4096 and vma["vma_reset_ns"] == 10**9
    assert vma["vma_faults"] > 0                      # the load wrote every granule it used
    for m in METHODS.split(","):
        a = anticache(m)
        assert a.get("spilled_items", 0) == 0 and a.get("lost_items", 0) == 0
    df = pd.read_csv(out / "fig2.csv").set_index("tracking_method")
    assert df.loc["vma", "vma_granule_bytes"] == 4096 and df["vma_granule_bytes"].drop("vma").isna().all()
    # 2000 records need fewer map entries than any machine allows: held at its value, unchanged
    assert df.loc["vma", "vma_max_map_count"] == int(before)
    assert MAP_COUNT.read_text() == before


def test_vma_raises_the_map_count_and_restores_it(tmp_path: Path) -> None:
    """75,000 records: 4 KiB granules need vm.max_map_count 67072 (the default is 65530); two θ."""
    before = MAP_COUNT.read_text()
    need = fig2.vma_map_need(fig2.item_mb(75_000))
    assert need == 67072
    out = tmp_path / "fig2"
    args = ["fig2", "--out", str(out), "--records", "75000", "--reads", "20000", "--repeats", "1",
            "--theta", "0.99,0.5", "--methods", "none-flat,vma", "--no-callgrind"]
    cp = acbench(*args)
    assert MAP_COUNT.read_text() == before
    if cp.returncode == 1:          # cannot raise it here (not root, read-only /proc/sys): said so
        assert int(before) < need
        assert f"vma needs vm.max_map_count >= {need} for 4 KiB protection granules" in cp.stderr
        granule, maps = fig2.vma_granule(fig2.item_mb(75_000), int(before)), int(before)
        assert f"or pass --allow-big-granules to let vma use {granule}-byte granules" in cp.stderr
        cp = acbench(*args, "--allow-big-granules")
    else:
        granule, maps = 4096, max(int(before), need)
    assert cp.returncode == 0, cp.stderr
    assert MAP_COUNT.read_text() == before
    df = pd.read_csv(out / "fig2.csv")
    assert list(zip(df["tracking_method"], df["zipf_theta"])) == [("none-flat", 0.99), ("vma", 0.99),
                                                                 ("none-flat", 0.5), ("vma", 0.5)]
    vma = df[df["tracking_method"] == "vma"]
    assert (vma["vma_granule_bytes"] == granule).all() and (vma["vma_max_map_count"] == maps).all()
    assert (df.loc[df["tracking_method"] == "none-flat", "time_overhead_pct"] == 0.0).all()
    for theta in ("0.99", "0.5"):
        d = json.loads((out / f"theta-{theta}" / "vma.json").read_text())
        assert d["config"]["zipfianconstant"] == float(theta) and d["config"]["recordcount"] == 75000
        assert d["server"]["anticache"]["vma_granule_bytes"] == granule


@pytest.fixture
def fake_sysctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(leftovers.RUN_DIR_ENV, str(tmp_path / "run"))
    p = tmp_path / "max_map_count"
    p.write_text("65530\n")
    return p


def _recorded(tmp_path: Path) -> dict:
    markers = list((tmp_path / "run" / "runs").glob("*.json"))
    return json.loads(markers[0].read_text())["sysctls"] if markers else {}


def test_map_count_held_for_the_block(fake_sysctl: Path, tmp_path: Path) -> None:
    with fig2.vma_map_count(1590, sysctl=fake_sysctl) as vs:
        # 1,000,000 records: -m 1590 MiB, + 67 MiB of headroom, in 4 KiB granules, + 4096
        assert vs.granule == 4096 and vs.map_count == 428288 == fig2.vma_map_need(1590)
        assert fake_sysctl.read_text() == "428288"
        # recorded while held: `acbench cleanup` restores it if this process is killed
        assert _recorded(tmp_path) == {str(fake_sysctl): {"old": "65530", "set": "428288"}}
        assert vs.note == "vm.max_map_count raised from 65530 to 428288 for 4 KiB granules (restored after)"
    assert fake_sysctl.read_text() == "65530" and _recorded(tmp_path) == {}
    with pytest.raises(KeyboardInterrupt):                # Ctrl-C in a vma run
        with fig2.vma_map_count(1590, sysctl=fake_sysctl):
            assert fake_sysctl.read_text() == "428288"
            raise KeyboardInterrupt
    assert fake_sysctl.read_text() == "65530" and _recorded(tmp_path) == {}
    fake_sysctl.write_text("1000000\n")                   # enough already: left at its value
    with fig2.vma_map_count(1590, sysctl=fake_sysctl) as vs:
        assert (vs.granule, vs.map_count) == (4096, 1000000) and fake_sysctl.read_text() == "1000000"
    assert fake_sysctl.read_text() == "1000000"


def test_map_count_refused(fake_sysctl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, value: str) -> str:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(leftovers, "hold_sysctl", refuse)
    with pytest.raises(fig2.Fig2Error) as e:
        with fig2.vma_map_count(1590, sysctl=fake_sysctl):
            pass
    assert str(e.value) == (
        "vma needs vm.max_map_count >= 428288 for 4 KiB protection granules over its 1657 MiB mapping (it is "
        f"65530), and raising it failed ({fake_sysctl}: Permission denied). Run as root (acbench raises it for "
        "vma's runs and restores it), or set it yourself (sysctl -w vm.max_map_count=428288), or pass "
        "--allow-big-granules to let vma use 32768-byte granules")
    with fig2.vma_map_count(1590, allow_big=True, sysctl=fake_sysctl) as vs:
        assert (vs.granule, vs.map_count) == (32768, 65530)
    assert fake_sysctl.read_text() == "65530\n"
    fake_sysctl.write_text("500000\n")                    # cannot hold it, but it is enough as it is
    with fig2.vma_map_count(1590, sysctl=fake_sysctl) as vs:
        assert (vs.granule, vs.map_count) == (4096, 500000)


def test_bad_arguments() -> None:
    cp = acbench("fig2", "--methods", "none-flat,lru,mprotect")
    assert cp.returncode == 2
    assert "unknown tracking method(s) mprotect; known: none-flat, none, lru, alru, alru-redis" in cp.stderr
    cp = acbench("fig2", "--theta", "0.99,1.5")
    assert cp.returncode == 2
    assert "--theta takes Zipf θ values in the open interval (0, 1), e.g. 0.99,0.5; got 1.5" in cp.stderr
    cases = [
        (dict(methods=("none", "lru", "vma")),
         "the methods must include none-flat (the baseline every overhead is relative to)"),
        (dict(records=0), "--records must be a whole number of at least 100, got 0"),
        (dict(records=-5), "--records must be a whole number of at least 100, got -5"),
        (dict(thetas=(0.0,)), "--theta takes Zipf θ values in the open interval (0, 1), e.g. 0.99,0.5; got 0"),
        (dict(thetas=(1.0,)), "--theta takes Zipf θ values in the open interval (0, 1), e.g. 0.99,0.5; got 1"),
        (dict(thetas=()), "--theta needs at least one Zipf θ in the open interval (0, 1), e.g. 0.99,0.5"),
    ]
    for kw, msg in cases:
        with pytest.raises(fig2.Fig2UsageError) as e:
            fig2.Config(**kw).check()
        assert str(e.value) == msg
    with pytest.raises(fig2.Fig2UsageError) as e:
        fig2.parse_thetas("0.99,high")
    assert str(e.value) == ("--theta takes comma-separated Zipf θ values in the open interval (0, 1), e.g. "
                            "0.99,0.5; got 'high'")
    assert fig2.parse_thetas("0.99, 0.5,0.99") == (0.99, 0.5)
    fig2.Config().check()                                 # the defaults: the paper's
    assert fig2.Config().records == 1_000_000 and fig2.Config().thetas == (0.99, 0.5)
    with pytest.raises(fig2.Fig2Error, match=r"1,000,000 records need -m 1590 MiB .* this machine has 1000 MiB "
                                             r"available: use fewer --records"):
        fig2.check_memory(1_000_000, 1000)
    fig2.check_memory(1_000_000, 1590)


def test_parse_callgrind(tmp_path: Path) -> None:
    p = tmp_path / "cg.out"
    p.write_text("version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nfn=x\n1 2\n"
                 "summary: 1000 200 100 3 40 5 1 2 0\ntotals: 1000 200 100 3 40 5 1 2 0\n")
    assert fig2.parse_callgrind(p) == {"Ir": 1000, "Dr": 200, "Dw": 100, "I1mr": 3, "D1mr": 40, "D1mw": 5,
                                       "ILmr": 1, "DLmr": 2, "DLmw": 0}
    p.write_text("not callgrind\n")
    with pytest.raises(fig2.Fig2Error, match="no events/totals lines"):
        fig2.parse_callgrind(p)


def test_parse_perf(tmp_path: Path) -> None:
    p = tmp_path / "perf.txt"
    p.write_text("# started on Sat Nov 28 08:32:37 2026\n\n1459,,page-faults,13154715,100.00,,\n"
                 "<not supported>,,context-switches,0,100.00,,\n")
    assert fig2.parse_perf(p) == {"page-faults": 1459, "context-switches": None}


def test_overheads() -> None:
    def row(m: str, theta: float, instr: float, l1i: float, ns: float) -> dict:
        return {"tracking_method": m, "zipf_theta": theta, "instructions_per_access": instr,
                "l1i_misses_per_access": l1i, "l1d_misses_per_access": 10.0, "ns_per_access": ns,
                "cpu_ns_per_access": 2 * ns}
    rows = [row("none-flat", 0.99, 500.0, 0.0, 100.0), row("none", 0.99, 520.0, 0.1, 125.0),
            row("lru", 0.99, 650.0, 0.5, 250.0), row("none-flat", 0.5, 400.0, 0.25, 200.0),
            row("lru", 0.5, 600.0, 0.375, 300.0)]
    out = fig2.overheads(rows)
    lru, lru5 = out[2], out[4]
    assert lru["instructions_overhead_pct"] == 30.0 and lru["time_overhead_pct"] == 150.0
    assert lru["cpu_overhead_pct"] == 150.0 and lru["l1d_overhead_pct"] == 0.0
    assert lru["time_overhead_vs_none_pct"] == 100.0 and lru["instructions_overhead_vs_none_pct"] == 25.0
    assert math.isnan(lru["l1i_overhead_pct"])       # no baseline misses: no ratio
    # each θ against its own baseline; no "none" row at θ 0.5: no ratio against it
    assert lru5["instructions_overhead_pct"] == 50.0 and lru5["l1i_overhead_pct"] == 50.0
    assert math.isnan(lru5["instructions_overhead_vs_none_pct"])
    with pytest.raises(fig2.Fig2Error, match=r"no row of the baseline \(none-flat\) at θ 0.5"):
        fig2.overheads(rows[:3] + rows[4:])


def test_table_marks_noise() -> None:
    rows = [{"tracking_method": "none-flat", "zipf_theta": 0.99, "instructions_per_access": 700.0,
             "l1i_misses_per_access": 0.0002, "l1d_misses_per_access": 17.5, "ns_per_access": 380.0,
             "user_ns_per_access": 400.0, "sys_ns_per_access": 0.0, "faults_per_access": None,
             "ctx_switches_per_access": None, "cpu_ns_per_access": 400.0},
            {"tracking_method": "lru", "zipf_theta": 0.99, "instructions_per_access": 910.0,
             "l1i_misses_per_access": 0.0005, "l1d_misses_per_access": 19.25, "ns_per_access": 410.0,
             "user_ns_per_access": 420.0, "sys_ns_per_access": 2.5, "faults_per_access": 0.0125,
             "ctx_switches_per_access": 0.0001, "cpu_ns_per_access": 422.5}]
    text = fig2_cmd.table(fig2.overheads(rows), 0.01).splitlines()
    assert text[0].split() == ["method", "θ", "instr/read", "%", "L1I/read", "%", "L1D/read", "%", "ns/read",
                               "%", "user", "ns", "sys", "ns", "CPU", "%", "faults/read", "ctx", "sw/read"]
    assert text[2].split() == ["lru", "0.99", "910.0", "+30.0", "0.0005", "+150.0*", "19.250", "+10.0", "410.0",
                               "+7.9", "420.0", "2.500", "+5.6", "0.0125", "0.0001"]
    assert text[1].split()[:6] == ["none-flat", "0.99", "700.0", "+0.0", "0.0002", "+0.0*"]
    assert text[1].split()[-2:] == ["-", "-"]
    assert "* = L1 misses per read under 0.01 in the method or the baseline" in text[3]


def test_vma_granule_fits_the_map_count() -> None:
    for maps in (65530, 262144):
        room = maps - fig2.MAP_COUNT_RESERVE
        for mb in (64, 217, 1590, 20000):
            g = fig2.vma_granule(mb, maps)
            assert g >= 4096 and g & (g - 1) == 0
            assert math.ceil((mb + fig2.VMA_HEADROOM_MB) * fig2.MIB / g) <= room
            assert g == 4096 or math.ceil((mb + fig2.VMA_HEADROOM_MB) * fig2.MIB / (g // 2)) > room
    assert fig2.vma_granule(1590, 65530) == 32768 and fig2.vma_granule(1590, 428288) == 4096
    assert fig2.vma_granule(1590, 428287) == 8192
