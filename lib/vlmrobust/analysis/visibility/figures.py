"""Seed 003's figures (notebook 06): Figs. 2–8 and accuracy against the boxed object's transmittance.

Each function takes the small tables the notebook has already computed — the
signal cube and its level means
(:func:`~vlmrobust.analysis.visibility.blind_spot.signal_cube`,
:func:`~vlmrobust.analysis.visibility.blind_spot.level_means`), the blind-spot
table, the reliability and transmittance tables of
:mod:`~vlmrobust.analysis.visibility.readouts`, Table VII of
:mod:`~vlmrobust.analysis.visibility.tables` — draws with the shared style of
:mod:`vlmrobust.figures` (models told apart by colour, marker and dashes,
:func:`vlmrobust.figures.model_styles`; legends off the data; page-wide grids)
and returns the matplotlib Figure; the notebook saves it with
:func:`vlmrobust.figures.save`. Nothing here computes a result.

This module is the face: it draws Figs. 2, 3 and 8 and re-exports the others.

* :func:`scene_figure` — Fig. 2 analogue: one scene under every degradation;
* :func:`signals_figure` — Figs. 3 (t2) and 8 (t3): every signal against V, one panel per signal and arm;
* :func:`~.figures_width.blind_spot_figure` — Fig. 4: W per model with its intervals and bounds;
* :func:`~.figures_panels.reliability_figure` — Fig. 5: reliability, murky levels against clean, per model;
* :func:`~.figures_panels.abstain_figure` — Fig. 6: the abstain rate under two wordings, with accuracy;
* :func:`~.figures_panels.transmittance_figure` — accuracy against the boxed object's own transmittance;
* :func:`~.figures_width.imagenet_fog_figure` — Fig. 7: the fog curve with ImageNet-C severities at their V_eq;
* :mod:`.figures_findings` — the sentence of finding printed after each figure, computed from its tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ... import corrupt
from ... import figures as vfigs
from ...figures import image_axes
from .blind_spot import SIGNALS, SignalCube
from .figures_base import PAGE_W, metre_axis
from .figures_findings import (
    abstain_finding,
    blind_spot_finding,
    change,
    imagenet_fog_finding,
    reliability_finding,
    scene_finding,
    signals_finding,
    transmittance_finding,
    trend,
)
from .figures_panels import abstain_figure, reliability_figure, transmittance_figure
from .figures_width import SIGNAL_STYLES, blind_spot_figure, imagenet_fog_figure

__all__ = ["SIGNAL_STYLES", "scene_figure", "signals_figure", "blind_spot_figure",
           "reliability_figure", "abstain_figure", "transmittance_figure", "imagenet_fog_figure", "trend", "change",
           "scene_finding", "signals_finding", "blind_spot_finding", "reliability_finding", "abstain_finding",
           "transmittance_finding", "imagenet_fog_finding"]


def scene_figure(image: np.ndarray, depth: np.ndarray, key: str, shuffled_image: np.ndarray, *, seed: int = 0,
                 levels: Sequence[int] = (1, 3, 5, 6, 7, 8), t_levels_m: Sequence[float] = (62.5, 7.8125)) -> Figure:
    """Fig. 2 analogue: one boxed scene clean, its depth and transmittance, and under every degradation.

    Top row: the clean image, its ray depth (m, with a colour bar) and the
    transmittance ``t`` at each of ``t_levels_m`` (with a colour bar). Then one
    row each for physical fog and water at ``levels`` (of ``fog_physical+box``
    and ``underwater+box``, titled by V in metres, three significant digits),
    ImageNet-C fog severities 1–5 (seeded with ``seed`` and ``key``, the scene
    id) and the controls (sky-only fog and water, blank, and ``shuffled_image``,
    the shuffled control's image). The ``+box`` perturbations draw the red box
    after degrading.
    """
    levels = list(levels)
    if len(levels) > 6 or len(t_levels_m) > 4:
        raise ValueError(f"at most 6 levels and 4 transmittance panels, got {len(levels)} and {len(t_levels_m)}")
    rows = [("fog", "fog_physical+box", levels), ("water", "underwater+box", levels),
            ("ImageNet-C fog", "fog+box", [1, 2, 3, 4, 5]),
            ("controls", None, ["sky_only_fog+box", "sky_only_water+box", "blank+box", "shuffled"])]
    fig, axes = plt.subplots(len(rows) + 1, 6, figsize=(PAGE_W, 1.32 * (len(rows) + 1)))
    axes[0, 0].imshow(image)
    image_axes(axes[0, 0], "clean", fontsize=8)
    shown = axes[0, 1].imshow(np.where(np.isfinite(depth), depth, np.nan), cmap="viridis")
    fig.colorbar(shown, ax=axes[0, 1], fraction=0.046, pad=0.04)
    image_axes(axes[0, 1], "depth (m)", fontsize=8)
    t_shown = None
    for i, v in enumerate(t_levels_m):
        ax = axes[0, 2 + i]
        t_shown = ax.imshow(corrupt.transmittance(depth, v), vmin=0, vmax=1, cmap="gray")
        image_axes(ax, f"t at V = {v:.3g} m", fontsize=8)
    for ax in axes[0, 2 + len(t_levels_m):]:
        ax.axis("off")
    if t_shown is not None:
        fig.colorbar(t_shown, ax=axes[0, 1 + len(t_levels_m)], fraction=0.046, pad=0.04)
    for r, (label, name, cols) in enumerate(rows, start=1):
        for c in range(6):
            ax = axes[r, c]
            if c >= len(cols):
                ax.axis("off")
                continue
            if name is None:
                nm = cols[c]
                im = shuffled_image if nm == "shuffled" else corrupt.apply(image, nm, 1, depth=depth, key=key)
                image_axes(ax, nm.replace("+box", "").replace("_", " "), fontsize=8)
            else:
                lv = cols[c]
                im = corrupt.apply(image, name, lv, seed=seed, key=key, depth=depth)
                p = corrupt.info(name).param(lv)
                image_axes(ax, f"{label} {p:.3g} m" if label != "ImageNet-C fog" else f"ImageNet-C s{lv}",
                           fontsize=8)
            ax.imshow(im)
    fig.tight_layout(h_pad=0.6, w_pad=0.3)
    return fig


def signals_figure(cube: SignalCube, means: np.ndarray, models: Sequence[str], task: str,
                   title: str | None = None) -> Figure:
    """Figs. 3 and 8: each signal's mean against V for ``task``, one row per signal and one column per arm.

    ``means`` is ``level_means(cube)``. A line per model over the levels, told
    apart by :func:`vlmrobust.figures.model_styles` of ``models`` (colour,
    marker and dashes; the legend below the panels), its clean value the same
    marker at the ``clean`` tick left of the clearest level; chance dotted for
    accuracy and both confidences; a panel without data says ``n/a``
    (``n/a: not parseable`` for the verbalized confidence). V is in metres on
    a log axis, murkier to the right.
    """
    if not (cube.cells.task == task).any():
        raise ValueError(f"the signal cube has no cell of task {task!r}")
    styles = vfigs.model_styles(list(models))
    arms = list(dict.fromkeys(cube.cells.arm))
    fig, axes = plt.subplots(len(SIGNALS), len(arms), figsize=(PAGE_W, 1.45 * len(SIGNALS) + 0.5), sharex=True,
                             sharey=True, squeeze=False)
    x_clean = cube.levels_m[0] * 3.0
    chance = cube.chance[cube.cells.task.to_numpy() == task][0]
    for col, arm in enumerate(arms):
        for k, sig in enumerate(SIGNALS):
            ax = axes[k, col]
            drawn = 0
            for m in models:
                hit = np.flatnonzero((cube.cells.model == m).to_numpy() & (cube.cells.task == task).to_numpy()
                                     & (cube.cells.arm == arm).to_numpy())
                if not len(hit) or not np.isfinite(means[hit[0], k]).any():
                    continue
                c, st = hit[0], styles[m]
                ax.plot(cube.levels_m, means[c, k, 1:], ms=3, lw=1.0, label=m, **st)
                ax.plot([x_clean], [means[c, k, 0]], ms=3, ls="none", color=st["color"], marker=st["marker"])
                drawn += 1
            if not drawn:
                ax.text(0.5, 0.5, "n/a: not parseable" if sig == "verbal" else "n/a", transform=ax.transAxes,
                        ha="center", va="center", fontsize=8, color="0.4")
            elif sig in ("accuracy", "internal", "verbal"):
                ax.axhline(chance, color="0.5", lw=0.8, ls=":", label="_chance")
            ax.axvline(x_clean / 1.75, color="0.75", lw=0.6, label="_clean")
            metre_axis(ax, cube.levels_m, clean_x=x_clean)
            ax.set_ylim(-0.04, 1.04)
            if k == 0:
                ax.set_title(arm)
            if col == 0:
                ax.set_ylabel(sig)
        axes[-1, col].set_xlabel("visibility V (m)")
    vfigs.legend_outside(fig, where="below", ncol=6, fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout(h_pad=0.5)
    return fig
