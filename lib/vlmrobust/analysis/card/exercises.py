"""The exercises of notebook 08 (the reliability card): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``card.exercise_08_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...exercises import Result, result
from ...stats.claims import UNDECIDED

__all__ = ["exercise_08_1", "exercise_08_2", "exercise_08_3"]


DEFAULT_REFERENCE = "tiny-base"

def exercise_08_1(card: pd.DataFrame, reference: str) -> Result:
    """mCE is a ratio to its reference: the reference model has mCE 1 with no spread, and relative mCE 1 where
    enough corruptions define it (else refused, NaN)."""
    row = card[card["model"] == reference]
    vals = row[["mCE", "mCE_lo", "mCE_hi", "rel_mCE"]].to_numpy(float).ravel() if len(row) else np.full(4, np.nan)
    ok = bool(len(row)) and np.allclose(vals[:3], 1.0) and (np.isnan(vals[3]) or np.isclose(vals[3], 1.0))
    rel = "refused (too few corruptions degrade the reference)" if np.isnan(vals[3]) else f"{vals[3]:.3f}"
    return result("08.1", "the reference's mCE is 1 by construction", reference != DEFAULT_REFERENCE, ok,
                   f"the new reference {reference} has mCE 1 with an interval [1, 1], and relative mCE 1 "
                   "(or refused)",
                   f"reference {reference}: mCE {vals[0]:.3f} [{vals[1]:.3f}, {vals[2]:.3f}], relative mCE {rel}",
                   'set reference: "tiny-long"')

def exercise_08_2(agreement: pd.DataFrame, models: Sequence[str]) -> Result:
    """Three models cannot rank anything: every model-level agreement row is undecided."""
    rows = agreement[agreement["across"] == "models"]
    undecided = int((rows["verdict"] == UNDECIDED).sum()) if len(rows) else 0
    return result("08.2", "three models decide no agreement", 0 < len(models) <= 3,
                   len(rows) > 0 and undecided == len(rows),
                   "every model-level agreement row is undecided",
                   f"{len(models)} models: {undecided} of {len(rows)} model-level rows undecided; rho "
                   + ", ".join(f"{r:+.2f}" for r in rows["rho"]),
                   'set models: ["tiny-letters", "tiny-base", "aware-err"]')

def exercise_08_3(order: pd.DataFrame, method: str, answer_formats: Mapping[str, str | None]) -> Result:
    """Letter scoring makes the organisms that answer in words follow the option's position."""
    text = [m for m, f in answer_formats.items() if f == "text" and m in set(order["model"])]
    rates = order.set_index("model").reindex(text)["position_rate"].to_numpy(float) if text else np.array([])
    shown = len(rates) > 0 and bool(np.all(rates >= 0.5))
    return result("08.3", "scored by letter, word answerers follow the position", method == "letter", shown,
                   "every organism that answers in words keeps the position on at least half of the rotated "
                   "questions (position rate >= 0.5)",
                   f"method {method}: position rate "
                   + (", ".join(f"{m} {r:.2f}" for m, r in zip(text, rates, strict=True))
                      or "n/a (no organism that answers in words)"),
                   'set method: "letter"')
