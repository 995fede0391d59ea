"""Drift to prior (POPE margins and transitions), frequency read-outs, and seed 002's observation checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlmrobust.analysis.drift import frequency as spectral
from vlmrobust.analysis.drift import observations as obs
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


def _t1(text, geo, iv=0.4):
    rows = [{"model": "m", "perturbation": "text_overlay", "IFR": text, "IV": 0.3}]
    rows += [{"model": "m", "perturbation": p, "IFR": geo, "IV": 0.2} for p in ("translate", "rotate")]
    return pd.DataFrame(rows + [{"model": "m", "perturbation": "any", "IFR": 0.1, "IV": iv}])


def test_observation_checks_hold_and_fail():
    kept = pd.DataFrame({"model": ["m"] * 3, "d": [0.01, 0.02, 0.3]})
    assert obs.obs_i_disconnect(_t1(0.2, 0.1), kept, {"m": 0.25}).reproduced is True
    assert obs.obs_i_disconnect(_t1(0.2, 0.1), kept, {"m": 0.5}).reproduced is False
    assert obs.obs_i_disconnect(_t1(0.2, 0.1, iv=0.05), kept, {"m": 0.25}).reproduced is False
    assert obs.obs_ii_overlays_most_disruptive(_t1(0.2, 0.1)).reproduced is True
    assert obs.obs_ii_overlays_most_disruptive(_t1(0.05, 0.1)).reproduced is False
    t4 = pd.DataFrame({"model": "m", "perturbation": ["translate", "text_overlay", "any"], "d": [-3.0, -0.3, -2.0],
                       "pct_mean": [5.0, 70.0, 20.0]})
    assert obs.obs_iii_overlay_drift_near_control(t4).reproduced is True
    assert obs.obs_iii_overlay_drift_near_control(t4.assign(d=[-0.1, -0.3, -2.0])).reproduced is False
    t5 = pd.DataFrame({"model": ["s", "b"], "size": [1.0, 2.0], "base_acc": [50.0, 60.0],
                       "TextOverlay IFR": [0.2, 0.25], "union IV": [0.4, 0.45]})
    assert obs.obs_iv_scale(t5).reproduced is True
    assert obs.obs_iv_scale(t5.assign(**{"union IV": [0.4, 0.3]})).reproduced is False
    assert obs.obs_iv_scale(t5.assign(size=[1.0, 1.0])).reproduced is None
    t2 = pd.DataFrame({"model": ["m"], "perturbation": ["any"], "R→W": [5], "W→R": [3]})
    pope = pd.DataFrame({"FP→TN": [4], "n_FP": [10], "TN→FP": [1], "n_TN": [20]})
    shift = pd.DataFrame({"shift": [-0.5], "n_fp": [10]})
    assert obs.obs_v_errors_random_but_conservative(t2, pope, shift).reproduced is True
    assert obs.obs_v_errors_random_but_conservative(t2, pope.assign(**{"TN→FP": [15]}), shift).reproduced is False
    assert obs.obs_v_errors_random_but_conservative(t2, pope.iloc[0:0], shift).reproduced is None
    table = obs.same_answer_observations(_t1(0.2, 0.1), kept, {"m": 0.25}, t4, t5, t2, pope, shift)
    assert list(table.reproduced) == [True] * 5
