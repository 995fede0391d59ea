"""Notebook 06's per-model small multiples: Fig. 5 (reliability), Fig. 6 (abstain) and accuracy against t.

One panel per model (Fig. 5) or two per model side by side (fog and water in
Fig. 6, t2 and t3 against the object's transmittance), wrapped into a page-wide
grid four panels a row, with one legend below. Re-exported by :mod:`.figures`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from ...figures import PALETTE, legend_outside
from .blind_spot import SIGNALS, SignalCube
from .figures_base import binomial_halfwidth, grid, metre_axis, x_labels
from .tables import cell_index

__all__ = ["POOL_COLORS", "reliability_figure", "abstain_figure", "transmittance_figure"]

#: Fig. 5's colour per pool.
POOL_COLORS = {"clean": PALETTE[0], "murky": PALETTE[3]}
#: Fig. 6's style per signal: accuracy solid, the main abstain wording dashed, "I don't know" dotted.
_ABSTAIN_STYLES = [("accuracy", "-", "o"), ("abstain", "--", "s"), ("abstain2", ":", "^")]


def reliability_figure(rel: pd.DataFrame, rel_sum: pd.DataFrame, models: Sequence[str], murky_m: float) -> Figure:
    """Fig. 5: reliability curves of the internal confidence on t2, clean against the pooled murky levels.

    ``rel, rel_sum`` are :func:`~vlmrobust.analysis.visibility.readouts.pooled_reliability`
    (pooled at ``V <= murky_m``). One panel per model, four a row; one curve
    per pool over its non-empty bins, each bin's accuracy with its binomial 95 %
    interval; the pools' ECEs written in their colours above the panel's right
    corner; the diagonal dashed; the pools' legend (with n) below.
    """
    models = list(models)
    fig, axes = grid(len(models), 4, 1.8)
    for ax, m in zip(axes, models, strict=True):
        for j, (pool, color) in enumerate(POOL_COLORS.items()):
            g = rel[(rel.model == m) & (rel.pool == pool) & (rel.n > 0)]
            s = rel_sum[(rel_sum.model == m) & (rel_sum.pool == pool)]
            if g.empty:
                continue
            ns = sorted(set(rel_sum[rel_sum.pool == pool].n.astype(int)))
            half = binomial_halfwidth(g.accuracy, g.n)
            lo, hi = np.clip(g.accuracy - half, 0, 1), np.clip(g.accuracy + half, 0, 1)
            where = f", V <= {murky_m:g} m, fog + water" if pool == "murky" else ""
            ax.errorbar(g.confidence, g.accuracy, yerr=[g.accuracy - lo, hi - g.accuracy], fmt="-o", ms=2.5, lw=1,
                        elinewidth=0.5, color=color, alpha=0.9,
                        label=f"{pool} (n {ns[0]} per model{where})" if len(ns) == 1 else f"{pool}{where}")
            if not s.empty:
                n_txt = "" if len(ns) == 1 else f", n {int(s.n.iloc[0])}"
                ax.text(1.0, 1.02 + 0.12 * (1 - j), f"ECE {float(s.ece.iloc[0]):.2f}{n_txt}",
                        transform=ax.transAxes, fontsize=6.5, color=color, ha="right", va="bottom")
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.7, ls="--")
        ax.set(xlim=(0, 1), ylim=(0, 1.02))
        ax.set_title(m, fontsize=8, loc="left")
    x_labels(axes, "internal confidence")
    for ax in axes:
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("accuracy", fontsize=7)
    legend_outside(fig, where="below", ncol=2, title="each pool's ECE above the panel, in its colour", title_fontsize=7)
    fig.tight_layout(h_pad=0.6)
    return fig


def abstain_figure(cube: SignalCube, means: np.ndarray, models: Sequence[str]) -> Figure:
    """Fig. 6: t2's abstain rate with the main wording (--) and "I don't know" (:), with accuracy (-), against V.

    Two panels per model (one per arm of ``cube``, side by side), four panels a
    row; ``means`` is ``level_means(cube)``; chance dotted; V in metres on a log
    axis, murkier to the right; the signals' legend below.
    """
    arms = list(dict.fromkeys(cube.cells.arm))
    models = list(models)
    fig, axes = grid(len(models) * len(arms), 2 * len(arms), 1.3)
    chance = cube.chance[cube.cells.task.to_numpy() == "t2"][0]
    for i, m in enumerate(models):
        for j, arm in enumerate(arms):
            ax = axes[i * len(arms) + j]
            c = cell_index(cube, m, "t2", arm)
            for k, (sig, ls, mk) in enumerate(_ABSTAIN_STYLES):
                ax.plot(cube.levels_m, means[c, SIGNALS.index(sig), 1:], ls=ls, marker=mk, ms=2, lw=1,
                        color=PALETTE[k], label=sig if sig != "abstain2" else "abstain2 (I don't know)")
            ax.axhline(chance, color="0.5", lw=0.7, ls=":", label="chance (accuracy)")
            metre_axis(ax, cube.levels_m, pad=1.3)
            ax.set_ylim(-0.04, 1.04)
            ax.set_title(f"{m} · {arm}", fontsize=7.5)
            if ax.get_subplotspec().is_first_col():
                ax.set_ylabel("rate", fontsize=7)
    x_labels(axes, "V (m)")
    legend_outside(fig, where="below", ncol=4)
    fig.tight_layout(h_pad=0.5, w_pad=0.4)
    return fig


def transmittance_figure(acc_t: pd.DataFrame, models: Sequence[str], *, min_n: int = 5) -> Figure:
    """Accuracy against the boxed object's transmittance t (log): t2 and t3 side by side per model, chance dotted.

    ``acc_t`` is :func:`~vlmrobust.analysis.visibility.readouts.accuracy_vs_transmittance`;
    in each panel one line per arm (fog solid, water dashed) over the bins with
    at least ``min_n`` questions, with a shaded binomial 95 % band; four panels a row.
    """
    models = list(models)
    tasks = ["t2", "t3"]
    fig, axes = grid(len(models) * len(tasks), 4, 1.3)
    arm_styles = [("fog", "-", "o", PALETTE[0]), ("water", "--", "s", PALETTE[2])]
    for i, m in enumerate(models):
        for j, task in enumerate(tasks):
            ax = axes[i * len(tasks) + j]
            for arm, ls, mk, color in arm_styles:
                g = acc_t[(acc_t.model == m) & (acc_t.task == task) & (acc_t.arm == arm) & (acc_t.n >= min_n)]
                g = g.sort_values("t_mean")
                ax.plot(g.t_mean, g.accuracy, ls=ls, marker=mk, ms=2, lw=1, color=color,
                        label=f"{arm} (band: 95 % interval)")
                half = binomial_halfwidth(g.accuracy, g.n)
                ax.fill_between(g.t_mean, np.clip(g.accuracy - half, 0, 1), np.clip(g.accuracy + half, 0, 1),
                                color=color, alpha=0.1, lw=0)
            ax.axhline(0.25 if task == "t2" else 0.5, color="0.5", lw=0.7, ls=":", label="chance")
            ax.set_xscale("log")
            ax.set_xticks([1e-4, 1e-2, 1], ["1e-4", "0.01", "1"])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set(ylim=(0, 1.02))
            ax.set_title(f"{m} · {task}", fontsize=7.5)
            if ax.get_subplotspec().is_first_col():
                ax.set_ylabel(f"accuracy (n >= {min_n})", fontsize=7)
    x_labels(axes, "object's t (log)")
    legend_outside(fig, where="below", ncol=3)
    fig.tight_layout(h_pad=0.5, w_pad=0.4)
    return fig
