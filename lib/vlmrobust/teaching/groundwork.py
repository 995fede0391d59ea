"""The checks of notebooks 00-03: the testbed, choosing the questions, corruptions as physics, scoring.

Each ``exercise_<NN>_<k>`` is re-exported as ``vlmrobust.teaching.exercise_<NN>_<k>``; the contract every check
keeps is in the package's docstring (:mod:`vlmrobust.teaching`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._core import Result, _is_letter_model, _mean_ci, _result


def exercise_00_1(persp: pd.DataFrame, distance_far: float) -> Result:
    """Far objects: the pinhole geometry still holds, but a far object is only a pixel or two tall."""
    far = persp[persp["distance_m"] > 40.0]
    err = (far["measured_px"] - far["predicted_px"]).abs()
    h = far["measured_px"]
    shown = len(far) >= 3 and err.median() <= 1.0 and h.median() <= 2.0
    measured = (f"{len(far)} measured objects beyond 40 m (distance_far = {distance_far:g})" + (
        f": median |measured - predicted| {err.median():.2f} px, median height {h.median():.1f} px"
        if len(far) else ""))
    return _result("00.1", "objects far away", distance_far >= 80 and len(far) > 0, shown,
                   "beyond 40 m the renderer still matches the pinhole model (median error <= 1 px) while the "
                   "objects shrink to <= 2 px: geometry exact, evidence gone", measured,
                   "set distance_far: 120.0")


def exercise_00_2(balance: pd.DataFrame) -> Result:
    """Break the balance on purpose: in a tiny item table one fixed letter beats chance."""
    from ..schema import OPTION_LETTERS

    letters = [c for c in balance.columns if c in OPTION_LETTERS]
    four = balance[balance["K"] >= 4]
    counts = four[letters].to_numpy(dtype=float)
    best = counts.max(axis=1) / counts.sum(axis=1)
    gain = float(np.mean(best - 1.0 / four["K"].to_numpy(dtype=float))) if len(four) else np.nan
    n_min = int(balance[letters].sum(axis=1).min()) if len(balance) else 0
    return _result("00.2", "a benchmark a model can score by position", n_min <= 5, gain >= 0.15,
                   "the best single letter per family beats chance (1/K) by >= 0.15 on the four-option families",
                   f"{n_min} item(s) per family; the best letter scores {np.mean(best):.2f} on average against "
                   f"chance {np.mean(1 / four['K']):.2f} (gain {gain:+.2f})", "set n_per_family: 3")


def exercise_00_3(preds: pd.DataFrame) -> Result:
    """The size ladder: does the largest language model beat the smallest on the same held-out items?"""
    from ..models import zoo

    rungs = sorted((m for m in preds["model"].unique() if m in zoo.names("ladder")),
                   key=lambda m: zoo.meta(m).get("ladder_rung", 0))
    wide = preds.pivot_table(index="item_id", columns="model", values="correct", aggfunc="mean")
    d, lo, hi = _mean_ci(wide[rungs[-1]] - wide[rungs[0]]) if len(rungs) >= 2 else (np.nan,) * 3
    done = len(rungs) >= 2 and set(preds["model"]) <= set(rungs)
    return _result("00.3", "the size ladder", done, lo > 0, "the largest rung's clean accuracy minus "
                   "the smallest's, paired over items, has its interval above 0",
                   f"rungs scored {rungs}" + (f"; {rungs[-1]} - {rungs[0]}: {d:+.3f} [{lo:+.3f}, {hi:+.3f}] over "
                                              f"{len(wide)} items" if len(rungs) >= 2 else ""),
                   'set models: ["role:ladder"] and n_heldout: 30')


def exercise_01_1(silent: pd.DataFrame, coverage: pd.DataFrame, selectors: Sequence[str]) -> Result:
    """Eq. 3 is an AND: remove the selector that is silent on whole families and they become eligible."""
    from ..models import zoo

    lost = sorted(coverage.index[coverage["eligible"] == 0]) if len(coverage) else []
    silent_txt = ", ".join(f"{r.selector} on {r.family}" for r in silent.itertuples()) or "none"
    done = sorted(selectors) != sorted(zoo.names("selector"))
    return _result("01.1", "one selector decides eligibility", done, len(silent) == 0 and not lost,
                   "no selector is silent on a whole family, and every family keeps eligible questions",
                   f"selectors {list(selectors)}; silent: {silent_txt}; families without eligible questions: "
                   f"{lost or 'none'}", "set selectors: [sel-dropout, sel-see] (leave out sel-text)")


def exercise_01_2(eligible: np.ndarray, kappa: np.ndarray, perturbations: Sequence[str]) -> Result:
    """Break the selection on purpose: one mild corruption moves almost no answer, so A+ collapses."""
    share, zero = float(np.mean(eligible)), float(np.mean(np.asarray(kappa) == 0))
    return _result("01.2", "a corruption that does not respond", len(perturbations) <= 2, share < 0.15,
                   "A+ holds under 15 % of the pool", f"corruptions {list(perturbations)}: A+ {share:.1%} of the "
                   f"pool, κ = 0 for {zero:.1%}", "set perturbations: [brightness]")


def exercise_01_3(eval_gini, selected: np.ndarray, models: Sequence[str], selectors: Sequence[str]) -> Result:
    """Fig. 9(a) for the models that chose the split: its responsiveness carries over to them."""
    from .. import repro
    from ..analysis.selection import mean_shift

    m = mean_shift(np.asarray(eval_gini), np.asarray(selected), n_boot=1000, rng=repro.rng("teaching", "01.3")) \
        if eval_gini is not None else dict.fromkeys(("split", "pool", "diff", "lo", "hi"), np.nan)
    return _result("01.3", "the split's responsiveness, for its own selectors",
                   bool(models) and set(models) <= set(selectors), m["lo"] > 0,
                   "split minus pool Gini of the evaluated models, bootstrap interval above 0",
                   f"models {list(models)}: split {m['split']:.3f}, pool {m['pool']:.3f}, difference "
                   f"{m['diff']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]", "set models: [sel-dropout, sel-see, sel-text]")


def exercise_02_1(water_fog: pd.DataFrame, convention: str) -> Result:
    """The contrast threshold rescales fog and water alike: water stays the harsher arm."""
    r = water_fog["water_over_fog"]
    return _result("02.1", "the 5 % convention", convention == "5%", bool((r < 1).all()),
                   "water transmits less luminance than fog at every visibility (water_over_fog < 1)",
                   f"convention {convention}: water_over_fog from {r.max():.3f} to {r.min():.3f}",
                   'set convention: "5%"')


def exercise_02_2(table7: pd.DataFrame, fog_items) -> Result:
    """Break 'an ImageNet-C fog severity is tens of metres' with scenes whose depth is 2 m."""
    fams = sorted({it.family for it in fog_items})
    v1 = float(table7.loc[table7["severity"] == 1, "median_v_m"].iloc[0])
    return _result("02.2", "an ImageNet-C severity has no fixed visibility", fams == ["chart"], v1 < 10,
                   "on chart boards 2 m away severity 1 is worth under 10 m (tens of metres on ground scenes)",
                   f"Table VII scenes: {', '.join(fams)}; severity 1: median V_eq {v1:.1f} m",
                   'edit the Table VII cell: fog_families = ["chart"]')


def exercise_02_3(table7: pd.DataFrame) -> Result:
    """Few scenes, same camera: the spread of V_eq stays small."""
    n = int(table7["n_images"].max())
    spread = float(table7["p90_over_p10"].max())
    return _result("02.3", "the camera, not the scene, sets V_eq", n <= 10, spread < 1.5,
                   "P90/P10 of V_eq below 1.5 at every severity (seed 003 found 6-8 on COCO)",
                   f"{n} scenes; largest P90/P10 {spread:.3f}", "set n_fog_scenes: 10")


def exercise_03_1(acc: pd.DataFrame, agreement: pd.DataFrame, temperature: float) -> Result:
    """Break the black-box estimate on purpose: sampling below T = 1 sharpens the distribution."""
    letter = [m for m in acc["model"].unique() if _is_letter_model(m)]
    a = acc[acc["model"].isin(letter)].pivot_table(index=["model", "perturbation"], columns="method",
                                                    values="confidence")
    gap = float((a["sample"] - a["letter"]).mean()) if {"sample", "letter"} <= set(a.columns) else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    same = float(ag["same_argmax"].mean()) if len(ag) else np.nan
    return _result("03.1", "sampling at a low temperature", temperature < 1.0, gap >= 0.15 and same >= 0.7,
                   "the sampled confidence exceeds the letter-logit confidence by >= 0.15 while the argmax mostly "
                   "agrees (>= 0.7)", f"T = {temperature:g}; letter organisms: confidence gap sample - letter "
                   f"{gap:+.3f}, same argmax {same:.2f}", "set temperature: 0.2")


def exercise_03_2(agreement: pd.DataFrame, agree_pred: pd.DataFrame, n_samples: int) -> Result:
    """The sampling floor: the distance between sampled and letter distributions is what n samples allow."""
    from .. import repro

    letter = [m for m in agree_pred["model"].unique() if _is_letter_model(m)]
    rows = agree_pred[agree_pred["model"].isin(letter) & (agree_pred["method"] == "letter")]
    rng = repro.rng("teaching", "03.2", n_samples)
    floor = [np.mean(0.5 * np.abs(rng.multinomial(n_samples, p / p.sum(), size=200) / n_samples - p).sum(1))
             for p in (np.asarray(x, dtype=float) for x in rows["probs"])]
    exp = float(np.mean(floor)) if floor else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    tv = float(ag["tv"].mean()) if len(ag) else np.nan
    return _result("03.2", "the sampling floor", n_samples >= 40, 0.5 * exp <= tv <= 1.6 * exp,
                   f"TV(letter, sample) near the floor of {n_samples} draws from the letter distribution itself "
                   "(within 0.5x to 1.6x)", f"n_samples = {n_samples}: measured TV {tv:.3f}, floor {exp:.3f}",
                   "set n_samples: 40")


def exercise_03_3(pred: pd.DataFrame, method: str) -> Result:
    """Score letter organisms by option log-likelihood: a format they were not trained for."""
    clean = pred[pred["perturbation"] == "clean"]
    chance = float((1.0 / clean["K"]).mean()) if len(clean) else np.nan
    acc = clean.groupby("model")["correct"].mean()
    letter = [m for m in acc.index if _is_letter_model(m)]
    shown = bool(letter) and bool((acc[letter] <= chance + 0.1).all())
    return _result("03.3", "the wrong scoring format", method == "loglik", shown,
                   "every letter organism's clean accuracy falls to within 0.1 of chance under loglik",
                   f"method {method}; clean accuracy " + ", ".join(f"{m} {acc[m]:.2f}" for m in acc.index)
                   + f"; chance {chance:.2f}", 'set method: "loglik"')


def exercise_03_4(pred: pd.DataFrame) -> Result:
    """Colour survives blur but not contrast loss (per-family curves)."""
    col = pred[pred["task"] == "colour"]
    last = {p: col.loc[(col["perturbation"] == p) & (col["level"] == col.loc[col["perturbation"] == p, "level"].max()),
                       "correct"].mean() for p in ("defocus_blur", "contrast")}
    d = float(last["defocus_blur"] - last["contrast"])
    return _result("03.4", "colour under blur and contrast", {"defocus_blur", "contrast"} <= set(col["perturbation"]),
                   d >= 0.3, "colour accuracy at the last blur level minus at the last contrast level >= 0.3",
                   f"colour accuracy: blur {last['defocus_blur']:.2f}, contrast {last['contrast']:.2f} "
                   f"(difference {d:+.2f}; NaN: not in this run)", "set perturbations: [defocus_blur, contrast]")
