"""The figures of notebook 07 (seed 001, BRUCE): Figs. 3, 4, 5, 6, 7 and 8, the fill figures and the heatmaps.

Every function takes the small tables the notebook already computes (Table I, the fragility curves and
regimes, the taxonomy counts, the rank correlations, ...) and returns the matplotlib Figure; the notebook
saves it with :func:`vlmrobust.figures.save`. The style, the model colours and the image axes come from
:mod:`vlmrobust.figures`. Each function documents what it needs; an empty input raises ``ValueError``.

* :func:`ladder_rungs` — one image at every rung of the ladders under their readings (§III);
* :func:`table_i_fit` — the paper's Table I against its bound RCI_mu >= c (1 - A_CR), and the run's units;
* :func:`fill_examples` — one scene under each traversal fill and the sky-only control (§II-D2; the fill is
  left open by the paper);
* :func:`sky_control_cost` — what the fill costs when the band removes only sky;
* :func:`pareto_maps` — Fig. 3, accuracy against RCI_mu and T_mu with the Pareto frontier (§IV-A);
* :func:`accuracy_vs_share` — Fig. 5, accuracy against the share removed, per direction, with the share of
  items whose evidence the band removed;
* :func:`fragility_panels` — Fig. 6, the fragility curves with their regimes (§IV-C, S1, S3);
* :func:`directional_heatmap` — TRCI(r) per model and direction, the worst direction outlined (§II-F);
* :func:`failure_class_heatmap` and :func:`failure_subtypes` — Figs. 4 and 8, the failure taxonomy (§II-H,
  §VII);
* :func:`rank_correlation_heatmaps` — the weighting ablation's Spearman ρ (§II-F);
* :func:`latent_instability_examples` — Fig. 7, the correct option losing probability before the flip (§VI).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ... import corrupt
from ...corrupt import escalation as esc
from ...figures import PALETTE, image_axes, model_styles, panel_grid
from . import figures_findings
from .figures_findings import (  # noqa: F401  (the sentence printed under each figure)
    accuracy_share_finding,
    directional_finding,
    failure_class_finding,
    failure_subtypes_finding,
    fills_finding,
    fragility_finding,
    latent_finding,
    pareto_finding,
    rank_correlation_finding,
    rungs_finding,
    sky_cost_finding,
    table_i_finding,
)
from .figures_heatmaps import directional_heatmap, failure_class_heatmap, failure_subtypes, rank_correlation_heatmaps
from .indices import pareto_front

__all__ = ["REGIME_MARKERS", "ladder_rungs", "table_i_fit", "fill_examples", "sky_control_cost", "pareto_maps",
           "accuracy_vs_share", "fragility_panels", "directional_heatmap", "failure_class_heatmap", "failure_subtypes",
           "rank_correlation_heatmaps", "latent_instability_examples", *figures_findings.__all__]

#: Marker at the end of a fragility curve, per regime (Fig. 6).
REGIME_MARKERS = {"stable": "o", "progressive": "s", "severe": "X", "undefined": "."}
_REGIME_ABBR = {"stable": "st", "progressive": "pr", "severe": "sv"}  # the regime counts in a panel's title


def _need(table, what: str) -> None:
    if len(table) == 0:
        raise ValueError(f"no {what} to draw")


def fill_examples(image: np.ndarray, depth: np.ndarray | None, fills: Sequence[str], title: str,
                  mean_rgb: Sequence[int] = esc.SYNTH_MEAN_RGB) -> Figure:
    """One row per fill of ``fills``: the clean image, the sky-only control at 100 % (only with a ``depth``
    map) and the top-down, bottom-up and left-right traversals at share 0.4; the first column is labelled
    with the fill. The ``"mean"`` fill paints ``mean_rgb`` (the items' mean colour)."""
    _need(fills, "fill")
    cols = [("clean", None, 0)] + ([("sky band 100 %", "sky", 4)] if depth is not None else []) + [
        (f"{d} 0.4", d, 2) for d in ("topdown", "bottomup", "leftright")]
    side = min(1.45, 7.4 / len(cols))
    fig, axes = plt.subplots(len(fills), len(cols), figsize=(side * len(cols), (side + 0.1) * len(fills) + 0.3),
                             squeeze=False, layout="constrained")
    for r, f in enumerate(fills):
        for c, (col_title, what, lv) in enumerate(cols):
            opts = {"rgb": tuple(mean_rgb)} if f == "mean" else {}
            if what is None:
                im = image
            elif what == "sky":
                im = corrupt.apply(image, esc.control_name(f), lv, depth=depth, **opts)
            else:
                im = corrupt.apply(image, esc.traversal_name(what, f), lv, **opts)
            axes[r, c].imshow(im)
            image_axes(axes[r, c], col_title if r == 0 else None)
        axes[r, 0].set_ylabel(f, fontsize=8)
    fig.suptitle(title, fontsize=8)
    return fig


def ladder_rungs(image: np.ndarray, rows: Mapping[str, Sequence[tuple[str, np.ndarray]]], title: str) -> Figure:
    """One row per ladder of ``rows`` (label -> ``[(rung label, image), ...]``), the clean ``image`` first."""
    _need(rows, "ladder")
    ncol = 1 + max(len(v) for v in rows.values())
    side = min(1.45, 7.4 / ncol)
    fig, axes = plt.subplots(len(rows), ncol, figsize=(side * ncol, (side + 0.15) * len(rows) + 0.3), squeeze=False,
                             layout="constrained")
    for r, (label, rungs) in enumerate(rows.items()):
        for c, (t, im) in enumerate([("clean", image), *rungs]):
            axes[r, c].imshow(im)
            image_axes(axes[r, c], t)
        for c in range(1 + len(rungs), ncol):
            axes[r, c].axis("off")
        axes[r, 0].set_ylabel(label, fontsize=7)
    fig.suptitle(title, fontsize=8)
    return fig


def table_i_fit(paper: pd.DataFrame, c: float, run: pd.DataFrame | None = None) -> Figure:
    """RCI_mu against 1 − A_CR: the paper's 19 rows (``paper``: :data:`~.paper_table.PAPER_TABLE_I`, in %),
    the bound line c (1 − A_CR), and (``run``: columns ``reading``, ``A_CR`` as a share, ``RCI_mu``) the
    run's units under each reading of D_fail."""
    _need(paper, "paper row")
    fig, ax = plt.subplots(figsize=(6.6, 3.4), layout="constrained")
    err = 1 - paper["A_CR"] / 100
    ax.scatter(err, paper["RCI_mu"], s=22, color="k", label="seed 001 Table I (19 rows)", zorder=3)
    if run is not None and len(run):
        for i, (reading, g) in enumerate(run.groupby("reading", sort=False)):
            ax.scatter(1 - g["A_CR"], g["RCI_mu"], s=12, marker="os^"[i % 3], color=PALETTE[(i + 1) % len(PALETTE)],
                       label=f"this run, D_fail {reading}", alpha=0.8)
    x = np.linspace(0, 1, 2)
    ax.plot(x, c * x, color="#D55E00", lw=1, label=f"bound RCI_mu = {c:.3f} (1 − A_CR)")
    ax.set(xlabel="1 − A_CR (corrupted error rate)", ylabel="RCI_mu", title="Table I: RCI_mu and its lower bound")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def sky_control_cost(fill_table: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Bars of clean minus sky-control accuracy per model, one group per ``sky band`` row of ``fill_table``
    (:func:`~vlmrobust.analysis.escalation.fragility.fill_comparison`, which holds the ``clean`` row)."""
    ctrl = fill_table[fill_table.condition.str.startswith("sky band")]
    _need(ctrl, "sky-band row in the fill table")
    clean_acc = fill_table.loc[fill_table.condition == "clean", list(models)].iloc[0]
    fig, ax = plt.subplots(figsize=(7.2, 2.8), layout="constrained")
    x = np.arange(len(ctrl))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax.bar(x + (i - (len(models) - 1) / 2) * w, clean_acc[m] - ctrl[m], w, color=colors[m], label=m)
    ax.set_xticks(x, [f"{f}\n{c}" for f, c in zip(ctrl.fill, ctrl.condition, strict=True)], fontsize=7)
    ax.set(ylabel="clean − control accuracy", title="the fill's cost where it removes only sky")
    ax.axhline(0, color="k", lw=0.6)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def pareto_maps(table1: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 3: two panels, ``A_CR`` (%) against ``RCI_mu`` and ``A_T`` (%) against ``T_mu``, one point per row
    of Table I (colour: model, marker: group), the Pareto frontier outlined and joined by a dashed step."""
    _need(table1, "Table I row")
    markers = dict(zip(sorted(table1.group.unique()), "osD^vP*Xh", strict=False))
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 3.0), layout="constrained")
    for ax, (acc, idx, title) in zip(axes, [("A_CR", "RCI_mu", "corruption (ladders)"),
                                            ("A_T", "T_mu", "traversal")], strict=True):
        t = table1.dropna(subset=[acc, idx])
        front = pareto_front(t[acc], t[idx])
        for (m, g), r in t.set_index(["model", "group"]).iterrows():
            ax.scatter(100 * r[acc], r[idx], color=colors[m], marker=markers[g], s=30, alpha=0.9, lw=0)
        f = t[front].sort_values(acc)
        ax.scatter(100 * f[acc], f[idx], facecolors="none", edgecolors="k", s=90, lw=1.1)
        ax.step(100 * f[acc], f[idx], where="pre", color="k", lw=0.8, ls="--")  # the edge of the dominated region
        ax.set(xlabel=f"{acc} (%)", ylabel=idx.replace("_mu", " μ"), title=title)
        ax.title.set_fontsize(9)
    handles = [Line2D([], [], color=colors[m], marker="o", ls="", label=m) for m in models]
    handles += [Line2D([], [], color="0.4", marker=mk, ls="", label=g) for g, mk in markers.items()]
    handles += [Line2D([], [], color="k", ls="--", marker="o", mfc="none", label="Pareto frontier")]
    fig.legend(handles=handles, loc="outside right center", fontsize=7)
    return fig


