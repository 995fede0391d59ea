"""The decisions behind notebook 01's claims (seed 000, §IV and supplement II): pure functions of arrays.

Each function takes the arrays a claim is about and returns a :class:`Decision`: the
measured value, its 95 % interval and the verdict of :func:`vlmrobust.stats.claims.verdict`
against the claim's acceptance region. :mod:`.claims` calls them on a run's data and
:mod:`.rules` on data drawn from each claim's null, so the rule that decides a row is the
rule whose false-pass rate is measured.

Acceptance regions that start at a null value are **open** there (:func:`above`): an
interval that sits on 0, as a difference of two identical sets does, is not above it.

* :func:`shift_above_zero` — a responsiveness measure (κ on held-out corruptions, the evaluated
  models' Gini) higher on a split than on its pool, within strata of K: bootstrap over the pool's items;
* :func:`easy_above_chance` — the clean-easy share of the top-κ items above what guessing gives;
* :func:`rank_below` — Spearman ρ(κ, clean error) below a ceiling, ranks recomputed per resample;
* :func:`share_above_zero` — a share of items (Eq. 3's exclusions among a pooled-κ threshold);
* :func:`novelty_vs_permuted` — the split's largest family share against splits cut with ν permuted over A⁺;
* :func:`ji_above_chance` — a Jaccard index against two random size-matched subsets;
* :func:`retention_above_chance` — a retention (Table I) above a majority and the exact hypergeometric null;
* :func:`paired_above_zero` — a paired per-item difference (fixed − recomputed retention).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from scipy.stats import rankdata

from ...stats.bootstrap import interval_of, percentile_interval, replicate_sums, resample_counts, resample_indices
from ...stats.claims import NOT_REPRODUCED, REPRODUCED, UNDECIDED, combine, verdict
from .nulls import random_pair_jaccard

__all__ = ["Decision", "above", "below", "shift_above_zero", "easy_above_chance", "chance_easy", "rank_below",
           "spearman_rows", "share_above_zero", "concentration", "novelty_vs_permuted", "ji_above_chance",
           "retention_above_chance", "wilson", "paired_above_zero", "combine_decisions"]


@dataclass(frozen=True)
class Decision:
    """A rule's outcome: ``value`` with its interval ``[lo, hi]``, the acceptance region ``[low, high]`` the
    interval was compared with, the ``verdict``, ``n`` units (for the size that would decide it) and, for a
    rule with an exact null, its one-sided ``p``."""

    value: float
    lo: float
    hi: float
    verdict: str
    low: float = -np.inf
    high: float = np.inf
    n: int = 0
    p: float = np.nan


def above(lo: float, hi: float, edge: float) -> str:
    """Verdict of ``[lo, hi]`` against the open region ``(edge, ∞)``."""
    return verdict(lo, hi, np.nextafter(edge, np.inf))


def below(lo: float, hi: float, edge: float) -> str:
    """Verdict of ``[lo, hi]`` against the open region ``(-∞, edge)``."""
    return verdict(lo, hi, -np.inf, np.nextafter(edge, -np.inf))


def _nan_decision(n: int = 0, low: float = -np.inf, high: float = np.inf) -> Decision:
    return Decision(np.nan, np.nan, np.nan, UNDECIDED, low, high, n)


def shift_above_zero(values: np.ndarray, in_split: np.ndarray, *, n_boot: int, rng: np.random.Generator,
                     ci: float = 0.95, strata: np.ndarray | None = None) -> Decision:
    """Mean of ``values`` on the split minus on the pool, percentile bootstrap over the pool's items (split
    membership travels with its item); reproduced when the interval lies above 0 (Fig. 3(a), Fig. 9(a)).

    With ``strata`` (one label per item, e.g. the number of options K) the difference is taken within each
    stratum and weighted by the split's items in it: a split rich in yes/no questions, whose Gini per changed
    answer is larger (Eq. 1 with K = 2), is not called more responsive for that alone.
    """
    x, s = np.asarray(values, dtype=np.float64), np.asarray(in_split, dtype=bool)
    if x.shape != s.shape or x.ndim != 1:
        raise ValueError(f"values and in_split must be 1-D of one length, got {x.shape} and {s.shape}")
    if not s.any() or not len(x):
        return _nan_decision(len(x), 0.0)
    _, code = np.unique(np.zeros(len(x)) if strata is None else np.asarray(strata), return_inverse=True)
    H = np.eye(int(code.max()) + 1)[code]  # (items, strata)
    cols = np.column_stack([H * x[:, None], H * np.where(s, x, 0.0)[:, None], H * s[:, None], H])

    def diff(sums: np.ndarray) -> np.ndarray:
        pool, split, ns, n = np.split(sums, 4, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            within = np.where(ns > 0, split / ns - pool / n, 0.0)
            return (within * ns).sum(axis=1) / ns.sum(axis=1)

    value = float(diff(cols.sum(axis=0)[None, :])[0])
    lo = hi = np.nan
    if n_boot:
        lo, hi = interval_of(diff(replicate_sums(resample_counts(len(x), n_boot, rng), cols)), ci)
    return Decision(value, lo, hi, above(lo, hi, 0.0), 0.0, np.inf, len(x))


def _mean_above_zero(x: np.ndarray, n_boot: int, rng: np.random.Generator, ci: float) -> Decision:
    """The mean of ``x`` with its bootstrap interval over the items; reproduced when the interval lies above 0."""
    if not len(x):
        return _nan_decision(0, 0.0)
    lo = hi = np.nan
    if n_boot:
        lo, hi = interval_of(resample_counts(len(x), n_boot, rng) @ x / len(x), ci)
    return Decision(float(x.mean()), lo, hi, above(lo, hi, 0.0), 0.0, np.inf, len(x))


def chance_easy(K: np.ndarray, n_selectors: int) -> np.ndarray:
    """Per item, the probability that more than half of ``n_selectors`` guessing selectors answer it right on the
    clean image (Binomial(n, 1/K) above n/2): the clean-easy share that chance alone gives."""
    K = np.asarray(K, dtype=np.float64)
    return sps.binom.sf(np.floor(n_selectors / 2), n_selectors, 1.0 / K)


def easy_above_chance(easy: np.ndarray, chance: np.ndarray, *, n_boot: int, rng: np.random.Generator,
                      ci: float = 0.95) -> Decision:
    """§IV-C "an initially easy sample can score highly": over the top-κ items, the clean-easy share minus the
    share guessing gives (:func:`chance_easy`), bootstrap over those items; reproduced above 0."""
    x = np.asarray(easy, dtype=np.float64) - np.asarray(chance, dtype=np.float64)
    return _mean_above_zero(x, n_boot, rng, ci)


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman ρ of each row pair of ``a`` and ``b`` (ties averaged; NaN for a constant row)."""
    ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
    ra, rb = ra - ra.mean(axis=1, keepdims=True), rb - rb.mean(axis=1, keepdims=True)
    den = np.sqrt((ra ** 2).sum(axis=1) * (rb ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (ra * rb).sum(axis=1) / den, np.nan)


def rank_below(kappa: np.ndarray, err: np.ndarray, rho_max: float, *, n_boot: int, rng: np.random.Generator,
               ci: float = 0.95) -> Decision:
    """§IV-C "κ measures responsiveness, not difficulty": Spearman ρ(κ, clean error) over the items, bootstrap
    over the items (ranks recomputed per resample); reproduced when the interval lies below ``rho_max``."""
    k, e = np.asarray(kappa, dtype=np.float64), np.asarray(err, dtype=np.float64)
    if len(k) < 3 or np.ptp(k) == 0 or np.ptp(e) == 0:
        return _nan_decision(len(k), -np.inf, rho_max)
    rho = float(spearman_rows(k[None, :], e[None, :])[0])
    lo = hi = np.nan
    if n_boot:
        idx = resample_indices(len(k), n_boot, rng)
        reps = np.concatenate([spearman_rows(k[i], e[i]) for i in np.array_split(idx, max(1, n_boot // 250))])
        lo, hi = interval_of(reps, ci)
    return Decision(rho, lo, hi, below(lo, hi, rho_max), -np.inf, rho_max, len(k))


def share_above_zero(flags: np.ndarray, *, n_boot: int, rng: np.random.Generator, ci: float = 0.95) -> Decision:
    """The share of ``flags`` that are true, bootstrap over the items; reproduced when above 0."""
    x = np.asarray(flags, dtype=np.float64)
    return _mean_above_zero(x, n_boot, rng, ci)


def concentration(onehot: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Herfindahl index Σ_f share_f² of the families of each selection (rows of ``masks``): 1 for one family,
    1/F for F families in equal shares (NaN for an empty selection)."""
    m = np.atleast_2d(masks).astype(np.float64)
    counts = m @ onehot
    n = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (counts ** 2).sum(axis=1) / n ** 2, np.nan)


def novelty_vs_permuted(families: np.ndarray, kappa: np.ndarray, nu: np.ndarray, eligible: np.ndarray, *,
                        n_perm: int, rng: np.random.Generator, ci: float = 0.95) -> Decision:
    """§IV-D: the novelty term keeps the split from concentrating on one task type.

    The split of Eq. 6 (``e = κ + ν`` strictly above its mean over A⁺) is compared with ``n_perm`` splits cut
    the same way after permuting ν over A⁺ (a diversity term that knows nothing of the items: the claim
    false). Concentration is the Herfindahl index of the split's families (:func:`concentration`: the
    paper's "one task type" read over all families at once; the largest share alone moves in steps of
    1/|S| and ties between splits). Value: the permuted splits' mean index minus the split's; interval:
    the ``ci`` range of that difference over the permutations; reproduced above 0 (the split is less
    concentrated than at least ``(1 + ci)/2`` of the permuted splits).
    """
    from .selection import split_mask

    fam = np.asarray(families, dtype=object).astype(str)
    el = np.asarray(eligible, dtype=bool)
    k, v = np.asarray(kappa, dtype=np.float64), np.asarray(nu, dtype=np.float64)
    idx = np.flatnonzero(el)
    if len(idx) < 2 or not n_perm:
        return _nan_decision(len(idx), 0.0)
    real, _ = split_mask(np.where(el, k + v, np.nan), el)
    labels, codes = np.unique(fam[idx], return_inverse=True)
    onehot = np.eye(len(labels))[codes]
    keys = rng.random((n_perm, len(idx)))
    perm = np.argsort(keys, axis=1)
    e = k[idx][None, :] + v[idx][perm]
    mean = float((k[idx] + v[idx]).mean())
    masks = np.round(e, 9) > np.round(mean, 9)
    share_real = concentration(onehot, real[idx])[0]
    if not np.isfinite(share_real):
        return _nan_decision(len(idx), 0.0)
    d = concentration(onehot, masks) - share_real
    lo, hi = percentile_interval(d[np.isfinite(d)][:, None], ci)
    lo, hi = float(lo[0]), float(hi[0])
    return Decision(float(np.nanmean(d)), lo, hi, above(lo, hi, 0.0), 0.0, np.inf, len(idx))


def ji_above_chance(a: np.ndarray, b: np.ndarray, pool: np.ndarray, *, n_draws: int, n_boot: int,
                    rng: np.random.Generator, ci: float = 0.95) -> Decision:
    """§IV-E "related but distinct": the Jaccard index of two selections of one size from ``pool``. Related: its
    Monte-Carlo one-sided p-value against two random size-matched subsets of ``pool`` (``n_draws`` pairs) at most
    ``(1 − ci)/2`` (not reproduced when its bootstrap interval over the pool's items lies wholly under the null's
    ``(1 + ci)/2`` quantile); distinct: that interval below 1. Both parts are needed."""
    a, b, pool = (np.asarray(x, dtype=bool) for x in (a, b, pool))
    union = int((a | b).sum())
    if not union or not n_draws or not n_boot:
        return _nan_decision(int(pool.sum()), np.nan, 1.0)
    ji = float((a & b).sum() / union)
    draws = random_pair_jaccard(pool, int(a.sum()), n_draws, rng)
    draws = draws[np.isfinite(draws)]
    edge = float(np.quantile(draws, (1 + ci) / 2))
    p = float((1 + np.sum(draws >= ji - 1e-12)) / (1 + len(draws)))
    idx = np.flatnonzero(pool)
    W = resample_counts(len(idx), n_boot, rng)
    sums = W @ np.column_stack([(a & b)[idx], (a | b)[idx]]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi = interval_of(sums[:, 0] / sums[:, 1], ci)
    related = REPRODUCED if p <= (1 - ci) / 2 else NOT_REPRODUCED if hi < edge else UNDECIDED
    return Decision(ji, lo, hi, combine([related, below(lo, hi, 1.0)]), edge, 1.0, len(idx), p)


def wilson(k: int, n: int, ci: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (NaN for ``n = 0``)."""
    if n <= 0:
        return np.nan, np.nan
    z = float(sps.norm.ppf((1 + ci) / 2))
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(max(0.0, mid - half)), float(min(1.0, mid + half))


def retention_above_chance(kept: int, size: int, n_eligible: int, *, ci: float = 0.95,
                           majority: float = 0.5) -> Decision:
    """Table I: the retention ``kept / size`` of a size-matched leave-one-out variant. Two parts, both needed:
    its Wilson interval over the split's items above ``majority`` (the paper's "most" / "a majority"), and the
    exact one-sided p-value of ``kept`` under the null (a random ``size``-subset of an eligible pool of
    ``n_eligible`` items holding the split keeps a hypergeometric number of it) at most ``(1 − ci)/2``. The
    p-value alone cannot say "not reproduced": a retention clearly under the majority does."""
    if size <= 0 or n_eligible < size:
        return _nan_decision(size, majority)
    p = float(sps.hypergeom.sf(int(kept) - 1, n_eligible, size, size))
    lo, hi = wilson(int(kept), int(size), ci)
    parts = [above(lo, hi, majority), REPRODUCED if p <= (1 - ci) / 2 else UNDECIDED]
    return Decision(kept / size, lo, hi, combine(parts), majority, np.inf, size, p)


def paired_above_zero(a: np.ndarray, b: np.ndarray, *, n_boot: int, rng: np.random.Generator,
                      ci: float = 0.95) -> Decision:
    """Mean of the paired per-item difference ``a − b``, bootstrap over the items; reproduced above 0."""
    x = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return _mean_above_zero(x, n_boot, rng, ci)


def combine_decisions(parts: list[Decision]) -> str:
    """The verdict of a claim of several parts (:func:`vlmrobust.stats.claims.combine`)."""
    return combine([p.verdict for p in parts])
