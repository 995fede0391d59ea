"""Notebook 06's Fig. 4 (the blind-spot width W, per model) and Fig. 7 (ImageNet-C fog on the metre axis).

Both are small multiples: Fig. 4 one panel per task and arm with a row per
model, Fig. 7 one panel per model. Re-exported by :mod:`.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...figures import PALETTE, legend_outside
from .blind_spot import AWARE_SIGNALS, SignalCube
from .figures_base import binomial_halfwidth, grid, metre_axis, x_labels
from .tables import cell_index

__all__ = ["SIGNAL_STYLES", "blind_spot_figure", "imagenet_fog_figure"]

#: Fig. 4's colour and marker per awareness signal.
SIGNAL_STYLES = {s: {"color": c, "marker": mk} for s, c, mk in
                 zip(AWARE_SIGNALS, PALETTE[:4], ("o", "D", "s", "^"), strict=True)}
_ARROW = 0.45  # decades an arrow of a bound spans
_SPREAD = 1.06  # Fig. 7: factor in V between neighbouring severities' markers, so that equal V_eq stay apart


def blind_spot_figure(spots: pd.DataFrame, models: Sequence[str] | None = None) -> Figure:
    """Fig. 4: W per model and awareness signal, one panel per (task, arm), with the bootstrap intervals.

    ``spots`` is :func:`~vlmrobust.analysis.visibility.blind_spot.blind_spot_table`.
    A row per model (``models``, default those of ``spots``, top to bottom),
    the four signals a little apart within it (colour and marker, legend
    below); a value (``=``) is a filled marker, a bound (``≥``, ``≤``) a hollow
    one with an arrow the way W may go; the 95 % interval a horizontal line; a
    row whose signals are all ``n/a`` says ``n/a``. Positive W: the signal
    reacts only in murkier air than accuracy.
    """
    if spots.empty:
        raise ValueError("the blind-spot table is empty: nothing to draw")
    models = list(dict.fromkeys(spots.model)) if models is None else list(models)
    have = set(zip(spots.task, spots.arm, strict=True))
    panels = [(t, a) for t in dict.fromkeys(spots.task) for a in dict.fromkeys(spots.arm) if (t, a) in have]
    fig, axes = grid(len(panels), 2, 0.26 * len(models) + 0.55, sharex=True, sharey=True)
    offsets = np.linspace(-0.27, 0.27, len(AWARE_SIGNALS))
    for ax, (task, arm) in zip(axes, panels, strict=True):
        sub = spots[(spots.task == task) & (spots.arm == arm)]
        for y, model in enumerate(models):
            rows = sub[sub.model == model]
            for k, sig in enumerate(AWARE_SIGNALS):
                r = rows[rows.signal == sig]
                if r.empty or r.iloc[0].w_kind == "n/a" or not np.isfinite(r.iloc[0].w):
                    continue
                _w_mark(ax, r.iloc[0], y + offsets[k], SIGNAL_STYLES[sig])
            if rows.empty or (rows.w_kind == "n/a").all():
                ax.text(0.0, y, "n/a", ha="center", va="center", fontsize=6.5, color="0.45")
            if y % 2:
                ax.axhspan(y - 0.5, y + 0.5, color="0.94", lw=0, zorder=0)
        ax.axvline(0, color="black", lw=0.6)
        ax.set_title(f"{task} · {arm}", fontsize=9)
        ax.set_yticks(range(len(models)), models, fontsize=7)
        ax.set_ylim(len(models) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
    x_labels(axes, "W = log10(V_acc / V_aware), decades")
    handles = [Line2D([], [], ls="none", ms=5, label=s, **st) for s, st in SIGNAL_STYLES.items()] + [
        Line2D([], [], ls="none", marker="o", ms=5, color="0.3", label="value (95 % interval)"),
        Line2D([], [], ls="none", marker="o", ms=5, color="0.3", mfc="white", label="bound (arrow: may go further)")]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=7.5)
    fig.tight_layout(h_pad=0.8)
    return fig


def _w_mark(ax, r, y: float, style: dict) -> None:
    """One W: its interval, its marker (hollow for a bound) and, for a bound, an arrow the way it may go."""
    color = style["color"]
    if np.isfinite(r.w_lo) and np.isfinite(r.w_hi):
        ax.plot([r.w_lo, r.w_hi], [y, y], color=color, lw=0.8, alpha=0.8, solid_capstyle="butt", label="_interval")
    bound = r.w_kind in ("≥", "≤")
    ax.plot([r.w], [y], ls="none", ms=3.6, mew=0.9, color=color, marker=style["marker"],
            mfc="white" if bound else color, zorder=3)
    if bound:
        sign = 1 if r.w_kind == "≥" else -1
        ax.annotate("", xy=(r.w + sign * _ARROW, y), xytext=(r.w, y),
                    arrowprops={"arrowstyle": "-|>", "lw": 0.7, "color": color, "mutation_scale": 5,
                                "shrinkA": 2.5, "shrinkB": 0})


def imagenet_fog_figure(table7: pd.DataFrame, summary: pd.DataFrame, cube: SignalCube, means: np.ndarray,
                        models: Sequence[str]) -> Figure:
    """Fig. 7: each model's physical fog curve (t2) with the ImageNet-C severities placed at their median V_eq.

    ``table7`` is :func:`~vlmrobust.analysis.visibility.tables.fog_severity_table`
    (with its ``<m> acc.`` columns), ``summary`` the main
    :func:`~vlmrobust.analysis.visibility.readouts.condition_summary` (for the
    questions per severity). One panel per model, four a row: the fog curve in
    grey, each severity a point in its own colour and marker at its median V_eq with a
    binomial 95 % interval of the accuracy and its V_eq interquartile range as
    a short bar along V; severities at the same V_eq are set a hair apart
    (factor 1.06 per severity about the middle one) so that neither hides the
    other. The x axis spans at least the paper's levels (from 250 m).
    """
    t2 = summary[summary.task == "t2"]
    models = list(models)
    fig, axes = grid(len(models), 4, 1.5)
    sev_style = {int(s): {"color": c, "marker": mk} for s, c, mk in
                 zip(table7.severity, [PALETTE[1], PALETTE[3], PALETTE[4], PALETTE[0], PALETTE[7]], "os^Dv",
                     strict=False)}
    left = max(250.0, 2 * float(np.nanmax(table7.iqr_hi_m)))
    mid = (len(table7) - 1) / 2
    for ax, m in zip(axes, models, strict=True):
        c = cell_index(cube, m, "t2", "fog")
        ax.plot(cube.levels_m, means[c, 0, 1:], "-", marker=".", ms=3, color="0.45", lw=1, label="physical fog")
        for i, (_, r) in enumerate(table7.iterrows()):
            s = int(r.severity)
            acc = float(r[f"{m} acc."])
            n = int(t2[(t2.model == m) & (t2.perturbation == "fog+box") & (t2.level == s)].n_questions.iloc[0])
            shift = _SPREAD ** (i - mid)
            x = r.median_v_m * shift
            ax.errorbar(x, acc, xerr=[[x - r.iqr_lo_m * shift], [r.iqr_hi_m * shift - x]],
                        yerr=float(binomial_halfwidth(acc, n)), ls="none", ms=3.2, lw=0.8, capsize=0,
                        label=f"ImageNet-C s{s}", zorder=3, **sev_style.get(s, {"color": "0.2", "marker": "o"}))
        metre_axis(ax, cube.levels_m, left_m=left, pad=1.3, thirds=True)
        ax.set_ylim(0, 1.04)
        ax.set_title(m, fontsize=8)
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("t2 accuracy", fontsize=7)
    x_labels(axes, "V (m)")
    legend_outside(fig, where="below", ncol=6, fontsize=7)
    fig.tight_layout(h_pad=0.5, w_pad=0.4)
    return fig
