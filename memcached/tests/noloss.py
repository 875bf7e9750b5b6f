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
unlinks the old value, other commands leave it), so the run goes on and reports
all of them; check_final then fails the run: the spill store had room, nothing
may be refused.

ModelWorker (below) is the many-clients form: one thread per worker, its own
keys, an exact model of every answer (test_mixed_load.py).
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
                 max_size: int = 500 * 1024, min_old_ops: int = 1200, refresh_every: int = 150,
                 compressible: bool = False):
        self.srv = srv
        self.compressible = compressible
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
        return value_for(self.rng, key, self.version[key], size, self.compressible)

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
        extra = value_for(self.rng, key, self.version[key], self.rng.randint(1, 3000), self.compressible)
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
            batch[k] = (value_for(self.rng, k, self.version[k], size, self.compressible), self.rng.getrandbits(32))
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
        before = self.spilled_found()
        {"incr": self.do_incr, "set": self.do_set, "delete": self.do_delete,
         "append": lambda k: self.do_append(k, False), "prepend": lambda k: self.do_append(k, True),
         "cas": self.do_gets_cas, "bad-cas": self.do_bad_cas, "add": self.do_add_existing,
         "replace": self.do_replace, "replace-deleted": self.do_replace,
         "touch": self.do_touch, "get": self.do_get}[op](k)
        self.run.old_ops[op] += 1
        read, dropped = self.spilled_found()
        # a plain set drops the spilled value unread (test_overwrite.py: no read)
        if (dropped > before[1]) if op == "set" else (read > before[0]):
            self.run.fetched_by[op] += 1

    def spilled_found(self) -> tuple[int, int]:
        """(items read from the spill store: fetched or read through, spilled
        values a plain set dropped unread)."""
        st = self.srv.ac()
        return st["fetched_items"] + st["read_through_items"], st["overwritten_unread"]

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
    # the spill store had room all along: nothing may have been refused
    assert not run.oom, run.summary()
    check_no_refusals(st, run.summary())
    assert st["mem_hits"] + st["disk_hits"] == run.hits, \
        f"server counted {st['mem_hits']} + {st['disk_hits']} hits, the test did {run.hits}"
    assert st["misses"] == run.misses, f"server counted {st['misses']} misses, the test {run.misses}"
    assert st["disk_hits"] > 0 and st["spilled_items"] > 0


def check_no_refusals(st: dict, context: str = "") -> None:
    """Nothing lost, no I/O or checksum error, and nothing refused (`stats
    anticache` refused_*: stores or fetches the server gave up on) while the
    spill store had room."""
    bad = {k: v for k, v in st.items()
           if (k in ("lost_items", "io_errors", "checksum_errors", "spill_failures")
               or k.startswith("refused_")) and v != 0}
    assert not bad, f"{bad}; {context}"


OLD_KINDS = ("set", "delete", "append", "prepend", "incr", "cas", "bad-cas", "add", "replace",
             "touch", "get")


def check_old_ops(run: Run, min_count: int, min_fraction: float, min_fetched: int = 5) -> None:
    """Each kind of operation on old keys ran at least min_count times, and at
    least min_fraction of them (and min_fetched) found the key spilled
    (fetched_items rose during the request; for a plain set, which must not
    read it: overwritten_unread rose)."""
    for op in OLD_KINDS:
        # (incr goes to the 250 counters, which fetches soon make resident)
        frac = min_fraction / 4 if op == "incr" else min_fraction
        assert run.old_ops[op] >= min_count and run.fetched_by[op] >= min_fetched \
            and run.fetched_by[op] >= frac * run.old_ops[op], \
            f"{op} on old keys: {run.fetched_by[op]} of {run.old_ops[op]} fetched a spilled item; " \
            + run.summary()
    assert run.ops["cas-with-old-token"] > 0, run.summary()


# ------------------------------------------------------------ many clients, exact model

REFUSED = object()       # a ModelWorker call answered SERVER_ERROR


