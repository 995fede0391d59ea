"""Notebook 08's figures: the reliability cards side by side, and the lenses' agreement, each with the sentence
of finding the notebook prints under it (:func:`cards_finding`, :func:`agreement_finding`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

__all__ = ["cards_figure", "agreement_figure", "cards_finding", "agreement_finding", "REFERENCE_LINES", "RATIOS",
           "RATIO_CAP", "VERDICT_COLORS"]

#: A line a read-out is read against: 0 (no change, no width), 1 (the reference model's mCE).
REFERENCE_LINES = {"RAS": 0.0, "R_c": 0.0, "R_w": 0.0, "mCE": 1.0, "rel_mCE": 1.0, "RCI_mu": 0.0,
                   "W_internal_fog": 0.0, "W_abstain_fog": 0.0, "W_internal_water": 0.0, "W_abstain_water": 0.0,
                   "drift_pct": 100.0}
#: Read-outs that are ratios to a reference model, and the largest value their axis shows: a value or bound
#: beyond it is drawn at the edge as an arrow (a ratio of a few percent of errors can be huge on a resample).
RATIOS = ("mCE", "rel_mCE")
RATIO_CAP = 10.0
#: Colour of a value by where its 95 % interval lies against the read-out's reference line.
VERDICT_COLORS = {"better": "#0072B2", "worse": "#D55E00", "unclear": "0.6", "no line": "0.15"}
#: Blind-spot read-outs drawn two to a panel (internal confidence filled, abstain option open).
_W_PAIRS = {"W_internal_fog": ("W_abstain_fog", "W blind spot, fog"),
            "W_internal_water": ("W_abstain_water", "W blind spot, water")}
_BOUND = {"≥": ">", "≤": "<"}


def _verdict(key: str, better: int, lo: float, hi: float) -> str:
    """better / worse / unclear: the interval ``[lo, hi]`` clear of the reference line on one side, or not."""
    if key not in REFERENCE_LINES or not (np.isfinite(lo) and np.isfinite(hi)):
        return "no line" if key not in REFERENCE_LINES else "unclear"
    d = better * (np.array([lo, hi]) - REFERENCE_LINES[key])
    return "better" if (d > 0).all() else "worse" if (d < 0).all() else "unclear"


def _short(m: str) -> str:
    return m.rstrip("/").rsplit("/", 1)[-1] if m.startswith(("/", ".")) else m  # model folders by their name


def _draw(ax, g: pd.DataFrame, key: str, y: np.ndarray, *, filled: bool = True) -> np.ndarray:
    """One read-out's values (dots or bound triangles) and intervals on ``ax``; returns the values drawn."""
    v, lo, hi = (g[c].to_numpy(float) for c in ("value", "lo", "hi"))
    better = int(g["better"].dropna().iloc[0]) if g["better"].notna().any() else 0
    kinds = g["kind"].fillna("=").to_numpy() if "kind" in g.columns else np.full(len(g), "=")
    verdicts = [_verdict(key, better, a, b) for a, b in zip(lo, hi, strict=True)]
    over = np.zeros(len(g), bool)
    if key in RATIOS:  # values and bounds past the cap are drawn at the edge, the arrow saying so
        over = (np.nan_to_num(v, nan=0.0) > RATIO_CAP) | (np.nan_to_num(hi, nan=0.0) > RATIO_CAP)
        v, lo, hi = (np.where(a > RATIO_CAP, RATIO_CAP, a) for a in (v, lo, hi))
    for i in range(len(g)):
        c = VERDICT_COLORS[verdicts[i]]
        if np.isfinite(lo[i]) and np.isfinite(hi[i]):
            ax.plot([lo[i], hi[i]], [y[i]] * 2, color=c, lw=1.6, alpha=0.6, solid_capstyle="butt")
        if over[i]:
            ax.plot(RATIO_CAP, y[i], ">", color=c, ms=5, mfc="white", mew=1.0)
        if np.isfinite(v[i]):
            mk = _BOUND.get(kinds[i], "o")  # a W that is only a bound points its open side
            ax.plot(v[i], y[i], mk, color=c, ms=3.8 if mk == "o" else 4.5, mew=0.9,
                    mfc=c if filled else "white")
    return v


