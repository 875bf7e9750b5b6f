"""Find the hierarchy that has the memory controller: cgroup v1 or v2."""
from __future__ import annotations

import os
from pathlib import Path

from . import cgfiles
from .backend import Backend
from .errors import AcgError
from .mounts import MOUNTINFO, read_mounts
from .v1 import V1Backend
from .v2 import V2Backend

ROOT_ENV = "ACG_CGROUP_ROOT"


def classify_root(root: Path) -> Backend:
    """The backend for an explicitly given hierarchy root (a real mount or a fake tree)."""
    controllers = root / "cgroup.controllers"
    if controllers.is_file():
        if "memory" in (cgfiles.read_text(controllers) or "").split():
            return V2Backend(root)
        raise AcgError(f"{root} is a cgroup v2 hierarchy but its cgroup.controllers does not "
                       "list memory")
    if (root / "memory.limit_in_bytes").is_file():
        return V1Backend(root)
    raise AcgError(f"{root} is not a cgroup hierarchy with a memory controller: expected "
                   "memory.limit_in_bytes (v1) or a cgroup.controllers listing memory (v2)")


def detect(root: Path | str | None = None, mountinfo: Path = MOUNTINFO) -> Backend:
    """The memory-controller backend; `root` (or $ACG_CGROUP_ROOT) overrides the search."""
    if root is None and os.environ.get(ROOT_ENV):
        root = os.environ[ROOT_ENV]
    if root is not None:
        return classify_root(Path(root))
    checked: list[str] = []
    mounts = read_mounts(Path(mountinfo))
    for m in mounts:
        if m.fstype == "cgroup" and "memory" in m.super_options:
            return V1Backend(m.mount_point)
    for m in mounts:
        if m.fstype == "cgroup2":
            text = cgfiles.read_text(m.mount_point / "cgroup.controllers") or ""
            if "memory" in text.split():
                return V2Backend(m.mount_point)
            checked.append(f"{m.mount_point} has controllers [{' '.join(text.split())}]")
    detail = "; ".join(checked) if checked else "no cgroup2 mount"
    raise AcgError("no cgroup memory controller found: no cgroup v1 mount with the memory "
                   f"controller in {mountinfo} and no cgroup v2 mount listing memory in "
                   f"cgroup.controllers ({detail})")
