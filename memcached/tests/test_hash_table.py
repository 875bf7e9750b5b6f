"""The in-process driver's hash table does not grow while it runs (ycsb-driver/inproc/inproc.c
fixed_hash_table): memcached swaps a growing table while pause_threads holds its own threads still,
and the driver's threads are not among them (a read racing the swap missed: about 1 in 10 runs of
2M reads over 200k records in RAM, none since). The table is sized for the workload at start,
unless -o hashpower gave its size, which then stays although memcached would have grown it."""
from __future__ import annotations

import pytest

from mc_helpers import run_in_process


@pytest.mark.parametrize("extra,power", [("", 18), (",hashpower=17", 17), (",hashpower=20", 20)])
def test_the_table_is_sized_at_start_and_does_not_grow(tmp_path, extra, power):
    d = run_in_process(tmp_path, f"ac_policy=lru{extra}", "readonly", ops=200000, records=200000, mem_mb=1024,
                       threads=2)
    a, reads = d["server"]["anticache"], d["run"]["reads"]
    # 200,000 items: 2^18 buckets; hashpower=17 stays although 200,000 > 1.5 x 2^17 (memcached grows there)
    assert a["hash_power_level"] == power
    assert reads["total"] == 200000 and reads["hit"] == 200000 and reads["miss"] == 0
    assert a["lost_items"] == 0 and a["spilled_items"] == 0
