"""Figures of notebook 04 on the structural diagnosis (seed 000, §V–VII: Figs. 4, 5/11, 6, 7 and 12).

Each function draws one figure of the notebook from the tables it already
computes (the pair table, the per-cell attribution, the trajectory summary) and
returns the :class:`~matplotlib.figure.Figure`; the notebook saves it with
:func:`vlmrobust.figures.save`. The style (palette, ellipses) is
:mod:`vlmrobust.figures`'.

* :func:`regime_distributions` - Fig. 4: clean vs corrupted option distributions, one pair per (ΔS, ΔC) regime;
* :func:`state_component_plane` - Figs. 5 / 11: the (ΔS, ΔC) plane per correctness state (Eq. 12);
* :func:`severity_family_heatmaps` - Fig. 7: R_c and R_w (Eq. 15) by corruption family and severity;
* :func:`trajectory_composition` - Fig. 6: trajectory classes per model with class-conditioned RAS (§VII-D);
* :func:`trajectory_signatures` - Fig. 12: each change class's mean trajectory medians (ΔS̃, ΔC̃) per model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from scipy.ndimage import gaussian_filter

from ... import schema
from ...figures import cov_ellipse, legend_outside, model_styles
from .pairs import STATES
from .tables import REGIME_NAMES, REGIMES
from .trajectories import TRAJECTORY_CLASSES

__all__ = ["STATE_NAMES", "CLASS_COLORS", "CHANGE_CLASSES", "regime_distributions", "state_component_plane",
           "severity_family_heatmaps", "trajectory_composition", "trajectory_signatures"]

#: The reading of each correctness state of Eq. 12 (clean → corrupted), as the panel titles of Fig. 5.
STATE_NAMES = {"cc": "correct → correct", "cw": "correct → wrong", "wc": "wrong → correct",
               "ww": "wrong → wrong"}
#: One colour per trajectory class (Fig. 6), in the order of :data:`~.trajectories.TRAJECTORY_CLASSES`.
CLASS_COLORS = dict(zip(TRAJECTORY_CLASSES, ["#009E73", "#F0E442", "#D55E00", "#999999", "#56B4E9", "#0072B2"],
                        strict=True))
#: The classes whose segments in Fig. 6 are dark enough for white numbers.
_DARK = ("persistent loss", "persistent correction")
#: The four trajectory classes with an answer change (the panels of Fig. 12).
CHANGE_CLASSES = ("transient loss", "persistent loss", "transient correction", "persistent correction")


def regime_distributions(pairs: pd.DataFrame, examples: Mapping[str, int | None], probs: pd.Series) -> Figure:
    """Fig. 4: a 2 × 2 grid, one panel per sign regime: the clean (grey) and corrupted (orange) option
    distributions of its example pair (ground truth marked ✓), with the pair's condition and state on the first
    line under it and its ΔS, ΔC and RAS on the second; "no pair in this regime" when ``examples`` holds
    ``None`` for it. One legend below the panels.

    ``examples``: :func:`~vlmrobust.analysis.ras.regime_examples` (positions in ``pairs``); ``probs``: the
    predictions table's ``probs`` column, indexed by position through the pairs' ``row`` and ``row_clean``.
    """
    fig, axes = plt.subplots(2, 2, figsize=(7.2, 4.9), sharey=True)
    for ax, name in zip(axes.flat, REGIMES[:4], strict=True):
        ax.set_title(REGIME_NAMES[name], fontsize=9)
        if examples[name] is None:
            ax.text(0.5, 0.5, "no pair in this regime", ha="center", transform=ax.transAxes)
            continue
        row = pairs.iloc[examples[name]]
        p0 = np.asarray(probs.iloc[row["row_clean"]], dtype=float)
        p1 = np.asarray(probs.iloc[row["row"]], dtype=float)
        x = np.arange(len(p0))
        ax.bar(x - 0.2, p0, 0.4, label="clean", color="#999999")
        ax.bar(x + 0.2, p1, 0.4, label="corrupted", color="#D55E00")
        ax.set_xticks(x, [("✓" if k == row["answer_idx"] else "") + schema.LETTERS[k] for k in x])
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"{row['perturbation']} s{row['level']} · {row['state']}\n"
                      f"ΔS={row['dS']:+.2f}  ΔC={row['dC']:+.2f}  RAS={row['RAS']:+.2f}", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("probability")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    legend_outside(fig, where="below", ncol=2)
    return fig


def _model_handles(colors: Mapping[str, str], styles: Mapping[str, Mapping]) -> list[Line2D]:
    """Legend handles, one per model: its colour, marker and line style."""
    return [Line2D([], [], color=colors[m], marker=styles[m]["marker"], linestyle=styles[m]["linestyle"], ms=4,
                   label=m) for m in colors]


def state_component_plane(pairs: pd.DataFrame, colors: Mapping[str, str]) -> Figure:
    """Figs. 5 / 11: a 2 × 2 grid, one panel per correctness state: grey contours of the pooled (ΔS, ΔC) density
    (smoothed 2-D histogram, drawn from 10 pairs on), each model's 50 % Gaussian ellipse and mean (colour
    ``colors[model]``, line style and marker of :func:`vlmrobust.figures.model_styles` in the order of
    ``colors``), and a box with the state's mean RAS ("empty" for a state without pairs). One legend of the
    models right of the panels.
    """
    styles = model_styles(list(colors))
    fig, axes = plt.subplots(2, 2, figsize=(6.2, 5.6), sharex=True, sharey=True)
    edges = np.linspace(-1, 1, 81)
    for ax, st in zip(axes.flat, STATES, strict=True):
        sub = pairs[pairs["state"] == st]
        ax.axhline(0, color="k", lw=0.5)
        ax.axvline(0, color="k", lw=0.5)
        ax.set_title(f"{st}: {STATE_NAMES[st]}  (n={len(sub):,})", fontsize=9)
        if len(sub) >= 10:
            h, _, _ = np.histogram2d(sub["dS"], sub["dC"], bins=[edges, edges])
            h = gaussian_filter(h, 1.5)
            centers = 0.5 * (edges[1:] + edges[:-1])
            if h.max() > 0:
                ax.contour(centers, centers, h.T / h.max(), levels=[0.05, 0.2, 0.5, 0.8], colors="0.55",
                           linewidths=0.7)
        for m, g in sub.groupby("model", observed=True):
            xy = g[["dS", "dC"]].to_numpy()
            if cov_ellipse(ax, xy, 0.5, color=colors[m], lw=1.3, ls=styles[m]["linestyle"]) is not None:
                ax.plot(*xy.mean(axis=0), styles[m]["marker"], color=colors[m], ms=4, mec="white", mew=0.5)
        ax.text(0.03, 0.97, f"mean RAS {sub['RAS'].mean():+.3f}" if len(sub) else "empty",
                transform=ax.transAxes, va="top", fontsize=8, bbox=dict(boxstyle="round", fc="white", ec="0.7"))
    for ax in axes[1]:
        ax.set_xlabel("ΔS (flatter →)")
    for ax in axes[:, 0]:
        ax.set_ylabel("ΔC (worse alignment ↑)")
    axes[0, 0].set_xlim(-1, 1)
    axes[0, 0].set_ylim(-1, 1)
    fig.tight_layout()
    fig.legend(handles=_model_handles(colors, styles), loc="center left", bbox_to_anchor=(1.0, 0.5),
               title="model (50 % ellipse, mean)", title_fontsize=7)
    return fig


def severity_family_heatmaps(cells: pd.DataFrame, families: Sequence[str]) -> Figure:
    """Fig. 7: for R_c and R_w, a family × severity heatmap of the mean over the cells (models and the family's
    corruptions; symmetric colour scale per panel, values written in), and below it, per severity, the median
    and interquartile range over the cells (one legend below the figure).

    ``cells``: :func:`~vlmrobust.analysis.ras.state_effects` with a ``family`` column; ``families``: the rows,
    in order.
    """
    fams = list(families)
    fig = plt.figure(figsize=(7.4, 0.42 * max(len(fams), 1) + 2.9))
    gs = fig.add_gridspec(2, 2, height_ratios=[max(len(fams), 1), 2.6], hspace=0.45, wspace=0.55)
    for j, (col, name) in enumerate([("R_c", "clean-correct source $R_c$"), ("R_w", "clean-wrong source $R_w$")]):
        ax = fig.add_subplot(gs[0, j])
        grid = cells.pivot_table(index="family", columns="level", values=col, aggfunc="mean").reindex(fams)
        lim = max(0.01, float(np.nanmax(np.abs(grid.to_numpy())))) if grid.size else 1.0  # symmetric per panel
        im = ax.imshow(grid.to_numpy(), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_xticks(range(len(grid.columns)), [f"s{v}" for v in grid.columns])
        ax.set_yticks(range(len(fams)), fams)
        ax.grid(False)
        for (r, c), v in np.ndenumerate(grid.to_numpy()):
            if np.isfinite(v):
                ax.text(c, r, f"{v:+.3f}", ha="center", va="center", fontsize=6,
                        color="white" if abs(v) > 0.6 * lim else "black")
        ax.set_title(name, fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.05, label=f"mean {col}")
        ins = fig.add_subplot(gs[1, j])
        q = cells.groupby("level")[col].quantile([0.25, 0.5, 0.75]).unstack()
        ins.fill_between(q.index, q[0.25], q[0.75], color="#56B4E9", alpha=0.4, label="IQR")
        ins.plot(q.index, q[0.5], "o-", color="#0072B2", ms=3, label="median")
        ins.axhline(0, color="k", lw=0.5)
        ins.set_xticks(list(q.index))
        ins.set_xlabel("severity")
        ins.set_ylabel(col)
    fig.legend(*ins.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
               title="over model × corruption cells", title_fontsize=7)
    return fig


def trajectory_composition(tsum: pd.DataFrame) -> Figure:
    """Fig. 6: one stacked bar per model (ordered by mean trajectory RAS, the best at the top), split into the
    six trajectory classes by share, with the class RAS written in segments wider than 0.06, and each model's
    mean trajectory RAS in its tick label.

    ``tsum``: :func:`~vlmrobust.analysis.ras.trajectory_summary` per model (one row per model and class).
    """
    order = tsum.groupby("model", observed=True)["unit_RAS"].first().sort_values().index.tolist()
    fig, ax = plt.subplots(figsize=(7.2, 0.42 * len(order) + 1.5))
    for y, m in enumerate(order):
        left = 0.0
        for k in TRAJECTORY_CLASSES:
            r = tsum[(tsum["model"] == m) & (tsum["klass"] == k)].iloc[0]
            ax.barh(y, r["share"], left=left, color=CLASS_COLORS[k], edgecolor="white",
                    label=k if y == 0 else None)
            if r["share"] > 0.06:
                ax.text(left + r["share"] / 2, y, f"{r['RAS']:+.2f}", ha="center", va="center", fontsize=6.5,
                        color="white" if k in _DARK else "black")
            left += r["share"]
    ax.set_yticks(range(len(order)),
                  [f"{m}  ({tsum[tsum['model'] == m]['unit_RAS'].iloc[0]:+.3f})" for m in order])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of trajectories")
    ax.grid(False)
    ax.set_title("trajectory classes per model (numbers: class RAS)", fontsize=9)
    fig.tight_layout()
    legend_outside(fig, where="below", ncol=3)
    return fig


def trajectory_signatures(tsum: pd.DataFrame, colors: Mapping[str, str]) -> Figure:
    """Fig. 12: a 2 × 2 grid, one panel per change class (:data:`CHANGE_CLASSES`): each model's mean trajectory
    medians (ΔS̃, ΔC̃), marker size ``20 + 1000 × share``, fill the class RAS (shared symmetric scale, one colour
    bar below), edge ``colors[model]`` and marker shape of :func:`vlmrobust.figures.model_styles` (one scatter per
    model, in the order of ``colors``), and one legend of the models right of the panels; the classes without
    trajectories are left out.

    ``tsum``: :func:`~vlmrobust.analysis.ras.trajectory_summary` per model.
    """
    styles = model_styles(list(colors))
    fig, axes = plt.subplots(2, 2, figsize=(7.2, 6.4), sharex=True, sharey=True, layout="constrained")
    sub = tsum[tsum["klass"].isin(CHANGE_CLASSES) & (tsum["n"] > 0)]
    span = max(0.05, float(np.nanmax(np.abs(sub[["dS_med", "dC_med"]].to_numpy()))) * 1.25) if len(sub) else 1.0
    vmax = max(0.05, float(np.nanmax(np.abs(sub["RAS"]))) if len(sub) else 1.0)
    norm = plt.Normalize(-vmax, vmax)
    for ax, k in zip(axes.flat, CHANGE_CLASSES, strict=True):
        g = sub[sub["klass"] == k]
        ax.axhline(0, color="k", lw=0.5)
        ax.axvline(0, color="k", lw=0.5)
        for m in colors:
            r = g[g["model"] == m]
            ax.scatter(r["dS_med"], r["dC_med"], s=20 + 1000 * r["share"], c=r["RAS"], cmap="RdBu", norm=norm,
                       marker=styles[m]["marker"], edgecolors=colors[m], linewidths=1.5, alpha=0.9)
        ax.set_title(k, fontsize=9)
    for ax in axes[1]:
        ax.set_xlabel("mean ΔS̃")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean ΔC̃")
    axes[0, 0].set_xlim(-span, span)
    axes[0, 0].set_ylim(-span, span)
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="RdBu"), ax=axes, orientation="horizontal", fraction=0.04,
                 shrink=0.6, label="class RAS (marker area: share of the model's trajectories)")
    handles = [Line2D([], [], ls="", marker=styles[m]["marker"], mec=colors[m], mfc="white", mew=1.5, ms=6, label=m)
               for m in colors]
    fig.legend(handles=handles, loc="outside right center", title="model", title_fontsize=7)
    return fig
