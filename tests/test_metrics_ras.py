"""Seed 000 §V: normalised entropy (Eq. 7), alignment (Eq. 9), shifts (Eqs. 8, 10), RAS (Eq. 11), pairs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis import ras as M
from vlmrobust.analysis.ras.simulate import simulate_predictions
from vlmrobust.repro import rng


def pred_table(rows: list[dict]) -> pd.DataFrame:
    """A minimal predictions table from (model, item, pert, level, probs, answer) dicts."""
    out = []
    for r in rows:
        p = list(map(float, r["probs"]))
        out.append({
            "model": r.get("model", "m"), "item_id": r["item"], "task": "t", "category": "c",
            "perturbation": r.get("pert", "clean"), "level": r.get("level", 0), "param": np.nan,
            "method": r.get("method", "letter"), "K": r.get("K", len(p)), "answer_idx": r.get("y", 0),
            "probs": p,
        })
    return pd.DataFrame(out)


def one_pair(clean, corr, y=0):
    return M.pairs(pred_table([
        {"item": "q", "probs": clean, "y": y},
        {"item": "q", "pert": "blur", "level": 1, "probs": corr, "y": y},
    ])).iloc[0]


# --- Eq. 7: normalised entropy ------------------------------------------------------------------

def test_entropy_hand_values_and_own_k_normalisation():
    # H(0.9, 0.1) = 0.3250830 nats; / ln 2 = 0.4689956
    assert M.normalised_entropy([0.9, 0.1], 2)[0] == pytest.approx(0.4689956, abs=1e-7)
    # the uniform distribution over its own K is exactly 1 for every K, inside one padded matrix
    P = np.zeros((4, 5))
    for i, k in enumerate(range(2, 6)):
        P[i, :k] = 1.0 / k
    np.testing.assert_allclose(M.normalised_entropy(P, np.arange(2, 6)), 1.0, rtol=0, atol=1e-12)
    # one-hot rows (0 log 0 = 0) have zero entropy
    assert M.normalised_entropy([[0, 1, 0]], 3)[0] == 0.0
    # K = 4 with mass on two options: ln 2 / ln 4 = 0.5
    assert M.normalised_entropy([0.5, 0.5, 0, 0], 4)[0] == pytest.approx(0.5, abs=1e-12)


def test_entropy_rejects_k_below_two():
    with pytest.raises(ValueError, match="K must lie in"):
        M.normalised_entropy([[1.0, 0.0]], 1)


# --- Eq. 9: alignment and ties --------------------------------------------------------------------

def test_alignment_correct_and_wrong_top1():
    # correct top-1 with confidence 0.7 -> |1 - 0.7| = 0.3 ; wrong top-1 with confidence 0.7 -> 0.7
    assert M.alignment([0.7, 0.2, 0.1], 3, 0)[0] == pytest.approx(0.3)
    assert M.alignment([0.7, 0.2, 0.1], 3, 1)[0] == pytest.approx(0.7)


def test_ties_go_to_lowest_index_and_tie_tol():
    P = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4]])
    idx, mx = M.top1(P)
    assert idx.tolist() == [0, 1] and mx.tolist() == [0.4, 0.4]
    # tied at index 0 and 1: answer 1 counts as wrong, answer 0 as right
    assert M.alignment(P[:1], 3, 1)[0] == pytest.approx(0.4)
    assert M.alignment(P[:1], 3, 0)[0] == pytest.approx(0.6)
    near = np.array([[0.3999999, 0.4000001, 0.2]])
    assert M.top1(near)[0][0] == 1
    assert M.top1(near, tie_tol=1e-6)[0][0] == 0
    # the confidence stays the true maximum under a tie tolerance
    assert M.top1(near, tie_tol=1e-6)[1][0] == pytest.approx(0.4000001)
    with pytest.raises(ValueError, match="tie_tol"):
        M.top1(near, tie_tol=-1.0)


# --- Eq. 11: RAS weights and signs ------------------------------------------------------------------

def test_ras_penalties_have_unit_weight_and_right_sign():
    # overconfidence: alignment worse (dC > 0) while sharper (dS < 0): -dC - dC*|dS|
    assert M.ras(-0.5, 0.4) == pytest.approx(-0.4 - 0.2)
    # hesitation: alignment better (dC < 0) while flatter (dS > 0): -dC - dS*|dC|
    assert M.ras(0.5, -0.4) == pytest.approx(0.4 - 0.2)
    # no penalty with equal signs
    assert M.ras(0.5, 0.4) == pytest.approx(-0.4)
    assert M.ras(-0.5, -0.4) == pytest.approx(0.4)
    # extremes of the range [-2, 1]
    assert M.ras(-1.0, 1.0) == pytest.approx(-2.0)
    assert M.ras(-1.0, -1.0) == pytest.approx(1.0)


# --- hand-computed pairs: the four regimes and the boundary -----------------------------------------

HAND = {
    # name: (clean, corrupted, y, dS, dC, RAS, state, regime)
    "weakened support": ([0.9, 0.1], [0.6, 0.4], 0, 0.9709506 - 0.4689956, 0.3, -0.3, "cc", "worse-flatter"),
    "overconfident degradation": ([0.6, 0.4], [0.05, 0.95], 0, 0.2863970 - 0.9709506, 0.55,
                                  -0.55 - 0.55 * (0.9709506 - 0.2863970), "cw", "worse-sharper"),
    "hesitant support": ([0.2, 0.8], [0.6, 0.4], 0, 0.9709506 - 0.7219281, -0.4,
                         0.4 - 0.4 * (0.9709506 - 0.7219281), "wc", "better-flatter"),
    "supported improvement": ([0.6, 0.4], [0.9, 0.1], 0, 0.4689956 - 0.9709506, -0.3, 0.3, "cc",
                              "better-sharper"),
    "boundary (mirror)": ([0.6, 0.4], [0.4, 0.6], 0, 0.0, 0.2, -0.2, "cw", "boundary"),
    "boundary (identical)": ([0.6, 0.4], [0.6, 0.4], 0, 0.0, 0.0, 0.0, "cc", "boundary"),
}


@pytest.mark.parametrize("name", list(HAND))
def test_hand_computed_pairs(name):
    clean, corr, y, dS, dC, r, state, regime = HAND[name]
    p = one_pair(clean, corr, y)
    assert p["dS"] == pytest.approx(dS, abs=1e-6)
    assert p["dC"] == pytest.approx(dC, abs=1e-9)
    assert p["RAS"] == pytest.approx(r, abs=1e-6)
    assert p["state"] == state
    assert M.REGIMES[M.regime_of(p["dS"], p["dC"])[()]] == regime


def test_boundary_tolerance_is_a_parameter():
    assert M.REGIMES[M.regime_of(1e-8, 0.3)[()]] == "boundary"
    assert M.REGIMES[M.regime_of(1e-8, 0.3, tol=0.0)[()]] == "worse-flatter"
    assert M.REGIMES[M.regime_of(0.2, -5e-7, tol=1e-6)[()]] == "boundary"
    assert M.REGIMES[M.regime_of(0.2, -5e-7, tol=1e-7)[()]] == "better-flatter"


# --- properties on random distributions, K = 2..5 ----------------------------------------------------

def random_pairs(n=4000, seed=1):
    g = rng("test_metrics_ras", seed)
    rows = []
    for i in range(n):
        k = int(g.integers(2, 6))
        y = int(g.integers(0, k))
        a = g.uniform(0.05, 3.0)
        clean = g.dirichlet(np.full(k, a))
        corr = g.dirichlet(np.full(k, a)) if i % 7 else clean.copy()
        if i % 11 == 0:  # exact ties
            clean = np.full(k, 1.0 / k)
        rows.append({"item": f"q{i}", "probs": clean, "y": y, "model": f"m{i % 2}"})
        rows.append({"item": f"q{i}", "probs": corr, "y": y, "pert": ["blur", "fog"][i % 2], "level": 1 + i % 5,
                     "model": f"m{i % 2}"})
    return M.pairs(pred_table(rows))


def test_properties_range_and_no_penalty_case():
    pr = random_pairs()
    assert set(pr["K"].unique()) == {2, 3, 4, 5}
    for col in ("S", "S_clean", "C", "C_clean"):
        assert pr[col].between(-1e-12, 1 + 1e-12).all(), col
    assert pr["dS"].between(-1, 1).all() and pr["dC"].between(-1, 1).all()
    assert pr["RAS"].between(-2, 1).all()
    no_pen = (pr["dS"] * pr["dC"] >= 0)
    assert no_pen.sum() > 500 and (~no_pen).sum() > 500
    np.testing.assert_allclose(pr.loc[no_pen, "RAS"], -pr.loc[no_pen, "dC"], rtol=0, atol=1e-15)
    # with a penalty RAS is strictly below -dC
    assert (pr.loc[~no_pen, "RAS"] < -pr.loc[~no_pen, "dC"]).all()
    # uniform clean rows: S = 1 whatever K, and the tie picks option 0
    uni = pr[pr["item_id"].astype(str).isin([f"q{i}" for i in range(0, 4000, 11)])]
    np.testing.assert_allclose(uni["S_clean"], 1.0, atol=1e-12)
    assert (uni["pred_clean"] == 0).all()


def test_pair_columns_follow_eqs_8_10_11():
    pr = random_pairs(300, seed=2)
    # an explicit scalar check on all rows: Eqs. 8, 10, 11 agree with the columns
    dS = pr["S"] - pr["S_clean"]
    dC = pr["C"] - pr["C_clean"]
    np.testing.assert_array_equal(pr["dS"], dS)
    np.testing.assert_array_equal(pr["dC"], dC)
    r = -dC - np.maximum(dC, 0) * np.maximum(-dS, 0) - np.maximum(dS, 0) * np.maximum(-dC, 0)
    np.testing.assert_allclose(pr["RAS"], r, atol=1e-15)


def scalar_pair(clean, corr, y):
    """An independent scalar implementation of Eqs. 7-11 (math module, loops)."""
    def S(p):
        return -sum(v * math.log(v) for v in p if v > 0) / math.log(len(p))

    def C(p):
        m = max(p)
        return abs(float(p.index(m) == y) - m)

    dS, dC = S(corr) - S(clean), C(corr) - C(clean)
    return dS, dC, -dC - max(dC, 0) * max(-dS, 0) - max(dS, 0) * max(-dC, 0)


def test_pairs_agree_with_scalar_implementation():
    g = rng("scalar", 0)
    rows, expect = [], []
    for i in range(200):
        k = int(g.integers(2, 6))
        y = int(g.integers(0, k))
        clean = [float(v) for v in g.dirichlet(np.ones(k))]
        corr = [float(v) for v in g.dirichlet(np.ones(k) * 0.5)]
        rows += [{"item": f"q{i}", "probs": clean, "y": y},
                 {"item": f"q{i}", "probs": corr, "y": y, "pert": "fog", "level": 2}]
        expect.append(scalar_pair(clean, corr, y))
    pr = M.pairs(pred_table(rows))
    np.testing.assert_allclose(pr[["dS", "dC", "RAS"]].to_numpy(), np.array(expect), atol=1e-12)


# --- the pair join ----------------------------------------------------------------------------------

def test_pairs_join_by_model_method_item_regardless_of_order():
    rows = [
        {"model": "a", "item": "q1", "pert": "fog", "level": 2, "probs": [0.1, 0.9]},
        {"model": "b", "item": "q1", "probs": [0.2, 0.8]},
        {"model": "a", "item": "q1", "probs": [0.7, 0.3]},
        {"model": "b", "item": "q1", "pert": "fog", "level": 2, "probs": [0.6, 0.4]},
        {"model": "a", "item": "q1", "method": "loglik", "probs": [0.5, 0.5]},
        {"model": "a", "item": "q1", "method": "loglik", "pert": "fog", "level": 2, "probs": [0.9, 0.1]},
        {"model": "a", "item": "q1", "pert": "fog", "level": 0, "probs": [0.7, 0.3]},  # identity: not a pair
    ]
    pr = M.pairs(pred_table(rows))
    assert len(pr) == 3
    got = {(r.model, r.method): (r.conf_clean, r.conf, r.row, r.row_clean) for r in pr.itertuples()}
    assert got[("a", "letter")] == (0.7, 0.9, 0, 2)
    assert got[("b", "letter")] == (0.8, 0.6, 3, 1)
    assert got[("a", "loglik")] == (0.5, 0.9, 5, 4)


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d.assign(K=1, probs=[[1.0]] * len(d)), "K must be >= 2"),
    (lambda d: d.assign(probs=[[0.5, 0.3, 0.2]] * len(d)), "K entries"),
    (lambda d: d.assign(probs=[[0.5, 0.4]] * len(d)), "sum to 1"),
    (lambda d: d.assign(probs=[[1.2, -0.2]] * len(d)), "non-negative"),
    (lambda d: d.assign(answer_idx=2), "answer_idx"),
    (lambda d: pd.concat([d, d.iloc[:1]]), "duplicate"),
    (lambda d: d.iloc[1:], "no clean row"),
    (lambda d: d.assign(level=[3, 1]), "level 0"),
    (lambda d: d.drop(columns="probs"), "lacks required"),
    (lambda d: d.assign(answer_idx=[0, 1]), "same K and answer_idx"),
])
def test_pairs_rejects_bad_input(mutate, match):
    base = pred_table([{"item": "q", "probs": [0.6, 0.4]},
                       {"item": "q", "pert": "fog", "level": 1, "probs": [0.3, 0.7]}])
    with pytest.raises(ValueError, match=match):
        M.pairs(mutate(base))


def test_missing_clean_drop_counts_rows():
    base = pred_table([{"item": "q", "probs": [0.6, 0.4]},
                       {"item": "q", "pert": "fog", "level": 1, "probs": [0.3, 0.7]},
                       {"item": "r", "pert": "fog", "level": 1, "probs": [0.3, 0.7]}])
    pr = M.pairs(base, missing_clean="drop")
    assert len(pr) == 1 and pr.attrs["n_missing_clean"] == 1


def test_probs_sum_tolerance_renormalises():
    p = one_pair([0.6, 0.4 + 5e-4], [0.6, 0.4])
    assert p["conf_clean"] == pytest.approx(0.6 / 1.0005)
    with pytest.raises(ValueError, match="prob_atol"):
        M.pairs(pred_table([{"item": "q", "probs": [0.6, 0.41]},
                            {"item": "q", "pert": "fog", "level": 1, "probs": [0.3, 0.7]}]), prob_atol=1e-3)


def test_probs_column_forms_give_identical_pairs(tmp_path):
    pred = simulate_predictions(12, models=("a", "b"), perturbations=("fog", "snow"), levels=(1, 2),
                                rng=rng("forms", 0))
    ref = M.pairs(pred)
    path = tmp_path / "p.parquet"
    pred.to_parquet(path)
    from_parquet = M.pairs(pd.read_parquet(path))
    arrow = M.pairs(pd.read_parquet(path, dtype_backend="pyarrow"))
    lists = M.pairs(pred.assign(probs=[list(map(float, p)) for p in pred["probs"]]))
    for other in (from_parquet, arrow, lists):
        np.testing.assert_array_equal(other["RAS"].to_numpy(), ref["RAS"].to_numpy())
        np.testing.assert_array_equal(other["state"].astype(str), ref["state"].astype(str))


def test_probs_matrix_from_padded_array_and_lists():
    P = M.probs_matrix(np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), np.array([2, 3]))
    np.testing.assert_allclose(P, [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="beyond a row's K"):
        M.probs_matrix(np.array([[0.5, 0.4, 0.1]]), np.array([2]))
    L = M.probs_matrix(pd.Series([[0.25, 0.75], [0.1, 0.2, 0.3, 0.4]]), np.array([2, 4]))
    np.testing.assert_allclose(L, [[0.25, 0.75, 0, 0], [0.1, 0.2, 0.3, 0.4]])
    with pytest.raises(ValueError, match="list of K floats"):
        M.probs_matrix(pd.Series([[0.5, 0.5], None]), np.array([2, 2]))


def test_simulated_predictions_follow_the_table_contract():
    from vlmrobust.schema import PRED_COLUMNS

    a = simulate_predictions(9, models=("x", "y"), perturbations=("fog",), levels=(1, 2), rng=rng("sim", 3))
    b = simulate_predictions(9, models=("x", "y"), perturbations=("fog",), levels=(1, 2), rng=rng("sim", 3))
    assert list(a.columns) == list(PRED_COLUMNS)
    assert len(a) == 2 * 9 * 3
    assert all(len(p) == k for p, k in zip(a["probs"], a["K"], strict=True))
    np.testing.assert_allclose([p.sum() for p in a["probs"]], 1.0)
    assert (a["pred_idx"] == [int(np.argmax(p)) for p in a["probs"]]).all()
    assert (a.loc[a["level"] == 0, "perturbation"] == "clean").all()
    pd.testing.assert_frame_equal(a.drop(columns="probs"), b.drop(columns="probs"))
    with pytest.raises(ValueError, match="perturbations"):
        simulate_predictions(3, perturbations=("nope",), rng=rng("sim", 0))
