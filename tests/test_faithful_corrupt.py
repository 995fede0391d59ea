"""Perturbations checked against outputs computed independently from the papers' words.

Every expected image here is computed without the library's helper for the same
quantity: SciPy for Gaussian blur, Pillow for rotation, resizing, cropping and
contrast, plain NumPy (with its own sRGB codec, written from IEC 61966-2-1) for
fog and water. A centroid written from the rotation matrix fixes the direction
and the angle of every rotation.

Sources quoted:

* seed 001 (BRUCE), §III: "Gaussian blur severity was controlled using kernel
  standard deviations sigma in {1,2,3,4}, while low-contrast perturbations
  employed contrast factors c in {0.30,0.50,0.70,0.90}. Rotation perturbations
  used angles theta in {5,10,15,20} degrees, and center-crop perturbations
  removed increasing fractions of image content using crop ratios
  p in {0.2,0.4,0.6,0.8}."
* seed 002, App. A.6: "Translation (cyclic): horizontal wrap-around (cyclic)
  shifts by dx in {-16,-12,...,16} \\ {0} pixels. - Pad/Crop: symmetric padding
  or cropping by n in {-16,-12,...,16} \\ {0} pixels. - Scale: rescaling by a
  factor alpha (default alpha=0.9) followed by resizing back to the original
  resolution. - Scale+Pad: rescaling followed by padding with a uniform
  background. - Rotation: in-plane rotation by +-30 degrees with interpolation."
* seed 003, Eq. 1 and Table III: I = J t + A (1 - t), t = exp(-beta d); fog
  veiling light A = 0.8 (linear RGB); water a_w(620, 540, 460) = 0.2755,
  0.0474, 0.00979 m^-1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageEnhance
from scipy import ndimage

from vlmrobust import corrupt, synth
from vlmrobust.corrupt import weather

PAPER_SIGMAS = (1.0, 2.0, 3.0, 4.0)
PAPER_CONTRAST = (0.30, 0.50, 0.70, 0.90)
PAPER_ANGLES = (5.0, 10.0, 15.0, 20.0)
PAPER_CROP = (0.2, 0.4, 0.6, 0.8)
PAPER_OFFSETS = (-16, -12, -8, -4, 4, 8, 12, 16)
PAPER_SCALES = (0.9, 0.75, 0.5)
K_2PCT = math.log(1 / 0.02)  # Koschmieder, 2 % contrast threshold: 3.912
A_W = np.array([0.2755, 0.0474, 0.00979])  # seed 003 Table III, R G B


def _smooth_image(h=64, w=96, seed=5):
    """A random image blurred a little, so interpolation methods agree to about one level."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 255, (h, w, 3))
    return np.clip(ndimage.gaussian_filter(x, (1.5, 1.5, 0)) * 2.5 - 190, 0, 255).round().astype(np.uint8)


@pytest.fixture(scope="module")
def noisy():
    return np.random.default_rng(11).integers(0, 256, (64, 96, 3), dtype=np.uint8)


# --- sRGB, written from IEC 61966-2-1 ---------------------------------------------------------------

def _decode(v8):
    v = np.asarray(v8, dtype=np.float64) / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def _encode(x):
    x = np.clip(x, 0.0, 1.0)
    return 255.0 * np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055)


# --- BRUCE blur: SciPy's Gaussian filter with the paper's sigma ------------------------------------------

def test_bruce_blur_is_a_gaussian_of_the_papers_sigma(noisy):
    for level, sigma in enumerate(PAPER_SIGMAS, start=1):
        want = ndimage.gaussian_filter(noisy.astype(np.float64), (sigma, sigma, 0), mode="nearest", truncate=4.0)
        got = corrupt.apply(noisy, "bruce_blur", level).astype(np.float64)
        assert np.abs(got - want).max() <= 1.0, f"level {level} (sigma {sigma})"


# --- rotations: direction and angle from the rotation matrix, pixels from Pillow ---------------------

