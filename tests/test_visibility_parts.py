"""The pieces of notebook 06: the box drawn after the degradation, the sky and blank controls, depth conversions,
the per-level read-outs (calibration, transmittance, ImageNet-C fog in metres) and the observations checks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from vlmrobust import corrupt, data, depth, synth
from vlmrobust.analysis.visibility import readouts as vread
from vlmrobust.corrupt import boxed, physical
from vlmrobust.synth import visibility as sv


@pytest.fixture(scope="module")
def scene():
    s = sv.synth_scenes(1, seed=5).iloc[0]
    return data.load_image(s.clean_ref), data.load_depth(s.depth_ref), list(s.box), data.load_image(s.image_ref)


# ----------------------------------------------------------------------------- corrupt.boxed


@pytest.mark.parametrize("name,level,base", [
    ("fog_physical+box", 6, lambda x, d: physical.physical_fog(x, d, 7.8125)),
    ("underwater+box", 3, lambda x, d: physical.underwater(x, d, 62.5)),
    ("fog_physical_ext+box", 2, lambda x, d: physical.physical_fog(x, d, 8000.0)),
    ("underwater_ext+box", 14, lambda x, d: physical.underwater(x, d, 1.953125)),
    ("sky_only_fog+box", 1, lambda x, d: boxed.sky_only(x, d, "fog")),
    ("sky_only_water+box", 1, lambda x, d: boxed.sky_only(x, d, "water")),
    ("blank+box", 1, lambda x, d: boxed.blank(x)),
])
def test_box_after_degradation_equals_degrading_then_drawing(scene, name, level, base):
    clean, d, box, boxed_img = scene
    got = corrupt.apply(boxed_img, name, level, depth=d if corrupt.info(name).needs_depth else None)
    np.testing.assert_array_equal(got, synth.draw_box(base(clean, d), box))


def test_imagenet_fog_with_the_box_after_it(scene):
    clean, d, box, boxed_img = scene
    got = corrupt.apply(boxed_img, "fog+box", 4, seed=2, key="k")
    want = synth.draw_box(corrupt.apply(clean, "fog", 4, seed=2, key="k"), box)  # same plasma draw
    outline = boxed.box_mask(synth.draw_box(np.zeros_like(clean), box))
    assert clean[~outline].max() == clean.max()  # the maximum is not under the outline here
    np.testing.assert_array_equal(got, want)


def test_extended_range_contains_the_papers_levels(scene):
    clean, d, _, img = scene
    assert boxed.VISIBILITY_RANGE_EXT_M[0] == 16000.0 and boxed.VISIBILITY_RANGE_EXT_M[6:] == \
        physical.VISIBILITY_LEVELS_M
    assert corrupt.info("fog_physical_ext+box").params[6:] == corrupt.info("fog_physical+box").params
    for k in range(1, 9):
        np.testing.assert_array_equal(corrupt.apply(img, "fog_physical_ext+box", k + 6, depth=d),
                                      corrupt.apply(img, "fog_physical+box", k, depth=d))


def test_sky_only_changes_only_the_sky(scene):
    clean, d, _, _ = scene
    out = boxed.sky_only(clean, d, "fog")
    sky = np.isinf(d)
    assert sky.any() and (~sky).any()
    np.testing.assert_array_equal(out[~sky], clean[~sky])
    grey = np.rint(physical.linear_to_srgb(np.float64(physical.FOG_AIRLIGHT)) * 255)
    assert np.all(out[sky] == grey)
    water = boxed.sky_only(clean, d, "water")[sky]
    assert water[:, 2].mean() > water[:, 0].mean()  # blue-green veiling light
    with pytest.raises(ValueError, match="arm"):
        boxed.sky_only(clean, d, "smoke")


def test_boxed_family_is_registered_with_physical_parameters():
    assert corrupt.names("boxed") == [boxed.boxed_name(b) for b in boxed.BOXED]
    assert corrupt.info("fog+box").random and corrupt.info("fog+box").extra["rng_name"] == "fog"
    assert corrupt.info("underwater+box").needs_depth and not corrupt.info("blank+box").needs_depth
    assert corrupt.info("fog_physical+box").param(8) == 1.953125
    assert "visibility" not in {corrupt.info(n).family for n in corrupt.names("boxed")}  # 02's families untouched
    assert corrupt.names("visibility") == ["fog_physical", "underwater"]


# ----------------------------------------------------------------------------- depth


def test_planar_and_ray_depth():
    f = depth.focal_from_fov(64, 60.0)
    assert f == pytest.approx(32 / math.tan(math.radians(30)))
    z = np.full((4, 6), 10.0)
    r = depth.planar_to_ray(z, f)
    np.testing.assert_allclose(depth.ray_to_planar(r, f), z)
    u, v = 5 - 2.5, 3 - 1.5
    assert r[3, 5] == pytest.approx(10.0 * math.sqrt(1 + (u * u + v * v) / f**2))
    assert (r >= z).all()
    # the synthetic camera: exact depth seen as planar depth of a flat board is constant (chart scenes)
    item = synth.make_item("chart", np.random.default_rng(0), 64)
    planar = depth.ray_to_planar(item.depth, synth.focal_px(64))
    np.testing.assert_allclose(planar, synth.CHART_DISTANCE_M, rtol=1e-5)


def test_providers(scene):
    clean, d, _, _ = scene
    plane = depth.ConstantPlaneDepth(12.0, 60.0)
    r = plane(clean)
    assert r.shape == clean.shape[:2] and r.min() == pytest.approx(12.0, rel=1e-3) and "12m" in plane.name
    ref = sv.synth_scenes(1, seed=5).clean_ref[0]
    np.testing.assert_array_equal(depth.ExactDepth()(clean, ref), d)
    with pytest.raises(ValueError, match="synth://"):
        depth.ExactDepth()(clean, "photo.png")
    assert isinstance(depth.make_provider("plane", plane_m=3.0), depth.ConstantPlaneDepth)
    with pytest.raises(ValueError, match="depth model"):
        depth.make_provider("pipeline")
    with pytest.raises(ValueError, match="one of"):
        depth.make_provider("lidar")


def test_pipeline_provider_resizes_and_converts():
    calls = []

    def build(task, model, revision=None, device="cpu"):
        calls.append((task, model))
        return lambda im: {"predicted_depth": torch.full((8, 8), 5.0)}

    p = depth.PipelineDepth("org/metric", fov_deg=90.0, pipeline_fn=build)
    img = np.zeros((32, 48, 3), np.uint8)
    r = p(img)
    r2 = p(img)
    assert calls == [("depth-estimation", "org/metric")]  # built once
    np.testing.assert_allclose(r, depth.planar_to_ray(np.full((32, 48), 5.0), 24.0), rtol=1e-6)
    np.testing.assert_array_equal(r, r2)


def test_load_depth_reads_npy_and_refuses_bad_files(tmp_path):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((3, 3, 3), np.float32))
    with pytest.raises(data.ImageError, match="float"):
        data.load_depth(str(bad))
    with pytest.raises(data.ImageError, match="not found"):
        data.load_depth(str(tmp_path / "missing.npy"))
    with pytest.raises(data.ImageError, match="npy"):
        data.load_depth("depth.png")


# ----------------------------------------------------------------------------- read-outs


def _pred(items: pd.DataFrame, conditions, rng) -> pd.DataFrame:
    """A predictions table for ``items`` under ``conditions`` [(perturbation, level, param)] (random answers)."""
    rows = []
    meta = sv.item_meta(items)
    for pert, level, param in conditions:
        for it in items.itertuples():
            k = len(it.options)
            probs = rng.dirichlet(np.ones(k))
            pred = int(np.argmax(probs))
            for method in ("letter", "verbal") if meta.loc[it.item_id, "abstain"] == "none" else ("letter",):
                rows.append({"model": "m", "item_id": it.item_id, "task": it.task, "category": it.category,
                             "perturbation": pert, "level": level, "param": param, "method": method,
                             "template": "vlmrobust", "seed": 0, "K": k, "answer_idx": it.answer_idx,
                             "probs": probs.tolist(), "pred_idx": pred, "correct": pred == it.answer_idx,
                             "confidence": probs.max(), "token_prob": probs.max() / 2, "margin": 0.1,
                             "abstained": it.abstain_idx >= 0 and pred == it.abstain_idx,
                             "verbal_conf": 0.8 if method == "verbal" and rng.random() < 0.5 else np.nan,
                             "unparsed_rate": np.nan, "logits": None})
    return pd.DataFrame(rows)


def test_signals_and_condition_summary():
    items = sv.scene_items(sv.synth_scenes(3, seed=0))
    conds = [("clean", 0, np.nan), ("fog_physical+box", 1, 250.0), ("fog_physical+box", 2, 125.0),
             ("blank+box", 1, 128.0)]
    pred = _pred(items, conds, np.random.default_rng(0))
    rows = vread.signal_rows(pred, items, internal="confidence")
    plain = pred[(pred.method == "letter") & pred.item_id.str.endswith("-none")]
    acc = rows[(rows.signal == "accuracy") & (rows.perturbation == "clean")]
    assert len(acc) == 9 and acc.value.sum() == plain[plain.perturbation == "clean"].correct.sum()
    tok = vread.signal_rows(pred, items)  # the default: the token probability, as seed 003's abstract says
    assert tok[tok.signal == "internal"].value.sum() == pytest.approx(rows[rows.signal == "internal"].value.sum() / 2)
    long = vread.signals_long(pred, items, {"fog_physical+box": "fog"})
    assert set(long.arm) == {"fog"} and np.isinf(long.V).sum() == (rows.perturbation == "clean").sum()
    assert "blank+box" not in set(long.V.astype(str))
    summ = vread.condition_summary(pred, items)
    blank = summ[(summ.perturbation == "blank+box") & (summ.task == "t3")].iloc[0]
    ab = pred[(pred.perturbation == "blank+box") & pred.item_id.str.contains("t3") & pred.item_id.str.endswith(
        "-unclear")]
    assert blank.abstain == pytest.approx(ab.abstained.mean()) and blank.n_questions == 6
    vb = pred[(pred.method == "verbal") & (pred.perturbation == "clean") & (pred.task == "t2")]
    clean_t2 = summ[(summ.perturbation == "clean") & (summ.task == "t2")].iloc[0]
    assert clean_t2.verbal_parse == pytest.approx(vb.verbal_conf.notna().mean())
    with pytest.raises(ValueError, match="not in the item table"):
        vread.signal_rows(pred, items.head(3))
    with pytest.raises(ValueError, match="several scoring methods"):
        vread.signal_rows(pd.concat([pred, pred[pred.method == "letter"].assign(method="loglik")]), items)


def test_verbal_wordings_table():
    items = sv.scene_items(sv.synth_scenes(2, seed=0), abstain=["none"])
    conds = [("clean", 0, np.nan), ("fog_physical+box", 5, 15.625)]
    rng = np.random.default_rng(1)
    preds = {v: _pred(items, conds, rng) for v in ("v1", "v2")}
    preds = {v: p[p.method == "verbal"] for v, p in preds.items()}
    acc = vread.condition_summary(_pred(items, conds, rng), items)
    t6 = vread.verbal_wordings_table(preds, acc)
    assert len(t6) == 2 and {"v1", "v2", "parse_v1", "accuracy"} <= set(t6.columns)
    clean = preds["v2"][preds["v2"].perturbation == "clean"]
    row = t6[t6.perturbation == "clean"].iloc[0]
    assert row.v2 == pytest.approx(clean.verbal_conf.mean()) and row.parse_v2 == clean.verbal_conf.notna().mean()
    assert row.accuracy == pytest.approx(acc[acc.perturbation == "clean"].accuracy.mean())


def test_calibration_by_level_by_hand():
    long = pd.DataFrame({
        "model": "m", "task": "t2", "arm": "fog", "V": [np.inf] * 4 + [10.0] * 4, "scene": list("abcdabcd"),
        "signal": "internal", "value": [0.9, 0.6, 0.6, 0.2, 0.9, 0.9, 0.25, np.nan],
        "chance": 0.25, "correct": [True, True, False, False, True, False, True, True]})
    cal = vread.calibration_by_level(long).set_index("V")
    assert cal.loc[np.inf, "auroc"] == pytest.approx(0.875)  # 3.5 of 4 right-wrong pairs ordered
    assert cal.loc[10.0, "n"] == 3 and cal.loc[10.0, "ece"] == pytest.approx((2 * 0.4 + 0.75) / 3)
    bins, summ = vread.pooled_reliability(long, max_v=15.625)
    assert set(summ.pool) == {"clean", "murky"} and summ.set_index("pool").loc["murky", "n"] == 3


def test_object_transmittance_is_measured():
    d = np.array([1.0, 5.0, 10.0, 20.0])
    t = vread.object_transmittance("fog_physical+box", 5, d)
    np.testing.assert_allclose(t, physical.transmittance(d, 15.625), rtol=0.03, atol=2e-3)
    a = np.asarray(physical.WATER_ABSORPTION)
    w = vread.object_transmittance("underwater+box", 5, d)
    beta = a / a.min() * 3.912 / 15.625  # V is the range at which the clearest channel keeps 2 % contrast
    np.testing.assert_allclose(w, np.exp(-np.outer(d, beta)).mean(1), rtol=0.03, atol=3e-3)


def test_accuracy_against_transmittance():
    long = pd.DataFrame({"model": "m", "task": "t2", "arm": "fog", "V": [15.625] * 4 + [np.inf],
                         "scene": list("abcde"), "signal": "accuracy", "value": [1.0, 1.0, 0.0, 0.0, 1.0],
                         "chance": 0.25, "correct": [True, True, False, False, True],
                         "target_distance_m": [1.0, 1.0, 30.0, 30.0, 1.0]})
    out = vread.accuracy_vs_transmittance(long, {"fog_physical+box": "fog"}, {"fog_physical+box": {15.625: 5}})
    assert out.n.sum() == 4 and out.sort_values("t_mean").accuracy.tolist() == [0.0, 1.0]


def test_imagenet_fog_gain_is_measured_on_the_image(scene):
    clean, d, _, _ = scene
    g = vread.measured_fog_gain(clean, d, (1, 3, 4), seed=0, key="k")
    from vlmrobust.corrupt.weather import fog_gain

    assert g[0] == pytest.approx(fog_gain(clean, 1), abs=0.01)  # no clipping at severity 1
    assert g[1] != g[2]  # same c, different haze: the measured gains differ
    v = vread.visibility_for_gain(d, g)
    fin = d[np.isfinite(d)]
    np.testing.assert_allclose([np.exp(-physical.KOSCHMIEDER["2%"] * fin / x).mean() for x in v], g, rtol=1e-6)
    assert vread.visibility_for_gain(d, [1.0])[0] == np.inf and vread.visibility_for_gain(d, [0.0])[0] == 0.0
    per, summ = vread.imagenet_fog_visibility([clean, clean], [d, d], ["a", "b"], severities=(1, 2))
    assert len(per) == 4 and summ.median_v_m.is_monotonic_decreasing and (summ.n_images == 2).all()


def test_interp_log_v():
    assert vread.interp_log_v([100.0, 10.0], [1.0, 0.0], [np.sqrt(1000.0)])[0] == pytest.approx(0.5)
