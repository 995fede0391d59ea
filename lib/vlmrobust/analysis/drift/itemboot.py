"""The bootstrap over items behind seed 002's observation rows (notebook 05), and the statistics they share.

Every row of :func:`vlmrobust.analysis.drift.claims.claims_table` is
decided by :func:`vlmrobust.stats.claims.verdict`: a statistic's 95 %
percentile interval against the acceptance region stated in the row's ``test``
text (:class:`Part`; a row of several parts combines them, :func:`lead` names
the part that decides it).

**The unit is the item** (an image with its question). :class:`ItemBoot` draws
``n_boot`` resamples of a row's items with replacement, as resample counts
(:func:`vlmrobust.stats.bootstrap.resample_counts`, from a seeded generator of
:func:`vlmrobust.repro.rng`). Every statistic here is a function of per-item
sums (a flip rate: flips and instances per item; a mean drift: the sum and count
of its distances; Cohen's d: counts, sums and sums of squares), so each
resample is one product of the counts with the per-item sums
(:func:`~vlmrobust.stats.bootstrap.replicate_sums`). All statistics of one row
share its resamples: a difference between two perturbations, two regimes or two
rungs of a size ladder is **paired** (both sides see the same resampled items).

:class:`Est` carries a statistic's point value (every item once) beside its
replicates; arithmetic on :class:`Est` applies to both, so that a statistic is
written once, e.g. ``d = (m_p - m_c) / ((v_p + v_c) / 2).sqrt()``.

The claim rows built on it are in :mod:`.claims` (the entry point) and
:mod:`.claims_patterns` (the rows that read only the probe rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ...probes.regimes import REGIMES
from ...stats.bootstrap import interval_of, replicate_sums, resample_counts
from ...stats.claims import NOT_REPRODUCED, UNDECIDED, combine, decide_text, interval_text, verdict
from ...stats.grouped import group_codes
from .instability import TABLE_UNIONS, UNION_SIX

__all__ = ["Est", "ItemBoot", "Part", "lead", "decided", "exact_rate", "SMALL_N",
           "GEOMETRIC", "TEXT", "TABLE_SIX", "REGIMES", "ABOVE_0", "BELOW_0",
           "drift_rows", "flip_rates", "mean_drift", "moments", "cohens_d", "models_of", "smallest", "nan_est"]

#: Seed 002's semantic overlay, and the perturbations that Tables 2-4 and 28 list: its geometric ones and TextOverlay.
TEXT = "text_overlay"
TABLE_SIX = UNION_SIX
GEOMETRIC = tuple(p for p in TABLE_SIX if p != TEXT)
#: Below this many items a :class:`Part`'s interval is the t-widened bootstrap SD interval (:meth:`Part.ci`).
SMALL_N = 30
#: Region edges of "interval above 0" / "below 0" (strictly: an interval [0, 0] is not above 0).
ABOVE_0 = 1e-12
BELOW_0 = -1e-12


@dataclass(frozen=True)
class Est:
    """A statistic's point value (all items once) and its bootstrap replicates (one per resample)."""

    point: float
    reps: np.ndarray

    def _op(self, other, f) -> Est:
        with np.errstate(all="ignore"):
            if isinstance(other, Est):
                return Est(float(f(self.point, other.point)), f(self.reps, other.reps))
            return Est(float(f(self.point, other)), f(self.reps, other))

    def __add__(self, o) -> Est:
        return self._op(o, np.add)

    __radd__ = __add__

    def __sub__(self, o) -> Est:
        return self._op(o, np.subtract)

    def __rsub__(self, o) -> Est:
        return self._op(o, lambda a, b: np.subtract(b, a))

    def __mul__(self, o) -> Est:
        return self._op(o, np.multiply)

    __rmul__ = __mul__

    def __truediv__(self, o) -> Est:
        return self._op(o, np.divide)

    def __neg__(self) -> Est:
        return Est(-self.point, -self.reps)

    def sqrt(self) -> Est:
        with np.errstate(all="ignore"):
            return Est(float(np.sqrt(self.point)), np.sqrt(self.reps))

    def ci(self, ci: float = 0.95) -> tuple[float, float]:
        """Percentile interval of the replicates (NaN replicates ignored; NaN when there are none)."""
        if not np.isfinite(self.point) or not len(self.reps):
            return float("nan"), float("nan")
        return interval_of(self.reps, ci)

    def verdict(self, low: float = -np.inf, high: float = np.inf) -> str:
        """:func:`~vlmrobust.stats.claims.verdict` of the 95 % interval against ``[low, high]``."""
        return verdict(*self.ci(), low, high)

    def text(self, digits: int = 3, scale: float = 1.0, sign: bool = False) -> str:
        """``0.42 [0.30, 0.55]`` (times ``scale``; ``+`` in front of non-negative values when ``sign``)."""
        lo, hi = self.ci()
        body = interval_text(scale * self.point, scale * lo, scale * hi, digits)
        return ("+" + body) if sign and np.isfinite(self.point) and self.point >= 0 else body