def _blob(size=97, dx=35.0, dy=0.0, s=2.0):
    """A Gaussian spot at (dx, dy) px from the centre (x to the right, y down)."""
    c = (size - 1) / 2
    yy, xx = np.mgrid[0:size, 0:size]
    g = np.exp(-((xx - c - dx) ** 2 + (yy - c - dy) ** 2) / (2 * s * s))
    return np.repeat((255 * g).round().astype(np.uint8)[..., None], 3, axis=2)


def _centroid(img):
    """Intensity-weighted centroid relative to the image centre, (x right, y down)."""
    w = img[..., 0].astype(np.float64)
    yy, xx = np.mgrid[0:img.shape[0], 0:img.shape[1]]
    c = (img.shape[0] - 1) / 2
    return (xx * w).sum() / w.sum() - c, (yy * w).sum() / w.sum() - c


def _ccw(theta_deg, dx=35.0, dy=0.0):
    """Where a counter-clockwise rotation (as seen on screen, y down) takes the point (dx, dy)."""
    t = math.radians(theta_deg)
    return dx * math.cos(t) + dy * math.sin(t), -dx * math.sin(t) + dy * math.cos(t)


def _pil_rotate(img, theta_deg):
    """Pillow's rotate: counter-clockwise for positive angles, about the centre, same size, bilinear."""
    return np.asarray(Image.fromarray(img).rotate(theta_deg, resample=Image.BILINEAR, fillcolor=(0, 0, 0)))


def _inside(shape, theta_deg):
    """Pixels at least 2 px inside the rotated image frame (where no border blending happens)."""
    white = _pil_rotate(np.full(shape, 255, np.uint8), theta_deg)[..., 0] == 255
    return ndimage.binary_erosion(white, iterations=2)


@pytest.mark.parametrize("level, theta", list(enumerate(PAPER_ANGLES, start=1)))
def test_bruce_rotation_is_counter_clockwise_by_the_papers_angle(level, theta):
    out = corrupt.apply(_blob(), "bruce_rotate", level)
    assert _centroid(out) == pytest.approx(_ccw(theta), abs=0.15)
    img = _smooth_image(97, 97)
    got = corrupt.apply(img, "bruce_rotate", level).astype(np.float64)
    want = _pil_rotate(img, theta).astype(np.float64)
    assert np.abs(got - want)[_inside(img.shape, theta)].max() <= 1.0  # Pillow truncates, OpenCV rounds


@pytest.mark.parametrize("level, theta", [(1, -30.0), (2, 30.0)])
def test_seed002_rotation_is_minus_then_plus_30_degrees(level, theta):
    # level 1 = -30 degrees (clockwise on screen), level 2 = +30 (counter-clockwise)
    out = corrupt.apply(_blob(), "rotate", level)
    assert _centroid(out) == pytest.approx(_ccw(theta), abs=0.15)
    img = _smooth_image(97, 97)
    got = corrupt.apply(img, "rotate", level).astype(np.float64)
    want = _pil_rotate(img, theta).astype(np.float64)
    assert np.abs(got - want)[_inside(img.shape, theta)].max() <= 1.0


# --- BRUCE contrast and center crop -------------------------------------------------------------------

def test_bruce_contrast_matches_pillow_with_the_contrast_factor_kept():
    # "contrast factors c": Pillow's and torchvision's factor is the share of contrast kept; the ladder
    # escalates, so level 1 keeps the most (0.9) and level 4 the least (0.3)
    img = _smooth_image()
    for level, c in enumerate(sorted(PAPER_CONTRAST, reverse=True), start=1):
        # Pillow's Contrast blends with the mean of the image's L (BT.601) channel, rounded to an integer
        want = np.asarray(ImageEnhance.Contrast(Image.fromarray(img)).enhance(c)).astype(np.float64)
        got = corrupt.apply(img, "bruce_contrast", level).astype(np.float64)
        assert np.abs(got - want).max() <= 1.0, f"level {level} (c {c})"
    assert corrupt.info("bruce_contrast").params == (0.9, 0.7, 0.5, 0.3)


