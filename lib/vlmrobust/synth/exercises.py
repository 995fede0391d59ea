"""The exercises of notebook 00 (the testbed): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``synth.exercise_00_<k>(...)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exercises import Result, mean_ci, result

__all__ = ["exercise_00_1", "exercise_00_2", "exercise_00_3"]


def exercise_00_1(persp: pd.DataFrame, distance_far: float) -> Result:
    """Far objects: the pinhole geometry still holds, but a far object is only a pixel or two tall."""
    far = persp[persp["distance_m"] > 40.0]
    err = (far["measured_px"] - far["predicted_px"]).abs()
    h = far["measured_px"]
    shown = len(far) >= 3 and err.median() <= 1.0 and h.median() <= 2.0
    measured = (f"{len(far)} measured objects beyond 40 m (distance_far = {distance_far:g})" + (
        f": median |measured - predicted| {err.median():.2f} px, median height {h.median():.1f} px"
        if len(far) else ""))
    return result("00.1", "objects far away", distance_far >= 80 and len(far) > 0, shown,
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
    return result("00.2", "a benchmark a model can score by position", n_min <= 5, gain >= 0.15,
                   "the best single letter per family beats chance (1/K) by >= 0.15 on the four-option families",
                   f"{n_min} item(s) per family; the best letter scores {np.mean(best):.2f} on average against "
                   f"chance {np.mean(1 / four['K']):.2f} (gain {gain:+.2f})", "set n_per_family: 3")

def exercise_00_3(preds: pd.DataFrame) -> Result:
    """The size ladder: does the largest language model beat the smallest on the same held-out items?"""
    from ..models import zoo

    rungs = sorted((m for m in preds["model"].unique() if m in zoo.names("ladder")),
                   key=lambda m: zoo.meta(m).get("ladder_rung", 0))
    wide = preds.pivot_table(index="item_id", columns="model", values="correct", aggfunc="mean")
    d, lo, hi = mean_ci(wide[rungs[-1]] - wide[rungs[0]]) if len(rungs) >= 2 else (np.nan,) * 3
    done = len(rungs) >= 2 and set(preds["model"]) <= set(rungs)
    return result("00.3", "the size ladder", done, lo > 0, "the largest rung's clean accuracy minus "
                   "the smallest's, paired over items, has its interval above 0",
                   f"rungs scored {rungs}" + (f"; {rungs[-1]} - {rungs[0]}: {d:+.3f} [{lo:+.3f}, {hi:+.3f}] over "
                                              f"{len(wide)} items" if len(rungs) >= 2 else ""),
                   'set models: ["role:ladder"] and n_heldout: 30')
