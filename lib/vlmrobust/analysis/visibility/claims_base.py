"""What seed 003's visibility claims share: W read as a bound, and one row over several subjects.

The checks of :mod:`.claims_accuracy` (accuracy against V) and :mod:`.claims_awareness` (confidence and
abstaining) each return a :class:`~vlmrobust.stats.claims.Claim` decided by
:func:`~vlmrobust.stats.claims.verdict` (a 95 % bootstrap interval over scenes against a region taken from
the paper; the region is in the row's ``test``). Inputs: the signal cube
(:func:`~vlmrobust.analysis.visibility.blind_spot.signal_cube`), its bootstrap means
(:func:`~vlmrobust.analysis.visibility.blind_spot.bootstrap_means`, drawn with the same resample counts as the
blind-spot table, so that every interval moves with the same scenes), the blind-spot table and its replicates,
and the **subject**: the models a row is tried on (:func:`~.claims_accuracy.seeing_models` of the evaluated
organisms for the paper's rows; the controls for the construction rows, ``section="construction"``).

**W as a bound.** Seed 003's W is mostly a bound (a signal that never reaches its mid-level inside the sweep
gives ``W >= log10(V_acc / V_min)``). A bound decides one way only (:func:`w_verdict`): ``W >= b`` holds a region
``[low, inf)`` when ``b``'s interval lies at or above ``low`` and fails a region ``[low, high]`` when it lies
above ``high``; otherwise the row is undecided, and its ``decide`` column says that a sweep reaching murkier air,
not more scenes, would decide it (:func:`w_decide`). :func:`bounded_interval` is the interval of replicates
that may lie beyond the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.claims import (
    NOT_REPRODUCED,
    REPRODUCED,
    UNDECIDED,
    Claim,
    combine,
    decide_text,
    interval_text,
    no_subject,
    verdict,
)
from .blind_spot import SignalCube

__all__ = ["BIG", "bounded_interval", "w_verdict", "w_decide"]

#: Stand-in for an unbounded replicate (a crossing outside the sweep) inside a percentile interval.
BIG = 1e9


def bounded_interval(reps: np.ndarray) -> tuple[float, float]:
    """95 % percentile interval of replicates in which ``+-inf`` marks a value beyond the sweep (kept, not
    dropped: a resample without a crossing widens the interval to infinity); NaN replicates are left out."""
    r = np.asarray(reps, np.float64).reshape(-1)
    r = np.clip(r[~np.isnan(r)], -BIG, BIG)
    if not r.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(r, [0.025, 0.975])
    fin = r[np.abs(r) < BIG]
    top, bottom = (fin.max(), fin.min()) if fin.size else (-BIG, BIG)
    return (float(-np.inf) if lo < bottom else float(lo)), (float(np.inf) if hi > top else float(hi))


def w_verdict(kind: str, lo: float, hi: float, low: float = -np.inf, high: float = np.inf) -> str:
    """:func:`verdict` for a W of kind ``=``, ``≥`` (lower bound) or ``≤`` (upper bound); ``n/a`` is undecided."""
    if kind == "=":
        return verdict(lo, hi, low, high)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return UNDECIDED
    if kind == "≥":
        return REPRODUCED if (lo >= low and np.isinf(high)) else NOT_REPRODUCED if lo > high else UNDECIDED
    if kind == "≤":
        return REPRODUCED if (hi <= high and np.isinf(low)) else NOT_REPRODUCED if hi < low else UNDECIDED
    return UNDECIDED


def w_decide(r, n_scenes: int, low: float = -np.inf, high: float = np.inf) -> str:
    """The ``decide`` text of an undecided W: scenes for a value, a murkier sweep for a bound."""
    if r is None or r.w_kind == "n/a":
        return "a signal that can be read (n/a: " + (r.flag if r is not None and r.flag else "no such signal") + ")"
    if r.w_kind == "=":
        return decide_text(n_scenes, r.w, r.w_lo, r.w_hi, low, high, unit="scenes")
    return (f"W is a {'lower' if r.w_kind == '≥' else 'upper'} bound ({r.w_kind} {r.w:.2f}): a sweep reaching "
            "murkier air (a smaller V_min) locates the crossing; more scenes only narrow the bound")


def _cells(cube: SignalCube, task: str, arm: str | None = None, models: Sequence[str] | None = None) -> list[int]:
    """The cube's cell indices for ``task`` (and ``arm``, and ``models``, when given)."""
    sel = cube.cells.task == task
    if arm is not None:
        sel &= cube.cells.arm == arm
    if models is not None:
        sel &= cube.cells.model.isin(list(models))
    return list(np.flatnonzero(sel.to_numpy()))


def _w_row(spots: pd.DataFrame, model: str, task: str, arm: str, signal: str):
    """The blind-spot table's row of one (model, task, arm, signal), or None."""
    r = spots[(spots.model == model) & (spots.task == task) & (spots.arm == arm) & (spots.signal == signal)]
    return r.iloc[0] if len(r) else None


def _w_text(r) -> str:
    """A W as the rows print it: ``= value [lo, hi]``, a bound with its sign, or ``n/a (why)``."""
    if r is None or r.w_kind == "n/a":
        return "n/a" + (f" ({r.flag})" if r is not None and r.flag else "")
    head = "" if r.w_kind == "=" else f"{r.w_kind} "
    return head + interval_text(r.w, r.w_lo, r.w_hi)


def _row(claim: str, paper: str, null: str, test: str, subject: Sequence[str], parts: list[tuple], texts: list[str],
         empty: str, section: str) -> Claim:
    """A claim over several subjects: ``parts`` are ``(verdict, value, lo, hi, decide)`` per subject; the row
    carries the combined verdict and the numbers of the first part with that verdict (for ``reproduced``, the
    one nearest the edge: the first listed)."""
    if not parts:
        return no_subject(claim, paper, null, test, empty, section=section)
    v = combine(p[0] for p in parts)
    pick = next((p for p in parts if p[0] == v), parts[0])
    decide = pick[4] if v == "undecided" else ""
    if v == UNDECIDED and not decide:
        decide = next((p[4] for p in parts if p[0] == UNDECIDED and p[4]), "more scenes")
    return Claim(claim, paper, ", ".join(subject), null, test, float(pick[1]), float(pick[2]), float(pick[3]),
                 "; ".join(texts), v, decide, section)

