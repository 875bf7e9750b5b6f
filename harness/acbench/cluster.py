"""`acbench run SPEC --cluster ADDRESS`: the cells as tasks of a Dask distributed cluster.

Only placement changes: each task runs runner.execute_cell on its worker, exactly as the local loop
does (cgroup, server, collectors, the worker's own memory plan and calibrations), in a temporary
directory whose files come back with the row; the submitter writes both into the run directory
(runner.record), as a local run does, cell by cell as they finish. Dask does the rest: scheduling,
heartbeats, and the isolation, through a worker resource: a worker is started with `cell=1` (one
worker per host, README) and each task asks for 1/K of it (K = --cells-per-host, 1 unless every
approach of the run is deterministic and drives one thread).

A worker must run the submitter's build: before any cell the submitter asks every worker for its
git revision and memcached-ac checksum and refuses the run if one differs; each task checks again
(a worker that joined later). A worker that dies during a cell: the scheduler gives up on the task
after ALLOWED_FAILURES retries (KilledWorker), the cell is recorded as failed with the reason, and
the sweep goes on; a later run resumes it. Each worker removes what dead acbench processes left on
its host when it starts (LeftoversPlugin: leftovers.py, as `acbench run` does). Ctrl-C on the
submitter cancels the queued cells and stops the running ones on their workers (a distributed.Event
per submission: stop_running, _watch_stop)."""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from distributed import WorkerPlugin
from rich.console import Console

from acbench import leftovers, paths, ramdev, sysinfo
from acbench.approaches import get_approach
from acbench.placement import cell_device, ram_device_bytes
from acbench.results import RunDir
from acbench.runner import CellOutcome, RunError, Session, Tally, execute_cell, record
from acbench.spec import Cell, Spec

RESOURCE = "cell"
# a cell whose worker died is not given to another: a dead worker is a failed cell, said as such
ALLOWED_FAILURES = 0
LOCAL_PREFIX = "local:"
# Ctrl-C: how often a running cell's watcher looks at the run's stop event, and how long the submitter
# waits for the running cells to stop
STOP_POLL_S = 1.0
STOP_WAIT_S = 60.0


class BuildMismatch(RuntimeError):
    """A worker's checkout or binary is not the submitter's."""


def build_of() -> dict[str, str]:
    """This host's build as cells record it: git revision of the home, memcached-ac's checksum."""
    return {"host": socket.gethostname(), "home": str(paths.top()), "git_revision": sysinfo.git_revision(),
            "binary_sha256": sysinfo.binary_sha256()}


def mismatch(expected: dict[str, str], found: dict[str, str]) -> str | None:
    """The refusal for a worker whose build (found) is not the submitter's (expected), or None."""
    diff = [f"{k} {found.get(k)} (submitter: {expected.get(k)})" for k in ("git_revision", "binary_sha256")
            if found.get(k) != expected.get(k)]
    if not diff:
        return None
    return (f"worker on {found.get('host')} ({found.get('home')}) runs another build: {', '.join(diff)}; "
            "check out the same revision on every host and build it (make)")


def check_build(expected: dict[str, str]) -> None:
    why = mismatch(expected, build_of())
    if why:
        raise BuildMismatch(why)


def cells_per_host_ok(cells: list[Cell], k: int) -> None:
    """More than one cell per host only when no cell can disturb another's result: every approach
    deterministic (approaches.py) and one driver thread."""
    if k < 1:
        raise RunError(f"--cells-per-host {k}: accepted: a whole number >= 1")
    if k == 1:
        return
    timed = sorted({c.approach for c in cells if not get_approach(c.approach).deterministic})
    threads = sorted({c.cell_id for c in cells if int(c.properties.get("threads", 1)) != 1})
    if timed or threads:
        why = (f"approach(es) {', '.join(timed)} are not deterministic" if timed else
               f"cell(s) {', '.join(threads[:3])} drive more than one thread")
        raise RunError(f"--cells-per-host {k}: {why}: cells side by side would change each other's results; "
                       "accepted: 1, or a spec whose approaches are all deterministic (approaches.py) with "
                       "threads = 1")


def stop_cell(cdir: Path) -> list[int]:
    """SIGKILL the processes in the running cell's cgroup (pids.json's group: its server), so that the
    cell fails at once and its own clean-up runs (cell.py's finally: group, swap, spill directory).
    Returns the PIDs signalled."""
    try:
        group = Path(json.loads((cdir / "pids.json").read_text())["group"])
        pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError, KeyError):
        return []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def _watch_stop(stop: Any, cdir: Path, done: threading.Event) -> None:
    """On the worker, beside a running cell: once the submitter sets the run's stop event (a
    distributed.Event: Ctrl-C), stop the cell (stop_cell)."""
    while not done.is_set():
        try:
            if stop.wait(timeout=STOP_POLL_S):
                while not done.is_set() and not stop_cell(cdir):
                    time.sleep(0.1)      # the cell between its start and its server's: again
                return
        except (OSError, TimeoutError):     # the scheduler went away: the run is over
            return


