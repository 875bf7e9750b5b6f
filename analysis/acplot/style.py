"""One look per approach in a figure, readable in colour, in grayscale and by the colour-blind:
a colour from Paul Tol's colour-blind-safe "muted" scheme (and black), a marker and a line style,
given in the harness's order of the figure's approaches (acbench.approaches), so figures of the
same approaches look alike and the approaches of one figure differ in colour and marker (up to
13 of them) and in line style from their neighbours.
A line with a single point is drawn as its marker alone. Legends go above the panels in rows of
equal length (never one entry alone on a row); titles say the workload and the scale.

Nothing here chooses a matplotlib backend: the caller's (a notebook's inline one, or Agg where
there is no display) is kept."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

# Paul Tol, "muted" qualitative scheme (personal.sron.nl/~pault), colour-blind safe, + black, a
# mid grey (an eleventh approach: told apart from black by its marker and line style in grayscale)
# and the orange and red of his "vibrant" scheme (a twelfth and a thirteenth)
PALETTE = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
           "#AA4499", "#000000", "#777777", "#EE7733", "#CC3311")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p", "d")
LINESTYLES = ("-", "--", "-.", ":")
LEGEND_ENTRY_INCHES = 1.7


def approach_styles(names: list[str]) -> dict[str, dict[str, str]]:
    """name -> plot keywords (color, marker, linestyle), by the name's place among `names` in the
    harness's order (acplot.cells.approach_order)."""
    from acplot.cells import approach_order
    return {a: {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)],
                "linestyle": LINESTYLES[i % len(LINESTYLES)]} for i, a in enumerate(approach_order(names))}


def plot_line(ax: Any, x: Any, y: Any, label: str, style: dict[str, str]) -> None:
    """One approach's line; a single point is its marker alone (no one-dot "line")."""
    kw = dict(style)
    if len(x) < 2:
        kw["linestyle"] = "none"
    ax.plot(x, y, label=label, markersize=5, **kw)


def legend_layout(n: int, fig_width_in: float) -> int:
    """Columns for n legend entries: as many as the width holds, then balanced so that every row but
    the last is full and the last has at least half as many (n = 9 where 7 fit: 5 + 4, not 7 + 2)."""
    fit = max(1, int(fig_width_in / LEGEND_ENTRY_INCHES))
    rows = math.ceil(n / fit)
    return max(1, math.ceil(n / rows))


def legend_above(fig: Any, handles: list[Any], labels: list[str], title: str | None = None) -> None:
    """A figure legend just above the axes in balanced rows; save with bbox_inches="tight" so that
    it is kept."""
    if not handles:
        return
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0),
               ncol=legend_layout(len(labels), fig.get_figwidth()), frameon=False, title=title)


def save_panels(fig: Any, axes: Any, path: Any) -> list[Any]:
    """A row of panels finished: the first panel's entries as the legend above them (legend_above),
    saved to path at 120 dpi with the legend kept, the figure closed. Returns [path]."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend_above(fig, handles, labels)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [path]


def scale_title(df: pd.DataFrame, workload: str | None = None) -> str:
    """"workload readonly, 20,000 records of 1,000 B" from the rows' YCSB properties (what the rows
    lack is left out; several values are listed)."""
    def ints(values: Any) -> str:
        return " / ".join(f"{v:,}" for v in sorted({int(x) for x in values}))

    num = {c: pd.to_numeric(df[c], errors="coerce") for c in ("p_recordcount", "p_fieldcount", "p_fieldlength")
           if c in df.columns}
    recs = ints(num["p_recordcount"].dropna()) if "p_recordcount" in num else ""
    sizes = ""
    if "p_fieldcount" in num and "p_fieldlength" in num:
        sizes = ints((num["p_fieldcount"] * num["p_fieldlength"]).dropna())
    parts = [f"workload {workload}"] if workload else []
    if recs and sizes:
        parts.append(f"{recs} records of {sizes} B")
    elif recs or sizes:
        parts.append(f"{recs} records" if recs else f"values of {sizes} B")
    return ", ".join(parts)
