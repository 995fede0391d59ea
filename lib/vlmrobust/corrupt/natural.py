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

**Pixel offsets.** The paper gives offsets in pixels; its Limitations section
speaks of a fixed +-16 px shift, which is a different fraction of the image for
different processors. The registered perturbations follow it (``reading =
"fixed"``, the default): ``dx`` columns (rows: the same ``n``) at the image's
native resolution, whatever its size. ``reading = "scaled"`` defines the offsets
at a reference width of :data:`REF_SIZE` = 224 px and scales them with the image:
``round(dx * W / 224)`` columns (rows use ``H``), at least one pixel, so a 64 px
synthetic image shifts by 1, 2, 3 or 5 px. :func:`shift_corrupt` runs a sweep
under either reading.

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

__all__ = ["REF_SIZE", "OFFSETS_PX", "SCALES", "ROTATIONS_DEG", "SHIFT_READINGS", "VERSION", "scaled_offset",
           "shift_offset", "shift_corrupt", "register_all"]

REF_SIZE = 224
OFFSETS_PX = (-16, -12, -8, -4, 4, 8, 12, 16)
SCALES = (0.9, 0.75, 0.5)
ROTATIONS_DEG = (-30.0, 30.0)
#: How translation and pad/crop read the paper's pixel offsets (see the module docstring).
SHIFT_READINGS = ("fixed", "scaled")
#: Implementation version of translation and pad/crop (enters the shard keys): 2 = fixed pixels by default.
VERSION = 2


def scaled_offset(offset: float, side: int, ref: int = REF_SIZE) -> int:
    """A pixel offset given at ``ref`` px, scaled to a side of ``side`` px (never rounded to 0)."""
    n = int(round(offset * side / ref))
    if n == 0 and offset != 0:
        n = 1 if offset > 0 else -1
    return n


def shift_offset(offset: float, side: int, reading: str = "fixed") -> int:
    """The pixel offset of a side of ``side`` px: ``offset`` itself (``"fixed"``) or scaled from 224 px."""
    if reading not in SHIFT_READINGS:
        raise ValueError(f"reading must be one of {', '.join(SHIFT_READINGS)}; got {reading!r}")
    if reading == "scaled":
        return scaled_offset(offset, side)
    return int(round(offset))


def _resize(x: np.ndarray, w: int, h: int) -> np.ndarray:
    shrink = w * h < x.shape[0] * x.shape[1]
    return cv2.resize(x, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def translate(x: np.ndarray, level: int, rng=None, depth=None, reading: str = "fixed") -> np.ndarray:
    """Cyclic horizontal shift by dx = -16 .. 16 px (wrap-around), fixed or scaled from 224 px."""
    return np.roll(x, shift_offset(OFFSETS_PX[level - 1], x.shape[1], reading), axis=1)


def pad_crop(x: np.ndarray, level: int, rng=None, depth=None, reading: str = "fixed") -> np.ndarray:
    """Symmetric pad (n > 0, black) or crop (n < 0) by n px per side, resized back; fixed or scaled."""
    h, w = x.shape[:2]
    n = OFFSETS_PX[level - 1]
    ny, nx = shift_offset(n, h, reading), shift_offset(n, w, reading)
    if n > 0:
        big = cv2.copyMakeBorder(x, ny, ny, nx, nx, cv2.BORDER_CONSTANT, value=FILL)
        return _resize(big, w, h)
    ny, nx = -ny, -nx
    if 2 * max(ny, nx) >= min(h, w):
        raise ValueError(f"cropping {max(ny, nx)} px per side leaves nothing of a {h}x{w} image "
                         "(reading='scaled' scales the offsets to the image)")
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


def shift_corrupt(reading: str = "fixed"):
    """A ``corrupt_fn`` for :func:`vlmrobust.sweep.predictions`: translation and pad/crop under ``reading``,
    every other name through :func:`vlmrobust.corrupt.apply` unchanged. The reading is its ``version``, so
    it enters the shard keys; ``param(name, level)`` is the registry's parameter (the offset at the reading's
    reference: native pixels or 224 px)."""
    from ._core import apply, info

    if reading not in SHIFT_READINGS:
        raise ValueError(f"reading must be one of {', '.join(SHIFT_READINGS)}; got {reading!r}")

    def fn(image, name, level, *, seed=0, key="", depth=None, backend="native"):
        opts = {"reading": reading} if name in ("translate", "pad_crop") else {}
        return apply(image, name, level, seed=seed, key=key, depth=depth, backend=backend, **opts)

    fn.__qualname__ = fn.__name__ = "shift_corrupt"
    fn.version = f"shift={reading};v{VERSION}"
    fn.param = lambda name, level: float(info(name).param(level))
    return fn


def register_all() -> None:
    """Register the natural perturbations of seed 002."""
    offsets = tuple(float(v) for v in OFFSETS_PX)
    lv8 = tuple(range(1, 9))
    shift = {"ref_size_px": REF_SIZE, "version": VERSION}
    for name, fn, levels, params, pname, unit, opts in [
        ("translate", translate, lv8, offsets, "horizontal shift (native px; scaled: at 224 px)", "px", ("reading",)),
        ("pad_crop", pad_crop, lv8, offsets, "padding (+) / cropping (-) per side (native px; scaled: at 224 px)",
         "px", ("reading",)),
        ("scale", scale, (1, 2, 3), SCALES, "scale factor alpha", "ratio", ()),
        ("scale_pad", scale_pad, (1, 2, 3), SCALES, "scale factor alpha", "ratio", ()),
        ("rotate", rotate_natural, (1, 2), ROTATIONS_DEG, "rotation angle", "deg", ()),
    ]:
        register(PerturbationInfo(name=name, family="natural", source="002", levels=levels, params=params,
                                  param_name=pname, unit=unit, random=False, options=opts,
                                  description=fn.__doc__.splitlines()[0], extra=shift if opts else {}), fn)
