"""The contract of the Eq. 7-16 code beyond the hand cases: every input form, the exact error messages,
the output columns and dtypes, ties, broadcasting, and tables large enough for the chunked and hashed paths.

These tests were written to kill the mutants that `make mutants` found surviving in
``analysis/ras/components.py``, ``analysis/ras/pairs.py`` and ``analysis/ras/attribution.py`` (see docs/development.md,
Testing section).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from vlmrobust.analysis import ras as M
from vlmrobust.analysis.ras.components import positive_part
from vlmrobust.analysis.ras.pairs import PAIR_COLUMNS


def _msg(exc_info) -> str:
    return str(exc_info.value)


def _pred(rows, **cols) -> pd.DataFrame:
    """A predictions table from (item, perturbation, level, probs, answer) tuples."""
    df = pd.DataFrame(rows, columns=["item_id", "perturbation", "level", "probs", "answer_idx"])
    df["model"], df["method"] = "m", "letter"
    df["K"] = [len(p) for p in df["probs"]]
    for k, v in cols.items():
        df[k] = v
    return df


BASE = [("q1", "clean", 0, [0.6, 0.4], 0), ("q1", "fog", 1, [0.3, 0.7], 0),
        ("q2", "clean", 0, [0.2, 0.5, 0.3], 2), ("q2", "fog", 1, [0.1, 0.2, 0.7], 2)]


# --- Eq. 11: positive part and RAS broadcasting ---------------------------------------------------------

def test_positive_part():
    np.testing.assert_array_equal(positive_part([-0.5, 0.0, 0.25, 2]), [0.0, 0.0, 0.25, 2.0])
    assert positive_part([1, -1]).dtype == np.float64


def test_ras_broadcasts_and_returns_a_float_for_scalars():
    r = M.ras(0.5, -0.4)
    assert isinstance(r, float) and not isinstance(r, np.ndarray) and r == pytest.approx(0.2)
    got = M.ras(0.5, np.array([0.4, -0.4, 0.0]))  # scalar dS, array dC
    np.testing.assert_allclose(got, [-0.4, 0.2, 0.0])
    got = M.ras(np.array([0.5, -0.5]), -0.4)  # array dS, scalar dC
    np.testing.assert_allclose(got, [0.2, 0.4])
    assert M.ras(np.zeros((2, 3)), np.ones(3)).shape == (2, 3)


# --- Eq. 9 and the tie rule ----------------------------------------------------------------------------

def test_top1_tie_tolerance_counts_the_boundary_as_tied():
    P = np.array([[0.125, 0.375, 0.5]])  # exact binary fractions: 0.5 - 0.125 is exactly 0.375
    assert M.top1(P)[0][0] == 2
    assert M.top1(P, tie_tol=0.125)[0][0] == 1      # 0.375 is within 0.125 of the maximum
    assert M.top1(P, tie_tol=0.0625)[0][0] == 2
    assert M.top1(P, tie_tol=0.375)[0][0] == 0
    idx, mx = M.top1([0.3, 0.7])  # a single distribution (1-D)
    assert idx.tolist() == [1] and mx.tolist() == [0.7] and idx.dtype == np.int64


def test_top1_checks_k_when_given():
    with pytest.raises(ValueError) as e:
        M.top1([[0.5, 0.5]], K=3)
    assert _msg(e) == ("K must lie in [2, 2] (the number of probability columns); got values from 3 to 3 "
                       "(K = 1 has no normalised entropy)")
    assert M.top1([[0.2, 0.3, 0.5, 0.0]], K=np.array([3]))[0].tolist() == [2]


def test_alignment_default_has_no_tie_tolerance_and_honours_one():
    assert M.alignment([0.3, 0.7], 2, 1)[0] == pytest.approx(0.3)       # correct, confidence 0.7
    assert M.alignment([0.3, 0.7], 2, 1, tie_tol=0.5)[0] == pytest.approx(0.7)  # tied: option 0 wins
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])  # 2 rows, 3 columns, one answer for both
    out = M.alignment(P, 3, 1)
    assert out.shape == (2,)
    np.testing.assert_allclose(out, [0.5, 0.4])


@pytest.mark.parametrize("y", [2, -1, [0, 2]])
def test_alignment_rejects_answers_outside_0_k(y):
    with pytest.raises(ValueError) as e:
        M.alignment([[0.5, 0.5], [0.4, 0.6]], 2, y)
    assert _msg(e) == "answer index y must lie in [0, K) for every row"


def test_check_matrix_messages():
    with pytest.raises(ValueError) as e:
        M.normalised_entropy(np.ones((2, 2, 2)) / 2, 2)
    assert _msg(e) == "probs must be a 1-D or 2-D array, got shape (2, 2, 2)"
    with pytest.raises(ValueError) as e:
        M.normalised_entropy(np.full((2, 3), 1 / 3), np.array([3, 3, 3]))
    assert _msg(e) == "K must hold one option count per row (2), got shape (3,)"
    with pytest.raises(TypeError) as e:
        M.normalised_entropy([[0.5, 0.5]], np.array([2.0]))
    assert _msg(e) == "K must be integers, got dtype float64"


# --- pairs: input forms ---------------------------------------------------------------------------------

def _core(pr: pd.DataFrame) -> pd.DataFrame:
    cols = ["item_id", "level", "K", "answer_idx", "pred_clean", "pred", "S_clean", "S", "C_clean", "C", "dS",
            "dC", "RAS"]
    out = pr[cols].copy()
    out["item_id"] = out["item_id"].astype(str)
    out["state"] = pr["state"].astype(str)
    return out.reset_index(drop=True)


def test_pairs_output_columns_dtypes_and_item_attributes():
    pred = _pred(BASE, task=["colour"] * 2 + ["shape"] * 2, category=["attr"] * 2 + ["geo"] * 2,
                 param=[np.nan, 10.0, np.nan, 20.0])
    pr = M.pairs(pred, tie_tol=0.0)
    assert list(pr.columns) == list(PAIR_COLUMNS)
    assert pr["task"].astype(str).tolist() == ["colour", "shape"]
    assert pr["category"].astype(str).tolist() == ["attr", "geo"]
    assert pr["param"].tolist() == [10.0, 20.0]
    assert pr["answer_idx"].tolist() == [0, 2]
    for c in ("pred", "pred_clean", "answer_idx", "K", "level", "row", "row_clean"):
        assert pr[c].dtype == np.int64, c
    assert pr.attrs == {"n_missing_clean": 0, "tie_tol": 0.0}
    assert M.pairs(pred, tie_tol=0.25).attrs["tie_tol"] == 0.25
    # without the optional columns: "?" for the item attributes, NaN for the parameter
    bare = M.pairs(_pred(BASE))
    assert bare["task"].astype(str).tolist() == ["?", "?"] and bare["category"].astype(str).tolist() == ["?", "?"]
    assert bare["param"].isna().all() and len(bare["param"]) == 2


def test_pairs_tie_tolerance_reaches_the_top1_answer():
    rows = [("q", "clean", 0, [0.4999, 0.5001], 0), ("q", "fog", 1, [0.7, 0.3], 0)]
    assert M.pairs(_pred(rows)).iloc[0]["pred_clean"] == 1
    tied = M.pairs(_pred(rows), tie_tol=1e-3).iloc[0]
    assert tied["pred_clean"] == 0 and tied["correct_clean"] and tied["state"] == "cc"


def test_pairs_accepts_float_columns_holding_integers_and_rejects_fractions():
    ref = _core(M.pairs(_pred(BASE)))
    floats = _pred(BASE)
    for c in ("level", "K", "answer_idx"):
        floats[c] = floats[c].astype(float)
    pd.testing.assert_frame_equal(_core(M.pairs(floats)), ref)
    for bad in (1.5, np.nan):
        p = _pred(BASE)
        p["level"] = p["level"].astype(float)
        p.loc[1, "level"] = bad
        with pytest.raises(ValueError) as e:
            M.pairs(p)
        assert _msg(e) == "level must hold integers (0 = clean, 1.. = severity)"


def test_pairs_keys_of_any_dtype_give_the_same_pairs():
    ref = _core(M.pairs(_pred(BASE)))
    as_obj = _pred(BASE)
    for c in ("item_id", "perturbation", "model", "method"):
        as_obj[c] = as_obj[c].astype(object)
    pd.testing.assert_frame_equal(_core(M.pairs(as_obj)), ref)
    as_cat = _pred(BASE)
    for c in ("item_id", "perturbation", "model", "method"):
        as_cat[c] = as_cat[c].astype("category")
    pd.testing.assert_frame_equal(_core(M.pairs(as_cat)), ref)
    # integer item ids (pandas' own factorisation, sorted)
    ints = _pred([(i + 10, p, lv, pr, y) for i, (_, p, lv, pr, y) in
                  zip([1, 1, 0, 0], BASE, strict=True)])
    out = M.pairs(ints)
    assert list(out["item_id"].cat.categories) == [10, 11]
    assert out["item_id"].tolist() == [11, 10] and out["RAS"].tolist() == ref["RAS"].tolist()
    with pytest.raises(ValueError) as e:
        M.pairs(as_obj.assign(item_id=["q1", "q1", None, None]))
    assert _msg(e) == "column 'item_id' must not contain missing values"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(model=pd.array(["m", "m", None, "m"], dtype="string[pyarrow]")))
    assert _msg(e) == "column 'model' must not contain missing values"


def test_probs_in_every_container_form():
    K = np.array([2, 3])
    want = np.array([[0.25, 0.75, 0.0], [0.5, 0.25, 0.25]])
    lists = [[0.25, 0.75], [0.5, 0.25, 0.25]]
    np.testing.assert_array_equal(M.probs_matrix(lists, K), want)              # a plain list
    np.testing.assert_array_equal(M.probs_matrix(pd.Series(lists), K), want)   # an object Series
    large = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(lists, type=pa.large_list(pa.float64()))))
    np.testing.assert_array_equal(M.probs_matrix(large, K), want)              # a large_list column
    ints = pd.Series([[0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(M.probs_matrix(ints, K), [[0, 1, 0], [1, 0, 0]])
    assert M.probs_matrix(want, K).dtype == np.float64
    assert M.probs_matrix(np.array([[0, 1, 0], [1, 0, 0]]), K).dtype == np.float64


@pytest.mark.parametrize("probs, K, exc, message", [
    (np.full((3, 2), 0.5), [2, 2], ValueError, "probs has 3 rows but K has 2"),
    (np.full((2, 2), 0.5), [2, 3], ValueError,
     "probs must have K entries per row; the matrix has fewer columns than max K"),
    (np.array([[0.5, 0.5, 0.0], [0.5, 0.4, 0.1]]), [3, 2], ValueError,
     "probs has non-zero entries beyond a row's K options"),
    ([[0.5, 0.5], [0.5, 0.5], [0.2, 0.3, 0.5]], [2, 2, 2], ValueError,
     "probs must have K entries per row; row 2 has 3 but K = 2"),
    ([[0.5, 0.5], [np.nan, 1.0]], [2, 2], ValueError, "probs must be finite (found NaN or inf)"),
    ([[0.5, 0.5], [1.5, -0.5]], [2, 2], ValueError, "probs must be non-negative"),
    ([[0.5, 0.5], None], [2, 2], ValueError,
     "probs must hold a list of K floats in every row (found a missing row)"),
    ([[0.5, 0.5]], [1], ValueError,
     "K must be >= 2 for every row (K = 1 has no normalised entropy); found K = 1"),
])
def test_probs_matrix_messages(probs, K, exc, message):
    with pytest.raises(exc) as e:
        M.probs_matrix(probs, np.asarray(K))
    assert _msg(e) == message


def test_probs_matrix_default_tolerance_is_1e3():
    with pytest.raises(ValueError) as e:
        M.probs_matrix([[0.5, 0.5], [0.5, 0.5], [0.6, 0.5]], np.array([2, 2, 2]))
    assert re.fullmatch(r"probs must sum to 1 within prob_atol=0\.001; row 2 sums to (np\.float64\()?1\.1\)?", _msg(e))
    M.probs_matrix([[0.5, 0.5009]], np.array([2]))
    with pytest.raises(ValueError, match="within prob_atol=0.001"):
        M.probs_matrix([[0.5, 0.502]], np.array([2]))
    with pytest.raises(ValueError, match=r"^probs must hold a list of K floats in every row \(.+\)$"):
        M.probs_matrix([[0.5, "half"]], np.array([2]))


# --- pairs: messages, drops and empty tables ------------------------------------------------------------

def test_pairs_messages():
    with pytest.raises(TypeError) as e:
        M.pairs([1, 2])
    assert _msg(e) == "pred must be a pandas DataFrame (the predictions table), got list"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE), missing_clean="keep")
    assert _msg(e) == "missing_clean must be 'raise' or 'drop', got 'keep'"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(level=[0, -1, 0, 1]))
    assert _msg(e) == "level must be >= 0, found -1"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(answer_idx=[0, 0, 3, 3]))
    assert _msg(e) == "answer_idx must lie in [0, K); row 2 has answer_idx=3 with K=3"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(answer_idx=[1, 1, -1, 2]))
    assert _msg(e) == "answer_idx must lie in [0, K); row 2 has answer_idx=-1 with K=3"
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(level=[0, 1, 2, 1]))
    assert _msg(e) == "rows with perturbation 'clean' must have level 0"
    with pytest.raises(ValueError) as e:
        M.pairs(pd.concat([_pred(BASE), _pred(BASE).iloc[[1]]], ignore_index=True))
    assert _msg(e) == ("pred has duplicate rows for some (model, method, item_id, perturbation, level); "
                       "the predictions table holds one row per condition")
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).iloc[[0, 1, 3]])
    assert _msg(e) == ("1 corrupted row(s) have no clean row (perturbation 'clean', level 0) for their "
                       "(model, method, item_id), e.g. 'm', 'letter', 'q2'; pass missing_clean='drop' to leave "
                       "them out")
    with pytest.raises(ValueError) as e:
        M.pairs(_pred(BASE).assign(answer_idx=[0, 1, 2, 2]))
    assert _msg(e) == "clean and corrupted rows of a question must have the same K and answer_idx"


def test_pairs_drop_keeps_the_right_pair():
    rows = BASE + [("q3", "fog", 2, [0.9, 0.1], 1)]  # no clean row for q3
    pr = M.pairs(_pred(rows), missing_clean="drop")
    assert pr.attrs["n_missing_clean"] == 1
    assert pr["item_id"].astype(str).tolist() == ["q1", "q2"]
    assert pr["row"].tolist() == [1, 3] and pr["row_clean"].tolist() == [0, 2]
    pd.testing.assert_frame_equal(_core(pr), _core(M.pairs(_pred(BASE))))


def test_pairs_of_tables_without_pairs_are_empty():
    clean_only = M.pairs(_pred([r for r in BASE if r[2] == 0]))
    assert len(clean_only) == 0 and list(clean_only.columns) == list(PAIR_COLUMNS)
    empty = M.pairs(_pred(BASE).iloc[:0])
    assert len(empty) == 0 and empty.attrs["n_missing_clean"] == 0


def test_pairs_with_a_single_corrupted_level_among_many():
    rows = BASE[:2] + [("q1", "fog", 7, [0.5, 0.5], 0)]
    pr = M.pairs(_pred(rows))
    assert pr["level"].tolist() == [1, 7]
    # level 1: wrong with confidence 0.7 (C 0.7, was 0.4); level 7: a tie read as option 0, correct (C 0.5)
    assert pr["RAS"].tolist() == pytest.approx([M.ras(0.8812908992306927 - 0.9709505944546686, 0.3),
                                                 M.ras(1.0 - 0.9709505944546686, 0.1)])


# --- large tables: chunked statistics, hashed keys --------------------------------------------------------

def test_pairs_on_a_table_past_the_chunk_and_the_dense_key_space():
    """131072 rows in two chunks of 65536 (the first all K = 2, the second all K = 3), 256 models x 256
    items each (a key space of 16.7 M, past the dense lookup)."""
    rng = np.random.default_rng(0)
    n_models, per_model = 256, 256
    n_items = n_models * per_model
    half = n_items // 2
    item = np.arange(n_items)
    model = item // per_model
    K = np.where(item < half, 2, 3)
    p0 = rng.dirichlet(np.ones(3), n_items)
    p1 = rng.dirichlet(np.ones(3), n_items)
    for p in (p0, p1):
        p[K == 2, 2] = 0
        p /= p.sum(1, keepdims=True)
    # rows of the K = 2 items first (clean, then corrupted), then those of the K = 3 items
    blocks = [(sl, lvl, pp) for sl in (slice(0, half), slice(half, n_items)) for lvl, pp in ((0, p0), (1, p1))]
    rows = {"model": [], "item_id": [], "level": [], "K": [], "probs": []}
    for sl, lvl, pp in blocks:
        rows["model"].append(model[sl])
        rows["item_id"].append(item[sl])
        rows["level"].append(np.full(sl.stop - sl.start, lvl))
        rows["K"].append(K[sl])
        rows["probs"] += [row[:k] for row, k in zip(pp[sl], K[sl], strict=True)]
    # and a third, partial chunk that mixes K = 2 and K = 3 (items 0-15 scored again by a second model)
    extra = np.arange(16)
    for lvl, pp in ((0, p0), (1, p1)):
        rows["model"].append(np.full(16, n_models))
        rows["item_id"].append(extra)
        rows["level"].append(np.full(16, lvl))
        rows["K"].append(np.where(extra % 2 == 0, 2, 3))
        rows["probs"] += [np.array([0.25, 0.75]) if i % 2 == 0 else pp[half + i] for i in extra]
    pred = pd.DataFrame({c: (np.concatenate(v) if c != "probs" else v) for c, v in rows.items()})
    pred["model"] = pred["model"].astype(str)
    pred["item_id"] = pred["item_id"].astype(str)
    pred["method"] = "letter"
    pred["perturbation"] = np.where(pred["level"] == 0, "clean", "fog")
    pred["answer_idx"] = 0
    pr = M.pairs(pred)
    assert len(pr) == n_items + 16
    last = pr.iloc[n_items:]  # the second model's pairs: K = 2 ones are unchanged, K = 3 ones are item half+i's
    assert (last.loc[last["K"] == 2, "RAS"] == 0).all()
    np.testing.assert_array_equal(last.loc[last["K"] == 3, "RAS"].to_numpy(),
                                  pr.iloc[half + 1:half + 16:2]["RAS"].to_numpy())
    pr = pr.iloc[:n_items]

    def S(p, k):
        logp = np.log(np.where(p > 0, p, 1.0))
        return -(p * logp).sum(axis=1) / np.log(k)

    def C(p):
        return np.abs((p.argmax(1) == 0).astype(float) - p.max(1))

    dS = S(p1, K) - S(p0, K)
    dC = C(p1) - C(p0)
    order = np.argsort(pr["item_id"].astype(str).astype(int).to_numpy())
    np.testing.assert_allclose(pr["dS"].to_numpy()[order], dS, atol=1e-12)
    np.testing.assert_allclose(pr["RAS"].to_numpy()[order], -dC + np.minimum(0, dC * dS), atol=1e-12)
    with pytest.raises(ValueError, match="duplicate rows"):
        M.pairs(pd.concat([pred, pred.iloc[[5]]], ignore_index=True))


def test_probs_matrix_edges():
    lists = [[0.25, 0.75], [0.5, 0.25, 0.25]]
    np.testing.assert_array_equal(M.probs_matrix(lists, np.array([2.0, 3.0])), M.probs_matrix(lists, np.array([2, 3])))
    assert M.probs_matrix([], np.array([], dtype=np.int64)).shape == (0, 2)
    # the tolerance is inclusive: a sum off by exactly prob_atol passes
    M.probs_matrix([[0.5, 0.5 + 2**-10]], np.array([2]), prob_atol=2**-10)
    with pytest.raises(ValueError) as e:
        M.probs_matrix([[0.5, 0.5], [0.3, 0.3]], np.array([2, 2]))
    assert re.fullmatch(r"probs must sum to 1 within prob_atol=0\.001; row 1 sums to (np\.float64\()?0\.6\)?", _msg(e))
    with pytest.raises(ValueError) as e:
        M.probs_matrix(pd.Series([[0.5, None]]), np.array([2]))
    assert _msg(e) == "probs must be finite (found NaN or inf)"


def test_pairs_keeps_a_categorical_key_order_and_rejects_its_missing_values():
    pred = _pred(BASE)
    pred["item_id"] = pd.Categorical(pred["item_id"], categories=["q2", "q1"])
    out = M.pairs(pred)
    assert list(out["item_id"].cat.categories) == ["q2", "q1"]
    assert out["item_id"].astype(str).tolist() == ["q1", "q2"]
    pred["item_id"] = pd.Categorical(["q1", "q1", None, None], categories=["q2", "q1"])
    with pytest.raises(ValueError) as e:
        M.pairs(pred)
    assert _msg(e) == "column 'item_id' must not contain missing values"


def test_pairs_param_is_float_whatever_the_column_holds():
    pr = M.pairs(_pred(BASE, param=pd.Series([None, 10, None, None], dtype=object)))
    assert pr["param"].dtype == np.float64
    assert pr["param"].iloc[0] == 10.0 and math.isnan(pr["param"].iloc[1])
    assert M.pairs(_pred(BASE))["param"].dtype == np.float64


# --- Eqs. 13-16: state columns, tiny cells, messages ------------------------------------------------------

def _pair_table():
    rows = BASE + [("q3", "clean", 0, [0.2, 0.8], 0), ("q3", "fog", 1, [0.9, 0.1], 0)]
    return M.pairs(_pred(rows))


def test_state_effects_from_a_plain_string_state_column_and_dtypes():
    pr = _pair_table()
    ref = M.state_effects(pr)
    plain = M.state_effects(pr.assign(state=pr["state"].astype(str)))
    pd.testing.assert_frame_equal(plain, ref)
    for c in ("n", "n_cc", "n_cw", "n_wc", "n_ww"):
        assert ref[c].dtype == np.int64, c
    assert ref[["n", "n_cc", "n_cw", "n_wc", "n_ww"]].iloc[0].tolist() == [3, 0, 1, 2, 0]
    with pytest.raises(ValueError) as e:
        M.state_effects(pr.assign(state=["cc", "cx", "ww"]))
    assert _msg(e) == "state must be one of ('cc', 'cw', 'wc', 'ww')"
    with pytest.raises(ValueError) as e:
        M.state_effects(pr, quantities=("RAS", "nope"))
    assert _msg(e) == "quantity 'nope' is not a column of the pair table; choose from ['RAS', 'dS', 'dC']"


def test_state_effects_of_a_one_pair_cell():
    pr = _pair_table()
    e = M.state_effects(pr, by=("item_id",)).set_index("item_id")
    for q, r in zip(pr["item_id"].astype(str), pr["RAS"], strict=True):
        assert e.loc[q, "n"] == 1 and e.loc[q, "RAS_all"] == pytest.approx(r)


def test_state_effects_refuses_to_pool_methods_and_names_its_argument():
    pr = _pair_table()
    two = pd.concat([pr, pr.assign(method="loglik")], ignore_index=True)
    two["method"] = two["method"].astype("category")
    with pytest.raises(ValueError) as e:
        M.state_effects(two, by=("model", "perturbation", "level"))
    assert _msg(e) == ("model 'm' appears with 2 scoring methods, so it would be counted once per method; add "
                       "'method' to by (e.g. by=('model', 'perturbation', 'level', 'method')) or filter to one "
                       "method first")
    assert len(M.state_effects(two)) == 2
    assert not math.isnan(M.state_effects(two)["RAS_all"].iloc[0])
