"""acbench run --cluster (cluster.py) on a LocalCluster of 2 workers and on a `dask scheduler` +
`dask worker` started as the README says (root, cgroups, memcached-ac): the same rows as a local
run, resume, a killed worker, Ctrl-C on the submitter, the build check, --cells-per-host; the Slurm
set-up's job script
(dask-jobqueue, no Slurm needed)."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import psutil
import pytest
from rich.console import Console

from click.testing import Result
from typer.testing import CliRunner

from acbench import cluster, leftovers, sysinfo
from acbench.cli import app
from acbench.results import RunDir
from acbench.runner import RunError, identities, run_spec
from acbench.spec import load_spec

# runs real cells: one such module at a time under pytest-xdist (conftest.machine_state_lock)
pytestmark = pytest.mark.machine

TOP = Path(__file__).resolve().parents[2]
WORKLOADS = TOP / "experiments" / "workloads"
# two deterministic approaches (their counts repeat exactly with one driver thread), 4 cells of
# 8000 records (lru's -m at M/D 1/2 above memcached-ac's 2 MiB), 4000 reads each; a fixed allowance:
# no calibration
SPEC = """
name = "clu"
[fixed]
recordcount = 8000
operationcount = 4000
fieldcount = 10
fieldlength = 100
[grid]
approach = ["lru", "alru-hstore"]
workload = ["readonly"]
zipf_theta = [0.9, 0.99]
mem_ratio = ["1/2"]
[run]
perf = false
server_threads = 1
[memory]
item_footprint = 1184
allowance = "16M"
"""
IDS = sorted(f"{a}_readonly_z{t}_m0.5_r0" for a in ("lru", "alru-hstore") for t in ("0.9", "0.99"))
# what depends on timing (durations, CPU and I/O counts, samples of residency, memory peaks, the
# kernel's paging under the machine's memory pressure) or names the run: the other columns must be
# equal to the local run's (in 14 runs of SPEC and a 16-cell variant, local and on local:1 and
# local:2, these differed between runs; io_write_bytes by a page, memcached's LRU crawler by when it ran)
TIMED_PREFIXES = ("cpu_", "disk_read", "disk_write", "lat_", "proc_", "loadavg_", "cell_cpu_", "cell_minor_",
                  "cell_vol_", "cell_invol_", "cell_block_", "cell_disk_", "cg_peak_", "cg_pgfault", "cg_pgmaj",
                  "cg_usage_max_", "cg_io_", "swap_", "resident_", "perf_", "ac_write_", "spill_read_us_")
TIMED_PARTS = ("major_faults",)
TIMED = {"run_id", "date", "run_duration_s", "throughput_ops_s", "load_duration_s", "minor_faults",
         "vol_ctx_switches", "invol_ctx_switches", "ctx_switches_per_op", "read_amplification",
         "ac_lru_maintainer_juggles", "ac_lru_crawler_items_checked", "io_write_bytes", "cell_wall_s",
         "machine_busy_cpu_s", "other_cpu_s", "other_cpu_share", "wait4_maxrss_bytes", "peak_rss_bytes",
         "lru_r_hit_rate", "loss_overhead_pp", "loss_policy_pp"}


def cli(*args: str) -> Result:
    """acbench in this process (no cell runs: a refusal, or a resume with nothing to do)."""
    return CliRunner().invoke(app, list(args))


def acbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acbench", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The README's set-up on one machine: `dask scheduler` (allowed-failures 0) and one `dask worker
    --resources cell=1` started in the checkout with ACBENCH_HOME; its address. Both stopped at the end."""
    d = tmp_path_factory.mktemp("scheduler")
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", "ACBENCH_HOME": str(TOP),
           "PYTHONPATH": os.pathsep.join([str(TOP / "harness"), str(TOP / "analysis"),
                                          os.environ.get("PYTHONPATH", "")])}
    log = open(d / "log.txt", "w")
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--dashboard-address", "127.0.0.1:0", "--scheduler-file",
                               str(d / "scheduler.json")], env=env, stdout=log, stderr=log)]
    try:
        deadline = time.monotonic() + 60
        while not (d / "scheduler.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads((d / "scheduler.json").read_text())["address"]
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--host",
                                       "127.0.0.1", "--nworkers", "1", "--nthreads", "1", "--resources", "cell=1"],
                                      env=env, cwd=TOP, stdout=log, stderr=log))
        from distributed import Client
        with Client(address, timeout="60s") as c:
            c.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, scheduler: str) -> dict[str, object]:
    """The spec run locally, then in two sessions on clusters: lru's cells on local:2, the others
    resumed on the scheduler and worker started as the README says."""
    d = tmp_path_factory.mktemp("cluster")
    (d / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = d / "clu.toml"
    spec.write_text(SPEC)
    res = d / "results"
    out: dict[str, object] = {"spec": spec, "results": res, "scheduler": scheduler}
    out["local"] = acbench("run", str(spec), "--run-id", "local", "--results", str(res))
    out["part"] = acbench("run", str(spec), "--run-id", "cl", "--results", str(res), "--cluster", "local:2",
                          "--only", "lru")
    out["resumed"] = acbench("run", str(spec), "--run-id", "cl", "--results", str(res), "--cluster", scheduler)
    return out


def test_same_rows_as_local(runs: dict) -> None:
    for k in ("local", "part", "resumed"):
        assert runs[k].returncode == 0, k + runs[k].stdout + runs[k].stderr
    res = runs["results"]
    local = pd.read_parquet(res / "clu/local/cells.parquet").set_index("cell_id").sort_index()
    dist = pd.read_parquet(res / "clu/cl/cells.parquet").set_index("cell_id").sort_index()
    assert list(dist.index) == IDS and list(local.index) == IDS
    assert list(pd.read_csv(res / "clu/cl/cells.csv")["cell_id"].sort_values()) == IDS
    assert set(local.columns) == set(dist.columns)
    same = [c for c in local.columns if c not in TIMED and not c.startswith(TIMED_PREFIXES)
            and not any(p in c for p in TIMED_PARTS)]
    assert len(same) > 150 and {"hits", "disk_hits", "hit_rate", "opt_hits", "loss_pp", "cell_key",
                                "cgroup_limit_bytes", "binary_sha256", "git_revision"} <= set(same)
    pd.testing.assert_frame_equal(dist[same], local[same])
    assert (dist["hits"] > 0).all() and (dist["disk_hits"] > 0).all()
    assert set(dist["host"]) == {sysinfo.machine()["host"]}
    # each cell's files came back: its row, its command, the trace OPT read
    for cid in IDS:
        files = {f.name for f in (res / "clu/cl/cells" / cid).iterdir()}
        assert {"row.json", "command.txt", "trace.txt", "driver.json"} <= files, (cid, files)


def test_resume_skips_finished_cells(runs: dict) -> None:
    part, resumed = runs["part"].stdout, runs["resumed"].stdout
    assert "cluster local:2: 2 worker(s), 1 cell(s) per host" in part
    assert "2 cells run, 0 skipped, 0 failed" in part, part
    assert f"cluster {runs['scheduler']}: 1 worker(s), 1 cell(s) per host" in resumed
    assert "2 of 4 cells already finished" in resumed and "2 cells run, 2 skipped, 0 failed" in resumed, resumed
    # nothing left to place: no cluster is started
    r = cli("run", str(runs["spec"]), "--run-id", "cl", "--results", str(runs["results"]), "--cluster", "local:2")
    assert r.exit_code == 0 and "0 cells run, 4 skipped, 0 failed" in r.stdout and "cluster local" not in r.stdout


@pytest.fixture(scope="module")
def local1() -> Iterator[Any]:
    """A LocalCluster of one worker (connect("local:1")) and its client; stopped at the end, and
    what a stopped worker left removed."""
    client, lc = cluster.connect("local:1", 1)
    try:
        yield client
    finally:
        client.close()
        lc.close()
        leftovers.cleanup_before_run()


def test_other_build_refused(runs: dict, local1: Any) -> None:
    """A worker whose revision or binary is not the submitter's: refused before any cell, and by the
    task itself (a worker that joined later)."""
    found = cluster.build_of()
    expected = {"git_revision": "0123456789ab", "binary_sha256": found["binary_sha256"]}
    msg = (f"worker on {found['host']} ({found['home']}) runs another build: git_revision {found['git_revision']} "
           "(submitter: 0123456789ab); check out the same revision on every host and build it (make)")
    assert cluster.mismatch(expected, found) == msg
    assert cluster.mismatch({k: found[k] for k in ("git_revision", "binary_sha256")}, found) is None
    spec = load_spec(runs["spec"])
    c = spec.cells()[0]
    with pytest.raises(cluster.BuildMismatch, match="^" + msg.replace("(", r"\(").replace(")", r"\)") + "$"):
        cluster.cell_task(spec, c, "", "x", "in-process", False, identities(spec, [c], "in-process", False)[c.cell_id],
                          expected)
    with pytest.raises(RunError) as e:
        cluster.preflight(local1, {**expected, "binary_sha256": "feedfacefeedface"})
    assert str(e.value) == "refused: " + msg.replace(
        "(submitter: 0123456789ab)", f"(submitter: 0123456789ab), binary_sha256 {found['binary_sha256']} "
        "(submitter: feedfacefeedface)")


def test_cells_per_host_needs_deterministic_approaches(runs: dict, tmp_path: Path) -> None:
    spec = load_spec(runs["spec"])
    cluster.cells_per_host_ok(spec.cells(), 2)          # lru, alru-hstore: deterministic
    timed = tmp_path / "timed.toml"
    timed.write_text(SPEC.replace('"lru", "alru-hstore"', '"lru", "alru", "memcached"'))
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    r = cli("run", str(timed), "--results", str(tmp_path), "--cluster", "local:2", "--cells-per-host", "2")
    assert r.exit_code == 2
    assert " ".join(r.stderr.split()) == (
        "acbench run: error: --cells-per-host 2: approach(es) alru, memcached are not deterministic: cells side "
        "by side would change each other's results; accepted: 1, or a spec whose approaches are all "
        "deterministic (approaches.py) with threads = 1")
    cells = spec.cells()
    for c in cells:
        c.properties["threads"] = 2
    with pytest.raises(RunError) as e:
        cluster.cells_per_host_ok(cells, 3)
    assert str(e.value).startswith("--cells-per-host 3: cell(s) alru-hstore_readonly_z0.99_m0.5_r0, "
                                   "alru-hstore_readonly_z0.9_m0.5_r0, lru_readonly_z0.99_m0.5_r0 drive more than one "
                                   "thread: ")
    r = cli("run", str(runs["spec"]), "--results", str(tmp_path), "--cells-per-host", "2")
    assert r.exit_code == 2 and r.stderr == "acbench run: error: --cells-per-host 2: only with --cluster\n"
    with pytest.raises(RunError, match=r"^--cluster local:zero: accepted: local:N \(N >= 1 workers on this machine\) "
                       r"or a scheduler address \(tcp://HOST:8786\)$"):
        cluster.connect("local:zero", 1)


def test_slurm_job_script() -> None:
    """The README's SLURMCluster options, rendered as the job script each worker is started by
    (SLURMJob: the job SLURMCluster submits; no scheduler, no Slurm): one worker per node, whole
    nodes, the cell resource, acbench of the checkout's venv working on the checkout."""
    slurm = pytest.importorskip("dask_jobqueue.slurm")
    job = slurm.SLURMJob(scheduler="tcp://login1:8786", name="acbench", queue="batch", cores=2, processes=1,
                         memory="8GB", walltime="04:00:00", python="/home/me/memcached-ac/build/venv/bin/python",
                         job_extra_directives=["--exclusive"], job_directives_skip=["--mem"],
                         worker_extra_args=["--resources", "cell=1"],
                         job_script_prologue=["cd /home/me/memcached-ac", "export ACBENCH_HOME=$PWD"])
    lines = job.job_script().splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert {"#SBATCH --exclusive", "#SBATCH -p batch", "#SBATCH -t 04:00:00", "#SBATCH -n 1",
            "#SBATCH --cpus-per-task=2"} <= set(lines)
    assert not any(ln.startswith("#SBATCH --mem") for ln in lines)
    assert lines.index("cd /home/me/memcached-ac") < lines.index("export ACBENCH_HOME=$PWD") < len(lines) - 1
    assert lines[-1].startswith("/home/me/memcached-ac/build/venv/bin/python -m distributed.cli.dask_worker "
                                "tcp://login1:8786 --name acbench --nthreads 2 ")
    assert lines[-1].endswith(" --resources cell=1")


def cgroup_dirs(proc_cgroup: str) -> list[Path]:
    """The acbench cgroup directories named by a /proc/PID/cgroup text (v1: one per controller)."""
    out = []
    for ln in proc_cgroup.splitlines():
        _, controllers, path = ln.split(":", 2)
        if "acbench-" in path:
            out.append(Path("/sys/fs/cgroup") / controllers.removeprefix("name=") / path.lstrip("/"))
    return out


KILL_SPEC = SPEC.replace("operationcount = 4000\n", "") \
    .replace('approach = ["lru", "alru-hstore"]', 'approach = ["lru"]') \
    .replace("zipf_theta = [0.9, 0.99]", "zipf_theta = [0.99]") \
    .replace('mem_ratio = ["1/2"]', 'mem_ratio = ["1/2"]\noperationcount = [4000, 100000000]')
SHORT, LONG = "lru_readonly_z0.99_m0.5_operationcount4000_r0", "lru_readonly_z0.99_m0.5_operationcount100000000_r0"


def kill_worker_of(cmdline_part: str, timeout_s: float = 60) -> dict[str, Any]:
    """Waits for the memcached-ac whose command line has cmdline_part, SIGKILLs the worker process
    running it (a child of this process: LocalCluster); returns its pid and cgroup text."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for p in psutil.process_iter(["name", "cmdline"]):
            if p.info["name"] == "memcached-ac" and any(cmdline_part in a for a in p.info["cmdline"] or []):
                worker = next(a for a in p.parents() if a.ppid() == os.getpid())
                group = Path(f"/proc/{p.pid}/cgroup").read_text()
                worker.send_signal(signal.SIGKILL)
                return {"server": p, "cgroup": group}
        time.sleep(0.2)
    return {}


def test_killed_worker_fails_its_cell_and_leaves_nothing(tmp_path: Path) -> None:
    """A worker SIGKILLed during a cell: that cell fails with the reason (KilledWorker: no retry),
    the other cell completes, the run exits 1; no server or cgroup of the dead worker is left (the
    worker started in its place and the end of the run remove them); a rerun runs only that cell."""
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "kill.toml"
    spec.write_text(KILL_SPEC)
    killed: dict[str, Any] = {}
    killer = threading.Thread(target=lambda: killed.update(kill_worker_of("operationcount=100000000")))
    killer.start()
    out = io.StringIO()
    try:
        rc = run_spec(spec, tmp_path, "k", False, False, None, Console(file=out, width=200),
                      cluster=cluster.Cluster("local:2"))
    finally:
        killer.join()
    assert killed, "the long cell's server never started"
    assert rc == 1, out.getvalue()
    rd = tmp_path / "clu" / "k"
    assert "1 cells run, 0 skipped, 1 failed" in out.getvalue(), out.getvalue()
    df = pd.read_parquet(rd / "cells.parquet")
    assert list(df["cell_id"]) == [SHORT] and list(df["status"]) == ["ok"]
    err = (rd / "cells" / LONG / "error.txt").read_text()
    assert err.startswith(f"cell {LONG} failed on the cluster: KilledWorker: "), err
    server = killed["server"]
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    dirs = cgroup_dirs(killed["cgroup"])
    assert dirs and not [d for d in dirs if d.exists()]
    # the rerun would run the long cell again (and only it)
    assert RunDir(rd).finished() == {SHORT}


def test_ctrl_c_stops_the_running_cell_on_its_worker(tmp_path: Path, scheduler: str) -> None:
    """Ctrl-C on the submitter of a run on a separately started scheduler and worker: acbench exits
    130 after the running cell was stopped on its worker (its server gone, its cgroup removed by the
    cell's own clean-up there), no cell is started after it, the worker stays up for the next run."""
    (tmp_path / "readonly").write_text((WORKLOADS / "readonly").read_text())
    spec = tmp_path / "kill.toml"
    spec.write_text(KILL_SPEC)
    p = subprocess.Popen([sys.executable, "-m", "acbench", "run", str(spec), "--run-id", "c", "--results",
                          str(tmp_path), "--cluster", scheduler], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        server, group = None, ""
        deadline = time.monotonic() + 120
        while server is None and time.monotonic() < deadline and p.poll() is None:
            for q in psutil.process_iter(["name", "cmdline"]):
                if q.info["name"] == "memcached-ac" and any("operationcount=100000000" in a
                                                           for a in q.info["cmdline"] or []):
                    server, group = q, Path(f"/proc/{q.pid}/cgroup").read_text()
                    break
            time.sleep(0.2)
        assert server is not None, "the long cell's server never started"
        time.sleep(1)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, out
    assert "stopping 1 running cell(s) on their workers" in out and "interrupted: " in out, out
    assert time.monotonic() - t0 < 30
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    dirs = cgroup_dirs(group)
    assert dirs and not [d for d in dirs if d.exists()]
    from distributed import Client
    with Client(scheduler, timeout="30s") as c:
        assert len(c.scheduler_info()["workers"]) == 1          # the worker is still there
    rd = tmp_path / "clu" / "c"
    assert LONG not in (RunDir(rd).finished() if rd.exists() else set())