class ItemBoot:
    """``n_boot`` resamples (counts) of a set of items; per-item sums and their replicated totals."""

    def __init__(self, items: Iterable, n_boot: int, rng: np.random.Generator):
        self.items = pd.Index(sorted({str(i) for i in items}))
        n = len(self.items)
        self.W = resample_counts(n, n_boot, rng) if n else np.zeros((n_boot, 0))

    def zeros(self) -> np.ndarray:
        return np.zeros(len(self.items))

    def total(self, per_item: np.ndarray) -> Est:
        """The sum over items and its replicates (``W @ per_item``)."""
        v = np.asarray(per_item, dtype=np.float64)
        reps = replicate_sums(self.W, v[:, None])[:, 0] if v.size else np.zeros(len(self.W))
        return Est(float(v.sum()), reps)

    def sums(self, df: pd.DataFrame, by: Sequence[str], value=None, how: str = "sum") -> dict[tuple, np.ndarray]:
        """``{group key: per-item vector}``: the sum (``how="max"``: the maximum, from 0) of ``value`` (a column
        name or an array; 1 per row when ``None``) over the rows of each group of ``by``, item by item."""
        if not len(df):
            return {}
        codes, keys = group_codes(df, list(by))
        item = self.items.get_indexer(df["item_id"].astype(str))
        if (item < 0).any():
            raise ValueError("rows name items outside the resampled set")
        v = np.ones(len(df)) if value is None else np.asarray(df[value] if isinstance(value, str) else value,
                                                               dtype=np.float64)
        out = np.zeros((len(keys), len(self.items)))
        (np.maximum if how == "max" else np.add).at(out, (codes, item), v)
        return {k: out[i] for i, k in enumerate(keys.itertuples(index=False, name=None))}

    def ratio(self, num: np.ndarray | None, den: np.ndarray | None) -> Est:
        """``sum(num) / sum(den)`` over items (NaN when a side is missing)."""
        if num is None or den is None:
            return Est(float("nan"), np.full(len(self.W), np.nan))
        return self.total(num) / self.total(den)


def models_of(*frames: pd.DataFrame) -> list[str]:
    """The models of the frames, in order of first appearance."""
    seen: dict[str, None] = {}
    for f in frames:
        if f is not None and len(f) and "model" in f.columns:
            seen.update(dict.fromkeys(pd.unique(f["model"])))
    return list(seen)


def drift_rows(probes: pd.DataFrame, regimes: Sequence[str], value: str = "cos") -> pd.DataFrame:
    """The ``drift`` probe rows of ``regimes`` with a finite ``value``."""
    d = probes[(probes["kind"] == "drift") & probes["regime"].isin(list(regimes))]
    return d[np.isfinite(d[value].to_numpy(dtype=np.float64))]


