"""Seed 003's controls and diagnostics checked on a run: ImageNet-C fog in metres, image controls, wordings,
and the testbed's control organisms judged by what they are built to do.

Decisions as in :mod:`vlmrobust.analysis.visibility.means` (a 95 % bootstrap
interval against a region from the paper). Per-scene condition means come from
:func:`~vlmrobust.analysis.visibility.means.condition_means` (perturbation
names: ``clean``, ``fog+box`` severities 1-5, ``blank+box``, ``shuffled``,
``sky_only_fog+box``); Table VII per image from
:func:`~vlmrobust.analysis.visibility.readouts.imagenet_fog_visibility`.

**Control organisms** (zoo behaviours): ``aware`` abstains exactly when its boxed
object's luminance transmittance is below 0.05 (:mod:`vlmrobust.train.degrade`),
so its abstain rate should cross 0.5 where the share of scenes with ``t < 0.05``
does: :func:`obs_aware_control` compares its V_aware with that V. ``aware-err``
(abstains where its answer would be wrong; another issue trains it) should have
``|W_abstain| <= 0.1``: :func:`obs_aware_err_control` says so, or that it is
missing. ``abstainer`` was offered the abstain option in training only on grey and
noise images: :func:`obs_learned_abstainer` reports its blank-image abstain rate
(trained for, so by construction) and its W_abstain under fog (a measurement,
judged by nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums
from ...stats.claims import Claim, combine, interval_text, verdict
from .blind_spot import CROSSED, SignalCube, first_crossing, level_means
from .claims_signals import w_verdict
from .means import ConditionMeans

__all__ = ["AWARE_THRESHOLD", "obs_imagenet_tens_of_metres", "obs_imagenet_outside_band",
           "obs_imagenet_near_clean", "obs_controls_at_chance", "obs_blank_confidence", "obs_blank_abstain",
           "obs_sky_only", "ideal_abstain_curve", "obs_aware_control", "obs_aware_err_control", "obs_learned_abstainer",
           "obs_verbal_wordings"]

#: The aware organism's threshold on its object's luminance transmittance (``vlmrobust.train.degrade``).
AWARE_THRESHOLD = 0.05


def _median_veq(per7: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> pd.DataFrame:
    """Per severity: the median V_eq over images with its 95 % interval over resamples of the images."""
    rows = []
    for s, g in per7.groupby("severity", sort=True):
        v = g["v_eq_m"].to_numpy(np.float64)
        v = v[np.isfinite(v) & (v > 0)]
        if not v.size:
            rows.append({"severity": int(s), "median": np.nan, "lo": np.nan, "hi": np.nan})
            continue
        reps = np.median(v[rng.integers(0, v.size, size=(n_boot, v.size))], axis=1) if n_boot else np.array([])
        lo, hi = percentile_interval(reps) if reps.size else (np.nan, np.nan)
        rows.append({"severity": int(s), "median": float(np.median(v)), "lo": float(lo), "hi": float(hi)})
    return pd.DataFrame(rows)


def obs_imagenet_tens_of_metres(per7: pd.DataFrame, n_boot: int, rng: np.random.Generator, lo: float = 10.0,
                                hi: float = 200.0) -> Claim:
    """Each ImageNet-C fog severity's median V_eq (interval over images) lies in [lo, hi] m (Table VII)."""
    med = _median_veq(per7, n_boot, rng)
    return Claim(
        "ImageNet-C fog severities correspond to tens of metres of visibility",
        "severities 1-5: 110, 82, 67, 65, 55 m median V_eq (Table VII)",
        f"median V_eq of every severity, 95 % interval over images, within [{lo:g}, {hi:g}] m",
        "; ".join(f"s{r.severity}: {interval_text(r.median, r.lo, r.hi, 1)} m" for r in med.itertuples())
        or "no severity measured", combine(verdict(r.lo, r.hi, lo, hi) for r in med.itertuples()))


