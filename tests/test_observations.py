"""Seed 000's four observations: data on which each holds, and data on which it fails."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust import stats
from vlmrobust.analysis import ras
from vlmrobust.analysis.ras import claims as obs


def _t3(ras_cc=-0.02, ras_wc=0.4):
    return pd.DataFrame({"state": ["cc", "cw", "wc", "ww"], "share": [0.4, 0.12, 0.05, 0.43],
                         "RAS": [ras_cc, -0.7, ras_wc, -0.02], "dC": [0.02, 0.68, -0.5, -0.01]})


def _t6(shift=1):
    return pd.DataFrame({"model": ["a", "b"], "abs_dr": [shift, -shift], "delta_acc_dr": [0, 0], "rel_rob_dr": [0, 0]})


def _t2(r_c=(-0.1, -0.2), mixed=(10.0, 0.0)):
    return pd.DataFrame({"model": ["a", "b"], "R_c": list(r_c), "R_w": [0.05, 0.02], "mixed_pct": list(mixed)})


def test_obs1_holds_and_fails():
    assert obs.obs1_stability_hides_instability(_t3(), _t6()).reproduced is True
    assert obs.obs1_stability_hides_instability(_t3(ras_cc=0.01), _t6()).reproduced is False
    assert obs.obs1_stability_hides_instability(_t3(), _t6(shift=0)).reproduced is False
    undecided = obs.obs1_stability_hides_instability(_t3().iloc[1:], _t6())
    assert undecided.reproduced is None and "nan" in undecided.measured


def test_obs2_holds_and_fails():
    assert obs.obs2_gains_not_structural(_t3(), _t2()).reproduced is True
    assert obs.obs2_gains_not_structural(_t3(ras_wc=-0.1), _t2()).reproduced is False
    assert obs.obs2_gains_not_structural(_t3(), _t2(r_c=(-0.1, 0.05))).reproduced is False
    assert obs.obs2_gains_not_structural(_t3(), _t2(mixed=(0.0, 0.0))).reproduced is False


def _traj(loss, corr):
    """Trajectories with the given (dS_med, dC_med) for loss and correction classes."""
    rows = [{"klass": "persistent loss", "dS_med": s, "dC_med": c} for s, c in loss]
    rows += [{"klass": "transient correction", "dS_med": s, "dC_med": c} for s, c in corr]
    return pd.DataFrame(rows)


def _tsum(spread=0.1, n=10):
    return pd.DataFrame({"model": ["a", "b", "a", "b"], "klass": ["persistent loss"] * 2 + ["always correct"] * 2,
                         "n": [n] * 4, "RAS": [-0.5, -0.5 + spread, 0.0, 0.5]})


def test_obs3_overconfidence_needs_both_signs():
    holds = _traj(loss=[(-0.1, 0.3), (0.2, 0.4)], corr=[(0.1, -0.2)])
    assert obs.obs3_paths_differ_in_support(holds, _tsum()).reproduced is True
    # sharper but *better* aligned is not overconfident: ΔS̃ < 0 alone must not count
    sharper_only = _traj(loss=[(-0.1, -0.3), (0.2, 0.4)], corr=[(0.1, -0.2)])
    check = obs.obs3_paths_differ_in_support(sharper_only, _tsum())
    assert check.reproduced is False and "overconfident share of loss trajectories 0.0%" in check.measured
    not_hesitant = _traj(loss=[(-0.1, 0.3)], corr=[(0.1, 0.2), (-0.1, -0.2)])
    assert obs.obs3_paths_differ_in_support(not_hesitant, _tsum()).reproduced is False
    assert obs.obs3_paths_differ_in_support(holds, _tsum(spread=0.01)).reproduced is False
    # a class seen fewer than min_n times per model carries no spread
    assert obs.obs3_paths_differ_in_support(holds, _tsum(n=3)).reproduced is False
    assert obs.obs3_paths_differ_in_support(_traj([], [(0.1, -0.2)]), _tsum()).reproduced is None


def _cells(r_c, r_w):
    levels = np.arange(1, len(r_c) + 1)
    return pd.DataFrame({"level": np.repeat(levels, 2), "R_c": np.repeat(r_c, 2), "R_w": np.repeat(r_w, 2)})


def test_obs4_holds_and_fails():
    assert obs.obs4_severity_helps_wrong(_cells([-0.1, -0.2, -0.3], [0.01, 0.05, 0.1])).reproduced is True
    assert obs.obs4_severity_helps_wrong(_cells([-0.1, -0.2, -0.3], [0.1, 0.05, 0.01])).reproduced is False
    assert obs.obs4_severity_helps_wrong(_cells([-0.3, -0.2, -0.1], [0.01, 0.05, 0.1])).reproduced is False
    # R_w above |R_c| at one severity
    assert obs.obs4_severity_helps_wrong(_cells([-0.1, -0.2, -0.3], [0.01, 0.05, 0.4])).reproduced is False
    assert obs.obs4_severity_helps_wrong(_cells([-0.1], [0.1])).reproduced is None


def test_observations_table_shape():
    table = ras.claims_table(_t2(), _t3(), _t6(), _traj([(-0.1, 0.3)], [(0.1, -0.2)]), _tsum(),
                                         _cells([-0.1, -0.2], [0.01, 0.05]))
    assert list(table.columns) == list(stats.CLAIM_COLUMNS) and len(table) == 4
    assert table["reproduced"].tolist() == [True, True, True, True]
    assert table["claim"].str.match(r"^[1-4]\. ").all() and table["paper"].str.len().gt(20).all()


def test_regime_examples_pick_the_deepest_matching_pair():
    pairs = pd.DataFrame({
        "dS": [0.3, 0.5, -0.2, 0.1, -0.4, 0.0],
        "dC": [0.3, 0.1, 0.4, -0.2, -0.4, 0.5],
        "state": pd.Categorical(["cc", "cw", "cw", "wc", "cc", "cc"], categories=ras.STATES),
    })
    got = ras.regime_examples(pairs)
    assert got == {"worse-flatter": 0, "worse-sharper": 2, "better-flatter": 3, "better-sharper": 4}
    # no pair in the matching state: the regime's deepest pair of any state
    only = pairs.assign(state=pd.Categorical(["cw"] * 6, categories=ras.STATES))
    assert ras.regime_examples(only)["worse-flatter"] == 0
    assert ras.regime_examples(pairs.iloc[:1])["better-sharper"] is None
    assert set(ras.REGIME_NAMES) == set(ras.REGIMES[:4]) == set(ras.REGIME_STATES)


@pytest.mark.parametrize("bad", [[[0.1, 0.2, 0.3]], np.zeros((3, 3))])
def test_cov_ellipse_rejects_bad_points(bad):
    import matplotlib.pyplot as plt

    from vlmrobust import figures

    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="xy must be"):
        figures.cov_ellipse(ax, bad)
    plt.close(fig)


def test_verdict_combine_and_interval_text():
    from vlmrobust.stats.claims import combine, interval_text, verdict

    assert verdict(0.2, 0.4, 0.0, 1.0) is True  # inside the region
    assert verdict(0.0, 1.0, 0.0, 1.0) is True  # the edges belong to it
    assert verdict(-0.3, -0.1, 0.0) is False and verdict(1.1, 1.2, high=1.0) is False  # wholly outside
    assert verdict(-0.1, 0.3, 0.0) is None and verdict(0.9, 1.1, 0.0, 1.0) is None  # straddles an edge
    assert verdict(float("nan"), 0.3) is None
    assert combine([True, True]) is True and combine([True, None]) is None and combine([None, False]) is False
    assert combine([]) is None
    assert interval_text(0.4242, 0.3, 0.55) == "0.42 [0.30, 0.55]"
    assert interval_text(0.4242, float("nan"), 0.5, digits=3) == "0.424"
    assert interval_text(float("nan"), 0.0, 1.0) == "n/a"
