"""Figures of notebook 05 on labels, drift, Dirichlet energy, the prior and scale (seed 002).

Each function draws one figure of the notebook from the small tables it already
computes and returns the :class:`~matplotlib.figure.Figure`; the notebook saves
it with :func:`vlmrobust.figures.save`. The style (palette, image axes) is
:mod:`vlmrobust.figures`'. The frequency figures (§6, App. F) are in
:mod:`.frequency_figures`.

* :func:`perturbation_examples` - Fig. 3: one image under the perturbation set (App. A.6);
* :func:`drift_vs_control` - Fig. 1: perturbation drift against control drift, with Cohen's d (Table 4);
* :func:`layer_drift_curves` - our addition: drift / control per pre-norm layer, and the final post-norm value;
* :func:`dirichlet_histograms` - Figs. 13-14: ``dE_dir`` of the vision-token grid (App. E);
* :func:`pope_rates`, :func:`pope_transition_rates`, :func:`pope_drift_energy` - Figs. 10, 12 and 11
  (drift to prior on yes/no questions, §7, App. D);
* :func:`scale_panels` - Figs. 2 and 5: flip rate and transitions by model size (§5, Table 5).

Perturbations are labelled with :func:`~vlmrobust.analysis.drift.instability.label`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ... import corrupt
from ...figures import MARKERS, PALETTE, image_axes, legend_outside, panel_grid
from . import figures_findings
from .figures_findings import (  # noqa: F401  (the sentence printed under each figure, also frequency_figures')
    dirichlet_finding,
    drift_control_finding,
    examples_finding,
    layer_finding,
    margins_finding,
    noise_finding,
    per_sample_finding,
    pgd_finding,
    pope_drift_finding,
    pope_moves_finding,
    pope_rates_finding,
    scale_finding,
    spectral_finding,
    thresholds_finding,
)
from .instability import label
from .representation import control_values

__all__ = ["EXAMPLES", "POPE_MOVES", "perturbation_examples", "drift_vs_control", "layer_drift_curves",
           "dirichlet_histograms", "pope_rates", "pope_transition_rates", "pope_drift_energy", "scale_panels",
           *figures_findings.__all__]

#: The (perturbation, level) panels of Fig. 3: the clean image, then instances of the paper's set (App. A.6).
EXAMPLES: tuple[tuple[str, int], ...] = (
    ("clean", 0), ("translate", 8), ("pad_crop", 8), ("pad_crop", 1), ("scale", 1), ("scale_pad", 2),
    ("rotate", 1), ("rotate", 2), ("text_overlay", 1), ("random_text", 1), ("box_overlay", 1))

#: The yes/no moves of Fig. 12 (columns of :func:`~vlmrobust.analysis.drift.prior.pope_transitions`).
POPE_MOVES = ("TP→FN rate", "TN→FP rate", "FP→TN rate", "FN→TP rate")


def _present(order: Iterable[str], values: Iterable[str]) -> list[str]:
    """The names of ``order`` (e.g. the natural manifest) that occur in ``values``, in ``order``'s order."""
    seen = set(values)
    return [p for p in order if p in seen]


