"""Pillow's antialiased resampling as matrices, and its uint8 rounding, for the differentiable pixel paths.

Pillow resizes an 8-bit image with a separable filter: per axis, each output pixel is a weighted sum of the
input pixels within the filter's support (widened by the downscaling factor), the weights normalised per
output pixel and quantised to 22 fractional bits (``precompute_coeffs`` in Pillow's ``Resample.c``).
:func:`resample_matrix` writes those weights as one ``(out, in)`` matrix; :func:`u8` rounds as Pillow does
after each pass, passing the rounding straight through backwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

__all__ = ["BY_NAME", "FILTERS", "resample_matrix", "u8"]

_PREC = 2.0 ** 22  # Pillow's fixed-point precision for 8-bit images (PRECISION_BITS = 32 - 8 - 2)


def _bicubic(x):
    x, a = np.abs(x), -0.5
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1, np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _hamming(x):
    x = np.abs(x)
    return np.where(x >= 1, 0.0, np.sinc(x) * (0.54 + 0.46 * np.cos(np.pi * x)))


# Pillow's resampling filters by PIL.Image.Resampling value: (support, filter)
FILTERS: dict[int, tuple[float, Callable]] = {
    1: (3.0, lambda x: np.where((x >= -3) & (x < 3), np.sinc(x) * np.sinc(x / 3), 0.0)),  # LANCZOS
    2: (1.0, lambda x: np.maximum(1 - np.abs(x), 0.0)),  # BILINEAR
    3: (2.0, _bicubic),  # BICUBIC
    4: (0.5, lambda x: ((x > -0.5) & (x <= 0.5)).astype(float)),  # BOX
    5: (1.0, _hamming),  # HAMMING
}
BY_NAME = {"lanczos": 1, "bilinear": 2, "bicubic": 3, "box": 4, "hamming": 5, "nearest": 0}


@functools.lru_cache(maxsize=64)
def resample_matrix(n_in: int, n_out: int, resample: int) -> np.ndarray:
    """``(n_out, n_in)`` weights of Pillow's antialiased resampling along one axis (``precompute_coeffs``)."""
    if resample not in FILTERS:
        raise NotImplementedError(f"resampling filter {resample} has no differentiable rebuild (nearest?)")
    support, fn = FILTERS[resample]
    scale = n_in / n_out
    fscale = max(scale, 1.0)
    support *= fscale
    m = np.zeros((n_out, n_in))
    for xx in range(n_out):
        center = (xx + 0.5) * scale
        lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n_in)
        w = fn((np.arange(lo, hi) - center + 0.5) / fscale)
        m[xx, lo:hi] = w / w.sum() if w.sum() != 0 else w
    return np.trunc(m * _PREC + np.where(m < 0, -0.5, 0.5)) / _PREC


def u8(v):
    """Round to uint8 as Pillow does (``floor(v + 0.5)``, clipped); the gradient is that of the clip."""
    import torch

    c = v.clamp(0, 255)
    return c + (torch.floor(v + 0.5).clamp(0, 255) - c).detach()