def flip_rates(boot: ItemBoot, pairs: pd.DataFrame, union: Sequence[str] = TABLE_UNIONS["table1"]
               ) -> dict[tuple, Est]:
    """``{(model, perturbation): IFR}`` (Eq. 3) and ``{(model, "any"): IV}`` (Eq. 4) over the images with an
    instance of a perturbation of ``union`` (Table 1's "Any" by default)."""
    if not len(pairs):
        return {}
    flip = pairs["flip"].to_numpy(dtype=np.float64)
    f, n = boot.sums(pairs, ["model", "perturbation"], flip), boot.sums(pairs, ["model", "perturbation"])
    out = {k: boot.ratio(f[k], n[k]) for k in f}
    u = pairs[pairs["perturbation"].isin(list(union))]
    if len(u):
        any_flip = boot.sums(u, ["model"], u["flip"].to_numpy(dtype=np.float64), how="max")
        seen = boot.sums(u, ["model"], how="max")
        out.update({(m, "any"): boot.ratio(any_flip[(m,)], seen[(m,)]) for (m,) in any_flip})
    return out


def mean_drift(boot: ItemBoot, rows: pd.DataFrame, union: Sequence[str] = TABLE_UNIONS["table3"], value: str = "cos"
               ) -> dict[tuple, Est]:
    """``{(model, perturbation, regime): mean value}`` over instances, with ``(model, "any", regime)`` pooling
    the perturbations of ``union`` (Table 3's "Any")."""
    if not len(rows):
        return {}
    by = ["model", "perturbation", "regime"]
    s, n = boot.sums(rows, by, value), boot.sums(rows, by)
    out = {k: boot.ratio(s[k], n[k]) for k in s}
    u = rows[rows["perturbation"].isin(list(union))]
    su, nu = boot.sums(u, ["model", "regime"], value), boot.sums(u, ["model", "regime"])
    out.update({(m, "any", r): boot.ratio(su[(m, r)], nu[(m, r)]) for (m, r) in su})
    return out


def moments(boot: ItemBoot, rows: pd.DataFrame, by: Sequence[str], value: str) -> dict[tuple, tuple[Est, Est]]:
    """``{key: (mean, sample variance)}`` (``ddof = 1``) of ``value`` per group of ``by``."""
    if not len(rows):
        return {}
    x = rows[value].to_numpy(dtype=np.float64)
    n, s1, s2 = boot.sums(rows, by), boot.sums(rows, by, x), boot.sums(rows, by, x * x)
    out = {}
    for k in n:
        cnt, t1, t2 = boot.total(n[k]), boot.total(s1[k]), boot.total(s2[k])
        mean = t1 / cnt
        out[k] = (mean, (t2 - t1 * mean) / (cnt - 1))
    return out


def cohens_d(pert: tuple[Est, Est], ctrl: tuple[Est, Est]) -> Est:
    """Cohen's d with the unweighted pooled SD (seed 002 Table 4/7; as
    :func:`~vlmrobust.analysis.drift.representation.cohens_d_moments`), on every replicate."""
    (mp, vp), (mc, vc) = pert, ctrl
    return (mp - mc) / ((vp + vc) / 2.0).sqrt()


def smallest(diffs: dict[str, Est]) -> tuple[str, Est] | None:
    """The key and value of the smallest point value (``None`` when empty or all NaN)."""
    fin = {k: v for k, v in diffs.items() if np.isfinite(v.point)}
    return min(fin.items(), key=lambda kv: kv[1].point) if fin else None


def nan_est(boot: ItemBoot) -> Est:
    return Est(float("nan"), np.full(len(boot.W), np.nan))


