"""Sensitivity sweeps: the cells of approach variants NAME{option=value} (approaches.variant)
that set one option of one base approach (and the base's own rows, when it sets that option),
read as a sweep of that option: per cell of the grid
(workload, θ, M/D) the loss against OPT at each value, the best value and how far the loss moves
across the values. A spec sweeps by listing one variant per value (experiments/effpaging-lock.toml);
`acbench plot` draws each sweep (sweep-BASE-OPTION-WORKLOAD) and writes its table (.md)."""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from acbench.approaches import APPROACHES
from acbench.figures import save_figure
from acplot.style import approach_styles, legend_above, plot_line, scale_title

_ONE = re.compile(r"^([^{}]+)\{\s*(ac_[a-z0-9_]+)\s*=\s*([^{},]+?)\s*\}$")
GRID = ["workload", "zipf_theta", "mem_ratio"]


def _value(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def sweep_rows(df: pd.DataFrame, cell_settings: dict[str, dict] | None = None) -> pd.DataFrame:
    """The finished rows of one-option variants, with columns base, option, value (a number when
    it reads as one); empty without any. The base approach's own rows join its sweep of an option
    that the base itself sets: they are the sweep's point at that value, unless a variant of the
    same value ran too. The value is the one the cell ran with (cell_settings: run.json's, by
    cell_id), else the one approaches.py gives the base today (logging-buffer's ac_log_hot_fill)."""
    ok = df[df["status"].fillna("ok") == "ok"] if "status" in df.columns else df
    parts = ok["approach"].astype(str).str.extract(_ONE)
    rows = ok[parts[0].notna()].copy()
    if rows.empty:
        return rows
    parts = parts[parts[0].notna()]
    rows["base"], rows["option"] = parts[0], parts[1]
    rows["value"] = [_value(v) for v in parts[2]]
    own = []
    for (base, option), g in rows.groupby(["base", "option"], sort=True):
        a = APPROACHES.get(base)
        today = a.options.get(option) if a is not None else None
        b = ok[ok["approach"] == base].copy()
        if b.empty:
            continue
        # a cell that ran without the option set (the server's default, unknown here) is left out
        ran = [cell_settings[str(c)].get(f"approach.option.{option}") if cell_settings and str(c) in cell_settings
               else today for c in (b["cell_id"] if "cell_id" in b.columns else [None] * len(b))]
        b["value"] = [_value(v) if v is not None else None for v in ran]
        b = b[b["value"].notna() & ~b["value"].isin(set(g["value"]))]
        b["base"], b["option"] = base, option
        own.append(b)
    return pd.concat([rows, *own], ignore_index=True) if own else rows


def sweep_table(df: pd.DataFrame, cell_settings: dict[str, dict] | None = None) -> pd.DataFrame:
    """Per sweep and grid cell: values swept, the best (least mean loss over repetitions), its loss,
    the worst loss and the spread (worst − best, pp)."""
    return _table(sweep_rows(df, cell_settings))


def _table(rows: pd.DataFrame) -> pd.DataFrame:
    """sweep_table of rows sweep_rows made."""
    cols = ["base", "option", *GRID, "values", "best_value", "best_loss_pp", "worst_loss_pp", "spread_pp"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for key, g in rows.groupby(["base", "option", *GRID], sort=True):
        loss = g.groupby("value")["loss_pp"].mean()
        out.append((*key, len(loss), loss.idxmin(), loss.min(), loss.max(), loss.max() - loss.min()))
    return pd.DataFrame(out, columns=cols)


def plot_sweeps(df: pd.DataFrame, outdir: Path, cell_settings: dict[str, dict] | None = None) -> list[Path]:
    """One figure per (base, option, workload): a panel per θ, loss vs OPT against the option's
    value, a line per M/D (mean over repetitions), the best value of each line marked."""
    rows = sweep_rows(df, cell_settings)
    paths: list[Path] = []
    if rows.empty:
        return paths
    for (base, option, wl), g in rows.groupby(["base", "option", "workload"], sort=True):
        thetas = sorted(g["zipf_theta"].unique(), reverse=True)
        fig, axes = plt.subplots(1, len(thetas), figsize=(3.2 * len(thetas), 3.0), squeeze=False, sharey=True)
        labels = [f"M/D {r:g}" for r in sorted(g["mem_ratio"].unique(), reverse=True)]
        styles = approach_styles(labels)
        for ax, theta in zip(axes[0], thetas):
            t = g[g["zipf_theta"] == theta]
            for ratio, label in zip(sorted(t["mem_ratio"].unique(), reverse=True), labels):
                line = t[t["mem_ratio"] == ratio].groupby("value")["loss_pp"].mean().sort_index()
                plot_line(ax, list(line.index), list(line.values), label, styles[label])
                best = line.idxmin()
                ax.scatter([best], [line[best]], s=80, facecolors="none", edgecolors="black", zorder=5)
            ax.set_title(f"θ = {theta:g}", fontsize=9)
            ax.set_xlabel(option)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("loss vs OPT (pp)")
        handles, hl = axes[0][0].get_legend_handles_labels()
        legend_above(fig, handles, hl, title=f"{scale_title(g, wl)}: {base}, {option} swept (circle: best)")
        stem = f"sweep-{base}-{option}-{wl}"
        paths += save_figure(fig, outdir, stem)
        table = _table(g)
        md = outdir / f"{stem}.md"
        md.write_text(_markdown(table) + "\n")
        paths.append(md)
    return paths


def _markdown(t: pd.DataFrame) -> str:
    head = ["workload", "θ", "M/D", "values", "best value", "loss at best (pp)", "worst (pp)", "spread (pp)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in t.itertuples(index=False):
        best = f"{r.best_value:g}" if isinstance(r.best_value, float) else str(r.best_value)
        lines.append(f"| {r.workload} | {r.zipf_theta:g} | {r.mem_ratio:g} | {r.values} | {best} |"
                     f" {r.best_loss_pp:.2f} | {r.worst_loss_pp:.2f} | {r.spread_pp:.2f} |")
    return "\n".join(lines)
