"""Figures of notebook 03 (scoring), drawn from the tables the notebook already computes.

* :func:`severity_bands` - accuracy and confidence against severity, one panel per perturbation (mean over the
  models, band = their range); a perturbation with a physical unit (fog visibility in metres) gets that axis;
* :func:`family_bands` - accuracy against the pooled level, one panel per task family, with its chance level;
* :func:`distribution_pairs` - clean and corrupted option distributions of a few questions (Bench-C's pair);
* :func:`agreement_heatmap` - the share of items on which two scoring methods give the same argmax.

Each returns the :class:`~matplotlib.figure.Figure`; the notebook saves it with :func:`vlmrobust.figures.save`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..figures import PALETTE, image_axes, legend_outside

__all__ = ["severity_bands", "family_bands", "distribution_pairs", "agreement_heatmap", "level_axis", "shared_levels"]

ACC, CONF = PALETTE[0], PALETTE[3]


def level_axis(name: str, levels: Sequence[int]) -> tuple[np.ndarray, str, list[str] | None]:
    """x positions, axis label and tick labels for a perturbation's levels ``[0, *levels]`` (0 = clean).

    A perturbation whose parameter is a distance (``corrupt.info(name).unit == "m"``: fog or water visibility)
    is drawn at its values in metres on a log axis, far to near, clean at twice the first value ("clean");
    any other at its level numbers (tick labels ``None``).
    """
    from ..corrupt import info

    lv = [int(v) for v in levels]
    meta = info(name) if name != "pooled" else None
    if meta is not None and meta.unit == "m" and meta.params and len(meta.params) >= max(lv, default=0):
        vals = [float(meta.params[v - 1]) for v in lv]
        x = np.array([2 * vals[0], *vals]) if lv else np.array([1.0])
        return x, f"{meta.param_name or 'visibility'} (m, log)", ["clean", *[f"{v:.3g}" for v in vals]]
    return np.array([0, *lv], dtype=float), "severity level (0 = clean)", None


def _levels_text(name: str, lv: Sequence[int]) -> str:
    from ..corrupt import info

    meta = info(name)
    if meta.unit and meta.params:
        return f"{meta.params[lv[0] - 1]:.3g}–{meta.params[lv[-1] - 1]:.3g} {meta.unit}"
    return f"levels {lv[0]}–{lv[-1]}"


def shared_levels(conditions: Mapping[str, Sequence[int]]) -> tuple[list[int], str]:
    """The levels every perturbation of ``conditions`` has, and a sentence saying what a pooled level is and
    which perturbations' own further levels are left out (in their physical unit where they have one)."""
    shared = sorted(set.intersection(*(set(v) for v in conditions.values()))) if conditions else []
    extra = {k: [v for v in lv if v not in shared] for k, lv in conditions.items() if set(lv) - set(shared)}
    note = f"level ℓ = severity ℓ of each of the {len(conditions)} perturbations, pooled"
    if extra and shared:
        note += " (" + "; ".join(f"{k}: {_levels_text(k, shared)}" for k in extra) + ")"
    if extra:
        note += "; not drawn: " + "; ".join(f"{k}'s levels {lv[0]}–{lv[-1]} ({_levels_text(k, lv)})"
                                            for k, lv in extra.items() if lv)
    return shared, note


