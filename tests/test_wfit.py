"""The fitted blind-spot width (vlmrobust.analysis.visibility.wfit), validated on simulated curves with a known W.

The simulations are drawn at notebook 06's default size: 12 scenes, one t2 question each (chance 1/4), the
extended visibility range (14 levels, 16,000 m to 1.95 m, factor 2), scene difficulty varying by 0.2 decades.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis.visibility import blind_spot as bs
from vlmrobust.analysis.visibility import wfit, wfit_curve, wfit_sim
from vlmrobust.stats.bootstrap import percentile_interval, resample_counts

LEVELS = np.array([16000.0 / 2**k for k in range(14)])  # notebook 06, visibility_range "extended"
N_SCENES = 12  # notebook 06's default n_scenes
X_ACC = np.log10(20.0)
CURVES = {  # accuracy falls at 20 m; internal confidence 0.66 decades later; abstain slightly earlier
    "accuracy": wfit_sim.TrueCurve(floor=0.25, clean=0.95, centre=X_ACC, slope=4.0),
    "internal": wfit_sim.TrueCurve(floor=0.30, clean=0.95, centre=X_ACC - 0.6, slope=3.0),
    "abstain": wfit_sim.TrueCurve(floor=0.95, clean=0.02, centre=X_ACC + 0.1, slope=4.0),
}
AWARE = ("internal", "abstain")
AWARE_IDX = [bs.AWARE_SIGNALS.index(s) for s in AWARE]
TRUE = wfit_sim.true_crossings(CURVES, chance=0.25, scene_sd=0.2)


def _split(cube: bs.SignalCube, i: int) -> bs.SignalCube:
    return bs.SignalCube(cube.cells.iloc[[i]].reset_index(drop=True), cube.levels_m, cube.scenes,
                         cube.sums[:, i:i + 1], cube.counts[:, i:i + 1])


# ----------------------------------------------------------------------------- the curve and its crossing


def test_fit_recovers_a_noise_free_curve():
    x = np.log10(LEVELS)
    truth = np.array([[0.25, 0.95, 1.3, 4.0], [0.9, 0.05, 0.8, 2.0]])
    p = truth[:, :1] + (truth[:, 1:2] - truth[:, :1]) / (1 + np.exp(-truth[:, 3:] * (x - truth[:, 2:3])))
    n = 1e6
    theta = wfit_curve.fit_curves(n * p, np.full_like(p, n), n * truth[:, 1], np.full(2, n), LEVELS)
    np.testing.assert_allclose(theta, truth, atol=2e-3)


def test_crossing_is_the_inverse_of_the_curve_and_bounds_outside_the_sweep():
    theta = np.array([[0.25, 0.95, 1.3, 4.0],   # falls through 0.6 at its centre
                      [0.25, 0.95, 1.3, 4.0],   # mid 0.8: above the centre
                      [0.70, 0.95, 1.3, 4.0],   # floor above the mid-level: never
                      [0.25, 0.55, 1.3, 4.0],   # clean level already below it: at the first level
                      [0.25, 0.95, 5.0, 4.0]])  # crossing above 16,000 m: a bound
    mid = np.array([0.6, 0.8, 0.6, 0.6, 0.6])
    v, st = wfit_curve.crossings(theta, mid, LEVELS)
    q = (0.8 - 0.25) / 0.7
    assert v[0] == pytest.approx(10**1.3)
    assert np.log10(v[1]) == pytest.approx(1.3 + np.log(q / (1 - q)) / 4.0)
    assert list(st) == [bs.CROSSED, bs.CROSSED, bs.NEVER, bs.AT_FIRST, bs.AT_FIRST]
    assert v[2] == LEVELS[-1] and v[3] == LEVELS[0] and v[4] == LEVELS[0]
    v_up, st_up = wfit_curve.crossings([[0.95, 0.02, 1.4, 4.0]], 0.5, LEVELS, rising=True)  # an abstain rate rising
    q_up = (0.5 - 0.95) / (0.02 - 0.95)
    assert st_up[0] == bs.CROSSED and np.log10(v_up[0]) == pytest.approx(1.4 + np.log(q_up / (1 - q_up)) / 4.0)


def test_true_crossings_of_the_simulation():
    # accuracy's floor is chance, so its mid-level is the centre of every scene's curve: the population's too
    assert TRUE["accuracy"] == pytest.approx(X_ACC, abs=1e-9)
    assert TRUE["W_internal"] == pytest.approx(0.656, abs=0.002)
    assert TRUE["W_abstain"] == pytest.approx(-0.082, abs=0.002)


def test_resamples_are_those_of_the_literal_bootstrap():
    cube = wfit_sim.simulate_cube(CURVES, N_SCENES, LEVELS, np.random.default_rng(3))
    S, N = wfit.resampled_totals(cube, 50, np.random.default_rng(9))
    means = bs.bootstrap_means(cube, resample_counts(N_SCENES, 50, np.random.default_rng(9)))
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_allclose(S / N, means, equal_nan=True)


# ----------------------------------------------------------------------------- validation on a known W


def test_fitted_w_is_unbiased_and_closer_than_the_literal_crossing():
    """(a) 400 simulated runs: the fitted W's mean error is under 0.03 decades (a fifth of its spread)."""
    cube = wfit_sim.simulate_cube(CURVES, N_SCENES, LEVELS, np.random.default_rng(1), n_cells=400)
    est = wfit.estimate(cube.sums.sum(0), cube.counts.sum(0), LEVELS, cube.chance)
    means = bs.level_means(cube)
    lit = bs.blind_spots(means[..., 1:], means[..., 0], cube.chance, LEVELS)
    for sig, j in zip(AWARE, AWARE_IDX, strict=True):
        w, truth = est["w"][:, j], TRUE[f"W_{sig}"]
        assert (est["w_kind"][:, j] == 0).mean() > 0.99  # decided values, not bounds
        bias, sd = np.mean(w) - truth, np.std(w)
        assert abs(bias) < 0.03 and abs(bias) < 0.2 * sd, (sig, bias, sd)
        rmse_fit = np.sqrt(np.mean((w - truth) ** 2))
        rmse_lit = np.sqrt(np.nanmean((lit["w"][:, j] - truth) ** 2))
        assert rmse_fit < 0.85 * rmse_lit, (sig, rmse_fit, rmse_lit)


