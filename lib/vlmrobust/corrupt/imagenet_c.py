"""ImageNet-C noise, blur, photometric and digital corruptions (seed 000 §IV-B).

Bench-C (seed 000, §IV-B "Controlled Corruption Protocol") applies the 19
ImageNet-C corruption types at five ordered severities. The severity
parameters below are the published ones (Hendrycks & Dietterich 2019, as
maintained in PyPI ``imagecorruptions-imaug``); the implementations are
vectorised re-writes (float32, OpenCV, lookup tables) of the same operations.
Like the published code, every result is clipped to [0, 255] and truncated to
``uint8`` (not rounded), so outputs agree with the reference to within a grey
level. The weather types live in :mod:`.weather`.

Families follow Bench-C's grouping (seed 000 §IV-B: photometric changes, blur,
noise, weather and digital artefacts); ``extra["imagenet_c_split"]`` keeps the
original split ("common" for the 15 benchmark types, "validation" for
speckle_noise, gaussian_blur, spatter and saturate).
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from . import _filters as F
from ._core import PerturbationInfo, to_uint8_trunc

__all__ = ["SEVERITY_PARAMS", "NAMES"]

# Published severity parameters, severity 1..5 (imagecorruptions-imaug 1.1.5).
SEVERITY_PARAMS: dict[str, list] = {
    "gaussian_noise": [0.08, 0.12, 0.18, 0.26, 0.38],
    "shot_noise": [60, 25, 12, 5, 3],
    "impulse_noise": [0.03, 0.06, 0.09, 0.17, 0.27],
    "speckle_noise": [0.15, 0.2, 0.35, 0.45, 0.6],
    "defocus_blur": [(3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)],
    "glass_blur": [(0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2)],
    "motion_blur": [(10, 3), (15, 5), (15, 8), (15, 12), (20, 15)],
    "zoom_blur": [np.arange(1, 1.11, 0.01), np.arange(1, 1.16, 0.01), np.arange(1, 1.21, 0.02),
                  np.arange(1, 1.26, 0.02), np.arange(1, 1.31, 0.03)],
    "gaussian_blur": [1, 2, 3, 4, 6],
    "brightness": [0.1, 0.2, 0.3, 0.4, 0.5],
    "contrast": [0.4, 0.3, 0.2, 0.1, 0.05],
    "saturate": [(0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2)],
    "elastic_transform": [250 * 0.05, 250 * 0.065, 250 * 0.085, 250 * 0.1, 250 * 0.12],
    "pixelate": [0.6, 0.5, 0.4, 0.3, 0.25],
    "jpeg_compression": [25, 18, 15, 10, 7],
}

_LEVELS = (1, 2, 3, 4, 5)


def _c(name: str, severity: int):
    return SEVERITY_PARAMS[name][severity - 1]


# ----------------------------------------------------------------------------- noise


def gaussian_noise(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """``clip(x + N(0, c^2))`` in [0, 1] units, c = 0.08 .. 0.38."""
    noise = rng.standard_normal(x.shape, dtype=np.float32)
    noise *= np.float32(255.0 * _c("gaussian_noise", s))
    noise += x
    return to_uint8_trunc(noise)


def shot_noise(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Photon noise ``Poisson(x c) / c`` with c = 60 .. 3 photons at full scale."""
    c = _c("shot_noise", s)
    counts = F.poisson_uint8(x, c, rng)
    kmax = int(counts.max()) + 1
    lut = np.clip(np.arange(kmax) / float(c), 0, 1) * 255  # the published float64 arithmetic
    return lut.astype(np.uint8)[counts]


