#!/usr/bin/env python3
"""Executes the notebooks of analysis/notebooks/ against one run's results.

    python3 analysis/run_notebooks.py --results build/results/ci/regress --out build/notebooks [--base DIR] [NAME ...]

Each Jupytext percent-format NAME.py becomes OUT/NAME.ipynb (jupytext), is executed in a python3
kernel (nbclient) with ACBENCH_RESULTS = the results and ACBENCH_FIGURES = OUT/figures, and is
written back with its outputs (also when it fails, up to the failing cell). Exit 1 if any
notebook failed, naming each and the error of its failing cell. report runs last: it links the
figures the others wrote.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOKS = HERE / "notebooks"
TIMEOUT_S = 600


def notebook_names(names: list[str]) -> list[str]:
    found = sorted(p.stem for p in NOTEBOOKS.glob("*.py"))
    if names:
        unknown = [n for n in names if n not in found]
        if unknown:
            raise SystemExit(f"run_notebooks: no notebook {', '.join(unknown)} in {NOTEBOOKS} "
                             f"(there are: {', '.join(found)})")
        return names
    return sorted(found, key=lambda n: (n == "report", n))


def cell_error(err: Exception) -> str:
    """The failing cell's exception as 'Name: message' (nbclient's CellExecutionError carries it)."""
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    if ename:
        return f"{ename}: {evalue}"
    return f"{type(err).__name__}: {err}"


def run_one(name: str, out: Path) -> str | None:
    """Executes NAME; returns None, or the error text."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    from jupyter_client.manager import KernelManager

    nb = jupytext.read(NOTEBOOKS / f"{name}.py")
    target = out / f"{name}.ipynb"
    # the kernel talks over a local socket file (IPC), not TCP: nothing listens on the network
    ipc = tempfile.mkdtemp(prefix="acbench-kernel-")
    km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(ipc, "k"))
    client = NotebookClient(nb, km=km, timeout=TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        client.execute()
        return None
    except Exception as e:   # noqa: BLE001 - CellExecutionError, kernel death, timeout: all reported
        failing = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                        and any(o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        where = ""
        if failing is not None:
            first = next((ln for ln in nb.cells[failing].source.splitlines() if ln.strip()), "")
            where = f" in cell {failing} ({first.strip()[:60]!r})"
        return f"{where}: {cell_error(e)}"
    finally:
        nbformat.write(nb, target)
        if km.has_kernel:        # a kernel manager given to the client is the caller's to stop
            km.shutdown_kernel(now=True)
        shutil.rmtree(ipc, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="a run directory (cells.parquet or cells.csv), or several "
                                                     "separated by ':' (read together)")
    ap.add_argument("--out", required=True, help="directory for NAME.ipynb; figures go to OUT/figures")
    ap.add_argument("--base", type=Path, action="append",
                    help="a relative --results path is looked for in this directory (repeatable: the first that "
                         "has it wins), a relative --out is made in the first (default: the current directory; "
                         "`make -C analysis` passes the directory make was started from, then the repository)")
    ap.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = ap.parse_args(argv)
    bases = [b.resolve() for b in (args.base or [Path.cwd()])]
    runs, missing = [], []
    for p in (p for p in args.results.split(os.pathsep) if p):
        found = next((b / p for b in bases if (b / p).exists()), None)
        if found is None:
            missing.append(p)
        runs.append(found)
    if missing:
        print(f"run_notebooks: --results {', '.join(missing)}: no such file or directory (relative paths are "
              f"looked for in {', '.join(map(str, bases))})", file=sys.stderr)
        return 2
    out = (bases[0] / args.out).resolve()
    figures = out / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    os.environ["ACBENCH_RESULTS"] = os.pathsep.join(str(p.resolve()) for p in runs if p is not None)
    os.environ["ACBENCH_FIGURES"] = str(figures)
    # the kernel imports acplot and acbench from this checkout, installed or not
    paths = [str(HERE), str(HERE.parent / "harness")]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    failed = []
    for name in notebook_names(args.names):
        t0 = time.monotonic()
        err = run_one(name, out)
        took = time.monotonic() - t0
        if err is None:
            print(f"notebook {name}: ok ({took:.1f} s) -> {out / (name + '.ipynb')}")
        else:
            print(f"notebook {name} failed{err}", file=sys.stderr)
            failed.append(name)
    if failed:
        print(f"run_notebooks: {len(failed)} notebook(s) failed: {', '.join(failed)} "
              f"(results: {os.environ['ACBENCH_RESULTS']}; executed copies in {out})", file=sys.stderr)
        return 1
    print(f"figures and tables: {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