def _spread(tab: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    """Mean, min and max of ``col`` over the models at each ``keys`` group (sorted by the keys)."""
    return tab.groupby(keys)[col].agg(["mean", "min", "max"]).reset_index().sort_values(keys)


def _band(ax, x, g: pd.DataFrame, color: str, label: str, ls: str = "-") -> None:
    ax.fill_between(x, g["min"], g["max"], color=color, alpha=0.18, lw=0)
    ax.plot(x, g["mean"], ls, marker="o", ms=3, color=color, label=label)


def _grid(n: int, ncol: int, width: float = 7.2, height: float = 1.9):
    ncol = max(1, min(ncol, n))
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(width, height * nrow + 0.4), sharey=True, squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, axes


def severity_bands(curves: pd.DataFrame, perturbations: Sequence[str], *, ncol: int = 3) -> Figure:
    """One panel per perturbation: accuracy (solid) and mean confidence (dashed) against severity, each the mean
    over the models with a band from the lowest to the highest model; level 0 is the clean image.

    ``curves``: :func:`~vlmrobust.score.severity_curves` by model (columns ``model, perturbation, level,
    accuracy, confidence``).
    """
    names = list(perturbations)
    fig, axes = _grid(len(names), ncol)
    n_models = curves["model"].nunique()
    for ax, name in zip(axes.flat, names, strict=False):
        sub = curves[curves["perturbation"] == name]
        acc, conf = _spread(sub, ["level"], "accuracy"), _spread(sub, ["level"], "confidence")
        x, xlabel, ticks = level_axis(name, [v for v in acc["level"] if v > 0])
        _band(ax, x, acc, ACC, "accuracy")
        _band(ax, x, conf, CONF, "confidence", "--")
        if ticks is not None:
            ax.set_xscale("log")
            ax.invert_xaxis()
            keep = list(range(0, len(x), max(1, len(x) // 4)))
            ax.set_xticks(x[keep], [ticks[i] for i in keep])
            ax.minorticks_off()
        else:
            ax.set_xticks(x)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=7)
        ax.set_ylim(0, 1.02)
    for row in axes:
        row[0].set_ylabel("share")
    leg = legend_outside(fig, where="below", ncol=2)
    leg.set_title(f"mean over {n_models} models; band: lowest to highest model", prop={"size": 7})
    fig.tight_layout()
    return fig


def family_bands(fam_curves: pd.DataFrame, families: Sequence[str], levels: Sequence[int],
                 chance: Mapping[str, float], note: str, *, ncol: int | None = None) -> Figure:
    """One panel per task family: accuracy against the pooled level (mean over the models, band = their range),
    the mean of all families in grey for reference, and the family's chance level (dotted); only ``levels``
    (with 0, clean) are drawn, and ``note`` says under the panels what a level is.

    ``fam_curves``: :func:`~vlmrobust.score.severity_curves` by model and task, pooled, with a ``family``
    column; ``chance``: 1/K per family; ``ncol``: panels per row (3 up to nine families, else 4).
    """
    fams = list(families)
    ncol = ncol or (3 if len(fams) <= 9 else 4)
    keep = fam_curves[fam_curves["level"].isin([0, *levels])]
    fig, axes = _grid(len(fams), ncol, height=1.55)
    every = _spread(keep, ["level"], "accuracy")
    for ax, f in zip(axes.flat, fams, strict=False):
        g = _spread(keep[keep["family"] == f], ["level"], "accuracy")
        ax.plot(every["level"], every["mean"], color="0.6", lw=1, label="all families (mean)")
        _band(ax, g["level"], g, ACC, "this family (mean over models)")
        if f in chance:
            ax.axhline(chance[f], color="k", ls=":", lw=0.9, label="chance (1/K)")
        ax.set_title(f, fontsize=9)
        ax.set_xticks([0, *levels])
        ax.set_ylim(0, 1.02)
    for row in axes:
        row[0].set_ylabel("accuracy")
    for i in range(len(fams) - min(ncol, len(fams)), len(fams)):  # the lowest panel of each column
        axes.flat[i].set_xlabel("level")
    legend_outside(fig, where="below", ncol=3)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.text(0.5, 0.035, note, ha="center", va="top", fontsize=7, wrap=True)
    return fig


def distribution_pairs(examples: Sequence[Mapping], labels: tuple[str, str], ylabel: str, *, ncol: int = 2) -> Figure:
    """For each example question: its clean and corrupted images side by side (question as title) above the two
    option distributions as paired bars (the correct option outlined in black).

    ``examples``: mappings with ``image`` (the two images side by side), ``question``, ``options`` (tick labels),
    ``answer_idx`` and ``probs`` (two arrays, clean then corrupted; ``None`` when missing); ``labels``: the
    names of the two distributions.
    """
    n = len(examples)
    ncol = max(1, min(ncol, n))
    nrow = int(np.ceil(n / ncol))
    fig = plt.figure(figsize=(3.6 * ncol, 3.8 * nrow))
    gs = fig.add_gridspec(2 * nrow, ncol, height_ratios=[1.0, 1.3] * nrow, hspace=0.7, wspace=0.3)
    for i, ex in enumerate(examples):
        r, c = divmod(i, ncol)
        top, bottom = fig.add_subplot(gs[2 * r, c]), fig.add_subplot(gs[2 * r + 1, c])
        top.imshow(ex["image"])
        image_axes(top, ex["question"], frame=False, fontsize=7, wrap=True)
        k = np.arange(len(ex["options"]))
        for j, p in enumerate(ex["probs"]):
            if p is None:
                continue
            bars = bottom.bar(k + (j - 0.5) * 0.38, np.asarray(p), width=0.38, color=PALETTE[j], label=labels[j])
            bars[ex["answer_idx"]].set_edgecolor("black")
            bars[ex["answer_idx"]].set_linewidth(1.2)
        bottom.set_xticks(k, [str(o)[:16] for o in ex["options"]], rotation=30,
                          fontsize=6, ha="right")
        bottom.set_ylim(0, 1)
        if c == 0:
            bottom.set_ylabel(ylabel)
    legend_outside(fig, where="below", ncol=2)
    return fig


def agreement_heatmap(agreement: pd.DataFrame, value: str = "same_argmax") -> Figure:
    """A model × (condition, method pair) heatmap of ``value`` (share of items with the same argmax), values
    written in, with a colour bar; ``agreement``: :func:`~vlmrobust.score.method_agreement` by model and
    perturbation."""
    import seaborn as sns

    grid = agreement.pivot_table(index="model", columns=["perturbation", "pair"], values=value, sort=False)
    fig, ax = plt.subplots(figsize=(7.2, 0.32 * len(grid) + 1.9))
    sns.heatmap(grid, ax=ax, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f", annot_kws={"fontsize": 7},
                cbar_kws={"label": value.replace("_", " "), "fraction": 0.04})
    ax.set_xticks(np.arange(grid.shape[1]) + 0.5, [f"{p}\n{q}" for p, q in grid.columns], rotation=0,
                  fontsize=6)
    ax.set(xlabel="condition · method pair", ylabel="")
    ax.grid(False)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    return fig