@dataclass(frozen=True)
class Part:
    """One part of a claim row: a statistic (:class:`Est`) against its acceptance region ``[low, high]``.

    ``n`` is the number of units its interval is over (items, for the size that would decide it); ``why``
    says why there is no estimate when the point value is NaN.
    """

    name: str
    est: Est
    low: float = -np.inf
    high: float = np.inf
    n: int = 0
    unit: str = "items"
    why: str = ""
    digits: int = 3

    def text(self) -> str:
        """``name value [lo, hi]``."""
        lo, hi = self.ci()
        body = interval_text(self.est.point, lo, hi, self.digits)
        return f"{self.name} " + ("+" + body if np.isfinite(self.est.point) and self.est.point >= 0 else body)

    #: set to ``(lo, hi)`` where an exact interval replaces the bootstrap's (:func:`exact_rate`)
    interval: tuple[float, float] | None = None

    def ci(self) -> tuple[float, float]:
        """The 95 % interval: the percentile bootstrap from :data:`SMALL_N` items up; below, where the
        percentile interval is too narrow (about 88 % coverage at 6 items), the point value plus or minus
        ``t(0.975, n - 1) * sqrt(n / (n - 1))`` bootstrap SDs; an exact interval where one is given."""
        if self.interval is not None:
            return self.interval
        if not np.isfinite(self.est.point):
            return float("nan"), float("nan")
        if 1 < self.n < SMALL_N:
            reps = self.est.reps[np.isfinite(self.est.reps)]
            if len(reps) < 2:
                return float("nan"), float("nan")
            half = float(sps.t.ppf(0.975, self.n - 1) * np.sqrt(self.n / (self.n - 1)) * reps.std(ddof=1))
            return self.est.point - half, self.est.point + half
        return self.est.ci()

    @property
    def verdict(self) -> str:
        return verdict(*self.ci(), self.low, self.high)

    def decide(self) -> str:
        """What would decide the part (:func:`~vlmrobust.stats.claims.decide_text`), for an undecided row."""
        if not np.isfinite(self.est.point):
            return f"{self.name}: no estimate ({self.why or 'nothing to measure'})"
        lo, hi = self.ci()
        if self.need() > 1e6 * max(self.n, 1):  # a point on the edge (a tie at 0 against "above 0")
            return f"{self.name}: the estimate sits on the edge of the region: no size decides it (now {self.n:,} " \
                   f"{self.unit})"
        return f"{self.name}: " + decide_text(self.n, self.est.point, lo, hi, self.low, self.high, unit=self.unit)

    def need(self) -> float:
        """The size at which the part would be decided (``inf`` without an estimate)."""
        from ...stats.claims import size_to_decide

        if not np.isfinite(self.est.point):
            return np.inf
        return size_to_decide(self.n, self.est.point, *self.ci(), self.low, self.high)

    def slack(self) -> float:
        """How far inside its region the interval lies, in half-widths (the smallest is the tightest part)."""
        lo, hi = self.ci()
        half = max((hi - lo) / 2.0, 1e-300)
        return min(lo - self.low, self.high - hi) / half


def exact_rate(k: float, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95 % interval of ``k`` successes in ``n`` one-instance items (the bootstrap of a share
    of a few items collapses to a point when every item agrees: 9 of 9 gives [1, 1])."""
    if n <= 0:
        return float("nan"), float("nan")
    lo = 0.0 if k <= 0 else float(sps.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k >= n else float(sps.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def lead(parts: Sequence[Part]) -> Part | None:
    """The part that decides a row: the first part not reproduced; else the undecided part that needs the most
    units; else the reproduced part nearest its edge (``None`` without parts)."""
    if not parts:
        return None
    for p in parts:
        if p.verdict == NOT_REPRODUCED:
            return p
    und = [p for p in parts if p.verdict == UNDECIDED]
    if und:
        return max(und, key=lambda p: p.need())
    return min(parts, key=lambda p: p.slack())


def decided(parts: Sequence[Part]) -> str:
    """The row's verdict: :func:`~vlmrobust.stats.claims.combine` of its parts' verdicts."""
    return combine([p.verdict for p in parts])
