"""Notebook 06's observation rows: each check holds on a small hand-made table and fails on another; the
abstain mid-level comparison on the paper's own rows; the name question of t2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vlmrobust import repro
from vlmrobust.analysis.visibility import blind_spot as vis
from vlmrobust.analysis.visibility import claims as vobs
from vlmrobust.analysis.visibility import claims_controls, claims_signals
from vlmrobust.analysis.visibility import means as vv
from vlmrobust.analysis.visibility import paper as vpaper
from vlmrobust.stats.bootstrap import resample_counts
from vlmrobust.stats.claims import combine, verdict
from vlmrobust.synth import visibility as sv

L8 = [250.0 / 2**k for k in range(8)]
N_SCENES = 40


def _long(curves: dict, *, model="m", task="t2", arm="fog", chance=0.25, n=N_SCENES):
    """A long table whose per-level means are exactly ``curves[signal]`` ([clean, 250 m ... 1.95 m]).

    Binary signals (accuracy, abstain) put the first round(p n) scenes at 1; confidences are constant.
    """
    rows = []
    for sig, vals in curves.items():
        for v, p in zip([np.inf, *L8], vals, strict=True):
            for s in range(n):
                val = float(s < round(p * n)) if sig in ("accuracy", "abstain", "abstain2") else float(p)
                rows.append(dict(model=model, task=task, arm=arm, V=v, scene=f"s{s:02d}", signal=sig, value=val,
                                 chance=chance, correct=bool(s < round(curves["accuracy"][0 if np.isinf(v) else
                                                                                          1 + L8.index(v)] * n))))
    return pd.DataFrame(rows)


SHARP = [1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 0.25, 0.25, 0.25]  # falls within one ladder step
SLOW = [1.0, 0.95, 0.85, 0.75, 0.65, 0.55, 0.45, 0.35, 0.3]  # falls over the whole ladder


def _cube_and_reps(long, n_boot=200, seed=0):
    cube = vis.signal_cube(long)
    counts = resample_counts(len(cube.scenes), n_boot, repro.rng("t-obs", seed))
    means_reps = vis.bootstrap_means(cube, counts)
    reps = vis.blind_spots(means_reps[..., 1:], means_reps[..., 0], cube.chance, cube.levels_m)
    return cube, means_reps, reps, counts


def test_verdict_rule():
    assert verdict(0.2, 0.4, 0.0, 0.5) is True
    assert verdict(0.6, 0.9, 0.0, 0.5) is False
    assert verdict(0.4, 0.6, 0.0, 0.5) is None
    assert verdict(np.nan, 0.6) is None
    assert combine([True, None]) is None and combine([True, False]) is False and combine([]) is None
    # a lower bound holds a one-sided region, never fails it from below, fails a two-sided one from above
    assert claims_signals.w_verdict("≥", 0.9, 1.0, 0.79) is True
    assert claims_signals.w_verdict("≥", 0.2, 0.3, 0.79) is None
    assert claims_signals.w_verdict("≥", 0.5, 0.6, -0.1, 0.1) is False


def test_bootstrap_means_are_the_bootstrap_of_blind_spots():
    cube = vis.signal_cube(_long({"accuracy": SHARP, "abstain": [0.0, 0.0, 0.0, 0.0, 0.1, 0.5, 0.9, 1.0, 1.0]}))
    a = vis.bootstrap(cube, 50, repro.rng("t", 9))
    m = vis.bootstrap_means(cube, resample_counts(len(cube.scenes), 50, repro.rng("t", 9)))
    b = vis.blind_spots(m[..., 1:], m[..., 0], cube.chance, cube.levels_m)
    np.testing.assert_array_equal(a["w"], b["w"])
    with pytest.raises(ValueError, match="scenes"):
        vis.bootstrap_means(cube, np.ones((3, 5)))


def test_fall_within_decade_holds_and_fails():
    cube, mr, _, _ = _cube_and_reps(_long({"accuracy": SHARP}))
    assert claims_signals.obs_fall_within_decade(cube, mr).reproduced is True
    cube, mr, _, _ = _cube_and_reps(_long({"accuracy": SLOW}))
    assert claims_signals.obs_fall_within_decade(cube, mr).reproduced is False
    # the fall on t3 is not the paper's claim: a t3-only run has nothing to decide
    cube, mr, _, _ = _cube_and_reps(_long({"accuracy": SLOW}, task="t3", chance=0.5))
    assert claims_signals.obs_fall_within_decade(cube, mr).reproduced is None


def test_water_harsher_holds_and_fails():
    water = [1.0, 1.0, 1.0, 1.0, 0.6, 0.25, 0.25, 0.25, 0.25]  # one level clearer than SHARP
    long = pd.concat([_long({"accuracy": SHARP}), _long({"accuracy": water}, arm="water")])
    cube, mr, _, _ = _cube_and_reps(long)
    check = claims_signals.obs_water_harsher(cube, mr)
    assert check.reproduced is True and "2.00" in check.measured  # one ladder step: a factor of 2
    long = pd.concat([_long({"accuracy": water}), _long({"accuracy": SHARP}, arm="water")])
    cube, mr, _, _ = _cube_and_reps(long)
    assert claims_signals.obs_water_harsher(cube, mr).reproduced is False


def test_equal_transmittance_ratio_is_above_the_papers_ratio():
    from vlmrobust.corrupt.physical import luminance_transmittance

    r = claims_signals.equal_transmittance_ratio([0.05, 0.5])
    # the water V at ratio r times the fog V gives the object (1 m away) the same luminance transmittance
    for t, k in zip([0.05, 0.5], r, strict=True):
        v_fog = 3.912 / -np.log(t)
        assert luminance_transmittance(np.array([1.0]), v_fog * k, "water")[0] == pytest.approx(t, rel=1e-6)
    assert r.min() > max(claims_signals.PAPER_WATER_FOG)


def _spots(rows):
    base = dict(task="t2", arm="fog", v_acc=12.0, v_acc_kind="=", w=0.8, w_kind="≥", w_lo=0.8, w_hi=0.8, flag="",
                clean=0.9, chance=0.25)
    return pd.DataFrame([{**base, **r} for r in rows])


def test_confident_stay_confident_holds_and_fails():
    cube = vis.signal_cube(_long({"accuracy": SHARP, "internal": [0.95] * 9}))
    ok = _spots([dict(model="m", signal="internal", w=0.9, w_lo=0.85, w_hi=0.95, w_kind="≥")])
    assert claims_signals.obs_confident_stay_confident(cube, ok).reproduced is True
    follows = _spots([dict(model="m", signal="internal", w=0.05, w_lo=-0.1, w_hi=0.2, w_kind="=")])
    assert claims_signals.obs_confident_stay_confident(cube, follows).reproduced is False
    under = vis.signal_cube(_long({"accuracy": SHARP, "internal": [0.5] * 9}))
    assert claims_signals.obs_confident_stay_confident(under, ok).reproduced is None  # no confident model
    verbal = claims_signals.obs_confident_stay_confident(cube, ok, signal="verbal")
    assert verbal.reproduced is None and "n/a" in verbal.measured  # no verbal row: not available


def test_underconfident_follows_holds_and_fails():
    cube = vis.signal_cube(_long({"accuracy": SHARP, "internal": [0.5] * 9}))
    ok = _spots([dict(model="m", signal="internal", w=0.0, w_lo=-0.1, w_hi=0.1, w_kind="=")])
    assert claims_signals.obs_underconfident_follows(cube, ok).reproduced is True
    lags = _spots([dict(model="m", signal="internal", w=0.6, w_lo=0.5, w_hi=0.7, w_kind="=")])
    assert claims_signals.obs_underconfident_follows(cube, lags).reproduced is False
    confident = vis.signal_cube(_long({"accuracy": SHARP, "internal": [0.95] * 9}))
    check = claims_signals.obs_underconfident_follows(confident, ok)
    assert check.reproduced is None and "no under-confident organism" in check.measured


def test_abstain_signed_holds_and_fails():
    leads = _spots([dict(model="a", signal="abstain", w=-0.06, w_lo=-0.08, w_hi=-0.04, w_kind="=")])
    assert claims_signals.obs_abstain_signed(leads).reproduced is True
    lags = _spots([dict(model="a", signal="abstain", w=0.1, w_lo=0.05, w_hi=0.15, w_kind="=")])
    assert claims_signals.obs_abstain_signed(lags).reproduced is False  # |W| small, wrong sign
    never = _spots([dict(model="a", signal="abstain", w=0.8, w_kind="≥")])
    assert claims_signals.obs_abstain_signed(never).reproduced is None


def test_idk_lags_is_a_share_with_an_interval():
    abst = [0.0, 0.0, 0.0, 0.0, 0.2, 0.8, 1.0, 1.0, 1.0]
    late = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.8, 1.0]
    cube, _, reps, _ = _cube_and_reps(_long({"accuracy": SHARP, "abstain": abst, "abstain2": late}))
    spots = vis.blind_spot_table(cube, 200, repro.rng("t-obs", 0))
    check = claims_signals.obs_idk_lags(cube, spots, reps)
    assert check.reproduced is True and check.measured.startswith("share 1.00")
    cube, _, reps, _ = _cube_and_reps(_long({"accuracy": SHARP, "abstain": abst, "abstain2": abst}))
    spots = vis.blind_spot_table(cube, 200, repro.rng("t-obs", 0))
    assert claims_signals.obs_idk_lags(cube, spots, reps).reproduced is False


def test_t3_no_signal_holds_and_fails():
    t3 = [1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.5, 0.5, 0.5]
    flat = {"accuracy": t3, "internal": [0.95] * 9, "abstain": [0.0] * 9, "abstain2": [0.0] * 9}
    cube, _, reps, _ = _cube_and_reps(_long(flat, task="t3", chance=0.5))
    spots = vis.blind_spot_table(cube, 200, repro.rng("t-obs", 0))
    assert claims_signals.obs_t3_no_signal(spots, reps, cube).reproduced is True
    cube, _, reps, _ = _cube_and_reps(_long({**flat, "abstain": [0.0, 0, 0, 0, 0.2, 0.9, 1, 1, 1]}, task="t3",
                                            chance=0.5))
    spots = vis.blind_spot_table(cube, 200, repro.rng("t-obs", 0))
    assert claims_signals.obs_t3_no_signal(spots, reps, cube).reproduced is False


def test_calibration_fog_holds_and_fails():
    over = _long({"accuracy": SHARP, "internal": [0.95] * 9})  # confident at chance: ECE rises under fog
    assert claims_signals.obs_calibration_fog(over, {"m": True}, 100, repro.rng("t", 1)).reproduced is True
    honest = over.copy()
    acc = honest[honest.signal == "accuracy"].set_index(["V", "scene"]).value
    sel = honest.signal == "internal"
    honest.loc[sel, "value"] = [0.95 if acc[(v, s)] else 0.05 for v, s in zip(honest.V[sel], honest.scene[sel],
                                                                                strict=True)]
    assert claims_signals.obs_calibration_fog(honest, {"m": True}, 100, repro.rng("t", 1)).reproduced is False


def _per7(medians, n=30):
    rows = [dict(image=i, severity=s, v_eq_m=m * (0.9 + 0.2 * i / n)) for s, m in enumerate(medians, 1)
            for i in range(n)]
    return pd.DataFrame(rows)


def test_imagenet_rows_hold_and_fail():
    paper7 = _per7([110, 82, 67, 65, 55])
    assert claims_controls.obs_imagenet_tens_of_metres(paper7, 200, repro.rng("t", 2)).reproduced is True
    assert claims_controls.obs_imagenet_tens_of_metres(_per7([900, 800, 700, 600, 500]), 200,
                                                repro.rng("t", 2)).reproduced is False
    cube, mr, _, _ = _cube_and_reps(_long({"accuracy": SHARP}))  # V_90 between 31 m and 16 m
    assert claims_controls.obs_imagenet_outside_band(paper7, cube, mr, 200, repro.rng("t", 2)).reproduced is True
    early = [1.0, 1.0, 0.6, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]  # V_90 above 125 m: the severities are inside
    cube, mr, _, _ = _cube_and_reps(_long({"accuracy": early}))
    assert claims_controls.obs_imagenet_outside_band(paper7, cube, mr, 200, repro.rng("t", 2)).reproduced is False


def _rows(spec, n=N_SCENES):
    """Per-question signal rows: spec maps (model, task, perturbation, level, signal) to a mean."""
    rows = []
    for (m, task, pert, level, sig), p in spec.items():
        for s in range(n):
            val = float(s < round(p * n)) if sig in ("accuracy", "abstain", "abstain2") else float(p)
            rows.append(dict(model=m, task=task, perturbation=pert, level=level, scene=f"s{s:02d}", signal=sig,
                             value=val))
    return pd.DataFrame(rows)


def test_condition_means_are_paired():
    cond = vv.condition_means(_rows({("m", "t2", "clean", 0, "accuracy"): 0.9,
                                     ("m", "t2", "fog+box", 1, "accuracy"): 0.9}), 100, repro.rng("t", 3))
    d, lo, hi = cond.diff(("m", "t2", "fog+box", "accuracy"), ("m", "t2", "clean", "accuracy"), level_a=1)
    assert d == 0 and lo == 0 and hi == 0  # the same scenes right in both: a paired difference has no spread
    assert np.isnan(cond.value("m", "t2", "blank+box", "accuracy")[0])


def test_imagenet_near_clean_and_sky_only_hold_and_fail():
    spec = {("m", "t2", "clean", 0, "accuracy"): 0.9, **{("m", "t2", "fog+box", s, "accuracy"): 0.9
                                                         for s in range(1, 6)},
            ("m", "t2", "sky_only_fog+box", 1, "accuracy"): 0.9}
    cond = vv.condition_means(_rows(spec), 100, repro.rng("t", 4))
    assert claims_controls.obs_imagenet_near_clean(cond, ["m"]).reproduced is True
    assert claims_controls.obs_sky_only(cond, ["m"]).reproduced is True
    spec.update({("m", "t2", "fog+box", 5, "accuracy"): 0.5, ("m", "t2", "sky_only_fog+box", 1, "accuracy"): 0.3})
    cond = vv.condition_means(_rows(spec), 100, repro.rng("t", 4))
    assert claims_controls.obs_imagenet_near_clean(cond, ["m"]).reproduced is False
    assert claims_controls.obs_sky_only(cond, ["m"]).reproduced is False


def test_blank_controls_hold_and_fail():
    chance = {("m", "t2", "blank+box", 1, "accuracy"): 0.25, ("m", "t2", "shuffled", 0, "accuracy"): 0.25,
              ("m", "t3", "blank+box", 1, "accuracy"): 0.5, ("m", "t3", "shuffled", 0, "accuracy"): 0.5,
              ("m", "t2", "blank+box", 1, "internal"): 0.9, ("m", "t3", "blank+box", 1, "internal"): 0.95,
              ("m", "t2", "blank+box", 1, "abstain"): 0.95, ("m", "t2", "blank+box", 1, "abstain2"): 0.5}
    n = 400  # enough questions that an interval of a rate at chance lies within +-0.1
    cond = vv.condition_means(_rows(chance, n), 200, repro.rng("t", 5))
    assert claims_controls.obs_controls_at_chance(cond, ["m"]).reproduced is True
    assert claims_controls.obs_blank_confidence(cond, ["m"]).reproduced is True
    assert claims_controls.obs_blank_abstain(cond, ["m"]).reproduced is True
    bad = {**chance, ("m", "t2", "blank+box", 1, "accuracy"): 0.9, ("m", "t2", "blank+box", 1, "internal"): 0.3,
           ("m", "t3", "blank+box", 1, "internal"): 0.5, ("m", "t2", "blank+box", 1, "abstain"): 0.05}
    cond = vv.condition_means(_rows(bad, n), 200, repro.rng("t", 5))
    assert claims_controls.obs_controls_at_chance(cond, ["m"]).reproduced is False
    assert claims_controls.obs_blank_confidence(cond, ["m"]).reproduced is False
    assert claims_controls.obs_blank_abstain(cond, ["m"]).reproduced is False


def test_verbal_wordings_hold_fail_and_are_absent():
    spec = {("m", "t2", "fog_physical+box", 8, f"verbal_{w}"): 0.9 for w in ("v1", "v2", "v3")}
    assert claims_controls.obs_verbal_wordings(vv.condition_means(_rows(spec), 100, repro.rng("t", 6)),
                                        ["m"]).reproduced is True
    spec[("m", "t2", "fog_physical+box", 8, "verbal_v2")] = 0.3
    assert claims_controls.obs_verbal_wordings(vv.condition_means(_rows(spec), 100, repro.rng("t", 6)),
                                        ["m"]).reproduced is False
    check = claims_controls.obs_verbal_wordings(None, ["m"])
    assert check.reproduced is None and "no organism gives a parseable" in check.measured


def test_aware_control_holds_fails_and_is_absent():
    # every object 10 m away: t = exp(-3.912 * 10 / V) < 0.05 below V = 13.06 m, between 15.6 m and 7.8 m
    dist = {f"s{s:02d}": 10.0 for s in range(N_SCENES)}
    ideal = claims_controls.ideal_abstain_curve(np.array([10.0]), L8, "fog")[0]
    assert ideal.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    on_time = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9, 1.0, 1.0]  # crosses 0.5 just below 15.6 m
    cube, mr, _, counts = _cube_and_reps(_long({"accuracy": SHARP, "abstain": on_time}, model="aw"))
    assert claims_controls.obs_aware_control(cube, mr, counts, dist, {"aw": "aware"}).reproduced is True
    early = [0.0, 0.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # abstains from 125 m on: a decade too early
    cube, mr, _, counts = _cube_and_reps(_long({"accuracy": SHARP, "abstain": early}, model="aw"))
    assert claims_controls.obs_aware_control(cube, mr, counts, dist, {"aw": "aware"}).reproduced is False
    assert claims_controls.obs_aware_control(cube, mr, counts, dist, {"aw": ""}).reproduced is None


def test_aware_err_control_holds_fails_and_is_absent():
    ok = _spots([dict(model="ae", signal="abstain", w=0.0, w_lo=-0.05, w_hi=0.05, w_kind="=")])
    assert claims_controls.obs_aware_err_control(ok, {"ae": "aware-err"}).reproduced is True
    wide = _spots([dict(model="ae", signal="abstain", w=0.5, w_lo=0.4, w_hi=0.6, w_kind="=")])
    assert claims_controls.obs_aware_err_control(wide, {"ae": "aware-err"}).reproduced is False
    absent = claims_controls.obs_aware_err_control(ok, {"ae": "aware"})
    assert absent.reproduced is None and "aware-err" in absent.measured and "issue 25" in absent.measured


def test_learned_abstainer_row_reports_blank_and_fog_and_claims_nothing():
    spots = _spots([dict(model="ab", signal="abstain", w=0.3, w_lo=0.1, w_hi=0.5, w_kind="=")])
    cond = vv.condition_means(_rows({("ab", "t2", "blank+box", 1, "abstain"): 0.9}), 100, repro.rng("t", 8))
    row = claims_controls.obs_learned_abstainer(cond, spots, {"ab": "abstainer"})
    assert row.reproduced is None and "blank abstain rate 0.9" in row.measured and "at least 0.8" in row.measured
    assert "W_abstain under fog" in row.measured and "0.3" in row.measured and "by construction" in row.check
    low = vv.condition_means(_rows({("ab", "t2", "blank+box", 1, "abstain"): 0.2}), 100, repro.rng("t", 8))
    assert "below 0.8" in claims_controls.obs_learned_abstainer(low, spots, {"ab": "abstainer"}).measured
    absent = claims_controls.obs_learned_abstainer(cond, spots, {"ab": "aware"})
    assert absent.reproduced is None and "not available" in absent.measured


def test_observations_table_of_a_run():
    long = _long({"accuracy": SHARP, "internal": [0.95] * 9, "abstain": [0.0, 0, 0, 0, 0, 0.2, 0.9, 1, 1]})
    cube = vis.signal_cube(long)
    spots = vis.blind_spot_table(cube, 50, repro.rng("t-obs", 1))
    cond = vv.condition_means(_rows({("m", "t2", "clean", 0, "accuracy"): 0.9}), 50, repro.rng("t", 7))
    table = vobs.claims_table(
        cube, spots, n_boot=50, boot_rng=repro.rng("t-obs", 1), per7=_per7([110, 82, 67, 65, 55]), cond=cond,
        wordings=None, long=long, distances={s: 10.0 for s in cube.scenes}, behaviours={"m": ""},
        rng=repro.rng("t", 8))
    assert len(table) == 20 and list(table.columns) == ["claim", "paper", "check", "measured", "reproduced"]
    assert table.reproduced.iloc[0] is True  # the sharp fall
    assert "aware-err" in table.measured.iloc[-2] and table.reproduced.iloc[-2] is None
    assert "'abstainer'" in table.measured.iloc[-1] and table.reproduced.iloc[-1] is None
    assert json.dumps(table.to_dict("records"), default=str)


def test_abstain_mid_fixed_reproduces_table_v_better():
    cmp = vpaper.abstain_mid_comparison(20_000, np.random.default_rng(0))
    decides = cmp[cmp.decides].set_index("rule")
    assert set(decides.index) == {"fixed", "clean"}
    assert abs(decides.loc["fixed", "error"]) < abs(decides.loc["clean", "error"])
    assert decides.loc["fixed", "share_rounds"] > decides.loc["clean", "share_rounds"]
    # the two rules differ only through the clean rate: at a clean rate of 0 both give the same W
    same = cmp[~cmp.decides].set_index("rule")
    assert same.loc["fixed", "w"] == pytest.approx(same.loc["clean", "w"])
    assert vis.mid_level(0.2, 0.25, "abstain", "clean") == pytest.approx(0.6)
    assert vis.mid_level(0.2, 0.25, "abstain", "fixed") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="abstain_mid"):
        vis.mid_level(0.2, 0.25, "abstain", "median")


def test_t2_asks_the_name_by_default_and_the_colour_as_a_parameter():
    from vlmrobust.synth.raster import SHAPES

    name = sv.synth_scenes(6, seed=2)
    for s in name.itertuples():
        meta = json.loads(s.meta)
        assert s.object == meta["shape"] and meta["family"] == "shape"
        assert len(set([s.object, *s.distractors])) == 4 and set(s.distractors) <= set(SHAPES)
    colour = sv.synth_scenes(6, seed=2, question="colour")
    for s in colour.itertuples():
        meta = json.loads(s.meta)
        assert s.object == f"{meta['colour']} {meta['shape']}" and meta["family"] == "colour"
        assert len({o.split()[0] for o in [s.object, *s.distractors]}) == 4
    assert not set(name.scene_id) & set(colour.scene_id)  # different scenes never share a shard key
    items = sv.scene_items(name, abstain=["none"])
    t3 = items[items.item_id.str.contains("t3true")]
    assert all(q.endswith(f"{sv.synth_scenes(6, seed=2).object[i]}?") for i, q in enumerate(t3.question))
    with pytest.raises(ValueError, match="question"):
        sv.synth_scenes(2, seed=0, question="size")
