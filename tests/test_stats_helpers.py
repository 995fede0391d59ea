"""The shared group-code and interval helpers of vlmrobust.stats, against plain NumPy and pandas."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.stats.bootstrap import interval_of, mean_interval, point_interval, resample_counts
from vlmrobust.stats.grouped import combined_codes, dense_codes, group_codes, has_duplicates, present_codes


@pytest.mark.parametrize("space", [50, 1 << 20])  # the lookup-table path and the np.unique path
def test_dense_codes_rank_the_keys_that_occur(space):
    rng = np.random.default_rng(0)
    keys = rng.choice(space, size=40, replace=True)
    codes, present = dense_codes(keys, space)
    assert np.array_equal(present, np.unique(keys))
    assert np.array_equal(present[codes], keys)


def test_combined_codes_are_mixed_radix_and_refuse_overflow():
    a, b = np.array([0, 1, 2, 2]), np.array([1, 0, 1, 0])
    comb, space = combined_codes([a, b], [3, 2])
    assert space == 6 and comb.tolist() == [1, 2, 5, 4]
    with pytest.raises(ValueError, match="int64"):
        combined_codes([a, b], [2**40, 2**30])


@pytest.mark.parametrize("space", [10, 1 << 20])
def test_has_duplicates_both_paths(space):
    assert not has_duplicates(np.array([1, 5, 7]), space)
    assert has_duplicates(np.array([1, 5, 1]), space)
    assert not has_duplicates(np.array([], dtype=np.int64), space)


def test_present_codes_leave_unused_categories_out_and_refuse_missing():
    col = pd.Series(pd.Categorical(["b", "a", "b"], categories=["c", "b", "a"]), name="x")
    codes, u = present_codes(col)
    assert list(u) == ["b", "a"] and codes.tolist() == [0, 1, 0]  # category order, unused "c" dropped
    arrow = pd.Series(["z", "y", "z"], dtype="string[pyarrow]", name="s")
    codes, u = present_codes(arrow)
    assert list(u) == ["y", "z"] and codes.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="'s' must not contain missing"):
        present_codes(pd.Series(["z", None], dtype="string[pyarrow]", name="s"))


def test_group_codes_match_pandas_groupby():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"m": rng.choice(["x", "y", "z"], 200), "l": rng.integers(0, 4, 200)})
    codes, keys = group_codes(df, ["m", "l"])
    ngroup = df.groupby(["m", "l"], sort=True).ngroup().to_numpy()
    assert np.array_equal(codes, ngroup)
    assert keys.to_records(index=False).tolist() == sorted(set(map(tuple, df[["m", "l"]].to_numpy().tolist())))


def test_intervals_are_percentiles_of_the_replicates():
    reps = np.arange(101, dtype=float)
    assert interval_of(reps, 0.9) == pytest.approx((5.0, 95.0))
    assert np.isnan(interval_of(np.array([np.nan, np.nan]))).all()
    assert interval_of(np.r_[reps, np.nan], 0.9) == interval_of(reps, 0.9)  # NaN replicates ignored
    assert point_interval(np.r_[42.0, reps], 0.9) == (42.0, *interval_of(reps, 0.9))


def test_mean_interval_resamples_units():
    x = np.r_[np.zeros(30), np.ones(70)]
    lo, hi = mean_interval(x, n_boot=400, rng=np.random.default_rng(3))
    reps = resample_counts(len(x), 400, np.random.default_rng(3)) @ x / len(x)
    assert (lo, hi) == tuple(np.quantile(reps, [0.025, 0.975]))
    assert lo < 0.7 < hi
    assert np.isnan(mean_interval(x[:0], n_boot=10, rng=np.random.default_rng(0))).all()
    assert np.isnan(mean_interval(x, n_boot=0, rng=np.random.default_rng(0))).all()
