"""Notebook 07's tables drawn as heatmaps and bars (re-exported by :mod:`.figures`): the directional fragility
heatmap, the failure taxonomy (Figs. 4 and 8) and the weighting ablation's rank correlations. Every heatmap has
its colourbar."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...figures import PALETTE
from .taxonomy import CLASSES

__all__ = ["directional_heatmap", "failure_class_heatmap", "failure_subtypes", "rank_correlation_heatmaps"]


def _need(table, what: str) -> None:
    if len(table) == 0:
        raise ValueError(f"no {what} to draw")


def _annotate(ax, values: np.ndarray, dark_above: float, fmt: str = "{:.2f}", fontsize: float = 6.5) -> None:
    """Write each finite cell's value, white on the dark cells (above ``dark_above``)."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center", fontsize=fontsize,
                        color="w" if values[i, j] > dark_above else "k")


def directional_heatmap(directions: pd.DataFrame, panels: Sequence[str], labels: Sequence[str],
                        models: Sequence[str]) -> Figure:
    """TRCI(r) per model (rows) and direction (columns, ``labels`` order), one panel per ``group`` value of
    ``directions`` named in ``panels`` (:attr:`~vlmrobust.analysis.escalation.indices.TRCIResult.directions`
    rows), one shared colour scale and colourbar; the worst direction of each row is outlined."""
    _need(directions, "direction row")
    vmin, vmax = np.nanmin(directions.T_RCI), np.nanmax(directions.T_RCI)
    fig, axes = plt.subplots(1, len(panels), figsize=(min(7.5, 1.5 * len(panels) + 1.6), 0.3 * len(models) + 1.2),
                             squeeze=False, layout="constrained")
    for ax, g in zip(axes[0], panels, strict=True):
        h = directions[directions.group == g].pivot_table(index="model", columns="direction", values="T_RCI",
                                                          observed=False)
        h = h.reindex(index=models, columns=list(labels)).to_numpy()
        im = ax.imshow(h, cmap="magma_r", vmin=vmin, vmax=vmax, aspect="auto")
        _annotate(ax, h, (vmin + vmax) / 2, fontsize=6)
        for i, row in enumerate(h):
            if np.isfinite(row).any():
                ax.add_patch(plt.Rectangle((np.nanargmax(row) - 0.5, i - 0.5), 1, 1, fill=False, ec="#0072B2",
                                           lw=1.5))
        ax.set_xticks(range(len(labels)), list(labels), fontsize=7)
        ax.set_yticks(range(len(models)), models if g == panels[0] else [""] * len(models), fontsize=7)
        ax.set_title(g, fontsize=8)
        ax.grid(False)
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.85, label="T-RCI(r) (blue box: worst direction)")
    return fig


def failure_class_heatmap(class_counts: pd.DataFrame, models: Sequence[str], n_failures: int) -> Figure:
    """Fig. 4: each model's share of failures per taxonomy class (``class_counts``:
    :func:`~vlmrobust.analysis.escalation.taxonomy.taxonomy_counts` by model; rows in ``models`` order,
    columns in :data:`~vlmrobust.analysis.escalation.taxonomy.CLASSES` order), the shares written in."""
    _need(class_counts, "failure count")
    share = class_counts.pivot_table(index="model", columns="class", values="share", observed=False).reindex(
        index=[m for m in models if m in set(class_counts.model)], columns=list(CLASSES)).fillna(0.0)
    fig, ax = plt.subplots(figsize=(5.2, 0.3 * len(share) + 1.2), layout="constrained")
    im = ax.imshow(share.to_numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    _annotate(ax, share.to_numpy(), 0.6, fontsize=7)
    ax.set_xticks(range(share.shape[1]), share.columns)
    ax.set_yticks(range(share.shape[0]), share.index, fontsize=7)
    ax.grid(False)
    ax.set_title(f"Fig. 4 · traversal failures by class ({n_failures:,})", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.85, label="share of the model's failures")
    return fig


def failure_subtypes(subtype_counts: pd.DataFrame) -> Figure:
    """Fig. 8: horizontal bars of the failures per subtype (``subtype_counts``:
    :func:`~vlmrobust.analysis.escalation.taxonomy.taxonomy_counts` with ``level="subtype"``; zero counts left
    out), coloured by class, the first subtype at the top, the counts written at the bar ends."""
    sub = subtype_counts[subtype_counts.n > 0].iloc[::-1]
    _need(sub, "failure subtype")
    cls_color = dict(zip(CLASSES, PALETTE, strict=False))
    fig, ax = plt.subplots(figsize=(5.6, 0.17 * len(sub) + 0.9), layout="constrained")
    ax.barh(np.arange(len(sub)), sub.n, color=[cls_color[str(c)] for c in sub["class"]])
    ax.set_yticks(np.arange(len(sub)), [str(s) for s in sub.subtype], fontsize=7)
    ax.set_ylim(-0.6, len(sub) - 0.4)
    for i, n in enumerate(sub.n):
        ax.text(n, i, f" {n}", va="center", fontsize=6)
    ax.set_xlim(0, sub.n.max() * 1.1)
    ax.grid(axis="y", visible=False)
    ax.legend(handles=[Line2D([], [], color=cls_color[c], lw=6, label=c) for c in CLASSES
                       if c in set(sub["class"].astype(str))], fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0),
              title="class", title_fontsize=7)
    ax.set(xlabel="failures (all models, directions and states)", title="Fig. 8 · failure subtypes")
    return fig


def rank_correlation_heatmaps(rho_rci: pd.DataFrame, rho_trci: pd.DataFrame) -> Figure:
    """Two heatmaps of Spearman ρ between weighting schemes (RCI_mu and T_mu, from
    :func:`~vlmrobust.analysis.escalation.ablation.rank_correlations`), the values written in, one colourbar;
    the colour scale runs from min(0.5, smallest finite ρ) to 1."""
    _need(rho_rci, "RCI rank correlation")
    _need(rho_trci, "T-RCI rank correlation")
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.2), layout="constrained",
                             gridspec_kw={"width_ratios": [len(rho_rci), len(rho_trci)]})
    rho_all = np.concatenate([rho_rci.to_numpy().ravel(), rho_trci.to_numpy().ravel()])
    rho_lo = min(0.5, float(np.min(rho_all[np.isfinite(rho_all)]))) if np.isfinite(rho_all).any() else 0.5
    for ax, (rho, title) in zip(axes, [(rho_rci, "RCI_mu"), (rho_trci, "T_mu")], strict=True):
        im = ax.imshow(rho.to_numpy(), cmap="viridis", vmin=rho_lo, vmax=1)
        for i in range(len(rho)):
            for j in range(len(rho)):
                v = rho.iloc[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="k" if np.isfinite(v) and v > rho_lo + 0.6 * (1 - rho_lo) else "w")
        ax.set_xticks(range(len(rho)), rho.columns, rotation=35, ha="right", fontsize=7)
        ax.set_yticks(range(len(rho)), rho.index, fontsize=7)
        ax.grid(False)
        ax.set_title(f"weightings ranked by {title}", fontsize=8)
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="Spearman ρ")
    return fig
