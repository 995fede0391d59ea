"""Rank correlation between two read-outs across units (models, conditions), with a bootstrap interval.

:func:`spearman` is Spearman's ρ (Pearson's correlation of the average ranks, ties
sharing their mean rank) over the units where both values are finite; it is NaN
with fewer than three such units or when either side is constant there. Values
are rounded to 12 digits first, so that two read-outs equal up to floating-point
noise tie.

:func:`spearman_interval` gives ρ with a percentile interval, either

* from **paired replicates**: ``x_reps`` and ``y_reps`` of shape ``(n_boot, n_units)``,
  each row the two read-outs recomputed on one resample of the items (the same
  resample for every unit and both read-outs); ρ is computed per row. This is the
  measurement's uncertainty with the units fixed.
* or, without replicates, by resampling the **units** with replacement
  (``n_boot`` resamples from ``rng``): the uncertainty of ρ as a property of a
  population the units were drawn from.
"""

from __future__ import annotations

import numpy as np

from .bootstrap import percentile_interval

__all__ = ["spearman", "spearman_interval"]


def _ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v), np.float64)
    ranks[order] = np.arange(1, len(v) + 1)
    for u in np.unique(v):  # ties share their mean rank
        m = v == u
        if m.sum() > 1:
            ranks[m] = ranks[m].mean()
    return ranks


def spearman(x, y) -> float:
    """Spearman's ρ of ``x`` and ``y`` (same length) over the units where both are finite (module docstring)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d of the same length, got {x.shape} and {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = np.round(x[ok], 12), np.round(y[ok], 12)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def spearman_interval(x, y, *, x_reps=None, y_reps=None, n_boot: int = 1000, rng: np.random.Generator | None = None,
                      ci: float = 0.95) -> tuple[float, float, float]:
    """``(rho, lo, hi)``: :func:`spearman` and its percentile interval from paired replicates, or else from
    ``n_boot`` resamples of the units (``rng`` required then). NaN bounds when fewer than half the replicates
    give a ρ."""
    rho = spearman(x, y)
    if (x_reps is None) != (y_reps is None):
        raise ValueError("give both x_reps and y_reps, or neither")
    if x_reps is not None:
        xr, yr = np.asarray(x_reps, np.float64), np.asarray(y_reps, np.float64)
        if xr.shape != yr.shape or xr.ndim != 2 or xr.shape[1] != len(np.asarray(x)):
            raise ValueError(f"x_reps and y_reps must be (n_boot, {len(np.asarray(x))}), got {xr.shape}, {yr.shape}")
        reps = np.array([spearman(a, b) for a, b in zip(xr, yr, strict=True)])
    else:
        if n_boot and not isinstance(rng, np.random.Generator):
            raise TypeError("resampling the units needs rng, a numpy.random.Generator")
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        idx = rng.integers(0, len(x), size=(n_boot, len(x))) if n_boot else np.zeros((0, len(x)), int)
        reps = np.array([spearman(x[i], y[i]) for i in idx])
    ok = reps[np.isfinite(reps)] if len(reps) else reps
    if len(ok) < max(1, len(reps) / 2):
        return rho, float("nan"), float("nan")
    lo, hi = percentile_interval(ok, ci)
    return rho, float(lo), float(hi)
