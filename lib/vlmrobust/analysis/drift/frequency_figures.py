"""Figures of notebook 05's frequency experiments (seed 002 §6, App. F: Figs. 15-20).

Each function draws one figure from the small tables the notebook computes with
:mod:`.frequency` (flip curves, flip thresholds, spectral drift) and returns the
:class:`~matplotlib.figure.Figure`; the notebook saves it with
:func:`vlmrobust.figures.save`. The style is :mod:`vlmrobust.figures`'.

* :func:`noise_flip_rate` - Fig. 17: flip rate and signed margin against the noise std per band (F.1);
* :func:`per_sample_noise` - Fig. 16: the same for single samples over several noise draws;
* :func:`ablation_thresholds` - Fig. 18: flip thresholds of the frequency ablation (F.2);
* :func:`ablation_margins` - Fig. 19: signed margin of single samples along the cutoff;
* :func:`spectral_drift_by_band` - Fig. 15: the natural perturbations as spectral drift (F.4);
* :func:`pgd_radial_energy` - Fig. 20: radial energy of frequency-constrained PGD perturbations (F.3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...attack import EPS, MODES
from ...corrupt import frequency
from ...figures import PALETTE, image_axes, legend_outside
from .instability import label

__all__ = ["NOISE_BANDS", "ABLATIONS", "EPS_TICKS", "noise_flip_rate", "per_sample_noise", "ablation_thresholds",
           "ablation_margins", "spectral_drift_by_band", "pgd_radial_energy"]

#: The noise bands of F.1 (perturbations ``noise_<band>``), in the figures' colour order.
NOISE_BANDS = ("low", "high", "all")
#: The fine frequency ablations of F.2 and their legend names.
ABLATIONS = (("lowpass_fine", "low-pass keep"), ("highpass_fine", "high-pass keep"))
#: x ticks of the noise figures: the noise stds of :data:`vlmrobust.corrupt.frequency.NOISE_EPS`.
EPS_TICKS = (list(frequency.NOISE_EPS), [f"{e:g}" for e in frequency.NOISE_EPS])


def _noise_axes(ax) -> None:
    ax.set_xticks(*EPS_TICKS)
    ax.minorticks_off()


def noise_flip_rate(ncurve: pd.DataFrame, models: Sequence[str]) -> Figure:
    """Fig. 17: mean flip rate (left) and mean signed margin of the base option (right) against the noise std
    ε, one colour per band of :data:`NOISE_BANDS` and one line style per model (solid, dashed, dotted).

    ``ncurve``: :func:`~vlmrobust.analysis.drift.frequency.flip_curve` of the noise instances.
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 2.8))
    for i, m in enumerate(models):
        for j, band in enumerate(NOISE_BANDS):
            g = ncurve[(ncurve.model == m) & (ncurve.perturbation == f"noise_{band}")]
            style = dict(color=PALETTE[j], ls=["-", "--", ":"][i % 3], marker="o", ms=3)
            axes[0].plot(g.param, g.flip_rate, label=f"{band} · {m}", **style)
            axes[1].plot(g.param, g.signed_margin, **style)
    for ax, yl in zip(axes, ["mean flip rate", "mean signed margin of the base option"], strict=True):
        ax.set(xscale="log", xlabel="noise std ε (fraction of full scale)", ylabel=yl)
        _noise_axes(ax)
    axes[0].legend(fontsize=6)
    axes[0].set_title("Fig. 17 — flip rate by band")
    fig.tight_layout()
    return fig


