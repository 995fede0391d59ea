"""The sentence of finding notebook 01 prints under each figure, computed from the arrays and tables the figure
draws: every number and every direction word comes from the run."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .selection import Selection

__all__ = ["kappa_gini_finding", "novelty_finding", "plane_finding", "pool_split_finding", "shift_finding",
           "examples_finding"]


def _more(a: float, b: float) -> str:
    return "higher" if a > b else "lower" if a < b else "the same"


def kappa_gini_finding(kappa: np.ndarray, G: np.ndarray, selectors: Sequence[str],
                       perturbations: Sequence[str]) -> str:
    """κ's median and zero share, and the selector × corruption cells of largest and smallest mean G."""
    heat = np.asarray(G).mean(axis=0)
    hi, lo = np.unravel_index(np.nanargmax(heat), heat.shape), np.unravel_index(np.nanargmin(heat), heat.shape)
    return (f"κ has median {np.median(kappa):.3f} over the pool ({np.mean(np.asarray(kappa) == 0):.0%} at 0); mean G "
            f"is largest for {selectors[hi[0]]} under {perturbations[hi[1]]} ({heat[hi]:.2f}) and smallest for "
            f"{selectors[lo[0]]} under {perturbations[lo[1]]} ({heat[lo]:.2f}).")


def novelty_finding(sel: Selection) -> str:
    """ν at the first and the last greedy pick."""
    n = int(sel.eligible.sum())
    if not n:
        return "A⁺ is empty: no traversal."
    order = np.argsort(np.where(sel.eligible, sel.pick, np.iinfo(np.int64).max))[:n]
    a, b = float(sel.nu[order[0]]), float(sel.nu[order[-1]])
    word = "falls" if b < a else "rises" if b > a else "stays"
    return f"Along the {n} greedy picks ν {word} from {a:.2f} at the first to {b:.2f} at the last."


def plane_finding(sel: Selection) -> str:
    """The split's share of A⁺, and its mean κ and ν against the questions left out."""
    el, s = sel.eligible, sel.selected
    rest = el & ~s
    if not s.any() or not rest.any():
        return f"The split keeps {int(s.sum())} of {int(el.sum())} questions of A⁺."
    return (f"The cut keeps {int(s.sum())} of {int(el.sum())} questions of A⁺; their mean κ is "
            f"{sel.kappa[s].mean():.3f} "
            f"({_more(sel.kappa[s].mean(), sel.kappa[rest].mean())} than the {sel.kappa[rest].mean():.3f} of those "
            f"left out) and mean ν {sel.nu[s].mean():.3f} ({_more(sel.nu[s].mean(), sel.nu[rest].mean())} than "
            f"{sel.nu[rest].mean():.3f}).")


def pool_split_finding(kappa: np.ndarray, selected: np.ndarray, eval_gini: np.ndarray | None = None) -> str:
    """Mean κ (and the evaluated models' Gini) on the split against the pool."""
    selected = np.asarray(selected, bool)
    if not selected.any():
        return "The split is empty."
    text = (f"The selectors' mean κ is {_more(kappa[selected].mean(), kappa.mean())} on the split than on the pool "
            f"({kappa[selected].mean():.3f} against {kappa.mean():.3f})")
    if eval_gini is not None:
        text += (f"; the evaluated models' mean Gini is {_more(eval_gini[selected].mean(), eval_gini.mean())} "
                 f"({eval_gini[selected].mean():.3f} against {eval_gini.mean():.3f})")
    return text + "."


def shift_finding(tasks: pd.DataFrame) -> str:
    """The group gaining the most share from pool to split, and the one losing the most."""
    d = (tasks.split - tasks.pool).dropna()
    if not len(d):
        return "No group to compare."
    up, down = d.idxmax(), d.idxmin()
    gone = int((tasks.split <= 0).sum())
    return (f"{up} gains the most share ({tasks.pool[up]:.2f} of the pool, {tasks.split[up]:.2f} of the split), {down} "
            f"loses the most ({tasks.pool[down]:.2f} to {tasks.split[down]:.2f}); {gone} of {len(tasks)} groups are "
            "absent from the split.")


def examples_finding(items: pd.DataFrame, picks: Sequence[tuple[str, int]], kappa: np.ndarray, G: np.ndarray,
                     pred: np.ndarray) -> str:
    """Per pick, κ and how many drawn severities the first selector answers wrong."""
    parts = []
    for label, i in picks:
        d = int(np.argmax(G[i, 0]))
        wrong = int((np.asarray(pred[i, 0, d]) != items.iloc[i].answer_idx).sum())
        parts.append(f"{label} κ {kappa[i]:.3f}: {wrong} of {np.shape(pred)[3]} wrong")
    return "The first selector under its most moving corruption: " + "; ".join(parts) + "."
