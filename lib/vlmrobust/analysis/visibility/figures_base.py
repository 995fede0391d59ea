"""Shared drawing helpers of notebook 06's figures: the metre axis, the small-multiple grid and binomial intervals.

Nothing here computes a result; :mod:`.figures` and its sibling modules draw with these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

__all__ = ["PAGE_W", "grid", "metre_axis", "binomial_halfwidth", "hide_unused", "x_labels"]

#: Width of a page-wide figure in inches (at savefig dpi 150, about 1110 px).
PAGE_W = 7.4


def grid(n_panels: int, ncols: int, panel_h: float, *, sharex: bool = True, sharey: bool = True,
         width: float = PAGE_W) -> tuple[Figure, np.ndarray]:
    """A page-wide grid of ``n_panels`` small multiples, ``ncols`` a row, each ``panel_h`` inches high.

    Returns the figure and the flat array of its first ``n_panels`` axes; the
    unused cells of the last row are removed.
    """
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, panel_h * nrows + 0.4), sharex=sharex, sharey=sharey,
                             squeeze=False)
    flat = axes.ravel()
    hide_unused(flat[n_panels:])
    return fig, flat[:n_panels]


def hide_unused(axes) -> None:
    """Remove the axes of a grid's empty cells."""
    for ax in axes:
        ax.remove()


def metre_axis(ax, levels_m: Sequence[float], *, clean_x: float | None = None, pad: float = 1.4,
               left_m: float | None = None, thirds: bool = False) -> None:
    """Log visibility axis in metres, murkier to the right, ticks at whole decades (and ``clean`` at ``clean_x``).

    The axis runs from ``left_m`` (default: the clearest level, or ``clean_x``)
    times ``pad`` to the murkiest level over ``pad``; ``thirds`` adds ticks at 3 x 10^k (a short axis).
    """
    levels_m = [float(v) for v in levels_m]
    left = clean_x if clean_x is not None else (left_m if left_m is not None else max(levels_m))
    lo, hi = min(levels_m) / pad, left * pad
    ax.set_xscale("log")
    ax.set_xlim(hi, lo)
    decades = [10.0 ** k for k in range(math.floor(math.log10(lo)) + 1, math.ceil(math.log10(hi)))]
    decades = [d for d in decades if lo <= d <= (hi if clean_x is None else clean_x / 1.8)]
    if thirds:
        decades = sorted(decades + [3 * d for d in [decades[0] / 10, *decades] if lo <= 3 * d <= hi])
    ticks = ([clean_x] if clean_x is not None else []) + decades
    labels = (["clean"] if clean_x is not None else []) + [_metres(d) for d in decades]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(labels)


def _metres(v: float) -> str:
    """A decade as a short label: 1, 10, 100, 1k, 10k."""
    return f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"


def binomial_halfwidth(p, n) -> np.ndarray:
    """Half-width of the normal-approximation 95 % interval of a proportion ``p`` over ``n`` questions."""
    p, n = np.asarray(p, np.float64), np.asarray(n, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.96 * np.sqrt(np.maximum(p * (1 - p), 1e-9) / n)


def x_labels(axes, label: str, fontsize: float = 7) -> None:
    """Label the x axis of each grid panel with no panel under it (the bottom of every column), ticks shown."""
    for ax in axes:
        spec = ax.get_subplotspec()
        below = any(a.get_subplotspec().rowspan.start == spec.rowspan.stop
                    and a.get_subplotspec().colspan.start == spec.colspan.start for a in axes)
        if not below:
            ax.set_xlabel(label, fontsize=fontsize)
            ax.xaxis.set_tick_params(labelbottom=True)
