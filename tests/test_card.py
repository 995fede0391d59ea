"""The reliability card (vlmrobust.analysis.card): its sweep's item variants, and its read-outs equal to what
notebooks 04, 05, 06 and 07 compute on the same rows, recomputed here by other routes where one exists."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vlmrobust import probes, repro, sweep
from vlmrobust.analysis import ras
from vlmrobust.analysis.card import claims as card_obs
from vlmrobust.analysis.card import inputs, lenses, readouts
from vlmrobust.analysis.card import rules as card_rules
from vlmrobust.analysis.card.agreement import rank_test
from vlmrobust.analysis.card.readouts import ORDER
from vlmrobust.analysis.escalation import replicates
from vlmrobust.corrupt import escalation as esc
from vlmrobust.schema import ABSTAIN_TEXTS, CLEAN
from vlmrobust.stats.calibration import ece
from vlmrobust.stats.claims import BY_CONSTRUCTION, NO_SUBJECT, NOT_REPRODUCED, REPRODUCED, UNDECIDED

IC = ["gaussian_noise"]
TRAV = {esc.DIRECTION_LABELS[d]: n for d, n in esc.traversal_names("mean").items()}
MODELS = ["tiny-letters", "tiny-base"]


def _items(n: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"item_id": [f"q{i}" for i in range(n)], "source": "t", "task": "colour",
                         "category": "c", "question": "What colour?", "options": [["red", "blue", "green"]] * n,
                         "answer_idx": [0, 1, 2][:n], "image_ref": [f"img{i}" for i in range(n)],
                         "depth_ref": None, "abstain_idx": -1, "meta": "{}"})


# ----------------------------------------------------------------------------- the sweep's variants


def test_abstain_variants_append_seed_003s_option_and_name_their_scene():
    a = inputs.abstain_variants(_items())
    assert a.item_id.tolist() == ["q0~unclear", "q1~unclear", "q2~unclear"]
    assert all(o[-1] == ABSTAIN_TEXTS["unclear"] and len(o) == 4 for o in a.options)
    assert (a.abstain_idx == 3).all() and a.answer_idx.tolist() == [0, 1, 2]
    meta = [json.loads(m) for m in a.meta]
    assert [m["scene"] for m in meta] == ["q0", "q1", "q2"] and meta[0]["chance"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="abstain option already"):
        inputs.card_items(a)


def test_order_variants_move_the_answer_with_its_option():
    base = inputs.card_items(_items())
    orders = pd.DataFrame({"item_id": ["q0", "q1"], "level": [1, 1], "order": [(2, 0, 1), (1, 0, 2)]})
    v = inputs.order_variants(base, orders).set_index("item_id")
    assert v.loc["q0~o1", "options"] == ["green", "red", "blue"] and v.loc["q0~o1", "answer_idx"] == 1
    assert v.loc["q1~o1", "options"] == ["blue", "red", "green"] and v.loc["q1~o1", "answer_idx"] == 0


def test_card_conditions_name_every_lens_and_refuse_bad_levels():
    c = inputs.card_conditions(["fog"], [1, 5], ladder_levels=[2], visibility_levels=[1, 8])
    assert c["fog"] == [1, 5] and c["bruce_blur"] == [2] and c["traverse_topdown_mean"] == [2]
    assert c["fog_physical"] == [1, 8] and c["underwater"] == [1, 8] and len(c) == 1 + 4 + 4 + 2
    with pytest.raises(ValueError, match="ImageNet-C"):
        inputs.card_conditions(["bruce_blur"], [1])
    with pytest.raises(ValueError, match="levels of fog"):
        inputs.card_conditions(["fog"], [6])


# ----------------------------------------------------------------------------- one small real sweep


@pytest.fixture(scope="module")
def card_run(tmp_path_factory):
    items = sweep.item_source("synth", n_per_family=1, seed=0)
    conds = inputs.card_conditions(IC, [1, 3], ladder_levels=[1, 2], visibility_levels=[1, 3, 5, 8])
    inp = inputs.card_predictions(MODELS, items, conds, n_orders=1, seed=0, progress=False,
                                  probes=probes.ProbeSpec(n_control=20, max_new_tokens=3),
                                  out_dir=tmp_path_factory.mktemp("shards"))
    card, lens = lenses.card_table(inp, reference="tiny-base", imagenet_c=IC, traversals=TRAV,
                                   ladders=list(inputs.LADDERS), n_boot=40, seed=0)
    return inp, card.set_index("model"), lens


def test_the_sweep_gives_one_table_with_every_lens_rows(card_run):
    inp, _, _ = card_run
    p = inp.pred
    assert set(p.model) == set(MODELS)
    assert {CLEAN, ORDER, *IC, *inputs.LADDERS, *TRAV.values(), *inputs.ARMS} <= set(p.perturbation)
    ab = p[p.item_id.str.endswith("~unclear")]
    assert set(ab.perturbation) == {CLEAN, *inputs.ARMS}  # abstain variants: clean and the visibility ladder
    order = p[p.perturbation == ORDER]
    assert set(order.level) == {1} and not order.item_id.str.contains("~").any() and (order.variant == "").all()
    assert {"drift", "control"} <= set(inp.probes.kind) and set(inp.probes.perturbation) >= set(IC)


def test_card_ras_is_notebook_04s_table_ii_on_the_same_rows(card_run):
    inp, card, _ = card_run
    rows = inputs.base_rows(inp.pred, IC)
    pairs = ras.pairs(rows)
    t2 = ras.table_ii(pairs, n_boot=40, rng=repro.rng("04_ras_attribution", "bootstrap", 0)).set_index("model")
    for col in ("acc_clean", "RAS", "R_c", "R_w", "RAS_lo", "RAS_hi"):
        assert card[col].to_dict() == pytest.approx(t2[col].rename(index=str).to_dict(), nan_ok=True), col
    # by hand: mean per-pair RAS over the model's pairs, and the clean accuracy of the clean rows
    for m in MODELS:
        g = pairs[pairs.model == m]
        assert card.loc[m, "RAS"] == pytest.approx(g.RAS.mean())
        clean = rows[(rows.model == m) & (rows.perturbation == CLEAN)]
        assert card.loc[m, "acc_clean"] == pytest.approx(clean.correct.mean())
        over = (np.clip(g.dC, 0, None) * np.clip(-g.dS, 0, None)).sum()
        hes = (np.clip(g.dS, 0, None) * np.clip(-g.dC, 0, None)).sum()
        assert card.loc[m, "over_share"] == pytest.approx(over / (over + hes))


def test_card_rci_is_notebook_07s_table_i_on_the_same_rows(card_run):
    inp, card, _ = card_run
    t1 = replicates.run_tables(inputs.base_rows(inp.pred, [*inputs.LADDERS, *TRAV.values()]), list(inputs.LADDERS),
                               TRAV, unit=("model",), full=False).table1.set_index("model")
    for col in ("RCI_mu", "T_mu"):
        assert card[col].to_dict() == pytest.approx(t1[col].rename(index=str).to_dict()), col


def test_card_drift_is_seed_002s_any_row_by_hand(card_run):
    inp, card, _ = card_run
    pr = inp.probes[inp.probes.regime == "ans_mcq_free"]
    for m in MODELS:
        d = pr[(pr.model == m) & (pr.kind == "drift") & pr.perturbation.isin(IC)]["cos"]
        c = pr[(pr.model == m) & (pr.kind == "control")]["cos"]
        d, c = d[np.isfinite(d)], c[np.isfinite(c)]
        assert card.loc[m, "drift_pct"] == pytest.approx(100 * d.mean() / c.mean())
        assert card.loc[m, "drift_pct_lo"] <= card.loc[m, "drift_pct"] <= card.loc[m, "drift_pct_hi"]


LEVELS_M = [250.0, 125.0, 62.5, 31.25, 15.625, 7.8125, 3.90625, 1.953125]
ACC = [1, 1, 1, 0.75, 0.5, 0.25, 0.25, 0.25]  # clean 1; chance 1/4: mid 0.625, crossed between 31 and 16 m
CONF = [0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.5, 0.4]  # clean 0.9: mid 0.575, crossed between 7.8 and 3.9 m
ABST = [0, 0, 0, 0, 0.25, 0.5, 0.75, 1.0]  # clean 0: the fixed mid 0.5 is reached at 7.8 m


def _visibility_rows() -> tuple[pd.DataFrame, pd.DataFrame]:
    base = inputs.card_items(pd.DataFrame({
        "item_id": [f"q{i}" for i in range(4)], "source": "t", "task": "colour", "category": "c", "question": "?",
        "options": [["a", "b", "c", "d"]] * 4, "answer_idx": 0, "image_ref": "x", "depth_ref": None,
        "abstain_idx": -1, "meta": "{}"}))
    items = pd.concat([base, inputs.abstain_variants(base)], ignore_index=True)
    rows = []
    for arm in inputs.ARMS:
        for lv, (acc, conf, ab) in enumerate(zip([1] + ACC, [0.9] + CONF, [0] + ABST, strict=True)):
            if arm != "fog_physical" and lv == 0:
                continue
            pert, param = (CLEAN, np.nan) if lv == 0 else (arm, LEVELS_M[lv - 1])
            for i in range(4):
                common = dict(model="m", task="colour", perturbation=pert, level=lv, param=param, method="letter",
                              verbal_conf=np.nan, confidence=conf)
                rows.append(common | dict(item_id=f"q{i}", correct=i < round(4 * acc), token_prob=conf,
                                          abstained=False))
                rows.append(common | dict(item_id=f"q{i}~unclear", correct=False, token_prob=conf,
                                          abstained=i < round(4 * ab)))
    return pd.DataFrame(rows), items


def _log_v(v0: float, v1: float, y0: float, y1: float, mid: float) -> float:
    return float(np.exp(np.log(v0) + (y0 - mid) / (y0 - y1) * (np.log(v1) - np.log(v0))))


def test_card_w_is_seed_003s_crossing_width_by_hand():
    pred, items = _visibility_rows()
    wide, spots = lenses.blind_spot_readouts(pred, items, n_boot=0, seed=0, ci=0.95)
    w = wide.set_index("model").loc["m"]
    v_acc = _log_v(31.25, 15.625, 0.75, 0.5, (1 + 0.25) / 2)
    v_int = _log_v(7.8125, 3.90625, 0.8, 0.5, (0.9 + 0.25) / 2)
    v_ab = 7.8125  # reached exactly at 7.8 m
    assert w.W_internal_fog == pytest.approx(np.log10(v_acc / v_int))
    assert w.W_abstain_fog == pytest.approx(np.log10(v_acc / v_ab))
    assert w.W_internal_water == pytest.approx(w.W_internal_fog)  # the same curves on the water arm
    assert set(spots.signal) >= {"internal", "abstain"} and (spots.task == "card").all()
    assert spots.chance.eq(0.25).all()


def test_card_ece_and_flip_rate_by_hand(card_run):
    inp, card, _ = card_run
    p = inp.pred
    # the variant is a column: the abstain variants' rows say so, and no other row carries the separator
    assert set(p.variant) == {"", "unclear"}
    assert p.item_id[p.variant == "unclear"].str.endswith("~unclear").all()
    assert not p.item_id[p.variant == ""].str.contains("~").any()
    for m in MODELS:
        clean = p[(p.model == m) & (p.perturbation == CLEAN) & ~p.item_id.str.contains("~")]
        assert np.isnan(card.loc[m, "ECE"]) and card.loc[m, "ECE_note"].startswith("refused")  # 9 items
        kept = lenses.ece_readouts(inp.pred[inp.pred.model == m], n_boot=10, seed=0, ci=0.95, min_items=1)
        assert kept.ECE.iloc[0] == pytest.approx(ece(clean.confidence, clean.correct))
        perm = p[(p.model == m) & (p.perturbation == ORDER)].merge(inp.orders, on=["item_id", "level"])
        p0 = clean.set_index("item_id").pred_idx
        content = [o[j] for o, j in zip(perm.order, perm.pred_idx, strict=True)]
        assert card.loc[m, "flip_rate"] == pytest.approx(
            np.mean(np.array(content) != p0.reindex(perm.item_id).to_numpy()))
        # CircularEval by hand: right in the given order and in every rotation scored
        ok0 = clean.set_index("item_id").correct.astype(bool)
        solved = perm.groupby("item_id").correct.all() & ok0.reindex(perm.item_id.unique())
        assert card.loc[m, "circular_acc"] == pytest.approx(solved.mean())
    assert card.loc["tiny-base", "mCE"] == 1.0  # the reference, by construction


# ----------------------------------------------------------------------------- observations


def _card(w: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"model": list(w), "W_abstain_fog": list(w.values()),
                         "W_abstain_fog_lo": [v - 0.1 for v in w.values()],
                         "W_abstain_fog_hi": [v + 0.1 for v in w.values()]})


def test_the_construction_check_reads_the_error_aware_control():
    beh = {"e": "aware-err", "a": "", "b": ""}
    held = card_obs.obs_smallest_blind_spot(_card({"e": -0.5, "a": 0.2, "b": 1.0}), beh)
    assert held.verdict == BY_CONSTRUCTION and held.section == "construction"
    assert card_obs.obs_smallest_blind_spot(_card({"e": 0.15, "a": 0.2, "b": 1.0}), beh).verdict == UNDECIDED
    assert card_obs.obs_smallest_blind_spot(_card({"e": 0.5, "a": 0.2, "b": 1.0}), beh).verdict == NOT_REPRODUCED
    assert card_obs.obs_smallest_blind_spot(_card({"a": 0.2, "b": 1.0}), {"a": "", "b": ""}).verdict == NO_SUBJECT


def test_agreement_needs_six_units_to_decide_and_a_perfect_five_stays_undecided():
    from vlmrobust.analysis.card import agreement_table

    few = pd.DataFrame({"model": list("abc"), "x": [1.0, 2, 3], "y": [1.0, 2, 3]})
    t = agreement_table(few, [("x", "y", 1)], n_boot=100, rng=repro.rng("t-few", 0))
    assert t.rho.iloc[0] == pytest.approx(1.0) and t.verdict.iloc[0] == UNDECIDED
    five = rank_test(np.arange(5.0), np.arange(5.0))  # rho 1.00 over 5 corruptions: no decision
    assert five["rho"] == pytest.approx(1.0) and five["verdict"] == UNDECIDED
    rows = card_obs.agreement_checks(agreement_table(
        pd.DataFrame({"perturbation": list("abcde"), "x": np.arange(5.0), "y": np.arange(5.0)}), [("x", "y", 1)],
        unit="perturbation", n_boot=50, rng=repro.rng("t-five", 0)), {}, unit="corruption")
    assert rows[0].verdict == UNDECIDED and "at least 6 corruptions (now 5)" in rows[0].decide


def test_the_permutation_test_is_exact_and_two_sided():
    x = np.arange(7.0)
    assert rank_test(x, x)["verdict"] == REPRODUCED and rank_test(x, x)["p_agree"] == pytest.approx(1 / 5040)
    assert rank_test(x, -x)["verdict"] == NOT_REPRODUCED
    assert rank_test(x, -x, -1)["verdict"] == REPRODUCED  # the stated direction decides which tail agrees
    assert rank_test(x, x)["crit"] == pytest.approx(0.786, abs=0.01)  # the two-sided 5 % bar at 7 units
    y = np.array([1.0, 0, 3, 2, 5, 4, 6])  # three swaps of neighbours: rho 0.89, p below 2.5 %
    assert rank_test(x, y)["verdict"] == REPRODUCED
    assert rank_test(x, np.array([3.0, 0, 6, 1, 5, 2, 4]))["verdict"] == UNDECIDED
    twelve = rank_test(np.arange(12.0), np.r_[np.arange(12.0)[::2], np.arange(12.0)[1::2]],
                       rng=repro.rng("t-12", 0))
    assert 0.55 < twelve["crit"] < 0.62  # 12 models decide only when |rho| is about 0.6


@pytest.mark.parametrize("rule", card_rules.RULES, ids=[r.name for r in card_rules.RULES])
def test_each_rule_decides_a_clear_positive_and_not_its_null(rule):
    rng = np.random.default_rng(5)
    nulls = [rule.null(np.random.default_rng(s)) for s in range(60)]
    assert nulls.count(REPRODUCED) <= 6, rule.name
    if rule.name.startswith("08.5"):  # six corruptions, the fewest that decide: only a near-perfect ranking does
        assert rank_test(np.arange(6.0), np.arange(6.0), rng=rng)["verdict"] == REPRODUCED
        assert rank_test(np.arange(5.0), np.arange(5.0), rng=rng)["verdict"] == UNDECIDED  # five never decide
        assert sum(rule.positive(np.random.default_rng(s)) == REPRODUCED for s in range(60)) >= 6, rule.name
    else:
        assert sum(rule.positive(np.random.default_rng(s)) == REPRODUCED for s in range(60)) >= 25, rule.name


def test_a_clear_positive_passes_the_agreement_rule_on_twelve_models():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(12)
    assert rank_test(x, x + 0.1 * rng.standard_normal(12), rng=rng)["verdict"] == REPRODUCED


def test_blind_twins_are_read_by_their_organism():
    assert card_obs.zoo_name("blind:tiny-base") == "tiny-base"
    ev = card_obs.evaluated(["blind:tiny-base", "blind:aware-err", "aware-err", "tiny-long", "org/hub-model"])
    assert ev == ["blind:tiny-base", "tiny-long", "org/hub-model"]
    assert card_obs.behaviours(["blind:aware-err", "tiny-base"]) == {"blind:aware-err": "aware-err", "tiny-base": ""}


# ----------------------------------------------------------------------------- the read-outs' fixes


def _mce_pred(ref_wrong: dict, other_wrong: dict, n_items: int = 6) -> pd.DataFrame:
    """Predictions where ``*_wrong[(perturbation, level)]`` items of ``n_items`` are wrong (clean at level 0)."""
    rows = []
    for m, wrong in (("ref", ref_wrong), ("m", other_wrong)):
        for (pert, lv), k in wrong.items():
            for i in range(n_items):
                rows.append({"model": m, "item_id": f"q{i}", "perturbation": pert, "level": lv, "correct": i >= k})
    return pd.DataFrame(rows)


def test_relative_ce_is_decided_on_counts_not_on_rounded_rates():
    # errors 0, 1, 2 of 10 at three severities against 1 of 10 clean: 0 in counts, 5.6e-17 in rates
    w, n = np.array([[0.0, 1.0, 2.0]]), np.full((1, 3), 10.0)
    assert (w / n).sum(1)[0] - 3 * 1.0 / 10 != 0.0  # the floating-point sum is not 0 ...
    assert readouts.excess_error(w, n, np.array([1.0]), np.array([10.0]))[0] == 0.0  # ... the counts' is
    assert readouts.excess_error(w, n, np.array([0.0]), np.array([10.0]))[0] == pytest.approx(0.3)
    # a reference exactly as wrong under each corruption as clean defines no relative CE there
    ref = {(CLEAN, 0): 2, ("a", 1): 2, ("a", 2): 2, ("b", 1): 3, ("b", 2): 4, ("c", 1): 4, ("c", 2): 4,
           ("d", 1): 3, ("d", 2): 5}
    other = {k: min(6, v + 1) for k, v in ref.items()}
    ce = readouts.corruption_errors(_mce_pred(ref, other), "ref").set_index(["model", "perturbation"])
    assert np.isnan(ce.loc[("m", "a"), "rCE"]) and not ce.loc[("ref", "a"), "reference_degrades"]
    t = readouts.mce(_mce_pred(ref, other), "ref", n_boot=200, rng=repro.rng("t-mce", 0)).set_index("model")
    assert t.loc["m", "n_rce"] == 3 and t.loc["ref", "rel_mCE"] == pytest.approx(1.0)
    assert np.all(np.abs(t[["rel_mCE_lo", "rel_mCE_hi"]].to_numpy()) < 100)  # no 1e15 from a zero denominator


def test_relative_mce_is_refused_below_three_corruptions_and_carries_no_interval():
    ref = {(CLEAN, 0): 1, ("fog", 1): 3, ("fog", 2): 4, ("noise", 1): 1, ("noise", 2): 1}
    other = {(CLEAN, 0): 1, ("fog", 1): 2, ("fog", 2): 2, ("noise", 1): 3, ("noise", 2): 3}
    t = readouts.mce(_mce_pred(ref, other), "ref", n_boot=100, rng=repro.rng("t-mce", 1)).set_index("model")
    for m in ("ref", "m"):
        assert np.isnan(t.loc[m, ["rel_mCE", "rel_mCE_lo", "rel_mCE_hi"]].to_numpy(float)).all()
        assert "degrades under 1 of 2 corruptions (fog)" in t.loc[m, "rel_mCE_note"]
    assert t.loc["ref", "mCE"] == 1.0 and np.isfinite(t.loc["m", "mCE_lo"])
    kept = readouts.mce(_mce_pred(ref, other), "ref", n_boot=50, rng=repro.rng("t-mce", 1), min_rce=1)
    assert np.isfinite(kept.set_index("model").loc["m", "rel_mCE"])


def test_rotations_move_every_option_and_keep_the_abstain_option():
    items = pd.DataFrame({"item_id": ["q", "r"], "options": [["a", "b", "c", "d"], ["y", "n", "?"]],
                          "abstain_idx": [-1, 2]})
    o = readouts.option_orders(items, 5)
    q = o[o.item_id == "q"]
    assert q.order.tolist() == [(1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]  # K - 1 rotations, no more
    assert all(all(p[j] != j for j in range(4)) for p in q.order)  # no option stays in place
    assert o[o.item_id == "r"].order.tolist() == [(1, 0, 2)]  # the abstain option keeps its place
    assert readouts.option_orders(items, 1).level.tolist() == [1, 1]


def _order_pred(choose) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Four 4-option items (answer 0), clean and in all three rotations, answered by ``choose(order) -> position``."""
    items = pd.DataFrame({"item_id": [f"q{i}" for i in range(4)], "options": [list("abcd")] * 4,
                          "answer_idx": 0, "abstain_idx": -1})
    orders = readouts.option_orders(items, 3)
    rows = [{"model": "m", "item_id": i, "perturbation": CLEAN, "level": 0, "pred_idx": choose((0, 1, 2, 3)),
             "correct": choose((0, 1, 2, 3)) == 0} for i in items.item_id]
    for r in orders.itertuples(index=False):
        j = choose(r.order)
        rows.append({"model": "m", "item_id": r.item_id, "perturbation": ORDER, "level": r.level, "pred_idx": j,
                     "correct": r.order[j] == 0})
    return pd.DataFrame(rows), orders, items