@pytest.fixture(scope="module")
def intervals():
    """100 simulated runs at the default size, each with its own 200 resamples of its scenes, fit and literal."""
    n_sims, n_boot = 100, 200
    cube = wfit_sim.simulate_cube({s: CURVES[s] for s in ("accuracy", *AWARE)}, N_SCENES, LEVELS,
                              np.random.default_rng(2), n_cells=n_sims)
    S, N, lit = [], [], []
    for i in range(n_sims):
        one = _split(cube, i)
        s_, n_ = wfit.resampled_totals(one, n_boot, np.random.default_rng([11, i]))
        S.append(s_[:, 0])
        N.append(n_[:, 0])
        lit.append(bs.bootstrap(one, n_boot, np.random.default_rng([11, i]))["w"][:, 0])
    reps = wfit.estimate(np.stack(S, 1), np.stack(N, 1), LEVELS, 0.25)["w"][..., AWARE_IDX]
    out = {"fit": percentile_interval(reps, 0.95),
           "fit expanded": percentile_interval(reps, wfit.expanded_ci(0.95, N_SCENES)),
           "literal": percentile_interval(np.stack(lit, 1)[..., AWARE_IDX], 0.95)}
    truth = np.array([TRUE[f"W_{s}"] for s in AWARE])
    return {k: ((lo <= truth) & (truth <= hi), hi - lo) for k, (lo, hi) in out.items()}


def test_interval_covers_the_true_w(intervals):
    """(b) The 95 % percentile interval covers the known W in about 95 % of the runs.

    The check: each signal's coverage over these 100 runs lies in the binomial region that holds a true
    coverage of 0.95 with probability 0.999 (0.88 measured for internal confidence, 0.91 for abstain; 1,200
    runs of 400 resamples measure 0.949 and 0.947). The expanded interval covers at least as often.
    """
    from scipy.stats import binom

    runs = intervals["fit"][0].shape[0]
    coverage = intervals["fit"][0].mean(0)
    assert ((coverage >= binom.ppf(0.001, runs, 0.95) / runs) & (coverage <= 1.0)).all(), coverage
    assert (intervals["fit expanded"][0].mean(0) >= coverage).all()


def test_interval_is_much_narrower_than_the_literal_crossings(intervals):
    """(c) Median width under 0.6 of the literal crossing's percentile interval at the same size."""
    fit_width = np.median(intervals["fit"][1], axis=0)
    lit_width = np.median(intervals["literal"][1], axis=0)
    assert (fit_width < 0.6 * lit_width).all(), (fit_width, lit_width)
    assert (fit_width < 0.9).all(), fit_width


# ----------------------------------------------------------------------------- the table the notebook reads


def test_table_rows_columns_and_seeded_intervals():
    curves = {**CURVES, "abstain2": wfit_sim.TrueCurve(floor=0.8, clean=0.0, centre=X_ACC - 0.3, slope=3.0)}
    cube = wfit_sim.simulate_cube(curves, N_SCENES, LEVELS, np.random.default_rng(5), n_cells=2)
    table = wfit.wfit_table(cube, 100, np.random.default_rng(6))
    assert list(table.columns) == list(wfit.FIT_COLUMNS)
    assert len(table) == 2 * len(bs.SIGNALS)
    again = wfit.wfit_table(cube, 100, np.random.default_rng(6))
    pd.testing.assert_frame_equal(table, again)
    acc = table[table.signal == "accuracy"]
    assert acc.W.isna().all() and (acc.V_kind == "=").all() and (acc.n_scenes == N_SCENES).all()
    assert ((acc.V_lo <= acc.V) & (acc.V <= acc.V_hi)).all()
    verbal = table[table.signal == "verbal"]  # no verbalized confidence was drawn
    assert (verbal.W_kind == "n/a").all() and (verbal.flag == bs.FLAGS[4]).all()
    decided = table[table.signal.isin(AWARE)]
    assert (decided.W_kind == "=").all() and ((decided.W_lo <= decided.W) & (decided.W <= decided.W_hi)).all()
    bare = wfit.wfit_table(cube, 0, None)
    assert bare[["V_lo", "V_hi", "W_lo", "W_hi"]].isna().all().all()
    np.testing.assert_array_equal(bare.W.to_numpy(), table.W.to_numpy())


def test_flags_follow_the_literal_reading():
    flat = {"accuracy": wfit_sim.TrueCurve(0.25, 0.28, X_ACC), "internal": CURVES["internal"],
            "abstain": wfit_sim.TrueCurve(0.95, 0.9, X_ACC)}  # accuracy at chance; the abstain option chosen when clean
    cube = wfit_sim.simulate_cube(flat, 50, LEVELS, np.random.default_rng(7))
    table = wfit.wfit_table(cube, 0).set_index("signal")
    assert table.loc["accuracy", "flag"] == bs.FLAGS[1]
    assert (table.loc[["internal", "abstain"], "W_kind"] == "n/a").all()
    lit = bs.blind_spot_table(cube, 0).set_index("signal")
    assert table.loc["abstain", "flag"] == lit.loc["abstain", "flag"] == bs.FLAGS[1]
