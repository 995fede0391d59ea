"""Seed 002's findings (i)-(v) (§1) checked on a run's tables (notebook 05).

Each check returns a :class:`~vlmrobust.stats.observations.Check`; ``reproduced``
is ``None`` when the run holds no data to decide (e.g. no size ladder in the zoo).
The rule of each check is stated in its ``check`` text and docstring. The inputs of
finding (i) beside the tables: :func:`unflipped_drift` and :func:`control_quantiles`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.observations import Check, observations_table
from .representation import control_values, with_flips

__all__ = ["obs_i_disconnect", "obs_ii_overlays_most_disruptive", "obs_iii_overlay_drift_near_control",
           "obs_iv_scale", "obs_v_errors_random_but_conservative", "same_answer_observations", "unflipped_drift",
           "control_quantiles"]

_GEOMETRIC = ("translate", "pad_crop", "scale", "scale_pad", "rotate")


def obs_i_disconnect(t1: pd.DataFrame, kept: pd.DataFrame, ctrl_q: dict[str, float], min_iv: float = 0.1
                     ) -> Check:
    """(i): union IV >= ``min_iv`` for every model, and some instance keeps its answer while drifting at
    least as far as the nearest 5 % of unrelated pairs (``ctrl_q``: model -> 5th percentile of the control).

    ``t1``: :func:`~vlmrobust.analysis.drift.instability.ifr_iv`; ``kept``: drift rows of
    unflipped instances (columns ``model``, ``d``: the drift of the checked regime).
    """
    union = t1[t1["perturbation"] == "any"].set_index("model")["IV"]
    far = {m: float((g["d"] >= ctrl_q.get(m, np.inf)).mean()) for m, g in kept.groupby("model")}
    ok = None if union.empty or not far else bool((union >= min_iv).all() and all(v > 0 for v in far.values()))
    return Check(
        "(i) stable answers hide unstable representations",
        "37.6 % of images flip under at least one perturbation; answers are kept under substantial drift",
        f"union IV >= {min_iv} for every model, and some kept-answer instances drift as far as the closest 5 % "
        "of unrelated image pairs",
        "; ".join(f"{m}: union IV {union.get(m, np.nan):.3f}, {100 * far.get(m, np.nan):.1f} % of kept answers "
                  "drift that far" for m in union.index),
        ok)


def obs_ii_overlays_most_disruptive(t1: pd.DataFrame) -> Check:
    """(ii): TextOverlay has the highest IFR of seed 002's perturbations, for every model."""
    rows = []
    oks = []
    for m, g in t1.groupby("model", sort=False):
        s = g.set_index("perturbation")["IFR"]
        if "text_overlay" not in s or not any(p in s for p in _GEOMETRIC):
            continue
        geo = s[[p for p in _GEOMETRIC if p in s]]
        oks.append(bool(s["text_overlay"] > geo.max()))
        rows.append(f"{m}: TextOverlay {s['text_overlay']:.3f}, geometric {geo.min():.3f}-{geo.max():.3f}")
    return Check("(ii) text overlays are the most disruptive perturbation",
                 "TextOverlay IFR 19.2 %, geometric perturbations 6-8 % (Table 1)",
                 "TextOverlay IFR above every geometric perturbation's, for every model",
                 "; ".join(rows) or "no TextOverlay rows", (all(oks) if oks else None))


def obs_iii_overlay_drift_near_control(t4: pd.DataFrame) -> Check:
    """(iii): TextOverlay's drift is the closest to the control (largest Cohen's d) for every model."""
    rows, oks = [], []
    for m, g in t4[t4["perturbation"] != "any"].groupby("model", sort=False):
        s = g.set_index("perturbation")["d"].dropna()
        if "text_overlay" not in s or len(s) < 2:
            continue
        oks.append(bool(s.idxmax() == "text_overlay"))
        rows.append(f"{m}: d TextOverlay {s['text_overlay']:+.2f}, others {s.drop('text_overlay').min():+.2f} to "
                    f"{s.drop('text_overlay').max():+.2f}; drift {g.set_index('perturbation').pct_mean.get('text_overlay', np.nan):.0f} % of control")
    return Check("(iii) text overlays move representations toward unrelated images",
                 "ans_mcq_free: TextOverlay d = -0.34 (78 % of control), geometric d <= -3.5 (Table 4)",
                 "TextOverlay has the largest (closest to 0) Cohen's d of all perturbations, for every model",
                 "; ".join(rows) or "no drift rows", (all(oks) if oks else None))