def test_bruce_contrast_other_reading_removes_the_share_c():
    img = _smooth_image()
    for level, c in enumerate(PAPER_CONTRAST, start=1):
        want = np.asarray(ImageEnhance.Contrast(Image.fromarray(img)).enhance(1.0 - c)).astype(np.float64)
        got = corrupt.apply(img, "bruce_contrast", level, reading="removed").astype(np.float64)
        assert np.abs(got - want).max() <= 1.0, f"level {level} (c {c})"
    with pytest.raises(ValueError, match="contrast reading"):
        corrupt.apply(img, "bruce_contrast", 1, reading="halved")


def _pil_center_crop(img, side_kept):
    h, w = img.shape[:2]
    kh, kw = round(side_kept * h), round(side_kept * w)
    y0, x0 = (h - kh) // 2, (w - kw) // 2
    return np.asarray(Image.fromarray(img).crop((x0, y0, x0 + kw, y0 + kh)).resize((w, h), Image.BILINEAR))


def test_bruce_center_crop_removes_the_share_p_of_the_area():
    img = _smooth_image()
    h, w = img.shape[:2]
    for level, p in enumerate(PAPER_CROP, start=1):
        want = _pil_center_crop(img, math.sqrt(1 - p))  # kept area (1 - p): sqrt(1 - p) of each side
        got = corrupt.apply(img, "bruce_center_crop", level)
        diff = np.abs(got.astype(np.float64) - want)
        assert diff[2:-2, 2:-2].max() <= 2.0 and diff.mean() < 0.5, f"level {level} (p {p})"
    # the area kept, measured on a centred square: it grows by 1 / sqrt(1 - p) per side
    sq = np.zeros((100, 100, 3), np.uint8)
    sq[40:60, 40:60] = 255
    for level, p in enumerate(PAPER_CROP, start=1):
        side = (corrupt.apply(sq, "bruce_center_crop", level)[50, :, 0] > 127).sum()
        assert side == pytest.approx(20 / math.sqrt(1 - p), abs=2)


def test_bruce_center_crop_other_reading_removes_the_share_p_of_each_side():
    img = _smooth_image()
    for level, p in enumerate(PAPER_CROP, start=1):
        want = _pil_center_crop(img, 1 - p)
        got = corrupt.apply(img, "bruce_center_crop", level, reading="side")
        diff = np.abs(got.astype(np.float64) - want)
        assert diff[2:-2, 2:-2].max() <= 2.0 and diff.mean() < 0.5, f"level {level} (p {p})"


# --- seed 002: translation, pad/crop, scale, scale+pad ------------------------------------------------

def test_translation_shifts_right_by_dx_native_px_or_at_224_px(noisy):
    w = noisy.shape[1]  # 96 px: dx = -16 .. 16 at 224 px is -7, -5, -3, -2, 2, 3, 5, 7 columns
    assert [int(round(dx * w / 224)) for dx in PAPER_OFFSETS] == [-7, -5, -3, -2, 2, 3, 5, 7]
    for level, dx in enumerate(PAPER_OFFSETS, start=1):
        for reading, s in (("fixed", dx), ("scaled", int(round(dx * w / 224)))):
            out = corrupt.apply(noisy, "translate", level, reading=reading)
            # column j of the output is column j - s of the input, wrapping around
            np.testing.assert_array_equal(out, noisy[:, (np.arange(w) - s) % w])


def _area_weights(n_in: int, n_out: int) -> np.ndarray:
    """``(n_out, n_in)`` weights of an exact area average: overlap of output cell j with input pixel i."""
    s = n_in / n_out
    lo = np.arange(n_out)[:, None] * s
    i = np.arange(n_in)[None, :]
    return np.clip(np.minimum(lo + s, i + 1) - np.maximum(lo, i), 0, None) / s


def _resize(img, w, h):
    """Shrinking: the exact area average (NumPy); enlarging: Pillow's bilinear."""
    if w * h < img.shape[0] * img.shape[1]:
        out = np.einsum("yi,ixc,jx->yjc", _area_weights(img.shape[0], h), img.astype(np.float64),
                        _area_weights(img.shape[1], w))
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR))