def perturbation_examples(image: np.ndarray, show: Sequence[tuple[str, int]] = EXAMPLES, *, seed: int,
                          key: str, shift: str = "fixed") -> Figure:
    """Fig. 3: ``image`` under each ``(perturbation, level)`` of ``show`` in one row, titled with the label and
    the level's parameter (``"clean"`` shows the image itself).

    ``seed``, ``key`` (the item id) and ``shift`` (the reading of the pixel offsets,
    :func:`vlmrobust.corrupt.natural.shift_corrupt`) are those of the sweep, so the panels are the instances it
    scored.
    """
    if not len(show):
        raise ValueError("show needs at least one (perturbation, level) panel")
    apply = corrupt.natural.shift_corrupt(shift)
    ncol = min(6, len(show))  # rows of six panels, so that the figure fits a page
    nrow = int(np.ceil(len(show) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(1.2 * ncol, 1.45 * nrow), squeeze=False, layout="constrained")
    for ax, (name, lv) in zip(axes.flat, show, strict=False):
        ax.imshow(image if name == "clean" else apply(image, name, lv, seed=seed, key=key))
        image_axes(ax, "clean" if name == "clean" else f"{label(name)}\n{corrupt.info(name).param(lv):g}")
    for ax in axes.flat[len(show):]:
        ax.axis("off")
    return fig


def drift_vs_control(probes_kept: pd.DataFrame, probes: pd.DataFrame, t4: pd.DataFrame, models: Sequence[str],
                     regime: str, perturbations: Sequence[str] = ("translate", "text_overlay")) -> Figure:
    """Fig. 1: per model (rows) and perturbation (columns), histograms of the cosine drift of ``regime`` and of
    the model's control distances, titled with Cohen's d from ``t4``.

    ``probes_kept``: probe rows without the ground-truth-changing instances (the drift); ``probes``: all probe
    rows (the control, :func:`~vlmrobust.analysis.drift.representation.control_values`); ``t4``:
    :func:`~vlmrobust.analysis.drift.representation.drift_vs_control` (column ``d``; NaN when absent).
    """
    if not len(models):
        raise ValueError("models must name at least one model")
    fig, axes = plt.subplots(len(models), len(perturbations), figsize=(7.2, 2.1 * len(models) + 0.4), squeeze=False,
                             layout="constrained")
    drift = probes_kept[(probes_kept.kind == "drift") & (probes_kept.regime == regime)]
    for row, m in zip(axes, models, strict=True):
        ctrl = control_values(probes, regime, "cos", model=m)
        for ax, pert in zip(row, perturbations, strict=True):
            x = drift[(drift.model == m) & (drift.perturbation == pert)].cos
            bins = np.linspace(0, max(float(np.nanmax(ctrl)), float(np.nanmax(x)) if len(x) else 0) * 1.05 + 1e-9,
                               40)
            ax.hist(ctrl, bins=bins, density=True, color=PALETTE[1], alpha=0.45, label="control drift")
            ax.hist(x, bins=bins, density=True, histtype="step", lw=1.4, color=PALETTE[0], label="perturbation drift")
            ax.set_yscale("log")  # the mass at zero and the control's tail on one axis
            d_val = t4[(t4.model == m) & (t4.perturbation == pert)].d
            ax.set(title=f"{m} · {label(pert)} (d = {float(d_val.iloc[0]) if len(d_val) else float('nan'):+.2f})",
                   xlabel=f"cosine distance 1 − cos ({regime})", ylabel="density (log)")
            ax.title.set_fontsize(8)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig


def layer_drift_curves(curves: pd.DataFrame, final: pd.DataFrame, probes: pd.DataFrame, models: Sequence[str],
                       regimes: Sequence[str]) -> Figure:
    """Per model, the cosine drift / control ratio of the union (``"any"``) per pre-norm layer for each regime,
    and a square at the right for the final post-norm layer: ``(1 - cos_sim) / mean control distance``.

    ``curves``: :func:`~vlmrobust.analysis.drift.representation.layer_curves`; ``final``:
    :func:`~vlmrobust.analysis.drift.representation.invariance_table` (its ``"any"`` rows are used);
    ``probes``: the probe rows holding the control distances. Regimes absent from ``curves`` are skipped.
    """
    if not len(models):
        raise ValueError("models must name at least one model")
    fin = final[final.perturbation == "any"]
    ncol = min(3, len(models))
    nrow = int(np.ceil(len(models) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(min(7.4, 2.7 * ncol + 1.2), 2.6 * nrow + 0.3), squeeze=False,
                             sharey=True, layout="constrained")
    for ax in axes.flat[len(models):]:
        ax.axis("off")
    for ax, m in zip(axes.flat, models, strict=False):
        g = curves[(curves.model == m) & (curves.perturbation == "any")]
        for i, regime in enumerate([r for r in regimes if r in set(g.regime)]):
            gr = g[g.regime == regime]
            ax.plot(gr.layer, gr.ratio, ms=3.5, color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                    label=regime)
            ctrl_final = control_values(probes, regime, "cos", model=m).mean()
            f = fin[(fin.model == m) & (fin.regime == regime)]
            if len(f):
                ax.plot(gr.layer.max() + 1, (1 - float(f.cos_sim.iloc[0])) / ctrl_final, "s",
                        color=PALETTE[i % len(PALETTE)])
        n_layers = int(g.layer.max()) if len(g) else 0
        ax.set_xticks(list(range(n_layers + 1)) + [n_layers + 1], [str(k) for k in range(n_layers + 1)] + ["final"])
        ax.set(title=m, xlabel="layer")
    for ax in axes[:, 0]:
        ax.set_ylabel("drift / control (cosine)")
    h, lab = next((a.get_legend_handles_labels() for a in axes.flat if a.get_legend_handles_labels()[0]), ([], []))
    fig.legend(h, lab, loc="outside right center", fontsize=7, title="regime", title_fontsize=7)
    fig.supxlabel("0 = decoder input, 1..L = pre-norm residual stream; final = post-norm (squares)", fontsize=7)
    return fig


def dirichlet_histograms(grid: pd.DataFrame, perturbation: str) -> Figure:
    """Figs. 13-14: histograms of ``d_energy`` (``dE_dir``) of the ``vision_grid`` rows of one perturbation, per
    model, over all instances (left) and the flip-inducing ones (right; ``flip`` NaN counts as no flip).

    ``grid``: drift rows with flips (:func:`~vlmrobust.analysis.drift.representation.with_flips`).
    """
    fig, axes = plt.subplots(1, 2, figsize=(6.0, 2.5), sharex=True, layout="constrained")
    g = grid[(grid.regime == "vision_grid") & (grid.perturbation == perturbation)]
    finite = g.d_energy[np.isfinite(g.d_energy)]
    bins = np.linspace(float(finite.min()), float(finite.max()), 31) if len(finite) else 30
    for ax, (name, sub) in zip(axes, [("all instances", g), ("flip-inducing", g[g.flip.fillna(False)])], strict=True):
        for i, (m, gm) in enumerate(sub.groupby("model", sort=False)):
            ax.hist(gm.d_energy, bins=bins, histtype="step", lw=1.4, color=PALETTE[i], label=m)
        ax.axvline(0, color="k", lw=0.8)
        ax.set(title=f"{label(perturbation)}: {name}", xlabel="ΔE_dir", ylabel="instances")
        ax.title.set_fontsize(9)
    legend_outside(fig, where="right", fontsize=7)
    return fig


def pope_rates(pope: pd.DataFrame, models: Sequence[str], order: Iterable[str]) -> Figure:
    """Fig. 10: per perturbation (in ``order``, those present), bars of the yes/no flip rate (left) and of the
    perturbed accuracy (right, a dashed line per model at its clean accuracy); two models side by side.

    ``pope``: :func:`~vlmrobust.analysis.drift.prior.pope_transitions`.
    """
    perts = _present(order, pope.perturbation)
    x = np.arange(len(perts))
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 2.8), sharex=True, layout="constrained")
    for i, m in enumerate(models):
        g = pope[pope.model == m].set_index("perturbation").reindex(perts)
        axes[0].bar(x + (i - 0.5) * 0.38, g.flip_rate, width=0.38, color=PALETTE[i], label=m)
        axes[1].bar(x + (i - 0.5) * 0.38, g.acc, width=0.38, color=PALETTE[i])
        axes[1].axhline(float(g.base_acc.mean()), color=PALETTE[i], ls="--", lw=1)
    axes[0].set(ylabel="flip rate", title="yes/no flip rate")
    axes[1].set(ylabel="accuracy", title="accuracy (dashed: clean)", ylim=(0, 1))
    for ax in axes:
        ax.set_xticks(x, [label(p) for p in perts], rotation=40, ha="right")
        ax.title.set_fontsize(9)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=min(4, len(models)),
               fontsize=7)
    return fig