def cards_figure(long: pd.DataFrame, models: Sequence[str], *, reference: str = "", ncols: int = 4) -> Figure:
    """One panel per read-out, the models in the same striped rows of every panel: a model's card is its row read
    across the panels, a lens is one panel read down. Dots are values and bars their 95 % intervals, coloured by
    where the interval lies against the read-out's reference line (:data:`REFERENCE_LINES`, grey in the panel):
    clear of it on the better side, the worse side, or across it (:data:`VERDICT_COLORS`). The four W read-outs
    share two panels (internal confidence filled, abstain option open; a triangle is a W that is only a bound,
    pointing to its open side); grey ticks are a read-out's null (ECE of a calibrated model). A ratio
    (:data:`RATIOS`) is drawn up to :data:`RATIO_CAP`, a value or bound past it as an arrow at the edge. A read-out
    with no value for any model (refused on the run) gets no panel and is named below the figure; "n/a" marks a
    single value the card refuses or cannot define."""
    readouts = list(dict.fromkeys(long.readout))
    empty = [k for k in readouts if not long.loc[long.readout == k, "value"].notna().any()]
    paired = {a for a, (b, _) in _W_PAIRS.items() if a in readouts and b in readouts}
    panels = [k for k in readouts if k not in empty and k not in {_W_PAIRS[a][0] for a in paired}]
    nrows = int(np.ceil((len(panels) + 1) / ncols))  # one slot more for the key
    row_h = 0.12 * len(models) + 0.45
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, row_h * nrows), sharey=True, squeeze=False,
                             gridspec_kw={"hspace": 0.5, "wspace": 0.12})
    y = np.arange(len(models))[::-1]
    for ax, key in zip(axes.flat, panels, strict=False):
        for i, m in enumerate(models):  # stripes guide the eye along a model's row; the reference row is tinted
            if m == reference or i % 2 == 0:
                ax.axhspan(y[i] - 0.5, y[i] + 0.5, color="#FFF3C4" if m == reference else "0.93", lw=0, zorder=0)
        g = long[long.readout == key].set_index("model").reindex(models)
        pair = [(g, key, True)]
        if key in paired:
            b = _W_PAIRS[key][0]
            pair = [(g, key, True), (long[long.readout == b].set_index("model").reindex(models), b, False)]
        shown = []
        for j, (gg, kk, filled) in enumerate(pair):
            yy = y + (0.18 - 0.36 * j if len(pair) == 2 else 0.0)
            shown.append(_draw(ax, gg, kk, yy, filled=filled))
            null = gg["null"].to_numpy(float) if "null" in gg.columns else np.full(len(gg), np.nan)
            ax.plot(null, yy, "|", color="0.45", ms=6, mew=1.0, ls="")
        for i in np.flatnonzero(~np.isfinite(np.vstack(shown)).any(axis=0)):
            ax.text(0.02, y[i], "n/a", transform=ax.get_yaxis_transform(), va="center", fontsize=6, color="0.5")
        if key in REFERENCE_LINES:
            ax.axvline(REFERENCE_LINES[key], color="0.45", lw=0.8, zorder=1)
        if key in RATIOS:
            finite = np.r_[g.value, g.lo, g.hi, REFERENCE_LINES.get(key, 1.0)].astype(float)
            finite = finite[np.isfinite(finite)]
            ax.set_xlim(min(0.0, finite.min()) - 0.05, min(RATIO_CAP, finite.max()) * 1.08 + 0.05)
        better = int(g["better"].dropna().iloc[0]) if g["better"].notna().any() else 0
        title = _W_PAIRS[key][1] if key in paired else str(g["label"].dropna().iloc[0])
        ax.set_title(title, fontsize=7.5, loc="left", pad=3)
        ax.set_xlabel({1: "higher is better →", -1: "← lower is better"}.get(better, ""), fontsize=6, color="0.35",
                      labelpad=1)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.grid(axis="y", visible=False)
        ax.grid(axis="x", lw=0.4, alpha=0.5)
        ax.tick_params(labelsize=6, length=2, pad=1)
        ax.set_ylim(-0.6, len(models) - 0.4)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_yticks(y, [f"{_short(m)} (ref)" if m == reference else _short(m) for m in models], fontsize=6.5)
    keys = list(axes.flat[len(panels):])
    handles = [Line2D([], [], color=VERDICT_COLORS[k], marker="o", ms=4, lw=1.6, label=t) for k, t in
               [("better", "clear of the line, better"), ("worse", "clear of the line, worse"),
                ("unclear", "interval crosses the line"), ("no line", "no reference line")]]
    marks = [Line2D([], [], color="0.3", marker="o", ls="", ms=4, label="W internal (filled)"),
                Line2D([], [], color="0.3", marker="o", mfc="white", ls="", ms=4, label="W abstain (open)"),
                Line2D([], [], color="0.3", marker=">", mfc="white", ls="", ms=4, label="W only a bound"),
                Line2D([], [], color="0.45", marker="|", ls="", ms=6, label="null (calibrated)")]
    if len(keys) == 1:
        handles, marks = handles + marks, []
    keys[0].legend(handles=handles, loc="upper left", fontsize=6, handlelength=1.6, borderaxespad=0,
                   title="95 % interval vs grey line", title_fontsize=6, alignment="left")
    if marks:
        keys[1].legend(handles=marks, loc="upper left", fontsize=6, handlelength=1.6, borderaxespad=0)
    key_ax = keys[-1]
    if empty:
        labels = [str(long.loc[long.readout == k, "label"].dropna().iloc[0]) for k in empty]
        key_ax.text(0, 0.02, "no panel (refused on this run):\n" + ", ".join(labels), transform=key_ax.transAxes,
                    fontsize=6, color="0.35", va="bottom")
    return fig


