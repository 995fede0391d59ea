"""Seed 000 metrics on asymmetric hand cases, with expected values written from the paper's words.

Seed 000, §VII-A: "For each clean-corrupted pair, we compute clean accuracy
Acc^(o), corrupted accuracy Acc^(d,l), accuracy shift
dAcc = Acc^(d,l) - Acc^(o), top-1 consistency 1{y^(d,l) = y^(o)}, relative
robustness Acc^(d,l)/Acc^(o), RAS, and the RAS components dS and dC. Model-,
corruption-, and severity-level quantities are ordinary arithmetic means."
Table II: "Mixed is the percentage of cells with R_c < 0 and R_w > 0."

The expected numbers come from a scalar implementation of Eqs. 7-16 written
here with the ``math`` module (no library helper), on cases where clean and
corrupted accuracies differ and consistency is below 1, so that a flipped sign,
an inverted ratio or a quantity read from the wrong side of a pair changes them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis import ras as M

# --- a scalar reading of Eqs. 7-11 ---------------------------------------------------------------------


def S(p):  # Eq. 7: entropy over the question's own K options, / log K
    return -sum(v * math.log(v) for v in p if v > 0) / math.log(len(p))


def top(p):  # arg-max, ties to the lowest index
    return max(range(len(p)), key=lambda k: (p[k], -k))


def C(p, y):  # Eq. 9
    return abs(float(top(p) == y) - max(p))


def RAS(clean, corr, y):  # Eqs. 8, 10, 11
    dS, dC = S(corr) - S(clean), C(corr, y) - C(clean, y)
    return -dC - max(dC, 0) * max(-dS, 0) - max(dS, 0) * max(-dC, 0)


# three questions (one with K = 3), two severities of one corruption
CLEAN = {"q1": ([0.8, 0.2], 0), "q2": ([0.7, 0.3], 0), "q3": ([0.5, 0.3, 0.2], 1)}
CORR = {
    1: {"q1": [0.4, 0.6], "q2": [0.9, 0.1], "q3": [0.2, 0.7, 0.1]},    # q1 lost, q2 kept, q3 corrected
    2: {"q1": [0.2, 0.8], "q2": [0.45, 0.55], "q3": [0.2, 0.2, 0.6]},  # all wrong, q3 to a third answer
}


def _predictions(model="m", clean=CLEAN, corr=CORR) -> pd.DataFrame:
    rows = []
    for q, (p, y) in clean.items():
        rows.append(dict(model=model, item_id=q, perturbation="clean", level=0, probs=p, answer_idx=y))
        for lv, ps in corr.items():
            rows.append(dict(model=model, item_id=q, perturbation="fog", level=lv, probs=ps[q], answer_idx=y))
    df = pd.DataFrame(rows)
    df["method"] = "letter"
    df["task"], df["category"], df["param"] = "t", "c", np.nan
    df["K"] = [len(p) for p in df["probs"]]
    return df


def _expected(clean=CLEAN, corr=CORR):
    pairs = [(q, lv, clean[q][0], ps[q], clean[q][1]) for lv, ps in corr.items() for q in clean]
    n = len(pairs)
    acc0 = sum(top(c) == y for _, _, c, _, y in pairs) / n
    acc1 = sum(top(d) == y for _, _, _, d, y in pairs) / n
    cons = sum(top(d) == top(c) for _, _, c, d, _ in pairs) / n
    ras = [RAS(c, d, y) for _, _, c, d, y in pairs]
    src_c = [r for r, (_, _, c, _, y) in zip(ras, pairs, strict=True) if top(c) == y]
    src_w = [r for r, (_, _, c, _, y) in zip(ras, pairs, strict=True) if top(c) != y]
    mixed = []
    for lv in corr:
        rc = [r for r, p in zip(ras, pairs, strict=True) if p[1] == lv and top(p[2]) == p[4]]
        rw = [r for r, p in zip(ras, pairs, strict=True) if p[1] == lv and top(p[2]) != p[4]]
        mixed.append(sum(rc) / len(rc) < 0 and sum(rw) / len(rw) > 0)
    return dict(acc_clean=acc0, acc_corr=acc1, delta_acc=acc1 - acc0, consistency=cons, rel_rob=acc1 / acc0,
                RAS=sum(ras) / n, R_c=sum(src_c) / len(src_c), R_w=sum(src_w) / len(src_w),
                mixed_pct=100 * sum(mixed) / len(mixed))


def test_hand_case_is_asymmetric():
    e = _expected()
    assert e["acc_clean"] == pytest.approx(2 / 3) and e["acc_corr"] == pytest.approx(1 / 3)
    assert e["delta_acc"] == pytest.approx(-1 / 3) and e["rel_rob"] == pytest.approx(0.5)
    assert e["consistency"] == pytest.approx(1 / 6)  # differs from the corrupted accuracy (1/3)


def test_table_ii_on_an_asymmetric_hand_case():
    t = M.table_ii(M.pairs(_predictions()), n_boot=0).iloc[0]
    for k, v in _expected().items():
        assert t[k] == pytest.approx(v, abs=1e-12), k
    assert t["n_items"] == 3 and t["n_pairs"] == 6


def test_table_ii_units_and_cells_are_kept_apart():
    # a second model with different answers: each unit gets its own numbers, and the cell split is per level
    corr_b = {1: {"q1": [0.9, 0.1], "q2": [0.6, 0.4], "q3": [0.6, 0.3, 0.1]},
              2: {"q1": [0.3, 0.7], "q2": [0.8, 0.2], "q3": [0.1, 0.8, 0.1]}}
    pred = pd.concat([_predictions("a"), _predictions("b", corr=corr_b)], ignore_index=True)
    t = M.table_ii(M.pairs(pred), n_boot=0).set_index("model")
    for model, corr in (("a", CORR), ("b", corr_b)):
        for k, v in _expected(corr=corr).items():
            assert t.loc[model, k] == pytest.approx(v, abs=1e-12), (model, k)
    # one cell per level: each level alone is a table with one cell
    for lv in (1, 2):
        one = M.table_ii(M.pairs(_predictions(corr={lv: CORR[lv]})), n_boot=0).iloc[0]
        assert one["mixed_pct"] in (0.0, 100.0)
        assert one["RAS"] == pytest.approx(_expected(corr={lv: CORR[lv]})["RAS"], abs=1e-12)


def test_pairs_on_the_hand_case_follow_eqs_7_to_12():
    pr = M.pairs(_predictions())
    for r in pr.itertuples():
        c, y = CLEAN[str(r.item_id)]
        d = CORR[r.level][str(r.item_id)]
        assert r.S_clean == pytest.approx(S(c), abs=1e-12) and r.S == pytest.approx(S(d), abs=1e-12)
        assert r.C_clean == pytest.approx(C(c, y), abs=1e-12) and r.C == pytest.approx(C(d, y), abs=1e-12)
        assert r.dS == pytest.approx(S(d) - S(c), abs=1e-12) and r.dC == pytest.approx(C(d, y) - C(c, y), abs=1e-12)
        assert r.RAS == pytest.approx(RAS(c, d, y), abs=1e-12)
        assert r.pred_clean == top(c) and r.pred == top(d)
        assert r.conf_clean == pytest.approx(max(c), abs=1e-12) and r.conf == pytest.approx(max(d), abs=1e-12)
        assert r.state == ("c" if top(c) == y else "w") + ("c" if top(d) == y else "w")


def test_state_effects_on_the_hand_case_follow_eqs_13_to_16():
    pr = M.pairs(_predictions())
    e = M.state_effects(pr).set_index("level")
    for lv, ps in CORR.items():
        states = {}
        for q, (c, y) in CLEAN.items():
            s = ("c" if top(c) == y else "w") + ("c" if top(ps[q]) == y else "w")
            states.setdefault(s, []).append(RAS(c, ps[q], y))
        n = sum(len(v) for v in states.values())
        n_a = {a: sum(len(v) for s, v in states.items() if s[0] == a) for a in "cw"}
        for s in M.STATES:
            got = e.loc[lv, f"RAS_{s}"]
            if s in states:
                assert got == pytest.approx(sum(states[s]) / len(states[s]), abs=1e-12)   # Eq. 13
                assert e.loc[lv, f"alpha_{s}"] == pytest.approx(len(states[s]) / n_a[s[0]])  # Eq. 14
            else:
                assert math.isnan(got)
        for a in "cw":
            assert e.loc[lv, f"pi_{a}"] == pytest.approx(n_a[a] / n)
            src = [r for s, v in states.items() if s[0] == a for r in v]
            assert e.loc[lv, f"R_{a}"] == pytest.approx(sum(src) / len(src), abs=1e-12)  # Eq. 15
        allr = [r for v in states.values() for r in v]
        assert e.loc[lv, "RAS_all"] == pytest.approx(sum(allr) / n, abs=1e-12)  # Eq. 16


# --- Table II: the mixed-cell share, the unit's questions, the arguments -------------------------------

def test_table_ii_mixed_share_leaves_out_cells_with_an_empty_source_and_needs_strict_signs():
    # fog 1, 2 as above; "same" 1: every pair unchanged (R_c = 0 exactly, R_w = 0); "blur" 1: q3 not scored
    same = {1: {q: list(p) for q, (p, _) in CLEAN.items()}}
    pred = pd.concat([_predictions(), _predictions(corr=same).query("perturbation != 'clean'").assign(
        perturbation="same"), _predictions(corr={1: {"q1": [0.9, 0.1], "q2": [0.1, 0.9]}}, clean={
            q: CLEAN[q] for q in ("q1", "q2")}).query("perturbation != 'clean'").assign(perturbation="blur")],
        ignore_index=True)
    t = M.table_ii(M.pairs(pred), n_boot=0).iloc[0]
    fog = _expected()
    n_mixed_fog = fog["mixed_pct"] / 100 * 2
    # blur-1 has no clean-wrong pair: left out; same-1 has R_c = 0, not < 0: not mixed
    assert t["mixed_pct"] == pytest.approx(100 * n_mixed_fog / 3)
    assert t["n_items"] == 3 and t["n_pairs"] == 6 + 3 + 2


def test_table_ii_counts_only_the_units_own_questions_and_records_its_settings():
    a = _predictions("a")
    b = pd.concat([_predictions("b", corr={1: CORR[1]}), _predictions("b", clean={"q4": ([0.5, 0.5], 0)},
                                                                      corr={1: {"q4": [0.4, 0.6]}})])
    t = M.table_ii(M.pairs(pd.concat([a, b], ignore_index=True)), n_boot=0).set_index("model")
    assert t.loc["a", "n_items"] == 3 and t.loc["b", "n_items"] == 4
    assert t.loc["a", "n_pairs"] == 6 and t.loc["b", "n_pairs"] == 4
    pr = M.pairs(_predictions())
    t = M.table_ii(pr, n_boot=4, ci=0.8, mixed_tol=0.01)
    assert t.attrs == {"n_boot": 4, "ci": 0.8, "n_cells": 2, "mixed_tol": 0.01}
    assert "replicates" not in M.table_ii(pr, n_boot=2).attrs
    from vlmrobust.repro import rng

    pd.testing.assert_frame_equal(M.table_ii(pr, n_boot=7), M.table_ii(pr, n_boot=7, rng=rng("metrics.table_ii", 0)))
    assert M.table_ii(pr).attrs["n_boot"] == 1000


@pytest.mark.parametrize("kw, exc, message", [
    (dict(n_boot=-1), ValueError, "n_boot must be an integer >= 0, got -1"),
    (dict(n_boot=1.5), ValueError, "n_boot must be an integer >= 0, got 1.5"),
    (dict(ci=0.0), ValueError, "ci must lie in (0, 1), got 0.0"),
    (dict(ci=1.0), ValueError, "ci must lie in (0, 1), got 1.0"),
    (dict(ci=1.5), ValueError, "ci must lie in (0, 1), got 1.5"),
    (dict(unit=[1]), TypeError, "unit must be a column name or a sequence of column names, got [1]"),
    (dict(cell=[2]), TypeError, "cell must be a column name or a sequence of column names, got [2]"),
])
def test_table_ii_argument_messages(kw, exc, message):
    with pytest.raises(exc) as e:
        M.table_ii(M.pairs(_predictions()), **{"n_boot": 0, **kw})
    assert str(e.value) == message


def test_tables_name_the_argument_that_needs_method():
    pred = _predictions()
    pr = M.pairs(pd.concat([pred, pred.assign(method="loglik")], ignore_index=True))
    for fn, name in ((M.table_ii, "unit"), (M.table_iii, "unit"), (M.table_iv, "unit")):
        with pytest.raises(ValueError) as e:
            fn(pr, **({"n_boot": 0} if fn is M.table_ii else {}), **({} if fn is M.table_ii else {"unit": ("model",)}))
        want = ("model", "method")
        assert str(e.value).endswith(f"add 'method' to {name} (e.g. {name}={want!r}) or filter to one method first")
    with pytest.raises(TypeError) as e:
        M.table_iii(pr, unit=[3])
    assert str(e.value) == "unit must be a column name or a sequence of column names, got [3]"


def test_table_iii_per_unit_and_empty_states():
    corr_b = {1: {"q1": [0.9, 0.1], "q2": [0.6, 0.4], "q3": [0.6, 0.3, 0.1]}}  # cc, cc, ww
    pred = pd.concat([_predictions("a"), _predictions("b", corr=corr_b)], ignore_index=True)
    t = M.table_iii(M.pairs(pred), unit="model")
    assert list(t.columns) == ["model", "state", "n", "share", "cond_rate", "delta_acc", "RAS", "dS", "dC"]
    assert t["n"].dtype == np.int64 and t["delta_acc"].dtype == np.float64
    b = t[t["model"] == "b"].set_index("state")
    assert b["n"].tolist() == [2, 0, 0, 1]
    assert b.loc["cc", "share"] == pytest.approx(2 / 3) and b.loc["cc", "cond_rate"] == 1.0
    assert b.loc["ww", "cond_rate"] == 1.0
    assert math.isnan(b.loc["cw", "delta_acc"]) and math.isnan(b.loc["wc", "RAS"])
    assert b.loc["cc", "RAS"] == pytest.approx((RAS(*CLEAN["q1"][:1], corr_b[1]["q1"], 0)
                                                + RAS(CLEAN["q2"][0], corr_b[1]["q2"], 0)) / 2)
    a = t[t["model"] == "a"].set_index("state")
    assert a["n"].tolist() == [1, 3, 1, 1]
