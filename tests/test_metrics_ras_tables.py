"""Seed 000 §VI and tables: Eqs. 13-16, Tables II, III, IV, VI, bootstrap over questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis import ras as M
from vlmrobust.analysis.ras.simulate import simulate_predictions
from vlmrobust.repro import rng
from vlmrobust.stats.bootstrap import percentile_interval, resample_counts, resample_indices


def pair_frame(rows):
    """A pair table built directly from (model, pert, level, item, state, dS, dC) tuples."""
    df = pd.DataFrame(rows, columns=["model", "perturbation", "level", "item_id", "state", "dS", "dC"])
    df["method"] = "letter"
    df["RAS"] = M.ras(df["dS"], df["dC"])
    df["correct_clean"] = df["state"].str[0] == "c"
    df["correct"] = df["state"].str[1] == "c"
    df["pred_clean"] = np.where(df["correct_clean"], 0, 1)
    df["pred"] = np.where(df["correct"], 0, 1)  # a wrong-wrong pair keeps its wrong answer
    for c in ("model", "perturbation", "item_id", "method"):
        df[c] = df[c].astype("category")
    df["state"] = pd.Categorical(df["state"], categories=M.STATES)
    return df


# one cell with unequal state sizes: cc x3, cw x1, wc x1, ww x2
CELL = [
    ("m", "fog", 1, "q1", "cc", 0.1, 0.1),
    ("m", "fog", 1, "q2", "cc", 0.2, 0.3),
    ("m", "fog", 1, "q3", "cc", -0.1, 0.2),   # overconfidence: RAS = -0.2 - 0.02 = -0.22
    ("m", "fog", 1, "q4", "cw", 0.3, 0.6),
    ("m", "fog", 1, "q5", "wc", 0.2, -0.5),   # hesitation: RAS = 0.5 - 0.1 = 0.4
    ("m", "fog", 1, "q6", "ww", 0.0, 0.1),
    ("m", "fog", 1, "q7", "ww", -0.1, -0.3),
]


def test_state_effects_hand_computed_eqs_13_to_16():
    e = M.state_effects(pair_frame(CELL)).iloc[0]
    ras_cc = (-0.1 - 0.3 - 0.22) / 3
    assert e["RAS_cc"] == pytest.approx(ras_cc)                    # Eq. 13
    assert e["RAS_cw"] == pytest.approx(-0.6)
    assert e["RAS_wc"] == pytest.approx(0.4)
    assert e["RAS_ww"] == pytest.approx((-0.1 + 0.3) / 2)
    assert (e["alpha_cc"], e["alpha_cw"]) == pytest.approx((3 / 4, 1 / 4))   # Eq. 14
    assert (e["alpha_wc"], e["alpha_ww"]) == pytest.approx((1 / 3, 2 / 3))
    assert (e["pi_c"], e["pi_w"]) == pytest.approx((4 / 7, 3 / 7))
    r_c = 3 / 4 * ras_cc + 1 / 4 * -0.6                           # Eq. 15
    r_w = 1 / 3 * 0.4 + 2 / 3 * 0.1
    assert e["R_c"] == pytest.approx(r_c) and e["R_w"] == pytest.approx(r_w)
    assert e["RAS_all"] == pytest.approx(4 / 7 * r_c + 3 / 7 * r_w)  # Eq. 16
    assert e["dS_c"] == pytest.approx((0.1 + 0.2 - 0.1 + 0.3) / 4)
    assert e["dC_w"] == pytest.approx((-0.5 + 0.1 - 0.3) / 3)


def test_empty_state_and_source_contribute_nothing():
    rows = [r for r in CELL if r[4] in ("cc", "ww")]  # no transitions at all
    e = M.state_effects(pair_frame(rows)).iloc[0]
    assert np.isnan(e["RAS_cw"]) and e["alpha_cw"] == 0 and e["R_c"] == pytest.approx(e["RAS_cc"])
    only_c = M.state_effects(pair_frame([r for r in CELL if r[4][0] == "c"])).iloc[0]
    assert np.isnan(only_c["R_w"]) and only_c["pi_w"] == 0
    assert only_c["RAS_all"] == pytest.approx(only_c["R_c"])


@pytest.fixture(scope="module")
def sim_pairs():
    pred = simulate_predictions(60, models=("a", "b", "c"), perturbations=("fog", "zoom_blur", "contrast"),
                                rng=rng("tables", 0))
    return pred, M.pairs(pred)


def test_eq16_aggregate_equals_plain_mean_and_groupby(sim_pairs):
    _, pr = sim_pairs
    e = M.state_effects(pr)
    plain = pr.groupby(["model", "method", "perturbation", "level"], observed=True)[["RAS", "dS", "dC"]].mean()
    np.testing.assert_allclose(e["RAS_all"], plain["RAS"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(e["dS_all"], plain["dS"].to_numpy(), atol=1e-12)
    keys = ["model", "method", "perturbation", "level"]
    idx = pd.MultiIndex.from_frame(e[keys].astype(object))
    cw = pr[pr["state"] == "cw"].astype({k: object for k in keys}).groupby(keys)["RAS"].mean()
    assert cw.notna().sum() > 20
    np.testing.assert_allclose(e["RAS_cw"], cw.reindex(idx).to_numpy(), atol=1e-12)
    src = pr.groupby(["model", "method", "perturbation", "level", "correct_clean"], observed=True)["RAS"].mean()
    np.testing.assert_allclose(e["R_c"], src.xs(True, level="correct_clean").to_numpy(), atol=1e-12)
    np.testing.assert_allclose(e[["alpha_cc", "alpha_cw"]].sum(axis=1), 1.0)
    np.testing.assert_allclose(e[["pi_c", "pi_w"]].sum(axis=1), 1.0)


def test_table_ii_hand_computed():
    # 2 questions x 2 cells. q1 clean-correct, q2 clean-wrong.
    rows = [
        ("m", "fog", 1, "q1", "cc", 0.1, 0.2),    # RAS -0.2
        ("m", "fog", 1, "q2", "wc", 0.0, -0.4),   # RAS 0.4
        ("m", "fog", 2, "q1", "cw", 0.2, 0.5),    # RAS -0.5
        ("m", "fog", 2, "q2", "ww", 0.1, 0.1),    # RAS -0.1
    ]
    t = M.table_ii(pair_frame(rows), n_boot=0).iloc[0]
    assert t["acc_clean"] == pytest.approx(0.5)
    assert t["acc_corr"] == pytest.approx(0.5)
    assert t["delta_acc"] == pytest.approx(0.0)
    assert t["consistency"] == pytest.approx(0.5)   # cc and ww keep the clean answer
    assert t["rel_rob"] == pytest.approx(1.0)
    assert t["RAS"] == pytest.approx((-0.2 + 0.4 - 0.5 - 0.1) / 4)
    assert t["R_c"] == pytest.approx((-0.2 - 0.5) / 2)
    assert t["R_w"] == pytest.approx((0.4 - 0.1) / 2)
    # cell fog-1: R_c = -0.2 < 0 and R_w = 0.4 > 0 -> mixed; fog-2: R_w = -0.1 -> not mixed
    assert t["mixed_pct"] == pytest.approx(50.0)
    assert M.table_ii(pair_frame(rows), n_boot=0, mixed_tol=0.3).iloc[0]["mixed_pct"] == 0.0
    assert t["n_items"] == 2 and t["n_pairs"] == 4


def test_table_ii_bootstrap_equals_explicit_resampling(sim_pairs):
    _, pr = sim_pairs
    t = M.table_ii(pr, n_boot=5, rng=rng("boot", 1), return_replicates=True)
    reps = t.attrs["replicates"]
    items = np.sort(pr["item_id"].astype(str).unique())
    draws = resample_indices(len(items), 5, rng("boot", 1))
    blocks = {q: g for q, g in pr.groupby(pr["item_id"].astype(str), observed=True)}
    for b in range(5):
        res = pd.concat([blocks[items[i]] for i in draws[b]], ignore_index=True)
        direct = M.table_ii(res, n_boot=0)
        got = reps[:, b, :]
        want = direct[list(M.tables.TABLE_II_STATS)].to_numpy()
        np.testing.assert_allclose(got, want, atol=1e-12, equal_nan=True)
    lo, hi = t["RAS_lo"].to_numpy(), t["RAS_hi"].to_numpy()
    assert (lo <= hi).all()


def test_table_ii_bootstrap_reproducible_and_covering(sim_pairs):
    _, pr = sim_pairs
    a = M.table_ii(pr, n_boot=200, rng=rng("boot", 7))
    b = M.table_ii(pr, n_boot=200, rng=rng("boot", 7))
    pd.testing.assert_frame_equal(a, b)
    for s in ("acc_clean", "RAS", "R_c"):
        assert ((a[f"{s}_lo"] <= a[s]) & (a[s] <= a[f"{s}_hi"])).all(), s
    assert (a["RAS_hi"] - a["RAS_lo"]).gt(0).all()


def test_bootstrap_helpers():
    c = resample_counts(7, 4, rng("c", 0))
    assert c.shape == (4, 7) and (c.sum(axis=1) == 7).all()
    lo, hi = percentile_interval(np.arange(101.0)[:, None], 0.9)
    assert (lo[0], hi[0]) == pytest.approx((5.0, 95.0))
    with pytest.raises(TypeError, match="Generator"):
        resample_counts(3, 2, 0)


def test_table_iii_shares_and_rates():
    t = M.table_iii(pair_frame(CELL)).set_index("state")
    assert t.loc["cc", "share"] == pytest.approx(3 / 7)
    assert t.loc["cc", "cond_rate"] == pytest.approx(3 / 4)
    assert t.loc["wc", "cond_rate"] == pytest.approx(1 / 3)
    assert t["delta_acc"].tolist() == [0, -1, 1, 0]
    assert t.loc["wc", "RAS"] == pytest.approx(0.4)
    assert t.loc["ww", "dC"] == pytest.approx(-0.1)
    assert t["share"].sum() == pytest.approx(1.0)


def test_table_iv_regimes():
    rows = [
        ("m", "fog", 1, "q1", "cc", 0.2, 0.1),     # worse-flatter
        ("m", "fog", 1, "q2", "cc", 0.4, 0.3),     # worse-flatter
        ("m", "fog", 1, "q3", "cw", -0.5, 0.4),    # worse-sharper, RAS -0.6
        ("m", "fog", 1, "q4", "wc", 0.5, -0.4),    # better-flatter, RAS 0.2
        ("m", "fog", 1, "q5", "cc", -0.1, -0.2),   # better-sharper
        ("m", "fog", 1, "q6", "cc", 0.0, 0.05),    # boundary
    ]
    t = M.table_iv(pair_frame(rows)).set_index("regime")
    assert t["n"].tolist() == [2, 1, 1, 1, 1]
    assert t.loc["worse-flatter", "dC"] == pytest.approx(0.2)
    assert t.loc["worse-flatter", "dS"] == pytest.approx(0.3)
    assert t.loc["worse-sharper", "RAS"] == pytest.approx(-0.6)
    assert t.loc["better-flatter", "RAS"] == pytest.approx(0.2)
    assert t.loc["boundary", "RAS"] == pytest.approx(-0.05)
    assert t.loc["worse-flatter", "share"] == pytest.approx(2 / 6)


def test_table_vi_ranks_and_shift():
    t2 = pd.DataFrame({
        "model": ["A", "B", "C"],
        "acc_corr": [0.5, 0.7, 0.6],
        "delta_acc": [-0.05, -0.10, -0.02],
        "rel_rob": [0.9, 0.8, 0.95],
        "RAS": [-0.04, -0.09, -0.06],
    })
    t = M.table_vi(t2)
    assert t["model"].tolist() == ["A", "C", "B"]           # RAS order
    row = t.set_index("model")
    assert row.loc["A", "abs_rank"] == 3 and row.loc["A", "abs_dr"] == 1 - 3
    assert row.loc["B", "abs_rank"] == 1 and row.loc["B", "abs_dr"] == 3 - 1
    assert row.loc["C", "delta_acc_rank"] == 1 and row.loc["C", "delta_acc_dr"] == 2 - 1
    assert row.loc["C", "rel_rob_dr"] == 1


def test_tables_refuse_to_pool_methods(sim_pairs):
    pred, _ = sim_pairs
    two = pd.concat([pred, pred.assign(method="loglik")], ignore_index=True)
    pr = M.pairs(two)
    with pytest.raises(ValueError, match="scoring methods"):
        M.table_ii(pr, n_boot=0)
    t = M.table_ii(pr, unit=("model", "method"), n_boot=0)
    assert len(t) == 6


def test_models_with_different_single_methods_can_be_pooled(sim_pairs):
    pred, _ = sim_pairs
    mixed = pred.assign(method=np.where(pred["model"] == "a", "loglik", "letter"))
    pr = M.pairs(mixed)
    t = M.table_ii(pr, n_boot=0)
    assert len(t) == 3
    pooled = M.table_iii(pr)
    assert pooled["n"].sum() == len(pr)


def test_percentile_interval_ignores_nan_replicates_and_checks_ci():
    reps = np.array([[1.0, np.nan], [2.0, np.nan], [3.0, np.nan], [np.nan, np.nan]])
    lo, hi = percentile_interval(reps, 0.5)
    assert (lo[0], hi[0]) == pytest.approx((1.5, 2.5)) and np.isnan(lo[1]) and np.isnan(hi[1])
    with pytest.raises(ValueError, match="ci"):
        percentile_interval(reps, 1.5)


def test_state_effects_rejects_unknown_quantity():
    with pytest.raises(ValueError, match="quantity"):
        M.state_effects(pair_frame(CELL), quantities=("RAS", "nope"))


def test_state_counts_do_not_depend_on_the_order_of_the_state_categories():

    from vlmrobust.analysis import ras as metrics

    pairs = metrics.pairs(simulate_predictions(40, models=["m"], perturbations=["gaussian_blur"], levels=[1, 2],
                                               rng=np.random.default_rng(3)))
    shuffled = pairs.assign(state=pairs["state"].cat.reorder_categories(["ww", "wc", "cw", "cc"]))
    for fn in (metrics.table_iii, metrics.state_effects):
        a, b = fn(pairs), fn(shuffled)
        num = a.select_dtypes("number").columns
        np.testing.assert_allclose(a[num].to_numpy(float), b[num].to_numpy(float))
    plain = pairs.assign(state=pairs["state"].astype(str))
    np.testing.assert_allclose(metrics.table_iii(plain)["n"], metrics.table_iii(pairs)["n"])


@pytest.mark.parametrize("dtype", [object, "str", "int64", "float64"])
def test_run_factorisation_equals_pandas_factorize(dtype):
    from vlmrobust.stats.grouped import factorize

    g = np.random.default_rng(5)
    runs = np.repeat(g.integers(0, 30, 400), g.integers(1, 60, 400))  # long runs: the fast path
    for values in (runs, g.integers(0, 30, 20_000)):  # and a column without runs
        col = pd.Series(values.astype(str) if dtype in (object, "str") else values).astype(dtype)
        if dtype == "float64":
            col.iloc[[3, 5000, 5001]] = np.nan
        codes, uniq = factorize(col)
        want_codes, want_uniq = pd.factorize(col, sort=True)
        np.testing.assert_array_equal(codes, want_codes)
        assert list(uniq) == list(want_uniq)
    cat = pd.Series(pd.Categorical(["b", "a", "b"], categories=["b", "a"]))
    codes, uniq = factorize(cat)
    assert codes.tolist() == [0, 1, 0] and list(uniq) == ["b", "a"]


def test_replicate_sums_equals_the_double_precision_product_bit_for_bit():
    from vlmrobust.stats.bootstrap import replicate_sums

    g = np.random.default_rng(5)
    W = resample_counts(300, 40, rng("sums", 0))
    X = np.column_stack([
        g.integers(0, 2, 300),  # correct / wrong: whole numbers, summed in single precision
        g.integers(0, 4, 300) * 1.0,
        g.uniform(0, 1, 300) + 1e-9,  # confidences: double precision (single would lose the 1e-9)
        np.full(300, 2.0**23 + 1),  # whole, but partial sums past 2**24: double precision
    ]).astype(np.float64)
    got = replicate_sums(W, X, chunk=7)
    want = W @ X
    assert np.array_equal(got[:, [0, 1, 3]], want[:, [0, 1, 3]])
    assert np.allclose(got[:, 2], want[:, 2], rtol=1e-15, atol=0)
    assert np.array_equal(got[:, 3] % 2, want[:, 3] % 2)  # odd sums survive: no single-precision rounding
    half = replicate_sums(W * 0.5, X[:, :1])  # weights that are not whole numbers: double precision
    assert np.allclose(half, (W * 0.5) @ X[:, :1], rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match="questions"):
        replicate_sums(W, X[:-1])
