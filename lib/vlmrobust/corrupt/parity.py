"""Parity of the native ImageNet-C code with the reference: the same random draws on both sides.

:class:`LegacyDraws` replays NumPy's legacy global stream (what the reference of :mod:`.reference`
draws from), and :func:`replayable` lists the native random types whose every draw it can replay, so
tests and benchmarks compare the arithmetic of the two implementations, not their noise.
"""

from __future__ import annotations

import numpy as np

from . import imagenet_c, weather

__all__ = ["LegacyDraws", "replayable"]


class LegacyDraws:
    """A Generator look-alike that replays NumPy's legacy global stream, as the reference draws it.

    Feeding it to a native random corruption makes the native code consume the
    same random numbers as the reference, so parity checks compare the
    arithmetic, not the noise.
    """

    def __init__(self, seed: int):
        self.rs = np.random.RandomState(seed)

    def random(self, shape=None, dtype=np.float64):
        return self.rs.random_sample(shape).astype(dtype)

    def standard_normal(self, shape=None, dtype=np.float64):
        return self.rs.standard_normal(shape).astype(dtype)

    def uniform(self, low, high, size=None):
        return self.rs.uniform(low, high, size)

    def integers(self, low, high=None, size=None):
        return self.rs.randint(low, high, size)


def replayable() -> dict:
    """Native functions of the random types whose every draw :class:`LegacyDraws` can replay."""
    names = {"gaussian_noise": imagenet_c, "speckle_noise": imagenet_c, "motion_blur": imagenet_c,
             "elastic_transform": imagenet_c, "snow": weather, "frost": weather, "fog": weather,
             "spatter": weather}
    return {name: getattr(module, name) for name, module in names.items()}