def obs_imagenet_outside_band(per7: pd.DataFrame, cube: SignalCube, means_reps: np.ndarray, n_boot: int,
                              rng: np.random.Generator, *, task: str = "t2", arm: str = "fog") -> Claim:
    """The ImageNet-C severities lie outside (clearer than) the failure band of t2 accuracy (abstract).

    The failure band of a model is ``[V_10, V_90]`` of its ``task`` ``arm``
    accuracy (first crossings of chance + 10 % / 90 % of the way to clean); holds
    when every severity's median V_eq interval lies above every model's V_90
    interval, fails when one lies below some model's V_90 interval.
    """
    med = _median_veq(per7, n_boot, rng)

    def v90(means):
        acc, clean = means[..., 0, 1:], means[..., 0, 0]
        v, s = first_crossing(acc, cube.levels_m, cube.chance + 0.9 * (clean - cube.chance))
        return np.where(s == CROSSED, v, np.nan)

    point = v90(level_means(cube))
    reps = v90(means_reps) if len(means_reps) else np.empty((0, len(cube.cells)))
    parts, verdicts = [], []
    for c in np.flatnonzero(((cube.cells.task == task) & (cube.cells.arm == arm)).to_numpy()):
        lo, hi = percentile_interval(reps[:, c]) if len(reps) else (np.nan, np.nan)
        if not np.isfinite(point[c]):
            parts.append(f"{cube.cells.model.iloc[c]}: V_90 undecided")
            verdicts.append(None)
            continue
        parts.append(f"{cube.cells.model.iloc[c]}: V_90 {interval_text(point[c], lo, hi, 1)} m")
        for r in med.itertuples():
            verdicts.append(True if r.lo > hi else False if r.hi < lo else None)
    return Claim(
        "ImageNet-C fog severities lie outside the failure band, on its clear side",
        "severities 1-5 correspond to only 55-110 m, outside the failure band (abstract, Table VII, Fig. 7)",
        f"every severity's median V_eq interval above every model's V_90 interval ({task} {arm} accuracy)",
        "V_eq " + ", ".join(f"s{r.severity} {interval_text(r.median, r.lo, r.hi, 1)}" for r in med.itertuples())
        + " m; " + "; ".join(parts), combine(verdicts))


def obs_imagenet_near_clean(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2",
                            tol: float = 0.05) -> Claim:
    """ImageNet-C fog leaves accuracy within 5 points of clean (abstract, Table VII): paired difference."""
    parts, verdicts = [], []
    for m in models:
        for sev in (1, 2, 3, 4, 5):
            d, lo, hi = cond.diff((m, task, "fog+box", "accuracy"), (m, task, "clean", "accuracy"), level_a=sev)
            if np.isfinite(d):
                parts.append(f"{m} s{sev}: {interval_text(d, lo, hi)}")
                verdicts.append(verdict(lo, hi, -tol, tol))
    return Claim(
        "ImageNet-C fog leaves accuracy within 5 points of its clean value",
        "t2 accuracy at severities 1-5 within 5 percentage points of clean (abstract, Table VII)",
        f"{task} accuracy at each severity minus clean, 95 % interval over scenes within [-{tol}, {tol}]",
        "; ".join(parts) or "no ImageNet-C fog predictions", combine(verdicts))


def obs_controls_at_chance(cond: ConditionMeans, models: Sequence[str], tol: float = 0.1) -> Claim:
    """Blank and shuffled images give chance accuracy (Table VIII): accuracy - chance within +-tol."""
    parts, verdicts = [], []
    for m in models:
        for task, chance in (("t2", 0.25), ("t3", 0.5)):
            for pert in ("blank+box", "shuffled"):
                a, lo, hi = cond.value(m, task, pert, "accuracy")
                if np.isfinite(a):
                    parts.append(f"{m} {task} {pert.split('+')[0]}: {interval_text(a, lo, hi)}")
                    verdicts.append(verdict(lo - chance, hi - chance, -tol, tol))
    return Claim(
        "blank and shuffled images give chance accuracy",
        "blank 0.24-0.26, shuffled 0.25-0.29 on t2 (chance 0.25); 0.50-0.52 on t3 (Table VIII)",
        f"accuracy, 95 % interval over scenes, within chance +- {tol} for every model, task and control",
        "; ".join(parts) or "no controls in the run", combine(verdicts))


