"""The notebooks' exercises: every check passes on a run that shows its point and fails on one that does not.

Each exercise check (the ``exercises`` module beside its analysis) is fed small synthetic tables in the shape
the notebook computes: one run that made the change and shows the point (``passed``), and runs that did not
make the change or made it without showing the point (not ``passed``). The last tests read the notebooks:
every notebook ends with an ``## Exercises`` section of three to five exercises, each a markdown cell followed
by a code cell calling its check through the notebook's face.
"""

from __future__ import annotations

import importlib
import re
from types import SimpleNamespace

import jupytext
import numpy as np
import pandas as pd
import pytest

from vlmrobust import corrupt, exercises, nbtools, params, score, synth
from vlmrobust.analysis import card, drift, escalation, ras, selection, visibility
from vlmrobust.analysis.escalation.indices import TRCI_TERMS

LEVELS_M = ["clean", "250", "125", "62.5", "31.25", "15.625", "7.8125", "3.90625", "1.95312"]


#: the package whose face each notebook's exercises are called through
FACES = {"00": synth, "01": selection, "02": corrupt, "03": score, "04": ras, "05": drift, "06": visibility,
         "07": escalation, "08": card}


def _check(result: exercises.Result, passed: bool) -> None:
    assert isinstance(result, exercises.Result)
    assert result.passed is passed, repr(result)
    text = repr(result)
    assert f"Exercise {result.exercise}" in text and "expected:" in text and "your run:" in text
    assert ("PASSED" in text) is passed


# ----------------------------------------------------------------------------- 00

def test_00_1_far_objects_keep_the_geometry_but_lose_their_pixels():
    far = pd.DataFrame({"kind": "shape", "distance_m": [60.0, 70, 80, 90, 100], "measured_px": [1, 1, 1, 2, 1],
                        "predicted_px": [1.3, 1.1, 1.0, 1.6, 0.8]})
    near = far.assign(distance_m=far.distance_m / 4, measured_px=8, predicted_px=8.2)
    _check(synth.exercise_00_1(pd.concat([near, far]), 120.0), True)
    _check(synth.exercise_00_1(near, 40.0), False)  # not tried: nothing beyond 40 m
    wrong = far.assign(measured_px=[6, 7, 6, 6, 7])  # a renderer off by 5 px fails the geometry half
    _check(synth.exercise_00_1(wrong, 120.0), False)


def _balance(counts, k=4):
    cols = ["A", "B", "C", "D"]
    return pd.DataFrame([dict(zip(cols, c, strict=True), K=k) for c in counts],
                        index=[f"f{i}" for i in range(len(counts))])


def test_00_2_a_tiny_table_lets_one_letter_score():
    _check(synth.exercise_00_2(_balance([[2, 1, 0, 0], [0, 3, 0, 0], [1, 1, 1, 0]])), True)
    _check(synth.exercise_00_2(_balance([[15, 15, 15, 15]] * 3)), False)  # not tried
    _check(synth.exercise_00_2(_balance([[1, 1, 1, 1]] * 3)), False)  # small but balanced: no gain


def _heldout(acc_by_model, n=40):
    rows = []
    for m, acc in acc_by_model.items():
        rows += [{"model": m, "item_id": f"q{i}", "correct": i < acc * n} for i in range(n)]
    return pd.DataFrame(rows)


def test_00_3_the_largest_rung_beats_the_smallest():
    _check(synth.exercise_00_3(_heldout({"ladder-48": 0.4, "ladder-64": 0.6, "ladder-96": 0.9})), True)
    _check(synth.exercise_00_3(_heldout({"ladder-48": 0.6, "ladder-96": 0.6})), False)
    _check(synth.exercise_00_3(_heldout({"ladder-48": 0.4, "ladder-96": 0.9, "tiny-letters": 0.7})), False)


# ----------------------------------------------------------------------------- 01

