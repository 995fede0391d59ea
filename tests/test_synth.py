"""vlmrobust.synth: labels checked against the rendered pixels, and exact metric depth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage

from vlmrobust import repro, synth
from vlmrobust.synth import camera, glyphs, raster

N = 30  # items per family and test


def _items(family, n=N, size=64, **kw):
    return [synth.make_item(family, repro.rng("pix", family, size, i), size=size, **kw) for i in range(n)]


def _colour_mask(image, name):
    return (image == np.array(synth.COLOURS[name], np.uint8)).all(-1)


def _target_mask(item):
    x0, y0, x1, y1 = item.meta["bbox"]
    obj = item.meta["objects"][item.meta["target"]]
    m = np.zeros(item.image.shape[:2], bool)
    m[y0:y1, x0:x1] = _colour_mask(item.image, obj["colour"])[y0:y1, x0:x1]
    return m


def _ray_dirs(size):
    """Unit ray directions built independently: rotate camera-frame rays by the pitch."""
    f = synth.FOCAL_PER_SIZE * size
    c = (np.arange(size) + 0.5 - size / 2) / f
    a, b = np.meshgrid(c, -c)  # right, up
    p = math.radians(synth.PITCH_DEG)
    right, up, fwd = np.array([1.0, 0, 0]), np.array([0, math.cos(p), math.sin(p)]), np.array(
        [0, -math.sin(p), math.cos(p)])
    d = a[..., None] * right + b[..., None] * up + fwd
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


# ----------------------------------------------------------------------------- depth


def test_sky_is_inf_and_ground_depth_is_the_ray_plane_distance():
    size = 64
    it = synth.make_item("colour", repro.rng("depth", 0), size=size)
    d = _ray_dirs(size)
    sky = d[..., 1] >= 0
    objects = np.zeros_like(sky)
    for o in it.meta["objects"]:
        if o["bbox"] is not None:
            x0, y0, x1, y1 = o["bbox"]
            objects[y0:y1, x0:x1] |= _colour_mask(it.image, o["colour"])[y0:y1, x0:x1]
    box = (it.image == np.array(synth.BOX_RGB, np.uint8)).all(-1)
    assert np.isinf(it.depth[sky & ~objects & ~box]).all()
    assert np.isfinite(it.depth[~sky]).all() and np.isfinite(it.depth[objects]).all()
    assert sky[0].all() and not sky[-1].any()  # horizon inside the image
    # bare ground pixels (no object drawn): t = h / -d_y
    ground = ~sky & ~objects & ~box
    expect = synth.CAMERA_HEIGHT_M / -d[..., 1]
    np.testing.assert_allclose(it.depth[ground], expect[ground], rtol=1e-5)


def test_ground_depth_grows_toward_the_horizon_row_by_row():
    it = synth.make_item("text", repro.rng("depth", 1))
    col = it.depth[:, 0]  # leftmost column: usually free of objects, but take only the ground rows
    g = np.isfinite(col)
    rows = np.flatnonzero(g)
    assert rows[-1] == len(col) - 1
    free = [r for r in rows if not any(o["bbox"] and o["bbox"][0] == 0 for o in it.meta["objects"])]
    vals = col[free]
    assert (np.diff(vals) < 0).all()  # farther up the image = farther away
    assert vals[0] > 20 and vals[-1] < 4


def test_object_pixels_lie_on_their_billboard_plane():
    size = 96
    d = _ray_dirs(size)
    for it in _items("spatial", n=6, size=size):
        for o in it.meta["objects"]:
            x0, y0, x1, y1 = o["bbox"]
            m = _colour_mask(it.image, o["colour"])[y0:y1, x0:x1]
            t = it.depth[y0:y1, x0:x1][m].astype(np.float64)
            z = t * d[y0:y1, x0:x1, 2][m]
            np.testing.assert_allclose(z, o["z_m"], rtol=2e-5)  # every pixel hits the plane z = z_m
            assert np.isclose(np.median(t), o["distance_m"], rtol=0.06)


def test_depth_grows_with_the_object_distance():
    items = _items("colour", n=40)
    dist = np.array([it.meta["target_distance_m"] for it in items])
    med = np.array([np.median(it.depth[_target_mask(it)]) for it in items])
    assert np.isfinite(med).all()
    np.testing.assert_allclose(med, dist, rtol=0.06)  # pixel depth ~ distance of the object's centre
    rank = np.argsort(np.argsort(dist)) - np.argsort(np.argsort(med))
    assert np.corrcoef(np.argsort(np.argsort(dist)), np.argsort(np.argsort(med)))[0, 1] > 0.98
    assert np.abs(rank).max() <= 2
    # apparent size follows perspective: height in pixels ~ f h / z
    for it in items:
        o = it.meta["objects"][it.meta["target"]]
        x0, y0, x1, y1 = it.meta["bbox"]
        f = synth.focal_px(64)
        assert abs((y1 - y0) - f * o["height_m"] / o["z_m"]) <= 0.16 * f * o["height_m"] / o["z_m"] + 2


def test_chart_depth_is_the_flat_board():
    it = synth.make_item("chart", repro.rng("chart-depth", 0))
    d = it.depth
    assert np.isfinite(d).all()
    assert d.min() >= synth.CHART_DISTANCE_M and d.max() < synth.CHART_DISTANCE_M * 1.2
    c = d.shape[0] // 2
    assert d[c - 1:c + 1, c - 1:c + 1].max() < synth.CHART_DISTANCE_M * 1.001


# ----------------------------------------------------------------------------- labels vs pixels


@pytest.mark.parametrize("size", [32, 64, 128])
def test_count_equals_connected_components_of_the_asked_colour(size):
    n_checked = 0
    for it in _items("count", n=N, size=size):
        if it.meta["by"] == "colour":
            _, n = ndimage.label(_colour_mask(it.image, it.meta["colour"]), structure=np.ones((3, 3)))
            assert n == int(it.answer), it.question
            n_checked += 1
        else:
            shapes = [o for o in it.meta["objects"] if o["shape"] == it.meta["shape"]]
            assert len(shapes) == int(it.answer)
            for o in shapes:  # every counted object is visible with its colour
                x0, y0, x1, y1 = o["bbox"]
                assert _colour_mask(it.image, o["colour"])[y0:y1, x0:x1].sum() >= 20 * (size / 64) ** 2
        # each object's billboard spans >= 8 px at 64 x 64; its outline fills >= 86 % of that
        for o in it.meta["objects"]:
            assert o["bbox"][3] - o["bbox"][1] >= 0.86 * 8 * size / 64 - 2  # - 2: sampling at 32 px
    assert n_checked >= 8


def test_boxed_object_has_the_answer_colour_and_the_box_is_red_outline():
    box_rgb = np.array(synth.BOX_RGB, np.uint8)
    for it in _items("colour"):
        x0, y0, x1, y1 = it.meta["bbox"]
        patch = it.image[y0:y1, x0:x1].reshape(-1, 3)
        cols, counts = np.unique(patch, axis=0, return_counts=True)
        assert tuple(cols[np.argmax(counts)]) == synth.COLOURS[it.answer] or counts.max() < 0.5 * len(patch)
        assert _colour_mask(it.image, it.answer)[y0:y1, x0:x1].mean() > 0.3
        bx0, by0, bx1, by1 = it.meta["box"]
        assert bx0 < x0 and by0 < y0 and bx1 >= x1 and by1 >= y1
        ring = np.concatenate([it.image[by0, bx0:bx1 + 1], it.image[by1, bx0:bx1 + 1],
                               it.image[by0:by1 + 1, bx0], it.image[by0:by1 + 1, bx1]])
        assert (ring == box_rgb).all()
        ring_px = 2 * (bx1 - bx0 + 1) + 2 * (by1 - by0 - 1)
        assert (it.image == box_rgb).all(-1).sum() == ring_px  # nothing else is box-red
    assert synth.COLOURS["red"] != synth.BOX_RGB


def _classify_shape(mask: np.ndarray) -> str:
    """A hand-written shape classifier working on the tight pixel mask only."""
    rows = np.flatnonzero(mask.any(1))
    cols = np.flatnonzero(mask.any(0))
    m = mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].astype(float)
    h, w = m.shape
    fill = m.mean()
    widths = m.sum(1) / w
    top, bottom = widths[: max(1, h // 8)].mean(), widths[-max(1, h // 8):].mean()
    q = max(1, min(h, w) // 4)
    corners = np.mean([m[:q, :q].mean(), m[:q, -q:].mean(), m[-q:, :q].mean(), m[-q:, -q:].mean()])
    mid_row = m[h // 2 - 1:h // 2 + 1].mean()
    if fill > 0.9:
        return "square"
    if corners < 0.1 and mid_row > 0.9 and top > 0.2:
        return "cross"
    if top < 0.35 and bottom > 0.8:
        return "triangle"
    if 0.65 < fill < 0.88:
        return "circle"
    if fill < 0.55 and top < 0.35:
        return "star"
    return "?"


def test_boxed_object_shape_is_recognised_from_its_pixels():
    hits = 0
    items = _items("shape", n=40, size=128)
    for it in items:
        assert _classify_shape(_target_mask(it)) == it.answer, it.meta["objects"][it.meta["target"]]
        hits += 1
    assert {it.answer for it in items} == set(synth.SHAPES)


def test_shape_targets_are_large_enough_at_64():
    for it in _items("shape"):
        x0, y0, x1, y1 = it.meta["bbox"]
        assert y1 - y0 >= 11 and x1 - x0 >= 10


def test_sign_shows_the_answer_glyph():
    size = 128
    for it in _items("text", size=size):
        x0, y0, x1, y1 = it.meta["bbox"]  # the board: 7 x 9 cells, one-cell margin around 5 x 7
        cw, ch = (x1 - x0) / 7, (y1 - y0) / 9
        ink = np.zeros((7, 5), bool)
        for r in range(7):
            for c in range(5):
                px = it.image[int(y0 + (r + 1.5) * ch), int(x0 + (c + 1.5) * cw)]
                ink[r, c] = px.max() < 80
        scores = {ch_: (ink == glyphs.glyph(ch_)).sum() for ch_ in synth.SIGN_CHARS}
        best = max(scores, key=scores.get)
        assert best == it.answer and scores[best] >= 33, (it.answer, scores[best])


def test_chart_answer_matches_the_bar_heights_in_pixels():
    for it in _items("chart"):
        heights = {}
        for name in synth.COLOURS:
            m = _colour_mask(it.image, name)
            if m.any():
                heights[name] = m.sum(0).max()
        assert len(heights) == 4 and set(heights) == {o for o in it.options}
        want = max if it.meta["relation"] == "tallest" else min
        assert want(heights, key=heights.get) == it.answer
        vals = sorted(heights.values())
        gap = vals[-1] - vals[-2] if it.meta["relation"] == "tallest" else vals[1] - vals[0]
        assert gap >= 4  # clearly distinguishable at 64 x 64


def _object_of(it, name):
    c, s = name.split()
    (o,) = [o for o in it.meta["objects"] if o["colour"] == c and o["shape"] == s]
    return o


def test_spatial_answer_matches_pixel_positions_and_depth():
    for it in _items("spatial", n=40):
        rel = it.meta["relation"]
        objs = {name: _object_of(it, name) for name in it.options}
        if rel in ("left", "right"):
            centre = {}
            for n, o in objs.items():
                x0, y0, x1, y1 = o["bbox"]
                m = _colour_mask(it.image, o["colour"])[y0:y1, x0:x1]
                centre[n] = x0 + np.argwhere(m)[:, 1].mean()
            pick = (min if rel == "left" else max)(centre, key=centre.get)
        else:
            med = {}
            for n, o in objs.items():
                x0, y0, x1, y1 = o["bbox"]
                m = _colour_mask(it.image, o["colour"])[y0:y1, x0:x1]
                med[n] = np.median(it.depth[y0:y1, x0:x1][m])
            pick = (min if rel == "nearest" else max)(med, key=med.get)
        assert pick == it.answer, (rel, it.options, it.answer)


def test_size_answer_is_the_largest_or_smallest_in_pixels():
    for it in _items("size"):
        heights = {}
        for name in it.options:
            o = _object_of(it, name)
            x0, y0, x1, y1 = o["bbox"]
            heights[name] = y1 - y0
        want = max if it.meta["relation"] == "largest" else min
        pick = want(heights, key=heights.get)
        assert pick == it.answer
        others = [v for k, v in heights.items() if k != pick]
        assert abs(heights[pick] - np.median(others)) >= 0.25 * min(heights.values())
        assert len({_object_of(it, n)["z_m"] for n in it.options}) == 1


def test_verify_answer_matches_the_boxed_pixels():
    seen = set()
    for it in _items("verify", n=40):
        qc, qs = it.meta["query"]
        x0, y0, x1, y1 = it.meta["bbox"]
        has_colour = _colour_mask(it.image, qc)[y0:y1, x0:x1].mean() > 0.3
        obj = it.meta["objects"][it.meta["target"]]
        assert has_colour == (obj["colour"] == qc)
        assert (it.answer == "yes") == (has_colour and obj["shape"] == qs)
        seen.add(it.answer)
    assert seen == {"yes", "no"}


def test_exist_answer_matches_the_scene():
    adversarial = 0
    for it in _items("exist", n=40):
        qc, qs = it.meta["query"]
        present = [(o["colour"], o["shape"]) for o in it.meta["objects"]]
        assert ((qc, qs) in present) == (it.answer == "yes")
        if it.answer == "yes":
            o = it.meta["objects"][it.meta["target"]]
            x0, y0, x1, y1 = o["bbox"]
            assert _colour_mask(it.image, qc)[y0:y1, x0:x1].sum() >= 20
        elif any(c == qc or s == qs for c, s in present):
            adversarial += 1
    assert adversarial >= 8  # POPE-style: absent objects often share colour or shape with present ones


def test_ground_and_sky_never_take_an_object_colour():
    palette = np.array(list(synth.COLOURS.values()) + [synth.BOX_RGB], np.int32)
    for fam in ("text", "count"):
        for it in _items(fam, n=10):
            covered = np.zeros(it.image.shape[:2], bool)
            for o in it.meta["objects"]:
                if o["bbox"]:
                    x0, y0, x1, y1 = o["bbox"]
                    covered[y0:y1, x0:x1] = True
            bg = it.image[~covered].astype(np.int32)
            dist = np.abs(bg[:, None, :] - palette[None]).sum(-1).min(1)
            assert dist.min() > 60


def test_billboard_shapes_are_distinct_templates():
    u, v = np.meshgrid(np.linspace(-1, 1, 101), np.linspace(1, -1, 101))
    masks = {s: raster.shape_mask(s, u, v) for s in synth.SHAPES}
    for a in synth.SHAPES:
        for b in synth.SHAPES:
            if a < b:
                iou = (masks[a] & masks[b]).sum() / (masks[a] | masks[b]).sum()
                assert iou < 0.85, (a, b, iou)
    with pytest.raises(ValueError, match="shape"):
        raster.shape_mask("hexagon", u, v)


def test_camera_projection_agrees_with_the_rays():
    size = 64
    r = camera.rays(size)
    i, j = 50, 20
    t = r.t_ground[i, j]
    x, z = t * r.dx[i, j], t * r.dz[i, j]
    col, row = camera.project(x, 0.0, z, size)
    assert abs(col - (j + 0.5)) < 1e-9 and abs(row - (i + 0.5)) < 1e-9
    assert 2.5 < camera.ground_visible_from_m() < 3.0