class KeySet:
    """Keys with O(1) add, remove and random choice."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.pos: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, k: str) -> bool:
        return k in self.pos

    def add(self, k: str) -> None:
        if k not in self.pos:
            self.pos[k] = len(self.keys)
            self.keys.append(k)

    def discard(self, k: str) -> None:
        i = self.pos.pop(k, None)
        if i is None:
            return
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.pos[last] = i

    def choice(self, rng: random.Random) -> str | None:
        return self.keys[rng.randrange(len(self.keys))] if self.keys else None


class ModelWorker:
    """One client thread that owns its keys (prefix), so its model of them is
    exact: every command's answer is known in advance. Any other answer is a
    *refusal* (any SERVER_ERROR; NOT_STORED, NOT_FOUND or EXISTS where the key is
    there, or a miss of a stored key) and is recorded, not raised, so a run
    reports all of them; wrong data (a value, flags or number that differs from
    the model) is raised at once. A key whose modification was refused may or may
    not have changed (a refused set unlinks the old value, a refused fetch leaves
    it spilled): it leaves the model (`uncertain`). Counters hold decimal numbers
    (space-padded to a random length: incr rewrites in place when the result
    fits, else allocates a new item) and only see incr/decr/get/delete."""

    WEIGHTS = {
        "set-new": 26, "set": 7, "add-new": 3, "add-existing": 2, "replace": 4,
        "replace-absent": 1, "append": 5, "prepend": 3, "append-absent": 1, "cas": 4,
        "bad-cas": 2, "cas-absent": 1, "incr": 6, "get": 14, "get-absent": 2, "gets": 3,
        "touch": 3, "touch-absent": 1, "gat": 4, "delete": 6, "delete-absent": 1,
    }
    MAX_VALUE = 900 * 1024          # appends stop here (memcached's item limit is 1 MiB)

    def __init__(self, srv, tid: int, seed: int, quota: int, size_fn, n_counters: int = 40):
        self.cli = srv.client()
        self.raw = srv.raw()
        self.tid = tid
        self.rng = random.Random(seed)
        self.quota = quota
        self.size_fn = size_fn
        self.n_counters = n_counters
        self.model: dict[str, tuple[bytes, int]] = {}
        self.counters: dict[str, tuple[int, int, int]] = {}     # key -> (number, longest value, flags)
        self.live, self.dead, self.ctr = KeySet(), KeySet(), KeySet()
        self.uncertain: set[str] = set()
        self.tokens: dict[str, int] = {}
        self.version = Counter()
        self.n = 0
        self.written = 0
        self.ops: Counter = Counter()
        self.refused: Counter = Counter()       # (op, answer) -> count
        self.samples: list[tuple] = []
        ops, weights = zip(*self.WEIGHTS.items())
        self._ops, self._weights = list(ops), list(weights)

    # -------------------------------------------------------- bookkeeping
    def refuse(self, op: str, key: str, answer, modifies: bool = True) -> None:
        if isinstance(answer, MemcacheServerError):
            arg = answer.args[0] if answer.args else ""
            answer = "SERVER_ERROR " + (arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg))
        text = str(answer)
        self.refused[(op, text)] += 1
        if len(self.samples) < 10:
            size = len(self.model[key][0]) if key in self.model else None
            self.samples.append((op, key, size, text))
        if modifies:
            self.forget(key)

    def forget(self, key: str) -> None:
        self.model.pop(key, None)
        self.counters.pop(key, None)
        self.live.discard(key)
        self.dead.discard(key)
        self.ctr.discard(key)
        self.tokens.pop(key, None)
        self.uncertain.add(key)

    def stored(self, key: str, value: bytes, flags: int) -> None:
        self.model[key] = (value, flags)
        self.live.add(key)
        self.dead.discard(key)
        self.tokens.pop(key, None)

    def deleted(self, key: str) -> None:
        self.model.pop(key, None)
        self.counters.pop(key, None)
        self.live.discard(key)
        self.ctr.discard(key)
        self.dead.add(key)
        self.tokens.pop(key, None)

    def new_key(self) -> str:
        self.n += 1
        return f"w{self.tid}-{self.n}"

    def value(self, key: str, size: int | None = None) -> bytes:
        self.version[key] += 1
        return value_for(self.rng, key, self.version[key], self.size_fn(self.rng) if size is None else size)

    def call(self, op: str, key: str, fn, *args, modifies: bool = True, **kw):
        """Runs a pymemcache call; a SERVER_ERROR is a refusal (returns the marker)."""
        self.ops[op] += 1
        try:
            return fn(*args, **kw)
        except MemcacheServerError as e:
            self.refuse(op, key, e, modifies)
            return REFUSED

    # -------------------------------------------------------- commands
    def set(self, op: str, key: str) -> None:
        v, f = self.value(key), self.rng.getrandbits(32)
        r = self.call(op, key, self.cli.set, key, v, noreply=False, flags=f)
        if r is REFUSED:
            return
        if r is not True:
            return self.refuse(op, key, r)
        self.stored(key, v, f)
        self.written += len(v)

    def add(self, op: str, key: str) -> None:
        present = key in self.model
        v, f = self.value(key), self.rng.getrandbits(32)
        r = self.call(op, key, self.cli.add, key, v, noreply=False, flags=f)
        if r is REFUSED:
            return
        if r is not (not present):
            assert not (present and r is True), f"{key}: add of a stored key answered STORED"
            return self.refuse(op, key, "NOT_STORED")
        if not present:
            self.stored(key, v, f)
            self.written += len(v)

    def replace(self, op: str, key: str) -> None:
        present = key in self.model
        v, f = self.value(key), self.rng.getrandbits(32)
        r = self.call(op, key, self.cli.replace, key, v, noreply=False, flags=f)
        if r is REFUSED:
            return
        assert not (r is True and not present), f"{key}: replace of a deleted key answered STORED"
        if r is not present:
            return self.refuse(op, key, "NOT_STORED")
        if present:
            self.stored(key, v, f)
            self.written += len(v)

    def append(self, op: str, key: str, prepend: bool) -> None:
        present = key in self.model
        self.version[key] += 1
        extra = value_for(self.rng, key, self.version[key], self.rng.randint(1, 4000))
        r = self.call(op, key, self.cli.prepend if prepend else self.cli.append, key, extra, noreply=False)
        if r is REFUSED:
            return
        assert not (r is True and not present), f"{key}: {op} of a deleted key answered STORED"
        if r is not present:
            return self.refuse(op, key, "NOT_STORED")
        if present:
            old, f = self.model[key]
            self.stored(key, extra + old if prepend else old + extra, f)
            self.written += len(extra)

    def cas(self, op: str, key: str) -> None:
        present = key in self.model
        token = self.tokens.get(key)
        if present and token is None:
            got = self.call("gets", key, self.cli.gets, key, modifies=False)
            if got is REFUSED:
                return
            if got[0] is None:
                return self.refuse("gets", key, "miss", modifies=False)
            assert got[0] == self.model[key], f"{key}: gets returned different data or flags"
            token = int(got[1])
        if token is None:
            token = self.rng.randint(1, 1 << 40)
        if op == "bad-cas":
            token += 1 << 41
        v, f = self.value(key), self.rng.getrandbits(32)
        r = self.call(op, key, self.cli.cas, key, v, str(token).encode(), noreply=False, flags=f)
        if r is REFUSED:
            return
        want = None if not present else (False if op == "bad-cas" else True)
        assert not (r is True and want is not True), f"{key}: {op} answered STORED (want {want})"
        if r is not want:
            return self.refuse(op, key, {False: "EXISTS", None: "NOT_FOUND"}.get(r, r))
        if r is True:
            self.stored(key, v, f)
            self.written += len(v)

    def incr(self, key: str) -> None:
        num, longest, f = self.counters[key]
        delta = self.rng.randint(1, 10**6 if self.rng.random() < 0.9 else 10**12)
        up = self.rng.random() < 0.6
        op = "incr" if up else "decr"
        r = self.call(op, key, self.cli.incr if up else self.cli.decr, key, delta, noreply=False)
        if r is REFUSED:
            return
        if r is None:
            return self.refuse(op, key, "NOT_FOUND")
        new = num + delta if up else max(0, num - delta)
        assert r == new, f"{key}: {num} {'+' if up else '-'} {delta} gave {r}, expected {new}"
        self.counters[key] = (new, max(longest, len(str(new))), f)

    def check_counter(self, key: str, got) -> None:
        num, longest, f = self.counters[key]
        digits = str(num).encode()
        assert got is not None, f"{key}: counter missing"
        v, flags = got
        # incr/decr rewrite in place, padding with spaces, when the result fits
        # (and no other request holds the item), else store just the digits
        assert flags == f and v.rstrip(b" ") == digits and len(digits) <= len(v) <= longest, \
            f"{key}: counter {v[:40]!r} flags {flags}, expected {num} (at most {longest} bytes) flags {f}"

    def get(self, op: str, key: str) -> None:
        present = key in self.model or key in self.counters
        got = self.call(op, key, self.cli.get, key, modifies=False)
        if got is REFUSED:
            return
        if not present:
            assert got is None, f"{key}: deleted, but get returned it"
        elif got is None:
            self.refuse(op, key, "miss", modifies=False)
        elif key in self.counters:
            self.check_counter(key, got)
        else:
            assert got == self.model[key], f"{key}: get returned different data or flags"

    def gets(self, key: str) -> None:
        got = self.call("gets", key, self.cli.gets, key, modifies=False)
        if got is REFUSED:
            return
        if got[0] is None:
            return self.refuse("gets", key, "miss", modifies=False)
        assert got[0] == self.model[key], f"{key}: gets returned different data or flags"
        self.tokens[key] = int(got[1])

    def touch(self, op: str, key: str) -> None:
        present = key in self.model
        r = self.call(op, key, self.cli.touch, key, 0, noreply=False, modifies=False)
        if r is REFUSED:
            return
        assert not (r and not present), f"{key}: touch of a deleted key answered TOUCHED"
        if r is not present:
            self.refuse(op, key, "NOT_FOUND", modifies=False)

    def gat(self, key: str) -> None:
        self.ops["gat"] += 1
        vals, err = self.raw.get(key, cmd="gat", exptime=0)
        if err is not None:
            return self.refuse("gat", key, err.decode(errors="replace"), modifies=False)
        if key not in vals:
            return self.refuse("gat", key, "miss", modifies=False)
        assert vals[key][:2] == self.model[key], f"{key}: gat returned different data or flags"

    def delete(self, op: str, key: str) -> None:
        present = key in self.model or key in self.counters
        r = self.call(op, key, self.cli.delete, key, noreply=False)
        if r is REFUSED:
            return
        assert not (r and not present), f"{key}: delete of a deleted key answered DELETED"
        if r is not present:
            return self.refuse(op, key, "NOT_FOUND")
        self.deleted(key)

    # -------------------------------------------------------- the run
    def make_counters(self) -> None:
        for _ in range(self.n_counters):
            k = self.new_key()
            num = self.rng.randint(0, 10**9)
            padded = self.rng.choice([0, 0, self.rng.randint(12, 3000)])
            digits = str(num).encode()
            f = self.rng.getrandbits(32)
            r = self.call("set", k, self.cli.set, k, digits + b" " * max(0, padded - len(digits)),
                          noreply=False, flags=f)
            if r is True:
                self.counters[k] = (num, max(padded, len(digits)), f)
                self.ctr.add(k)
                self.dead.discard(k)

    def step(self) -> None:
        op = self.rng.choices(self._ops, self._weights)[0]
        if op == "set-new" or len(self.live) < 8:
            return self.set("set", self.new_key())
        if op == "add-new":
            return self.add("add", self.new_key())
        if op == "incr":
            k = self.ctr.choice(self.rng)
            if k is not None:
                if self.rng.random() < 0.15:
                    self.get("get", k)
                else:
                    self.incr(k)
            return
        if op.endswith("-absent"):
            k = self.dead.choice(self.rng)
            if k is None:
                return
            base = op[: -len("-absent")]
        else:
            k = self.live.choice(self.rng)
            base = op
        if base in ("append", "prepend") and len(self.model.get(k, (b"",))[0]) > self.MAX_VALUE - 4000:
            base = "set"
        {"set": lambda: self.set("set", k), "add-existing": lambda: self.add("add", k),
         "replace": lambda: self.replace("replace", k), "append": lambda: self.append("append", k, False),
         "prepend": lambda: self.append("prepend", k, True), "cas": lambda: self.cas("cas", k),
         "bad-cas": lambda: self.cas("bad-cas", k), "get": lambda: self.get("get", k),
         "gets": lambda: self.gets(k), "touch": lambda: self.touch("touch", k), "gat": lambda: self.gat(k),
         "delete": lambda: self.delete("delete", k)}[base]()

    def run(self) -> None:
        self.make_counters()
        while self.written < self.quota:
            self.step()

    def verify(self, cli) -> dict[str, int]:
        """Reads every key of the model back (small values in multi-gets):
        stored ones byte-exact, deleted ones absent. Returns refusals of this
        pass (SERVER_ERROR, misses of stored keys) by kind."""
        bad: Counter = Counter()
        small = [k for k, (v, _) in self.model.items() if len(v) < 8192] + list(self.counters)
        for s in range(0, len(small), 32):
            batch = small[s:s + 32]
            try:
                got = cli.get_many(batch)
            except MemcacheServerError:
                got = {}
                for k in batch:
                    try:
                        v = cli.get(k)
                    except MemcacheServerError as e1:
                        bad[f"get: SERVER_ERROR {e1.args[0]!r}"] += 1
                        continue
                    if v is not None:
                        got[k] = v
            for k in batch:
                if k not in got:
                    bad["miss of a stored key"] += 1
                elif k in self.counters:
                    self.check_counter(k, got[k])
                else:
                    assert got[k] == self.model[k], f"{k}: wrong data or flags after the run"
        for k, (v, f) in self.model.items():
            if len(v) < 8192:
                continue
            try:
                got = cli.get(k)
            except MemcacheServerError as e:
                bad[f"get: SERVER_ERROR {e.args[0]!r}"] += 1
                continue
            if got is None:
                bad["miss of a stored key"] += 1
            else:
                assert got == (v, f), f"{k}: wrong data or flags after the run"
        for s in range(0, len(self.dead), 64):
            batch = self.dead.keys[s:s + 64]
            got = cli.get_many(batch)
            assert not got, f"deleted keys returned after the run: {sorted(got)[:5]}"
        return dict(bad)

