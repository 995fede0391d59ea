"""Figures of notebook 01 on responsiveness, novelty and the split (seed 000, §IV and supplement II).

Each function draws one figure of the notebook from the arrays and small tables
it already computes and returns the :class:`~matplotlib.figure.Figure`; the
notebook saves it with :func:`vlmrobust.figures.save`. The style (palette,
image axes) is :mod:`vlmrobust.figures`'.

* :func:`kappa_and_gini` - κ over the pool (Eq. 2) and the mean G per selector and corruption (Eq. 1);
* :func:`novelty_traversal` - ν when picked along the greedy traversal of A⁺ (Eqs. 4–5);
* :func:`kappa_nu_plane` - A⁺ in the (κ, ν) plane with the cut ``κ + ν = mean e`` (Eq. 6);
* :func:`kappa_pool_vs_split` - Figs. 3(a) / 9(a): κ, and the evaluated models' Gini, on pool and split;
* :func:`category_shift` - Figs. 3(b) / 8: the task families' (and sources') shares of pool and split;
* :func:`kappa_picks`, :func:`kappa_examples` - Fig. 9(b–d): questions at low, medium and high κ;
* :func:`selection_time` - our addition: the time of the selection against the pool size.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ... import corrupt, data
from ...figures import PALETTE, image_axes, legend_outside
from . import figures_findings
from .figures_findings import (  # noqa: F401  (the sentence printed under each figure)
    examples_finding,
    kappa_gini_finding,
    novelty_finding,
    plane_finding,
    pool_split_finding,
    shift_finding,
)
from .selection import Selection

__all__ = ["kappa_and_gini", "novelty_traversal", "kappa_nu_plane", "kappa_pool_vs_split", "category_shift",
           "kappa_picks", "kappa_examples", "selection_time", *figures_findings.__all__]


def kappa_and_gini(kappa: np.ndarray, G: np.ndarray, selectors: Sequence[str],
                   perturbations: Sequence[str]) -> Figure:
    """Left: the histogram of κ over the pool (Eq. 2); right: the mean G over the items per selector (rows) and
    corruption (columns), with a colour bar.

    ``kappa``: ``(items,)``; ``G``: ``(items, selectors, corruptions)`` from
    :func:`~vlmrobust.analysis.selection.gini`, one name per selector and corruption.
    """
    G = np.asarray(G)
    if G.ndim != 3 or G.shape[1:] != (len(selectors), len(perturbations)):
        raise ValueError(f"G must be (items, {len(selectors)} selectors, {len(perturbations)} corruptions), "
                         f"got shape {G.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 2.9), gridspec_kw={"width_ratios": [1, 1.9]}, layout="constrained")
    axes[0].hist(kappa, bins=np.linspace(0, max(kappa.max(), 0.05), 25), color=PALETTE[0])
    axes[0].set(xlabel="κ(q)", ylabel="questions", title="κ over the pool")
    heat = G.mean(axis=0)  # (selectors, corruptions): mean Gini per selector and corruption
    im = axes[1].imshow(heat, aspect="auto", cmap="viridis", vmin=0)
    axes[1].set_yticks(range(len(selectors)), selectors)
    axes[1].set_xticks(range(len(perturbations)), perturbations, rotation=60, ha="right", fontsize=7)
    axes[1].set_title("mean G per selector and corruption")
    axes[1].grid(False)
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.colorbar(im, ax=axes[1], fraction=0.04, label="mean G")
    return fig


def novelty_traversal(sel: Selection) -> Figure:
    """ν of each question of A⁺ at the greedy step it was picked at (``sel.pick``), in the order of the steps.

    An empty A⁺ draws empty axes.
    """
    order = np.argsort(np.where(sel.eligible, sel.pick, np.iinfo(np.int64).max))[: int(sel.eligible.sum())]
    fig, ax = plt.subplots(figsize=(6.0, 2.6), layout="constrained")
    ax.plot(np.arange(len(order)), sel.nu[order], "-", lw=1, color=PALETTE[0])
    ax.set(xlabel="greedy step n", ylabel="ν when picked", title="novelty along the greedy traversal of A⁺")
    ax.title.set_fontsize(9)
    return fig


def kappa_nu_plane(sel: Selection) -> Figure:
    """A⁺ in the (κ, ν) plane: the questions not selected in grey, the split in colour, and (when A⁺ is not
    empty) the cut of Eq. 6, the line ``κ + ν = sel.threshold`` (dashed)."""
    fig, ax = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
    el = sel.eligible
    ax.scatter(sel.kappa[el & ~sel.selected], sel.nu[el & ~sel.selected], s=14, color="0.6",
               label="A⁺, not selected")
    ax.scatter(sel.kappa[sel.selected], sel.nu[sel.selected], s=16, color=PALETTE[3], label="split")
    if el.any():
        xs = np.linspace(0, max(sel.kappa[el].max(), 0.05), 20)
        ax.plot(xs, sel.threshold - xs, "--", color="black", lw=0.9, label="κ + ν = mean e")
    ax.set(xlabel="κ(q)", ylabel="ν(q)", title="responsiveness and novelty of A⁺")
    ax.title.set_fontsize(9)
    legend_outside(ax, where="right", fontsize=7)
    return fig


def kappa_pool_vs_split(kappa: np.ndarray, selected: np.ndarray, eval_gini: np.ndarray | None = None,
                        n_models: int = 0) -> Figure:
    """Figs. 3(a) / 9(a): density histograms of the selectors' κ on the pool and on the split, and, when
    ``eval_gini`` is given, a second panel with the evaluated models' Gini (``n_models`` of them, in its title).

    The split's histogram is left out when the split is empty; legends carry each side's mean.
    """
    kappa, selected = np.asarray(kappa), np.asarray(selected, dtype=bool)
    if kappa.shape != selected.shape:
        raise ValueError(f"kappa {kappa.shape} and selected {selected.shape} must have one entry per item")
    two = eval_gini is not None
    fig, axes = plt.subplots(1, 2 if two else 1, figsize=(7.4 if two else 4.2, 3.1), squeeze=False, sharey=True,
                             layout="constrained")
    bins = np.linspace(0, 1, 21)
    panels = [("selectors' κ", kappa)] + ([(f"evaluated models' Gini ({n_models})", eval_gini)] if two else [])
    for ax, (title, vals) in zip(axes[0], panels, strict=True):
        ax.hist(vals, bins=bins, density=True, color="0.75", label=f"pool (mean {vals.mean():.3f})")
        ax.axvline(vals.mean(), color="0.4", lw=1, ls="--")
        if selected.any():
            ax.hist(vals[selected], bins=bins, density=True, histtype="step", lw=1.6, color=PALETTE[3],
                    label=f"split (mean {vals[selected].mean():.3f})")
            ax.axvline(vals[selected].mean(), color=PALETTE[3], lw=1, ls="--")
        ax.set(xlabel="top-1 Gini", title=title)
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    axes[0, 0].set_ylabel("density (dashed: means)")
    return fig


def _shares_panel(ax, shares: pd.DataFrame, title: str) -> None:
    x = np.arange(len(shares))
    ax.bar(x - 0.2, shares.pool, width=0.4, color="0.6", label="pool")
    ax.bar(x + 0.2, shares.split, width=0.4, color=PALETTE[3], label="split")
    ax.set_xticks(x, shares.index, rotation=40, ha="right")
    ax.set(ylabel="share", title=title)
    ax.title.set_fontsize(9)


def category_shift(tasks: pd.DataFrame, sources: pd.DataFrame | None = None, *,
                   level: str = "task families") -> Figure:
    """Figs. 3(b) / 8: paired bars of each group's share of the pool and of the split, in ``tasks``' row
    order (with a legend), and, when ``sources`` is given, the same for the sources in a second panel (Fig. 8a).

    ``tasks``, ``sources``: :func:`~vlmrobust.analysis.selection.category_shift` (columns ``pool``, ``split``,
    one row per category); ``level`` names the groups in the first panel's title
    (:func:`~vlmrobust.analysis.selection.composition_level`: L2 categories for real benchmarks, Fig. 8(b)).
    """
    several = sources is not None
    fig, axes = plt.subplots(1, 2 if several else 1, figsize=(7.4 if several else 6.0, 3.0), squeeze=False,
                             layout="constrained")
    _shares_panel(axes[0, 0], tasks, f"{level}, pool → split")
    if several:
        _shares_panel(axes[0, 1], sources, "sources, pool → split (Fig. 8a)")
    legend_outside(fig, where="right", fontsize=7)
    return fig


def kappa_picks(sel: Selection) -> list[tuple[str, int]]:
    """The pool positions of the eligible questions at the lowest, the median and the highest κ of A⁺, as
    ``[("low", i), ("medium", j), ("high", k)]`` (stable order among equal κ); empty when A⁺ is empty."""
    pool_el = np.flatnonzero(sel.eligible)
    if not len(pool_el):
        return []
    ranked = pool_el[np.argsort(sel.kappa[pool_el], kind="stable")]
    return [("low", ranked[0]), ("medium", ranked[len(ranked) // 2]), ("high", ranked[-1])]


def kappa_examples(items: pd.DataFrame, picks: Sequence[tuple[str, int]], kappa: np.ndarray, G: np.ndarray,
                   pred: np.ndarray, perturbations: Sequence[str], levels: Sequence[int], *, seed: int) -> Figure:
    """Fig. 9(b–d): one row per pick of :func:`kappa_picks`: the clean image titled with κ, the question and its
    options, then the corruption that moves the **first** selector's answer most (its highest G) at each of
    ``levels``, titled with that selector's answer letter and ✓ / ✗.

    ``items``: the pool (item schema; its images and depth maps are loaded from their refs); ``G``:
    ``(items, selectors, corruptions)``; ``pred``: the answer paths ``(items, selectors, corruptions, levels)``;
    ``seed``: the sweep's, so the panels are the instances it scored.
    """
    if not len(picks):
        raise ValueError("picks is empty (A⁺ holds no question): no example to draw")
    fig, axes = plt.subplots(len(picks), 1 + len(levels), figsize=(min(7.4, 2.2 + 1.05 * len(levels)),
                                                                   1.75 * len(picks)),
                             squeeze=False, gridspec_kw={"width_ratios": [1.6] + [1] * len(levels)})
    for row, (label, i) in enumerate(picks):
        it = items.iloc[i]
        img = data.load_image(it.image_ref)
        d = int(np.argmax(G[i, 0]))
        opts = "  ".join(f"{chr(65 + k)}. {o}" for k, o in enumerate(it.options))
        image_axes(axes[row, 0], f"{label} κ = {kappa[i]:.3f}\n" + textwrap.fill(it.question, 36)
                   + "\n" + textwrap.fill(opts, 40), fontsize=6.5)
        axes[row, 0].imshow(img)
        for c, lv in enumerate(levels, start=1):
            bad = corrupt.apply(img, perturbations[d], lv, seed=seed, key=str(it.item_id),
                                depth=data.load_depth(it.depth_ref) if corrupt.info(perturbations[d]).needs_depth
                                else None)
            ans = int(pred[i, 0, d, c - 1])
            mark = "✓" if ans == it.answer_idx else "✗"
            image_axes(axes[row, c], f"{perturbations[d]}\n{lv}: {chr(65 + ans)} {mark}", fontsize=6)
            axes[row, c].imshow(bad)
    fig.tight_layout()
    return fig


def selection_time(scale: pd.DataFrame) -> Figure:
    """Seconds of the selection (κ, A⁺, ν, split, Table I) against the pool size, log-log (columns ``pool``,
    ``seconds`` of :func:`~vlmrobust.analysis.selection.time_selection` rows). Timings change from run to run:
    the notebook shows this figure and does not save it."""
    if not len(scale):
        raise ValueError("scale holds no pool size to draw")
    fig, ax = plt.subplots(figsize=(4.8, 3.0))
    ax.loglog(scale.pool, scale.seconds, "-o", color=PALETTE[0])
    ax.set(xlabel="pool size", ylabel="seconds (κ, A⁺, ν, split, Table I)", title="selection time vs pool")
    fig.tight_layout()
    return fig
