"""The exercises of notebook 03 (scoring): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``score.exercise_03_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..exercises import Result, changed, is_letter_model, result

__all__ = ["exercise_03_1", "exercise_03_2", "exercise_03_3", "exercise_03_4"]


def exercise_03_1(acc: pd.DataFrame, agreement: pd.DataFrame, temperature: float) -> Result:
    """Break the black-box estimate on purpose: sampling below T = 1 sharpens the distribution."""
    letter = [m for m in acc["model"].unique() if is_letter_model(m)]
    a = acc[acc["model"].isin(letter)].pivot_table(index=["model", "perturbation"], columns="method",
                                                    values="confidence")
    gap = float((a["sample"] - a["letter"]).mean()) if {"sample", "letter"} <= set(a.columns) else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    same = float(ag["same_argmax"].mean()) if len(ag) else np.nan
    return result("03.1", "sampling at a low temperature", temperature < 1.0, gap >= 0.15 and same >= 0.7,
                   "the sampled confidence exceeds the letter-logit confidence by >= 0.15 while the argmax mostly "
                   "agrees (>= 0.7)", f"T = {temperature:g}; letter organisms: confidence gap sample - letter "
                   f"{gap:+.3f}, same argmax {same:.2f}", "set temperature: 0.2")

def exercise_03_2(agreement: pd.DataFrame, agree_pred: pd.DataFrame, n_samples: int) -> Result:
    """The sampling floor: the distance between sampled and letter distributions is what n samples allow."""
    from .. import repro

    letter = [m for m in agree_pred["model"].unique() if is_letter_model(m)]
    rows = agree_pred[agree_pred["model"].isin(letter) & (agree_pred["method"] == "letter")]
    rng = repro.rng("teaching", "03.2", n_samples)
    floor = [np.mean(0.5 * np.abs(rng.multinomial(n_samples, p / p.sum(), size=200) / n_samples - p).sum(1))
             for p in (np.asarray(x, dtype=float) for x in rows["probs"])]
    exp = float(np.mean(floor)) if floor else np.nan
    ag = agreement[agreement["model"].isin(letter) & (agreement["pair"] == "letter vs sample")]
    tv = float(ag["tv"].mean()) if len(ag) else np.nan
    return result("03.2", "the sampling floor", n_samples >= 40, 0.5 * exp <= tv <= 1.6 * exp,
                   f"TV(letter, sample) near the floor of {n_samples} draws from the letter distribution itself "
                   "(within 0.5x to 1.6x)", f"n_samples = {n_samples}: measured TV {tv:.3f}, floor {exp:.3f}",
                   "set n_samples: 40")

def exercise_03_3(pred: pd.DataFrame, method: str) -> Result:
    """Score letter organisms by option log-likelihood: a format they were not trained for."""
    clean = pred[pred["perturbation"] == "clean"]
    chance = float((1.0 / clean["K"]).mean()) if len(clean) else np.nan
    acc = clean.groupby("model")["correct"].mean()
    letter = [m for m in acc.index if is_letter_model(m)]
    shown = bool(letter) and bool((acc[letter] <= chance + 0.1).all())
    return result("03.3", "the wrong scoring format", method == "loglik", shown,
                   "every letter organism's clean accuracy falls to within 0.1 of chance under loglik",
                   f"method {method}; clean accuracy " + ", ".join(f"{m} {acc[m]:.2f}" for m in acc.index)
                   + f"; chance {chance:.2f}", 'set method: "loglik"')

def exercise_03_4(pred: pd.DataFrame, perturbations: Sequence[str] | None = None,
                  unchanged: Mapping[str, Any] | None = None) -> Result:
    """Colour survives blur but not contrast loss (per-family curves).

    Done when the run holds both corruptions and ``perturbations`` differs from the unchanged run's (the
    default run keeps every corruption of its manifest, contrast and blur among them).
    """
    col = pred[pred["task"] == "colour"]
    last = {p: col.loc[(col["perturbation"] == p) & (col["level"] == col.loc[col["perturbation"] == p, "level"].max()),
                       "correct"].mean() for p in ("defocus_blur", "contrast")}
    d = float(last["defocus_blur"] - last["contrast"])
    done = {"defocus_blur", "contrast"} <= set(col["perturbation"]) and changed(unchanged, "perturbations",
                                                                                 perturbations)
    return result("03.4", "colour under blur and contrast", done,
                   d >= 0.3, "colour accuracy at the last blur level minus at the last contrast level >= 0.3",
                   f"colour accuracy: blur {last['defocus_blur']:.2f}, contrast {last['contrast']:.2f} "
                   f"(difference {d:+.2f}; NaN: not in this run)", "set perturbations: [defocus_blur, contrast]")
