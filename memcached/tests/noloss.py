"""The no-loss workload shared by test_noloss.py and test_variants.py.

Writes total_factor x the server's memory of values (1 B .. 500 KiB over many slab
classes), first fresh keys (with a few overwrites of recent keys, and gets that
remember CAS tokens), then, once the server has spilled, fresh keys
interleaved with overwrites, deletes, appends, prepends, incr/decr, cas (with a
token taken before the key was spilled, and gets-then-cas), bad cas, add, replace
and touch on the OLD keys. A model dict holds every expected (value, flags); at
the end every live key is read back byte-exact and every deleted key must be
absent. The test counts its own hits and misses to compare with the server's.
Which old keys are spilled is looked up with `lru_crawler metadump` (it lists
resident items only), and each operation on an old key checks whether
fetched_items or read_through_items rose (a read of a cold item under
`logging` is served from its record and leaves it cold), so the test knows the
operations really met spilled items.

A store the server answers with `SERVER_ERROR out of memory` is recorded in
Run.oom and applied to the model exactly as memcached does it (a failed `set`
unlinks the old value, other commands leave it); nothing else may fail.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from pymemcache.exceptions import MemcacheServerError

from mc_helpers import MiB, mixed_size, value_for

OOM = "out of memory"


@dataclass
class Run:
    written: int = 0                 # value bytes the server acknowledged
    hits: int = 0                    # successful get/gets/touch the test did
    misses: int = 0                  # get/touch of keys the model says are absent
    ops: Counter = field(default_factory=Counter)
    old_ops: Counter = field(default_factory=Counter)      # ops on old keys
    fetched_by: Counter = field(default_factory=Counter)   # ... that fetched a spilled item
    oom: Counter = field(default_factory=Counter)          # SERVER_ERROR out of memory, per op
    oom_samples: list = field(default_factory=list)
    classes_used: int = 0
    spilled_seen: int = 0                                   # most old keys seen spilled at once
    live_keys: int = 0
    deleted_keys: int = 0
    stats_before_old_ops: dict = field(default_factory=dict)
    final_stats: dict = field(default_factory=dict)

    def summary(self) -> str:
        return (f"written {self.written / MiB:.1f} MiB, {sum(self.ops.values())} ops "
                f"({dict(self.ops)}), ops on old keys {dict(self.old_ops)}, of which fetched a "
                f"spilled item {dict(self.fetched_by)}; live {self.live_keys}, deleted "
                f"{self.deleted_keys}, slab classes used {self.classes_used}, old keys spilled at once "
                f"up to {self.spilled_seen}; "
                f"SERVER_ERROR out of memory: {dict(self.oom) or 0} {self.oom_samples[:5]}")


class Workload:
    def __init__(self, srv, mem_mib: int, seed: int, total_factor: float = 4.0,
                 max_size: int = 500 * 1024, min_old_ops: int = 1200, refresh_every: int = 150):
        self.srv = srv
        self.cli = srv.client()
        self.rng = random.Random(seed)
        self.mem = mem_mib * MiB
        self.target = int(total_factor * self.mem)
        self.max_size = max_size
        self.model: dict[str, tuple[bytes, int]] = {}
        self.cas: dict[str, int] = {}          # tokens seen by gets, valid until the key changes
        self.deleted: set[str] = set()
        self.order: list[str] = []             # keys in creation order
        self.known: set[str] = set()
        self.version: Counter = Counter()
        self.counters: list[str] = []
        self.run = Run()
        self.nkeys = 0
        self.raw = srv.raw()
        self.spilled: list[str] = []
        self.spilled_ctr: list[str] = []
        self.since_refresh = 0
        self.min_old_ops = min_old_ops
        self.refresh_every = refresh_every

    # ------------------------------------------------------------ operations
    def _oom(self, op: str, key: str, e: Exception) -> None:
        assert OOM in str(e), f"{op} {key}: unexpected {e!r}"
        self.run.oom[op] += 1
        if len(self.run.oom_samples) < 20:
            self.run.oom_samples.append((op, key, len(self.model.get(key, (b"",))[0])))

    def _changed(self, key: str, value: bytes | None, flags: int = 0) -> None:
        self.cas.pop(key, None)
        if value is None:
            self.model.pop(key, None)
            self.deleted.add(key)
        else:
            self.model[key] = (value, flags)
            self.deleted.discard(key)

    def new_value(self, key: str, size: int | None = None) -> bytes:
        self.version[key] += 1
        if size is None:
            size = mixed_size(self.rng, self.max_size)
        return value_for(self.rng, key, self.version[key], size)

    def do_set(self, key: str, value: bytes | None = None, flags: int | None = None) -> None:
        value = self.new_value(key) if value is None else value
        flags = self.rng.getrandbits(32) if flags is None else flags
        self.run.ops["set"] += 1
        try:
            assert self.cli.set(key, value, noreply=False, flags=flags) is True
        except MemcacheServerError as e:
            self._oom("set", key, e)
            self._changed(key, None)       # memcached unlinks the old value of a failed set
            return
        if key not in self.known:
            self.known.add(key)
            self.order.append(key)
        self._changed(key, value, flags)
        self.run.written += len(value)

    def do_get(self, key: str) -> None:
        self.run.ops["get"] += 1
        got = self.cli.get(key)
        if key in self.model:
            assert got is not None, f"{key}: stored, but get missed"
            assert got == self.model[key], f"{key}: get returned different data or flags"
            self.run.hits += 1
        else:
            assert got is None, f"{key}: deleted, but get returned it"
            self.run.misses += 1

    def do_gets_cas(self, key: str) -> None:
        self.run.ops["cas"] += 1
        value = self.new_value(key)
        flags = self.rng.getrandbits(32)
        token = self.cas.get(key)
        if token is None:
            got, token = self.cli.gets(key)
            assert got == self.model[key], f"{key}: gets returned different data"
            self.run.hits += 1
            self.run.ops["gets"] += 1
        else:
            self.run.ops["cas-with-old-token"] += 1
        try:
            res = self.cli.cas(key, value, token, noreply=False, flags=flags)
        except MemcacheServerError as e:
            self._oom("cas", key, e)
            return
        assert res is True, f"{key}: cas with token {token!r} answered {res!r}"
        self._changed(key, value, flags)
        self.run.written += len(value)

    def do_bad_cas(self, key: str) -> None:
        self.run.ops["bad-cas"] += 1
        _, token = self.cli.gets(key)
        self.run.hits += 1
        try:
            res = self.cli.cas(key, b"nope", str(int(token) + 1000000).encode(), noreply=False)
        except MemcacheServerError as e:
            self._oom("bad-cas", key, e)
            return
        assert res is False, f"{key}: cas with a wrong token answered {res!r}"
        self.cas[key] = int(token)

    def do_delete(self, key: str) -> None:
        self.run.ops["delete"] += 1
        assert self.cli.delete(key, noreply=False) is True, f"{key}: delete said NOT_FOUND"
        self._changed(key, None)

    def do_append(self, key: str, prepend: bool) -> None:
        op = "prepend" if prepend else "append"
        self.run.ops[op] += 1
        self.version[key] += 1
        extra = value_for(self.rng, key, self.version[key], self.rng.randint(1, 3000))
        old, flags = self.model[key]
        try:
            res = (self.cli.prepend if prepend else self.cli.append)(key, extra, noreply=False)
        except MemcacheServerError as e:
            self._oom(op, key, e)
            return
        if res is False:
            # memcached answers NOT_STORED when it cannot allocate the combined item
            self._oom(op + " (NOT_STORED)", key, MemcacheServerError(OOM))
            return
        assert res is True, (op, key, res)
        self._changed(key, extra + old if prepend else old + extra, flags)
        self.run.written += len(extra)

    def do_incr(self, key: str) -> None:
        old, flags = self.model[key]
        n = int(old.rstrip(b" "))
        delta = self.rng.randint(1, 10**6)
        if self.rng.random() < 0.5:
            self.run.ops["incr"] += 1
            new = n + delta
            res = self.cli.incr(key, delta, noreply=False)
        else:
            self.run.ops["decr"] += 1
            new = max(0, n - delta)
            res = self.cli.decr(key, delta, noreply=False)
        assert res == new, f"{key}: {old!r} +/- {delta} gave {res}, expected {new}"
        b = str(new).encode()
        # memcached rewrites in place, padding with spaces, when the number fits
        self._changed(key, b + b" " * (len(old) - len(b)) if len(b) <= len(old) else b, flags)

    def do_add_existing(self, key: str) -> None:
        self.run.ops["add-existing"] += 1
        try:
            res = self.cli.add(key, b"should-not-be-stored", noreply=False)
        except MemcacheServerError as e:
            self._oom("add", key, e)
            return
        assert res is False, f"{key}: add of an existing (spilled) key answered {res!r}"

    def do_replace(self, key: str) -> None:
        present = key in self.model
        self.run.ops["replace" if present else "replace-deleted"] += 1
        value = self.new_value(key)
        flags = self.rng.getrandbits(32)
        try:
            res = self.cli.replace(key, value, noreply=False, flags=flags)
        except MemcacheServerError as e:
            self._oom("replace", key, e)
            return
        assert res is present, f"{key}: replace answered {res!r}, key present: {present}"
        if present:
            self._changed(key, value, flags)
            self.run.written += len(value)

    def do_touch(self, key: str) -> None:
        self.run.ops["touch"] += 1
        assert self.cli.touch(key, 0, noreply=False) is True, f"{key}: touch said NOT_FOUND"
        self.run.hits += 1

    # ------------------------------------------------------------ phases
    def fresh_key(self) -> str:
        k = f"k{self.nkeys:06d}"
        self.nkeys += 1
        return k

    def burst_small(self, n: int = 100) -> None:
        """n fresh small keys (1 B .. 2000 B), pipelined: enough of them make the
        small slab classes spill too."""
        batch = {}
        for _ in range(n):
            k = self.fresh_key()
            self.version[k] += 1
            size = int(2000 ** self.rng.random())
            batch[k] = (value_for(self.rng, k, self.version[k], size), self.rng.getrandbits(32))
        try:
            failed = self.cli.set_many(batch, noreply=False)
        except MemcacheServerError:
            failed = list(batch)      # the pipeline broke off: store them one by one
        assert all(k in batch for k in failed)
        self.run.ops["set"] += len(batch) - len(failed)
        for k, (v, f) in batch.items():
            if k in failed:
                self.do_set(k, v, f)
            else:
                self.known.add(k)
                self.order.append(k)
                self._changed(k, v, f)
                self.run.written += len(v)

    def step_fresh(self) -> None:
        """A new key, now and then an overwrite of a recent key or a gets that
        remembers the CAS token of a key that is about to be spilled."""
        k = self.fresh_key()
        self.do_set(k)
        r = self.rng.random()
        if r < 0.10 and len(self.order) > 10:
            k2 = self.rng.choice(self.order[-30:])                # overwrite, resident
            if k2 not in self.counter_set:
                self.do_set(k2)
        elif r < 0.25 and k in self.model:
            got, token = self.cli.gets(k)
            assert got == self.model[k]
            self.run.hits += 1
            self.run.ops["gets"] += 1
            self.cas[k] = int(token)

    def refresh_spilled(self) -> None:
        """Old keys that are spilled right now: the oldest 60% of the keys in
        creation order that the model holds and `lru_crawler metadump` does not
        list as resident."""
        resident = self.raw.resident_keys()
        old = self.order[: len(self.order) * 3 // 5]
        self.spilled = [k for k in old if k in self.model and k not in resident
                        and k not in self.counter_set]
        self.rng.shuffle(self.spilled)
        self.spilled_ctr = [k for k in self.counters if k not in resident]
        self.run.spilled_seen = max(self.run.spilled_seen, len(self.spilled))

    def old_key(self, pred, pool=None, fallback: bool = True) -> str | None:
        pool = self.spilled if pool is None else pool
        for i in range(len(pool) - 1, max(-1, len(pool) - 200), -1):
            k = pool[i]
            if k in self.model and pred(k):
                del pool[i]                   # it will be fetched by the operation
                return k
        if not fallback:
            return None
        # none known spilled (block merges bring keys back): any live old key
        old = self.order[: len(self.order) * 3 // 5]
        for _ in range(50):
            k = self.rng.choice(old)
            if k in self.model and pred(k) and (pool is self.spilled_ctr) == (k in self.counter_set):
                return k
        return None

    def step_old(self) -> None:
        if self.since_refresh >= self.refresh_every or (len(self.spilled) < 20 and self.since_refresh >= 30):
            self.refresh_spilled()
            self.since_refresh = 0
        self.since_refresh += 1
        op = self.rng.choice(["set", "delete", "append", "prepend", "cas", "bad-cas", "add",
                              "replace", "touch", "get", "replace-deleted", "incr", "incr"])
        if op == "incr":
            k = self.old_key(lambda k: True, self.spilled_ctr)
        elif op == "cas":
            # prefer keys whose token was taken before they were spilled
            k = self.old_key(lambda k: k in self.cas, fallback=False) or self.old_key(lambda k: True)
        elif op == "replace-deleted":
            k = self.rng.choice(sorted(self.deleted)) if self.deleted else None
        else:
            k = self.old_key(lambda k: True)
        if k is None:
            return
        before = self.served_from_disk()
        {"incr": self.do_incr, "set": self.do_set, "delete": self.do_delete,
         "append": lambda k: self.do_append(k, False), "prepend": lambda k: self.do_append(k, True),
         "cas": self.do_gets_cas, "bad-cas": self.do_bad_cas, "add": self.do_add_existing,
         "replace": self.do_replace, "replace-deleted": self.do_replace,
         "touch": self.do_touch, "get": self.do_get}[op](k)
        self.run.old_ops[op] += 1
        if self.served_from_disk() > before:
            self.run.fetched_by[op] += 1

    def served_from_disk(self) -> int:
        st = self.srv.ac()
        return st["fetched_items"] + st["read_through_items"]

    def execute(self) -> Run:
        # counters first, so that they are among the oldest (spilled) keys; padded
        # with spaces (incr accepts them) into large slab classes, which do spill
        for j in range(250):
            k = f"ctr{j:04d}"
            num = str(self.rng.randint(0, 10**9)).encode()
            self.do_set(k, num + b" " * (self.rng.randint(8000, 30000) - len(num)), flags=j)
            self.counters.append(k)
        self.counter_set = set(self.counters)
        # explicit extremes of the size range
        for size in (1, 2, 500 * 1024 if self.max_size >= 500 * 1024 else self.max_size):
            k = self.fresh_key()
            self.do_set(k, self.new_value(k, size))
        # phase 1: fresh keys only, until well past memory
        while self.run.written < self.target * 0.45:
            self.step_fresh()
            if self.nkeys % 10 == 0:
                self.burst_small()
        st = self.srv.ac()
        assert st["spilled_items"] > 0 and st["stub_items"] > 0, \
            f"nothing spilled after {self.run.written / MiB:.1f} MiB: {st}"
        assert all(k in self.model for k in self.counters)
        self.run.stats_before_old_ops = st
        # phase 2: fresh keys interleaved with every kind of operation on old keys
        n_old = 0
        while self.run.written < self.target or n_old < self.min_old_ops:
            if self.rng.random() < 0.5:
                self.step_fresh()
                if self.nkeys % 10 == 0:
                    self.burst_small()
            else:
                self.step_old()
                n_old += 1
        # phase 3: read everything back
        self.verify_all()
        return self.run

    def verify_all(self) -> None:
        small = [k for k in self.order if k in self.model and len(self.model[k][0]) < 4096]
        for s in range(0, len(small), 16):          # multi-get for small values
            batch = small[s:s + 16]
            got = self.cli.get_many(batch)
            for k in batch:
                assert k in got, f"{k}: stored, but get missed"
                assert got[k] == self.model[k], f"{k}: wrong data or flags"
            self.run.hits += len(batch)
        for k in self.order:
            if k in self.model and len(self.model[k][0]) >= 4096:
                self.do_get(k)
        # a token taken before the key was spilled (and fetched) must still be its CAS
        for k, token in list(self.cas.items())[:400]:
            got, tok = self.cli.gets(k)
            self.run.hits += 1
            assert got == self.model[k] and int(tok) == token, f"{k}: CAS changed from {token} to {tok}"
        for k in sorted(self.deleted):
            self.do_get(k)
        self.run.live_keys = len(self.model)
        self.run.deleted_keys = len(self.deleted)
        slabs = self.srv.stats("slabs")
        self.run.classes_used = sum(1 for k, v in slabs.items() if k.endswith(":total_pages") and int(v) > 0)
        self.run.final_stats = self.srv.ac()


def check_final(run: Run) -> None:
    st = run.final_stats
    bad = {k: st[k] for k in ("lost_items", "io_errors", "checksum_errors", "spill_failures",
                              "fetch_nomem") if st[k] != 0}
    assert not bad, f"{bad}; {run.summary()}"
    assert st["mem_hits"] + st["disk_hits"] == run.hits, \
        f"server counted {st['mem_hits']} + {st['disk_hits']} hits, the test did {run.hits}"
    assert st["misses"] == run.misses, f"server counted {st['misses']} misses, the test {run.misses}"
    assert st["disk_hits"] > 0 and st["spilled_items"] > 0


OLD_KINDS = ("set", "delete", "append", "prepend", "incr", "cas", "bad-cas", "add", "replace",
             "touch", "get")


def check_old_ops(run: Run, min_count: int, min_fraction: float, min_fetched: int = 5) -> None:
    """Each kind of operation on old keys ran at least min_count times, and at
    least min_fraction of them (and min_fetched) found the key spilled
    (fetched_items rose during the request)."""
    for op in OLD_KINDS:
        # (incr goes to the 250 counters, which fetches soon make resident)
        frac = min_fraction / 4 if op == "incr" else min_fraction
        assert run.old_ops[op] >= min_count and run.fetched_by[op] >= min_fetched \
            and run.fetched_by[op] >= frac * run.old_ops[op], \
            f"{op} on old keys: {run.fetched_by[op]} of {run.old_ops[op]} fetched a spilled item; " \
            + run.summary()
    assert run.ops["cas-with-old-token"] > 0, run.summary()
