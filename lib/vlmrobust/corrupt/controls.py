"""Control images for sweeps that are not perturbations of the registry (seed 002 §3.3, §7).

:func:`blank_image` is a corruption function for the sweep engine (passed as
``corrupt_fn`` to :func:`vlmrobust.sweep.predictions`): the condition
``blank_grey`` replaces the image by a uniform grey image (every channel 128), the
blank image of seed 002's drift-to-prior prior ``S_prior = P(Yes | q, blank)``;
any other condition goes through :func:`vlmrobust.corrupt.apply`. It is kept out
of the registry, so manifests and the registry's family listing do not show it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLANK_GREY", "blank_image", "blank_param"]

BLANK_GREY = 128


def blank_image(image: np.ndarray, name: str, level: int, *, seed: int = 0, key: str = "", depth=None,
                backend: str = "native") -> np.ndarray:
    """``blank_grey`` (level 1): a uniform grey image of the input's size; other names: ``corrupt.apply``."""
    if name != "blank_grey":
        from ._core import apply

        return apply(image, name, level, seed=seed, key=key, depth=depth, backend=backend)
    if level != 1:
        raise ValueError(f"blank_grey has the one level 1, got {level!r}")
    return np.full_like(np.asarray(image, dtype=np.uint8), BLANK_GREY)


blank_image.version = 1


def blank_param(name: str, level: int) -> float:
    """The grey level of ``blank_grey`` (128); registry parameters for other names."""
    if name == "blank_grey":
        return float(BLANK_GREY)
    from ._core import info

    return float(info(name).param(level)) if name != "clean" else float("nan")