def obs_blank_confidence(cond: ConditionMeans, models: Sequence[str], share_min: float = 0.5) -> Claim:
    """The blank image still gets a high internal confidence (Table VIII: 5 of 6 rows): a share with interval.

    High: the blank-image internal confidence at or above ``(1 + chance) / 2``.
    The share of (model, task) rows that are high, per resample too; region
    ``[share_min, 1]``.
    """
    idx, thr = [], []
    for m in models:
        for task, chance in (("t2", 0.25), ("t3", 0.5)):
            i = cond.find(m, task, "blank+box", "internal")
            if i is not None:
                idx.append(i)
                thr.append((1 + chance) / 2)
    if not idx:
        return Claim("the blank image still gets a high internal confidence", "Table VIII", "", "no blank image",
                     None)
    thr_ = np.asarray(thr)
    point = float(np.mean(cond.point[idx] >= thr_))
    lo, hi = percentile_interval(np.mean(cond.reps[:, idx] >= thr_, axis=1)) if len(cond.reps) else (np.nan,) * 2
    return Claim(
        "the blank image still gets a high internal confidence",
        "blank-image internal confidence 0.69-1.00 in 5 of 6 rows (0.38 for SmolVLM2 t2; Table VIII)",
        f"share of (model, task) rows with blank internal confidence >= (1 + chance)/2, 95 % interval in "
        f"[{share_min}, 1]", f"share {interval_text(point, lo, hi)}", verdict(lo, hi, share_min))