def test_01_1_without_the_silent_selector_every_family_is_eligible():
    cov = pd.DataFrame({"pool": [5, 5], "eligible": [4, 3], "split": [2, 1]}, index=["colour", "exist"])
    silent = pd.DataFrame(columns=["selector", "family", "items", "eligible", "eligible_without"])
    _check(selection.exercise_01_1(silent, cov, ["sel-dropout", "sel-see"]), True)
    silent1 = pd.DataFrame([{"selector": "sel-text", "family": "exist", "items": 5, "eligible": 0,
                             "eligible_without": 2}])
    _check(selection.exercise_01_1(silent1, cov.assign(eligible=[4, 0]), ["sel-dropout", "sel-see", "sel-text"]),
           False)
    _check(selection.exercise_01_1(silent1, cov.assign(eligible=[4, 0]), ["sel-dropout", "sel-text"]), False)
    blind = ["blind:sel-dropout", "blind:sel-see", "blind:sel-text"]  # the blind variant's own selectors
    r = selection.exercise_01_1(silent, cov, blind, {"selectors": blind})
    assert not r.done and r.message.startswith("NOT TRIED YET")


def test_01_2_a_mild_corruption_empties_a_plus():
    elig = np.zeros(45, bool)
    elig[0] = True
    _check(selection.exercise_01_2(elig, np.where(elig, 0.3, 0.0), ["brightness"]), True)
    many = np.arange(45) < 29
    _check(selection.exercise_01_2(many, np.full(45, 0.3), ["brightness"]), False)
    _check(selection.exercise_01_2(elig, np.zeros(45), ["fog", "snow", "frost"]), False)


def test_01_3_the_split_is_more_responsive_for_its_selectors():
    sel = np.arange(40) < 10
    sels = ["sel-dropout", "sel-see", "sel-text"]
    _check(selection.exercise_01_3(np.where(sel, 0.8, 0.1), sel, sels, sels), True)
    _check(selection.exercise_01_3(np.full(40, 0.3), sel, sels, sels), False)  # no difference
    _check(selection.exercise_01_3(np.where(sel, 0.8, 0.1), sel, ["tiny-letters"], sels), False)
    _check(selection.exercise_01_3(None, sel, sels, sels), False)


# ----------------------------------------------------------------------------- 02

def test_02_1_water_stays_harsher_under_the_5_percent_convention():
    wf = pd.DataFrame({"visibility_m": [250, 125], "water_over_fog": [0.6, 0.4]})
    _check(corrupt.exercise_02_1(wf, "5%"), True)
    _check(corrupt.exercise_02_1(wf, "2%"), False)
    _check(corrupt.exercise_02_1(wf.assign(water_over_fog=[1.2, 0.4]), "5%"), False)


def _table7(v1, spread=1.1, n=60):
    return pd.DataFrame({"severity": [1, 2], "median_v_m": [v1, 0.8 * v1], "p90_over_p10": [spread, spread],
                         "n_images": n})


def test_02_2_chart_scenes_put_a_severity_at_a_few_metres():
    charts = [SimpleNamespace(family="chart")] * 3
    _check(corrupt.exercise_02_2(_table7(8.3), charts), True)
    _check(corrupt.exercise_02_2(_table7(30.2), [SimpleNamespace(family="count")] * 3), False)
    _check(corrupt.exercise_02_2(_table7(30.2), charts), False)


def test_02_3_few_scenes_keep_the_spread_small():
    _check(corrupt.exercise_02_3(_table7(30, 1.1, n=10)), True)
    _check(corrupt.exercise_02_3(_table7(30, 1.1, n=60)), False)
    _check(corrupt.exercise_02_3(_table7(30, 3.0, n=10)), False)


# ----------------------------------------------------------------------------- 03

def _acc(letter_conf, sample_conf, model="tiny-letters"):
    return pd.DataFrame([{"model": model, "perturbation": p, "method": m, "accuracy": 0.7, "confidence": c}
                         for p in ("clean", "gaussian_noise")
                         for m, c in (("letter", letter_conf), ("loglik", 0.5), ("sample", sample_conf))])


def _agreement(same=0.9, tv=0.1, model="tiny-letters"):
    return pd.DataFrame([{"model": model, "perturbation": p, "pair": "letter vs sample", "n": 18,
                          "same_argmax": same, "tv": tv} for p in ("clean", "gaussian_noise")])


