"""Do the lenses agree? Rank correlations between two read-outs across models (or conditions), tested by permutation.

Each of the four papers ranks models through one lens. Two lenses **agree** on a run
when they rank its units the same way, read in the same direction: a pair
``(x, y, sign)`` states which way agreement points (``sign = +1``: a unit high on
``x`` is expected high on ``y``; ``-1``: low, e.g. a robustness index against an
error rate). No paper compares the lenses, so the direction is the card's, stated
before the run.

**The null and the test** (:func:`rank_test`). The claim being false is two
*unrelated rankings* of the same units: every pairing of the ``y`` ranks with the
``x`` ranks equally likely. Spearman's ρ (:func:`vlmrobust.stats.correlation.spearman`)
is compared with its permutation distribution at the run's number of units (all
``n!`` orders up to 8 units, else 9,999 random ones), two-sided at 5 %: the row is
**reproduced** when ρ lies in the upper 2.5 % tail in the stated direction,
**not reproduced** when it lies in the opposite 2.5 % tail (the lenses rank the
units in opposite ways), **undecided** otherwise. The critical ρ falls with the
number of units roughly as 1.96/√(n − 1): about 0.79 at 7 units, 0.59 at 12, so a
dozen models decide only when |ρ| ≳ 0.6. Below :data:`MIN_UNITS` (6) units the card
does not decide at all: at 5 units only a perfect ranking clears the test (ρ = 0.9,
one swap of neighbours, has p = 5/120), so one unit's measurement noise would
decide the row.

The interval beside ρ (``lo``, ``hi``) is a percentile interval from resampled
units, shown for reading, not used by the test (with a dozen units it is coarse,
and with five it collapses onto a handful of values).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from ...stats.claims import NOT_REPRODUCED, REPRODUCED, UNDECIDED, Claim, interval_text, no_subject
from ...stats.correlation import _ranks, spearman, spearman_interval

__all__ = ["AGREEMENT_COLUMNS", "ALPHA", "MIN_UNITS", "rank_test", "units_to_decide", "agreement_table",
           "agreement_checks"]

AGREEMENT_COLUMNS = ("x", "y", "sign", "n_units", "units", "rho", "lo", "hi", "interval_from", "p_agree",
                     "p_disagree", "crit", "verdict")
#: Two-sided level of the permutation test (half in each tail).
ALPHA = 0.05
#: Fewest units at which a rank correlation may decide (module docstring).
MIN_UNITS = 6
#: Up to this many units every order is enumerated (8! = 40,320); above, random permutations.
EXACT_UP_TO = 8
N_PERM = 9999
PAPER = "no paper compares these lenses (each reports one); the card's direction, stated in advance"


@lru_cache(maxsize=16)
def _all_orders(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int16)


def _null_rhos(rx: np.ndarray, ry: np.ndarray, rng: np.random.Generator | None) -> tuple[np.ndarray, bool]:
    """ρ of ``rx`` against every order (or random orders) of ``ry``: the unrelated-rankings null."""
    n = len(rx)
    if n <= EXACT_UP_TO:
        idx, exact = _all_orders(n), True
    else:
        if rng is None:
            raise TypeError(f"a permutation test over {n} units needs rng")
        idx, exact = np.argsort(rng.random((N_PERM, n)), axis=1), False
    cx, cy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((cx * cx).sum() * (cy * cy).sum()))
    return (cy[idx] @ cx) / den, exact


def rank_test(x, y, sign: int = 1, *, rng: np.random.Generator | None = None, alpha: float = ALPHA,
              min_units: int = MIN_UNITS) -> dict:
    """The card's agreement rule on two read-outs over the same units (module docstring): a pure function of the
    arrays. Returns ``rho, n, p_agree, p_disagree, crit`` (the smallest ρ in the stated direction that clears the
    test at this ``n`` and these ties; NaN where none can) and ``verdict``."""
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign!r}")
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    rho = spearman(x, y)
    out = {"rho": rho, "n": n, "p_agree": np.nan, "p_disagree": np.nan, "crit": np.nan, "verdict": UNDECIDED}
    if not np.isfinite(rho) or n < min_units:
        return out
    rx, ry = _ranks(np.round(x[ok], 12)), _ranks(np.round(y[ok], 12))
    null, exact = _null_rhos(rx, ry, rng)
    s, obs, eps = sign * null, sign * rho, 1e-9
    k = len(s) if exact else len(s) + 1
    add = 0 if exact else 1
    p_agree = (add + int((s >= obs - eps).sum())) / k
    p_disagree = (add + int((s <= obs + eps).sum())) / k
    srt = np.sort(s)
    tail = (len(srt) - np.searchsorted(srt, srt - eps, side="left") + add) / k  # P(null ≥ value) per value
    passing = srt[tail <= alpha / 2]
    out |= {"p_agree": p_agree, "p_disagree": p_disagree, "crit": float(passing.min()) if len(passing) else np.nan}
    if p_agree <= alpha / 2:
        out["verdict"] = REPRODUCED
    elif p_disagree <= alpha / 2:
        out["verdict"] = NOT_REPRODUCED
    return out


def units_to_decide(rho: float, n: int, *, unit: str = "model", min_units: int = MIN_UNITS) -> str:
    """The ``decide`` text of an undecided agreement row: ``min_units`` when the run has fewer units, else the
    number at which ρ would clear the test if it stayed where it is (critical ρ ≈ 1.96/√(n − 1))."""
    if n < min_units:
        return (f"at least {min_units} {unit}s (now {n}): below {min_units}, a ranking one swap of neighbours from "
                "perfect cannot clear the permutation test")
    if not np.isfinite(rho) or abs(rho) < 1e-9:
        return f"ρ is 0 or undefined (a constant read-out): no number of {unit}s decides it (now {n})"
    need = max(n + 1, math.ceil(1 + (1.96 / abs(rho)) ** 2))
    return f"about {need:,} {unit}s (now {n}) if ρ stays at {rho:+.2f}: ρ must clear ≈ 1.96/√(n − 1)"


def agreement_table(lenses: pd.DataFrame, pairs: Sequence[tuple[str, str, int]], *, unit: str = "model",
                    n_boot: int = 1000, rng: np.random.Generator | None = None, ci: float = 0.95,
                    min_units: int = MIN_UNITS) -> pd.DataFrame:
    """One row per pair (:data:`AGREEMENT_COLUMNS`) from ``lenses`` (one row per ``unit``, a column per
    read-out): ρ, its permutation test (:func:`rank_test`) and the interval from ``n_boot`` resampled units."""
    if unit not in lenses.columns:
        raise ValueError(f"lenses has no unit column {unit!r}")
    if lenses[unit].duplicated().any():
        raise ValueError(f"lenses must hold one row per {unit}; duplicated: "
                         f"{sorted(lenses.loc[lenses[unit].duplicated(), unit].astype(str).unique())}")
    rows = []
    for x, y, sign in pairs:
        missing = [c for c in (x, y) if c not in lenses.columns]
        if missing:
            raise ValueError(f"lenses has no column(s) {missing}; columns: {list(lenses.columns)}")
        xv, yv = lenses[x].to_numpy(float), lenses[y].to_numpy(float)
        t = rank_test(xv, yv, sign, rng=rng, min_units=min_units)
        _, lo, hi = spearman_interval(xv, yv, n_boot=n_boot, rng=rng, ci=ci)
        ok = np.isfinite(xv) & np.isfinite(yv)
        rows.append({"x": x, "y": y, "sign": sign, "n_units": t["n"],
                     "units": ", ".join(lenses.loc[ok, unit].astype(str)), "rho": t["rho"], "lo": lo, "hi": hi,
                     "interval_from": f"resampled {unit}s", "p_agree": t["p_agree"], "p_disagree": t["p_disagree"],
                     "crit": t["crit"], "verdict": t["verdict"]})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def agreement_checks(table: pd.DataFrame, claims: Mapping[tuple[str, str], str], *, unit: str = "model",
                     subject: str = "") -> list[Claim]:
    """Claim rows of :func:`agreement_table`: ``claims[(x, y)]`` says in words what agreement would mean; the
    verdict is the row's permutation test. ``subject`` (default: the row's units) names the models tried."""
    out = []
    for r in table.itertuples(index=False):
        side = "above" if r.sign > 0 else "below"
        crit = f"|ρ| ≥ {r.crit:.2f} at {r.n_units} {unit}s" if np.isfinite(r.crit) else \
            f"no ρ at {r.n_units} {unit}s (fewer than {MIN_UNITS}, or a constant read-out)"
        test = (f"Spearman's ρ of {r.x} and {r.y} across the {unit}s against its permutation null, two-sided 5 %: "
                f"reproduced when ρ is in the upper 2.5 % tail {side} 0 in the stated direction, not reproduced in "
                f"the opposite tail; decides when {crit}")
        claim = claims.get((r.x, r.y), f"{r.x} and {r.y} rank the {unit}s alike")
        null = f"rankings unrelated: the {unit}s' {r.y} values in a random order against their {r.x} values " \
               "(permutation)"
        if r.n_units == 0:
            out.append(no_subject(claim, PAPER, null, test, f"no {unit} of the run has both {r.x} and {r.y}"))
            continue
        ok = r.verdict != REPRODUCED or (np.isfinite(r.lo) and np.isfinite(r.hi))
        verdict = r.verdict if ok else UNDECIDED
        p = f"; permutation p {r.p_agree:.3f} (agree), {r.p_disagree:.3f} (disagree)" if np.isfinite(r.p_agree) \
            else ""
        measured = (f"ρ {interval_text(r.rho, r.lo, r.hi)} over {r.n_units} {unit}s "
                    f"(interval: {r.interval_from}){p}")
        decide = "" if verdict != UNDECIDED else (
            units_to_decide(r.rho, r.n_units, unit=unit) if ok else "the resampled units give no interval")
        out.append(Claim(claim, PAPER, subject or r.units, null, test, float(r.rho), float(r.lo), float(r.hi),
                         measured, verdict, decide))
    return out