@pytest.mark.parametrize("reading", ["fixed", "scaled"])
def test_pad_crop_pads_or_crops_n_px_per_side_and_resizes_back(reading):
    img = _smooth_image()
    h, w = img.shape[:2]
    for level, n in enumerate(PAPER_OFFSETS, start=1):
        ny, nx = ((abs(n), abs(n)) if reading == "fixed"
                  else (int(round(abs(n) * h / 224)), int(round(abs(n) * w / 224))))
        if n > 0:
            big = np.zeros((h + 2 * ny, w + 2 * nx, 3), np.uint8)
            big[ny:ny + h, nx:nx + w] = img
            want = _resize(big, w, h)
        else:
            want = _resize(np.ascontiguousarray(img[ny:h - ny, nx:w - nx]), w, h)
        got = corrupt.apply(img, "pad_crop", level, reading=reading)
        diff = np.abs(got.astype(np.float64) - want)
        assert diff[2:-2, 2:-2].max() <= 2.0 and diff.mean() < 0.5, f"level {level} (n {n})"


def test_scale_and_scale_pad_follow_alpha():
    img = _smooth_image()
    h, w = img.shape[:2]
    for level, alpha in enumerate(PAPER_SCALES, start=1):
        kw, kh = round(alpha * w), round(alpha * h)
        small = _resize(img, kw, kh)
        want = _resize(small, w, h)
        got = corrupt.apply(img, "scale", level)
        diff = np.abs(got.astype(np.float64) - want)
        assert diff[2:-2, 2:-2].max() <= 2.0 and diff.mean() < 0.5, f"scale level {level}"
        canvas = np.zeros_like(img)
        y0, x0 = (h - kh) // 2, (w - kw) // 2
        canvas[y0:y0 + kh, x0:x0 + kw] = small
        got = corrupt.apply(img, "scale_pad", level)
        assert np.abs(got.astype(np.float64) - canvas).max() <= 1.0, f"scale_pad level {level}"


# --- seed 003: fog and water transmission ---------------------------------------------------------------

def _depth_ramp(h=40, w=48):
    d = np.tile(np.geomspace(0.5, 400.0, w), (h, 1))
    d[:4] = np.inf
    return d


def test_fog_is_eq1_with_t_exp_minus_3912_d_over_v(noisy):
    img = noisy[:40, :48]
    d = _depth_ramp()
    for level in range(1, 9):
        v = 250.0 / 2 ** (level - 1)
        t = np.exp(-K_2PCT * d / v)[..., None]
        want = _encode(_decode(img) * t + 0.8 * (1 - t))
        got = corrupt.apply(img, "fog_physical", level, depth=d).astype(np.float64)
        assert np.abs(got - want).max() <= 1.0, f"level {level}"
    # the 5 % meteorological-optical-range option: K = ln 20
    t = np.exp(-math.log(20) * d / 31.25)[..., None]
    got = corrupt.apply(img, "fog_physical", 4, depth=d, convention="5%").astype(np.float64)
    assert np.abs(got - _encode(_decode(img) * t + 0.8 * (1 - t))).max() <= 1.0


def test_water_is_eq1_with_beta_scaled_to_the_clearest_channel(noisy):
    img = noisy[:40, :48]
    d = _depth_ramp()
    veil = np.array([0.05, 0.40, 0.45])
    for level in range(1, 9):
        v = 250.0 / 2 ** (level - 1)
        beta = (K_2PCT / v) * A_W / A_W[2]  # blue keeps 2 % contrast at d = V, exactly like fog
        t = np.exp(-d[..., None] * beta)
        want = _encode(_decode(img) * t + veil * (1 - t))
        got = corrupt.apply(img, "underwater", level, depth=d).astype(np.float64)
        assert np.abs(got - want).max() <= 1.0, f"level {level}"
    beta = (math.log(20) / 31.25) * A_W / A_W[2]
    t = np.exp(-d[..., None] * beta)
    got = corrupt.apply(img, "underwater", 4, depth=d, convention="5%").astype(np.float64)
    assert np.abs(got - _encode(_decode(img) * t + veil * (1 - t))).max() <= 1.0


def _luminance_through(name, level, depth):
    """Linear luminance difference white minus black after the perturbation (the veiling light cancels)."""
    h, w = depth.shape
    white, black = (np.full((h, w, 3), v, np.uint8) for v in (255, 0))
    y = np.array([0.2126, 0.7152, 0.0722])  # BT.709 luminance of linear sRGB
    diff = _decode(corrupt.apply(white, name, level, depth=depth)) - _decode(
        corrupt.apply(black, name, level, depth=depth))
    return float((diff @ y)[np.isfinite(depth)].mean())


