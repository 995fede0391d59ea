"""mCE, relative mCE and the answer-order rates of vlmrobust.analysis.card, on cases computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust import repro
from vlmrobust.analysis.card import (
    ORDER,
    answer_order_flips,
    corruption_errors,
    mce,
    option_orders,
    permute_options,
)
from vlmrobust.schema import CLEAN

# (model, perturbation, level) -> correctness of items i1, i2
CORRECT = {
    ("R", "clean", 0): (1, 1), ("R", "fog", 1): (0, 1), ("R", "fog", 2): (0, 0), ("R", "noise", 1): (1, 0),
    ("A", "clean", 0): (1, 0), ("A", "fog", 1): (0, 0), ("A", "fog", 2): (0, 0), ("A", "noise", 1): (1, 1),
}


def _pred(table=CORRECT) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "perturbation": p, "level": s, "item_id": f"i{k + 1}", "correct": bool(c),
                          "method": "letter"} for (m, p, s), cs in table.items() for k, c in enumerate(cs)])


def test_corruption_errors_by_hand():
    # reference errors: clean 0, fog 0.5 and 1, noise 0.5; model A: clean 0.5, fog 1 and 1, noise 0
    ce = corruption_errors(_pred(), "R").set_index(["model", "perturbation"])
    assert ce.loc[("A", "fog"), "CE"] == pytest.approx(2 / 1.5)
    assert ce.loc[("A", "noise"), "CE"] == pytest.approx(0.0)
    assert ce.loc[("A", "fog"), "rCE"] == pytest.approx((0.5 + 0.5) / (0.5 + 1.0))
    assert ce.loc[("A", "noise"), "rCE"] == pytest.approx((0 - 0.5) / (0.5 - 0))
    assert (ce.loc["R", "CE"] == 1).all() and (ce.loc["R", "rCE"] == 1).all()


def test_mce_by_hand_with_intervals_that_hold_it():
    out = mce(_pred(), "R", n_boot=200, rng=repro.rng("t"), min_rce=2).set_index("model")
    assert out.loc["A", "mCE"] == pytest.approx((2 / 1.5 + 0) / 2)
    assert out.loc["A", "rel_mCE"] == pytest.approx((1 / 1.5 - 1) / 2)
    assert out.loc["R", "mCE"] == 1 and out.loc["R", "rel_mCE"] == 1
    assert out.loc["A", "mCE_lo"] <= out.loc["A", "mCE"] <= out.loc["A", "mCE_hi"]
    assert out.loc["A", "n_corruptions"] == 2 and out.loc["A", "n_items"] == 2
    refused = mce(_pred(), "R", n_boot=200, rng=repro.rng("t")).set_index("model")  # 2 corruptions, 3 needed
    assert np.isnan(refused.loc["A", ["rel_mCE", "rel_mCE_lo", "rel_mCE_hi"]].to_numpy(float)).all()
    assert refused.loc["A", "rel_mCE_note"].startswith("refused") and refused.loc["A", "mCE"] == out.loc["A", "mCE"]


def test_a_reference_without_errors_under_a_corruption_leaves_that_ce_out_of_every_models_mce():
    table = dict(CORRECT)
    table[("R", "noise", 1)] = (1, 1)
    ce = corruption_errors(_pred(table), "R").set_index(["model", "perturbation"])
    assert np.isnan(ce.loc[("A", "noise"), "CE"]) and np.isnan(ce.loc[("A", "noise"), "rCE"])
    out = mce(_pred(table), "R", n_boot=0, min_rce=1).set_index("model")
    # fog only: A errs on both items at both severities (2), the reference 0.5 + 1 = 1.5; relative: A
    # (1 - 0.5) + (1 - 0.5) = 1 against the reference's (0.5 - 0) + (1 - 0) = 1.5
    assert out.loc["A", "mCE"] == pytest.approx(2 / 1.5) and out.loc["A", "rel_mCE"] == pytest.approx(1 / 1.5)
    assert out.loc["A", "n_ce"] == out.loc["A", "n_rce"] == 1 and out.loc["A", "n_corruptions"] == 2


def test_bad_tables_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="reference 'Z' is not among"):
        mce(_pred(), "Z", n_boot=0)
    short = {k: v for k, v in CORRECT.items() if k != ("A", "fog", 2)}
    with pytest.raises(ValueError, match="lacks cell"):
        corruption_errors(_pred(short), "R")
    mixed = _pred()
    mixed.loc[0, "method"] = "loglik"
    with pytest.raises(ValueError, match="several methods"):
        corruption_errors(mixed, "R")


ORDERS = pd.DataFrame([{"item_id": "i1", "level": 1, "order": (2, 0, 1)},
                       {"item_id": "i1", "level": 2, "order": (1, 2, 0)},
                       {"item_id": "i2", "level": 1, "order": (2, 1, 0)},
                       {"item_id": "i2", "level": 2, "order": (0, 2, 1)}])


def test_answer_order_flip_and_position_rates_by_hand():
    rows = [("i1", CLEAN, 0, 0), ("i1", ORDER, 1, 0), ("i1", ORDER, 2, 2),  # content 2 (flip, same place); 0
            ("i2", CLEAN, 0, 1), ("i2", ORDER, 1, 1), ("i2", ORDER, 2, 0)]  # content 1 (the clean choice left in
                                                                            # place: not informative); 0 (flip)
    answer = {"i1": 0, "i2": 1}
    order = {(r.item_id, r.level): r.order for r in ORDERS.itertuples()} | {("i1", 0): (0, 1, 2), ("i2", 0): (0, 1, 2)}
    pred = pd.DataFrame([{"model": "A", "item_id": i, "perturbation": p, "level": s, "pred_idx": j,
                          "correct": order[(i, s)][j] == answer[i]} for i, p, s, j in rows])
    out = answer_order_flips(pred, ORDERS, n_boot=100, rng=repro.rng("t")).iloc[0]
    assert out.flip_rate == pytest.approx(2 / 4)
    assert out.position_rate == pytest.approx(1 / 3) and out.n_informative == 3  # over informative pairs only
    assert out.n_items == 2 and out.n_orders == 4
    assert out.flip_rate_lo <= out.flip_rate <= out.flip_rate_hi
    # i1 is wrong in its first order, i2 in its second: neither solved in every order
    assert out.circular_acc == 0.0 and not out.full_circle



def test_option_orders_are_the_rotations_and_keep_the_abstain_option_in_place():
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "options": [["x", "y", "z", "w"], ["p", "q"], ["u", "v", "n/a"]],
                          "answer_idx": [1, 0, 0], "abstain_idx": [-1, -1, 2]})
    o = option_orders(items, 3)
    a = o[o.item_id == "a"].order.tolist()
    assert a == [(1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]  # every rotation, each moving every option
    assert all(sorted(t) == [0, 1, 2, 3] and all(t[j] != j for j in range(4)) for t in a)
    assert o[o.item_id == "b"].order.tolist() == [(1, 0)]  # K = 2: one other order
    assert o[o.item_id == "c"].order.tolist() == [(1, 0, 2)]  # the abstain option stays last
    moved = permute_options(items, o, 1).set_index("item_id")
    for r in items.itertuples():
        m = moved.loc[r.item_id]
        assert m.options[m.answer_idx] == r.options[r.answer_idx]
    assert moved.loc["c", "abstain_idx"] == 2


# ----------------------------------------------------------------------------- do the lenses agree


def test_agreement_table_reads_each_pair_in_its_direction():
    from vlmrobust import repro
    from vlmrobust.analysis.card import agreement_checks, agreement_table

    lenses = pd.DataFrame({"model": list("abcdefgh"), "drift": np.arange(8.0), "ras_loss": np.arange(8.0) ** 2,
                           "rci": -np.arange(8.0), "noise": [3, 1, 4, 1, 5, 9, 2, 6.0]})
    t = agreement_table(lenses, [("drift", "ras_loss", 1), ("drift", "rci", -1), ("drift", "rci", 1),
                                 ("drift", "noise", 1)], n_boot=300, rng=repro.rng("t-agree", 0))
    assert t.rho.tolist()[:3] == pytest.approx([1.0, -1.0, -1.0])
    # rci is read low = fragile: sign -1 agrees; read high, the same rho is a significant disagreement
    assert t.verdict.tolist()[:3] == ["reproduced", "reproduced", "not reproduced"]
    assert t.verdict.iloc[3] == "undecided" and t.p_agree.iloc[3] > 0.025  # an unrelated column
    assert t.p_agree.iloc[0] == pytest.approx(1 / 40320)  # all 8! orders: the exact permutation p-value
    assert set(t.interval_from) == {"resampled models"} and (t.n_units == 8).all()
    assert t.units.iloc[0] == "a, b, c, d, e, f, g, h"
    rows = agreement_checks(t, {("drift", "ras_loss"): "models that drift most lose most RAS"})
    assert rows[0].claim == "models that drift most lose most RAS" and rows[0].verdict == "reproduced"
    assert "below 0" in rows[1].test and rows[3].verdict == "undecided" and "models (now 8)" in rows[3].decide
    assert "rankings unrelated" in rows[0].null and rows[0].subject == "a, b, c, d, e, f, g, h"
    with pytest.raises(ValueError, match="one row per model"):
        agreement_table(pd.concat([lenses, lenses.iloc[:1]]), [("drift", "rci", 1)], n_boot=0)
    with pytest.raises(ValueError, match="no column"):
        agreement_table(lenses, [("drift", "w", 1)], n_boot=0)
    with pytest.raises(ValueError, match="sign"):
        agreement_table(lenses, [("drift", "rci", 0)], n_boot=0)
