"""The exercises of notebook 07 (escalation): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``escalation.exercise_07_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...exercises import Result, result

__all__ = ["exercise_07_1", "exercise_07_2", "exercise_07_3"]


def exercise_07_1(rci: pd.DataFrame, fail_reading: str) -> Result:
    """The conditional reading of D_fail is 1 whenever anything flips."""
    flip = rci[rci["n_flip"] > 0]
    ones = float((flip["D_fail"] == 1).mean()) if len(flip) else np.nan
    return result("07.1", "D_fail read conditionally", fail_reading == "conditional", ones == 1.0,
                   "every cell with a flip has D_fail exactly 1: the term only says that something flipped",
                   f"fail_reading {fail_reading}: D_fail = 1 in {ones:.0%} of the {len(flip)} cells with a flip",
                   'set fail_reading: "conditional"')

def exercise_07_2(states: pd.DataFrame, trci_weights: Sequence[float]) -> Result:
    """D_spatial is the same for every model: dropping it cannot change the models' ranking."""
    from .indices import trci

    mine = trci(states, list(trci_weights)).units
    base = trci(states).units
    keys = [c for c in mine.columns if c in ("model", "group")]
    both = mine[[*keys, "T_mu"]].merge(base[[*keys, "T_mu"]], on=keys, suffixes=("", "_uniform"))
    by = both.groupby([c for c in keys if c != "model"] or (lambda _: 0))
    r1, r2 = by["T_mu"].rank(method="min"), by["T_mu_uniform"].rank(method="min")
    same = bool((r1 == r2).all())
    return result("07.2", "removing D_spatial", len(trci_weights) == 5 and trci_weights[3] == 0, same,
                   "within every group the models rank the same by T_mu as with uniform weights",
                   f"trci_weights {list(trci_weights)}: {int((r1 != r2).sum())} of {len(both)} ranks differ",
                   "set trci_weights: [0.25, 0.25, 0.25, 0.0, 0.25]")

def exercise_07_3(fill_table: pd.DataFrame, fill: str) -> Result:
    """Break T-RCI's reading on purpose: a black band costs accuracy where it removes no evidence."""
    fill_table = fill_table.reindex(columns=list(dict.fromkeys(["fill", "condition", "mean", *fill_table])))
    clean = fill_table.loc[fill_table["condition"] == "clean", "mean"]
    sky = fill_table[(fill_table["fill"] == fill) & fill_table["condition"].astype(str).str.startswith("sky band")]
    drop = float(clean.iloc[0] - sky["mean"].min()) if len(clean) and len(sky) else np.nan
    return result("07.3", "the fill is a corruption of its own", fill == "black", drop >= 0.3,
                   "under the fill's evidence-free sky-band control accuracy drops by >= 0.3 from clean",
                   f"fill {fill}: clean {clean.iloc[0] if len(clean) else np.nan:.3f}, sky band "
                   f"{sky['mean'].min() if len(sky) else np.nan:.3f} (drop {drop:+.3f})", 'set fill: "black"')