def test_03_1_low_temperature_sharpens_the_sampled_distribution():
    _check(score.exercise_03_1(_acc(0.62, 0.97), _agreement(0.9), 0.2), True)
    _check(score.exercise_03_1(_acc(0.62, 0.97), _agreement(0.9), 1.0), False)
    _check(score.exercise_03_1(_acc(0.62, 0.66), _agreement(0.9), 0.2), False)  # no sharpening
    _check(score.exercise_03_1(_acc(0.62, 0.97), _agreement(0.4), 0.2), False)  # argmax lost too


def test_03_2_the_sampling_floor_matches_an_independent_simulation():
    p = np.array([0.7, 0.1, 0.1, 0.1])
    agree_pred = pd.DataFrame([{"model": "tiny-letters", "method": "letter", "probs": p}] * 6)
    draws = np.random.default_rng(123).multinomial(40, p, size=20_000) / 40
    floor = float(np.mean(0.5 * np.abs(draws - p).sum(axis=1)))
    assert 0.05 < floor < 0.2
    _check(score.exercise_03_2(_agreement(tv=floor), agree_pred, 40), True)
    _check(score.exercise_03_2(_agreement(tv=floor), agree_pred, 10), False)
    _check(score.exercise_03_2(_agreement(tv=0.5), agree_pred, 40), False)


def _clean_pred(acc_by_model, n=40, k=4):
    return pd.DataFrame([{"model": m, "item_id": f"q{i}", "perturbation": "clean", "level": 0, "K": k,
                          "correct": i < a * n} for m, a in acc_by_model.items() for i in range(n)])


def test_03_3_letter_organisms_fall_to_chance_under_loglik():
    _check(score.exercise_03_3(_clean_pred({"tiny-letters": 0.25, "tiny-long": 0.7}), "loglik"), True)
    _check(score.exercise_03_3(_clean_pred({"tiny-letters": 0.25}), "default"), False)
    _check(score.exercise_03_3(_clean_pred({"tiny-letters": 0.7, "tiny-long": 0.7}), "loglik"), False)


def _colour(blur, contrast):
    rows = []
    for p, acc in (("defocus_blur", blur), ("contrast", contrast)):
        for lv in (1, 5):
            rows += [{"task": "colour", "perturbation": p, "level": lv, "correct": i < (acc if lv == 5 else 1) * 8}
                     for i in range(8)]
    return pd.DataFrame(rows)


def test_03_4_colour_survives_blur_not_contrast():
    _check(score.exercise_03_4(_colour(1.0, 0.25)), True)
    _check(score.exercise_03_4(_colour(0.5, 0.5)), False)
    no_contrast = _colour(1.0, 0.25).query("perturbation != 'contrast'")
    _check(score.exercise_03_4(no_contrast), False)
    default = params.unchanged_run("03_scoring")  # every corruption: blur and contrast already there
    _check(score.exercise_03_4(_colour(1.0, 0.25), default["perturbations"], default), False)
    lesson = params.unchanged_run("03_scoring", "lesson")
    _check(score.exercise_03_4(_colour(1.0, 0.25), [*lesson["perturbations"], "contrast"], lesson), True)


# ----------------------------------------------------------------------------- 04

def _obs(*held):
    claims = ["1. answer stability: support", "1. answer stability: rankings", "2. apparent gains",
              "3. same answer paths", "4. stronger corruption"]
    return pd.DataFrame({"claim": claims, "verdict": list(held)})


R, N, U, S = "reproduced", "not reproduced", "undecided", "no subject"


def test_04_1_the_simulated_story_reproduces_observations():
    _check(ras.exercise_04_1(_obs(R, U, R, N, N), ["sim-a", "sim-b"]), True)
    _check(ras.exercise_04_1(_obs(R, U, R, N, N), ["tiny-letters"]), False)
    _check(ras.exercise_04_1(_obs(U, U, N, S, N), ["sim-a", "sim-b"]), False)
    # with no corruption effect (no vision) the point is the opposite: nothing reproduced
    _check(ras.exercise_04_1(_obs(N, N, N, S, N), ["sim-a"], 0.0), True)
    _check(ras.exercise_04_1(_obs(R, R, N, S, N), ["sim-a"], 0.0), False)


