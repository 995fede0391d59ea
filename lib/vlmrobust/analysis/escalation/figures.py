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
from ...figures import PALETTE, image_axes
from .indices import pareto_front
from .taxonomy import CLASSES

__all__ = ["REGIME_MARKERS", "ladder_rungs", "table_i_fit", "fill_examples", "sky_control_cost", "pareto_maps",
           "accuracy_vs_share", "fragility_panels", "directional_heatmap", "failure_class_heatmap", "failure_subtypes",
           "rank_correlation_heatmaps", "latent_instability_examples"]

#: Marker at the end of a fragility curve, per regime (Fig. 6).
REGIME_MARKERS = {"stable": "o", "progressive": "s", "severe": "X", "undefined": "."}


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
    fig, axes = plt.subplots(len(fills), len(cols), figsize=(1.7 * len(cols), 1.85 * len(fills)), squeeze=False)
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
        axes[r, 0].set_ylabel(f, fontsize=9)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def ladder_rungs(image: np.ndarray, rows: Mapping[str, Sequence[tuple[str, np.ndarray]]], title: str) -> Figure:
    """One row per ladder of ``rows`` (label -> ``[(rung label, image), ...]``), the clean ``image`` first."""
    _need(rows, "ladder")
    ncol = 1 + max(len(v) for v in rows.values())
    fig, axes = plt.subplots(len(rows), ncol, figsize=(1.6 * ncol, 1.75 * len(rows)), squeeze=False)
    for r, (label, rungs) in enumerate(rows.items()):
        for c, (t, im) in enumerate([("clean", image), *rungs]):
            axes[r, c].imshow(im)
            image_axes(axes[r, c], t)
        for c in range(1 + len(rungs), ncol):
            axes[r, c].axis("off")
        axes[r, 0].set_ylabel(label, fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def table_i_fit(paper: pd.DataFrame, c: float, run: pd.DataFrame | None = None) -> Figure:
    """RCI_mu against 1 − A_CR: the paper's 19 rows (``paper``: :data:`~.paper_table.PAPER_TABLE_I`, in %),
    the bound line c (1 − A_CR), and (``run``: columns ``reading``, ``A_CR`` as a share, ``RCI_mu``) the
    run's units under each reading of D_fail."""
    _need(paper, "paper row")
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
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
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def sky_control_cost(fill_table: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Bars of clean minus sky-control accuracy per model, one group per ``sky band`` row of ``fill_table``
    (:func:`~vlmrobust.analysis.escalation.fragility.fill_comparison`, which holds the ``clean`` row)."""
    ctrl = fill_table[fill_table.condition.str.startswith("sky band")]
    _need(ctrl, "sky-band row in the fill table")
    clean_acc = fill_table.loc[fill_table.condition == "clean", list(models)].iloc[0]
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    x = np.arange(len(ctrl))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax.bar(x + (i - (len(models) - 1) / 2) * w, clean_acc[m] - ctrl[m], w, color=colors[m], label=m)
    ax.set_xticks(x, [f"{f}\n{c}" for f, c in zip(ctrl.fill, ctrl.condition, strict=True)], fontsize=7)
    ax.set(ylabel="clean − control accuracy", title="what the fill costs when it removes only sky")
    ax.axhline(0, color="k", lw=0.6)
    ax.legend(fontsize=6, ncols=2)
    fig.tight_layout()
    return fig


def pareto_maps(table1: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 3: two panels, ``A_CR`` (%) against ``RCI_mu`` and ``A_T`` (%) against ``T_mu``, one point per row
    of Table I (colour: model, marker: group), the Pareto frontier outlined and joined by a dashed step."""
    _need(table1, "Table I row")
    markers = dict(zip(sorted(table1.group.unique()), "osD^vP*Xh", strict=False))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.9))
    for ax, (acc, idx, title) in zip(axes, [("A_CR", "RCI_mu", "corruption (ladders)"),
                                            ("A_T", "T_mu", "traversal")], strict=True):
        t = table1.dropna(subset=[acc, idx])
        front = pareto_front(t[acc], t[idx])
        for (m, g), r in t.set_index(["model", "group"]).iterrows():
            ax.scatter(100 * r[acc], r[idx], color=colors[m], marker=markers[g], s=42, alpha=0.9)
        f = t[front].sort_values(acc)
        ax.scatter(100 * f[acc], f[idx], facecolors="none", edgecolors="k", s=110, lw=1.2)
        ax.step(100 * f[acc], f[idx], where="pre", color="k", lw=0.8, ls="--")  # the edge of the dominated region
        ax.set(xlabel=f"{acc} (%)", ylabel=idx.replace("_mu", " μ"), title=f"Pareto map: {title}")
    handles = [Line2D([], [], color=colors[m], marker="o", ls="", label=m) for m in models]
    handles += [Line2D([], [], color="0.4", marker=mk, ls="", label=g) for g, mk in markers.items()]
    handles += [Line2D([], [], color="k", ls="--", marker="o", mfc="none", label="Pareto frontier")]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    fig.tight_layout()
    return fig


