"""The exercises of notebook 04 (RAS): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``ras.exercise_04_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...exercises import Result, result
from ...stats.claims import REPRODUCED, combine

__all__ = ["exercise_04_1", "exercise_04_2", "exercise_04_3"]


def _held(claims: pd.DataFrame) -> dict[str, str]:
    """Each observation's verdict (its rows combined), keyed by its number."""
    parts: dict[str, list[str]] = {}
    for c, v in zip(claims["claim"], claims["verdict"], strict=True):
        parts.setdefault(str(c).split(".")[0], []).append(str(v))
    return {k: combine(v) for k, v in parts.items()}


def exercise_04_1(claims: pd.DataFrame, models: Sequence[str], sim_damage: float = 1.0) -> Result:
    """The observations on a generative story with no image in it, with and without a corruption effect."""
    held = _held(claims)
    n = sum(v == REPRODUCED for v in held.values())
    story = all(m.startswith("sim-") for m in models)
    if sim_damage > 0:
        shown, expected = n >= 1, (
            "at least one observation is reproduced by a story with no image, only a corruption effect that "
            "flattens and perturbs the option distributions: what it reproduces is evidence that corruption "
            "damages the predictions, not of a visual mechanism; with sim_damage: 0 (no vision) none is")
    else:
        shown, expected = n == 0, ("with no corruption effect (the no-vision null the rules are calibrated on) "
                                   "no observation is reproduced")
    return result("04.1", "the observations without a VLM", story, shown, expected,
                  f"sim_damage {sim_damage:g}; observations " + ", ".join(f"{k}: {v}" for k, v in held.items()),
                  'set predictions_from: "simulate"')


def exercise_04_2(obs: pd.DataFrame, t6: pd.DataFrame) -> Result:
    """Break Observation 1 on purpose: one model has no rank to mismatch."""
    shifts = int((t6[["abs_dr", "delta_acc_dr", "rel_rob_dr"]].to_numpy() != 0).sum())
    rank = obs[obs["claim"].astype(str).str.contains("ranking")]
    o1 = combine(rank["verdict"].astype(str)) if len(rank) else "no row"
    return result("04.2", "a ranking claim needs several models", len(t6) == 1, shifts == 0 and o1 != REPRODUCED,
                   "with a single model every rank shift is 0 and the ranking part of Observation 1 is not "
                   "reproduced (it has no subject)",
                   f"{len(t6)} model(s); non-zero rank shifts {shifts}; Observation 1, rankings: {o1}",
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