def _t6(shifts):
    return pd.DataFrame([{"model": f"m{i}", "abs_dr": s, "delta_acc_dr": -s, "rel_rob_dr": 0}
                         for i, s in enumerate(shifts)])


def test_04_2_one_model_cannot_show_a_rank_mismatch():
    _check(ras.exercise_04_2(_obs(R, S, R, U, N), _t6([0])), True)
    _check(ras.exercise_04_2(_obs(R, R, R, U, N), _t6([2, 0, -2])), False)
    _check(ras.exercise_04_2(_obs(R, R, R, U, N), _t6([0])), False)  # a check that lets it hold


def _tsum(transient):
    classes = {"always correct": 0.4, "always wrong": 0.2, "persistent loss": 0.3 - transient,
               "persistent correction": 0.1, "transient loss": transient, "transient correction": 0.0}
    return pd.DataFrame([{"model": "m", "klass": k, "share": v} for k, v in classes.items()])


def test_04_3_one_severity_leaves_no_transient_class():
    _check(ras.exercise_04_3(_tsum(0.0), [5]), True)
    _check(ras.exercise_04_3(_tsum(0.1), [1, 2, 3, 4, 5]), False)
    _check(ras.exercise_04_3(_tsum(0.1), [5]), False)


# ----------------------------------------------------------------------------- 05

def _shift_pairs(on_grid, off_grid, n=20):
    rows = []
    for param in (-16, -12, -8, -4, 4, 8, 12, 16):
        rate = on_grid if param % 8 == 0 else off_grid
        rows += [{"perturbation": "translate", "param": float(param), "flip": i < rate * n} for i in range(n)]
    return pd.DataFrame(rows + [{"perturbation": "scale", "param": 0.9, "flip": True}])


def test_05_1_whole_patch_shifts_flip_fewer_answers():
    _check(drift.exercise_05_1(_shift_pairs(0.05, 0.15), "fixed"), True)
    _check(drift.exercise_05_1(_shift_pairs(0.05, 0.15), "scaled"), False)
    _check(drift.exercise_05_1(_shift_pairs(0.15, 0.15), "fixed"), False)
    _check(drift.exercise_05_1(_shift_pairs(0.3, 0.1), "fixed"), False)  # larger shifts flipping more


def test_05_2_half_precision_raises_the_noise_floor():
    floor = pd.DataFrame({"metric": ["cos", "cos", "l2"], "ratio": [40.0, 900.0, 3.0]})
    _check(drift.exercise_05_2(floor, "bfloat16"), True)
    _check(drift.exercise_05_2(floor, ""), False)
    _check(drift.exercise_05_2(floor.assign(ratio=[2e4, 5e5, 3.0]), "bfloat16"), False)


def _t5(ifr_top, sizes=(117600.0, 271616.0, 604032.0)):
    return pd.DataFrame({"model": ["ladder-48", "ladder-64", "ladder-96"][: len(sizes)], "size": list(sizes),
                         "base_acc": [59.3, 66.7, 63.0][: len(sizes)],
                         "TextOverlay IFR": [0.594, 0.49, ifr_top][: len(sizes)]})


def test_05_3_scale_raises_accuracy_not_robustness():
    _check(drift.exercise_05_3(_t5(0.58)), True)
    _check(drift.exercise_05_3(_t5(0.58, sizes=(117600.0, 604032.0))), False)  # two rungs: not tried
    _check(drift.exercise_05_3(_t5(0.30)), False)  # the top rung flips far less: the finding fails
    default = drift.Params.resolve(params.unchanged_run("05_representation_drift")).as_dict()
    _check(drift.exercise_05_3(_t5(0.58), default["size_ladder"], default), False)  # the default: 3 rungs already
    lesson = drift.Params.resolve(params.unchanged_run("05_representation_drift", "lesson")).as_dict()
    _check(drift.exercise_05_3(_t5(0.58), ["ladder-48", "ladder-64", "ladder-96"], lesson), True)