def test_water_is_at_least_as_harsh_as_fog_at_equal_visibility_on_a_standard_scene():
    scene = synth.make_item("count", np.random.default_rng(3), size=96)  # notebook 02's showcase scene
    fog = [_luminance_through("fog_physical", k, scene.depth) for k in range(1, 9)]
    water = [_luminance_through("underwater", k, scene.depth) for k in range(1, 9)]
    for k in range(8):
        assert water[k] <= fog[k] + 2e-3, f"level {k + 1}: water {water[k]:.4f} milder than fog {fog[k]:.4f}"
    assert all(w < 0.75 * f for w, f in zip(water[:5], fog[:5], strict=True))  # clearly harsher where visible


def test_underwater_clearest_channel_keeps_two_percent_at_the_visibility():
    # blue at d = V: t = 0.02, so a white pixel is 2 % of the way from the veiling light to white
    v = 15.625
    d = np.full((32, 32), v)
    out = _decode(corrupt.apply(np.full((32, 32, 3), 255, np.uint8), "underwater", 5, depth=d))[0, 0]
    assert out[2] == pytest.approx(0.45 + 0.02 * (1 - 0.45), abs=2e-3)
    assert out[1] == pytest.approx(0.40 + 0.02 ** (0.0474 / 0.00979) * 0.60, abs=2e-3)
    assert out[0] == pytest.approx(0.05, abs=2e-3)


# --- ImageNet-C fog gain on an image whose maximum is below 255 ----------------------------------------

IMAGENET_C_FOG_C = (1.5, 2.0, 2.5, 2.5, 3.0)  # haze strength of imagecorruptions' fog, severities 1-5


def test_fog_gain_uses_the_image_maximum():
    rng = np.random.default_rng(2)
    x1 = rng.integers(0, 129, (64, 64, 3)).astype(np.uint8)
    x1[0, 0] = 128  # maximum 128 of 255
    x2 = x1 // 2
    x2[0, 0] = 128  # the same maximum, half the contrast elsewhere
    m = 128 / 255
    for s, c in enumerate(IMAGENET_C_FOG_C, start=1):
        g = m / (m + c)  # imagecorruptions: (x + c plasma) * max / (max + c)
        assert weather.fog_gain(x1, s) == pytest.approx(g, rel=1e-12)
        # the gain the reference package applies: differences of two images under the same haze
        for backend in ("native", "reference"):
            o1 = corrupt.apply(x1, "fog", s, seed=4, key="q", backend=backend).astype(np.float64)
            o2 = corrupt.apply(x2, "fog", s, seed=4, key="q", backend=backend).astype(np.float64)
            sel = (o1 < 254) & (o2 < 254)  # not clipped at white
            measured = (o1 - o2)[sel].sum() / (x1.astype(np.float64) - x2)[sel].sum()
            assert measured == pytest.approx(g, rel=0.03), (backend, s)


# --- helpers of the physical arms, ladders' edges -------------------------------------------------------

def test_srgb_codec_follows_iec_61966_2_1():
    from vlmrobust.corrupt import physical

    v = np.array([0.0, 0.02, 0.04045, 0.2, 0.5, 1.0])
    np.testing.assert_allclose(physical.srgb_to_linear(v), _decode(v * 255), rtol=1e-12, atol=1e-15)
    assert physical.srgb_to_linear(np.array([0.02]))[0] == pytest.approx(0.02 / 12.92, rel=1e-12)
    assert physical.srgb_to_linear(np.array([0.5]))[0] == pytest.approx(((0.5 + 0.055) / 1.055) ** 2.4, rel=1e-12)
    x = np.array([-0.1, 0.0, 0.001, 0.2, 1.0, 1.5])
    np.testing.assert_allclose(physical.linear_to_srgb(x), _encode(x) / 255, rtol=1e-12, atol=1e-15)
    assert physical.linear_to_srgb(np.array([-0.1]))[0] == 0.0
    assert physical.linear_to_srgb(np.array([1.5]))[0] == pytest.approx(1.0, abs=1e-12)


