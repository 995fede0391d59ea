"""Seed 003's blind spot: V_acc, V_aware and W on constructed curves and on the paper's own Tables IX-X,
the seeded vectorised bootstrap, the shared-scene items and the depth provider's round trip through the sweep."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
import twins

from vlmrobust import assets, corrupt, data, depth, models, repro, schema, score, sweep, synth
from vlmrobust.analysis.visibility import blind_spot as vis
from vlmrobust.analysis.visibility import tables as vtab
from vlmrobust.synth import visibility as sv

torch.set_num_threads(1)

L8 = np.array([250.0 / 2**k for k in range(8)])  # seed 003's ladder, 250 m ... 1.953125 m


def _spots(acc, others, chance, levels=L8, **kw):
    """blind_spots of one cell: ``acc`` and the four awareness curves as [clean, level 1, ...]."""
    curves = np.array([acc[1:]] + [o[1:] for o in others], dtype=float)
    clean = np.array([acc[0]] + [o[0] for o in others], dtype=float)
    return vis.blind_spots(curves, clean, chance, levels, **kw)


# ----------------------------------------------------------------------------- constructed curves


def test_clean_first_crossing_is_interpolated_in_log_v():
    v = np.array([100.0, 50.0, 25.0, 12.5])
    got, status = vis.first_crossing([0.9, 0.8, 0.5, 0.3], v, 0.6)
    # between 50 m (0.8) and 25 m (0.5): 2/3 of the way in log V
    assert status == vis.CROSSED
    assert got == pytest.approx(50.0 * (25.0 / 50.0) ** (2 / 3))
    # rising signals cross upwards
    got, status = vis.first_crossing([0.0, 0.2, 0.6, 1.0], v, 0.5, rising=True)
    assert status == vis.CROSSED and got == pytest.approx(50.0 * 0.5 ** 0.75)


def test_double_crossing_takes_the_first():
    v = np.array([100.0, 50.0, 25.0, 12.5])
    got, status = vis.first_crossing([0.9, 0.5, 0.9, 0.3], v, 0.6)
    assert status == vis.CROSSED and got == pytest.approx(100.0 * 0.5 ** 0.75)
    # reaching the mid-level exactly counts as reaching it
    got, _ = vis.first_crossing([0.9, 0.6, 0.3, 0.3], v, 0.6)
    assert got == pytest.approx(50.0)


def test_a_signal_that_never_crosses_gives_a_lower_bound_on_w():
    acc = [0.99, 0.98, 0.98, 0.97, 0.92, 0.74, 0.38, 0.25, 0.25]
    flat = [0.95] * 9
    r = _spots(acc, [flat, flat, [0.0] * 9, [0.0] * 9], 0.25)
    assert r["v_aware_status"].tolist() == [vis.NEVER] * 4
    v_acc = 15.625 * 2 ** (-(0.74 - 0.62) / (0.74 - 0.38))
    assert r["v_acc"] == pytest.approx(v_acc)
    assert r["w_kind"].tolist() == [1, 1, 1, 1]  # "≥"
    assert r["w"] == pytest.approx([np.log10(v_acc / 1.953125)] * 4)


def test_accuracy_below_its_mid_level_at_the_first_level_bounds_v_acc():
    acc = [0.99, 0.40, 0.30, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]  # mid 0.62, passed at 250 m already
    abst = [0.0, 0.1, 0.2, 0.3, 0.6, 0.9, 1.0, 1.0, 1.0]  # mid 0.5: between 62.5 m (0.3) and 31.25 m (0.6)
    r = _spots(acc, [[0.9] * 9, [0.9] * 9, abst, [0.0] * 9], 0.25)
    assert r["v_acc_status"] == vis.AT_FIRST and r["v_acc"] == 250.0
    v_ab = 62.5 * 0.5 ** ((0.5 - 0.3) / 0.3)
    assert r["w_kind"][2] == 1 and r["w"][2] == pytest.approx(np.log10(250.0 / v_ab))  # W >= log10(V_1 / V_aware)
    assert r["w_kind"][0] == 1 and r["w"][0] == pytest.approx(np.log10(250.0 / 1.953125))


def test_signal_past_its_mid_level_at_the_first_level_gives_an_upper_bound():
    acc = [0.99, 0.98, 0.98, 0.97, 0.92, 0.74, 0.38, 0.25, 0.25]
    abst = [0.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    r = _spots(acc, [[0.9] * 9, [0.9] * 9, abst, [0.0] * 9], 0.25)
    assert r["v_aware_status"][2] == vis.AT_FIRST and r["w_kind"][2] == 2  # "≤"
    assert r["w"][2] == pytest.approx(np.log10(r["v_acc"] / 250.0))


def test_not_interpretable_cells_are_flagged():
    acc = [0.99, 0.98, 0.98, 0.97, 0.92, 0.74, 0.38, 0.25, 0.25]
    r = _spots(acc, [[0.9] * 9, [np.nan] * 9, [0.8] * 9, [0.1] * 9], 0.25)
    assert vis.FLAGS[r["flag"][1]] == "no data at some level" and r["w_kind"][1] == 3
    assert vis.FLAGS[r["flag"][2]] == "clean abstain rate above 0.5" and np.isnan(r["w"][2])
    assert r["flag"][3] == 0 and r["flag"][0] == 0
    near = _spots([0.30] + [0.25] * 8, [[0.9] * 9] * 4, 0.25)  # clean accuracy 0.05 above chance
    assert np.isnan(near["v_acc"]) and (near["w_kind"] == 3).all()
    assert {vis.FLAGS[f] for f in near["flag"]} == {"clean accuracy within min_gap of chance"}


def test_width_takes_the_interval_of_the_ratio():
    w, kind = vis.width([10.0, 10.0, 250.0, 250.0], [10.0, 10.0, np.inf, np.inf], [5.0, 0.0, 5.0, 250.0],
                        [5.0, 2.0, 5.0, np.inf])
    assert kind.tolist() == [0, 1, 1, 3]
    assert w[:3] == pytest.approx([np.log10(2.0), np.log10(5.0), np.log10(50.0)]) and np.isnan(w[3])


def test_bad_levels_are_refused():
    with pytest.raises(ValueError, match="strictly decreasing"):
        vis.first_crossing([0.9, 0.5], [10.0, 20.0], 0.6)
    with pytest.raises(ValueError, match="levels"):
        vis.first_crossing([0.9, 0.5, 0.4], [20.0, 10.0], 0.6)
    with pytest.raises(ValueError, match="signal"):
        vis.mid_level(0.9, 0.25, "loudness")


# ----------------------------------------------------------------------------- the paper's Tables IX-X -> Table V

# Seed 003, Table IX (t2) and Table X (t3), Qwen3-VL-2B: clean, then 250 ... 1.95312 m.
T2_FOG = {
    "accuracy": [0.99, 0.98, 0.98, 0.97, 0.92, 0.74, 0.38, 0.25, 0.25],
    "internal": [1.00, 0.99, 0.99, 0.99, 0.97, 0.91, 0.82, 0.80, 0.81],
    "verbal": [0.95, 0.95, 0.95, 0.95, 0.94, 0.93, 0.90, 0.90, 0.90],
    "abstain": [0.01, 0.03, 0.04, 0.08, 0.18, 0.44, 0.85, 0.94, 0.93],
    "abstain2": [0.00, 0.00, 0.00, 0.01, 0.03, 0.19, 0.53, 0.66, 0.64],
}
T3_FOG = {
    "accuracy": [0.97, 0.96, 0.95, 0.93, 0.87, 0.72, 0.55, 0.50, 0.50],
    "internal": [0.98, 0.98, 0.98, 0.98, 0.98, 0.97, 0.99, 1.00, 1.00],
    "verbal": [0.97, 0.97, 0.97, 0.97, 0.95, 0.95, 0.98, 1.00, 1.00],
    "abstain": [0.00, 0.00, 0.01, 0.01, 0.03, 0.03, 0.01, 0.00, 0.00],
    "abstain2": [0.00] * 9,
}
T2_WATER_ACC = [0.99, 0.97, 0.95, 0.91, 0.77, 0.47, 0.27, 0.26, 0.26]
T3_WATER_ACC = [0.97, 0.94, 0.92, 0.86, 0.72, 0.57, 0.50, 0.50, 0.50]
# Seed 003, Table V, Qwen3-VL-2B: V_acc and (W, kind) for internal, verbalized, abstain, abstain 2.
TABLE_V = {
    ("t2", "fog"): (12.4, [(0.80, "≥"), (0.80, "≥"), (-0.06, "="), (0.18, "=")]),
    ("t3", "fog"): (16.8, [(0.94, "≥")] * 4),
    ("t2", "water"): (22.1, [(1.05, "≥"), (1.05, "≥")]),
    ("t3", "water"): (33.5, [(1.23, "≥"), (1.23, "≥")]),
}


def _paper_cell(task, arm):
    if arm == "fog":
        rows = T2_FOG if task == "t2" else T3_FOG
        return rows["accuracy"], [rows[s] for s in vis.AWARE_SIGNALS]
    acc = T2_WATER_ACC if task == "t2" else T3_WATER_ACC
    # Table IX/X print only the water accuracy in the seed's text; Table V says the confidences never cross.
    return acc, [[0.99] * 9, [0.99] * 9, [0.0] * 9, [0.0] * 9]


@pytest.mark.parametrize("task,arm", list(TABLE_V))
def test_tables_ix_x_give_table_v(task, arm):
    """The paper's per-level numbers, rounded to 2 decimals, give its Table V within that rounding.

    The point estimate from the printed numbers must round to the printed V_acc
    and W within one unit of the last digit; and the paper's exact values must be
    reachable: some curve within +-0.005 of every printed number gives them
    (checked on 20,000 such curves).
    """
    chance = 0.25 if task == "t2" else 0.5
    acc, others = _paper_cell(task, arm)
    v_paper, ws = TABLE_V[(task, arm)]
    r = _spots(acc, others, chance)
    assert r["v_acc_status"] == vis.CROSSED
    assert abs(r["v_acc"] - v_paper) <= 0.25
    for k, (w_paper, kind) in enumerate(ws):
        assert vis.W_KINDS[r["w_kind"][k]] == kind
        assert abs(r["w"][k] - w_paper) <= 0.011
    rng = np.random.default_rng(0)
    curves = np.array([acc[1:]] + [o[1:] for o in others])
    clean = np.array([acc[0]] + [o[0] for o in others])
    jitter = vis.blind_spots(curves + rng.uniform(-0.005, 0.005, (20000, *curves.shape)),
                             np.clip(clean + rng.uniform(-0.005, 0.005, (20000, *clean.shape)), 0, 1), chance, L8)
    assert jitter["v_acc"].min() - 0.05 <= v_paper <= jitter["v_acc"].max() + 0.05
    for k, (w_paper, _) in enumerate(ws):
        assert np.nanmin(jitter["w"][:, k]) - 0.005 <= w_paper <= np.nanmax(jitter["w"][:, k]) + 0.005


def test_table_v_formats_as_the_paper():
    assert vtab.format_w(0.8027, "≥", 0.78, 0.82) == "≥ 0.80 [0.78, 0.82]"
    assert vtab.format_w(-0.0527, "=", -0.08, -0.04) == "-0.05 [-0.08, -0.04]"
    assert vtab.format_w(np.nan, "n/a") == "n/a"
    assert vtab.format_v(12.402, "=") == "12.4" and vtab.format_v(250.0, "≥") == "≥ 250"


# ----------------------------------------------------------------------------- cube and bootstrap


def _long(n_scenes=30, seed=0, models_=("m1", "m2")):
    """A long table with a known fall of accuracy and abstain rising, per scene noise."""
    rng = np.random.default_rng(seed)
    rows = []
    levels = np.concatenate([[np.inf], L8])
    p_acc = [0.95, 0.95, 0.9, 0.85, 0.7, 0.5, 0.3, 0.25, 0.25]
    p_abs = [0.02, 0.02, 0.05, 0.1, 0.3, 0.6, 0.9, 0.95, 0.95]
    for m in models_:
        for arm in ("fog", "water"):
            for s in range(n_scenes):
                for li, v in enumerate(levels):
                    correct = rng.random() < p_acc[li]
                    rows += [dict(model=m, task="t2", arm=arm, V=v, scene=f"s{s:03d}", signal="accuracy",
                                  value=float(correct), chance=0.25, correct=correct),
                             dict(model=m, task="t2", arm=arm, V=v, scene=f"s{s:03d}", signal="internal",
                                  value=0.9 - 0.1 * rng.random(), chance=0.25, correct=correct),
                             dict(model=m, task="t2", arm=arm, V=v, scene=f"s{s:03d}", signal="verbal",
                                  value=np.nan if rng.random() < 0.2 else 0.9, chance=0.25, correct=correct),
                             dict(model=m, task="t2", arm=arm, V=v, scene=f"s{s:03d}", signal="abstain",
                                  value=float(rng.random() < p_abs[li]), chance=0.25, correct=correct),
                             dict(model=m, task="t2", arm=arm, V=v, scene=f"s{s:03d}", signal="abstain2",
                                  value=0.0, chance=0.25, correct=correct)]
    return pd.DataFrame(rows)


def test_signal_cube_sums_per_scene_and_level():
    long = _long(n_scenes=5)
    cube = vis.signal_cube(long)
    assert cube.levels_m.tolist() == L8.tolist() and len(cube.scenes) == 5 and len(cube.cells) == 4
    means = vis.level_means(cube)
    sub = long[(long.model == "m2") & (long.arm == "water") & (long.signal == "internal") & (long.V == 31.25)]
    c = int(np.flatnonzero((cube.cells.model == "m2") & (cube.cells.arm == "water"))[0])
    assert means[c, 1, 1 + 3] == pytest.approx(sub.value.mean())
    verbal = long[(long.model == "m1") & (long.arm == "fog") & (long.signal == "verbal") & np.isinf(long.V)]
    assert vis.level_means(cube)[0, 2, 0] == pytest.approx(verbal.value.mean())  # NaN (unparsed) left out
    assert cube.counts[:, 0, 2, 0].sum() == verbal.value.notna().sum()
    with pytest.raises(ValueError, match="unknown signal"):
        vis.signal_cube(long.assign(signal="loud"))
    with pytest.raises(ValueError, match="not among levels_m"):
        vis.signal_cube(long, levels_m=L8[:4])


def test_bootstrap_is_seeded_and_equals_the_per_resample_loop():
    cube = vis.signal_cube(_long())
    a = vis.bootstrap(cube, 200, repro.rng("t", 1))
    b = vis.bootstrap(cube, 200, repro.rng("t", 1))
    loop = vis.bootstrap_loop(cube, 200, repro.rng("t", 1))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        np.testing.assert_allclose(a[k], loop[k], rtol=0, atol=1e-12, equal_nan=True)
    other = vis.bootstrap(cube, 200, repro.rng("t", 2))
    assert not np.allclose(a["v_acc"], other["v_acc"], equal_nan=True)


def test_blind_spot_table_intervals_and_bounds():
    cube = vis.signal_cube(_long(n_scenes=60))
    t1 = vis.blind_spot_table(cube, 300, repro.rng("t", 3))
    t2 = vis.blind_spot_table(cube, 300, repro.rng("t", 3))
    pd.testing.assert_frame_equal(t1, t2)
    assert len(t1) == len(cube.cells) * 4 and set(t1.signal) == set(vis.AWARE_SIGNALS)
    ab = t1[t1.signal == "abstain"]
    assert (ab.w_kind == "=").all() and (ab.w_lo <= ab.w).all() and (ab.w <= ab.w_hi).all()
    internal = t1[t1.signal == "internal"]
    assert (internal.w_kind == "≥").all() and np.allclose(internal.bound_share, 1.0)
    assert (t1[t1.signal == "abstain2"].w_kind == "≥").all()
    table = vtab.table_v(t1)
    assert list(table.columns) == ["model", "task", "arm", "V_acc (m)", "W internal", "W verbal", "W abstain",
                                   "W abstain2"]
    assert table["W internal"].str.startswith("≥ ").all()


# ----------------------------------------------------------------------------- the shared-scene items


def test_shared_scene_items():
    scenes = sv.synth_scenes(4, seed=3)
    items = sv.scene_items(scenes)
    data.validate_items(items)
    meta = sv.item_meta(items)
    assert len(items) == 4 * 3 * 3 and set(items.task) == {"t2", "t3"}
    for s in scenes.itertuples():
        mine = items[meta.loc[items.item_id, "scene"].to_numpy() == s.scene_id]
        assert mine.image_ref.nunique() == 1 and mine.image_ref.iloc[0] == s.image_ref  # one scene, both tasks
        t2 = mine[mine.task == "t2"]
        assert {tuple(o[:4]) for o in t2.options} == {tuple(t2.options.iloc[0][:4])}  # same order in every variant
        assert all(o[a] == s.object for o, a in zip(t2.options, t2.answer_idx, strict=True))
        assert set(t2.options.iloc[0][:4]) == {s.object, *s.distractors}
        true, false = mine[mine.item_id.str.contains("t3true")], mine[mine.item_id.str.contains("t3false")]
        assert (true.answer_idx == 0).all() and (false.answer_idx == 1).all()
        assert s.object in true.question.iloc[0] and s.distractors[0] in false.question.iloc[0]
        assert len({o.split()[0] for o in [s.object, *s.distractors]}) == 4  # four different colours
    for variant, text in schema.ABSTAIN_TEXTS.items():
        sub = items[meta.loc[items.item_id, "abstain"].to_numpy() == variant]
        assert all(o[-1] == text and a == len(o) - 1 for o, a in zip(sub.options, sub.abstain_idx, strict=True))
    assert (items[meta.loc[items.item_id, "abstain"].to_numpy() == "none"].abstain_idx == -1).all()
    assert sorted(meta.chance.unique()) == [0.25, 0.5]
    # the box is drawn in the loaded image, exactly at the scene's rectangle, and nowhere else
    img = data.load_image(scenes.image_ref[0])
    clean = data.load_image(scenes.clean_ref[0])
    np.testing.assert_array_equal(img, synth.draw_box(clean, scenes.box[0]))
    assert corrupt.boxed.box_mask(clean).sum() == 0
    # wording
    seed003 = sv.scene_items(scenes, wording="seed003")
    assert seed003[seed003.task == "t3"].options.iloc[0][:2] == ["Yes", "No"]
    assert sv.templates("seed003", "t3", "none") == ("seed003_yn", ["loglik"])
    assert sv.templates("seed003", "t3", "unclear") == ("seed003", None)
    assert sv.templates("organisms", "t2", "none", "v2") == ("vlmrobust_conf_v2", None)
    with pytest.raises(ValueError, match="wording"):
        sv.scene_items(scenes, wording="loud")


def test_seed003_prompts_are_the_papers_words():
    from vlmrobust.models import prompts

    text = prompts.mcq_text("Is the object inside the red box a red square?", ["Yes", "No"], "seed003_yn")
    assert text == "Is the object inside the red box a red square? Answer with Yes or No."
    assert prompts.TEMPLATES["seed003_yn"].prefill == "Answer:"
    t2 = prompts.mcq_text(sv.T2_QUESTION, ["a", "b", "c", "d", schema.ABSTAIN_TEXTS["unclear"]], "seed003")
    assert t2 == ("What is the object inside the red box? A. a B. b C. c D. d E. I cannot tell, the image is too "
                  "unclear to decide. Answer with the letter of the correct option.")
    assert prompts.mcq_text("Q?", ["a", "b"], "vlmrobust", confidence=True).endswith(prompts.CONFIDENCE_REQUEST)
    v2 = prompts.mcq_text("Q?", ["a", "b"], "vlmrobust_conf_v2", confidence=True)
    assert v2.endswith(prompts.CONFIDENCE_WORDINGS["v2"]) and prompts.CONFIDENCE_REQUEST not in v2
    assert score.parse_confidence("A\nConfidence: 70") == pytest.approx(0.7)


def test_shuffled_control_is_a_derangement_with_this_items_box(tmp_path):
    scenes = sv.synth_scenes(5, seed=1)
    items = sv.scene_items(scenes, abstain=["none"])
    shuf = sv.shuffled_items(items, scenes, seed=0, root=tmp_path)
    again = sv.shuffled_items(items, scenes, seed=0, root=tmp_path)
    assert shuf.image_ref.tolist() == again.image_ref.tolist()  # seeded, content-addressed
    meta = sv.item_meta(shuf)
    donors = [json.loads(m)["donor_scene"] for m in shuf.meta]
    assert all(d != s for d, s in zip(donors, meta.scene, strict=True))
    by_id = scenes.set_index("scene_id")
    r = shuf.iloc[0]
    want = synth.draw_box(data.load_image(by_id.loc[donors[0], "clean_ref"]), by_id.loc[meta.scene.iloc[0], "box"])
    np.testing.assert_array_equal(data.load_image(r.image_ref), want)
    assert shuf.item_id.str.endswith("-shuffled").all() and shuf.depth_ref.isna().all()
    with pytest.raises(ValueError, match="at least 2"):
        sv.shuffled_items(items.head(3), scenes.head(1), seed=0, root=tmp_path)


# ----------------------------------------------------------------------------- real images: the depth provider


def _fake_coco(tmp_path, n=3):
    """Three synthetic scenes saved as COCO-style photographs with instance annotations."""
    folder = tmp_path / "images"
    folder.mkdir()
    images, anns = [], []
    cats = [{"id": i + 1, "name": n_} for i, n_ in enumerate(["person", "bicycle", "car", "dog", "cat", "boat"])]
    for i in range(n):
        item = synth.make_item("colour", repro.rng("coco-test", i), 64, box=False)
        from PIL import Image

        Image.fromarray(item.image).save(folder / f"{i:012d}.png")
        x0, y0, x1, y1 = item.meta["bbox"]
        images.append({"id": i + 1, "file_name": f"{i:012d}.png", "width": 64, "height": 64})
        anns.append({"id": 10 + i, "image_id": i + 1, "category_id": 1 + i % 3, "iscrowd": 0,
                     "bbox": [float(x0), float(y0), float(x1 - x0), float(y1 - y0)]})
        anns.append({"id": 20 + i, "image_id": i + 1, "category_id": 4, "iscrowd": 0, "bbox": [0.0, 0.0, 3.0, 3.0]})
    ann = tmp_path / "instances.json"
    ann.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    return ann, folder


def _fake_pipeline(task, model, revision=None, device="cpu"):
    assert task == "depth-estimation"

    def run(image):  # a metric model's planar depth at half resolution: a ramp from 4 m to 12 m
        w, h = image.size
        z = np.linspace(4.0, 12.0, h // 2, dtype=np.float32)[:, None].repeat(w // 2, axis=1)
        return {"predicted_depth": torch.from_numpy(z)}

    return run


def test_depth_provider_round_trips_through_the_sweep(tmp_path, out_roots):
    ann, folder = _fake_coco(tmp_path)
    provider = depth.PipelineDepth("test/metric-depth", fov_deg=60.0, pipeline_fn=_fake_pipeline)
    scenes = depth.real_scenes(ann, folder, 3, seed=0, provider=provider, progress=False)
    assert scenes.object.tolist() == ["person", "bicycle", "car"]
    assert all("dog" not in d for d in scenes.distractors)  # distractors are absent from the image
    for s in scenes.itertuples():
        clean = data.load_image(s.clean_ref)
        want = depth.cap_sky(provider(clean), np.inf)
        np.testing.assert_array_equal(data.load_depth(s.depth_ref), want)
        np.testing.assert_array_equal(data.load_image(s.image_ref), synth.draw_box(clean, s.box))
    items = sv.scene_items(scenes, abstain=["none"])
    texts = list(items.question) + [o for opts in items.options for o in opts]
    model, proc = twins.tiny_llava(texts)
    folder_m = twins.save_twin(model, proc, tmp_path / "twin", answer_format="letters")
    got = sweep.predictions([str(folder_m)], items, {"fog_physical+box": [5]}, seed=0, progress=False,
                            out_dir=tmp_path / "shards").table
    lm = models.load(str(folder_m))
    images = [corrupt.apply(data.load_image(r.image_ref), "fog_physical+box", 5, key=r.item_id,
                            depth=data.load_depth(r.depth_ref)) for r in items.itertuples()]
    want = score.predict(lm, items, images, perturbation="fog_physical+box", level=5, param=15.625)
    got5 = got[got.perturbation == "fog_physical+box"].set_index("item_id").loc[want.item_id]
    for a, b in zip(got5.probs, want.probs, strict=True):  # K is 4 (t2) or 2 (t3)
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert (got5.param == 15.625).all()


def test_sky_cap_and_asset_store(tmp_path):
    d = np.array([[1.0, np.inf], [3.0, np.inf]], dtype=np.float32)
    np.testing.assert_array_equal(depth.cap_sky(d, 500.0), [[1.0, 500.0], [3.0, 500.0]])
    np.testing.assert_array_equal(depth.cap_sky(d, np.inf), d)
    with pytest.raises(ValueError, match="cap_m"):
        depth.cap_sky(d, 0.0)
    ref = assets.store_depth(d, tmp_path)
    assert ref == assets.store_depth(d.copy(), tmp_path) and ref.endswith(".npy")
    np.testing.assert_array_equal(data.load_depth(ref), d)
    scenes = sv.synth_scenes(2, seed=0)
    capped = depth.attach_depth(scenes, None, sky_cap_m=800.0, root=tmp_path)
    raw, cap = data.load_depth(scenes.depth_ref[0]), data.load_depth(capped.depth_ref[0])
    assert np.isinf(raw).any() and np.isfinite(cap).all() and cap.max() <= max(800.0, raw[np.isfinite(raw)].max())
    np.testing.assert_array_equal(cap[np.isfinite(raw)], raw[np.isfinite(raw)])
    assert depth.attach_depth(scenes, None).depth_ref.tolist() == scenes.depth_ref.tolist()


def test_the_shuffled_control_scales_the_box_to_a_donor_of_another_size():
    from vlmrobust.synth.visibility import _scaled_box

    assert _scaled_box([10, 20, 29, 39], (64, 64), (64, 64)) == [10, 20, 29, 39]
    assert _scaled_box([32, 48, 63, 63], (64, 64), (32, 128)) == [16, 96, 31, 127]
    x0, y0, x1, y1 = _scaled_box([60, 60, 63, 63], (64, 64), (8, 8))
    assert 0 <= x0 < x1 <= 7 and 0 <= y0 < y1 <= 7
