"""The exercises of notebook 01 (choosing the questions): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``selection.exercise_01_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...exercises import Result, changed, result

__all__ = ["exercise_01_1", "exercise_01_2", "exercise_01_3"]


def exercise_01_1(silent: pd.DataFrame, coverage: pd.DataFrame, selectors: Sequence[str],
                  unchanged: Mapping[str, Any] | None = None) -> Result:
    """Eq. 3 is an AND: remove the selector that is silent on whole families and they become eligible.

    Done when ``sel-text`` is left out and ``selectors`` differs from the unchanged run's (``unchanged``,
    resolved; ``None``: from the zoo's selectors).
    """
    from ...models import zoo

    lost = sorted(coverage.index[coverage["eligible"] == 0]) if len(coverage) else []
    silent_txt = ", ".join(f"{r.selector} on {r.family}" for r in silent.itertuples()) or "none"
    before = {"selectors": zoo.names("selector")} if unchanged is None else unchanged
    done = "sel-text" not in selectors and changed(before, "selectors", list(selectors))
    return result("01.1", "one selector decides eligibility", done, len(silent) == 0 and not lost,
                   "no selector is silent on a whole family, and every family keeps eligible questions",
                   f"selectors {list(selectors)}; silent: {silent_txt}; families without eligible questions: "
                   f"{lost or 'none'}", "set selectors: [sel-dropout, sel-see] (leave out sel-text)")

def exercise_01_2(eligible: np.ndarray, kappa: np.ndarray, perturbations: Sequence[str]) -> Result:
    """Break the selection on purpose: one mild corruption moves almost no answer, so A+ collapses."""
    share, zero = float(np.mean(eligible)), float(np.mean(np.asarray(kappa) == 0))
    return result("01.2", "a corruption that does not respond", len(perturbations) <= 2, share < 0.15,
                   "A+ holds under 15 % of the pool", f"corruptions {list(perturbations)}: A+ {share:.1%} of the "
                   f"pool, κ = 0 for {zero:.1%}", "set perturbations: [brightness]")

def exercise_01_3(eval_gini, selected: np.ndarray, models: Sequence[str], selectors: Sequence[str]) -> Result:
    """Fig. 9(a) for the models that chose the split: its responsiveness carries over to them."""
    from ... import repro
    from .nulls import mean_shift

    m = mean_shift(np.asarray(eval_gini), np.asarray(selected), n_boot=1000, rng=repro.rng("teaching", "01.3")) \
        if eval_gini is not None else dict.fromkeys(("split", "pool", "diff", "lo", "hi"), np.nan)
    return result("01.3", "the split's responsiveness, for its own selectors",
                   bool(models) and set(models) <= set(selectors), m["lo"] > 0,
                   "split minus pool Gini of the evaluated models, bootstrap interval above 0",
                   f"models {list(models)}: split {m['split']:.3f}, pool {m['pool']:.3f}, difference "
                   f"{m['diff']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]", "set models: [sel-dropout, sel-see, sel-text]")
