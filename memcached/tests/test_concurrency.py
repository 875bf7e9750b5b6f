"""8 client threads, each with its own connection and its own keys, doing mixed
sets, overwrites, gets (verified byte-exact on the spot), deletes, appends and
pipelined bursts of small sets over 4x the server's memory; then everything is
read back byte-exact from one connection. lost_items must stay 0, nothing may be
refused (no SERVER_ERROR, refused_* 0) and the server's hit and miss counters
must equal what the threads counted."""
from __future__ import annotations

import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from pymemcache.exceptions import MemcacheServerError

from mc_helpers import MiB, mixed_size, value_for
from noloss import check_no_refusals

THREADS = 8
MEM = 16


class Worker:
    def __init__(self, srv, tid: int, quota: int):
        self.cli = srv.client()
        self.tid = tid
        self.rng = random.Random(1000 + tid)
        self.quota = quota
        self.model: dict[str, tuple[bytes, int]] = {}
        self.deleted: set[str] = set()
        self.keys: list[str] = []
        self.n = 0
        self.written = 0
        self.hits = self.misses = 0
        self.ops = Counter()
        self.oom = Counter()       # refusals (SERVER_ERROR out of memory, ...), per operation

    def new_key(self) -> str:
        self.n += 1
        k = f"t{self.tid}-{self.n}"
        self.keys.append(k)
        return k

    def set(self, k: str, size: int | None = None) -> None:
        v = value_for(self.rng, k, self.n, mixed_size(self.rng) if size is None else size)
        f = self.rng.getrandbits(32)
        self.ops["set"] += 1
        try:
            assert self.cli.set(k, v, noreply=False, flags=f) is True
        except MemcacheServerError as e:
            assert "out of memory" in str(e), e
            self.oom["set"] += 1
            self.model.pop(k, None)        # memcached unlinks the old value of a failed set
            self.deleted.add(k)
            return
        self.model[k] = (v, f)
        self.deleted.discard(k)
        self.written += len(v)

    def get(self, k: str) -> None:
        self.ops["get"] += 1
        try:
            got = self.cli.get(k)
        except MemcacheServerError as e:
            # a refused fetch (recorded; the run must end with none)
            assert "out of memory fetching a spilled item" in str(e), e
            self.oom["get"] += 1
            return
        if k in self.model:
            assert got == self.model[k], f"{k}: wrong or missing value"
            self.hits += 1
        else:
            assert got is None, f"{k}: deleted, but returned"
            self.misses += 1

    def run(self) -> None:
        while self.written < self.quota:
            r = self.rng.random()
            live = [k for k in self.keys[-4000:] if k in self.model] if r >= 0.40 else []
            if r < 0.40 or not live:
                self.set(self.new_key())
                if self.rng.random() < 0.15:
                    self.burst()
            elif r < 0.50:
                self.set(self.rng.choice(live))
            elif r < 0.78:
                self.get(self.rng.choice(live))
            elif r < 0.82 and self.deleted:
                self.get(self.rng.choice(sorted(self.deleted)))
            elif r < 0.90:
                k = self.rng.choice(live)
                self.ops["delete"] += 1
                assert self.cli.delete(k, noreply=False) is True, f"{k}: delete said NOT_FOUND"
                del self.model[k]
                self.deleted.add(k)
            else:
                k = self.rng.choice(live)
                extra = value_for(self.rng, k, -1, self.rng.randint(1, 4000))
                self.ops["append"] += 1
                try:
                    res = self.cli.append(k, extra, noreply=False)
                except MemcacheServerError as e:
                    assert "out of memory" in str(e), e
                    self.oom["append"] += 1
                    continue
                if res is False:          # NOT_STORED for a stored key: refused (recorded)
                    self.oom["append"] += 1
                    continue
                assert res is True
                v, f = self.model[k]
                self.model[k] = (v + extra, f)
                self.written += len(extra)

    def burst(self) -> None:
        batch = {}
        for _ in range(60):
            k = self.new_key()
            batch[k] = (value_for(self.rng, k, 0, int(1500 ** self.rng.random())), self.rng.getrandbits(32))
        self.ops["set"] += len(batch)
        try:
            failed = set(self.cli.set_many(batch, noreply=False))
        except MemcacheServerError:
            failed = set(batch)
            for k in batch:              # the pipeline broke off: redo one by one
                self.ops["set"] += 1
                try:
                    self.cli.set(k, batch[k], noreply=False)
                    failed.discard(k)
                except MemcacheServerError as e:
                    assert "out of memory" in str(e), e
                    self.oom["set"] += 1
        for k, (v, f) in batch.items():
            if k in failed:
                self.deleted.add(k)
            else:
                self.model[k] = (v, f)
                self.written += len(v)


def test_concurrent_clients(server, spill_pair):
    srv = server(mem=MEM, threads=4, ac=spill_pair)
    workers = [Worker(srv, t, 4 * MEM * MiB // THREADS) for t in range(THREADS)]
    start = threading.Barrier(THREADS)

    def go(w: Worker):
        start.wait()
        w.run()

    with ThreadPoolExecutor(THREADS) as ex:
        for f in [ex.submit(go, w) for w in workers]:
            f.result()                    # re-raises a worker's assertion

    st = srv.ac()
    assert st["spilled_items"] > 0 and st["stub_items"] > 0
    assert sum(w.written for w in workers) >= 4 * MEM * MiB

    # read everything back from one connection, one key at a time
    cli = srv.client()
    hits = misses = 0
    for w in workers:
        for k in w.keys:
            got = cli.get(k)
            if k in w.model:
                assert got == w.model[k], f"{k}: wrong or missing value after the run"
                hits += 1
            else:
                assert got is None, f"{k}: deleted, but returned"
                misses += 1
    st = srv.ac()
    oom = sum((w.oom for w in workers), Counter())
    ops = sum((w.ops for w in workers), Counter())
    print(f"\nconcurrency: {dict(ops)}, written {sum(w.written for w in workers) / MiB:.1f} MiB, "
          f"SERVER_ERROR out of memory: {dict(oom) or 0}; spilled {st['spilled_items']}, "
          f"fetched {st['fetched_items']}, merged {st['merged_items']}, disk_hits {st['disk_hits']}")
    # the spill store had room all along: nothing may have been refused
    assert not oom, f"refused: {dict(oom)}"
    check_no_refusals(st)
    assert st["disk_hits"] > 0
    assert st["mem_hits"] + st["disk_hits"] == hits + sum(w.hits for w in workers)
    assert st["misses"] == misses + sum(w.misses for w in workers)
