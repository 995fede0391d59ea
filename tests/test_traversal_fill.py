"""Traversal fills (black, dataset mean colour, crop-and-resize), the sky-only control and the evidence record."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vlmrobust import corrupt, data, synth
from vlmrobust.corrupt import escalation as E
from vlmrobust.corrupt import evidence as EV


@pytest.fixture(scope="module")
def img():
    return np.random.default_rng(5).integers(0, 256, (64, 96, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def scene():
    item = synth.make_item("colour", np.random.default_rng(1), size=64)
    return item.image, item.depth, item.meta


def test_black_fill_is_the_original_traversal(img):
    for d in E.DIRECTIONS:
        for s in E.TRAVERSAL_SHARES:
            np.testing.assert_array_equal(E.remove_band(img, d, s, "black"), E.traverse(img, d, s))
        assert E.traversal_name(d, "black") == f"traverse_{d}"


def test_mean_fill_paints_the_band_with_the_dataset_mean(img):
    h, w = img.shape[:2]
    for level, s in enumerate(E.TRAVERSAL_SHARES, start=1):
        n_r, n_c = round(s * h), round(s * w)
        td = corrupt.apply(img, "traverse_topdown_mean", level)
        assert (td[:n_r] == E.SYNTH_MEAN_RGB).all() and np.array_equal(td[n_r:], img[n_r:])
        rl = corrupt.apply(img, "traverse_rightleft_mean", level)
        assert (rl[:, w - n_c:] == E.SYNTH_MEAN_RGB).all() and np.array_equal(rl[:, : w - n_c], img[:, : w - n_c])
    rgb = E.remove_band(img, "bottomup", 0.5, (1, 2, 3))
    assert (rgb[32:] == (1, 2, 3)).all()
    own = corrupt.apply(img, "traverse_bottomup_mean", 2, rgb=(9, 8, 7))  # the mean of the items' own images
    assert (own[h - round(0.4 * h):] == (9, 8, 7)).all() and np.array_equal(own[: h - round(0.4 * h)],
                                                                                img[: h - round(0.4 * h)])


def test_the_mean_colour_is_the_synthetic_benchmarks():
    items = synth.generate(4, 11, size=64)
    mean = E.dataset_mean_colour(data.load_image(r) for r in items.image_ref)
    assert np.abs(np.array(mean) - E.SYNTH_MEAN_RGB).max() <= 3
    with pytest.raises(ValueError, match="empty"):
        E.dataset_mean_colour([])


def test_crop_fill_cuts_the_band_and_resizes_the_rest(img):
    h, w = img.shape[:2]
    top = np.zeros((64, 96, 3), np.uint8)
    top[:32] = 200  # upper half bright, lower half dark
    out = corrupt.apply(top, "traverse_topdown_crop", 2)  # removes 0.4 of the rows: 26 of the 32 bright ones
    assert out.shape == top.shape and out.dtype == np.uint8
    assert (out[:, :, 0] > 100).mean() == pytest.approx(6 / 38, abs=0.03)  # what was left fills the height
    left = np.zeros((64, 96, 3), np.uint8)
    left[:, 48:] = 255
    lr = E.remove_band(left, "leftright", 0.5, "crop")
    assert lr.min() == 255  # the dark left half is gone entirely
    assert E.remove_band(img, "topdown", 0.0, "crop").tobytes() == img.tobytes()
    assert E.remove_band(img, "topdown", 1.0, "crop").shape == img.shape  # one row kept, stretched
    for d in E.DIRECTIONS:
        assert not (corrupt.apply(img, E.traversal_name(d, "crop"), 4) == 0).all(axis=2).any()  # no black added


def test_fill_names_and_registry():
    assert E.DEFAULT_TRAVERSAL_FILL in E.FILLS
    assert E.traversal_names("mean") == {d: f"traverse_{d}_mean" for d in E.DIRECTIONS}
    assert set(corrupt.names("fill")) == {f"traverse_{d}_{f}" for d in E.DIRECTIONS for f in ("mean", "crop")}
    assert set(corrupt.names("control")) == {E.control_name(f) for f in E.FILLS}
    for name in corrupt.names("fill"):
        assert corrupt.info(name).params == E.TRAVERSAL_SHARES and not corrupt.info(name).needs_depth
    assert corrupt.info("sky_band_mean").needs_depth and corrupt.info("sky_band_mean").params == E.SKY_BAND_SHARES
    assert set(corrupt.manifest("bruce")) == set(corrupt.names("escalation")) | set(corrupt.names("traversal"))
    with pytest.raises(ValueError, match="fill must be one of"):
        E.traversal_name("topdown", "grey")
    with pytest.raises(ValueError, match="direction must be one of"):
        E.remove_band(np.zeros((32, 32, 3), np.uint8), "diagonal", 0.2)
    with pytest.raises(ValueError, match="three values"):
        E.remove_band(np.zeros((32, 32, 3), np.uint8), "topdown", 0.2, (1, 2))


def test_the_sky_control_removes_only_sky(scene):
    image, depth, meta = scene
    n = E.sky_rows(image, depth)
    assert 0 < n < 32
    assert np.isinf(depth[:n]).all()  # every removed row is sky; the next one is not (ground, object or box)
    assert not np.isinf(depth[n]).all() or (image[n] == (255, 0, 0)).all(-1).any()
    assert not (image[:n] == (255, 0, 0)).all(-1).any()  # no red-box pixel in the band
    assert n <= meta["box"][1] and n <= min(o["bbox"][1] for o in meta["objects"])
    for fill in E.FILLS:
        out = corrupt.apply(image, E.control_name(fill), 4, depth=depth)
        if fill != "crop":
            assert np.array_equal(out[n:], image[n:])
        assert not np.array_equal(out, image)
    half = corrupt.apply(image, "sky_band_black", 2, depth=depth)
    assert (half[: round(0.5 * n)] == 0).all() and np.array_equal(half[round(0.5 * n):], image[round(0.5 * n):])
    chart = synth.make_item("chart", np.random.default_rng(2), size=64)
    assert E.sky_rows(chart.image, chart.depth) == 0  # no sky: the control leaves the chart untouched
    assert np.array_equal(corrupt.apply(chart.image, "sky_band_mean", 4, depth=chart.depth), chart.image)
    with pytest.raises(ValueError, match="needs depth"):
        corrupt.apply(image, "sky_band_mean", 4)


def test_kept_extent_and_share_outside():
    assert EV.kept_extent("traverse_topdown_mean", 1, (64, 64)) == (0, 13, 64, 64)
    assert EV.kept_extent("traverse_bottomup", 2, (64, 64)) == (0, 0, 64, 38)
    assert EV.kept_extent("traverse_leftright_crop", 4, (64, 64)) == (51, 0, 64, 64)
    assert EV.kept_extent("bruce_center_crop", 2, (64, 64)) == (7, 7, 57, 57)  # p 0.4 of the area: 50 px kept
    assert (EV.kept_extent("bruce_blur", 3, (64, 64)) is None
            and EV.kept_extent("bruce_blur", 0, (64, 64)) == (0, 0, 64, 64))
    assert EV.share_outside((0, 0, 10, 10), (0, 5, 64, 64)) == pytest.approx(0.5)
    assert EV.share_outside((0, 0, 10, 10), (20, 20, 64, 64)) == 1.0
    with pytest.raises(ValueError, match="needs the image"):
        EV.kept_extent("sky_band_mean", 1, (64, 64))
    with pytest.raises(ValueError, match="positive area"):
        EV.share_outside((3, 3, 3, 9), (0, 0, 9, 9))


def test_evidence_record_of_a_boxed_target(scene):
    _, _, meta = scene
    x0, y0, x1, y1 = meta["bbox"]
    intact = EV.evidence_record(meta, (0, 0, 64, 64))
    assert intact["evidence"] == "intact" and intact["target_removed"] == 0 and intact["share_removed"] == 0
    cut = EV.evidence_record(meta, (0, (y0 + y1) // 2, 64, 64))
    assert cut["evidence"] == "partial" and 0 < cut["target_removed"] < 1
    gone = EV.evidence_record(json.dumps(meta), (0, y1, 64, 64))
    assert gone["evidence"] == "removed" and gone["target_removed"] == 1.0 and gone["n_removed"] == 1
    assert EV.evidence_record(meta, None)["evidence"] == "n/a"
    assert EV.evidence_record("", (0, 0, 64, 64))["evidence"] == "n/a"


def test_evidence_of_count_and_exist():
    g = np.random.default_rng(4)
    count = synth.make_item("count", g, size=64).meta
    boxes = EV.evidence_boxes(count)
    assert len(boxes) == count["count"]
    top = min(b[1] for b in boxes)  # keep only rows above every counted object: all removed
    rec = EV.evidence_record(count, (0, 0, 64, top))
    assert rec["evidence"] == "removed" and rec["visible_count"] == 0 and rec["n_removed"] == count["count"]
    no = synth.make_item("exist", np.random.default_rng(0), size=64, truth=False).meta
    assert EV.evidence_boxes(no) == [] and EV.evidence_record(no, (0, 10, 64, 64))["evidence"] == "none"


def test_evidence_table_on_generated_items():
    items = synth.generate(3, 2, size=64)
    ev = EV.evidence_table(items, {"traverse_topdown_mean": [1, 4], "traverse_bottomup_mean": [1, 4],
                                   "sky_band_mean": [4], "bruce_blur": [1]})
    assert list(ev.columns) == list(EV.EVIDENCE_COLUMNS) and len(ev) == len(items) * 6
    assert set(ev.evidence) <= set(EV.EVIDENCE_STATES)
    ground = ev[ev.scene == "ground"]
    sky = ground[ground.perturbation == "sky_band_mean"]
    assert (sky.target_removed.fillna(0) == 0).all() and (sky.n_removed == 0).all() and (sky.n_partial == 0).all()
    assert (sky.share_removed > 0.2).all()  # about the top third of a ground scene is sky
    td1 = ground[(ground.perturbation == "traverse_topdown_mean") & (ground.level == 1)]
    assert (td1.target_removed.fillna(0) == 0).all()  # the top fifth of a ground scene is sky
    assert set(ev[ev.perturbation == "bruce_blur"].evidence) == {"n/a"}
    bu = ground[ground.perturbation == "traverse_bottomup_mean"].target_removed.mean()
    td = ground[ground.perturbation == "traverse_topdown_mean"].target_removed.mean()
    assert bu > td  # the ground truth behind "bottom-up should hurt more than top-down"
