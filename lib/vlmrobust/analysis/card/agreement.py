"""Do the lenses agree? Rank correlations between two read-outs across models (or conditions).

Each of the four papers ranks models through one lens. Two lenses **agree** on a run
when they rank its units the same way, read in the same direction: a pair
``(x, y, sign)`` states which way agreement points (``sign = +1``: a unit high on
``x`` is expected high on ``y``; ``-1``: low, e.g. a robustness index against an
error rate). Per pair, :func:`agreement_table` gives Spearman's ρ across the units
(:func:`vlmrobust.stats.correlation.spearman`) with its 95 % percentile interval,
from paired item replicates where the lens tables carry them, else from resampled
units, and a verdict: **agrees** when the interval lies on ``sign``'s side of 0,
**disagrees** when it lies wholly on the other side, undecided otherwise, and
undecided whatever the interval below ``min_units`` units (5 by default: with
three or four units a resampled rank correlation takes only a few values, and an
interval of resampled units collapses onto them). Nothing
is claimed beyond the run's units: with few models the interval is wide, and an
undecided row says that, not that the lenses differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.claims import Claim, interval_text, verdict
from ...stats.correlation import spearman_interval

__all__ = ["AGREEMENT_COLUMNS", "agreement_table", "agreement_checks"]

AGREEMENT_COLUMNS = ("x", "y", "sign", "n_units", "rho", "lo", "hi", "interval_from", "agrees")


def agreement_table(lenses: pd.DataFrame, pairs: Sequence[tuple[str, str, int]], *, unit: str = "model",
                    reps: Mapping[str, np.ndarray] | None = None, n_boot: int = 1000,
                    rng: np.random.Generator | None = None, ci: float = 0.95, min_units: int = 5) -> pd.DataFrame:
    """One row per pair (:data:`AGREEMENT_COLUMNS`) from ``lenses`` (one row per ``unit``, a column per
    read-out). ``reps[col]`` (optional): ``(n_boot, n_units)`` replicates of that column, in ``lenses``'s row
    order, each row computed on one resample of the items shared by every column; a pair uses them when both
    its columns have them, otherwise it resamples the units (``rng``)."""
    if unit not in lenses.columns:
        raise ValueError(f"lenses has no unit column {unit!r}")
    if lenses[unit].duplicated().any():
        raise ValueError(f"lenses must hold one row per {unit}; duplicated: "
                         f"{sorted(lenses.loc[lenses[unit].duplicated(), unit].astype(str).unique())}")
    reps = dict(reps or {})
    rows = []
    for x, y, sign in pairs:
        missing = [c for c in (x, y) if c not in lenses.columns]
        if missing:
            raise ValueError(f"lenses has no column(s) {missing}; columns: {list(lenses.columns)}")
        if sign not in (1, -1):
            raise ValueError(f"sign of ({x}, {y}) must be +1 or -1, got {sign!r}")
        paired = x in reps and y in reps
        rho, lo, hi = spearman_interval(lenses[x].to_numpy(float), lenses[y].to_numpy(float),
                                        x_reps=reps.get(x) if paired else None,
                                        y_reps=reps.get(y) if paired else None, n_boot=n_boot, rng=rng, ci=ci)
        ok = verdict(lo, hi, 0.0) if sign > 0 else verdict(lo, hi, -np.inf, 0.0)
        n = int((np.isfinite(lenses[x].to_numpy(float)) & np.isfinite(lenses[y].to_numpy(float))).sum())
        ok = ok if n >= min_units else None
        rows.append({"x": x, "y": y, "sign": sign, "n_units": n, "rho": rho, "lo": lo, "hi": hi,
                     "interval_from": "item replicates" if paired else f"resampled {unit}s", "agrees": ok})
    out = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    out["agrees"] = out["agrees"].astype(object)
    return out


def agreement_checks(table: pd.DataFrame, claims: Mapping[tuple[str, str], str], *, unit: str = "model") -> list[Claim]:
    """Observation rows of :func:`agreement_table`: ``claims[(x, y)]`` says in words what agreement would
    mean; the verdict is the row's ``agrees``."""
    out = []
    for r in table.itertuples(index=False):
        side = "above" if r.sign > 0 else "below"
        out.append(Claim(claims.get((r.x, r.y), f"{r.x} and {r.y} rank the {unit}s alike"),
                         "no paper compares these lenses (each reports one)",
                         f"Spearman rho of {r.x} and {r.y} across {r.n_units} {unit}s, "
                         f"95 % interval ({r.interval_from}) {side} 0",
                         f"rho {interval_text(r.rho, r.lo, r.hi)}", r.agrees))
    return out
