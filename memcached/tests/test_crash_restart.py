"""Crash and restart: a server SIGKILLed at a random point while it spills
leaves its files behind; the next server started on the same spill directory
removes them (by name, saying so on stderr), starts and serves, spilling and
fetching again. 20 kills in a chain on one directory, five for each store
kind: block store (lru, alru), tuple store (logging) and ospaging's file
mapping (ac_os_backing=file). At the end a clean SIGTERM leaves no directory,
and no process started here runs any more. AC_TEST_SEED=N changes the kill
points."""
from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

from mc_helpers import start_server

SEED = int(os.environ.get("AC_TEST_SEED", "7"))
KILLS = 20
APPROACHES = [
    {"ac_policy": "lru"},
    {"ac_policy": "alru"},
    {"ac_policy": "logging"},
    {"ac_policy": "ospaging", "ac_os_backing": "file"},
]
VALUE = 20_000          # 16 MiB of -m is full after ~800 of them


def write_until(srv, stop: threading.Event, rng_seed: int, written: list[int]) -> None:
    """Sets (and reads back some) values until stop or the server dies."""
    rng = random.Random(rng_seed)
    cli = srv.client(timeout=5)
    i = 0
    try:
        while not stop.is_set():
            cli.set(f"k{i}", bytes([i % 251]) * rng.randint(VALUE // 2, VALUE))
            if i % 7 == 0 and i > 0:
                cli.get(f"k{rng.randrange(i)}")
            i += 1
            written[0] = i
    except Exception:
        pass                # the SIGKILL closes the connection under us


def spill_files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def our_processes(d: Path) -> list[int]:
    """PIDs whose command line names the spill directory."""
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if str(d).encode() in (p / "cmdline").read_bytes():
                    pids.append(int(p.name))
            except OSError:
                pass
    return pids


def test_kill9_during_spilling_then_restart(tmp_path):
    rng = random.Random(SEED)
    d = tmp_path / "spill"
    started = []
    try:
        for n in range(KILLS + 1):
            ac = dict(APPROACHES[n % len(APPROACHES)], ac_spill_dir=str(d))
            srv = start_server(tmp_path, mem=16, threads=2, ac=ac)
            started.append(srv)
            err = srv.stderr()
            if n > 0:       # the previous server's files were there: removed by name
                assert "left by an earlier run" in err, f"restart {n} ({ac}) did not clean up:\n{err}"
            cli = srv.client()
            cli.set("probe", b"alive")
            assert cli.get("probe") == (b"alive", 0)
            if n == KILLS:
                break
            stop, written = threading.Event(), [0]
            t = threading.Thread(target=write_until, args=(srv, stop, rng.randrange(1 << 30), written))
            t.start()
            paged = ac["ac_policy"] == "ospaging"
            deadline = time.monotonic() + 30
            while (written[0] < 200 if paged else srv.ac()["spilled_items"] == 0):
                assert time.monotonic() < deadline and srv.proc.poll() is None, srv.stderr()
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.5))            # a random point while it spills
            os.kill(srv.proc.pid, signal.SIGKILL)
            assert srv.proc.wait(10) == -signal.SIGKILL
            srv.stopped = True
            stop.set()
            t.join(10)
            assert spill_files(d), f"kill {n}: nothing left behind to clean up ({ac})"
        # the last one spills and fetches after all the crashes
        for i in range(1200):
            cli.set(f"again{i}", bytes([i % 251]) * 20_000)
        assert all(cli.get(f"again{i}") == (bytes([i % 251]) * 20_000, 0) for i in range(0, 1200, 37))
        st = srv.ac()
        assert st["spilled_items"] > 0 and st["fetched_items"] > 0 and st["lost_items"] == 0, st
        assert srv.stop() == 0
        assert not d.exists(), f"{d} left after SIGTERM: {spill_files(d)}"
    finally:
        for s in started:
            if not s.stopped:
                s.stop()
    assert our_processes(d) == []
