"""Bootstrap over questions by resampling counts (used for the intervals of seed 000's Table II).

A statistic that is a function of *sums over pairs* (means, ratios of means,
shares of cells) can be bootstrapped over questions without copying pairs: a
resample of the ``n`` questions with replacement is a vector of counts
``w`` (how often each question was drawn), and every sum becomes ``w @ X``
where ``X[i]`` holds question ``i``'s per-question sums. This gives the same
numbers as concatenating the drawn questions' pairs (duplicates included) and
recomputing, at the cost of one matrix product per batch of resamples.
"""

from __future__ import annotations

import numpy as np

__all__ = ["resample_indices", "resample_counts", "replicate_sums", "percentile_interval", "interval_of",
           "point_interval", "mean_interval"]


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (e.g. vlmrobust.repro.rng(...)), got {type(rng).__name__}")
    return rng


def resample_indices(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)`` question indices drawn uniformly with replacement, one row per resample."""
    _check_rng(rng)
    if n < 1 or n_boot < 0:
        raise ValueError(f"need n >= 1 questions and n_boot >= 0, got n={n}, n_boot={n_boot}")
    return rng.integers(0, n, size=(n_boot, n))


def resample_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)`` counts: how often each question occurs in each resample (rows sum to ``n``).

    Derived from :func:`resample_indices` with the same ``rng`` state, so a
    row-by-row check can rebuild the same resamples.
    """
    idx = resample_indices(n, n_boot, rng)
    flat = idx + (np.arange(n_boot, dtype=np.int64) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)


def replicate_sums(W: np.ndarray, X: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``W @ X`` in row chunks: the per-resample sums of every column of ``X``.

    When ``W`` holds non-negative whole numbers (resample counts), the columns of ``X`` that hold whole
    numbers too (correct or wrong, abstained, question counts) are summed in single precision if no
    partial sum can reach 2**24, below which single precision represents every whole number: the sums
    are the same to the bit, at about half the cost. Every other column is summed in double precision.
    """
    W = np.asarray(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if W.shape[1] != X.shape[0]:
        raise ValueError(f"W has {W.shape[1]} questions but X has {X.shape[0]} rows")
    out = np.empty((W.shape[0], X.shape[1]))
    whole = np.zeros(X.shape[1], dtype=bool)
    if W.size and X.size and W.min() >= 0 and np.array_equal(W, np.rint(W)):
        # a partial sum of column j is at most max(W) * sum_i |X_ij|
        whole = (X == np.rint(X)).all(axis=0) & (np.abs(X).sum(axis=0) * W.max() < 2.0**24)
    for cols, dtype in ((np.flatnonzero(whole), np.float32), (np.flatnonzero(~whole), np.float64)):
        if not cols.size:
            continue
        Xc = X[:, cols].astype(dtype) if cols.size < X.shape[1] else X.astype(dtype, copy=False)
        for s in range(0, W.shape[0], chunk):
            out[s:s + chunk, cols] = W[s:s + chunk].astype(dtype, copy=False) @ Xc
    return out


def percentile_interval(reps: np.ndarray, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates along axis 0 (NaN replicates are ignored).

    ``ci`` in ``(0, 1)``; returns ``(lo, hi)`` at quantiles ``(1 - ci)/2`` and
    ``(1 + ci)/2`` with NumPy's default linear interpolation.
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must lie in (0, 1), got {ci!r}")
    reps = np.asarray(reps, dtype=np.float64)
    if reps.shape[0] == 0:
        nan = np.full(reps.shape[1:], np.nan)
        return nan, nan.copy()
    ok = np.isfinite(reps)
    lo = np.full(reps.shape[1:], np.nan)
    hi = lo.copy()
    cols = ok.any(axis=0)
    if cols.any():
        q = np.nanquantile(np.where(ok, reps, np.nan)[:, cols], [(1 - ci) / 2, (1 + ci) / 2], axis=0)
        lo[cols], hi[cols] = q[0], q[1]
    return lo, hi


def interval_of(reps: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    """:func:`percentile_interval` of one statistic's replicates (a 1-D array), as two floats.

    NaN replicates are ignored; ``(nan, nan)`` when there are no finite replicates.
    """
    lo, hi = percentile_interval(np.asarray(reps, dtype=np.float64).reshape(-1, 1), ci)
    return float(lo[0]), float(hi[0])


def point_interval(v: np.ndarray, ci: float = 0.95) -> tuple[float, float, float]:
    """``(value, lo, hi)`` from ``v`` = the point estimate, then its replicates (weight row 0 = every unit once,
    the layout of :func:`vlmrobust.analysis.card.readouts` and the lenses)."""
    v = np.asarray(v, dtype=np.float64)
    return (float(v[0]), *interval_of(v[1:], ci))


def mean_interval(x: np.ndarray, *, n_boot: int, rng: np.random.Generator, ci: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x`` (its units resampled with replacement, as counts from
    :func:`resample_counts`); ``(nan, nan)`` when ``x`` is empty or ``n_boot = 0``."""
    x = np.asarray(x, dtype=np.float64)
    if not len(x) or not n_boot:
        return float("nan"), float("nan")
    return interval_of(resample_counts(len(x), n_boot, rng) @ x / len(x), ci)
