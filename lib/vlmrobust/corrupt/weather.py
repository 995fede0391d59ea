"""ImageNet-C weather corruptions: snow, frost, fog, spatter (seed 000 §IV-B).

Published severity parameters, vectorised re-writes; see :mod:`.imagenet_c`.
Frost overlays one of the six frost photographs shipped inside PyPI
``imagecorruptions-imaug`` (read from its installed package data once per
process and kept decoded). ImageNet-C fog is a depth-independent plasma-fractal
haze; the physical, depth-aware fog of seed 003 is in :mod:`.physical`.
"""

from __future__ import annotations

import importlib.resources
from functools import lru_cache

import cv2
import numpy as np

from . import _filters as F
from ._core import to_uint8_trunc

__all__ = ["SEVERITY_PARAMS", "FROST_FILES", "frost_texture", "fog_gain"]

SEVERITY_PARAMS: dict[str, list] = {
    # (mean, std, zoom, threshold, blur radius, blur sigma, image blend)
    "snow": [(0.1, 0.3, 3, 0.5, 10, 4, 0.8), (0.2, 0.3, 2, 0.5, 12, 4, 0.7),
             (0.55, 0.3, 4, 0.9, 12, 8, 0.7), (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
             (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55)],
    # (image weight, frost weight)
    "frost": [(1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75)],
    # (haze strength, wibble decay)
    "fog": [(1.5, 2), (2.0, 2), (2.5, 1.7), (2.5, 1.5), (3.0, 1.4)],
    # (mean, std, sigma, threshold, intensity / mud sigma, mud?)
    "spatter": [(0.65, 0.3, 4, 0.69, 0.6, 0), (0.65, 0.3, 3, 0.68, 0.6, 0), (0.65, 0.3, 2, 0.68, 0.5, 0),
                (0.65, 0.3, 1, 0.65, 1.5, 1), (0.67, 0.4, 1, 0.65, 1.5, 1)],
}

FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")


@lru_cache(maxsize=6)
def frost_texture(index: int) -> np.ndarray:
    """Frost photograph ``index`` (0..5) from the installed reference package, BGR uint8."""
    ref = importlib.resources.files("imagecorruptions") / "frost" / FROST_FILES[index]
    data = np.frombuffer(ref.read_bytes(), dtype=np.uint8)
    img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if img is None:  # pragma: no cover - broken installation
        raise RuntimeError(f"cannot decode frost texture {FROST_FILES[index]}")
    img.setflags(write=False)
    return img


@lru_cache(maxsize=32)
def _frost_scaled(index: int, scale: float) -> np.ndarray:
    tex = frost_texture(index)
    size = (int(np.ceil(tex.shape[1] * scale)), int(np.ceil(tex.shape[0] * scale)))
    out = np.ascontiguousarray(cv2.resize(tex, dsize=size, interpolation=cv2.INTER_CUBIC)[..., ::-1])
    out.setflags(write=False)
    return out


def _frost_scale(tex_shape: tuple[int, ...], h: int, w: int) -> float:
    fh, fw = tex_shape[:2]
    if fh >= h and fw >= w:
        s = 1.0
    elif fh < h and fw >= w:
        s = h / fh
    elif fh >= h and fw < w:
        s = w / fw
    else:
        s = max(h / fh, w / fw)
    return s * 1.1


def snow(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Zoomed, thresholded, motion-blurred noise flakes over a brightened, greyed image."""
    mean, std, zoom, thr, radius, sigma, blend = SEVERITY_PARAMS["snow"][s - 1]
    h, w = x.shape[:2]
    layer = rng.standard_normal((h, w), dtype=np.float32)
    layer *= np.float32(std)
    layer += np.float32(mean)
    layer = F.clipped_zoom(layer, zoom)
    layer[layer < thr] = 0
    np.clip(layer, 0, 1, out=layer)
    layer = F.motion_blur(layer, radius, sigma, rng.uniform(-135, -45))
    layer = np.rint(np.clip(layer, 0, 1) * 255)[:h, :w]  # the published code keeps 8-bit flakes
    flakes = (layer + layer[::-1, ::-1])[..., None]
    xf = x.astype(np.float32)
    grey = cv2.cvtColor(xf, cv2.COLOR_RGB2GRAY)[..., None]
    lifted = np.maximum(xf, grey * np.float32(1.5) + np.float32(127.5))
    out = xf * np.float32(blend) + lifted * np.float32(1 - blend) + flakes
    return to_uint8_trunc(out)


def frost(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """``a x + b frost`` with a random frost photograph and a random crop of it."""
    a, b = SEVERITY_PARAMS["frost"][s - 1]
    h, w = x.shape[:2]
    idx = int(rng.integers(6))
    tex = _frost_scaled(idx, _frost_scale(frost_texture(idx).shape, h, w))
    y0 = int(rng.integers(0, tex.shape[0] - h))
    x0 = int(rng.integers(0, tex.shape[1] - w))
    crop = tex[y0:y0 + h, x0:x0 + w]
    out = cv2.addWeighted(x, float(a), crop, float(b), 0.0, dtype=cv2.CV_32F)
    return to_uint8_trunc(out)


def fog_gain(image: np.ndarray, severity: int) -> float:
    """Contrast gain ``m / (m + c)`` of ImageNet-C fog (m = image maximum in [0, 1]).

    The published fog adds ``c * plasma`` and rescales by ``m / (m + c)``, so
    every intensity difference of the image is multiplied by this gain; seed 003
    (Table VII, 'mean gain') compares it with the transmittance of physical fog.
    """
    c = SEVERITY_PARAMS["fog"][severity - 1][0]
    m = float(image.max()) / 255.0
    return m / (m + c) if m > 0 else 0.0


def fog(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """``(x + c plasma) m / (m + c)``: a depth-independent plasma-fractal haze."""
    c, decay = SEVERITY_PARAMS["fog"][s - 1]
    h, w = x.shape[:2]
    size = 1 << (max(h, w) - 1).bit_length()
    haze = F.plasma_fractal(rng, size, decay)[:h, :w]
    m = float(x.max()) / 255.0
    gain = np.float32(m / (m + c))
    haze *= np.float32(255.0 * c) * gain
    out = x.astype(np.float32)
    out *= gain
    out += haze[..., None]
    return to_uint8_trunc(out)


def spatter(x: np.ndarray, s: int, rng: np.random.Generator, depth=None) -> np.ndarray:
    """Water drops (severity 1-3, pale turquoise rims) or mud (4-5, brown blots)."""
    mean, std, sigma, thr, inten, mud = SEVERITY_PARAMS["spatter"][s - 1]
    h, w = x.shape[:2]
    liquid = rng.standard_normal((h, w), dtype=np.float32)
    liquid *= np.float32(std)
    liquid += np.float32(mean)
    liquid = F.gaussian(liquid, sigma)
    liquid[liquid < thr] = 0
    xf = x.astype(np.float32)
    if not mud:
        liq8 = (liquid * 255).astype(np.uint8)
        dist = 255 - cv2.Canny(liq8, 50, 150)
        dist = cv2.distanceTransform(dist, cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.blur(dist, (3, 3)).astype(np.uint8)
        dist = cv2.equalizeHist(dist)
        ker = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
        dist = cv2.filter2D(dist, cv2.CV_8U, ker)
        dist = cv2.blur(dist, (3, 3)).astype(np.float32)
        m = liquid * dist
        peak = float(m.max())
        m *= np.float32(inten / peak) if peak > 0 else np.float32(0)
        colour = np.array([175, 238, 238], np.float32)  # pale turquoise, added in RGB order as published
        out = xf + m[..., None] * colour
    else:
        m = np.where(liquid > thr, 1, 0).astype(np.float32)
        m = F.gaussian(m, inten)
        m[m < 0.8] = 0
        colour = np.array([63, 42, 20], np.float32)  # mud brown
        out = xf * (1 - m)[..., None] + m[..., None] * colour
    return to_uint8_trunc(out)


SPECS = {
    "snow": ("weather", "snow-layer mean", "fraction of full scale", [c[0] for c in SEVERITY_PARAMS["snow"]], True),
    "frost": ("weather", "frost weight", "ratio", [c[1] for c in SEVERITY_PARAMS["frost"]], True),
    "fog": ("weather", "haze strength", "fraction of full scale", [c[0] for c in SEVERITY_PARAMS["fog"]], True),
    "spatter": ("weather", "liquid threshold", "fraction of full scale",
                [c[3] for c in SEVERITY_PARAMS["spatter"]], True),
}
