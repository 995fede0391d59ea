"""What each non-ImageNet-C perturbation does: escalation, traversal, natural, overlay, frequency."""

from __future__ import annotations

import numpy as np
import pytest

from vlmrobust import corrupt
from vlmrobust.corrupt import frequency, natural, overlays


@pytest.fixture(scope="module")
def img():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, (64, 96, 3), dtype=np.uint8)
    return x


def test_traversals_fill_the_stated_share_from_the_starting_side(img):
    h, w = img.shape[:2]
    for level, share in enumerate((0.2, 0.4, 0.6, 0.8), start=1):
        n_r, n_c = round(share * h), round(share * w)
        td = corrupt.apply(img, "traverse_topdown", level)
        assert (td[:n_r] == 0).all() and np.array_equal(td[n_r:], img[n_r:])
        bu = corrupt.apply(img, "traverse_bottomup", level)
        assert (bu[h - n_r:] == 0).all() and np.array_equal(bu[: h - n_r], img[: h - n_r])
        lr = corrupt.apply(img, "traverse_leftright", level)
        assert (lr[:, :n_c] == 0).all() and np.array_equal(lr[:, n_c:], img[:, n_c:])
        rl = corrupt.apply(img, "traverse_rightleft", level)
        assert (rl[:, w - n_c:] == 0).all() and np.array_equal(rl[:, : w - n_c], img[:, : w - n_c])


def test_center_crop_removes_the_share_p_of_the_area_and_the_side_reading_stays_an_option():
    img = np.zeros((100, 100, 3), np.uint8)
    img[40:60, 40:60] = 255  # a centred square covering 20 % of the side
    from vlmrobust.corrupt.escalation import bruce_center_crop

    for level, p in enumerate((0.2, 0.4, 0.6, 0.8), start=1):
        area = bruce_center_crop(img, level)  # default: p is the share of the area removed (seed 001)
        side = (area[50, :, 0] > 127).sum()
        assert side == pytest.approx(20 / np.sqrt(1 - p), abs=2)  # the kept window is sqrt(1 - p) of each side
        by_side = bruce_center_crop(img, level, reading="side")  # p of each side removed
        assert (by_side[50, :, 0] > 127).sum() == pytest.approx(20 / (1 - p), abs=2)


def test_bruce_contrast_keeps_the_stated_share_around_mean_luma(img):
    from vlmrobust.corrupt.escalation import bruce_contrast

    y = img.astype(float) @ [0.299, 0.587, 0.114]
    # the paper's factors 0.9 .. 0.3 read as the share kept (default), or as the share removed (0.3 .. 0.9 removed)
    for level, shares in enumerate(((0.9, 0.7), (0.7, 0.5), (0.5, 0.3), (0.3, 0.1)), start=1):
        for reading, kept in zip(("kept", "removed"), shares, strict=True):
            out = bruce_contrast(img, level, reading=reading).astype(float)
            expected = y.mean() + kept * (img.astype(float) - y.mean())
            assert np.abs(out - np.clip(expected, 0, 255)).max() <= 1.0, (reading, level)


def test_bruce_blur_and_rotation_escalate(img):
    stds = [corrupt.apply(img, "bruce_blur", k).astype(float).std() for k in (1, 2, 3, 4)]
    assert all(a > b for a, b in zip(stds, stds[1:], strict=False))
    black = [(corrupt.apply(np.full_like(img, 200), "bruce_rotate", k) == 0).all(axis=2).mean() for k in (1, 2, 3, 4)]
    assert 0 < black[0] < black[1] < black[2] < black[3]


def test_translation_is_a_cyclic_shift_of_fixed_pixels_or_scaled_from_224_px(img):
    w = img.shape[1]
    wide = np.random.default_rng(3).integers(0, 256, (40, 1024, 3), dtype=np.uint8)
    for level, dx in enumerate(natural.OFFSETS_PX, start=1):
        # the paper's reading: dx columns at the native resolution, whatever the width
        np.testing.assert_array_equal(corrupt.apply(wide, "translate", level), np.roll(wide, dx, axis=1))
        np.testing.assert_array_equal(corrupt.apply(img, "translate", level), np.roll(img, dx, axis=1))
        shift = natural.scaled_offset(dx, w)
        assert shift == round(dx * w / 224) and shift != 0
        np.testing.assert_array_equal(corrupt.apply(img, "translate", level, reading="scaled"),
                                      np.roll(img, shift, axis=1))
    assert natural.scaled_offset(4, 32) == 1 and natural.scaled_offset(-4, 32) == -1
    assert natural.scaled_offset(16, 224) == 16
    with pytest.raises(ValueError, match="reading must be one of fixed, scaled"):
        corrupt.apply(img, "translate", 1, reading="relative")


def test_fixed_pad_crop_moves_16_pixels_at_any_width_and_the_sweep_reading_enters_the_keys():
    img = np.full((256, 1024, 3), 200, np.uint8)
    for reading, pad in (("fixed", 16), ("scaled", 73)):  # 16 * 1024 / 224 = 73 px per side when scaled
        framed = corrupt.apply(img, "pad_crop", 8, reading=reading)  # padded, then resized back to 1024 px
        frame = int(np.argmax(~(framed[128] == 0).all(axis=1)))
        assert abs(frame - pad * 1024 / (1024 + 2 * pad)) <= 1, (reading, frame)
    with pytest.raises(ValueError, match="leaves nothing"):
        corrupt.apply(np.zeros((32, 32, 3), np.uint8), "pad_crop", 1)
    fixed, scaled = natural.shift_corrupt("fixed"), natural.shift_corrupt("scaled")
    assert fixed.version != scaled.version and fixed.param("translate", 1) == -16.0
    np.testing.assert_array_equal(scaled(img, "translate", 8), corrupt.apply(img, "translate", 8, reading="scaled"))
    np.testing.assert_array_equal(scaled(img, "rotate", 1), corrupt.apply(img, "rotate", 1))
    with pytest.raises(ValueError, match="reading must be one of"):
        natural.shift_corrupt("native")