def impulse_noise(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Salt-and-pepper: each value becomes 255 or 0 with probability c/2 each (c = 0.03 .. 0.27).

    scikit-image's ``random_noise(mode='s&p')`` draws a flip and a salt/pepper
    coin independently per value; one uniform draw ``u`` gives the same law
    (``u < c/2`` salt, ``c/2 <= u < c`` pepper).
    """
    c = _c("impulse_noise", s)
    u = rng.random(x.shape, dtype=np.float32)
    out = x.copy()
    out[u < c] = 0
    out[u < c / 2] = 255
    return out


def speckle_noise(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Multiplicative noise ``clip(x + x N(0, c^2))`` with c = 0.15 .. 0.6."""
    noise = rng.standard_normal(x.shape, dtype=np.float32)
    noise *= np.float32(_c("speckle_noise", s))
    noise += np.float32(1.0)
    noise *= x
    return to_uint8_trunc(noise)


# ----------------------------------------------------------------------------- blur


def gaussian_blur(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Gaussian blur, sigma = 1, 2, 3, 4, 6 px (scikit-image defaults: truncate 4, nearest edge)."""
    return to_uint8_trunc(F.gaussian(x.astype(np.float32), _c("gaussian_blur", s)))


def defocus_blur(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Convolution with an anti-aliased disk of radius 3 .. 10 px (OpenCV default border)."""
    radius, alias = _c("defocus_blur", s)
    kern = F.disk_kernel(radius, alias)
    return to_uint8_trunc(cv2.filter2D(x.astype(np.float32), cv2.CV_32F, kern))


def glass_blur(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Blur, local pixel shuffle (max offset d, n passes), blur again: (sigma, d, n) per severity."""
    sigma, delta, iters = _c("glass_blur", s)
    y = F.gaussian(x.astype(np.float32), sigma).astype(np.uint8)
    y = F.glass_shuffle(y, delta, iters, rng)
    return to_uint8_trunc(F.gaussian(y.astype(np.float32), sigma))


def motion_blur(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Linear motion blur along a random angle in [-45, 45) degrees: (radius, sigma) per severity."""
    radius, sigma = _c("motion_blur", s)
    angle = rng.uniform(-45, 45)
    return to_uint8_trunc(F.motion_blur(x, radius, sigma, angle))


def zoom_blur(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Mean of the image and its centre zooms by factors 1 .. 1.1-1.3 (radial blur)."""
    h, w = x.shape[:2]
    xf = x.astype(np.float32)
    acc = xf.copy()
    zooms = _c("zoom_blur", s)
    for z in zooms:
        layer = F.clipped_zoom(xf, z, out_shape=(h, w))
        acc[: layer.shape[0], : layer.shape[1]] += layer
    acc *= np.float32(1.0 / (len(zooms) + 1))
    return to_uint8_trunc(acc)


# ----------------------------------------------------------------------------- photometric


def brightness(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Add c = 0.1 .. 0.5 to HSV value V (clipped at 1), keeping hue and saturation.

    With hue and saturation fixed, every channel scales by ``V'/V`` (a black
    pixel becomes grey ``c``), so no HSV round trip is needed.
    """
    c = _c("brightness", s)
    xf = x.astype(np.float32)
    v = xf.max(axis=2, keepdims=True)
    v_new = np.minimum(v + np.float32(255.0 * c), np.float32(255.0))
    ratio = np.divide(v_new, v, out=np.zeros_like(v), where=v > 0)
    out = xf * ratio
    black = v[..., 0] == 0
    if black.any():
        out[black] = np.float32(255.0 * c)
    return to_uint8_trunc(out)


def saturate(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """HSV saturation ``S' = clip(a S + b, 0, 1)``: (a, b) = (0.3, 0) .. (20, 0.2).

    At fixed hue and value each channel is ``V - (V - x) S'/S``; grey pixels
    (S = 0, hue 0 by scikit-image's convention) become ``(V, V(1-b), V(1-b))``.
    """
    a, b = _c("saturate", s)
    xf = x.astype(np.float32)
    v = xf.max(axis=2, keepdims=True)
    mn = xf.min(axis=2, keepdims=True)
    sat = np.divide(v - mn, v, out=np.zeros_like(v), where=v > 0)
    sat_new = np.clip(sat * np.float32(a) + np.float32(b), 0, 1)
    ratio = np.divide(sat_new, sat, out=np.zeros_like(v), where=sat > 0)
    out = v - (v - xf) * ratio
    if b > 0:
        grey = (sat[..., 0] == 0) & (v[..., 0] > 0)
        if grey.any():
            vg = v[grey]
            out[grey] = np.concatenate([vg, vg * np.float32(1 - b), vg * np.float32(1 - b)], axis=1)
    return to_uint8_trunc(out)


def contrast(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Per-channel ``(x - mean) c + mean`` with c = 0.4 .. 0.05, as a 256-entry lookup table."""
    c = _c("contrast", s)
    means = np.array(cv2.mean(x)[:3]) / 255.0
    grey = np.arange(256, dtype=np.float64)[:, None] / 255.0
    lut = np.clip((grey - means[None, :]) * c + means[None, :], 0, 1) * 255
    return cv2.LUT(x, lut.astype(np.uint8).reshape(256, 1, 3))


# ----------------------------------------------------------------------------- digital


def elastic_transform(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Smooth random displacement field (sigma = 1 % of the size, gain alpha), bilinear resampling.

    Displacements are uniform in +-0.5 % of the height, Gaussian-smoothed
    (truncate 3, reflect) and scaled by alpha = 12.5 .. 30; the image is
    resampled at ``(y + dy, x + dx)`` with a reflecting border
    (``cv2.remap`` in place of ``scipy.ndimage.map_coordinates(order=1)``).
    """
    h, w = x.shape[:2]
    alpha = _c("elastic_transform", s)
    sigma = (h * 0.01, w * 0.01)
    max_d = h * 0.005
    field = rng.random((2, h, w), dtype=np.float32)
    field *= np.float32(2 * max_d)
    field -= np.float32(max_d)
    dx = F.gaussian(field[0], sigma, truncate=3, mode="reflect") * np.float32(alpha)
    dy = F.gaussian(field[1], sigma, truncate=3, mode="reflect") * np.float32(alpha)
    gx = np.arange(w, dtype=np.float32)[None, :] + dx
    gy = np.arange(h, dtype=np.float32)[:, None] + dy
    out = cv2.remap(x.astype(np.float32), gx, gy, interpolation=cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REFLECT)
    return to_uint8_trunc(out)


def pixelate(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """Box-downsample to c = 0.6 .. 0.25 of the size (Pillow BOX), nearest-upsample back.

    The down-sampling is Pillow's own BOX filter (the published definition); the
    nearest-neighbour enlargement uses OpenCV's Pillow-compatible
    ``INTER_NEAREST_EXACT`` on the small array.
    """
    c = _c("pixelate", s)
    h, w = x.shape[:2]
    small = np.asarray(Image.fromarray(x).resize((int(w * c), int(h * c)), Image.BOX))
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_NEAREST_EXACT)


def jpeg_compression(x: np.ndarray, s: int, rng=None, depth=None) -> np.ndarray:
    """JPEG encode/decode at quality 25 .. 7 (libjpeg, 4:2:0 chroma subsampling)."""
    q = _c("jpeg_compression", s)
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(x, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:  # pragma: no cover - libjpeg failure
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR_RGB)


# ----------------------------------------------------------------------------- registration

_SPECS = [
    # name, family, param name, unit, params per level, random, split
    ("gaussian_noise", "noise", "noise std", "fraction of full scale", SEVERITY_PARAMS["gaussian_noise"], True),
    ("shot_noise", "noise", "photons at full scale", "photons", SEVERITY_PARAMS["shot_noise"], True),
    ("impulse_noise", "noise", "salt-and-pepper amount", "fraction of values", SEVERITY_PARAMS["impulse_noise"], True),
    ("defocus_blur", "blur", "disk radius", "px", [c[0] for c in SEVERITY_PARAMS["defocus_blur"]], False),
    ("glass_blur", "blur", "blur sigma", "px", [c[0] for c in SEVERITY_PARAMS["glass_blur"]], True),
    ("motion_blur", "blur", "kernel radius", "px", [c[0] for c in SEVERITY_PARAMS["motion_blur"]], True),
    ("zoom_blur", "blur", "largest zoom factor", "ratio", [float(z[-1]) for z in SEVERITY_PARAMS["zoom_blur"]], False),
    ("brightness", "photometric", "HSV value shift", "fraction of full scale", SEVERITY_PARAMS["brightness"], False),
    ("contrast", "photometric", "contrast factor", "ratio", SEVERITY_PARAMS["contrast"], False),
    ("elastic_transform", "digital", "displacement gain alpha", "px", SEVERITY_PARAMS["elastic_transform"], True),
    ("pixelate", "digital", "downsampling factor", "ratio", SEVERITY_PARAMS["pixelate"], False),
    ("jpeg_compression", "digital", "JPEG quality", "quality", SEVERITY_PARAMS["jpeg_compression"], False),
    ("speckle_noise", "noise", "noise std", "relative", SEVERITY_PARAMS["speckle_noise"], True),
    ("gaussian_blur", "blur", "sigma", "px", SEVERITY_PARAMS["gaussian_blur"], False),
    ("saturate", "photometric", "saturation gain", "ratio", [c[0] for c in SEVERITY_PARAMS["saturate"]], False),
]
_VALIDATION = {"speckle_noise", "gaussian_blur", "spatter", "saturate"}

#: The 19 ImageNet-C types in the published order (15 common, then the 4 validation types).
NAMES = (
    "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur",
    "zoom_blur", "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
    "jpeg_compression", "speckle_noise", "gaussian_blur", "spatter", "saturate",
)


def spec_info(name: str, family: str, pname: str, unit: str, params, random: bool, doc: str) -> PerturbationInfo:
    """The metadata record of one ImageNet-C type."""
    return PerturbationInfo(
        name=name, family=family, source="000", levels=_LEVELS, params=tuple(float(p) for p in params),
        param_name=pname, unit=unit, random=random, description=doc, reference=True,
        extra={"imagenet_c_split": "validation" if name in _VALIDATION else "common"},
    )