def cell_task(spec: Spec, cell: Cell, workload_text: str, run_id: str, mode: str, use_perf: bool,
              settings: dict[str, Any], expected: dict[str, str], stop_event: str | None = None,
              ) -> tuple[CellOutcome, dict[str, bytes]]:
    """One cell on a worker: the local loop's execute_cell in a temporary directory; returns the
    outcome and the cell directory's files (path -> bytes). The workload file comes with the task
    (the cell key holds its checksum); a cell on the RAM device gets a device of its own. While it
    runs, a thread waits for the run's stop event (stop_event: the submitter's Ctrl-C)."""
    check_build(expected)
    with tempfile.TemporaryDirectory(prefix="acbench-cell-") as tmp:
        wl = Path(tmp) / Path(cell.workload_file).name
        wl.write_text(workload_text)
        cell = dataclasses.replace(cell, workload_file=str(wl))
        device = ramdev.RamDevice(ram_device_bytes(spec, [cell])) if cell_device(spec, cell) == "ram" else None
        cdir = Path(tmp) / "cell"
        done = threading.Event()
        watcher = None
        if stop_event:
            # the worker's client, taken in the task's thread: an Event cannot find it from another thread
            from distributed import Event, get_client
            watcher = threading.Thread(target=_watch_stop, args=(Event(stop_event, client=get_client()), cdir, done),
                                       daemon=True)
        try:
            if watcher is not None:
                watcher.start()
            ram_root = device.start() if device is not None else None
            out = execute_cell(spec, cell, cdir, run_id, mode, use_perf, sysinfo.machine(), ram_root, settings)
        finally:
            done.set()
            if device is not None:
                device.stop()
        files = {str(f.relative_to(cdir)): f.read_bytes() for f in sorted(cdir.rglob("*")) if f.is_file()}
    return out, files


class LeftoversPlugin(WorkerPlugin):
    """A worker plugin: on the worker's start, what dead acbench processes left on its host."""
    name = "acbench-leftovers"

    def setup(self, worker: Any) -> None:
        leftovers.cleanup_before_run()


def write_files(cdir: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        f = cdir / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)


def connect(address: str, cells_per_host: int) -> tuple[Any, Any]:
    """(client, the LocalCluster started for local:N or None)."""
    import dask
    from distributed import Client, LocalCluster
    if not address.startswith(LOCAL_PREFIX):     # its scheduler has its own allowed-failures (README)
        try:
            return Client(address, timeout="30s"), None
        except (OSError, ValueError) as e:   # refused, timed out, not an address
            raise RunError(f"--cluster {address}: cannot connect to a Dask scheduler there: {e}") from None
    n = address[len(LOCAL_PREFIX):]
    if not n.isdigit() or int(n) < 1:
        raise RunError(f"--cluster {address}: accepted: local:N (N >= 1 workers on this machine) or a scheduler "
                       "address (tcp://HOST:8786)")
    paths.set_home(paths.top())     # the workers (child processes) work on this checkout
    # silence_logs: a cell's failure reaches its row and error.txt; the workers' own log lines (their
    # tracebacks when Ctrl-C stops them) are not printed. Scheduler and its HTTP server on the loopback,
    # on free ports (two local clusters at once do not meet on 8787)
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        cluster = LocalCluster(n_workers=int(n), threads_per_worker=cells_per_host, processes=True,
                               resources={RESOURCE: 1}, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                               silence_logs=logging.CRITICAL)
    return Client(cluster), cluster


def preflight(client: Any, expected: dict[str, str]) -> int:
    """Every worker runs the submitter's build (RunError naming those that do not) and has the
    cell resource; returns the number of workers."""
    builds = client.run(build_of)
    bad = [why for why in (mismatch(expected, b) for b in builds.values()) if why]
    if bad:
        raise RunError("refused: " + "; ".join(bad))
    info = client.scheduler_info()["workers"]
    without = [a for a, w in info.items() if RESOURCE not in (w.get("resources") or {})]
    if without or not info:
        raise RunError(f"no worker offers the resource {RESOURCE!r} ({', '.join(without) or 'no workers'}): start each "
                       f"with `dask worker ADDRESS --resources {RESOURCE}=1`, one per host")
    return len(info)