def cards_finding(long: pd.DataFrame, models: Sequence[str], reference: str) -> str:
    """The cards' sentence of finding: how many models are clear of the reference line on the better and the
    worse side, counted over the read-outs that have one, and the model with the most clear-worse read-outs."""
    rows = long[long.readout.isin(REFERENCE_LINES) & long.value.notna() & (long.model != reference)]
    v = pd.Series([_verdict(r.readout, int(r.better), r.lo, r.hi) for r in rows.itertuples()], index=rows.index)
    worse = v[v == "worse"].groupby(rows.model).size().reindex(list(models), fill_value=0)
    n_keys = rows.readout.nunique()
    mce = long[(long.readout == "mCE") & (long.model != reference)]
    below, above = int((mce.hi < 1).sum()), int((mce.lo > 1).sum())
    return (f"Of {len(v)} model read-outs with a reference line ({n_keys} read-outs, the reference {reference} left "
            f"out), {int((v == 'better').sum())} are clear of it on the better side, {int((v == 'worse').sum())} on "
            f"the worse side and {int((v == 'unclear').sum())} cross it; {worse.idxmax()} is clearly worse on the "
            f"most ({int(worse.max())}). mCE: {below} of {len(mce)} models lie clearly below the reference's 1 and "
            f"{above} clearly above it.")


def agreement_figure(lenses: pd.DataFrame, agreement: pd.DataFrame, styles: Mapping[str, Mapping],
                     labels: Mapping[str, str]) -> Figure:
    """One scatter per model-level pair of the agreement table (two to a row), each model a point in its
    :func:`vlmrobust.figures.model_styles` style, Spearman's rho with its interval and the verdict in the panel."""
    rows = agreement[agreement.across == "models"]
    if "units" in rows.columns and len(rows):  # the models each test ran on
        lenses = lenses[lenses.model.astype(str).isin(set(", ".join(rows["units"]).split(", ")))]
    n = max(len(rows), 1)
    ncol = min(2, n)
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.0, 2.5 * nrow), squeeze=False)
    for ax, r in zip(axes.flat, rows.itertuples(index=False), strict=False):
        for m in lenses.model:
            row = lenses[lenses.model == m].iloc[0]
            st = dict(styles.get(m, {"color": "0.3", "marker": "o"}))
            st.pop("linestyle", None)
            ax.plot(row[r.x], row[r.y], ls="", ms=6, label=str(m), **st)
        verdict = {"reproduced": "agree", "not reproduced": "disagree"}.get(r.verdict, "undecided")
        ax.set_title(f"ρ {r.rho:+.2f} [{r.lo:+.2f}, {r.hi:+.2f}]: {verdict}", fontsize=8)
        ax.set_xlabel(labels.get(r.x, r.x), fontsize=8)
        ax.set_ylabel(labels.get(r.y, r.y), fontsize=8)
        ax.margins(0.15)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(rows):]:
        ax.axis("off")
    fig.tight_layout()
    from ...figures import legend_outside

    legend_outside(fig, where="right", fontsize=7, title="evaluated model", title_fontsize=7)
    return fig


def agreement_finding(agreement: pd.DataFrame) -> str:
    """The agreement figure's sentence of finding: the decided rows, and the strongest ρ against its bar."""
    rows = agreement[agreement.across == "models"]
    if not len(rows):
        return "No model-level comparison was run."
    decided = rows[rows.verdict != "undecided"]
    if not rows.rho.notna().any():
        return (f"No model-level ρ could be computed over {int(rows.n_units.max())} models (too few, or a constant "
                "read-out): nothing is decided.")
    top = rows.loc[rows.rho.abs().idxmax()]
    bar = f"the bar of {top.crit:.2f}" if np.isfinite(top.crit) else "no bar (too few units)"
    side = "clears" if np.isfinite(top.crit) and abs(top.rho) >= top.crit else "stays below"
    return (f"{len(decided)} of {len(rows)} model-level comparisons are decided on {int(rows.n_units.max())} "
            f"models; the strongest, {top.x} against {top.y}, has ρ {top.rho:+.2f} and {side} {bar}.")