def per_sample_noise(per_sample: pd.DataFrame, item_ids: Sequence[str], model: str, n_draws: int) -> Figure:
    """Fig. 16: per sample (rows), the flip rate over ``n_draws`` noise draws (left) and the mean signed margin
    (right, zero line) against ε, one colour per band.

    ``per_sample``: :func:`~vlmrobust.analysis.drift.frequency.flip_curve` by model, item and perturbation.
    """
    if not len(item_ids):
        raise ValueError("item_ids must name at least one sample")
    fig, axes = plt.subplots(len(item_ids), 2, figsize=(7.0, 2.3 * len(item_ids)), squeeze=False)
    for row, iid in zip(axes, item_ids, strict=True):
        for j, band in enumerate(NOISE_BANDS):
            g = per_sample[(per_sample.item_id == iid) & (per_sample.perturbation == f"noise_{band}")]
            row[0].plot(g.param, g.flip_rate, "-o", ms=3, color=PALETTE[j], label=band)
            row[1].plot(g.param, g.signed_margin, "-o", ms=3, color=PALETTE[j])
        row[0].set(xscale="log", ylabel=f"flip rate ({n_draws} draws)", title=f"{model} · {iid}",
                   ylim=(-0.05, 1.05))
        row[1].set(xscale="log", ylabel="mean signed margin")
        row[1].axhline(0, color="k", lw=0.8)
        for ax in row:
            _noise_axes(ax)
    for ax in axes[-1]:
        ax.set_xlabel("noise std ε")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def ablation_thresholds(thr: pd.DataFrame) -> Figure:
    """Fig. 18: histograms (log cutoff bins) of the smallest flipping cutoff (left, ``threshold``) and of the
    first flip from mild to harsh (right, ``first_flip``), low-pass and high-pass keep overlaid; items that
    never flip (NaN) are left out.

    ``thr``: :func:`~vlmrobust.analysis.drift.frequency.threshold_table`.
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 2.8), sharey=True)
    bins = np.geomspace(0.015, 1.6, 16)
    titles = ["smallest flipping cutoff", "first flip (mild → harsh)"]
    for ax, col, title in zip(axes, ["threshold", "first_flip"], titles, strict=True):
        for j, (pert, name) in enumerate(ABLATIONS):
            ax.hist(thr[thr.perturbation == pert][col].dropna(), bins=bins, alpha=0.6, color=PALETTE[j + 2],
                    label=name)
        ax.set(xscale="log", xlabel="cutoff c (fraction of Nyquist)", title=title)
    axes[0].set_ylabel("items × models")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def ablation_margins(acurve: pd.DataFrame, item_ids: Sequence[str], model: str) -> Figure:
    """Fig. 19: per sample (columns), the signed margin of the base option against the cutoff c under low-pass
    and high-pass keep, with the zero line (below it the answer has flipped).

    ``acurve``: :func:`~vlmrobust.analysis.drift.frequency.flip_curve` of ``model``'s ablation instances by
    model, item and perturbation.
    """
    if not len(item_ids):
        raise ValueError("item_ids must name at least one sample")
    ncols = min(len(item_ids), 3)  # wrapped so that the figure fits a page
    nrows = -(-len(item_ids) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.45 * ncols, 2.5 * nrows), squeeze=False, sharey=True)
    for ax in axes.ravel()[len(item_ids):]:
        ax.axis("off")
    for ax, iid in zip(axes.ravel(), item_ids, strict=False):
        for j, (pert, name) in enumerate(ABLATIONS):
            g = acurve[(acurve.item_id == iid) & (acurve.perturbation == pert)].sort_values("param")
            ax.plot(g.param, g.signed_margin, "-o", ms=3, color=PALETTE[[0, 3][j]], label=name)
        ax.axhline(0, color="k", lw=0.8)
        ax.set(xscale="log", xlabel="cutoff c", title=f"{model} · {iid}")
    for row in axes:
        row[0].set_ylabel("signed margin of the base option")
    fig.tight_layout()
    legend_outside(fig, where="below", ncol=2)
    return fig


def spectral_drift_by_band(sd: pd.DataFrame, order: Iterable[str]) -> Figure:
    """Fig. 15: mean relative band change ``D_band`` (log scale) per perturbation (in ``order``, those present)
    and band of :data:`vlmrobust.corrupt.frequency.DRIFT_BANDS`, over all instances (left) and the
    flip-inducing ones (right).

    ``sd``: :func:`~vlmrobust.analysis.drift.frequency.instance_spectral_drift`.
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 2.9), sharey=True)
    seen = set(sd.perturbation)
    perts = [p for p in order if p in seen]
    xb = np.arange(len(perts))
    for ax, (name, sub) in zip(axes, [("all instances", sd), ("flip-inducing", sd[sd.flip])], strict=True):
        m = sub.groupby("perturbation")[list(frequency.DRIFT_BANDS)].mean().reindex(perts)
        for j, band in enumerate(frequency.DRIFT_BANDS):
            ax.bar(xb + (j - 1) * 0.27, m[band], width=0.27, color=PALETTE[j], label=band)
        ax.set_xticks(xb, [label(p) for p in perts], rotation=40, ha="right")
        ax.set(title=name, yscale="log")
    axes[0].set_ylabel("relative band change D_band")
    fig.tight_layout()
    legend_outside(fig, where="below", title="band")
    return fig


def pgd_radial_energy(deltas: Mapping[str, Sequence[np.ndarray]], item_id: str, models: Sequence[str]) -> Figure:
    """Fig. 20: the mean radial power profile of the PGD perturbations δ of each mode of
    :data:`vlmrobust.attack.MODES` (left, the low and high bands shaded), then the first δ of each mode as an
    image (grey = 0, full range = ±ε).

    ``deltas``: mode -> the δ arrays (H x W x C, in [-ε, ε]) of the attacked items, the first of ``item_id``;
    ``models``: the attacked models (the title names the first, or "no model" when none was attacked, in which
    case the panels stay empty).
    """
    fig = plt.figure(figsize=(7.4, 2.8))
    grid = fig.add_gridspec(1, 2 + len(MODES), width_ratios=[2.6, 0.25] + [1.0] * len(MODES))
    axes = [fig.add_subplot(grid[0, 0])] + [fig.add_subplot(grid[0, 2 + k]) for k in range(len(MODES))]
    for ax in axes[1:]:
        image_axes(ax)
    for j, mode in enumerate([md for md in MODES if md in deltas]):
        prof = np.nanmean([frequency.radial_profile(d)[1] for d in deltas[mode]], axis=0)
        centres = frequency.radial_profile(deltas[mode][0])[0]
        axes[0].plot(centres, prof, "-o", ms=3, color=PALETTE[j], label=f"{mode} PGD")
        axes[j + 1].imshow(0.5 + deltas[mode][0] / (2 * EPS))
        image_axes(axes[j + 1], f"{mode}: δ", fontsize=8)
    axes[0].axvspan(0, 0.25, color="0.9", zorder=0)
    axes[0].axvspan(0.5, np.sqrt(2), color="0.95", zorder=0)
    axes[0].set(yscale="log", xlabel="radial frequency ρ (shaded: low and high bands)", ylabel="mean power of δ",
                title="Fig. 20 — radial energy")
    fig.suptitle(f"δ of {item_id}, {models[0] if len(models) else 'no model'}", x=0.99, ha="right", fontsize=8,
                 fontweight="normal")
    fig.subplots_adjust(top=0.78, bottom=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        legend_outside(fig, where="below", ncol=len(MODES))
    return fig