def test_visibility_and_colour_arguments_are_checked():
    from vlmrobust.corrupt import physical

    with pytest.raises(TypeError) as e:
        physical.extinction(True)
    assert str(e.value) == "visibility must be a number of metres, got bool"
    with pytest.raises(TypeError) as e:
        physical.extinction("10")
    assert str(e.value) == "visibility must be a number of metres, got str"
    img = np.full((32, 32, 3), 128, np.uint8)
    d = np.full((32, 32), 5.0)
    for ok in ((0.0, 0.0, 1.0), (1.0, 1.0, 1.0), 0.0):
        physical.underwater(img, d, 10.0, veiling_light=ok)
    for bad in ((-0.1, 0.4, 0.4), (0.1, 1.2, 0.4), (np.nan, 0.4, 0.4)):
        with pytest.raises(ValueError) as e:
            physical.underwater(img, d, 10.0, veiling_light=bad)
        assert str(e.value) == f"veiling_light must be in [0, 1] (linear RGB, one value or three), got {bad!r}"
    # the default convention is the 2 % threshold, and the ladder passes its options on
    np.testing.assert_array_equal(physical.underwater(img, d, 10.0), physical.underwater(img, d, 10.0, convention="2%"))
    blue = corrupt.apply(img, "underwater", 8, depth=np.full((32, 32), np.inf), veiling_light=(0.0, 0.0, 1.0))
    assert (blue == [0, 0, 255]).all()


def test_transmission_helpers_shapes_conventions_and_the_sky():
    from vlmrobust.corrupt import physical

    d = np.full((2, 3), 7.0)
    assert physical.transmittance(d, math.inf).shape == (2, 3)
    assert physical.luminance_transmittance(d, math.inf, "water").shape == (2, 3)
    np.testing.assert_array_equal(physical.luminance_transmittance(d, math.inf, "water"), 1.0)
    np.testing.assert_allclose(physical.luminance_transmittance(d, 20.0, "fog", "5%"), np.exp(-math.log(20) * 7 / 20))
    assert physical.retained_contrast_gain(np.array([[10.0]]), 25.0) == pytest.approx(math.exp(-K_2PCT * 10 / 25))
    assert physical.retained_contrast_gain(np.array([[10.0]]), 25.0, "5%") == pytest.approx(
        math.exp(-math.log(20) * 0.4))
    assert math.isnan(physical.retained_contrast_gain(np.full((2, 2), np.inf), 25.0))
    t5 = physical.water_vs_fog(np.full((4, 4), 10.0), (20.0,), convention="5%").iloc[0]
    beta = math.log(20) / 20 * A_W / A_W[2]
    assert t5["fog"] == pytest.approx(math.exp(-math.log(20) * 0.5))
    assert t5["water"] == pytest.approx(float(np.exp(-10 * beta) @ [0.2126, 0.7152, 0.0722]))
    assert t5["water_over_fog"] == pytest.approx(t5["water"] / t5["fog"])
    clear = physical.water_vs_fog(np.full((4, 4), 10.0), (math.inf,)).iloc[0]
    assert clear["water"] == 1.0 and clear["fog_equivalent_m"] == math.inf
    with pytest.raises(ValueError) as e:
        physical.water_vs_fog(np.full((4, 4), np.inf))
    assert str(e.value) == "depth has no finite pixel (all sky): the two arms cannot be compared"


def test_fog_equivalent_visibility_below_one_metre_and_at_zero_depth():
    from vlmrobust.corrupt import physical

    img = np.full((32, 32, 3), 255, np.uint8)
    gains, v = physical.fog_equivalent_visibility(img, np.full((32, 32), 0.1))  # a board 10 cm away
    np.testing.assert_allclose(v, K_2PCT * 0.1 / -np.log(gains), rtol=1e-5)
    assert (v < 1).all()
    half = np.full((32, 32), 30.0)
    half[:16] = 0.0  # half of the pixels at d = 0 keep all their contrast: a gain below 0.5 needs V = 0
    gains, v = physical.fog_equivalent_visibility(img, half)
    assert (gains < 0.5).all() and (v == 0.0).all()


