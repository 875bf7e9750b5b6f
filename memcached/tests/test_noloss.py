"""No item is ever lost: 4x memory of values from 1 B to 500 KiB over many slab
classes, with overwrites, deletes, appends, prepends, incr/decr, cas, add,
replace and touch on old (spilled) keys; everything read back byte-exact."""
from __future__ import annotations

from mc_helpers import MiB
from noloss import Workload, check_final, check_old_ops


def test_noloss(server, spill_pair):
    srv = server(mem=16, threads=4, ac=spill_pair)
    w = Workload(srv, mem_mib=16, seed=20240601, total_factor=4.0)
    run = w.execute()
    print("\nnoloss:", run.summary())
    assert run.written >= 64 * MiB
    assert run.classes_used >= 20, f"only {run.classes_used} slab classes used"
    check_old_ops(run, min_count=40, min_fraction=0.8)
    check_final(run)