# ----------------------------------------------------------------------------- 06

def _signal_rows(model, signal, values, task="t2"):
    return [{"model": model, "task": task, "arm": arm, "signal": signal, **dict(zip(LEVELS_M, values, strict=True))}
            for arm in ("fog", "water")]


def test_06_1_the_aware_organism_abstains_in_murky_air():
    rows = _signal_rows("aware", "abstain", [0, 0, 0, 0, 0, 0.2, 0.6, 0.9, 1.0])
    rows += _signal_rows("tiny-letters-long", "abstain", [0] * 9)
    _check(visibility.exercise_06_1(pd.DataFrame(rows)), True)
    _check(visibility.exercise_06_1(pd.DataFrame(_signal_rows("tiny-letters-long", "abstain", [0] * 9))), False)
    rows = _signal_rows("aware", "abstain", [0, 0, 0, 0, 0, 0, 0, 0.1, 0.2])
    rows += _signal_rows("tiny-letters-long", "abstain", [0] * 9)
    _check(visibility.exercise_06_1(pd.DataFrame(rows)), False)


def _unchanged06(variant=""):
    return visibility.Params.resolve(params.unchanged_run("06_visibility_blind_spots", variant)).as_dict()


def test_06_1_and_06_2_say_not_tried_on_the_unchanged_runs():
    """The default run holds every control: without a change the checks say "not tried yet", never PASSED."""
    aware = _signal_rows("aware", "abstain", [0, 0, 0, 0, 0, 0.2, 0.6, 0.9, 1.0])
    aware += _signal_rows("tiny-letters-long", "abstain", [0] * 9)
    talker = _signal_rows("talker", "verbal", [0.89, 0.84, 0.84, 0.97, 0.69, 0.58, 0.58, 0.58, 0.58])
    talker += _signal_rows("talker-90", "verbal", [0.9] * 9)
    default, lesson = _unchanged06(), _unchanged06("lesson")
    for check, rows, control in ((visibility.exercise_06_1, aware, "aware"),
                                 (visibility.exercise_06_2, talker, "talker-90")):
        r = check(pd.DataFrame(rows), default["models"], default)
        _check(r, False)
        assert r.message.startswith("NOT TRIED YET") and r.shown
        _check(check(pd.DataFrame(rows), [*lesson["models"], control], lesson), True)


def test_06_2_the_constant_talker_cannot_follow_visibility():
    talker = _signal_rows("talker", "verbal", [0.89, 0.84, 0.84, 0.97, 0.69, 0.58, 0.58, 0.58, 0.58])
    flat = _signal_rows("talker-90", "verbal", [0.9] * 9)
    _check(visibility.exercise_06_2(pd.DataFrame(talker + flat)), True)
    _check(visibility.exercise_06_2(pd.DataFrame(talker)), False)
    moving = _signal_rows("talker-90", "verbal", [0.9, 0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.5, 0.5])
    _check(visibility.exercise_06_2(pd.DataFrame(talker + moving)), False)


def _spots(kinds, v_acc):
    return pd.DataFrame([{"model": "m", "task": "t2", "arm": arm, "signal": s, "v_acc": v, "v_acc_kind": k}
                         for arm, k, v in zip(("fog", "water"), kinds, v_acc, strict=True)
                         for s in ("internal", "abstain")])


def test_06_3_the_extended_range_locates_the_fall():
    _check(visibility.exercise_06_3(_spots(["=", "≥"], [1800.0, 16000.0]), "extended"), True)
    _check(visibility.exercise_06_3(_spots(["≥", "≥"], [250.0, 250.0]), "paper"), False)
    _check(visibility.exercise_06_3(_spots(["=", "≥"], [40.0, 16000.0]), "extended"), False)
    located = _spots(["=", "≥"], [1800.0, 16000.0])
    r = visibility.exercise_06_3(located, "extended", params.unchanged_run("06_visibility_blind_spots"))
    _check(r, False)  # the default range is the extended one: nothing was changed
    assert r.message.startswith("NOT TRIED YET")
    _check(visibility.exercise_06_3(located, "extended", params.unchanged_run("06_visibility_blind_spots", "lesson")),
           True)


