"""Spearman's rank correlation across units and its bootstrap interval (vlmrobust.stats.correlation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from vlmrobust import repro
from vlmrobust.stats.correlation import spearman, spearman_interval


def test_spearman_is_scipys_with_ties_and_drops_non_finite_units():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, y = rng.integers(0, 5, 12).astype(float), rng.normal(size=12)
        if np.ptp(x):
            assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # a NaN unit is left out: the rest are perfectly ordered
    assert spearman([1, 2, np.nan, 4, 5], [1, 2, 99, 3, 4]) == pytest.approx(1.0)
    assert np.isnan(spearman([1, 2], [1, 2])) and np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert spearman([1.0, 2.0, 3.0], [0.1 + 0.2, 0.3, 0.5]) == pytest.approx(0.866, abs=1e-3)  # 0.1+0.2 ties 0.3
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2, 3], [1, 2])


def test_interval_from_paired_replicates_and_from_units():
    x = np.arange(8, dtype=float)
    y = x + np.array([0, 0.5, -0.5, 0, 1, -1, 0, 0.2])
    # replicates that keep the order give a degenerate interval at 1; a reversed half moves the low end
    reps = np.tile(x, (10, 1))
    rho, lo, hi = spearman_interval(x, y, x_reps=reps, y_reps=reps)
    assert rho == spearman(x, y) and lo == hi == pytest.approx(1.0)
    mixed = np.vstack([np.tile(x, (5, 1)), np.tile(x[::-1], (5, 1))])
    _, lo, hi = spearman_interval(x, y, x_reps=np.tile(x, (10, 1)), y_reps=mixed)
    assert lo == pytest.approx(-1.0) and hi == pytest.approx(1.0)
    a = spearman_interval(x, y, n_boot=200, rng=repro.rng("t-corr", 1))
    b = spearman_interval(x, y, n_boot=200, rng=repro.rng("t-corr", 1))
    assert a == b and a[1] <= a[0] <= a[2] and a[1] > 0
    with pytest.raises(ValueError, match="both"):
        spearman_interval(x, y, x_reps=reps)
    with pytest.raises(TypeError, match="Generator"):
        spearman_interval(x, y, n_boot=10)
    with pytest.raises(ValueError, match="n_boot"):
        spearman_interval(x, y, x_reps=reps[:, :3], y_reps=reps[:, :3])
    # most replicates without a rho (one side constant): no interval
    flat = np.vstack([np.ones((7, 8)), np.tile(x, (3, 1))])
    rho, lo, hi = spearman_interval(x, y, x_reps=flat, y_reps=np.tile(x, (10, 1)))
    assert np.isfinite(rho) and np.isnan(lo) and np.isnan(hi)
