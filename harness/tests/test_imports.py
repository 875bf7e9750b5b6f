"""The harness's modules import each other one way: no circle, counting imports inside functions
too (an import deferred into a function is still a dependency)."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "acbench"


def graph() -> dict[str, set[str]]:
    mods = {p.stem for p in PKG.glob("*.py")}
    out: dict[str, set[str]] = {}
    for p in PKG.glob("*.py"):
        deps: set[str] = set()
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.ImportFrom) and n.module == "acbench":
                deps |= {a.name for a in n.names if a.name in mods}
            elif isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("acbench."):
                deps.add(n.module.split(".")[1])
            elif isinstance(n, ast.Import):
                deps |= {a.name.split(".")[1] for a in n.names if a.name.startswith("acbench.")}
        out[p.stem] = deps & mods - {p.stem}
    return out


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle of g, as the modules along it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(g[v]):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        state[v] = 2
        path.pop()
        return None

    for v in sorted(g):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_no_import_circle() -> None:
    g = graph()
    assert "runner" in g and "calibrate" in g["runner"]
    assert cycle(g) is None, " -> ".join(cycle(g) or [])


def test_the_check_finds_a_circle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
