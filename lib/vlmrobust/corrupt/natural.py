"""Natural (geometric) perturbations of seed 002 §A.6.

Seed 002 ("Same answer, different representations", §3 and App. A.6) perturbs
each image with content-preserving geometric changes:

* translation (cyclic): horizontal wrap-around shifts by
  ``dx in {-16, -12, ..., 16} \\ {0}`` pixels (levels 1..8);
* pad/crop: symmetric padding (n > 0) or cropping (n < 0) by
  ``n in {-16, -12, ..., 16} \\ {0}`` pixels on every side (levels 1..8);
* scale: rescale by ``alpha`` (default 0.9) and resize back to the original size;
* scale+pad: rescale by ``alpha`` and pad back with a uniform background;
* rotation: in-plane by -30 and +30 degrees with interpolation.

**Scaling of pixel offsets.** The paper gives offsets in pixels without the
resolution they refer to (its Limitations section notes the same shift is a
different fraction for different processors). Here they are defined at a
reference width of :data:`REF_SIZE` = 224 px and scale with the image:
``round(dx * W / 224)`` columns (rows use ``H``), at least one pixel. A 64 px
synthetic image therefore shifts by 1, 2, 3 or 5 px.

**Padding and resizing.** Pad/crop keeps the output size: the padded (or
cropped) image is resized back to ``H x W`` (area interpolation when shrinking,
bilinear when enlarging). Padding and scale+pad use the uniform background
:data:`FILL` (black); rotation corners are black too.
"""

from __future__ import annotations

import cv2
import numpy as np

from ._core import PerturbationInfo, register
from .escalation import FILL, rotate

__all__ = ["REF_SIZE", "OFFSETS_PX", "SCALES", "ROTATIONS_DEG", "scaled_offset", "register_all"]

REF_SIZE = 224
OFFSETS_PX = (-16, -12, -8, -4, 4, 8, 12, 16)
SCALES = (0.9, 0.75, 0.5)
ROTATIONS_DEG = (-30.0, 30.0)


def scaled_offset(offset: float, side: int, ref: int = REF_SIZE) -> int:
    """A pixel offset given at ``ref`` px, scaled to a side of ``side`` px (never rounded to 0)."""
    n = int(round(offset * side / ref))
    if n == 0 and offset != 0:
        n = 1 if offset > 0 else -1
    return n


def _resize(x: np.ndarray, w: int, h: int) -> np.ndarray:
    shrink = w * h < x.shape[0] * x.shape[1]
    return cv2.resize(x, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def translate(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Cyclic horizontal shift by dx = -16 .. 16 px at 224 px (wrap-around)."""
    return np.roll(x, scaled_offset(OFFSETS_PX[level - 1], x.shape[1]), axis=1)


def pad_crop(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Symmetric pad (n > 0, black) or crop (n < 0) by n px at 224 px per side, resized back."""
    h, w = x.shape[:2]
    n = OFFSETS_PX[level - 1]
    ny, nx = scaled_offset(n, h), scaled_offset(n, w)
    if n > 0:
        big = cv2.copyMakeBorder(x, ny, ny, nx, nx, cv2.BORDER_CONSTANT, value=FILL)
        return _resize(big, w, h)
    ny, nx = -ny, -nx
    return _resize(x[ny:h - ny, nx:w - nx], w, h)


def _scaled(x: np.ndarray, alpha: float) -> np.ndarray:
    h, w = x.shape[:2]
    return _resize(x, max(1, int(round(alpha * w))), max(1, int(round(alpha * h))))


def scale(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Rescale by alpha = 0.9 (0.75, 0.5) and resize back to the original size."""
    h, w = x.shape[:2]
    return _resize(_scaled(x, SCALES[level - 1]), w, h)


def scale_pad(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Rescale by alpha = 0.9 (0.75, 0.5) and pad back, centred, with a black background."""
    h, w = x.shape[:2]
    small = _scaled(x, SCALES[level - 1])
    out = np.empty_like(x)
    out[...] = FILL
    y0, x0 = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    out[y0:y0 + small.shape[0], x0:x0 + small.shape[1]] = small
    return out


def rotate_natural(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """In-plane rotation by -30 / +30 degrees (counter-clockwise positive), bilinear, black corners."""
    return rotate(x, ROTATIONS_DEG[level - 1])


def register_all() -> None:
    """Register the natural perturbations of seed 002."""
    extra = {"ref_size_px": REF_SIZE}
    offsets = tuple(float(v) for v in OFFSETS_PX)
    lv8 = tuple(range(1, 9))
    for name, fn, levels, params, pname, unit in [
        ("translate", translate, lv8, offsets, "horizontal shift at 224 px", "px"),
        ("pad_crop", pad_crop, lv8, offsets, "padding (+) / cropping (-) per side at 224 px", "px"),
        ("scale", scale, (1, 2, 3), SCALES, "scale factor alpha", "ratio"),
        ("scale_pad", scale_pad, (1, 2, 3), SCALES, "scale factor alpha", "ratio"),
        ("rotate", rotate_natural, (1, 2), ROTATIONS_DEG, "rotation angle", "deg"),
    ]:
        register(PerturbationInfo(name=name, family="natural", source="002", levels=levels, params=params,
                                  param_name=pname, unit=unit, random=False,
                                  description=fn.__doc__.splitlines()[0], extra=extra), fn)
