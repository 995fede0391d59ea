"""Claims tables: each claim of a paper, what it reports, what a run measured, reproduced or not.

Every notebook closes with such a table. A check is a function of the run's
tables that returns a :class:`Claim`; :func:`claims_frame` stacks them
into a DataFrame with columns :data:`CLAIM_COLUMNS`. ``reproduced`` is
``True``/``False``, or ``None`` when the run holds no data to decide (a model
group absent, no trajectory of a class, ...): the ``measured`` text then says why.

**How a row decides** (notebooks 05 and 06): a statistic's 95 % bootstrap
interval is compared with an acceptance region ``[low, high]`` taken from the
paper (or from a stated null): :func:`verdict` **holds** when the interval lies
inside the region, **fails** when it lies wholly outside, and is **undecided**
(``None``: the interval straddles the region's edge) otherwise. A claim made for
several models or cells holds when every part holds, fails when any part fails,
and is undecided otherwise (:func:`combine`). :func:`interval_text` writes a
point value with its interval for the ``measured`` column.

Each analysis package's ``claims.py`` builds its notebook's table (``claims_table``; e.g.
:mod:`vlmrobust.analysis.ras.claims` for seed 000's four observations), with further rows in
``claims_*.py`` modules where they are many. The table is written as ``observations.csv``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["CLAIM_COLUMNS", "Claim", "claims_frame", "verdict", "combine", "interval_text"]

CLAIM_COLUMNS = ("claim", "paper", "check", "measured", "reproduced")


@dataclass(frozen=True)
class Claim:
    """One observation: the paper's claim and numbers, the rule applied here, what was measured."""

    claim: str
    paper: str
    check: str
    measured: str
    reproduced: bool | None


def claims_frame(checks: Sequence[Claim]) -> pd.DataFrame:
    """The observations table, one row per :class:`Claim` (columns :data:`CLAIM_COLUMNS`)."""
    rows = [{c: getattr(k, c) for c in CLAIM_COLUMNS} for k in checks]
    df = pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
    df["reproduced"] = df["reproduced"].astype(object)
    return df


def verdict(lo: float, hi: float, low: float = -np.inf, high: float = np.inf) -> bool | None:
    """True when ``[lo, hi]`` lies inside ``[low, high]``, False when wholly outside, None otherwise (or NaN)."""
    if np.isnan(lo) or np.isnan(hi):
        return None
    if lo >= low and hi <= high:
        return True
    if hi < low or lo > high:
        return False
    return None


def combine(parts: Iterable[bool | None]) -> bool | None:
    """All parts True (and at least one): True; any False: False; otherwise None."""
    parts = list(parts)
    if any(p is False for p in parts):
        return False
    if parts and all(p is True for p in parts):
        return True
    return None


def interval_text(x: float, lo: float, hi: float, digits: int = 2) -> str:
    """``0.42 [0.30, 0.55]``; ``n/a`` for NaN."""
    if not np.isfinite(x):
        return "n/a"
    body = f"{x:.{digits}f}"
    return body + (f" [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(lo) and np.isfinite(hi) else "")
