"""Seed 000's four numbered observations (§VII-B to §VII-E) checked on the tables of notebook 04.

Each check returns a :class:`~vlmrobust.stats.claims.Claim`; :func:`claims_table`
stacks the four into the notebook's observations table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.claims import Claim, claims_frame

__all__ = ["obs1_stability_hides_instability", "obs2_gains_not_structural", "obs3_paths_differ_in_support",
           "obs4_severity_helps_wrong", "claims_table"]


def _state(t3: pd.DataFrame, state: str, col: str) -> float:
    row = t3[t3["state"].astype(str) == state]
    return float(row[col].iloc[0]) if len(row) else float("nan")


def obs1_stability_hides_instability(t3: pd.DataFrame, t6: pd.DataFrame) -> Claim:
    """Obs. 1: still-correct pairs lose support (mean RAS of Q_cc < 0) and response ranks differ from RAS ranks.

    ``t3``: pooled :func:`~vlmrobust.analysis.ras.table_iii`; ``t6``: :func:`~vlmrobust.analysis.ras.table_vi`.
    """
    share, ras_cc, dc = (_state(t3, "cc", c) for c in ("share", "RAS", "dC"))
    shifts = t6[["abs_dr", "delta_acc_dr", "rel_rob_dr"]].to_numpy()
    n_shift = int((shifts != 0).sum())
    ok = None if not np.isfinite(ras_cc) else bool(ras_cc < 0 and n_shift > 0)
    return Claim(
        "1. answer stability can hide structural instability",
        "Q_cc (39.9 % of pairs) keeps its answer yet has mean RAS −0.019 (ΔC +0.019); response and RAS ranks "
        "differ (Tables III, VI)",
        "mean RAS of still-correct pairs (Q_cc) < 0, and some response rank differs from the RAS rank",
        f"Q_cc: share {share:.1%}, mean RAS {ras_cc:+.4f}, mean ΔC {dc:+.4f}; non-zero rank shifts: "
        f"{n_shift} of {shifts.size}",
        ok)


def obs2_gains_not_structural(t3: pd.DataFrame, t2: pd.DataFrame) -> Claim:
    """Obs. 2: wrong→correct pairs gain (Q_wc RAS > 0) while every model's R_c < 0, and mixed cells occur.

    ``t2``: :func:`~vlmrobust.analysis.ras.table_ii` (columns ``R_c``, ``R_w``, ``mixed_pct``).
    """
    ras_wc, share_wc = _state(t3, "wc", "RAS"), _state(t3, "wc", "share")
    r_c, r_w, mixed = t2["R_c"].astype(float), t2["R_w"].astype(float), t2["mixed_pct"].astype(float)
    decidable = np.isfinite(ras_wc) and r_c.notna().all() and len(t2)
    ok = bool(ras_wc > 0 and (r_c < 0).all() and (mixed > 0).any()) if decidable else None
    return Claim(
        "2. apparent accuracy gains are not always structural gains",
        "Q_wc mean RAS +0.462 while R_c < 0 for every model; mixed cells (R_c < 0, R_w > 0) are common "
        "(Tables II, III)",
        "Q_wc mean RAS > 0, R_c < 0 for every model, and some corruption × severity cell is mixed",
        f"Q_wc RAS {ras_wc:+.3f} (share {share_wc:.1%}); R_c {r_c.min():+.3f}..{r_c.max():+.3f}; "
        f"R_w {r_w.min():+.3f}..{r_w.max():+.3f}; mixed cells {mixed.min():.0f}–{mixed.max():.0f} %",
        ok)


LOSS = ("transient loss", "persistent loss")
CORRECTION = ("transient correction", "persistent correction")


def obs3_paths_differ_in_support(traj: pd.DataFrame, tsum: pd.DataFrame, *, min_n: int = 5,
                                 spread: float = 0.02) -> Claim:
    """Obs. 3: the same answer path carries different support.

    Some loss trajectories are **overconfident** (trajectory medians ΔS̃ < 0 and
    ΔC̃ > 0: alignment worse while the distribution sharpens, the overconfidence
    sign pattern of §VII-C), some correction trajectories are **hesitant**
    (ΔS̃ > 0 and ΔC̃ < 0), and the class RAS of some answer-changing class differs
    between models by more than ``spread`` (classes with at least ``min_n``
    trajectories per model). ``traj``/``tsum``: :func:`~vlmrobust.analysis.ras.trajectories`
    and :func:`~vlmrobust.analysis.ras.trajectory_summary`.
    """
    klass = traj["klass"].astype(str)
    loss, corr = traj[klass.isin(LOSS)], traj[klass.isin(CORRECTION)]
    over = float(((loss["dS_med"] < 0) & (loss["dC_med"] > 0)).mean()) if len(loss) else float("nan")
    hes = float(((corr["dS_med"] > 0) & (corr["dC_med"] < 0)).mean()) if len(corr) else float("nan")
    sub = tsum[tsum["klass"].astype(str).isin(LOSS + CORRECTION) & (tsum["n"] >= min_n)]
    spreads = sub.groupby(sub["klass"].astype(str))["RAS"].agg(lambda s: s.max() - s.min())
    ok = None if not (len(loss) and len(corr)) else bool(over > 0 and hes > 0 and len(spreads)
                                                        and spreads.max() > spread)
    return Claim(
        "3. same answer paths can differ in support",
        "within one trajectory class: overconfident answer loss (Gemma3), hesitant persistent correction "
        "(DeepSeek), class RAS differing across models (Fig. 6)",
        f"some loss trajectories overconfident (ΔS̃ < 0 and ΔC̃ > 0), some correction trajectories hesitant "
        f"(ΔS̃ > 0 and ΔC̃ < 0), and a class RAS spread across models > {spread}",
        f"overconfident share of loss trajectories {over:.1%}; hesitant share of correction trajectories "
        f"{hes:.1%}; class-RAS spread across models: "
        + (", ".join(f"{k} {v:.3f}" for k, v in spreads.items()) or "no class with enough trajectories"),
        ok)


def obs4_severity_helps_wrong(cells: pd.DataFrame) -> Claim:
    """Obs. 4: with severity R_w rises while R_c falls, and |R_w| stays below |R_c|.

    Slopes are least-squares fits of the per-severity means of the cells of
    :func:`~vlmrobust.analysis.ras.state_effects` (columns ``level``, ``R_c``, ``R_w``).
    """
    by = cells.groupby("level")[["R_c", "R_w"]].mean().dropna()
    if len(by) < 2:
        return Claim("4. stronger corruption can make wrong answers look better",
                     "R_c more negative and R_w more positive with severity, |R_w| < |R_c| (Fig. 7)",
                     "slope of R_w > 0, slope of R_c < 0, |R_w| < |R_c| at every severity",
                     f"{len(by)} severity level(s) with both sources: a slope needs two", None)
    x = by.index.to_numpy(dtype=float)
    slope_c, slope_w = float(np.polyfit(x, by["R_c"], 1)[0]), float(np.polyfit(x, by["R_w"], 1)[0])
    ok = bool(slope_w > 0 and slope_c < 0 and (by["R_w"].abs() < by["R_c"].abs()).all())
    return Claim(
        "4. stronger corruption can make wrong answers look better",
        "R_c grows more negative with severity while R_w becomes more positive but stays smaller (Fig. 7)",
        "slope of R_w > 0, slope of R_c < 0, |R_w| < |R_c| at every severity (cell means per severity)",
        "R_c by severity " + " ".join(f"{v:+.3f}" for v in by["R_c"]) + f" (slope {slope_c:+.4f}); R_w "
        + " ".join(f"{v:+.3f}" for v in by["R_w"]) + f" (slope {slope_w:+.4f})",
        ok)


def claims_table(t2: pd.DataFrame, t3: pd.DataFrame, t6: pd.DataFrame, traj: pd.DataFrame,
                         tsum: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Seed 000's four observations checked on a run's tables (notebook 04)."""
    return claims_frame([
        obs1_stability_hides_instability(t3, t6),
        obs2_gains_not_structural(t3, t2),
        obs3_paths_differ_in_support(traj, tsum),
        obs4_severity_helps_wrong(cells),
    ])