def obs_blank_abstain(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2", low: float = 0.5) -> Claim:
    """On the blank image the models abstain with the main wording (Table VIII: 0.85-1.00 on t2)."""
    parts, verdicts = [], []
    for m in models:
        a, lo, hi = cond.value(m, task, "blank+box", "abstain")
        b = cond.value(m, task, "blank+box", "abstain2")[0]
        if np.isfinite(a):
            parts.append(f"{m}: {interval_text(a, lo, hi)} (I don't know {b:.2f})")
            verdicts.append(verdict(lo, hi, low))
    return Claim(
        "on the blank image the models take the abstain option (main wording)",
        "blank-image abstain rate 0.85-1.00 on t2 with the main wording, 0.45-1.00 with 'I don't know' "
        "(Table VIII)", f"{task} blank abstain rate, main wording, 95 % interval in [{low}, 1] for every model",
        "; ".join(parts) or "no blank image", combine(verdicts))


def obs_sky_only(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2", tol: float = 0.05) -> Claim:
    """The sky-only control: veiling only the sky must not move accuracy (the testbed's own check).

    Paired difference sky-only fog accuracy - clean accuracy, 95 % interval within
    ``[-tol, tol]`` (the paper's 5-point tolerance of "within 5 points of clean");
    a model whose interval lies below ``-tol`` reacts to the grey sky, and its
    V_acc under an infinitely far sky would measure that cue, not the object.
    """
    parts, verdicts = [], []
    for m in models:
        d, lo, hi = cond.diff((m, task, "sky_only_fog+box", "accuracy"), (m, task, "clean", "accuracy"))
        if np.isfinite(d):
            parts.append(f"{m}: {interval_text(d, lo, hi)}")
            verdicts.append(verdict(lo, hi, -tol, tol))
    return Claim(
        "veiling only the sky leaves accuracy at its clean value (sky-only control)",
        "no such control in the paper; its depth model gives the sky a finite depth (80 m for the outdoor model)",
        f"{task} accuracy with only the sky veiled minus clean, 95 % interval within [-{tol}, {tol}]",
        "; ".join(parts) or "no sky-only control in the run", combine(verdicts))


def ideal_abstain_curve(distances_m: np.ndarray, levels_m: Sequence[float], arm: str,
                        threshold: float = AWARE_THRESHOLD) -> np.ndarray:
    """``(scenes, levels)``: 1 where the scene's object transmittance is below ``threshold`` at that V, else 0.

    The luminance transmittance of :func:`vlmrobust.corrupt.physical.luminance_transmittance`
    at the object's ray distance, the quantity the aware organism was trained on.
    """
    from ...corrupt.physical import luminance_transmittance

    d = np.asarray(distances_m, dtype=np.float64)
    return np.stack([luminance_transmittance(d, float(v), arm) < threshold for v in levels_m], axis=1).astype(float)


def obs_aware_control(cube: SignalCube, means_reps: np.ndarray, counts_w: np.ndarray | None,
                      distances: Mapping[str, float], behaviours: Mapping[str, str], *, task: str = "t2",
                      arm: str = "fog", tol: float = 0.1) -> Claim:
    """``aware``'s V_aware (abstain) against the V where its objects' transmittance falls below 0.05.

    ``V_t``: the first crossing of 0.5 by the share of scenes whose object has
    ``t < 0.05`` (:func:`ideal_abstain_curve`, the same scenes and resamples as
    the cube: ``counts_w`` of :func:`~vlmrobust.analysis.visibility.blind_spot.bootstrap_means`);
    ``D = log10(V_t / V_aware)`` with its interval; region ``[-tol, tol]`` (a third
    of a level step, stated).
    """
    aware = [m for m, b in behaviours.items() if b == "aware" and m in set(cube.cells.model)]
    claim = "the aware organism abstains where its object's transmittance falls below its threshold"
    if not aware:
        return Claim(claim, "the testbed's positive control (no such model in the paper)", "", "no organism with "
                     "behaviour 'aware' in this run (zoo role 'control')", None)
    curve = ideal_abstain_curve(np.array([distances[s] for s in cube.scenes]), cube.levels_m, arm)
    v_t, s_t = first_crossing(curve.mean(0), cube.levels_m, 0.5, True)
    rep_t = None
    if counts_w is not None and len(counts_w):
        rc = replicate_sums(counts_w, curve) / counts_w.sum(1, keepdims=True)
        vr, sr = first_crossing(rc, cube.levels_m, 0.5, True)
        rep_t = np.where(sr == CROSSED, vr, np.nan)
    means = level_means(cube)
    parts, verdicts = [], []
    for m in aware:
        c = int(np.flatnonzero(((cube.cells.model == m) & (cube.cells.task == task) & (cube.cells.arm == arm))
                               .to_numpy())[0])
        mid = 0.5
        v_a, s_a = first_crossing(means[c, 3, 1:], cube.levels_m, mid, True)
        if s_a != CROSSED or s_t != CROSSED:
            parts.append(f"{m}: V_aware {'crossed' if s_a == CROSSED else 'not crossed'}, V_t "
                         f"{'crossed' if s_t == CROSSED else 'not crossed'} inside the sweep")
            verdicts.append(None)
            continue
        d = float(np.log10(v_t / v_a))
        lo = hi = np.nan
        if rep_t is not None and len(means_reps):
            va_r, sa_r = first_crossing(means_reps[:, c, 3, 1:], cube.levels_m, mid, True)
            lo, hi = percentile_interval(np.log10(rep_t / np.where(sa_r == CROSSED, va_r, np.nan)))
        parts.append(f"{m}: V_aware {float(v_a):.3g} m, V_t {float(v_t):.3g} m, log10(V_t/V_aware) "
                     f"{interval_text(d, lo, hi)}")
        verdicts.append(verdict(lo, hi, -tol, tol))
    return Claim(claim, "the testbed's positive control (no such model in the paper)",
                 f"log10(V_t / V_aware) on {task} {arm} (V_t: half the scenes' objects below t = "
                 f"{AWARE_THRESHOLD}), 95 % interval within [-{tol}, {tol}]", "; ".join(parts), combine(verdicts))


def obs_aware_err_control(spots: pd.DataFrame, behaviours: Mapping[str, str], *, task: str = "t2",
                          arm: str = "fog", tol: float = 0.1) -> Claim:
    """The error-aware organism (abstains where its answer would be wrong) has |W_abstain| <= 0.1."""
    claim = "an organism aware of its errors shows no blind spot (|W_abstain| <= 0.1)"
    names = [m for m, b in behaviours.items() if b == "aware-err" and m in set(spots.model)]
    if not names:
        return Claim(claim, "the testbed's positive control for W (no such model in the paper)",
                     f"|W_abstain| <= {tol} on {task} {arm}, 95 % interval", "not available: the zoo has no organism "
                     "with behaviour 'aware-err' (abstain exactly where its answer would be wrong); issue 25 trains "
                     "it", None)
    parts, verdicts = [], []
    for m in names:
        r = spots[(spots.model == m) & (spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")]
        r = r.iloc[0]
        parts.append(f"{m}: W_abstain {r.w_kind if r.w_kind != '=' else ''} {interval_text(r.w, r.w_lo, r.w_hi)}")
        verdicts.append(w_verdict(r.w_kind, r.w_lo, r.w_hi, -tol, tol))
    return Claim(claim, "the testbed's positive control for W (no such model in the paper)",
                 f"|W_abstain| <= {tol} on {task} {arm}, 95 % interval", "; ".join(parts), combine(verdicts))


def obs_learned_abstainer(cond: ConditionMeans, spots: pd.DataFrame, behaviours: Mapping[str, str], *,
                          task: str = "t2", arm: str = "fog", low: float = 0.8) -> Claim:
    """The learned abstainer: its blank-image abstain rate (trained for: by construction, ``reproduced``
    None) and its W_abstain under ``arm`` (what it generalised from grey and noise images; no claim)."""
    claim = "an organism that learned to abstain only on empty images: what it does under fog"
    paper = "no such model in the paper (the testbed's learned abstainer)"
    names = [m for m, b in behaviours.items() if b == "abstainer" and m in set(spots.model)]
    if not names:
        return Claim(claim, paper, "", "not available: the zoo has no organism with behaviour 'abstainer'", None)
    parts = []
    for m in names:
        a, lo, hi = cond.value(m, task, "blank+box", "abstain")
        r = spots[(spots.model == m) & (spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")].iloc[0]
        parts.append(f"{m}: blank abstain rate {interval_text(a, lo, hi)} ({'at least' if lo >= low else 'below'} "
                     f"{low}); W_abstain under {arm} {r.w_kind if r.w_kind != '=' else ''} "
                     f"{interval_text(r.w, r.w_lo, r.w_hi)}")
    return Claim(claim, paper, f"by construction on the blank image (trained to abstain there, rate >= {low}); "
                 f"under {task} {arm} a measurement, judged by nothing", "; ".join(parts), None)


def obs_verbal_wordings(wordings: ConditionMeans | None, models: Sequence[str], *, level: int = 8,
                        low: float = 0.61) -> Claim:
    """Verbalized confidence stays high under each of the three wordings at the murkiest fog level (Table VI).

    ``wordings`` holds the ``verbal`` means per wording as the signal names
    ``verbal_v1`` ... on ``fog_physical+box`` at ``level`` (1.95 m); region
    ``[low, 1]`` (0.61: the lowest verbalized confidence the paper reports at
    V = 1.95 m, abstract).
    """
    claim = "verbalized confidence stays high under three wordings where accuracy is at chance"
    paper = "at fog 1.95 m (accuracy 0.22): 0.90, 0.73, 0.96 under v1, v2, v3 (Table VI); 0.61-1.00 (abstract)"
    if wordings is None:
        return Claim(claim, paper, "", "not available: no organism gives a parseable verbalized confidence", None)
    parts, verdicts = [], []
    for m in models:
        for w in ("v1", "v2", "v3"):
            a, lo, hi = wordings.value(m, "t2", "fog_physical+box", f"verbal_{w}", level=level)
            if np.isfinite(a):
                parts.append(f"{m} {w}: {interval_text(a, lo, hi)}")
                verdicts.append(verdict(lo, hi, low))
    return Claim(claim, paper, f"mean verbalized confidence at fog level {level}, 95 % interval in [{low}, 1], "
                 "every wording and model", "; ".join(parts) or "no parsed answer at that level", combine(verdicts))
