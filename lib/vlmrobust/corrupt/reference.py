"""``backend="reference"``: the published ImageNet-C code from PyPI ``imagecorruptions-imaug``.

The reference implementation draws from NumPy's legacy global generator. To
keep this project's rule (no dependence on global random state) and still give
the reference's exact bytes, the call runs inside :func:`seeded_global_state`:
the global state is saved, seeded from the perturbation's own generator
(``repro.rng(key, name, level, seed)``), and restored afterwards. The two
functions that take an explicit seed (``glass_blur``, ``impulse_noise``) get one
derived from the same generator. Not thread-safe: the global generator is
process-wide. Parity checks against the native code live in :mod:`.parity`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

__all__ = ["apply_reference", "seeded_global_state"]

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
