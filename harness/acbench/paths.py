"""Where things are: the checkout acbench works on (its home), build/bin tools, caches, default
results. Every path into the checkout is made here.

The home is a memcached-ac checkout (a directory holding experiments/, harness/ and memcached/),
never the directory the acbench package was installed from, so one installed acbench serves any
checkout. It is, in this order: --home (set_home), $ACBENCH_HOME, $TOP (the Makefiles set it),
else the current directory or the nearest directory above it that is a checkout."""
from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "ACBENCH_HOME"
MARKERS = ("experiments", "harness", "memcached")


class HomeError(RuntimeError):
    """No memcached-ac checkout found (or a given one is not a checkout)."""


def is_home(d: Path) -> bool:
    return all((d / m).is_dir() for m in MARKERS)


def _checked(d: Path, source: str) -> Path:
    d = d.expanduser().resolve()
    if not is_home(d):
        raise HomeError(f"{source} {d}: not a memcached-ac checkout (accepted: a directory holding "
                        f"{', '.join(m + '/' for m in MARKERS)})")
    return d


def set_home(d: Path) -> Path:
    """--home: the checkout for this process and the processes it starts ($ACBENCH_HOME)."""
    home = _checked(Path(d), "--home")
    os.environ[HOME_ENV] = str(home)
    return home


def top() -> Path:
    """The home: the memcached-ac checkout acbench works on (see the module doc)."""
    for var in (HOME_ENV, "TOP"):
        env = os.environ.get(var)
        if env:
            return _checked(Path(env), f"${var}")
    cwd = Path.cwd().resolve()
    for d in (cwd, *cwd.parents):
        if is_home(d):
            return d
    raise HomeError(f"no memcached-ac checkout at or above {cwd}: run acbench inside one, or name it with "
                    f"--home DIR or ${HOME_ENV}")


def from_home(p: Path) -> Path:
    """A relative path that names nothing here but something in the home (experiments/demo.toml run
    from outside the checkout): the home's; else p as given."""
    if p.is_absolute() or p.exists():
        return p
    h = top() / p
    return h if h.exists() else p


def build() -> Path:
    return top() / "build"


def binary(name: str) -> Path:
    """A tool in build/bin ($ACBENCH_BIN overrides the directory)."""
    d = os.environ.get("ACBENCH_BIN")
    return (Path(d) if d else build() / "bin") / name


def libacopt() -> Path:
    """libacopt.so ($ACOPT_LIB overrides it)."""
    env = os.environ.get("ACOPT_LIB")
    return Path(env) if env else build() / "lib" / "libacopt.so"


def cache_dir() -> Path:
    d = build() / "acbench"
    d.mkdir(parents=True, exist_ok=True)
    return d


def default_results() -> Path:
    return build() / "results"


def cgroups_dir() -> Path:
    return top() / "cgroups"
