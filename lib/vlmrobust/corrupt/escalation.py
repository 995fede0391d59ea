"""Escalation ladders and directional traversals of BRUCE (seed 001 §II-B, §III).

Seed 001 escalates four single perturbations over four levels ("Gaussian blur
severity was controlled using kernel standard deviations sigma in {1,2,3,4},
low-contrast perturbations employed contrast factors c in {0.30,...,0.90},
rotation angles theta in {5,...,20} degrees, and center-crop perturbations
removed increasing fractions of image content using crop ratios p in
{0.2,...,0.8}") and traverses the image in four directions
(R = {topdown, bottomup, leftright, rightleft}, Eq. of §II-B) removing a
growing share of it. The paper leaves the exact operators open; the choices
made here are:

* **blur**: Gaussian with sigma in pixels of the image as given, kernel
  truncated at 4 sigma, replicated border.
* **contrast**: ``c`` is the *fraction of contrast removed*, so the ladder
  escalates with the level: ``x' = mu + (1 - c)(x - mu)`` with ``mu`` the mean
  luma (ITU-R BT.601 weights) of the image, the same centre as Pillow's
  ``ImageEnhance.Contrast``.
* **rotation**: counter-clockwise by ``theta`` about the image centre, same
  size, bilinear, corners filled with :data:`FILL`.
* **center crop**: ``p`` is the *fraction of each side length removed*: the
  central ``(1 - p) H x (1 - p) W`` region is kept (``1 - (1 - p)^2`` of the
  area is removed: 36 %, 64 %, 84 %, 96 %) and resized back to ``H x W``
  (bilinear), as a VLM processor would resize a cropped image.
* **traversals**: the first ``s`` share of the rows (top-down, bottom-up) or
  columns (left-to-right, right-to-left), counted from the starting side, is
  replaced by :data:`FILL` (black); the image keeps its size.
"""

from __future__ import annotations

import cv2
import numpy as np

from ._core import PerturbationInfo, register, to_uint8_round

__all__ = ["FILL", "BLUR_SIGMAS", "CONTRAST_REMOVED", "ROTATION_DEG", "CROP_REMOVED", "TRAVERSAL_SHARES",
           "rotate", "register_all"]

#: Fill colour of removed or uncovered pixels (rotation corners, traversals): black.
FILL = (0, 0, 0)
BLUR_SIGMAS = (1.0, 2.0, 3.0, 4.0)
CONTRAST_REMOVED = (0.3, 0.5, 0.7, 0.9)
ROTATION_DEG = (5.0, 10.0, 15.0, 20.0)
CROP_REMOVED = (0.2, 0.4, 0.6, 0.8)
TRAVERSAL_SHARES = (0.2, 0.4, 0.6, 0.8)
_LEVELS = (1, 2, 3, 4)


def rotate(x: np.ndarray, degrees: float, fill: tuple[int, int, int] = FILL) -> np.ndarray:
    """Rotate counter-clockwise by ``degrees`` about the centre; same size, bilinear, ``fill`` corners."""
    h, w = x.shape[:2]
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), float(degrees), 1.0)
    return cv2.warpAffine(x, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=tuple(int(v) for v in fill))


def bruce_blur(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Gaussian blur with sigma = 1, 2, 3, 4 px (truncated at 4 sigma, replicated border)."""
    sigma = BLUR_SIGMAS[level - 1]
    r = int(4 * sigma + 0.5)
    out = cv2.GaussianBlur(x.astype(np.float32), (2 * r + 1, 2 * r + 1), sigmaX=sigma, sigmaY=sigma,
                           borderType=cv2.BORDER_REPLICATE)
    return to_uint8_round(out)


def bruce_contrast(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Remove a fraction c = 0.3 .. 0.9 of the contrast around the mean luma."""
    c = CONTRAST_REMOVED[level - 1]
    mu = float(cv2.mean(cv2.cvtColor(x, cv2.COLOR_RGB2GRAY))[0])
    lut = np.clip(np.rint(mu + (1.0 - c) * (np.arange(256) - mu)), 0, 255).astype(np.uint8)
    return cv2.LUT(x, lut)


def bruce_rotate(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Rotation by 5, 10, 15, 20 degrees counter-clockwise, black corners."""
    return rotate(x, ROTATION_DEG[level - 1])


def center_crop(x: np.ndarray, removed: float) -> np.ndarray:
    """Keep the central ``1 - removed`` of each side and resize back to the full size (bilinear)."""
    h, w = x.shape[:2]
    kh, kw = max(1, int(round((1 - removed) * h))), max(1, int(round((1 - removed) * w)))
    y0, x0 = (h - kh) // 2, (w - kw) // 2
    return cv2.resize(x[y0:y0 + kh, x0:x0 + kw], (w, h), interpolation=cv2.INTER_LINEAR)


def bruce_center_crop(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
    """Center crop removing p = 0.2 .. 0.8 of each side length, resized back."""
    return center_crop(x, CROP_REMOVED[level - 1])


def traverse(x: np.ndarray, direction: str, share: float, fill: tuple[int, int, int] = FILL) -> np.ndarray:
    """Replace the first ``share`` of the image, seen from ``direction``'s starting side, by ``fill``."""
    h, w = x.shape[:2]
    out = x.copy()
    n_rows, n_cols = int(round(share * h)), int(round(share * w))
    if direction == "topdown":
        out[:n_rows] = fill
    elif direction == "bottomup":
        out[h - n_rows:] = fill
    elif direction == "leftright":
        out[:, :n_cols] = fill
    elif direction == "rightleft":
        out[:, w - n_cols:] = fill
    else:
        raise ValueError(f"direction must be one of topdown, bottomup, leftright, rightleft; got {direction!r}")
    return out


def _traversal(direction: str):
    def fn(x: np.ndarray, level: int, rng=None, depth=None) -> np.ndarray:
        return traverse(x, direction, TRAVERSAL_SHARES[level - 1])

    fn.__name__ = f"traverse_{direction}"
    return fn


def register_all() -> None:
    """Register the BRUCE ladders and traversals."""
    common = dict(source="001", levels=_LEVELS, random=False)
    register(PerturbationInfo(name="bruce_blur", family="escalation", params=BLUR_SIGMAS, param_name="sigma",
                              unit="px", description=bruce_blur.__doc__.splitlines()[0], **common), bruce_blur)
    register(PerturbationInfo(name="bruce_contrast", family="escalation", params=CONTRAST_REMOVED,
                              param_name="contrast removed c", unit="fraction",
                              description=bruce_contrast.__doc__.splitlines()[0], **common), bruce_contrast)
    register(PerturbationInfo(name="bruce_rotate", family="escalation", params=ROTATION_DEG,
                              param_name="rotation angle", unit="deg",
                              description=bruce_rotate.__doc__.splitlines()[0], **common), bruce_rotate)
    register(PerturbationInfo(name="bruce_center_crop", family="escalation", params=CROP_REMOVED,
                              param_name="side fraction removed p", unit="fraction",
                              description=bruce_center_crop.__doc__.splitlines()[0], **common),
             bruce_center_crop)
    for direction, label in [("topdown", "top-down"), ("bottomup", "bottom-up"),
                             ("leftright", "left-to-right"), ("rightleft", "right-to-left")]:
        register(PerturbationInfo(name=f"traverse_{direction}", family="traversal", params=TRAVERSAL_SHARES,
                                  param_name="share removed", unit="fraction",
                                  description=f"Directional traversal {label}: the first share of the image "
                                              "from that side is filled with black", **common),
                 _traversal(direction))