def test_changed_compares_with_the_unchanged_run():
    unchanged = {"models": ["a", "b"], "level": 3}
    assert not exercises.changed(unchanged, "models", ["b", "a"])  # the order of a list changes nothing
    assert exercises.changed(unchanged, "models", ["a", "b", "c"]) and exercises.changed(unchanged, "level", 4)
    assert exercises.changed(None, "level", 3)  # no unchanged run known: every value counts as a change
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        exercises.changed(unchanged, "nope", 1)


# ----------------------------------------------------------------------------- 07

def test_07_1_the_conditional_reading_is_one_wherever_a_flip_occurs():
    rci = pd.DataFrame({"n_flip": [0, 1, 3, 5], "D_fail": [0.0, 1.0, 1.0, 1.0]})
    _check(escalation.exercise_07_1(rci, "conditional"), True)
    _check(escalation.exercise_07_1(rci.assign(D_fail=[0.0, 0.1, 0.3, 0.5]), "joint"), False)
    _check(escalation.exercise_07_1(rci.assign(D_fail=[0.0, 0.5, 1.0, 1.0]), "conditional"), False)


def _states():
    """Two models, one group, two directions, two states; m1 loses more accuracy, m2 progresses more."""
    rows = []
    for m, d_acc, d_prog in (("m1", 0.6, 0.0), ("m2", 0.1, 0.4)):
        for direction in ("TD", "BU"):
            for level, s in ((1, 0.2), (2, 0.4)):
                rows.append({"model": m, "group": "g", "direction": direction, "level": level, "s": s, "A": 0.5,
                             "D_acc": d_acc, "D_ent": 0.1, "D_fail": 0.2, "D_spatial": s, "D_prog": d_prog})
    st = pd.DataFrame(rows)
    st["direction"] = pd.Categorical(st["direction"], categories=["TD", "BU"])
    st.attrs.update(unit=("model", "group"))
    assert list(st.columns[-5:]) == list(TRCI_TERMS)
    return st


def test_07_2_dropping_d_spatial_keeps_the_ranking():
    _check(escalation.exercise_07_2(_states(), [0.25, 0.25, 0.25, 0.0, 0.25]), True)
    _check(escalation.exercise_07_2(_states(), [0.2] * 5), False)  # not tried
    _check(escalation.exercise_07_2(_states(), [0.0, 0.0, 0.0, 0.0, 1.0]), False)  # other weights reorder them


def _fills(sky_black, sky_mean):
    return pd.DataFrame([{"fill": "—", "condition": "clean", "mean": 0.7},
                         {"fill": "black", "condition": "sky band 1", "mean": sky_black},
                         {"fill": "black", "condition": "TD 0.2", "mean": 0.3},
                         {"fill": "mean", "condition": "sky band 1", "mean": sky_mean}])


def test_07_3_a_black_band_costs_accuracy_where_it_removes_no_evidence():
    _check(escalation.exercise_07_3(_fills(0.19, 0.52), "black"), True)
    _check(escalation.exercise_07_3(_fills(0.19, 0.52), "mean"), False)
    _check(escalation.exercise_07_3(_fills(0.6, 0.52), "black"), False)


def _card(ref_mce=1.0, ref_lo=1.0):
    return pd.DataFrame({"model": ["tiny-long", "tiny-base"], "mCE": [ref_mce, 1.1], "mCE_lo": [ref_lo, 0.9],
                         "mCE_hi": [1.0, 1.3], "rel_mCE": [1.0, 1.2]})


def test_08_1_the_reference_has_mce_one():
    _check(card.exercise_08_1(_card(), "tiny-long"), True)
    _check(card.exercise_08_1(_card(), "tiny-base"), False)  # the default reference: not tried
    _check(card.exercise_08_1(_card(ref_mce=0.9, ref_lo=0.8), "tiny-long"), False)  # not a ratio to itself
    refused = _card().assign(rel_mCE=[np.nan, np.nan])  # too few corruptions degrade the reference: refused
    _check(card.exercise_08_1(refused, "tiny-long"), True)
    _check(card.exercise_08_1(_card().assign(rel_mCE=[0.7, 1.2]), "tiny-long"), False)


