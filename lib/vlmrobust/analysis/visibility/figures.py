"""Seed 003's figures (notebook 06): Figs. 2–8 and accuracy against the boxed object's transmittance.

Each function takes the small tables the notebook has already computed — the
signal cube and its level means
(:func:`~vlmrobust.analysis.visibility.blind_spot.signal_cube`,
:func:`~vlmrobust.analysis.visibility.blind_spot.level_means`), the blind-spot
table, the reliability and transmittance tables of
:mod:`~vlmrobust.analysis.visibility.readouts`, Table VII of
:mod:`~vlmrobust.analysis.visibility.tables` — draws with the shared style of
:mod:`vlmrobust.figures` and returns the matplotlib Figure; the notebook saves it
with :func:`vlmrobust.figures.save`. Nothing here computes a result.

* :func:`scene_figure` — Fig. 2 analogue: one scene under every degradation;
* :func:`signals_figure` — Figs. 3 (t2) and 8 (t3): every signal against V;
* :func:`blind_spot_figure` — Fig. 4: the blind-spot width W with its intervals and bounds;
* :func:`reliability_figure` — Fig. 5: reliability of the internal confidence, murky levels against clean;
* :func:`abstain_figure` — Fig. 6: the abstain rate under two wordings, with accuracy;
* :func:`transmittance_figure` — accuracy against the boxed object's own transmittance;
* :func:`imagenet_fog_figure` — Fig. 7: the physical fog curve with ImageNet-C severities at their V_eq.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ... import corrupt
from ...figures import PALETTE, image_axes
from .blind_spot import AWARE_SIGNALS, SIGNALS, SignalCube
from .tables import cell_index

__all__ = ["HATCH", "scene_figure", "signals_figure", "blind_spot_figure", "reliability_figure", "abstain_figure",
           "transmittance_figure", "imagenet_fog_figure"]

#: Fig. 4's hatching per kind of W: a value plain, lower bounds hatched, upper bounds dotted.
HATCH = {"=": None, "≥": "///", "≤": "..."}


def scene_figure(image: np.ndarray, depth: np.ndarray, key: str, shuffled_image: np.ndarray, *, seed: int = 0,
                 levels: Sequence[int] = (1, 3, 5, 6, 7, 8), t_levels_m: Sequence[float] = (62.5, 7.8125)) -> Figure:
    """Fig. 2 analogue: one boxed scene clean, its depth and transmittance, and under every degradation.

    Top row: the clean image, its ray depth (m, with a colour bar) and the
    transmittance ``t`` at each of ``t_levels_m``. Then one row each for
    physical fog and water at ``levels`` (of ``fog_physical+box`` and
    ``underwater+box``, titled by V in metres), ImageNet-C fog severities 1–5
    (seeded with ``seed`` and ``key``, the scene id) and the controls (sky-only
    fog and water, blank, and ``shuffled_image``, the shuffled control's image).
    The ``+box`` perturbations draw the red box after degrading.
    """
    levels = list(levels)
    if len(levels) > 6 or len(t_levels_m) > 4:
        raise ValueError(f"at most 6 levels and 4 transmittance panels, got {len(levels)} and {len(t_levels_m)}")
    rows = [("fog", "fog_physical+box", levels), ("water", "underwater+box", levels),
            ("ImageNet-C fog", "fog+box", [1, 2, 3, 4, 5]),
            ("controls", None, ["sky_only_fog+box", "sky_only_water+box", "blank+box", "shuffled"])]
    fig, axes = plt.subplots(len(rows) + 1, 6, figsize=(8.4, 1.6 * (len(rows) + 1)))
    axes[0, 0].imshow(image)
    image_axes(axes[0, 0], "clean")
    shown = axes[0, 1].imshow(np.where(np.isfinite(depth), depth, np.nan), cmap="viridis")
    fig.colorbar(shown, ax=axes[0, 1], fraction=0.046)
    image_axes(axes[0, 1], "depth (m)")
    for i, v in enumerate(t_levels_m):
        ax = axes[0, 2 + i]
        ax.imshow(corrupt.transmittance(depth, v), vmin=0, vmax=1, cmap="gray")
        image_axes(ax, f"t at V = {v:g} m")
    for ax in axes[0, 2 + len(t_levels_m):]:
        ax.axis("off")
    for r, (label, name, cols) in enumerate(rows, start=1):
        for c in range(6):
            ax = axes[r, c]
            if c >= len(cols):
                ax.axis("off")
                continue
            if name is None:
                nm = cols[c]
                im = shuffled_image if nm == "shuffled" else corrupt.apply(image, nm, 1, depth=depth, key=key)
                image_axes(ax, nm.replace("+box", ""))
            else:
                lv = cols[c]
                im = corrupt.apply(image, name, lv, seed=seed, key=key, depth=depth)
                p = corrupt.info(name).param(lv)
                image_axes(ax, f"{label} {p:g} m" if label != "ImageNet-C fog" else f"severity {lv}")
            ax.imshow(im)
    fig.suptitle("Fig. 2 analogue: one scene under the degradations (red box drawn after each)", fontsize=9)
    fig.tight_layout()
    return fig


def signals_figure(cube: SignalCube, means: np.ndarray, colors: Mapping[str, str], task: str, title: str) -> Figure:
    """Figs. 3 and 8: each signal's mean against V, one row per arm and one column per signal, for ``task``.

    ``means`` is ``level_means(cube)``. A line per model (colour from
    ``colors``) over the levels, its clean value a square left of the clearest
    level; chance dotted for accuracy and both confidences; a panel without data
    says ``n/a`` (``n/a: not parseable`` for the verbalized confidence).
    """
    if not (cube.cells.task == task).any():
        raise ValueError(f"the signal cube has no cell of task {task!r}")
    arms = list(dict.fromkeys(cube.cells.arm))
    fig, axes = plt.subplots(len(arms), len(SIGNALS), figsize=(2.35 * len(SIGNALS), 2.3 * len(arms)),
                             sharex=True, sharey=True, squeeze=False)
    x_clean = cube.levels_m[0] * 2.2
    for r, arm in enumerate(arms):
        for k, sig in enumerate(SIGNALS):
            ax = axes[r, k]
            drawn = 0
            for c, cell in cube.cells.iterrows():
                if cell.task != task or cell.arm != arm or not np.isfinite(means[c, k]).any():
                    continue
                ax.plot(cube.levels_m, means[c, k, 1:], "-o", ms=2.5, color=colors[cell.model], label=cell.model)
                ax.plot([x_clean], [means[c, k, 0]], "s", ms=3, color=colors[cell.model])
                drawn += 1
            if not drawn:
                ax.text(0.5, 0.75, "n/a: not parseable" if sig == "verbal" else "n/a", transform=ax.transAxes,
                        ha="center", va="center", fontsize=8, color="0.4")
            elif sig in ("accuracy", "internal", "verbal"):
                ax.axhline(cube.chance[cube.cells.task.to_numpy() == task][0], color="0.5", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_xlim(x_clean * 1.4, cube.levels_m[-1] / 1.4)  # murkier to the right
            ax.set(ylim=(-0.03, 1.03), title=f"{arm}: {sig}")
            if r == len(arms) - 1:
                ax.set_xlabel("visibility V (m); square: clean")
        axes[r, 0].set_ylabel(f"{arm}\nmean")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=min(6, len(labels)), bbox_to_anchor=(0.5, -0.03))
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def blind_spot_figure(spots: pd.DataFrame, models: Sequence[str] | None = None) -> Figure:
    """Fig. 4: W per (model, arm) and awareness signal, one panel per task, with the bootstrap intervals.

    ``spots`` is :func:`~vlmrobust.analysis.visibility.blind_spot.blind_spot_table`.
    Bars are coloured by signal; a lower bound (``≥``) is hatched, an upper
    bound (``≤``) dotted, an ``n/a`` cell has no bar (a group with none says
    ``n/a``). ``models`` (default: those of ``spots``) sets the figure's width.
    """
    if spots.empty:
        raise ValueError("the blind-spot table is empty: nothing to draw")
    models = list(dict.fromkeys(spots.model)) if models is None else list(models)
    tasks = list(dict.fromkeys(spots.task))
    fig, axes = plt.subplots(len(tasks), 1, figsize=(min(16, 1.4 + 0.75 * len(models) * 2), 3.0 * len(tasks)),
                             squeeze=False)
    sig_colors = dict(zip(AWARE_SIGNALS, PALETTE[:4], strict=True))
    for ax, task in zip(axes[:, 0], tasks, strict=True):
        sub = spots[spots.task == task]
        groups = list(dict.fromkeys(zip(sub.model, sub.arm, strict=True)))
        width = 0.8 / len(AWARE_SIGNALS)
        for g, (model, arm) in enumerate(groups):
            for k, sig in enumerate(AWARE_SIGNALS):
                r = sub[(sub.model == model) & (sub.arm == arm) & (sub.signal == sig)].iloc[0]
                if r.w_kind == "n/a":
                    continue
                x = g + (k - 1.5) * width
                ax.bar(x, r.w, width=width, color=sig_colors[sig], hatch=HATCH[r.w_kind],
                       edgecolor="white" if r.w_kind == "=" else "black", linewidth=0.4)
                if np.isfinite(r.w_lo):
                    ax.errorbar(x, r.w, yerr=[[max(r.w - r.w_lo, 0)], [max(r.w_hi - r.w, 0)]], color="black",
                                lw=0.7, capsize=1.5)
            if (sub[(sub.model == model) & (sub.arm == arm)].w_kind == "n/a").all():
                ax.text(g, 0.05, "n/a", ha="center", va="bottom", fontsize=6, color="0.4")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(range(len(groups)), [f"{m} · {a}" for m, a in groups], fontsize=7, rotation=30, ha="right")
        ax.set(ylabel="W (decades)", title=f"{task}: blind-spot width W = log10(V_acc / V_aware)")
    handles = [Patch(color=sig_colors[s], label=s) for s in AWARE_SIGNALS] + [
        Patch(facecolor="white", edgecolor="black", hatch=HATCH["≥"], label="lower bound (≥)"),
        Patch(facecolor="white", edgecolor="black", hatch=HATCH["≤"], label="upper bound (≤)")]
    fig.legend(handles=handles, loc="lower center", ncols=6, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def reliability_figure(rel: pd.DataFrame, rel_sum: pd.DataFrame, models: Sequence[str], murky_m: float) -> Figure:
    """Fig. 5: reliability curves of the internal confidence on t2, clean against the pooled murky levels.

    ``rel, rel_sum`` are :func:`~vlmrobust.analysis.visibility.readouts.pooled_reliability`
    (pooled at ``V <= murky_m``). One panel per model, one curve per pool
    (non-empty bins), its ECE and n in the legend, the diagonal dashed.
    """
    fig, axes = plt.subplots(1, len(models), figsize=(2.4 * len(models), 2.6), sharey=True, squeeze=False)
    for ax, m in zip(axes[0], models, strict=True):
        for pool, color in [("clean", PALETTE[0]), ("murky", PALETTE[3])]:
            g = rel[(rel.model == m) & (rel.pool == pool) & (rel.n > 0)]
            s = rel_sum[(rel_sum.model == m) & (rel_sum.pool == pool)]
            if g.empty:
                continue
            ax.plot(g.confidence, g.accuracy, "-o", ms=3, color=color,
                    label=f"{pool} (ECE {float(s.ece.iloc[0]):.2f}, n {int(s.n.iloc[0])})")
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.7, ls="--")
        ax.set(title=m, xlabel="internal confidence", xlim=(0, 1), ylim=(0, 1))
        ax.legend(fontsize=6, loc="upper left")
    axes[0, 0].set_ylabel("accuracy")
    fig.suptitle(f"Fig. 5: reliability of the internal confidence on t2, V <= {murky_m:g} m pooled (fog and water) "
                 "against clean", fontsize=9)
    fig.tight_layout()
    return fig


def abstain_figure(cube: SignalCube, means: np.ndarray, models: Sequence[str]) -> Figure:
    """Fig. 6: t2's abstain rate with the main wording (--) and "I don't know" (:), with accuracy (-), against V.

    One row per arm of ``cube``, one column per model; ``means`` is ``level_means(cube)``.
    """
    arms = list(dict.fromkeys(cube.cells.arm))
    fig, axes = plt.subplots(len(arms), len(models), figsize=(2.2 * len(models), 2.2 * len(arms)), sharex=True,
                             sharey=True, squeeze=False)
    for r, arm in enumerate(arms):
        for ax, m in zip(axes[r], models, strict=True):
            c = cell_index(cube, m, "t2", arm)
            for k, (sig, style) in enumerate([("accuracy", "-"), ("abstain", "--"), ("abstain2", ":")]):
                ax.plot(cube.levels_m, means[c, SIGNALS.index(sig), 1:], style, marker="o", ms=2, color=PALETTE[k],
                        label=sig)
            ax.set_xscale("log")
            ax.set_xlim(cube.levels_m[0] * 1.3, cube.levels_m[-1] / 1.3)
            ax.set_ylim(-0.03, 1.03)
            ax.set_title(f"{m} · {arm}", fontsize=7)
        axes[r, 0].set_ylabel("rate")
    for ax in axes[-1]:
        ax.set_xlabel("V (m)")
    axes[0, -1].legend(fontsize=6)
    fig.suptitle("Fig. 6: abstain rate on t2, main wording (--) and 'I don't know' (:), with accuracy", fontsize=9)
    fig.tight_layout()
    return fig


def transmittance_figure(acc_t: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str], *,
                         min_n: int = 5) -> Figure:
    """Accuracy against the boxed object's transmittance t (log), t2 and t3 side by side, chance dotted.

    ``acc_t`` is :func:`~vlmrobust.analysis.visibility.readouts.accuracy_vs_transmittance`;
    a line per model (``colors``) and arm (fog solid, water dashed) over the
    bins with at least ``min_n`` questions.
    """
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.0), sharey=True)
    for ax, task in zip(axes, ["t2", "t3"], strict=True):
        for m in models:
            for arm, style in [("fog", "-"), ("water", "--")]:
                g = acc_t[(acc_t.model == m) & (acc_t.task == task) & (acc_t.arm == arm) & (acc_t.n >= min_n)]
                ax.plot(g.t_mean, g.accuracy, style, marker="o", ms=2.5, color=colors[m],
                        label=f"{m} {arm}" if task == "t2" else None)
        ax.set_xscale("log")
        ax.axhline(0.25 if task == "t2" else 0.5, color="0.5", lw=0.8, ls=":")
        ax.set(xlabel="transmittance of the boxed object t (log)", title=f"{task}: accuracy against the object's t",
               ylim=(0, 1.02))
    axes[0].set_ylabel(f"accuracy (bins with n >= {min_n})")
    axes[0].legend(fontsize=6, ncols=2)
    fig.tight_layout()
    return fig


def imagenet_fog_figure(table7: pd.DataFrame, summary: pd.DataFrame, cube: SignalCube, means: np.ndarray,
                        models: Sequence[str], colors: Mapping[str, str]) -> Figure:
    """Fig. 7: each model's physical fog curve (t2) with the ImageNet-C severities placed at their median V_eq.

    ``table7`` is :func:`~vlmrobust.analysis.visibility.tables.fog_severity_table`
    (with its ``<m> acc.`` columns), ``summary`` the main
    :func:`~vlmrobust.analysis.visibility.readouts.condition_summary` (for the
    questions per severity). Each severity is a point at its median V_eq with
    its interquartile range in V and a binomial 95 % interval of the accuracy,
    the models spread a little along V; the x axis spans at least the paper's
    levels (from 250 m).
    """
    t2 = summary[summary.task == "t2"]
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for i, m in enumerate(models):
        shift = 1.025 ** (i - (len(models) - 1) / 2)  # spread the models' markers a little along V
        c = cell_index(cube, m, "t2", "fog")
        ax.plot(cube.levels_m, means[c, 0, 1:], "-", color=colors[m], lw=1, label=m)
        for _, r in table7.iterrows():
            acc = float(r[f"{m} acc."])
            n = int(t2[(t2.model == m) & (t2.perturbation == "fog+box") & (t2.level == r.severity)].n_questions.iloc[0])
            ci95 = 1.96 * math.sqrt(max(acc * (1 - acc), 1e-9) / n)  # binomial 95 % interval of the accuracy
            x = r.median_v_m * shift
            ax.errorbar(x, acc, xerr=[[x - r.iqr_lo_m * shift], [r.iqr_hi_m * shift - x]], yerr=ci95,
                        fmt="o", ms=3, color=colors[m], lw=0.7, capsize=1.5)
    for _, r in table7.iterrows():
        ax.annotate(f"s{int(r.severity)}", (r.median_v_m, 0.99 - 0.05 * (int(r.severity) % 2)), fontsize=6, ha="center")
    ax.set_xscale("log")
    ax.set_xlim(max(250.0, 2 * float(np.nanmax(table7.iqr_hi_m))) * 1.3, cube.levels_m[-1] / 1.3)  # paper's levels
    ax.set(xlabel="visibility V (m)", ylabel="t2 accuracy", ylim=(0, 1.05),
           title="Fig. 7: physical fog curve with ImageNet-C severities at their median V_eq")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
