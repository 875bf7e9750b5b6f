"""ac_policy=vma (VMA protection tracking) with the in-process driver, over both spilling tiers:
memory small enough that items spill and come back all the time, the protection reset every
100 ms. Nothing lost, refused or corrupted; the tracking saw faults and resets; its victims were
the items spilled. (The policy itself, on a real protected mapping: policies/tests/test_vma.c.)"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mc_helpers import BIN

WORKLOADS = Path(__file__).resolve().parents[2] / "experiments" / "workloads"


@pytest.mark.parametrize("tier", ["blocks", "tuples"])
def test_vma_spills_and_fetches_without_loss(tmp_path: Path, tier: str) -> None:
    out = tmp_path / "out.json"
    ac = (f"ac_policy=vma,ac_tier={tier},ac_vma_reset=100ms,ac_spill_dir={tmp_path}/spill,"
          f"ac_driver={WORKLOADS / 'writeheavy'},ac_driver_out={out},ac_driver_set=recordcount=20000,"
          "ac_driver_set=operationcount=100000,ac_driver_set=requestdistribution=truezipf")
    r = subprocess.run([str(BIN), "-u", "root", "-m", "12", "-t", "2", "-o", ac], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    run, a = d["run"], d["server"]["anticache"]
    assert (a["policy"], a["tier"]) == ("vma", tier)
    assert run["errors"]["total"] == 0 and run["operations"] == 100000
    assert run["reads"]["miss"] == 0                      # every key was loaded: anti-caching loses none
    assert run["reads"]["disk_hit"] > 1000 and a["spilled_items"] > 10000 and a["fetched_items"] > 1000
    assert a["lost_items"] == 0 and a["refused_items"] == 0 and a["checksum_errors"] == 0
    assert a["vma_faults"] > 0 and a["vma_resets"] > 0 and a["vma_open_all"] == 0
    assert a["vma_victims"] >= a["spilled_items"] - a["rescued_items"]
    assert a["resident_items"] + a["stub_items"] == 20000
    assert not (tmp_path / "spill").exists()
