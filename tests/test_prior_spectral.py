"""Drift to prior (POPE margins and transitions) and frequency read-outs (seed 002's observation rows:
test_drift_findings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis.drift import frequency as spectral
from vlmrobust.analysis.drift import prior


def _items():
    return pd.DataFrame({"item_id": ["a", "b", "c", "q"], "options": [["yes", "no"], ["No", "Yes"], ["yes", "no"],
                                                                      ["red", "blue"]]})


def _row(item, pert, pred, ans, logits, level=0):
    p = np.exp(logits) / np.exp(logits).sum()
    return {"model": "m", "item_id": item, "method": "letter", "perturbation": pert, "level": level,
            "pred_idx": pred, "answer_idx": ans, "correct": pred == ans, "logits": list(logits), "probs": list(p)}


def test_pope_margin_prior_and_transitions():
    assert prior.yes_no_index(["No", "Yes."]) == (1, 0) and prior.yes_no_index(["red", "blue"]) is None
    rows = [
        _row("a", "clean", 0, 1, [2.0, 0.0]),  # gt no, says yes: false positive (margin +2)
        _row("b", "clean", 1, 1, [0.0, 3.0]),  # options No/Yes, gt yes, says yes: true positive
        _row("c", "clean", 1, 1, [0.0, 1.0]),  # gt no, says no: true negative
        _row("q", "clean", 0, 0, [1.0, 0.0]),  # not a yes/no item
        _row("a", "rotate", 1, 1, [0.0, 1.0], 1),  # FP -> TN, margin -1
        _row("b", "rotate", 0, 1, [1.0, 0.0], 1),  # TP -> FN
        _row("c", "rotate", 1, 1, [0.0, 2.0], 1),  # TN stays
    ]
    pr = prior.pope_rows(pd.DataFrame(rows), _items())
    assert set(pr.item_id) == {"a", "b", "c"}
    m = pr.set_index(["item_id", "perturbation"]).margin_yes
    assert m[("a", "clean")] == 2.0 and m[("b", "clean")] == 3.0 and m[("a", "rotate")] == -1.0
    t = prior.pope_transitions(pr).iloc[0]
    assert (t["TP→FN"], t["FP→TN"], t["TN→FP"], t["FN→TP"]) == (1, 1, 0, 0)
    assert t["TP→FN rate"] == 1.0 and t["FP→TN rate"] == 1.0 and t["TN→FP rate"] == 0.0 and np.isnan(t["FN→TP rate"])
    assert t.base_acc == pytest.approx(2 / 3) and t.flip_rate == pytest.approx(2 / 3)
    s = prior.margin_shift(pr).iloc[0]
    assert s.n_fp == 1 and s["shift"] == -3.0 and s.flip_margin == -1.0 and s.share_to_no == 1.0
    blank = prior.prior_summary(pr[pr.perturbation == "clean"]).iloc[0]
    assert blank.S_prior == pytest.approx(np.mean([1 / (1 + np.exp(-2)), 1 / (1 + np.exp(-3)), 1 / (1 + np.e)]))


def test_signed_margin_flip_curve_and_thresholds():
    assert list(spectral.signed_margin([[1.0, 3.0, 2.0], [0.5, 0.1]], [1, 1])) == [1.0, -0.4]
    rows = []
    # item x flips at cutoffs 0.1 and 0.4 (levels 3 and 1 of a low-pass path 0.4, 0.2, 0.1); y never flips
    for lv, c, fx in ((1, 0.4, True), (2, 0.2, False), (3, 0.1, True)):
        rows.append({"model": "m", "perturbation": "lowpass_fine", "item_id": "x", "level": lv, "param": c,
                     "flip": fx, "logits": [0.0, 1.0] if fx else [1.0, 0.0], "base_pred": 0})
        rows.append({"model": "m", "perturbation": "lowpass_fine", "item_id": "y", "level": lv, "param": c,
                     "flip": False, "logits": [1.0, 0.0], "base_pred": 0})
    p = pd.DataFrame(rows)
    t = spectral.flip_thresholds(p, "smallest").set_index("item_id").threshold
    assert t["x"] == 0.1 and np.isnan(t["y"])
    assert spectral.flip_thresholds(p, "first").set_index("item_id").threshold["x"] == 0.4
    curve = spectral.flip_curve(p)
    assert list(curve.flip_rate) == [0.5, 0.0, 0.5] and list(curve.signed_margin) == [0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="rule"):
        spectral.flip_thresholds(p, "last")
