"""The failure taxonomy: a fixed, total mapping from family and evidence to one class and one subtype."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vlmrobust import synth
from vlmrobust.analysis.escalation import taxonomy as T
from vlmrobust.corrupt import evidence as EV


def test_the_table_is_fixed_and_covers_every_family():
    assert set(T.FAMILY_TAXONOMY) == set(synth.FAMILIES)
    assert T.CLASSES == ("OCR", "spatial", "symbolic", "semantic", "other")
    assert len(set(T.SUBTYPES)) == len(T.SUBTYPES)
    assert {c for c, _ in T.SUBTYPES} == set(T.CLASSES)
    classes = [c for c, _ in T.SUBTYPES]
    assert classes == sorted(classes, key=T.CLASSES.index)  # grouped by class, in class order
    assert not any("option label" in s for _, s in T.SUBTYPES)  # options are in the prompt, not the image


@pytest.mark.parametrize("family, evidence, expected", [
    ("text", "removed", ("OCR", "glyph removed")),
    ("text", "partial", ("OCR", "glyph cut")),
    ("text", "intact", ("OCR", "glyph misread")),
    ("text", "n/a", ("OCR", "glyph misread")),  # blur: the glyph is still in the image
    ("count", "intact", ("symbolic", "miscount")),
    ("count", "partial", ("symbolic", "counted object cut")),
    ("chart", "partial", ("spatial", "bar cut")),
    ("spatial", "removed", ("spatial", "relation object removed")),
    ("size", "intact", ("spatial", "size comparison misread")),
    ("verify", "removed", ("symbolic", "verified object removed")),
    ("colour", "removed", ("semantic", "target object removed")),
    ("shape", "intact", ("semantic", "shape misread")),
    ("exist", "none", ("semantic", "object hallucinated")),
    ("exist", "intact", ("semantic", "object missed")),
    ("exist", "removed", ("semantic", "queried object removed")),
    ("chemistry", "n/a", ("other", "unattributed")),
])
def test_subtype_of(family, evidence, expected):
    assert T.subtype_of(family, evidence) == expected
    assert expected in T.SUBTYPES


def test_special_cases():
    assert T.subtype_of("count", "removed", counted_remainder=True) == ("symbolic", "count changed, remainder counted")
    assert T.subtype_of("count", "removed") == ("symbolic", "count changed, miscounted")
    assert T.subtype_of("text", "removed", abstained=True) == ("other", "abstained")


@pytest.fixture(scope="module")
def items():
    return synth.generate(6, 3, size=64)


def predictions(items, names, rng):
    """Clean predictions right on 80 % of the items; random predictions under each condition."""
    K = items["options"].map(len).to_numpy()
    ans = items["answer_idx"].to_numpy()
    recs = []
    clean = np.where(rng.random(len(items)) < 0.8, ans, (ans + 1) % K)
    recs.append(pd.DataFrame({"model": "m", "method": "letter", "item_id": items.item_id, "task": items.task,
                              "perturbation": "clean", "level": 0, "K": K, "answer_idx": ans, "pred_idx": clean}))
    for name in names:
        for lv in (1, 2, 3, 4):
            p = rng.integers(0, 2**31, len(items)) % K
            recs.append(pd.DataFrame({"model": "m", "method": "letter", "item_id": items.item_id, "task": items.task,
                                      "perturbation": name, "level": lv, "K": K, "answer_idx": ans, "pred_idx": p}))
    return pd.concat(recs, ignore_index=True)


def test_every_clean_correct_to_wrong_item_gets_exactly_one_class(items):
    names = ["traverse_topdown_mean", "traverse_bottomup_crop", "bruce_center_crop", "bruce_blur"]
    pred = predictions(items, names, np.random.default_rng(0))
    fails = T.failures(pred)
    clean = pred[pred.perturbation == "clean"].set_index("item_id")
    ok0 = clean.pred_idx == clean.answer_idx
    expected = pred[(pred.perturbation != "clean") & (pred.pred_idx != pred.answer_idx)
                    & pred.item_id.map(ok0).to_numpy()]
    assert len(fails) == len(expected) > 50
    ev = EV.evidence_table(items, {n: [1, 2, 3, 4] for n in names})
    cl = T.classify(fails, items, ev)
    assert len(cl) == len(fails)  # one row per failure, none lost or duplicated
    assert cl["class"].notna().all() and cl["subtype"].notna().all()
    assert set(zip(cl["class"], cl["subtype"], strict=True)) <= set(T.SUBTYPES)
    # a failure under blur is a misreading; under the traversals the evidence decides
    blur = cl[cl.perturbation == "bruce_blur"]
    assert set(blur.evidence) == {"n/a"}
    assert not blur.subtype.astype(str).str.contains("removed|cut").any()
    trav = cl[cl.perturbation == "traverse_topdown_mean"]
    assert set(trav.evidence) <= {"removed", "partial", "intact", "none"}
    counts = T.taxonomy_counts(cl)
    assert counts.n.sum() == len(cl) and counts.share.sum() == pytest.approx(1.0)
    sub = T.taxonomy_counts(cl, (), level="subtype")
    assert sub.n.sum() == len(cl)


def test_a_count_that_changed_is_split_by_the_remaining_count(items):
    count = items[items.task == "count"].reset_index(drop=True)
    it = count.iloc[0]
    meta = json.loads(it.meta)
    fails = pd.DataFrame({"model": "m", "item_id": [it.item_id] * 2, "task": "count", "perturbation": "x",
                          "level": 1, "pred_idx": [0, 1]})
    ev = pd.DataFrame({"item_id": [it.item_id], "perturbation": ["x"], "level": [1], "evidence": ["removed"],
                       "visible_count": [float(meta["count"] - 1)]})
    texts = list(it.options)
    cl = T.classify(fails, count, ev)
    for k, sub in zip(fails.pred_idx, cl.subtype.astype(str), strict=True):
        remainder = texts[k] == str(meta["count"] - 1)
        assert sub == ("count changed, remainder counted" if remainder else "count changed, miscounted")


def test_unknown_families_and_abstentions_are_other():
    items = pd.DataFrame({"item_id": ["a", "b"], "task": ["chemistry", "text"], "options": [["x", "y"], ["p", "q"]]})
    fails = pd.DataFrame({"model": "m", "item_id": ["a", "b"], "perturbation": "bruce_blur", "level": 1,
                          "pred_idx": [1, 0], "abstained": [False, True]})
    cl = T.classify(fails, items)
    assert cl.subtype.astype(str).tolist() == ["unattributed", "abstained"]
    assert cl["class"].astype(str).tolist() == ["other", "other"]
    with pytest.raises(ValueError, match="level must be"):
        T.taxonomy_counts(cl, level="family")