def test_a_positional_model_fails_circular_eval_and_a_reader_passes_it():
    pred, orders, items = _order_pred(lambda order: 0)  # always the first position
    t = readouts.answer_order_flips(pred, orders, n_boot=50, rng=repro.rng("t-o", 0), items=items).iloc[0]
    assert t.flip_rate == 1.0 and t.position_rate == 1.0 and t.circular_acc == 0.0 and t.full_circle
    assert t.n_informative == 12  # every rotation pair is informative
    pred, orders, items = _order_pred(lambda order: order.index(0))  # finds the right content wherever it is
    t = readouts.answer_order_flips(pred, orders, n_boot=50, rng=repro.rng("t-o", 0), items=items).iloc[0]
    assert t.flip_rate == 0.0 and t.position_rate == 0.0 and t.circular_acc == 1.0
    assert t.circular_acc_lo == 1.0 and t.circular_acc_hi == 1.0


def test_ece_is_reported_beside_a_calibrated_null_and_refused_on_few_items():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.3, 1.0, 18)
    null = lenses.ece_null(conf, 400, repro.rng("t-ece", 0))
    assert 0.12 < null.mean() < 0.3  # a perfectly calibrated model's own ECE on 18 items
    big = lenses.ece_null(rng.uniform(0.3, 1.0, 2000), 50, repro.rng("t-ece", 1))
    assert big.mean() < 0.04  # ... shrinks with the items

    def pred(n, m="m"):
        c = rng.uniform(0.3, 1.0, n)
        return pd.DataFrame({"model": m, "item_id": [f"q{i}" for i in range(n)], "perturbation": CLEAN,
                             "level": 0, "confidence": c, "correct": rng.random(n) < c})
    few = lenses.ece_readouts(pred(18), n_boot=20, seed=0, ci=0.95).iloc[0]
    assert np.isnan(few.ECE) and np.isnan(few.ECE_lo) and "refused: 18 items" in few.ECE_note
    assert 0.1 < few.ECE_null < 0.3 and few.ECE_null_hi > few.ECE_null
    many = lenses.ece_readouts(pred(400), n_boot=20, seed=0, ci=0.95).iloc[0]
    assert np.isfinite(many.ECE) and many.ECE_note == "" and many.ECE_lo <= many.ECE <= many.ECE_hi
    assert many.ECE < many.ECE_null_hi + 0.05  # a calibrated model sits within its null