def test_fog_visibility_table_summary_from_numpy_quantiles():
    from vlmrobust.corrupt import physical

    rng = np.random.default_rng(4)
    imgs = [np.full((32, 32, 3), 255, np.uint8) for _ in range(7)]
    deps = [np.full((32, 32), float(d)) for d in rng.uniform(5, 80, 7)]
    per, summ = physical.fog_visibility_table(imgs, deps, severities=(3, 1))
    assert list(per.columns) == ["image", "severity", "gain", "v_eq_m"] and per["image"].tolist()[:2] == [0, 0]
    assert summ["severity"].tolist() == [1, 3]
    for _, r in summ.iterrows():
        v = per.loc[per["severity"] == r["severity"], "v_eq_m"].to_numpy()
        q = np.quantile(v, [0.1, 0.25, 0.5, 0.75, 0.9])
        assert (r["p10_m"], r["iqr_lo_m"], r["median_v_m"], r["iqr_hi_m"], r["p90_m"]) == pytest.approx(tuple(q))
        assert r["p90_over_p10"] == pytest.approx(q[4] / q[0]) and r["n_images"] == 7 and r["n_without_solution"] == 0
    one = physical.fog_visibility_table(imgs[:1], deps[:1])[1]
    assert one["n_images"].tolist() == [1] * 5
    sky = physical.fog_visibility_table(imgs[:2], [np.full((32, 32), np.inf)] * 2)[1]
    assert sky["median_v_m"].isna().all() and sky["p90_over_p10"].isna().all()
    assert sky["n_without_solution"].tolist() == [2] * 5
    five = physical.fog_visibility_table(imgs[:1], deps[:1], convention="5%")[0]
    np.testing.assert_allclose(five["v_eq_m"], physical.fog_equivalent_visibility(imgs[0], deps[0], convention="5%")[1],
                               rtol=1e-9)


def test_rotation_fill_and_traversal_direction_message():
    from vlmrobust.corrupt import escalation

    out = escalation.rotate(np.full((33, 33, 3), 200, np.uint8), 45.0, fill=(255, 0, 0))
    assert (out[0, 0] == [255, 0, 0]).all() and (out[16, 16] == 200).all()
    with pytest.raises(ValueError) as e:
        escalation.traverse(np.zeros((32, 32, 3), np.uint8), "diagonal", 0.2)
    assert str(e.value) == ("direction must be one of topdown, bottomup, leftright, rightleft; got 'diagonal'")


def test_scaled_offsets_never_round_to_zero():
    from vlmrobust.corrupt import natural

    assert natural.scaled_offset(4, 20) == 1 and natural.scaled_offset(-4, 20) == -1  # 0.36 px rounds to 0
    assert natural.scaled_offset(0, 20) == 0 and natural.scaled_offset(16, 20) == 1
    assert natural.scaled_offset(-12, 20) == -1 and natural.scaled_offset(12, 48) == 3


def test_fractional_offsets_and_the_p90_over_p10_guard():
    from vlmrobust.corrupt import natural, physical

    assert natural.scaled_offset(0.5, 224) == 1 and natural.scaled_offset(-0.5, 224) == -1
    img = np.full((32, 32, 3), 255, np.uint8)
    half = np.full((32, 32), 30.0)
    half[:16] = 0.0  # V_eq = 0 for every severity: P10 is 0 and the spread is undefined
    near = np.full((32, 32), 0.1)  # V_eq below 1 m, still positive
    summ = physical.fog_visibility_table([img] * 10, [half] * 2 + [np.full((32, 32), 30.0)] * 8)[1]
    assert summ["p10_m"].tolist() == [0.0] * 5 and (summ["p90_m"] > 0).all() and summ["p90_over_p10"].isna().all()
    summ = physical.fog_visibility_table([img, img], [near, np.full((32, 32), 0.2)])[1]
    assert ((summ["p10_m"] > 0) & (summ["p10_m"] < 1)).all()
    np.testing.assert_allclose(summ["p90_over_p10"], summ["p90_m"] / summ["p10_m"])
