"""memcached-ac's `lru` policy against the exact LRU of the OPT library, on the
same request sequence: the server's in-process driver (one thread) and
ycsb-trace draw the same requests for the same seed, so the server's RAM hits
must equal stack-distance LRU at the server's capacity in objects. The server
frees memory a block at a time, so its capacity moves within one block's worth
of items; the hits must fall inside LRU's hits over that window.

Two configurations: 4 KiB blocks without lazy compaction (a narrow window),
and the default one (1 MiB blocks, tuple merge, lazy compaction at 0.5):
compaction merges whole blocks back, and the items nobody asked for go to the
LRU end (H-Store), where the next spill takes them first; so the hits stay
within LRU's hits over +- one block of the measured resident count."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from acbench import core, opt, traceio

TOP = Path(os.environ.get("TOP", Path(__file__).resolve().parents[2]))
BIN = TOP / "build" / "bin"
WORKLOAD = TOP / "experiments" / "workloads" / "readonly"
RECORDS, OPS, VALUE = 30000, 60000, 1000


@pytest.mark.parametrize("block,extra", [(4096, ["ac_compact_fill=0"]), (1 << 20, [])],
                         ids=["4k-no-compaction", "default"])
def test_server_lru_hits_equal_stack_distance_lru(tmp_path: Path, block: int, extra: list[str]) -> None:
    props = [f"recordcount={RECORDS}", f"operationcount={OPS}", "zipfianconstant=0.9", "seed=11"]
    trace = tmp_path / "run.actrace"
    subprocess.run([str(BIN / "ycsb-trace"), "-P", str(WORKLOAD), *[a for p in props for a in ("-p", p)],
                    "-o", str(trace)], check=True, capture_output=True)
    # one driver thread: the trace's order
    opts = ["ac_policy=lru", f"ac_block_size={block}", *extra,
            f"ac_spill_dir={tmp_path / 'spill'}", f"ac_driver={WORKLOAD}", "ac_driver_set=threads=1"]
    opts += [f"ac_driver_set={p}" for p in props]
    p = subprocess.run([str(BIN / "memcached-ac"), "-u", "root", "-t", "1", "-m", "16", "-o", ",".join(opts)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    reads, ac = r["run"]["reads"], r["server"]["anticache"]
    assert reads["total"] == OPS and reads["miss"] == 0 and reads["disk_hit"] > 0

    # the reference sequence: the load phase's inserts (keys 0..N-1 in order)
    # followed by the run's reads; inserts have no reuse, so every LRU hit is a read hit
    with core.Trace.open(trace) as t:
        assert t.requests == OPS
        run_keys = [t.record(i)[0] for i in range(OPS)]
    keys = np.array(list(range(RECORDS)) + run_keys, dtype=np.uint64)
    full = tmp_path / "full.actrace"
    traceio.write_actrace(full, traceio.actrace_records(keys, VALUE), recordcount=RECORDS)

    per_block = block // VALUE + 1           # at most this many items leave RAM per block
    resident = ac["resident_items"]
    caps = [resident - per_block, resident + per_block]
    rep = opt.analyse(full, capacities=caps, byte_capacities=[])
    lo, hi = (o["lru"]["hits"] for o in rep["objects"])
    print(f"\nblock {block}: resident {resident}, LRU hits [{lo}, {hi}], server {reads['hit']},"
          f" merged {ac['merged_items']}")
    assert lo <= reads["hit"] <= hi, (lo, reads["hit"], hi)
    if block == 4096:
        assert hi - lo < 0.002 * OPS           # the window is narrow: the check has teeth
    else:
        assert ac["merged_items"] > 0          # compaction did merge blocks
    # and OPT does better than LRU at that capacity
    assert rep["objects"][0]["opt_demand"]["hits"] > hi