def obs_iv_scale(t5: pd.DataFrame, family: str = "") -> Check:
    """(iv): along a size ladder (rows ordered by size), base accuracy rises while TextOverlay IFR and union IV
    do not fall (largest vs smallest). ``None`` with fewer than two sizes."""
    t = t5.dropna(subset=["size"]).sort_values("size")
    if len(t) < 2 or t["size"].nunique() < 2:
        return Check("(iv) robustness does not improve with scale",
                     "larger models: higher accuracy, equal or higher flip rates (Table 5)",
                     "largest vs smallest model of a ladder: accuracy up, TextOverlay IFR and union IV not down",
                     f"needs a size ladder; the zoo holds {t['size'].nunique()} size(s){family}", None)
    a, b = t.iloc[0], t.iloc[-1]
    ok = bool(b.base_acc > a.base_acc and b["TextOverlay IFR"] >= a["TextOverlay IFR"] and b["union IV"] >= a["union IV"])
    return Check("(iv) robustness does not improve with scale",
                 "larger models: higher accuracy, equal or higher flip rates (Table 5)",
                 "largest vs smallest model of a ladder: accuracy up, TextOverlay IFR and union IV not down",
                 f"{a.model} -> {b.model}: accuracy {a.base_acc:.1f} -> {b.base_acc:.1f} %, TextOverlay IFR "
                 f"{a['TextOverlay IFR']:.3f} -> {b['TextOverlay IFR']:.3f}, union IV {a['union IV']:.3f} -> "
                 f"{b['union IV']:.3f}", ok)


def obs_v_errors_random_but_conservative(t2: pd.DataFrame, pope: pd.DataFrame, shift: pd.DataFrame) -> Check:
    """(v): on multiple choice, perturbations move answers both ways (R->W and W->R in the union, every model);
    on yes/no, they are conservative: FP->TN rate above TN->FP rate and clean false positives' margin
    ``s_Yes - s_No`` falls on average (pooled over perturbations and models)."""
    union = t2[t2["perturbation"] == "any"]
    both = bool(((union["R→W"] > 0) & (union["W→R"] > 0)).all()) if len(union) else None
    if pope.empty:
        return Check("(v) errors look random on reasoning, conservative on hallucination",
                     "reasoning: random errors; POPE: perturbations reduce false positives (flip margin -0.96)",
                     "R->W and W->R both occur; FP->TN rate > TN->FP rate; clean FPs' margin falls",
                     "no yes/no items", None)
    fp_tn = float(pope["FP→TN"].sum() / pope["n_FP"].sum()) if pope["n_FP"].sum() else np.nan
    tn_fp = float(pope["TN→FP"].sum() / pope["n_TN"].sum()) if pope["n_TN"].sum() else np.nan
    mshift = float((shift["shift"] * shift["n_fp"]).sum() / shift["n_fp"].sum()) if shift["n_fp"].sum() else np.nan
    decidable = both is not None and np.isfinite(mshift) and np.isfinite(fp_tn) and np.isfinite(tn_fp)
    ok = bool(both and fp_tn > tn_fp and mshift < 0) if decidable else None
    return Check("(v) errors look random on reasoning, conservative on hallucination",
                 "reasoning: random errors; POPE: perturbations reduce false positives (flip margin -0.96)",
                 "R->W and W->R both occur (union, every model); FP->TN rate > TN->FP rate; clean false positives' "
                 "mean margin s_Yes - s_No falls",
                 f"R->W and W->R both > 0: {both}; FP->TN rate {fp_tn:.3f} vs TN->FP rate {tn_fp:.3f}; clean FPs' "
                 f"margin shift {mshift:+.3f}", ok)


def same_answer_observations(t1, kept, ctrl_q, t4, t5, t2, pope, shift, family: str = "") -> pd.DataFrame:
    """The observations table of findings (i)-(v)."""
    return observations_table([obs_i_disconnect(t1, kept, ctrl_q), obs_ii_overlays_most_disruptive(t1),
                               obs_iii_overlay_drift_near_control(t4), obs_iv_scale(t5, family),
                               obs_v_errors_random_but_conservative(t2, pope, shift)])


def unflipped_drift(probes: pd.DataFrame, pairs: pd.DataFrame, regime: str) -> pd.DataFrame:
    """The ``kept`` input of :func:`obs_i_disconnect`: drift rows of ``regime`` whose instance keeps its answer
    (``flip`` False; instances without a flip pair are left out), the cosine drift renamed ``d``."""
    kept = with_flips(probes[probes["regime"] == regime], pairs)
    return kept[kept["flip"] == False].rename(columns={"cos": "d"})  # noqa: E712 (a boolean column with NaN)


def control_quantiles(probes: pd.DataFrame, regime: str, models, q: float = 0.05) -> dict[str, float]:
    """The ``ctrl_q`` input of :func:`obs_i_disconnect`: per model, the ``q`` quantile (default the 5th
    percentile) of its cosine control distances of ``regime``."""
    return {m: float(np.quantile(control_values(probes, regime, "cos", model=m), q)) for m in models}