def test_pad_crop_scale_and_scale_pad(img):
    h, w = img.shape[:2]
    padded = corrupt.apply(img, "pad_crop", 8)  # +16 px: a black frame
    assert padded[0].max() == 0 and padded[:, 0].max() == 0 and padded[h // 2, w // 2].max() > 0
    cropped = corrupt.apply(img, "pad_crop", 1)  # -16 px: zoom in, no frame
    assert cropped[0].max() > 0
    sp = corrupt.apply(img, "scale_pad", 1)  # alpha 0.9, centred on black
    kh, kw = round(0.9 * h), round(0.9 * w)
    y0, x0 = (h - kh) // 2, (w - kw) // 2
    assert sp[:y0].max() == 0 and sp[y0 + kh:].max() == 0 and sp[:, :x0].max() == 0
    sc = corrupt.apply(img, "scale", 1)
    assert sc.shape == img.shape and sc.std() < img.std()  # resolution lost, no frame
    assert sc[0].max() > 0


def test_overlays_share_their_geometry_and_differ_only_in_content(img):
    base = np.full((96, 128, 3), 90, np.uint8)
    for level in (1, 2, 3, 4):
        t = corrupt.apply(base, "text_overlay", level, key="q7", seed=0)
        r = corrupt.apply(base, "random_text", level, key="q7", seed=0)
        b = corrupt.apply(base, "box_overlay", level, key="q7", seed=0)
        boxes = [np.argwhere((x != base).any(axis=2)) for x in (t, r, b)]
        extents = {tuple(bx.min(0)) + tuple(bx.max(0)) for bx in boxes}
        assert len(extents) == 1  # identical box
        y0, x0, y1, x1 = extents.pop()
        inside = (slice(y0 + 1, y1), slice(x0 + 1, x1))
        ink = [(x[inside] < 128).all(axis=2).mean() for x in (t, r, b)]
        assert ink[2] == 0 and ink[0] > 0.05 and ink[1] > 0.05
        assert 0.5 < ink[1] / ink[0] < 1.6  # comparable ink density
        assert not np.array_equal(t, r)
    # different letters are different overlays, and the level names the letter
    assert not np.array_equal(corrupt.apply(base, "text_overlay", 1, key="q7"),
                              corrupt.apply(base, "text_overlay", 2, key="q7"))
    custom = corrupt.apply(base, "text_overlay", 1, key="q7", template="Pick {letter}")
    assert not np.array_equal(custom, corrupt.apply(base, "text_overlay", 1, key="q7"))
    with pytest.raises(ValueError, match="template must be a str containing"):
        corrupt.apply(base, "text_overlay", 1, template="Answer")


def test_overlay_letters_exclude_the_prediction():
    assert overlays.overlay_levels(0, 4) == [2, 3, 4]
    assert overlays.overlay_levels(2, 4) == [1, 2, 4]
    assert overlays.overlay_levels(1, 2) == [1]
    assert overlays.overlay_levels(4, 5) == [1, 2, 3]
    with pytest.raises(ValueError, match="pred_idx"):
        overlays.overlay_levels(4, 4)


def _band_energy(x: np.ndarray, lo: float, hi: float) -> float:
    spec = np.abs(np.fft.rfft2(x - x.mean(axis=(0, 1)), axes=(0, 1))) ** 2
    rho = frequency.radial_frequency(*x.shape[:2])
    m = (rho > lo) & (rho <= hi)
    return float(spec[m].sum() / spec.sum())


def test_band_limited_noise_lives_in_its_band_with_the_stated_std():
    rng = np.random.default_rng(0)
    low = frequency.band_noise((64, 64, 3), "low", rng)
    high = frequency.band_noise((64, 64, 3), "high", rng)
    assert _band_energy(low, 0, 0.25) > 0.999 and _band_energy(high, 0.5, np.inf) > 0.999
    assert low.std() == pytest.approx(1) and high.std() == pytest.approx(1)
    grey = np.full((64, 64, 3), 128, np.uint8)
    for level, eps in enumerate(frequency.NOISE_EPS[:3], start=1):
        out = corrupt.apply(grey, "noise_all", level, key="a").astype(float)
        assert out.std() / 255 == pytest.approx(eps, rel=0.05)


def test_frequency_ablations(img):
    x = img.astype(float)
    lp = corrupt.apply(img, "lowpass_keep", 5).astype(float)  # keep rho <= 0.05
    hp = corrupt.apply(img, "highpass_keep", 1).astype(float)  # keep rho > 0.05 and the mean
    assert _band_energy(lp, 0.1, np.inf) < 0.01
    assert abs(hp.mean() - x.mean()) < 2
    errs = [np.abs(corrupt.apply(img, "lowpass_keep", k).astype(float) - x).mean() for k in (1, 2, 3, 4, 5)]
    assert all(a < b for a, b in zip(errs, errs[1:], strict=False))
    errs = [np.abs(corrupt.apply(img, "highpass_keep", k).astype(float) - x).mean() for k in (1, 2, 3, 4, 5)]
    assert all(a < b for a, b in zip(errs, errs[1:], strict=False))
