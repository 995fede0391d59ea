"""Physical visibility (seed 003): Koschmieder fog, underwater attenuation, ImageNet-C fog in metres."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlmrobust import corrupt, synth
from vlmrobust.corrupt import physical, weather


def _img(value=(200, 60, 30), shape=(40, 40)):
    img = np.empty(shape + (3,), np.uint8)
    img[...] = value
    return img


def test_transmittance_at_the_visibility_is_the_contrast_threshold():
    for v in (1.953125, 15.625, 250.0):
        assert physical.transmittance(np.array([v]), v)[0] == pytest.approx(0.02, rel=1e-12)
        assert physical.transmittance(np.array([v]), v, "5%")[0] == pytest.approx(0.05, rel=1e-12)
    assert physical.KOSCHMIEDER["2%"] == pytest.approx(3.912, abs=5e-4)
    assert physical.KOSCHMIEDER["5%"] == pytest.approx(2.996, abs=5e-4)
    t = physical.transmittance(np.array([0.0, 1.0, 10.0, np.inf]), 10.0)
    assert t[0] == 1.0 and t[-1] == 0.0 and t[1] > t[2]
    assert physical.extinction(10.0) == pytest.approx(3.912 / 10, rel=1e-4)
    np.testing.assert_array_equal(physical.transmittance(np.array([5.0, np.inf]), math.inf), [1.0, 1.0])
    with pytest.raises(ValueError, match="visibility must be > 0"):
        physical.transmittance(np.ones(2), 0.0)


def test_fog_follows_eq1_in_linear_rgb():
    img = _img()
    d = np.full((40, 40), 10.0, np.float32)
    out = physical.physical_fog(img, d, 10.0)
    j = physical.srgb_to_linear(np.array([200, 60, 30]) / 255)
    expected = physical.linear_to_srgb(j * 0.02 + 0.8 * 0.98) * 255
    np.testing.assert_allclose(out[0, 0], expected, atol=0.5)
    # the blend happens in linear light, not on sRGB values
    srgb_blend = (np.array([200, 60, 30]) * 0.02 + physical.linear_to_srgb(0.8) * 255 * 0.98)
    assert np.abs(out[0, 0] - srgb_blend).max() > 1


def test_zero_depth_is_unchanged_and_sky_becomes_the_veiling_light():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (48, 48, 3), dtype=np.uint8)
    d = np.zeros((48, 48), np.float32)
    d[:10] = np.inf
    for level in range(1, 9):
        out = corrupt.apply(img, "fog_physical", level, depth=d)
        np.testing.assert_array_equal(out[10:], img[10:])
        assert (out[:10] == round(physical.linear_to_srgb(0.8) * 255)).all()
        water = corrupt.apply(img, "underwater", level, depth=d)
        np.testing.assert_array_equal(water[10:], img[10:])
        veil = np.rint(physical.linear_to_srgb(np.array(physical.WATER_VEILING)) * 255)
        assert (water[:10] == veil).all()


def test_every_grey_level_survives_the_linear_round_trip():
    img = np.ascontiguousarray(np.broadcast_to(np.arange(256, dtype=np.uint8)[:, None, None], (256, 32, 3)))
    out = physical.physical_fog(img, np.zeros((256, 32), np.float32), 1.0)
    np.testing.assert_array_equal(out, img)


def test_fog_ladder_is_monotone_and_reaches_the_veiling_light():
    item = synth.make_item("colour", np.random.default_rng(3), size=64)
    veil = physical.linear_to_srgb(0.8) * 255
    dist = [np.abs(corrupt.apply(item.image, "fog_physical", k, depth=item.depth).astype(float) - veil).mean()
            for k in range(1, 9)]
    assert all(a > b for a, b in zip(dist, dist[1:], strict=False))
    assert dist[-1] < 3


def test_underwater_attenuates_red_fastest():
    img = _img((200, 200, 200))
    d = np.full((40, 40), 20.0, np.float32)
    out = corrupt.apply(img, "underwater", 4, depth=d).astype(float)  # V = 31.25 m
    veil = physical.linear_to_srgb(np.array(physical.WATER_VEILING)) * 255
    moved = np.abs(out[0, 0] - 200) / np.abs(veil - 200)  # share of the way to the veiling light
    assert moved[0] > moved[1] > moved[2]
    # V is the visibility of the clearest channel (blue): beta_B = K / V, the others scaled by a_w / a_w(blue)
    beta = physical.water_extinction(31.25)
    np.testing.assert_allclose(beta, math.log(50) / 31.25 * np.array([0.2755, 0.0474, 0.00979]) / 0.00979)
    np.testing.assert_allclose(physical.water_extinction(31.25, "5%") / beta, math.log(20) / math.log(50))


def test_luminance_transmittance_and_water_vs_fog():
    d = np.array([0.0, 5.0, 40.0, np.inf])
    np.testing.assert_allclose(physical.luminance_transmittance(d, 20.0), physical.transmittance(d, 20.0))
    y = np.array([0.2126, 0.7152, 0.0722])
    want = np.exp(-np.outer(d[:3], physical.water_extinction(20.0))) @ y
    np.testing.assert_allclose(physical.luminance_transmittance(d[:3], 20.0, "water"), want)
    assert physical.luminance_transmittance(d, 20.0, "water")[-1] == 0.0
    np.testing.assert_array_equal(physical.luminance_transmittance(d, math.inf, "water"), 1.0)
    with pytest.raises(ValueError, match="medium must be"):
        physical.luminance_transmittance(d, 20.0, "milk")
    depth = np.full((8, 8), 10.0)
    depth[:2] = np.inf
    table = physical.water_vs_fog(depth, (50.0, 5.0))
    assert list(table.columns) == ["visibility_m", "fog", "water", "water_over_fog", "fog_equivalent_m"]
    assert table["fog"].tolist() == pytest.approx(list(np.exp(-math.log(50) * 10.0 / np.array([50.0, 5.0]))))
    assert (table["water_over_fog"] < 1).all() and (table["fog_equivalent_m"] < table["visibility_m"]).all()
    # the fog visibility with the water arm's transmission gives it back
    for _, r in table.iterrows():
        fog_eq = physical.luminance_transmittance(np.array([10.0]), r["fog_equivalent_m"])[0]
        assert fog_eq == pytest.approx(r["water"], rel=1e-5)
    with pytest.raises(ValueError, match="no finite pixel"):
        physical.water_vs_fog(np.full((4, 4), np.inf))


def test_imagenet_c_fog_gain_and_equivalent_visibility_closed_form():
    img = _img((255, 128, 0))
    assert weather.fog_gain(img, 1) == pytest.approx(1 / 2.5)
    assert weather.fog_gain(img, 5) == pytest.approx(1 / 4)
    d = np.full((40, 40), 30.0, np.float32)
    d[:5] = np.inf  # sky is left out of the gain
    gains, v = physical.fog_equivalent_visibility(img, d)
    k = physical.KOSCHMIEDER["2%"]
    np.testing.assert_allclose(v, k * 30.0 / -np.log(gains), rtol=1e-5)
    assert np.all(np.diff(v) <= 1e-9) and v[0] > v[-1]  # severities 3 and 4 share c = 2.5
    # and the retained gain of physical fog at V_eq is the ImageNet-C gain
    for g, veq in zip(gains, v, strict=True):
        assert physical.retained_contrast_gain(d, veq) == pytest.approx(g, rel=1e-5)
    _, v5 = physical.fog_equivalent_visibility(img, d, convention="5%")
    np.testing.assert_allclose(v5 / v, physical.KOSCHMIEDER["5%"] / k, rtol=1e-5)
    _, none = physical.fog_equivalent_visibility(img, np.full((40, 40), np.inf, np.float32))
    assert np.isnan(none).all()


def test_fog_visibility_table():
    items = [synth.make_item(f, np.random.default_rng(i), size=64) for i, f in enumerate(synth.FAMILIES[:6])]
    per_image, summary = physical.fog_visibility_table([it.image for it in items], [it.depth for it in items])
    assert len(per_image) == 6 * 5 and list(summary["severity"]) == [1, 2, 3, 4, 5]
    assert (summary["iqr_lo_m"] <= summary["median_v_m"]).all()
    assert (summary["median_v_m"] <= summary["iqr_hi_m"]).all()
    assert (summary["p90_over_p10"] >= 1).all()
    assert summary["mean_gain"].is_monotonic_decreasing
    assert summary["mean_gain"].iloc[0] == pytest.approx(per_image.query("severity == 1")["gain"].mean())
    with pytest.raises(ValueError, match="equal length"):
        physical.fog_visibility_table([items[0].image], [])
