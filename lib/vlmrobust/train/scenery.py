"""What training does to an item's image beyond the corruptions: varied skies and images without content.

* :func:`vary_sky` (stream option ``sky_prob``) recolours the sky of a clear training
  image (the pixels of infinite depth that are not the red box): half the time a grey
  or white (one level, uniform in 100-255), otherwise a colour (each channel uniform
  in 40-255), laid over the sky completely half the time and otherwise as a veil of
  strength uniform in 0.2-1. Images without sky (charts) are unchanged. Black is not
  among them: a black band is a fill of its own (notebook 07's exercise 07.3). It
  keeps the sky's colour from being a cue (:mod:`vlmrobust.train.sky` measures that).
* :func:`null_image` (stream option ``null_prob``) is an image without content: a
  uniform grey (level uniform in 0-255) or pure noise (every channel of every pixel
  uniform in 0-255), half each; the stream draws the red box on it where the item has
  one, offers the abstain option (either wording) and makes it the answer (the
  learned abstainer; with ``abstain_prob`` > 0 other items offer the option too,
  never as the answer, so that its presence alone says nothing).
* :func:`hide_object` (stream option ``hide_prob``) makes the question about the boxed object
  unanswerable in a scene that is otherwise unchanged: inside the red box the object is
  either **occluded** (the whole inside covered by noise, every channel of every pixel
  uniform in 0-255: a single-colour patch would read as a square object) or **cut away**
  (the inside refilled with the same rows of the scene just left of the box, or right of it
  at the image's left edge, so that the ground or sky at that height shows where the object
  was), half each; the outline stays. The stream offers the abstain option and makes it the
  answer.
"""

from __future__ import annotations

import numpy as np

__all__ = ["vary_sky", "null_image", "hide_object"]


def vary_sky(image: np.ndarray, depth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` with its sky (infinite depth, not the red box) recoloured or veiled (module docstring)."""
    from ..corrupt.boxed import box_mask

    image = np.asarray(image)
    sky = np.isinf(np.asarray(depth)) & ~box_mask(image)
    grey = rng.random() < 0.5
    colour = np.full(3, rng.uniform(100, 255)) if grey else rng.uniform(40, 255, size=3)
    strength = 1.0 if rng.random() < 0.5 else float(rng.uniform(0.2, 1.0))
    if not sky.any():
        return image
    out = image.astype(np.float64)
    out[sky] = (1.0 - strength) * out[sky] + strength * colour
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def null_image(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """An image without content (module docstring)."""
    if rng.random() < 0.5:
        return np.full(shape, int(rng.integers(0, 256)), np.uint8)
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def hide_object(image: np.ndarray, box, rng: np.random.Generator) -> np.ndarray:
    """``image`` with the inside of the red box ``box = (x0, y0, x1, y1)`` (inclusive, outline
    ``max(1, W // 64)`` px) occluded or cut away (module docstring); the outline is kept."""
    image = np.asarray(image)
    w = max(1, image.shape[1] // 64)
    x0, y0, x1, y1 = (int(b) for b in box)
    ys, xs = slice(y0 + w, y1 - w + 1), slice(x0 + w, x1 - w + 1)
    out = image.copy()
    inside = out[ys, xs]
    if inside.size == 0:
        return out
    if rng.random() < 0.5:  # occluded
        inside[...] = rng.integers(0, 256, size=inside.shape, dtype=np.uint8)
        return out
    n = inside.shape[1]  # cut away: the same rows of the scene beside the box (left, else right), stretched
    src = image[ys, max(x0 - n, 0):x0] if x0 > 0 else image[ys, x1 + 1:x1 + 1 + n]
    if src.shape[1] == 0:  # the box spans the image's width: nothing to refill from, occlude instead
        inside[...] = rng.integers(0, 256, size=inside.shape, dtype=np.uint8)
        return out
    inside[...] = src[:, np.minimum((np.arange(n) * src.shape[1]) // n, src.shape[1] - 1)]
    return out