def test_items_without_depth_get_a_providers_depth_or_a_clear_error(tmp_path, monkeypatch):
    from vlmrobust import data, depth

    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path))
    synth_items = sweep.item_source("synth", n_per_family=1, seed=0).head(2)
    assert inputs.with_depth(synth_items) is synth_items  # the synthetic world's own depth is kept
    real = synth_items.assign(depth_ref=None)
    with pytest.raises(ValueError, match="depth provider"):
        inputs.with_depth(real)
    out = inputs.with_depth(real, depth.make_provider("plane", plane_m=5.0))
    d = data.load_depth(out.depth_ref.iloc[0])
    assert (d.shape == data.load_image(out.image_ref.iloc[0]).shape[:2] and d.min() == pytest.approx(5.0, rel=1e-3)
            and d.max() > d.min())  # rays to a plane


# ----------------------------------------------------------------------------- the figures


def _card_long(models: list[str]) -> pd.DataFrame:
    """A small long card table: a ratio far past the cap, a read-out refused for every model, and a W pair."""
    from vlmrobust.analysis.card.lenses import READOUTS

    rows = []
    for i, m in enumerate(models):
        for key, val, lo, hi, kind in [("acc_clean", 0.6, 0.5, 0.7, "="), ("mCE", 1.0 if m == "ref" else 40.0,
                                        1.0 if m == "ref" else 30.0, 1.0 if m == "ref" else 90.0, "="),
                                       ("rel_mCE", np.nan, np.nan, np.nan, "="),
                                       ("W_internal_fog", 2.1, 1.5, 2.1, "≥"),
                                       ("W_abstain_fog", 0.2 * i, -0.1, 0.5, "="),
                                       ("drift_pct", 30.0, 20.0, 40.0, "=")]:
            rows.append({"model": m, "readout": key, "label": READOUTS[key][0], "better": READOUTS[key][1],
                         "value": val, "lo": lo, "hi": hi, "kind": kind, "null": np.nan, "note": ""})
    return pd.DataFrame(rows)


