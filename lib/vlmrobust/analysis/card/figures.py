"""Notebook 08's figures: the reliability cards side by side, and the lenses' agreement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["cards_figure", "agreement_figure", "REFERENCE_LINES", "RATIOS", "RATIO_CAP"]

#: A line a read-out is read against: 0 (no change, no width), 1 (the reference model's mCE).
REFERENCE_LINES = {"RAS": 0.0, "R_c": 0.0, "R_w": 0.0, "mCE": 1.0, "rel_mCE": 1.0, "RCI_mu": 0.0,
                   "W_internal_fog": 0.0, "W_abstain_fog": 0.0, "W_internal_water": 0.0, "W_abstain_water": 0.0,
                   "drift_pct": 100.0}
#: Read-outs that are ratios to a reference model, and the largest value their axis shows: a value or bound
#: beyond it is drawn at the edge as an arrow (a ratio of a few percent of errors can be huge on a resample).
RATIOS = ("mCE", "rel_mCE")
RATIO_CAP = 10.0


def cards_figure(long: pd.DataFrame, models: Sequence[str], colors: Mapping[str, str], *, reference: str = "",
                 ncols: int = 4, title: str = "") -> Figure:
    """One panel per read-out, the models in the same rows of every panel: a model's card is its row read
    across the panels. Dots are values, bars their 95 % intervals, open triangles a W that is only a bound
    (pointing to its open side); grey ticks a read-out's null where it has one (ECE of a calibrated model with
    the same confidences); the grey line is the read-out's reference (:data:`REFERENCE_LINES`); the title says
    which side is better. A ratio (:data:`RATIOS`) is drawn up to :data:`RATIO_CAP`; "n/a" marks a value the
    card refuses or cannot define."""
    readouts = list(dict.fromkeys(long.readout))
    nrows = int(np.ceil(len(readouts) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.1 * ncols, 0.23 * len(models) * nrows + 0.9 * nrows),
                             sharey=True, squeeze=False)
    y = np.arange(len(models))[::-1]
    for ax, key in zip(axes.flat, readouts, strict=False):
        g = long[long.readout == key].set_index("model").reindex(models)
        v, lo, hi = (g[c].to_numpy(float) for c in ("value", "lo", "hi"))
        null = g["null"].to_numpy(float) if "null" in g.columns else np.full(len(g), np.nan)
        over = np.zeros(len(g), bool)
        if key in RATIOS:  # values and bounds past the cap are drawn at the edge, the arrow saying so
            over = (np.nan_to_num(v, nan=0.0) > RATIO_CAP) | (np.nan_to_num(hi, nan=0.0) > RATIO_CAP)
            v, lo, hi = (np.where(a > RATIO_CAP, RATIO_CAP, a) for a in (v, lo, hi))
        kinds = g["kind"].fillna("=").to_numpy() if "kind" in g.columns else np.full(len(g), "=")
        ok = np.isfinite(lo) & np.isfinite(hi)
        for i, m in enumerate(models):
            c = colors.get(m, "0.3")
            if ok[i]:
                ax.plot([lo[i], hi[i]], [y[i]] * 2, color=c, lw=2, alpha=0.55, solid_capstyle="butt")
            if np.isfinite(null[i]):
                ax.plot(null[i], y[i], "|", color="0.45", ms=8, mew=1.2)
            if over[i]:
                ax.plot(RATIO_CAP, y[i], ">", color=c, ms=6, mfc="white", mew=1.2)
            if np.isfinite(v[i]):
                mk = {"≥": ">", "≤": "<"}.get(kinds[i], "o")  # a W that is only a bound points its open side
                ax.plot(v[i], y[i], mk, color=c, ms=5 if mk == "o" else 6,
                        mec="black" if m == reference else ("white" if mk == "o" else c),
                        mfc=c if mk == "o" else "white", mew=0.8 if mk == "o" else 1.2)
            else:
                ax.text(0.02, y[i], "n/a", transform=ax.get_yaxis_transform(), va="center", fontsize=7, color="0.5")
        if key in REFERENCE_LINES:
            ax.axvline(REFERENCE_LINES[key], color="0.6", lw=0.8, zorder=0)
        if key in RATIOS:
            finite = np.r_[v, lo, hi, REFERENCE_LINES.get(key, 1.0)]
            finite = finite[np.isfinite(finite)]
            ax.set_xlim(min(0.0, finite.min()) - 0.05, min(RATIO_CAP, finite.max()) * 1.08 + 0.05)
        label, better = g["label"].dropna().iloc[0], int(g["better"].dropna().iloc[0])
        ax.set_title(label, fontsize=8.5, loc="left")
        ax.set_xlabel({1: "higher is better →", -1: "← lower is better"}.get(better, ""), fontsize=7, color="0.35")
        ax.grid(axis="x", lw=0.4, alpha=0.5)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(readouts):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        names = [m.rstrip("/").rsplit("/", 1)[-1] if m.startswith(("/", ".")) else m for m in models]  # folders
        ax.set_yticks(y, [f"{n} (ref)" if m == reference else n for n, m in zip(names, models, strict=True)],
                      fontsize=7.5)
    fig.suptitle(title or "Reliability cards: one row per model, one panel per read-out (dots: values, bars: 95 % "
                 "intervals, open triangles: W bounds)", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    return fig


def agreement_figure(lenses: pd.DataFrame, agreement: pd.DataFrame, colors: Mapping[str, str],
                     labels: Mapping[str, str]) -> Figure:
    """One scatter per model-level pair of the agreement table, each model a dot in its colour, with
    Spearman's rho, its interval and the verdict in the title."""
    rows = agreement[agreement.across == "models"]
    if "units" in rows.columns and len(rows):  # the models each test ran on
        lenses = lenses[lenses.model.astype(str).isin(set(", ".join(rows["units"]).split(", ")))]
    fig, axes = plt.subplots(1, max(len(rows), 1), figsize=(3.4 * max(len(rows), 1), 3.3), squeeze=False)
    for ax, r in zip(axes.flat, rows.itertuples(index=False), strict=False):
        for m in lenses.model:
            row = lenses[lenses.model == m].iloc[0]
            ax.plot(row[r.x], row[r.y], "o", color=colors.get(m, "0.3"), ms=6, mec="white")
        verdict = {"reproduced": "agree", "not reproduced": "disagree"}.get(r.verdict, "undecided")
        ax.set_title(f"ρ {r.rho:+.2f} [{r.lo:+.2f}, {r.hi:+.2f}]: {verdict}", fontsize=9)
        ax.set_xlabel(labels.get(r.x, r.x), fontsize=8)
        ax.set_ylabel(labels.get(r.y, r.y), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(lw=0.4, alpha=0.5)
    handles = [plt.Line2D([], [], ls="", marker="o", color=colors.get(m, "0.3")) for m in lenses.model]
    fig.legend(handles, list(lenses.model), loc="lower center", ncol=min(6, len(handles)), fontsize=7,
               frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("Do the lenses agree? Each dot an evaluated model; permutation test, intervals from resampled "
                 "models", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
