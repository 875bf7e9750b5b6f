"""The in-process driver: memcached-ac -o ac_driver=WORKLOAD runs YCSB inside
the server (no network), prints one JSON result and exits."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import SERVER, WORKLOADS



def drive(tmp: Path, *opts: str, mem: int = 16, workload: Path = WORKLOADS / "readonly",
          sets: tuple[str, ...] = (), timeout: int = 120) -> subprocess.CompletedProcess[str]:
    assert SERVER.exists(), f"{SERVER} missing: run make -C memcached all"
    o = [f"ac_driver={workload}"] + [f"ac_driver_set={s}" for s in sets] + list(opts)
    return subprocess.run([str(SERVER), "-u", "root", "-t", "1", "-m", str(mem), "-o", ",".join(o)],
                          capture_output=True, text=True, timeout=timeout)


def result(p: subprocess.CompletedProcess[str]) -> dict:
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_lru_spills_and_every_read_is_counted(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    # 40000 records of 1000 bytes = 40 MB of values in a 16 MB server, 2 threads
    p = drive(tmp_path, "ac_policy=lru", f"ac_spill_dir={spill}",
              sets=("recordcount=40000", "operationcount=50000", "warmupoperations=5000", "threads=2"))
    r = result(p)
    assert r["mode"] == "in-process" and r["threads"] == 2
    assert r["load"]["ops"]["insert"] == 40000 and r["load"]["errors"]["total"] == 0
    run, warm = r["run"]["reads"], r["warmup"]["reads"]
    assert run["total"] == 50000 and warm["total"] == 5000
    assert run["miss"] == 0 and warm["miss"] == 0           # nothing is lost
    assert run["disk_hit"] > 0 and run["hit"] > 0
    assert run["hit"] + run["disk_hit"] == 50000
    ac = r["server"]["anticache"]
    assert ac["policy"] == "lru" and ac["lost_items"] == 0
    # the server counted exactly what the driver saw, request by request
    assert ac["mem_hits"] == run["hit"] + warm["hit"]
    assert ac["disk_hits"] == run["disk_hit"] + warm["disk_hit"]
    assert ac["spilled_items"] > 0 and r["server"]["driver_op_errors"] == 0
    assert not spill.exists()                               # removed at exit


def test_policy_none_drops_items_as_memcached_does(tmp_path: Path) -> None:
    r = result(drive(tmp_path, "ac_policy=none", sets=("recordcount=40000", "operationcount=20000")))
    run = r["run"]["reads"]
    assert run["miss"] > 0 and run["disk_hit"] == 0
    assert run["hit"] + run["miss"] == 20000
    assert r["server"]["anticache"]["policy"] == "none"


def test_everything_fits_every_read_hits_in_ram(tmp_path: Path) -> None:
    r = result(drive(tmp_path, "ac_policy=lru", f"ac_spill_dir={tmp_path / 's'}", mem=64,
                     sets=("recordcount=5000", "operationcount=20000")))
    assert r["run"]["reads"] == {"total": 20000, "hit": 20000, "disk_hit": 0, "miss": 0,
                                 "refills": 0, "refill_errors": 0, "scan_keys": 0}
    assert r["server"]["anticache"]["spilled_items"] == 0


def test_same_seed_same_counts_with_one_thread(tmp_path: Path) -> None:
    sets = ("recordcount=20000", "operationcount=30000", "seed=7")
    runs = [result(drive(tmp_path, "ac_policy=lru", f"ac_spill_dir={tmp_path / f's{i}'}", sets=sets))
            for i in range(2)]
    assert runs[0]["run"]["reads"] == runs[1]["run"]["reads"]
    assert runs[0]["server"]["anticache"]["spilled_items"] == runs[1]["server"]["anticache"]["spilled_items"]


def test_update_mix_reads_back_what_it_wrote(tmp_path: Path) -> None:
    r = result(drive(tmp_path, "ac_policy=lru", f"ac_spill_dir={tmp_path / 's'}",
                     workload=WORKLOADS / "workloada", sets=("recordcount=30000", "operationcount=30000")))
    run = r["run"]
    assert run["errors"]["total"] == 0 and run["reads"]["miss"] == 0
    assert run["ops"]["update"] > 0 and run["reads"]["disk_hit"] > 0
    assert r["server"]["anticache"]["lost_items"] == 0


def test_result_to_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    p = drive(tmp_path, f"ac_driver_out={out}", sets=("recordcount=100", "operationcount=100"))
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert json.loads(out.read_text())["run"]["reads"]["total"] == 100


@pytest.mark.parametrize("opts,sets,message", [
    ((), ("recordcount=ten",), "recordcount"),
    ((), ("fieldlengthdistribution=uniform",), "uniform, zipfian and histogram lengths are not implemented"),
    ((), ("nosuchproperty=1",), "nosuchproperty"),
    (("ac_driver_set=recordcount",), (), "ac_driver_set takes one workload property as key=value"),
])
def test_bad_driver_settings_are_named(tmp_path: Path, opts: tuple[str, ...], sets: tuple[str, ...],
                                       message: str) -> None:
    p = drive(tmp_path, *opts, sets=sets)
    assert p.returncode != 0
    assert message in p.stderr
    assert p.stdout == ""


def test_missing_workload_file(tmp_path: Path) -> None:
    p = drive(tmp_path, workload=tmp_path / "nope")
    assert p.returncode != 0
    assert f"ac_driver {tmp_path / 'nope'}" in p.stderr


def test_unwritable_result_file_is_an_error(tmp_path: Path) -> None:
    p = drive(tmp_path, f"ac_driver_out={tmp_path / 'no' / 'dir' / 'r.json'}",
              sets=("recordcount=10", "operationcount=10"))
    assert p.returncode != 0
    assert "ac_driver_out" in p.stderr


def test_large_chunked_values(tmp_path: Path) -> None:
    # 600 kB values are stored in chunks (over memcached's 512 kB slab_chunk_max)
    # 36 MB of them in a 16 MB server: chunked items are spilled and fetched too
    r = result(drive(tmp_path, "ac_policy=lru", f"ac_spill_dir={tmp_path / 's'}", mem=16,
                     sets=("recordcount=60", "operationcount=300", "fieldcount=6", "fieldlength=100000")))
    assert r["load"]["errors"]["total"] == 0 and r["run"]["errors"]["total"] == 0
    assert r["run"]["reads"]["miss"] == 0 and r["run"]["reads"]["total"] == 300
    assert r["run"]["reads"]["disk_hit"] > 0
    assert r["server"]["anticache"]["lost_items"] == 0


def test_lookaside_refills_every_miss(tmp_path: Path) -> None:
    # stock memcached behaviour (ac_policy=none): 40 MB of values in 16 MB, so
    # the load's early keys are evicted; lookaside=true stores each missed key
    # again with its load value
    sets = ("recordcount=40000", "operationcount=20000", "warmupoperations=5000", "threads=2",
            "requestdistribution=truezipf", "zipfianconstant=0.9")
    r = result(drive(tmp_path, "ac_policy=none", sets=sets + ("lookaside=true",)))
    assert r["config"]["lookaside"] is True
    for phase in ("warmup", "run"):
        reads = r[phase]["reads"]
        assert reads["miss"] > 0 and reads["refills"] == reads["miss"]   # every miss refilled
        assert reads["refill_errors"] == 0 and reads["hit"] + reads["miss"] == reads["total"]
    off = result(drive(tmp_path, "ac_policy=none", sets=sets))
    assert off["config"]["lookaside"] is False
    assert off["run"]["reads"]["refills"] == 0 and off["run"]["reads"]["miss"] > 0
    # refilled hot keys stay in memory: fewer misses than without refills
    assert r["run"]["reads"]["miss"] < off["run"]["reads"]["miss"]


RESOURCE_KEYS = ["cpu_user_s", "cpu_sys_s", "major_faults", "minor_faults", "vol_ctx_switches",
                 "invol_ctx_switches", "read_bytes", "write_bytes", "syscr", "syscw", "pswpin",
                 "pswpout", "pgmajfault"]


def test_resources_per_phase(tmp_path: Path) -> None:
    r = result(drive(tmp_path, "ac_policy=none", mem=64,
                     sets=("recordcount=20000", "operationcount=20000", "warmupoperations=2000")))
    for phase in ("load", "warmup", "run"):
        res = r[phase]["resources"]
        assert sorted(res) == sorted(RESOURCE_KEYS)     # no disk_* without diskstats_device
        for k in RESOURCE_KEYS:
            assert res[k] is None or (isinstance(res[k], (int, float)) and res[k] >= 0), (phase, k)
        assert res["cpu_user_s"] + res["cpu_sys_s"] > 0
    # the load allocates 20 MB of items in the server: its own page faults
    assert r["load"]["resources"]["minor_faults"] > 1000
    assert r["config"]["diskstats_device"] == ""
    # the server's counters just before each phase: nothing before the load, every record after it
    assert r["load"]["server_start"]["anticache"]["resident_items"] == 0
    assert r["warmup"]["server_start"]["anticache"]["resident_items"] == 20000
    assert r["run"]["server_start"]["anticache"]["resident_items"] == 20000


def test_diskstats_device(tmp_path: Path) -> None:
    devices = [line.split()[2] for line in Path("/proc/diskstats").read_text().splitlines()]
    if not devices:
        pytest.skip("/proc/diskstats lists no devices")
    r = result(drive(tmp_path, sets=("recordcount=100", "operationcount=100",
                                      f"diskstats_device={devices[0]}")))
    for k in ("disk_reads", "disk_sectors_read", "disk_writes", "disk_sectors_written"):
        assert isinstance(r["run"]["resources"][k], int)
    p = drive(tmp_path, sets=("diskstats_device=nosuchdisk9",))
    assert p.returncode != 0 and p.stdout == ""
    assert ("property 'diskstats_device': 'nosuchdisk9' is not a device in /proc/diskstats; "
            f"accepted: one of {devices[0]}") in p.stderr