def test_cards_figure_caps_ratio_axes_at_ten_and_skips_a_read_out_refused_for_every_model():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vlmrobust.analysis.card import figures as cf

    models = ["ref", "m1", "m2"]
    fig = cf.cards_figure(_card_long(models), models, reference="ref")
    titles = {ax.get_title(loc="left"): ax for ax in fig.axes if ax.get_title(loc="left")}
    assert "relative mCE" not in titles  # refused for every model: no panel, named in the key
    assert "W blind spot, fog" in titles and "W internal, fog" not in titles  # the W pair shares a panel
    assert titles["mCE"].get_xlim()[1] <= cf.RATIO_CAP * 1.08 + 0.05 + 1e-9
    assert fig.get_size_inches()[0] <= 7.5
    assert "relative mCE" in " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    plt.close(fig)


def test_cards_finding_counts_values_clear_of_the_reference_line():
    from vlmrobust.analysis.card import figures as cf

    models = ["ref", "m1", "m2"]
    text = cf.cards_finding(_card_long(models), models, "ref")
    assert "mCE: 0 of 2 models lie clearly below the reference's 1 and 2 clearly above it" in text
    # drift (line at 100 %, lower better) is better for both; mCE worse for both; W internal worse for both
    assert ", 2 are clear of it on the better side" in text and "4 on the worse side" in text


def test_agreement_finding_says_so_when_no_rho_exists():
    from vlmrobust.analysis.card import figures as card_figures

    rows = pd.DataFrame({"across": ["models"] * 2, "x": ["a", "b"], "y": ["c", "d"], "rho": [np.nan, np.nan],
                         "crit": [np.nan, np.nan], "n_units": [3, 3], "verdict": ["undecided"] * 2})
    assert card_figures.agreement_finding(rows).startswith("No model-level ρ could be computed over 3 models")
    rows.loc[0, ["rho", "crit"]] = [0.5, 0.9]
    assert "has ρ +0.50 and stays below the bar of 0.90" in card_figures.agreement_finding(rows)