def accuracy_vs_share(curves: pd.DataFrame, evidence_share: pd.Series, traversals: Mapping[str, str],
                      shares: Mapping[int, float], models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 5: one panel per direction of ``traversals`` (label -> perturbation; two to a row), each model's
    accuracy (``curves``: :func:`~vlmrobust.analysis.escalation.fragility.fragility_curves` per model) against the
    share removed (``shares``: level -> share, in level order), and in grey on the same 0-1 axis
    ``evidence_share`` (:func:`~vlmrobust.analysis.escalation.fragility.evidence_lost_share`) where it covers the
    direction. Models are told apart by :func:`vlmrobust.figures.model_styles` (colour, marker, dashes)."""
    _need(traversals, "traversal")
    levels = list(shares)
    styles = {m: {**st, "color": colors.get(m, st["color"])} for m, st in model_styles(models).items()}
    ncol = min(2, len(traversals))
    nrow = int(np.ceil(len(traversals) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.8, 2.2 * nrow + 0.2), sharex=True, sharey=True, squeeze=False,
                             layout="constrained")
    for ax, (d, name) in zip(axes.flat, traversals.items(), strict=False):
        if (name, levels[0]) in evidence_share.index:
            ax.fill_between([0.0, *[shares[lv] for lv in levels]],
                            [0.0, *[evidence_share.get((name, lv), np.nan) for lv in levels]], color="0.88", lw=0,
                            label="items with evidence removed or cut")
        for m in models:
            c = curves[(curves.model == m) & (curves.perturbation == name)]
            ax.plot([0.0, *[shares[lv] for lv in c.level[1:]]], c.accuracy, ms=3.5, lw=1.2, label=m, **styles[m])
        ax.set(title=f"{d} · {name.split('_')[1] if name.startswith('traverse_') else name}", ylim=(0, 1.02),
               xticks=[0, 0.2, 0.4, 0.6, 0.8])
        ax.title.set_fontsize(8)
    for ax in axes.flat[len(traversals):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("share removed s")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy / share")
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="outside right center", fontsize=7)
    return fig


def fragility_panels(curves: pd.DataFrame, regimes: pd.DataFrame, perturbations: Sequence[str],
                     levels: Sequence[int], models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 6: one panel per perturbation (four per row), each model's fragility curve (dashed when
    non-monotone) ending in its regime's marker (:data:`REGIME_MARKERS`), the panel's regime counts in its title.
    ``curves`` and ``regimes`` are per model (:func:`~vlmrobust.analysis.escalation.fragility.curve_regimes`)."""
    _need(perturbations, "perturbation")
    ncol = 4
    nrow = int(np.ceil(len(perturbations) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.4, 2.0 * nrow + 0.6), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, p in zip(axes.flat, perturbations, strict=False):
        for m in models:
            c = curves[(curves.model == m) & (curves.perturbation == p)]
            rg = regimes[(regimes.model == m) & (regimes.perturbation == p)].iloc[0]
            ax.plot(c.level, c.accuracy, "--" if rg.non_monotone else "-", color=colors[m], lw=1.1)
            ax.plot(c.level.iloc[-1], c.accuracy.iloc[-1], REGIME_MARKERS[str(rg.regime)], color=colors[m], ms=5,
                    mec="white", mew=0.4)
        rp = regimes[regimes.perturbation == p]
        counts = rp.regime.astype(str).value_counts()
        name = p.removeprefix("bruce_").removeprefix("traverse_").removesuffix("_mean")
        ax.set_title(f"{name}\n" + " · ".join(f"{ab} {counts.get(k, 0)}" for k, ab in _REGIME_ABBR.items())
                     + f" · nm {int(rp.non_monotone.sum())}", fontsize=7)
        ax.set(xlabel="level", ylim=(0, 1.02), xticks=[0, *levels])
    for ax in axes.flat[len(perturbations):]:
        ax.axis("off")
    for r in range(nrow):
        axes[r, 0].set_ylabel("accuracy")
    handles = [Line2D([], [], color=colors[m], label=m) for m in models]
    handles += [Line2D([], [], color="0.3", marker=REGIME_MARKERS[k], ls="", label=f"{k} ({ab})")
                for k, ab in _REGIME_ABBR.items()]
    handles += [Line2D([], [], color="0.3", ls="--", label="non-monotone (nm)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(6, len(handles)), fontsize=7)
    return fig


def latent_instability_examples(latent: pd.DataFrame, examples: pd.DataFrame, traversals: Mapping[str, str],
                                shares: Mapping[int, float], colors: Mapping[str, str]) -> Figure:
    """Fig. 7: one panel per row of ``examples``
    (:func:`~vlmrobust.analysis.escalation.fragility.warning_examples`, three per row): the item's
    p(correct) and margin against the share removed (``latent``:
    :func:`~vlmrobust.analysis.escalation.fragility.latent_instability`), the warning and the flip marked.
    ``traversals`` maps direction labels to perturbations, ``shares`` levels to the share removed."""
    _need(examples, "example")
    fig, axes = panel_grid(len(examples), 3, 2.1, pad_h=0.6, sharey=True)
    for ax, w in zip(axes.flat, examples.itertuples(), strict=False):
        tr = latent[(latent.model == w.model) & (latent.item_id == w.item_id)
                    & latent.perturbation.isin(["clean", w.perturbation])].sort_values("level")
        s = [0.0 if lv == 0 else shares[lv] for lv in tr.level]
        ax.plot(s, tr.p_correct, "-o", ms=3, color=colors[w.model], label="p(correct)")
        ax.plot(s, tr.margin, ":", color="0.4", label="margin")
        ax.axhline(0, color="k", lw=0.5)
        ax.axvline(shares[int(w.warn_level)], color="#E69F00", lw=1, label="warning")
        ax.axvline(shares[int(w.flip_level)], color="#D55E00", lw=1, ls="--", label="flip")
        d = {v: k for k, v in traversals.items()}[w.perturbation]
        ax.set(title=f"{w.model}\n{w.item_id.split('-', 2)[-1]} · {d}", xlabel="share removed", ylim=(-1.05, 1.05))
        ax.title.set_fontsize(7)
    for r in range(axes.shape[0]):
        axes[r, 0].set_ylabel("probability")
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend([Line2D([], [], color="0.3", marker="o", ms=3), *h[1:]], lab, loc="outside lower center", ncols=4,
               fontsize=7)
    return fig