@dataclasses.dataclass
class Cluster:
    """run_spec's placement of the cells on the Dask cluster at address (or local:N)."""
    address: str
    cells_per_host: int = 1

    def check(self, cells: list[Cell]) -> None:
        cells_per_host_ok(cells, self.cells_per_host)

    def run_cells(self, spec: Spec, todo: list[Cell], rd: RunDir, run_id: str, mode: str, use_perf: bool,
                  ident: dict[str, dict[str, Any]], machine: dict[str, Any], session: Session, tally: Tally,
                  console: Console, advance: Callable[[str], None]) -> None:
        expected = {k: str(machine[k]) for k in ("git_revision", "binary_sha256")}
        run_cells(self.address, self.cells_per_host, spec, todo, rd, run_id, mode, use_perf, ident, expected,
                  session, tally, console, advance)


def run_cells(address: str, cells_per_host: int, spec: Spec, todo: list[Cell], rd: RunDir, run_id: str, mode: str,
              use_perf: bool, ident: dict[str, dict[str, Any]], expected: dict[str, str], session: Session,
              tally: Tally, console: Console, advance: Callable[[str], None]) -> None:
    """Runs the cells todo as tasks of the cluster at address; each result is recorded as it comes."""
    client, cluster = connect(address, cells_per_host)
    try:
        workers = preflight(client, expected)
        console.print(f"cluster {address}: {workers} worker(s), {cells_per_host} cell(s) per host")
        client.register_plugin(LeftoversPlugin())
        stop_event = f"acbench-stop-{run_id}-{uuid.uuid4().hex[:12]}"
        futures = {}
        for c in todo:
            fut = client.submit(cell_task, spec, c, Path(c.workload_file).read_text(), run_id, mode, use_perf,
                                ident[c.cell_id], expected, stop_event, resources={RESOURCE: 1 / cells_per_host},
                                key=f"{c.cell_id}-{run_id}", pure=False)
            futures[fut] = c
        try:
            _collect(futures, rd, ident, session, tally, console, advance)
        except KeyboardInterrupt:
            # local:N's workers are this process's children and go with it (their leftovers are removed
            # below); a remote worker's cell is stopped there
            if cluster is None:
                stop_running(client, stop_event, list(futures), console)
            raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
            # a local worker stopped during a cell (Ctrl-C) left its server and cgroup here
            leftovers.cleanup_before_run()


def stop_running(client: Any, stop_event: str, futures: list[Any], console: Console) -> None:
    """Ctrl-C (or SIGTERM) on the submitter: no cell is started any more, and the running ones are
    stopped on their workers (their servers killed, their clean-up done there) before acbench exits,
    as a local run stops its cell; at most STOP_WAIT_S."""
    from distributed import Event, wait
    try:
        on_workers = {k for keys in client.processing().values() for k in keys}
        running = [f for f in futures if not f.done() and f.key in on_workers]
        client.cancel([f for f in futures if not f.done() and f.key not in on_workers])
        Event(stop_event, client=client).set()     # a cell that starts after this is stopped at once too
    except (OSError, TimeoutError) as e:           # the scheduler is gone: the workers clean up at their start
        console.print(f"[yellow]cannot reach the scheduler to stop the running cells: {e}[/yellow]", markup=True,
                      highlight=False)
        return
    if running:
        console.print(f"stopping {len(running)} running cell(s) on their workers ...")
        try:
            wait(running, timeout=STOP_WAIT_S)
        except TimeoutError:
            console.print(f"[yellow]some cells did not stop within {STOP_WAIT_S} s: their workers clean up at "
                          "their next start[/yellow]", markup=True, highlight=False)


def _collect(futures: dict[Any, Cell], rd: RunDir, ident: dict[str, dict[str, Any]], session: Session,
             tally: Tally, console: Console, advance: Callable[[str], None]) -> None:
    """Each cell's row and files into the run directory as its task ends."""
    from distributed import as_completed
    for fut in as_completed(futures):
        c = futures[fut]
        cdir = rd.cell_dir(c.cell_id)
        shutil.rmtree(cdir, ignore_errors=True)
        try:
            out, files = fut.result()
            write_files(cdir, files)
        except Exception as e:  # noqa: BLE001 - KilledWorker, BuildMismatch, ...: a failed cell
            why = f"cell {c.cell_id} failed on the cluster: {type(e).__name__}: {e}"
            cdir.mkdir(parents=True, exist_ok=True)
            (cdir / "error.txt").write_text(why + "\n")
            out = CellOutcome(c.cell_id, None, True, why)
        record(out, rd, ident[c.cell_id], session, tally, console)
        advance(c.cell_id)