def accuracy_vs_share(curves: pd.DataFrame, evidence_share: pd.Series, traversals: Mapping[str, str],
                      shares: Mapping[int, float], models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 5: one panel per direction of ``traversals`` (label -> perturbation), each model's accuracy
    (``curves``: :func:`~vlmrobust.analysis.escalation.fragility.fragility_curves` per model) against the
    share removed (``shares``: level -> share, in level order), and on a right axis ``evidence_share``
    (:func:`~vlmrobust.analysis.escalation.fragility.evidence_lost_share`) where it covers the direction."""
    _need(traversals, "traversal")
    levels = list(shares)
    fig, axes = plt.subplots(1, len(traversals), figsize=(3.0 * len(traversals), 2.9), sharey=True, squeeze=False)
    for ax, (d, name) in zip(axes[0], traversals.items(), strict=True):
        for m in models:
            c = curves[(curves.model == m) & (curves.perturbation == name)]
            ax.plot([0.0, *[shares[lv] for lv in c.level[1:]]], c.accuracy, "-o", ms=3, color=colors[m], label=m)
        ax.set(title=f"{d} ({name})", xlabel="share removed s", ylim=(0, 1.02), xticks=[0, 0.2, 0.4, 0.6, 0.8])
        ax.title.set_fontsize(8)
        if (name, levels[0]) in evidence_share.index:
            ax2 = ax.twinx()
            ax2.plot([0.0, *[shares[lv] for lv in levels]],
                     [0.0, *[evidence_share.get((name, lv), np.nan) for lv in levels]], "--", color="0.5", lw=1.2)
            ax2.set_ylim(0, 1.02)
            ax2.grid(False)
            ax2.tick_params(labelsize=7, colors="0.4")
            if d == list(traversals)[-1]:
                ax2.set_ylabel("evidence removed or cut", color="0.4", fontsize=8)
    axes[0, 0].set_ylabel("accuracy")
    handles = [Line2D([], [], color=colors[m], marker="o", ms=3, label=m) for m in models]
    handles.append(Line2D([], [], color="0.5", ls="--", label="items with evidence removed or cut (right axis)"))
    fig.legend(handles=handles, loc="lower center", ncols=min(8, len(handles)), bbox_to_anchor=(0.5, -0.06),
               fontsize=7)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def fragility_panels(curves: pd.DataFrame, regimes: pd.DataFrame, perturbations: Sequence[str],
                     levels: Sequence[int], models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 6: one panel per perturbation (four per row), each model's fragility curve (dashed when
    non-monotone) ending in its regime's marker (:data:`REGIME_MARKERS`), and the panel's regime counts.
    ``curves`` and ``regimes`` are per model (:func:`~vlmrobust.analysis.escalation.fragility.curve_regimes`)."""
    _need(perturbations, "perturbation")
    ncol = 4
    nrow = int(np.ceil(len(perturbations) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.0 * ncol, 2.5 * nrow), sharey=True, squeeze=False)
    for ax, p in zip(axes.flat, perturbations, strict=False):
        for m in models:
            c = curves[(curves.model == m) & (curves.perturbation == p)]
            rg = regimes[(regimes.model == m) & (regimes.perturbation == p)].iloc[0]
            ax.plot(c.level, c.accuracy, "--" if rg.non_monotone else "-", color=colors[m], lw=1.2)
            ax.plot(c.level.iloc[-1], c.accuracy.iloc[-1], REGIME_MARKERS[str(rg.regime)], color=colors[m], ms=6)
        ax.set(title=p, xlabel="level", ylim=(0, 1.02), xticks=[0, *levels])
        ax.title.set_fontsize(8)
        rp = regimes[regimes.perturbation == p]
        counts = rp.regime.astype(str).value_counts()
        ax.text(0.98, 0.97, "\n".join(f"{k} {counts.get(k, 0)}" for k in ("stable", "progressive", "severe"))
                + f"\nnon-monotone {int(rp.non_monotone.sum())}", transform=ax.transAxes, ha="right", va="top",
                fontsize=6, color="0.25")
    for ax in axes.flat[len(perturbations):]:
        ax.axis("off")
    for r in range(nrow):
        axes[r, 0].set_ylabel("accuracy")
    handles = [Line2D([], [], color=colors[m], label=m) for m in models]
    handles += [Line2D([], [], color="0.3", marker=mk, ls="", label=k) for k, mk in REGIME_MARKERS.items()
                if k != "undefined"]
    handles += [Line2D([], [], color="0.3", ls="--", label="non-monotone")]
    fig.legend(handles=handles, loc="lower center", ncols=min(6, len(handles)), bbox_to_anchor=(0.5, -0.05),
               fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def directional_heatmap(directions: pd.DataFrame, panels: Sequence[str], labels: Sequence[str],
                        models: Sequence[str]) -> Figure:
    """TRCI(r) per model (rows) and direction (columns, ``labels`` order), one panel per ``group`` value of
    ``directions`` named in ``panels`` (:attr:`~vlmrobust.analysis.escalation.indices.TRCIResult.directions`
    rows), one shared colour scale; the worst direction of each row is outlined."""
    _need(directions, "direction row")
    vmin, vmax = np.nanmin(directions.T_RCI), np.nanmax(directions.T_RCI)
    fig, axes = plt.subplots(1, len(panels), figsize=(2.3 * len(panels) + 1, 0.35 * len(models) + 1.4),
                             squeeze=False)
    for ax, g in zip(axes[0], panels, strict=True):
        h = directions[directions.group == g].pivot_table(index="model", columns="direction", values="T_RCI",
                                                          observed=False)
        h = h.reindex(index=models, columns=list(labels))
        im = ax.imshow(h.to_numpy(), cmap="magma_r", vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(h.shape[0]):
            row = h.to_numpy()[i]
            for j in range(h.shape[1]):
                if np.isfinite(row[j]):
                    ax.text(j, i, f"{row[j]:.2f}", ha="center", va="center", fontsize=6,
                            color="w" if row[j] > (vmin + vmax) / 2 else "k")
            if np.isfinite(row).any():
                ax.add_patch(plt.Rectangle((np.nanargmax(row) - 0.5, i - 0.5), 1, 1, fill=False, ec="#0072B2",
                                           lw=1.5))
        ax.set_xticks(range(len(labels)), list(labels))
        ax.set_yticks(range(len(models)), models if g == panels[0] else [""] * len(models), fontsize=7)
        ax.set_title(g, fontsize=9)
        ax.grid(False)
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="T-RCI(r)")
    return fig


def failure_class_heatmap(class_counts: pd.DataFrame, models: Sequence[str], n_failures: int) -> Figure:
    """Fig. 4: each model's share of failures per taxonomy class (``class_counts``:
    :func:`~vlmrobust.analysis.escalation.taxonomy.taxonomy_counts` by model; rows in ``models`` order,
    columns in :data:`~vlmrobust.analysis.escalation.taxonomy.CLASSES` order), the shares written in."""
    _need(class_counts, "failure count")
    share = class_counts.pivot_table(index="model", columns="class", values="share", observed=False).reindex(
        index=[m for m in models if m in set(class_counts.model)], columns=list(CLASSES)).fillna(0.0)
    fig, ax = plt.subplots(figsize=(5.6, 0.35 * len(share) + 1.3))
    im = ax.imshow(share.to_numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i in range(share.shape[0]):
        for j in range(share.shape[1]):
            ax.text(j, i, f"{share.iloc[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="w" if share.iloc[i, j] > 0.5 else "k")
    ax.set_xticks(range(share.shape[1]), share.columns)
    ax.set_yticks(range(share.shape[0]), share.index, fontsize=7)
    ax.grid(False)
    ax.set_title(f"Fig. 4 · traversal-induced failures by class ({n_failures:,} failures)", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="share of the model's failures")
    return fig


def failure_subtypes(subtype_counts: pd.DataFrame) -> Figure:
    """Fig. 8: horizontal bars of the failures per subtype (``subtype_counts``:
    :func:`~vlmrobust.analysis.escalation.taxonomy.taxonomy_counts` with ``level="subtype"``; zero counts left
    out), coloured by class, the first subtype at the top, the counts written at the bar ends."""
    sub = subtype_counts[subtype_counts.n > 0].iloc[::-1]
    _need(sub, "failure subtype")
    cls_color = dict(zip(CLASSES, PALETTE, strict=False))
    fig, ax = plt.subplots(figsize=(6.4, 0.2 * len(sub) + 1.0))
    ax.barh(np.arange(len(sub)), sub.n, color=[cls_color[str(c)] for c in sub["class"]])
    ax.set_yticks(np.arange(len(sub)), [str(s) for s in sub.subtype], fontsize=7)
    for i, n in enumerate(sub.n):
        ax.text(n, i, f" {n}", va="center", fontsize=6)
    ax.legend(handles=[Line2D([], [], color=cls_color[c], lw=6, label=c) for c in CLASSES
                       if c in set(sub["class"].astype(str))], fontsize=7, loc="lower right")
    ax.set(xlabel="failures (all models, directions and states)", title="Fig. 8 · fine-grained failure subtypes")
    fig.tight_layout()
    return fig


def rank_correlation_heatmaps(rho_rci: pd.DataFrame, rho_trci: pd.DataFrame) -> Figure:
    """Two heatmaps of Spearman ρ between weighting schemes (RCI_mu and T_mu, from
    :func:`~vlmrobust.analysis.escalation.ablation.rank_correlations`), the values written in; the colour
    scale runs from min(0.5, smallest finite ρ) to 1."""
    _need(rho_rci, "RCI rank correlation")
    _need(rho_trci, "T-RCI rank correlation")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    rho_all = np.concatenate([rho_rci.to_numpy().ravel(), rho_trci.to_numpy().ravel()])
    rho_lo = min(0.5, float(np.min(rho_all[np.isfinite(rho_all)]))) if np.isfinite(rho_all).any() else 0.5
    for ax, (rho, title) in zip(axes, [(rho_rci, "RCI_mu"), (rho_trci, "T_mu")], strict=True):
        ax.imshow(rho.to_numpy(), cmap="viridis", vmin=rho_lo, vmax=1)
        for i in range(len(rho)):
            for j in range(len(rho)):
                v = rho.iloc[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="k" if np.isfinite(v) and v > rho_lo + 0.6 * (1 - rho_lo) else "w")
        ax.set_xticks(range(len(rho)), rho.columns, rotation=35, ha="right", fontsize=7)
        ax.set_yticks(range(len(rho)), rho.index, fontsize=7)
        ax.grid(False)
        ax.set_title(f"Spearman ρ between weightings: {title}", fontsize=9)
    fig.tight_layout()
    return fig


def latent_instability_examples(latent: pd.DataFrame, examples: pd.DataFrame, traversals: Mapping[str, str],
                                shares: Mapping[int, float], colors: Mapping[str, str]) -> Figure:
    """Fig. 7: one panel per row of ``examples``
    (:func:`~vlmrobust.analysis.escalation.fragility.warning_examples`, three per row): the item's
    p(correct) and margin against the share removed (``latent``:
    :func:`~vlmrobust.analysis.escalation.fragility.latent_instability`), the warning and the flip marked.
    ``traversals`` maps direction labels to perturbations, ``shares`` levels to the share removed."""
    _need(examples, "example")
    ncol = min(3, len(examples))
    nrow = int(np.ceil(len(examples) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.7 * nrow), sharey=True, squeeze=False)
    for ax in axes.flat[len(examples):]:
        ax.axis("off")
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
        ax.set(title=f"{w.model} · {w.item_id.split('-', 2)[-1]} · {d}", xlabel="share removed", ylim=(-1.05, 1.05))
        ax.title.set_fontsize(7)
    for r in range(nrow):
        axes[r, 0].set_ylabel("probability")
    axes[0, 0].legend(fontsize=6, loc="lower left")
    fig.suptitle("Fig. 7 · the correct option loses probability before the answer flips", fontsize=9)
    fig.tight_layout()
    return fig
