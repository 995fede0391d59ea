"""The exercises of notebook 05 (representation drift): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``drift.exercise_05_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...exercises import Result, changed, result

__all__ = ["exercise_05_1", "exercise_05_2", "exercise_05_3"]


def exercise_05_1(pairs: pd.DataFrame, shift_reading: str, patch: int = 8) -> Result:
    """Fixed shifts: a cyclic shift by whole patches (8 px for the organisms) flips fewer answers than a smaller one."""
    tr = pairs[pairs["perturbation"] == "translate"]
    on = (tr["param"].abs() % patch) == 0
    grid, off = float(tr.loc[on, "flip"].mean()), float(tr.loc[~on, "flip"].mean())
    return result("05.1", "shifts at native resolution", shift_reading == "fixed", off - grid >= 0.04,
                   f"translation IFR at offsets that are not multiples of the {patch}-px patch exceeds IFR at "
                   "multiples (a whole-patch cyclic shift keeps every patch) by >= 0.04",
                   f"shift_reading {shift_reading}: IFR {grid:.3f} at nominal offsets ±{patch}, ±{2 * patch} px, "
                   f"{off:.3f} at the others (difference {off - grid:+.3f})", 'set shift_reading: "fixed"')

def exercise_05_2(floor: pd.DataFrame, dtype: str) -> Result:
    """Break 'drift is far above numerical noise' on purpose: half precision raises the noise floor."""
    ratio = float(floor.loc[floor["metric"] == "cos", "ratio"].min())
    return result("05.2", "a noise floor at half precision", dtype in ("float16", "bfloat16"), ratio < 100,
                   "the smallest drift is less than 100 times the largest noise floor (cosine distance)",
                   f"dtype {dtype or 'checkpoint'}: smallest drift / largest floor {ratio:.3g}",
                   'set dtype: "bfloat16"')

def exercise_05_3(t5: pd.DataFrame, size_ladder: Sequence[str] | None = None,
                  unchanged: Mapping[str, Any] | None = None) -> Result:
    """Finding (iv) on three rungs: accuracy rises with size, the overlay flip rate does not fall.

    Done when the run's table holds three rungs or more and ``size_ladder`` differs from the unchanged run's
    (the default run's empty ladder already reads the zoo's three rungs).
    """
    t = t5.sort_values("size")
    done = len(t) >= 3 and t["size"].nunique() == len(t) and changed(unchanged, "size_ladder", size_ladder)
    lo, hi = t.iloc[0], t.iloc[-1]
    shown = hi["base_acc"] > lo["base_acc"] and hi["TextOverlay IFR"] >= lo["TextOverlay IFR"] - 0.05
    return result("05.3", "scale does not buy robustness", done, shown,
                   "the largest rung is more accurate than the smallest, and its TextOverlay IFR is not lower "
                   "by more than 0.05", f"{lo['model']} -> {hi['model']}: accuracy {lo['base_acc']:.1f} -> "
                   f"{hi['base_acc']:.1f} %, TextOverlay IFR {lo['TextOverlay IFR']:.3f} -> "
                   f"{hi['TextOverlay IFR']:.3f}",
                   "set size_ladder: [ladder-48, ladder-64, ladder-96] (on the lesson variant, which has two rungs)")
