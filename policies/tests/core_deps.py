#!/usr/bin/env python3
"""The core's files depend on each other in one direction only.

Reads the objects memcached/Makefile compiled from policies/core/*.c (the
archive build/obj/policies/libac.a) with nm and readelf, and fails when
- two or more core files depend on each other in a circle (a file depends on
  another when it refers to a symbol the other defines);
- a file's header comment does not list exactly the core files it uses (its
  "Uses:" sentence: "Uses: ac_record, ac_state." or "Uses: nothing ...");
- a core object defines a thread-local variable other than the thread record
  ac_self (ac_state.c), or an object other than ac_state.o and ac_hooks.o
  refers to it (the one per-thread record, used at the memcached boundary).

Usage: core_deps.py LIBAC.a CORE_DIR"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

THREAD_RECORD = "ac_self"
THREAD_RECORD_USERS = {"ac_state", "ac_hooks"}


def members(archive: Path) -> dict[str, tuple[set[str], set[str]]]:
    """object name -> (global symbols it defines, symbols it refers to)"""
    out = subprocess.run(["nm", "-A", str(archive)], capture_output=True, text=True, check=True).stdout
    objs: dict[str, tuple[set[str], set[str]]] = {}
    for line in out.splitlines():
        # archive.a:member.o:ADDR T name   or   archive.a:member.o:         U name
        m = re.match(r"^[^:]+:([^:]+)\.o:\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, sym = m.groups()
        defined, used = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            used.add(sym)
        elif kind.isupper():
            defined.add(sym)
    return objs


def thread_locals(archive: Path) -> dict[str, tuple[set[str], set[str]]]:
    """object name -> (TLS symbols it defines, TLS symbols it refers to)"""
    out = subprocess.run(["readelf", "-sW", str(archive)], capture_output=True, text=True, check=True).stdout
    res: dict[str, tuple[set[str], set[str]]] = {}
    obj = None
    for line in out.splitlines():
        m = re.match(r"^File: .*\((.+)\.o\)$", line)
        if m:
            obj = m.group(1)
            res[obj] = (set(), set())
            continue
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if obj is None or len(f) < 8 or f[3] != "TLS":
            continue
        (res[obj][1] if f[6] == "UND" else res[obj][0]).add(f[7])
    return res


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """the strongly connected components with more than one file (Tarjan)"""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def declared_uses(src: Path, core: set[str]) -> set[str] | None:
    """the core files named in the "Uses:" sentence of the file's first comment"""
    text = src.read_text()
    head = text[: text.find("*/") + 2] if text.startswith("/*") else ""
    m = re.search(r"Uses:(.*?)(?:\*/|\n \*\s*\n)", head, re.S)
    if not m:
        return None
    return {w for w in re.findall(r"\b(ac_\w+|cgmem)\b", m.group(1)) if w in core}


def self_check() -> None:
    """the circle finder finds circles (and only them)"""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [["a", "b"], ["c", "d"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def main() -> int:
    self_check()
    archive, core_dir = Path(sys.argv[1]), Path(sys.argv[2])
    core = {p.stem for p in core_dir.glob("*.c")}
    objs = members(archive)
    missing = core - set(objs)
    if missing:
        print(f"core_deps: not in {archive}: {sorted(missing)} (rebuild: make -C memcached all)")
        return 1
    owner = {sym: o for o in core for sym in objs[o][0]}
    graph = {o: {owner[s] for s in objs[o][1] if s in owner and owner[s] != o} for o in core}
    problems = []
    for comp in cycles(graph):
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        problems.append(f"circle between {', '.join(comp)}: {'; '.join(edges)}")
    for o in sorted(core):
        uses = declared_uses(core_dir / f"{o}.c", core)
        if uses is None:
            problems.append(f"{o}.c: its header comment has no \"Uses:\" sentence")
        elif uses != graph[o]:
            problems.append(f"{o}.c: header says it uses {sorted(uses)}, the object uses {sorted(graph[o])}")
    tls = thread_locals(archive)
    for o in sorted(core):
        defined, used = tls.get(o, (set(), set()))
        extra = defined - ({THREAD_RECORD} if o == "ac_state" else set())
        if extra:
            problems.append(f"{o}.c defines thread-local {sorted(extra)}: the core's only one is {THREAD_RECORD}")
        if THREAD_RECORD in used and o not in THREAD_RECORD_USERS:
            problems.append(f"{o}.c refers to {THREAD_RECORD}: only {sorted(THREAD_RECORD_USERS)} may "
                            "(others go through ac_thread() at an entry point, or take a struct ac_lookup)")
    order = []
    done: set[str] = set()
    while len(done) < len(core) and not problems:
        ready = sorted(o for o in core - done if graph[o] <= done)
        order += ready
        done |= set(ready)
    if problems:
        print("core_deps: " + "\ncore_deps: ".join(problems))
        print(f"core_deps: 0 passed, {len(problems)} failed")
        return 1
    print("core_deps: one-way, bottom up: " + " < ".join(order))
    print(f"core_deps: {len(core)} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
