"""Calibration: reliability table, ECE with equal-width bins, error-detection AUROC, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from vlmrobust.stats import calibration as cal


def test_bins_are_equal_width_and_one_goes_last():
    assert cal.bin_index([0.0, 0.05, 0.1, 0.95, 1.0], 10).tolist() == [0, 0, 1, 9, 9]
    assert cal.bin_index([0.5], 2).tolist() == [1]


def test_ece_by_hand():
    # bin 9: conf 0.9, 0.9 with one right -> |0.5 - 0.9| ; bin 2: conf 0.25 right -> |1 - 0.25|
    conf, right = [0.9, 0.9, 0.25], [True, False, True]
    assert cal.ece(conf, right) == pytest.approx((2 * 0.4 + 1 * 0.75) / 3)
    assert cal.ece([1.0, 1.0], [True, True]) == 0.0
    assert cal.ece([0.7] * 10, [True] * 7 + [False] * 3) == pytest.approx(0.0)
    assert np.isnan(cal.ece([np.nan], [True]))  # nothing parsed: no ECE


def test_reliability_table():
    t = cal.reliability([0.9, 0.9, 0.25, np.nan], [True, False, True, True], n_bins=4)
    assert t.n.tolist() == [0, 1, 0, 2]
    assert t.accuracy.iloc[3] == 0.5 and t.confidence.iloc[3] == pytest.approx(0.9)
    assert t.gap.iloc[1] == pytest.approx(0.75) and np.isnan(t.accuracy.iloc[0])
    assert t.lo.tolist() == [0.0, 0.25, 0.5, 0.75] and t.hi.iloc[-1] == 1.0


def test_error_auroc_by_hand():
    # right answers 0.9, 0.6; wrong 0.6, 0.2: pairs (0.9>0.6), (0.9>0.2), (0.6=0.6 half), (0.6>0.2) -> 3.5/4
    assert cal.error_auroc([0.9, 0.6, 0.6, 0.2], [True, True, False, False]) == pytest.approx(0.875)
    assert cal.error_auroc([0.1, 0.9], [True, False]) == 0.0
    assert cal.error_auroc([0.5, 0.5], [True, False]) == 0.5
    assert np.isnan(cal.error_auroc([0.5, 0.7], [True, True]))


def test_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        cal.ece([0.5], [True, False])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cal.ece([1.5], [True])
    with pytest.raises(ValueError, match="n_bins"):
        cal.bin_index([0.5], 0)