def _lens_agreement(verdicts):
    return pd.DataFrame({"across": ["models"] * len(verdicts) + ["corruptions"], "rho": [0.5] * (len(verdicts) + 1),
                         "verdict": [*verdicts, "reproduced"]})


def test_08_2_three_models_decide_no_agreement():
    _check(card.exercise_08_2(_lens_agreement(["undecided", "undecided"]), ["a", "b", "c"]), True)
    _check(card.exercise_08_2(_lens_agreement(["undecided", "undecided"]), list("abcdefgh")), False)  # not tried
    _check(card.exercise_08_2(_lens_agreement(["undecided", "reproduced"]), ["a", "b", "c"]), False)  # decided


def test_08_3_letter_scoring_makes_word_answerers_follow_the_position():
    order = pd.DataFrame({"model": ["tiny-long", "tiny-base", "tiny-letters"], "position_rate": [0.8, 0.7, 0.2]})
    formats = {"tiny-long": "text", "tiny-base": "text", "tiny-letters": "letters"}
    _check(card.exercise_08_3(order, "letter", formats), True)
    _check(card.exercise_08_3(order, "default", formats), False)  # not tried
    _check(card.exercise_08_3(order.assign(position_rate=[0.0, 0.0, 0.2]), "letter", formats), False)


# ----------------------------------------------------------------------------- the notebooks' sections

def _exercises(nb_id: str):
    nb = jupytext.read(nbtools.notebook_path(nb_id))
    heads = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Exercises")]
    assert len(heads) == 1, f"{nb_id}: one '## Exercises' section"
    return nb.cells, heads[0]


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_every_notebook_ends_with_three_to_five_checked_exercises(nb_id):
    cells, head = _exercises(nb_id)
    closing = cells[head - 1]
    assert closing.cell_type == "code" and "OUT" in closing.source, "the exercises follow the closing cell"
    rest = cells[head + 1:]
    assert len(rest) % 2 == 0 and 3 <= len(rest) // 2 <= 5, f"{nb_id}: 3 to 5 exercises, each text then check"
    nn = nb_id[:2]
    for k, (text, check) in enumerate(zip(rest[::2], rest[1::2], strict=True), start=1):
        assert text.cell_type == "markdown" and text.source.startswith(f"### Exercise {k}: "), text.source[:60]
        assert "**Change:**" in text.source and "**Predict first:**" in text.source and "**Look at:**" in text.source
        assert check.cell_type == "code", f"{nb_id} exercise {k}: a check cell follows its text"
        lines = [ln for ln in check.source.splitlines() if ln.strip()]
        face = FACES[nn]
        short = face.__name__.rsplit(".", 1)[1]
        assert 1 <= len(lines) <= 2 and re.match(rf"{short}\.exercise_{nn}_{k}\(", lines[0]), check.source
        assert callable(getattr(face, f"exercise_{nn}_{k}"))


def test_every_check_of_the_module_is_used_by_its_notebook():
    used = set()
    for nb_id in nbtools.notebook_ids():
        cells, head = _exercises(nb_id)
        face = FACES[nb_id[:2]].__name__.rsplit(".", 1)[1]
        used |= set(re.findall(rf"{face}\.(exercise_\d\d_\d)\(", "\n".join(c.source for c in cells[head:])))
    defined = {n for f in FACES.values() for n in f.__all__ if n.startswith("exercise_")}
    assert used == defined
    for f in FACES.values():  # each face exports its own notebook's checks, from the exercises module beside it
        mod = importlib.import_module(f"{f.__name__}.exercises")
        assert {n for n in f.__all__ if n.startswith("exercise_")} == set(mod.__all__)


def test_every_notebook_has_a_lesson_variant():
    for nb_id in nbtools.notebook_ids():
        assert (nbtools.paths.params_dir() / nb_id / "lesson.yaml").is_file(), nb_id
