"""The RAM device against the disk: the hit rates of cells that ran on both (`spill_device` ram and
disk, same cell id), e.g. fig3-paper's rows next to fig4-paper's or fig3-paper-disk's. What the RAM
device may change is only how fast a disk hit is served; this is how much the hit rates moved."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from acplot.cells import hit_rates

CHECK_ENV = "ACBENCH_DEVICE_CHECK"
COMMITTED = Path("experiments") / "results" / "fig3-paper-disk"


def check_path(default_root: Path | None = None) -> Path | None:
    """ACBENCH_DEVICE_CHECK (a run directory or cells file), else the committed fig3-paper-disk run
    of the home (acbench.paths), else None."""
    env = os.environ.get(CHECK_ENV)
    if env:
        return Path(env)
    if default_root is None:
        from acbench import paths   # the checkout acbench works on (its home)
        default_root = paths.top()
    p = default_root / COMMITTED
    return p if p.exists() else None


def device_pairs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell that has a RAM-device row and a disk row: approach, θ, M/D, both hit rates,
    their difference in percentage points (RAM − disk) and both cells' wall times."""
    cols = ("cell_id", "spill_device", "approach", "zipf_theta", "mem_ratio", "cell_wall_s")
    if any(c not in df.columns for c in cols):
        return pd.DataFrame(columns=["cell_id", "approach", "zipf_theta", "mem_ratio", "hit_rate_ram",
                                     "hit_rate_disk", "diff_pp", "wall_s_ram", "wall_s_disk"])
    d = df.assign(hit_rate=hit_rates(df), spill_device=df["spill_device"].fillna("disk"))
    ram = d[d["spill_device"] == "ram"].groupby("cell_id").first()
    disk = d[d["spill_device"] == "disk"].groupby("cell_id").first()
    both = ram.index.intersection(disk.index)
    out = pd.DataFrame({"approach": ram.loc[both, "approach"], "zipf_theta": ram.loc[both, "zipf_theta"],
                        "mem_ratio": ram.loc[both, "mem_ratio"],
                        "hit_rate_ram": ram.loc[both, "hit_rate"], "hit_rate_disk": disk.loc[both, "hit_rate"],
                        "wall_s_ram": ram.loc[both, "cell_wall_s"], "wall_s_disk": disk.loc[both, "cell_wall_s"]})
    out["diff_pp"] = 100 * (out["hit_rate_ram"] - out["hit_rate_disk"])
    return out.reset_index().sort_values(["approach", "zipf_theta", "mem_ratio"],
                                         ascending=[True, False, False]).reset_index(drop=True)


def summary(pairs: pd.DataFrame) -> str:
    """One line: how many cells, the largest difference and where, the wall-time ratio."""
    if pairs.empty:
        return "no cell ran on both the RAM device and the disk"
    worst = pairs.loc[pairs["diff_pp"].abs().idxmax()]
    speed = (pairs["wall_s_disk"] / pairs["wall_s_ram"]).median()
    return (f"{len(pairs)} cells on both devices: hit rates differ by {pairs['diff_pp'].abs().max():.4f} pp at "
            f"most ({worst['approach']} θ {worst['zipf_theta']:g} M/D {worst['mem_ratio']:g}), by "
            f"{pairs['diff_pp'].abs().median():.4f} pp in the median; a cell takes {speed:.1f}× as long on the disk "
            "(median)")