def pope_transition_rates(pope: pd.DataFrame, models: Sequence[str], order: Iterable[str]) -> Figure:
    """Fig. 12: per model, bars of the four yes/no moves (:data:`POPE_MOVES`: TP→FN, TN→FP, FP→TN, FN→TP, each
    over its clean class) per perturbation (in ``order``, those present in ``pope``)."""
    if not len(models):
        raise ValueError("models must name at least one model")
    perts = _present(order, pope.perturbation)
    x = np.arange(len(perts))
    fig, axes = panel_grid(len(models), 2, 2.6, sharey=True)
    for ax, m in zip(axes.flat, models, strict=False):
        g = pope[pope.model == m].set_index("perturbation").reindex(perts)
        for j, mv in enumerate(POPE_MOVES):
            ax.bar(x + (j - 1.5) * 0.2, g[mv], width=0.2, color=PALETTE[j], label=mv.replace(" rate", ""))
        if not np.nan_to_num(g[list(POPE_MOVES)].to_numpy(float)).any():
            ax.text(0.5, 0.5, "no yes/no answer moves", transform=ax.transAxes, ha="center", color="0.4", fontsize=8)
        ax.set_xticks(x, [label(p) for p in perts], rotation=40, ha="right")
        ax.set_title(m, fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("rate (over the clean class)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize=7)
    return fig


def pope_drift_energy(p11: pd.DataFrame, models: Sequence[str], regime: str) -> Figure:
    """Fig. 11: per perturbation, mean cosine drift of ``regime`` (left, points labelled) and mean ``dE_dir``
    (right) against the yes/no flip rate, one colour per model.

    ``p11``: :func:`~vlmrobust.analysis.drift.prior.drift_by_perturbation` (``flip_rate``, ``cos_sim``, ``dE``).
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 2.9), layout="constrained")
    perts = list(dict.fromkeys(p11.perturbation))
    marker = {p: MARKERS[j % len(MARKERS)] for j, p in enumerate(perts)}  # a marker per perturbation, not a label
    for i, m in enumerate(models):
        g = p11[p11.model == m]
        for r in g.itertuples():
            axes[0].scatter(r.flip_rate, 1 - r.cos_sim, color=PALETTE[i], marker=marker[r.perturbation], s=22)
            axes[1].scatter(r.flip_rate, r.dE, color=PALETTE[i], marker=marker[r.perturbation], s=22)
    axes[0].set(xlabel="flip rate", ylabel=f"mean cosine drift ({regime})", title="drift vs flip rate")
    axes[1].set(xlabel="flip rate", ylabel="mean ΔE_dir", title="ΔE_dir vs flip rate")
    for ax in axes:
        ax.title.set_fontsize(9)
    handles = [Line2D([], [], color=PALETTE[i], marker="o", ls="", label=m) for i, m in enumerate(models)]
    handles += [Line2D([], [], color="0.35", marker=marker[p], ls="", label=label(p)) for p in perts]
    fig.legend(handles=handles, loc="outside right center", fontsize=7)
    return fig


def scale_panels(t1: pd.DataFrame, t5: pd.DataFrame, sizes: Mapping[str, float], order: Iterable[str]) -> Figure:
    """Figs. 2 and 5: IFR per perturbation (in ``order``, those present, then the union) with one bar per model
    of ``t5`` (left, legend with the size in millions), and the R→W and W→R shares against size (right).

    ``t1``: :func:`~vlmrobust.analysis.drift.instability.ifr_iv` of the ladder; ``t5``:
    :func:`~vlmrobust.analysis.drift.instability.scale_table`; ``sizes``: model -> parameters. An empty
    ``t5`` draws empty panels.
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 3.2), layout="constrained")
    perts = _present(order, t1.perturbation) + ["any"]
    xs = np.arange(len(perts))
    for i, m in enumerate(t5.model):
        g = t1[t1.model == m].set_index("perturbation").reindex(perts)
        w = 0.8 / len(t5)
        axes[0].bar(xs + (i - (len(t5) - 1) / 2) * w, g.IFR, width=w, color=PALETTE[i % 8],
                    label=f"{m} ({sizes[m] / 1e6:.2f} M)")
    axes[0].set_xticks(xs, [label(p) for p in perts], rotation=40, ha="right")
    axes[0].set(ylabel="IFR", title="Fig. 2 — flip rate by model size")
    axes[0].title.set_fontsize(9)
    if len(t5):
        axes[0].legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.42), ncols=min(3, len(t5)))
    axes[1].plot(t5["size"] / 1e6, t5["R→W share"], "-o", label="R→W (error injection)")
    axes[1].plot(t5["size"] / 1e6, t5["W→R share"], "-s", label="W→R (correction)")
    axes[1].set(xlabel="parameters (M)", ylabel="share of union instances", title="Fig. 5 — transitions by size")
    axes[1].title.set_fontsize(9)
    axes[1].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2)
    return fig
