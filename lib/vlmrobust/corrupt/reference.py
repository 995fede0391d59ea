"""``backend="reference"``: the published ImageNet-C code from PyPI ``imagecorruptions-imaug``.

The reference implementation draws from NumPy's legacy global generator. To
keep this project's rule (no dependence on global random state) and still give
the reference's exact bytes, the call runs inside :func:`seeded_global_state`:
the global state is saved, seeded from the perturbation's own generator
(``repro.rng(key, name, level, seed)``), and restored afterwards. The two
functions that take an explicit seed (``glass_blur``, ``impulse_noise``) get one
derived from the same generator. Not thread-safe: the global generator is
process-wide.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

__all__ = ["LegacyDraws", "apply_reference", "replayable", "seeded_global_state"]

_SEEDED = ("glass_blur", "impulse_noise")


@contextlib.contextmanager
def seeded_global_state(seed: int) -> Iterator[None]:
    """Seed NumPy's legacy global generator for the duration of a block, then restore it."""
    saved = np.random.get_state()
    np.random.seed(seed % 2**32)  # noqa: NPY002 - the reference code reads the global generator
    try:
        yield
    finally:
        np.random.set_state(saved)


def apply_reference(x: np.ndarray, name: str, level: int, gen: np.random.Generator | None) -> np.ndarray:
    """Run the reference implementation of ImageNet-C type ``name`` at severity ``level``."""
    import imagecorruptions

    seed = int(gen.integers(2**32)) if gen is not None else 0
    kwargs = {"seed": int(gen.integers(2**31)) if gen is not None else 0} if name in _SEEDED else {}
    with seeded_global_state(seed):
        out = imagecorruptions.corrupt(x, severity=level, corruption_name=name, **kwargs)
    return np.ascontiguousarray(out, dtype=np.uint8)


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
    from . import imagenet_c, weather

    names = {"gaussian_noise": imagenet_c, "speckle_noise": imagenet_c, "motion_blur": imagenet_c,
             "elastic_transform": imagenet_c, "snow": weather, "frost": weather, "fog": weather,
             "spatter": weather}
    return {name: getattr(module, name) for name, module in names.items()}
