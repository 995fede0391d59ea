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
from vlmrobust.analysis.card import inputs, lenses
from vlmrobust.analysis.card.readouts import ORDER
from vlmrobust.analysis.escalation import replicates
from vlmrobust.corrupt import escalation as esc
from vlmrobust.schema import ABSTAIN_TEXTS, CLEAN
from vlmrobust.stats.calibration import ece

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
        assert card.loc[m, "ECE"] == pytest.approx(ece(clean.confidence, clean.correct))
        perm = p[(p.model == m) & (p.perturbation == ORDER)].merge(inp.orders, on=["item_id", "level"])
        p0 = clean.set_index("item_id").pred_idx
        content = [o[j] for o, j in zip(perm.order, perm.pred_idx, strict=True)]
        assert card.loc[m, "flip_rate"] == pytest.approx(
            np.mean(np.array(content) != p0.reindex(perm.item_id).to_numpy()))
    assert card.loc["tiny-base", "mCE"] == 1.0  # the reference, by construction


# ----------------------------------------------------------------------------- observations


def _card(w: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"model": list(w), "W_abstain_fog": list(w.values()),
                         "W_abstain_fog_lo": [v - 0.1 for v in w.values()],
                         "W_abstain_fog_hi": [v + 0.1 for v in w.values()]})


def test_the_construction_check_reads_the_error_aware_control():
    beh = {"e": "aware-err", "a": "", "b": ""}
    assert card_obs.obs_smallest_blind_spot(_card({"e": -0.5, "a": 0.2, "b": 1.0}), beh).reproduced is True
    assert card_obs.obs_smallest_blind_spot(_card({"e": 0.15, "a": 0.2, "b": 1.0}), beh).reproduced is None
    assert card_obs.obs_smallest_blind_spot(_card({"e": 0.5, "a": 0.2, "b": 1.0}), beh).reproduced is False
    assert card_obs.obs_smallest_blind_spot(_card({"a": 0.2, "b": 1.0}), {"a": "", "b": ""}).reproduced is None


def test_agreement_needs_five_units_to_decide():
    from vlmrobust.analysis.card import agreement_table

    few = pd.DataFrame({"model": list("abc"), "x": [1.0, 2, 3], "y": [1.0, 2, 3]})
    t = agreement_table(few, [("x", "y", 1)], n_boot=100, rng=repro.rng("t-few", 0))
    assert t.rho.iloc[0] == pytest.approx(1.0) and t.agrees.iloc[0] is None


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
