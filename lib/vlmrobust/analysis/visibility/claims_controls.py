"""Seed 003's controls and diagnostics checked on a run: ImageNet-C fog in metres, image controls, wordings,
and the testbed's control organisms judged by what they are built to do.

Decisions as in :mod:`vlmrobust.analysis.visibility.claims_base` (a 95 % bootstrap interval over scenes against
a region from the paper). Per-scene condition means come from
:func:`~vlmrobust.analysis.visibility.means.condition_means` (perturbation names: ``clean``, ``fog+box``
severities 1-5, ``blank+box``, ``shuffled``, ``sky_only_fog+box``); Table VII per image from
:func:`~vlmrobust.analysis.visibility.readouts.imagenet_fog_visibility`. Every row about models is tried on the
``models`` it is given: the evaluated organisms that see
(:func:`~vlmrobust.analysis.visibility.claims_accuracy.seeing_models`) for the paper's rows, the controls for the
construction rows. A model that cannot see answers a blank, shuffled or ImageNet-C-fogged image as the clean one,
so "accuracy unchanged" would hold for it without any vision: such a model is no subject.

**Control organisms** (zoo behaviours, section ``construction``): ``aware`` abstains exactly when its boxed
object's luminance transmittance is below 0.05 (:mod:`vlmrobust.train.degrade`), so its abstain rate should cross
0.5 where the share of scenes with ``t < 0.05`` does: :func:`obs_aware_control` compares its V_aware with that V.
``aware-err`` (abstains where its answer would be wrong) should have ``|W_abstain| <= 0.1``:
:func:`obs_aware_err_control`. ``abstainer`` was offered the abstain option in training only on grey and noise
images: :func:`obs_learned_abstainer` reports its blank-image abstain rate (trained for, so by construction) and
its W_abstain under fog (a measurement, judged by nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums
from ...stats.claims import (
    BY_CONSTRUCTION,
    REPRODUCED,
    UNDECIDED,
    Claim,
    decide_text,
    interval_text,
    no_subject,
    verdict,
)
from .blind_spot import CROSSED, SignalCube, first_crossing, level_means
from .claims_base import _row, bounded_interval, w_decide, w_verdict
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
            rows.append({"severity": int(s), "median": np.nan, "lo": np.nan, "hi": np.nan, "n": 0})
            continue
        reps = np.median(v[rng.integers(0, v.size, size=(n_boot, v.size))], axis=1) if n_boot else np.array([])
        lo, hi = percentile_interval(reps.reshape(-1, 1)) if reps.size else ([np.nan], [np.nan])
        rows.append({"severity": int(s), "median": float(np.median(v)), "lo": float(lo[0]), "hi": float(hi[0]),
                     "n": int(v.size)})
    return pd.DataFrame(rows)


def obs_imagenet_tens_of_metres(per7: pd.DataFrame, n_boot: int, rng: np.random.Generator, lo: float = 10.0,
                                hi: float = 200.0) -> Claim:
    """Each ImageNet-C fog severity's median V_eq (interval over images) lies in [lo, hi] m (Table VII).

    No model is involved: the row measures the scenes' depth against ImageNet-C fog's contrast gain. Null: a
    severity whose median V_eq sits at the edge of the band (200 m).
    """
    med = _median_veq(per7, n_boot, rng)
    claim = "ImageNet-C fog severities correspond to tens of metres of visibility"
    paper = "severities 1-5: 110, 82, 67, 65, 55 m median V_eq (Table VII)"
    null = f"a severity whose median V_eq sits at the edge of the band ({hi:g} m)"
    test = f"median V_eq of every severity, 95 % interval over images, within [{lo:g}, {hi:g}] m"
    med = med[np.isfinite(med["median"])]
    if med.empty:
        return no_subject(claim, paper, null, test, "no image with a measured V_eq")
    n = int(med["n"].max())
    parts = [(verdict(r.lo, r.hi, lo, hi), r.median, r.lo, r.hi, decide_text(n, r.median, r.lo, r.hi, lo, hi,
                                                                             unit="images"))
             for r in med.itertuples()]
    texts = [f"s{r.severity}: {interval_text(r.median, r.lo, r.hi, 1)} m" for r in med.itertuples()]
    return _row(claim, paper, null, test, [f"no model: {n} scenes' depth under ImageNet-C fog"], parts, texts, "",
                "paper")


def obs_imagenet_outside_band(per7: pd.DataFrame, cube: SignalCube, means_reps: np.ndarray, models: Sequence[str],
                              n_boot: int, rng: np.random.Generator, *, task: str = "t2", arm: str = "fog") -> Claim:
    """The ImageNet-C severities lie outside (clearer than) the failure band of t2 accuracy (abstract).

    The failure band of a model is ``[V_10, V_90]`` of its ``task`` ``arm`` accuracy (first crossings of chance +
    10 % / 90 % of the way to clean); a severity is outside when its median V_eq interval lies above the model's
    V_90 interval (a resample whose accuracy is below the 90 % level already at the first level counts as an
    unbounded V_90), inside the band when it lies below. Null: a severity whose median V_eq equals V_90.
    """
    med = _median_veq(per7, n_boot, rng)

    def v90(means):
        acc, clean = means[..., 0, 1:], means[..., 0, 0]
        v, s = first_crossing(acc, cube.levels_m, cube.chance + 0.9 * (clean - cube.chance))
        return np.where(s == CROSSED, v, np.where(s == 1, np.inf, np.where(s == 2, 0.0, np.nan)))

    point = v90(level_means(cube))
    reps = v90(means_reps) if len(means_reps) else np.empty((0, len(cube.cells)))
    parts, texts = [], []
    for c in np.flatnonzero(((cube.cells.task == task) & (cube.cells.arm == arm)
                             & cube.cells.model.isin(list(models))).to_numpy()):
        lo, hi = bounded_interval(reps[:, c]) if len(reps) else (np.nan, np.nan)
        texts.append(f"{cube.cells.model.iloc[c]}: V_90 {interval_text(point[c], lo, hi, 1)} m")
        for r in med.itertuples():
            if not np.isfinite(r.median):
                continue
            v = REPRODUCED if r.lo > hi else "not reproduced" if r.hi < lo else UNDECIDED
            parts.append((v, r.median / point[c] if point[c] > 0 else np.nan, r.lo / hi if hi > 0 else np.nan,
                          r.hi / lo if lo > 0 else np.inf, "more images and scenes, or a finer sweep near V_90"))
    return _row("ImageNet-C fog severities lie outside the failure band, on its clear side",
                "severities 1-5 correspond to only 55-110 m, outside the failure band (abstract, Table VII, Fig. 7)",
                "a severity whose median V_eq equals the model's V_90 (the clear edge of the band)",
                f"every severity's median V_eq interval above every model's V_90 interval ({task} {arm} accuracy); "
                "value: V_eq / V_90 with the ratio of the intervals' facing ends", list(models), parts,
                ["V_eq " + ", ".join(f"s{r.severity} {interval_text(r.median, r.lo, r.hi, 1)}" for r in
                                     med.itertuples()) + " m", *texts],
                "no evaluated organism whose accuracy falls with V", "paper")


def obs_imagenet_near_clean(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2",
                            tol: float = 0.05) -> Claim:
    """ImageNet-C fog leaves accuracy within 5 points of clean (abstract, Table VII): paired difference over
    scenes within ``[-tol, tol]`` for every model of ``models`` and severity. Null: a cost of ``tol`` (the edge)."""
    parts, texts = [], []
    for m in models:
        for sev in (1, 2, 3, 4, 5):
            d, lo, hi = cond.diff((m, task, "fog+box", "accuracy"), (m, task, "clean", "accuracy"), level_a=sev)
            if np.isfinite(d):
                texts.append(f"{m} s{sev}: {interval_text(d, lo, hi)}")
                parts.append((verdict(lo, hi, -tol, tol), d, lo, hi,
                              decide_text(cond.n_scenes, d, lo, hi, -tol, tol, unit="scenes")))
    return _row("ImageNet-C fog leaves accuracy within 5 points of its clean value",
                "t2 accuracy at severities 1-5 within 5 percentage points of clean (abstract, Table VII)",
                f"ImageNet-C fog costs {tol:g} of accuracy (difference -{tol:g}, the edge)",
                f"{task} accuracy at each severity minus clean, paired over scenes, 95 % interval within "
                f"[-{tol}, {tol}]", list(models), parts, texts,
                "no evaluated organism whose accuracy falls with V (for a model that cannot see the row holds "
                "without vision)", "paper")


def obs_controls_at_chance(cond: ConditionMeans, models: Sequence[str], tol: float = 0.1) -> Claim:
    """Blank and shuffled images give chance accuracy (Table VIII): accuracy - chance within +-tol for every
    model of ``models`` (those that see). Null: accuracy ``tol`` above chance without the scene (a shortcut)."""
    parts, texts = [], []
    for m in models:
        for task, chance in (("t2", 0.25), ("t3", 0.5)):
            for pert in ("blank+box", "shuffled"):
                a, lo, hi = cond.value(m, task, pert, "accuracy")
                if np.isfinite(a):
                    texts.append(f"{m} {task} {pert.split('+')[0]}: {interval_text(a, lo, hi)}")
                    parts.append((verdict(lo - chance, hi - chance, -tol, tol), a, lo, hi,
                                  decide_text(cond.n_scenes, a - chance, lo - chance, hi - chance, -tol, tol,
                                              unit="scenes")))
    return _row("blank and shuffled images give chance accuracy",
                "blank 0.24-0.26, shuffled 0.25-0.29 on t2 (chance 0.25); 0.50-0.52 on t3 (Table VIII)",
                f"accuracy {tol} above chance on an image without the scene (an answer the question alone gives)",
                f"accuracy, 95 % interval over scenes, within chance +- {tol} for every model, task and control",
                list(models), parts, texts, "no evaluated organism whose accuracy falls with V", "paper")


def obs_blank_confidence(cond: ConditionMeans, models: Sequence[str], share_min: float = 0.5) -> Claim:
    """The blank image still gets a high internal confidence (Table VIII: 5 of 6 rows): a share with interval.

    High: the blank-image internal confidence at or above ``(1 + chance) / 2``. The share of (model, task) rows
    of ``models`` that are high, per resample too; region ``[share_min, 1]``. Null: every row's blank confidence
    at the threshold (half of them high by chance).
    """
    idx, thr = [], []
    for m in models:
        for task, chance in (("t2", 0.25), ("t3", 0.5)):
            i = cond.find(m, task, "blank+box", "internal")
            if i is not None:
                idx.append(i)
                thr.append((1 + chance) / 2)
    claim = "the blank image still gets a high internal confidence"
    paper = "blank-image internal confidence 0.69-1.00 in 5 of 6 rows (0.38 for SmolVLM2 t2; Table VIII)"
    null = "blank-image confidence at the threshold (1 + chance)/2 in every row"
    test = f"share of (model, task) rows with blank internal confidence >= (1 + chance)/2, 95 % interval over " \
           f"scenes in [{share_min}, 1]"
    if not idx:
        return no_subject(claim, paper, null, test, "no blank image for an evaluated organism that sees")
    thr_ = np.asarray(thr)
    point = float(np.mean(cond.point[idx] >= thr_))
    lo, hi = (float(x[0]) for x in percentile_interval(np.mean(cond.reps[:, idx] >= thr_, axis=1).reshape(-1, 1))) \
        if len(cond.reps) else (np.nan, np.nan)
    v = verdict(lo, hi, share_min)
    return Claim(claim, paper, ", ".join(models), null, test, point, lo, hi,
                 f"share {interval_text(point, lo, hi)}: " + ", ".join(
                     f"{cond.keys.model[i]} {cond.keys.task[i]} {cond.point[i]:.2f}" for i in idx), v,
                 decide_text(cond.n_scenes, point, lo, hi, share_min, unit="scenes") if v == UNDECIDED else "")


def obs_blank_abstain(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2", low: float = 0.5,
                      section: str = "paper") -> Claim:
    """On the blank image the models abstain with the main wording (Table VIII: 0.85-1.00 on t2): the rate's
    interval in ``[low, 1]`` for every model of ``models``. Null: a rate of ``low`` (the edge)."""
    parts, texts = [], []
    for m in models:
        a, lo, hi = cond.value(m, task, "blank+box", "abstain")
        b = cond.value(m, task, "blank+box", "abstain2")[0]
        if np.isfinite(a):
            texts.append(f"{m}: {interval_text(a, lo, hi)} (I don't know {b:.2f})")
            parts.append((verdict(lo, hi, low), a, lo, hi, decide_text(cond.n_scenes, a, lo, hi, low, unit="scenes")))
    return _row("on the blank image the models take the abstain option (main wording)",
                "blank-image abstain rate 0.85-1.00 on t2 with the main wording, 0.45-1.00 with 'I don't know' "
                "(Table VIII)", f"a blank-image abstain rate of {low} (the edge)",
                f"{task} blank abstain rate, main wording, 95 % interval over scenes in [{low}, 1] for every model",
                list(models), parts, texts, "no blank image for an organism of this section that sees", section)


def obs_sky_only(cond: ConditionMeans, models: Sequence[str], *, task: str = "t2", tol: float = 0.05) -> Claim:
    """The sky-only control: veiling only the sky must not move accuracy (the testbed's own check).

    Paired difference sky-only fog accuracy - clean accuracy, 95 % interval within ``[-tol, tol]`` for every
    model of ``models`` (those that see: a model that cannot see passes without looking); a model whose interval
    lies below ``-tol`` reacts to the grey sky, and its V_acc under an infinitely far sky would measure that cue.
    """
    parts, texts = [], []
    for m in models:
        d, lo, hi = cond.diff((m, task, "sky_only_fog+box", "accuracy"), (m, task, "clean", "accuracy"))
        if np.isfinite(d):
            texts.append(f"{m}: {interval_text(d, lo, hi)}")
            parts.append((verdict(lo, hi, -tol, tol), d, lo, hi,
                          decide_text(cond.n_scenes, d, lo, hi, -tol, tol, unit="scenes")))
    return _row("veiling only the sky leaves accuracy at its clean value (sky-only control)",
                "no such control in the paper; its depth model gives the sky a finite depth (80 m for the outdoor "
                "model)",
                f"the grey sky costs {tol:g} of accuracy (the edge)",
                f"{task} accuracy with only the sky veiled minus clean, paired over scenes, 95 % interval within "
                f"[-{tol}, {tol}]", list(models), parts, texts, "no sky-only control, or no organism that sees",
                "construction")


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
    of a level step, stated). A construction check.
    """
    aware = [m for m, b in behaviours.items() if b == "aware" and m in set(cube.cells.model)]
    claim = "the aware organism abstains where its object's transmittance falls below its threshold"
    paper = "the testbed's positive control (no such model in the paper)"
    null = f"abstaining a third of a level step ({tol} decades) away from the threshold's V"
    test = (f"log10(V_t / V_aware) on {task} {arm} (V_t: half the scenes' objects below t = {AWARE_THRESHOLD}), "
            f"95 % interval over scenes within [-{tol}, {tol}]")
    if not aware:
        return no_subject(claim, paper, null, test, "no organism with behaviour 'aware' in this run (zoo role "
                          "'control'; the controls variant runs it)", section="construction")
    curve = ideal_abstain_curve(np.array([distances[s] for s in cube.scenes]), cube.levels_m, arm)
    v_t, s_t = first_crossing(curve.mean(0), cube.levels_m, 0.5, True)
    rep_t = None
    if counts_w is not None and len(counts_w):
        rc = replicate_sums(counts_w, curve) / counts_w.sum(1, keepdims=True)
        vr, sr = first_crossing(rc, cube.levels_m, 0.5, True)
        rep_t = np.where(sr == CROSSED, vr, np.nan)
    means = level_means(cube)
    parts, texts = [], []
    for m in aware:
        c = int(np.flatnonzero(((cube.cells.model == m) & (cube.cells.task == task) & (cube.cells.arm == arm))
                               .to_numpy())[0])
        v_a, s_a = first_crossing(means[c, 3, 1:], cube.levels_m, 0.5, True)
        if s_a != CROSSED or s_t != CROSSED:
            texts.append(f"{m}: V_aware {'crossed' if s_a == CROSSED else 'not crossed'}, V_t "
                         f"{'crossed' if s_t == CROSSED else 'not crossed'} inside the sweep")
            parts.append((UNDECIDED, np.nan, np.nan, np.nan, "a sweep in which both cross"))
            continue
        d = float(np.log10(v_t / v_a))
        lo = hi = np.nan
        if rep_t is not None and len(means_reps):
            va_r, sa_r = first_crossing(means_reps[:, c, 3, 1:], cube.levels_m, 0.5, True)
            lo, hi = (float(x[0]) for x in percentile_interval(
                np.log10(rep_t / np.where(sa_r == CROSSED, va_r, np.nan)).reshape(-1, 1)))
        texts.append(f"{m}: V_aware {float(v_a):.3g} m, V_t {float(v_t):.3g} m, log10(V_t/V_aware) "
                     f"{interval_text(d, lo, hi)}")
        parts.append((verdict(lo, hi, -tol, tol), d, lo, hi,
                      decide_text(len(cube.scenes), d, lo, hi, -tol, tol, unit="scenes")))
    return _row(claim, paper, null, test, aware, parts, texts, "", "construction")


def obs_aware_err_control(spots: pd.DataFrame, behaviours: Mapping[str, str], n_scenes: int, *, task: str = "t2",
                          arm: str = "fog", tol: float = 0.1) -> Claim:
    """The error-aware organism (abstains where its answer would be wrong) has |W_abstain| <= 0.1 (a
    construction check)."""
    claim = "an organism aware of its errors shows no blind spot (|W_abstain| <= 0.1)"
    paper = "the testbed's positive control for W (no such model in the paper)"
    null = f"a blind spot of {tol} decades (the edge)"
    test = f"W_abstain on {task} {arm}, 95 % interval over scenes within [-{tol}, {tol}]"
    names = [m for m, b in behaviours.items() if b == "aware-err" and m in set(spots.model)]
    if not names:
        return no_subject(claim, paper, null, test, "no organism with behaviour 'aware-err' in this run (abstains "
                          "exactly where its answer would be wrong; the controls variant runs it)",
                          section="construction")
    parts, texts = [], []
    for m in names:
        r = spots[(spots.model == m) & (spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")]
        r = r.iloc[0]
        texts.append(f"{m}: W_abstain {r.w_kind if r.w_kind != '=' else ''} {interval_text(r.w, r.w_lo, r.w_hi)}")
        parts.append((w_verdict(r.w_kind, r.w_lo, r.w_hi, -tol, tol), r.w, r.w_lo, r.w_hi,
                      w_decide(r, n_scenes, -tol, tol)))
    return _row(claim, paper, null, test, names, parts, texts, "", "construction")


def obs_learned_abstainer(cond: ConditionMeans, spots: pd.DataFrame, behaviours: Mapping[str, str], *,
                          task: str = "t2", arm: str = "fog", low: float = 0.8) -> Claim:
    """The learned abstainer: its blank-image abstain rate (trained for: by construction) and its W_abstain
    under ``arm`` (what it generalised from grey and noise images; a measurement judged by nothing)."""
    claim = "an organism that learned to abstain only on empty images: what it does under fog"
    paper = "no such model in the paper (the testbed's learned abstainer)"
    null = "none: trained to abstain on empty images, a measurement under fog"
    test = f"by construction on the blank image (trained to abstain there, rate >= {low}); under {task} {arm} a " \
           "measurement, judged by nothing"
    names = [m for m, b in behaviours.items() if b == "abstainer" and m in set(spots.model)]
    if not names:
        return no_subject(claim, paper, null, test, "no organism with behaviour 'abstainer' in this run (the "
                          "controls variant runs it)", section="construction")
    texts, first = [], None
    for m in names:
        a, lo, hi = cond.value(m, task, "blank+box", "abstain")
        first = first or (a, lo, hi)
        r = spots[(spots.model == m) & (spots.task == task) & (spots.arm == arm) & (spots.signal == "abstain")].iloc[0]
        texts.append(f"{m}: blank abstain rate {interval_text(a, lo, hi)} ({'at least' if lo >= low else 'below'} "
                     f"{low}); W_abstain under {arm} {r.w_kind if r.w_kind != '=' else ''} "
                     f"{interval_text(r.w, r.w_lo, r.w_hi)}")
    return Claim(claim, paper, ", ".join(names), null, test, *first, "; ".join(texts), BY_CONSTRUCTION,
                 section="construction")


def obs_verbal_wordings(wordings: ConditionMeans | None, models: Sequence[str], *, level: int = 8,
                        low: float = 0.61, section: str = "paper") -> Claim:
    """Verbalized confidence stays high under each of the three wordings at the murkiest fog level (Table VI).

    ``wordings`` holds the ``verbal`` means per wording as the signal names ``verbal_v1`` ... on
    ``fog_physical+box`` at ``level`` (1.95 m); region ``[low, 1]`` (0.61: the lowest verbalized confidence the
    paper reports at V = 1.95 m, abstract), every wording and model of ``models``. Null: a mean of ``low``.
    """
    claim = "verbalized confidence stays high under three wordings where accuracy is at chance"
    paper = "at fog 1.95 m (accuracy 0.22): 0.90, 0.73, 0.96 under v1, v2, v3 (Table VI); 0.61-1.00 (abstract)"
    null = f"a mean verbalized confidence of {low} (the edge)"
    test = f"mean verbalized confidence at fog level {level}, 95 % interval over scenes in [{low}, 1], every " \
           "wording and model"
    parts, texts = [], []
    for m in models if wordings is not None else []:
        for w in ("v1", "v2", "v3"):
            a, lo, hi = wordings.value(m, "t2", "fog_physical+box", f"verbal_{w}", level=level)
            if np.isfinite(a):
                texts.append(f"{m} {w}: {interval_text(a, lo, hi)}")
                parts.append((verdict(lo, hi, low), a, lo, hi,
                              decide_text(wordings.n_scenes, a, lo, hi, low, unit="scenes")))
    return _row(claim, paper, null, test, sorted({t.split()[0] for t in texts}), parts, texts,
                "no organism of this section gives a parseable verbalized confidence (a talker)", section)
