"""One look per approach in every figure: colour and marker by the approach's place in the
harness's order (acplot.cells.approach_order), and a legend above the panels that is never clipped."""
from __future__ import annotations

from typing import Any

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def approach_styles(names: list[str]) -> dict[str, dict[str, str]]:
    """name -> plot keywords (color, marker): ten colours, the marker changes every ten approaches."""
    from acplot.cells import approach_order
    return {a: {"color": f"C{i % 10}", "marker": MARKERS[(i // 10) % len(MARKERS)]}
            for i, a in enumerate(approach_order(names))}


def legend_above(fig: Any, handles: list[Any], labels: list[str], title: str | None = None) -> None:
    """A figure legend just above the axes, as many columns as the width holds (about 1.7 inches
    each); save with bbox_inches="tight" so that it is kept."""
    if not handles:
        return
    ncol = max(1, min(len(labels), int(fig.get_figwidth() / 1.7)))
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol, frameon=False,
               title=title)
