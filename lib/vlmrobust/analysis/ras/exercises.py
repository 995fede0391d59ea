"""The exercises of notebook 04 (RAS): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``ras.exercise_04_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...exercises import Result, result

__all__ = ["exercise_04_1", "exercise_04_2", "exercise_04_3"]


def _holds(obs: pd.DataFrame) -> dict:
    return {str(c).split(".")[0]: r for c, r in zip(obs["claim"], obs["reproduced"], strict=True)}

def exercise_04_1(obs: pd.DataFrame, models: Sequence[str]) -> Result:
    """The observations on a generative story with no image in it."""
    held = _holds(obs)
    n = sum(v is True for v in held.values())
    return result("04.1", "the observations without a VLM", all(m.startswith("sim-") for m in models), n >= 2,
                   "at least two of the four observations hold on simulated predictions: they are properties "
                   "of the metric and of calibrated noise, not evidence about vision",
                   "observations " + ", ".join(f"{k}: {v}" for k, v in held.items()),
                   'set predictions_from: "simulate"')

def exercise_04_2(obs: pd.DataFrame, t6: pd.DataFrame) -> Result:
    """Break Observation 1 on purpose: one model has no rank to mismatch."""
    shifts = int((t6[["abs_dr", "delta_acc_dr", "rel_rob_dr"]].to_numpy() != 0).sum())
    o1 = _holds(obs).get("1")
    return result("04.2", "a ranking claim needs several models", len(t6) == 1, shifts == 0 and o1 is not True,
                   "with a single model every rank shift is 0 and Observation 1 does not hold",
                   f"{len(t6)} model(s); non-zero rank shifts {shifts}; Observation 1: {o1}",
                   "set models: [tiny-letters]")

def exercise_04_3(tsum: pd.DataFrame, levels: Sequence[int]) -> Result:
    """Trajectory classes need a ladder: with one severity no change can be transient."""
    share = tsum.groupby(tsum["klass"].astype(str))["share"].mean()
    transient = float(share.filter(like="transient").sum())
    persistent = float(share.filter(like="persistent").sum())
    return result("04.3", "one severity, no transients", len(levels) == 1, transient == 0 and persistent > 0,
                   "transient classes are empty and every answer change is persistent",
                   f"levels {list(levels)}: transient share {transient:.3f}, persistent {persistent:.3f}",
                   "set levels: [5]")
