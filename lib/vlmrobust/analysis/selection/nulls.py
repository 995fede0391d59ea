"""Random size-matched subsets: the nulls the observations of notebook 01 are compared with (seed 000, §IV-E).

A property of the split ``S`` (its mean κ, its overlap with another selection,
the families it keeps) means something only against what **any** subset of the
same size drawn from the same pool would show. Each null here draws
``n_draws`` subsets of ``k`` items uniformly without replacement from a pool
mask (A⁺ or the whole pool), from an explicit :class:`numpy.random.Generator`,
and summarises the statistic over the draws with :func:`null_summary`: its
mean, its central ``ci`` interval (percentile, :func:`~vlmrobust.stats.bootstrap.percentile_interval`)
and the one-sided share of draws at or above the observed value
(``p_upper = (1 + #{draws ≥ observed}) / (1 + n_draws)``, the add-one
Monte-Carlo p-value).

Choices fixed here: a subset larger than its pool is the whole pool (``k`` is
clipped); two "independent" random selections (:func:`random_pair_jaccard`)
are two independent draws; the retention null of Table I
(:func:`retention_null`) is exact in distribution: a random ``k``-subset of
an eligible pool of ``N`` items that holds all ``|S|`` split items keeps a
hypergeometric number of them (``ngood = |S|``, ``nbad = N − |S|``,
``nsample = k``).
"""

from __future__ import annotations

import numpy as np

from ...stats.bootstrap import interval_of, percentile_interval, replicate_sums, resample_counts

__all__ = ["mean_shift", "random_subsets", "null_summary", "random_pair_jaccard", "random_subset_means",
           "retention_null", "groups_lost_null"]


def _rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (vlmrobust.repro.rng(...)), got {type(rng).__name__}")
    return rng


def random_subsets(mask: np.ndarray, k: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_draws, len(mask))`` boolean masks, each ``min(k, mask.sum())`` items of ``mask`` drawn uniformly
    without replacement (one row per draw)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 1 or k < 0 or n_draws < 0:
        raise ValueError(f"need a 1-D mask, k >= 0 and n_draws >= 0, got {mask.shape}, {k}, {n_draws}")
    idx = np.flatnonzero(mask)
    k = min(int(k), len(idx))
    keys = _rng(rng).random((n_draws, len(idx)))
    picks = np.argsort(keys, axis=1, kind="stable")[:, :k]
    out = np.zeros((n_draws, len(mask)), dtype=bool)
    out[np.arange(n_draws)[:, None], idx[picks]] = True
    return out


def null_summary(draws: np.ndarray, observed: float, ci: float = 0.95) -> dict:
    """``mean``, ``lo``, ``hi`` (central ``ci`` percentile interval) and ``p_upper`` of a null's draws
    (``n_draws`` also); NaN when there are no finite draws."""
    d = np.asarray(draws, dtype=np.float64).ravel()
    d = d[np.isfinite(d)]
    if not len(d):
        return {"mean": np.nan, "lo": np.nan, "hi": np.nan, "p_upper": np.nan, "n_draws": 0}
    lo, hi = percentile_interval(d[:, None], ci)
    return {"mean": float(d.mean()), "lo": float(lo[0]), "hi": float(hi[0]),
            "p_upper": float((1 + np.sum(d >= observed - 1e-12)) / (1 + len(d))), "n_draws": int(len(d))}


def random_pair_jaccard(mask: np.ndarray, k: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Jaccard indices of ``n_draws`` pairs of independent random ``k``-subsets of ``mask``."""
    both = random_subsets(mask, k, 2 * n_draws, rng)
    a, b = both[:n_draws], both[n_draws:]
    union = (a | b).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, (a & b).sum(axis=1) / union, np.nan)


def random_subset_means(values: np.ndarray, mask: np.ndarray, k: int, n_draws: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Mean of ``values`` over each of ``n_draws`` random ``k``-subsets of ``mask``."""
    values = np.asarray(values, dtype=np.float64)
    sub = random_subsets(mask, k, n_draws, rng)
    n = sub.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, sub.astype(np.float64) @ np.where(np.isfinite(values), values, 0.0) / n, np.nan)


def retention_null(n_eligible: int, split_size: int, k: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Items of the split kept by ``n_draws`` random ``k``-subsets of an eligible pool of ``n_eligible`` items
    that holds the whole split (hypergeometric draws)."""
    if not 0 <= split_size <= n_eligible:
        raise ValueError(f"the split ({split_size}) must lie inside the eligible pool ({n_eligible})")
    k = min(int(k), int(n_eligible))
    if n_eligible == 0 or k == 0:
        return np.zeros(n_draws)
    return _rng(rng).hypergeometric(split_size, n_eligible - split_size, k, size=n_draws).astype(np.float64)


def groups_lost_null(groups: np.ndarray, mask: np.ndarray, k: int, n_draws: int,
                     rng: np.random.Generator) -> np.ndarray:
    """How many of the groups present in ``mask`` each of ``n_draws`` random ``k``-subsets of ``mask`` holds
    no item of."""
    g = np.asarray(groups, dtype=object)
    mask = np.asarray(mask, dtype=bool)
    labels, codes = np.unique(g.astype(str), return_inverse=True)
    present = np.zeros(len(labels), dtype=bool)
    present[codes[mask]] = True
    sub = random_subsets(mask, k, n_draws, rng)
    onehot = np.zeros((len(g), len(labels)))
    onehot[np.arange(len(g)), codes] = 1.0
    held = (sub.astype(np.float64) @ onehot) > 0
    return (present[None, :] & ~held).sum(axis=1).astype(np.float64)


def mean_shift(values: np.ndarray, in_split: np.ndarray, *, n_boot: int, rng: np.random.Generator,
               ci: float = 0.95) -> dict:
    """Mean of ``values`` on the split minus on the whole pool, with a bootstrap interval.

    Returns ``pool``, ``split``, ``diff``, ``lo``, ``hi``, ``n_pool``, ``n_split``.
    Each resample draws the pool's items with replacement (counts, so one
    matrix product gives every replicate); the split's mean in a resample is
    over the drawn split items. ``n_boot = 0`` gives NaN bounds.
    """
    x = np.asarray(values, dtype=np.float64)
    s = np.asarray(in_split, dtype=bool)
    if x.shape != s.shape or x.ndim != 1:
        raise ValueError(f"values and in_split must be 1-D of one length, got {x.shape} and {s.shape}")
    out = {"n_pool": int(len(x)), "n_split": int(s.sum()), "pool": float(x.mean()) if len(x) else np.nan,
           "split": float(x[s].mean()) if s.any() else np.nan}
    out["diff"] = out["split"] - out["pool"]
    out["lo"] = out["hi"] = np.nan
    if n_boot and s.any():
        W = resample_counts(len(x), n_boot, rng)
        sums = replicate_sums(W, np.column_stack([x, np.where(s, x, 0.0), s.astype(np.float64),
                                                  np.ones(len(x))]))
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = sums[:, 1] / sums[:, 2] - sums[:, 0] / sums[:, 3]
        out["lo"], out["hi"] = interval_of(diff, ci)
    return out
