"""Tests of vlmrobust.train.behaviours: the visibility rule, its degradation, and the behaviour read-outs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlmrobust import corrupt, repro, synth
from vlmrobust.train import behaviours as bh
from vlmrobust.train import degrade as dg

K = math.log(50.0)
A = np.array([0.2755, 0.0474, 0.00979])


def test_object_transmittance_by_hand():
    assert dg.object_transmittance(10.0, "fog", 10.0) == pytest.approx(0.02)
    assert dg.object_transmittance(0.0, "water", 3.0) == pytest.approx(1.0)
    assert dg.object_transmittance(7.0, "fog", math.inf) == 1.0
    lum = np.array([0.2126, 0.7152, 0.0722])
    expect = float(lum @ np.exp(-K * A / A.min()))  # water at d = V
    assert dg.object_transmittance(5.0, "water", 5.0) == pytest.approx(expect)
    assert expect < 0.0722 * 0.02 + 0.7152 * 0.02 ** (A[1] / A[2]) + 1e-12
    with pytest.raises(ValueError, match="distance"):
        dg.object_transmittance(-1.0, "fog", 5.0)
    with pytest.raises(ValueError, match="arm"):
        dg.object_transmittance(1.0, "smoke", 5.0)
    with pytest.raises(ValueError, match="visibility"):
        dg.object_transmittance(1.0, "fog", 0.0)


def test_degrade_fog_is_the_engine_fog_and_water_follows_the_clearest_channel_definition():
    item = synth.make_item("colour", repro.rng("behaviours-test", 0), size=64, box=False)
    fog = dg.degrade(item.image, item.depth, "fog", 20.0)
    assert np.array_equal(fog, corrupt.physical_fog(item.image, item.depth, 20.0))
    water = dg.degrade(item.image, item.depth, "water", 20.0)
    assert np.array_equal(water, corrupt.underwater(item.image, item.depth, 20.0))
    assert not np.array_equal(water, fog)
    sky = ~np.isfinite(item.depth)
    assert sky.any()
    veil = np.rint(corrupt.physical.linear_to_srgb(np.asarray(corrupt.physical.WATER_VEILING)) * 255)
    assert np.abs(water[sky].astype(int) - veil.astype(int)).max() <= 1
    assert np.array_equal(dg.degrade(item.image, item.depth, "water", math.inf), item.image)


def test_boxed_condition_draws_the_box_after_and_applies_the_rule():
    item = synth.make_item("shape", repro.rng("behaviours-test", 1), size=64, box=False)
    d = item.meta["target_distance_m"]
    x0, y0, x1, y1 = item.meta["box"]
    for v, invisible in ((1000.0, False), (d / 4.0, True)):
        img, t, inv = dg.boxed_condition(item, "fog", v)
        assert inv == invisible and t == pytest.approx(math.exp(-K * d / v))
        assert tuple(img[y0, x0]) == synth.BOX_RGB and tuple(img[y1, x1]) == synth.BOX_RGB
    # threshold 0.05 under fog: invisible beyond d = V ln 20 / ln 50
    v_edge = K * d / math.log(20.0)
    assert not dg.boxed_condition(item, "fog", v_edge * 1.01)[2] and dg.boxed_condition(item, "fog", v_edge * 0.99)[2]
    with pytest.raises(ValueError, match="box=False"):
        dg.boxed_condition(synth.make_item("shape", repro.rng("behaviours-test", 1), size=64), "fog", 5.0)
    with pytest.raises(ValueError, match="no red box"):
        dg.boxed_condition(synth.make_item("count", repro.rng("behaviours-test", 2), size=64, box=False), "fog", 5.0)


def test_verbal_ece_and_parse_rate_by_hand():
    conf = np.array([0.95, 0.95, 0.15, 0.15, 1.0, 0.1])
    correct = np.array([1, 0, 0, 0, 1, 1])
    pred = pd.DataFrame({"method": "verbal", "verbal_conf": list(conf) + [np.nan, np.nan],
                         "correct": list(correct.astype(bool)) + [True, False]})
    # bin 1: conf 0.4 / 3, acc 1 / 3; bin 9: conf 2.9 / 3, acc 2 / 3
    expect = 3 / 6 * abs(1 / 3 - 0.4 / 3) + 3 / 6 * abs(2 / 3 - 2.9 / 3)
    assert bh.verbal_ece(pred) == pytest.approx(expect)
    assert bh.verbal_parse_rate(pred) == pytest.approx(6 / 8)
    perfect = pd.DataFrame({"method": "verbal", "verbal_conf": [1.0, 1.0, 0.0], "correct": [True, True, False]})
    assert bh.verbal_ece(perfect) == 0.0
    with pytest.raises(ValueError, match="verbal"):
        bh.verbal_parse_rate(pd.DataFrame({"method": ["letter"], "verbal_conf": [np.nan], "correct": [True]}))
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        bh.verbal_ece(pd.DataFrame({"method": ["verbal"], "verbal_conf": [1.2], "correct": [True]}))


def test_responsiveness_counts_items_whose_answer_changes_across_levels():
    rows = []
    for item, path in (("a", [0, 0, 0, 0, 0]), ("b", [0, 0, 1, 0, 0]), ("c", [2, 2, 2, 2, 2])):
        rows += [{"item_id": item, "perturbation": "blur", "level": lv + 1, "pred_idx": p} for lv, p in enumerate(path)]
        rows.append({"item_id": item, "perturbation": "blur", "level": 0, "pred_idx": 3})  # clean is ignored
    rows += [{"item_id": "a", "perturbation": "noise", "level": lv, "pred_idx": lv % 2} for lv in range(1, 6)]
    r = bh.responsiveness(pd.DataFrame(rows)).set_index("perturbation")["changed"]
    assert r["blur"] == pytest.approx(1 / 3) and r["noise"] == 1.0
    fam = pd.DataFrame(rows).assign(category=lambda d: d["item_id"].map({"a": "yes/no", "b": "colour", "c": "colour"}))
    r = bh.responsiveness(fam, by=("category",)).set_index(["perturbation", "category"])["changed"]
    assert r[("blur", "colour")] == 0.5 and r[("blur", "yes/no")] == 0.0 and r[("noise", "yes/no")] == 1.0


def test_aware_summary_and_abstain_table_on_a_constructed_table():
    rows = []
    for w in ("unclear", "dont_know"):
        # clean: K = 5 (4 answers + abstain at 4); one abstains, two of the three answered right
        for pred, obj in ((4, 0), (0, 0), (1, 1), (2, 3)):
            rows.append({"wording": w, "arm": "clean", "t": 1.0, "invisible": False, "K": 5, "pred_idx": pred,
                         "object_idx": obj, "abstained": pred == 4})
        # fog: K = 3 (yes, no + abstain at 2)
        for t, inv, pred in ((0.001, True, 2), (0.01, True, 2), (0.03, True, 0), (0.5, False, 1)):
            rows.append({"wording": w, "arm": "fog", "t": t, "invisible": inv, "K": 3, "pred_idx": pred,
                         "object_idx": 1, "abstained": pred == 2})
    pred = pd.DataFrame(rows)
    pred["object_correct"] = pred["pred_idx"] == pred["object_idx"]
    s = bh.aware_summary(pred)
    for w in ("unclear", "dont_know"):
        assert s[w]["clean_abstain_rate"] == 0.25
        assert s[w]["invisible_abstain_rate"] == pytest.approx(2 / 3)
        assert s[w]["clean_answered_accuracy"] == pytest.approx(2 / 3)
        assert s[w]["clean_answered_chance"] == pytest.approx(0.25)
        assert s[w]["visible_answered_accuracy"] == 1.0 and s[w]["visible_answered_chance"] == 0.5
    tab = bh.abstain_by_visibility(pred, edges=(0.0, 0.02, 0.1, 1.0))
    assert list(tab["n"]) == [2, 1, 1, 2, 1, 1]
    assert list(tab["abstain_rate"]) == [1.0, 0.0, 0.0] * 2
    assert list(tab["t"]) == ["0-0.02", "0.02-0.1", "0.1-1"] * 2


def test_markdown_table():
    md = bh.markdown_table(pd.DataFrame({"a": ["x"], "b": [0.12345]}))
    assert md.splitlines() == ["| a | b |", "|---|---|", "| x | 0.123 |"]
