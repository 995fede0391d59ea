"""The perturbation registry: metadata, argument checks and :func:`apply`.

Every perturbation is registered once with a :class:`PerturbationInfo` (family,
levels, the physical parameter of each level, whether it draws random numbers,
whether it needs metric depth) and a native implementation. :func:`apply` is the
one entry point: it checks its arguments, derives the random generator from
``(key, name, level, seed)`` through :func:`vlmrobust.repro.rng` (never global
state) and returns a new ``uint8`` ``H×W×3`` image of the input's size.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import repro

__all__ = [
    "MIN_SIDE", "PerturbationInfo", "register", "apply", "info", "names", "families", "registry_table",
    "check_image", "check_depth", "check_level", "to_uint8_trunc", "to_uint8_round",
]

#: Smallest accepted image side in pixels (the ImageNet-C reference refuses smaller images too).
MIN_SIDE = 32
BACKENDS = ("native", "reference")

NativeFn = Callable[..., np.ndarray]


@dataclass(frozen=True)
class PerturbationInfo:
    """What one perturbation is and how its levels map to a physical parameter.

    ``params[i]`` is the physical parameter of ``levels[i]`` in ``unit`` (named
    ``param_name``); level 0 is always the clean image (parameter NaN).
    ``random`` says whether the output depends on ``seed``/``key``;
    ``needs_depth`` whether :func:`apply` requires a depth map; ``reference``
    whether ``backend="reference"`` (PyPI ``imagecorruptions-imaug``) exists;
    ``options`` lists the keyword options :func:`apply` accepts for it.
    """

    name: str
    family: str
    source: str
    levels: tuple[int, ...]
    params: tuple[float, ...]
    param_name: str
    unit: str
    random: bool
    description: str
    needs_depth: bool = False
    reference: bool = False
    options: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def param(self, level: int) -> float:
        """The physical parameter of ``level`` (NaN for the clean level 0)."""
        level = check_level(self, level)
        if level == 0:
            return float("nan")
        return float(self.params[self.levels.index(level)])


_REGISTRY: dict[str, tuple[PerturbationInfo, NativeFn]] = {}


def register(meta: PerturbationInfo, fn: NativeFn) -> None:
    """Add a perturbation (called once per name by the registry's modules)."""
    if meta.name in _REGISTRY:
        raise ValueError(f"perturbation {meta.name!r} is registered twice")
    if len(meta.levels) != len(meta.params) or 0 in meta.levels:
        raise ValueError(f"perturbation {meta.name!r}: levels must be 1.. and match params")
    _REGISTRY[meta.name] = (meta, fn)


def _lookup(name: object) -> tuple[PerturbationInfo, NativeFn]:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown perturbation name {name!r}; known: {', '.join(_REGISTRY)}") from None


def info(name: str) -> PerturbationInfo:
    """Metadata of one perturbation (raises ``ValueError`` for unknown names)."""
    return _lookup(name)[0]


def names(family: str | None = None) -> list[str]:
    """Registered perturbation names in registry order, optionally of one ``family``."""
    if family is None:
        return list(_REGISTRY)
    fams = families()
    if family not in fams:
        raise ValueError(f"family must be one of {fams}, got {family!r}")
    return [n for n, (m, _) in _REGISTRY.items() if m.family == family]


def registry_table() -> Any:
    """The registry as a table: one row per perturbation and level with its physical parameter and traits."""
    import pandas as pd

    return pd.DataFrame([
        {"perturbation": n, "family": m.family, "seed": m.source, "level": lv, "param": p,
         "param_name": m.param_name, "unit": m.unit, "random": m.random, "needs_depth": m.needs_depth,
         "reference_backend": m.reference}
        for n in names() for m in [info(n)] for lv, p in zip(m.levels, m.params, strict=True)
    ])


def families() -> list[str]:
    """The families of the registered perturbations, in registry order."""
    out: list[str] = []
    for m, _ in _REGISTRY.values():
        if m.family not in out:
            out.append(m.family)
    return out


# ----------------------------------------------------------------------------- argument checks


def check_image(image: object, argname: str = "image") -> np.ndarray:
    """A C-contiguous ``uint8`` ``H×W×3`` array with both sides >= 32, or a clear error."""
    if not isinstance(image, np.ndarray):
        raise TypeError(f"{argname} must be a numpy.ndarray (uint8 HxWx3), got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise TypeError(f"{argname} must have dtype uint8, got {image.dtype}")
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"{argname} must have shape HxWx3 (RGB), got shape {image.shape}")
    h, w = image.shape[:2]
    if h < MIN_SIDE or w < MIN_SIDE:
        raise ValueError(f"{argname} must be at least {MIN_SIDE}x{MIN_SIDE} pixels, got {h}x{w}")
    return np.ascontiguousarray(image)


def check_depth(depth: object, shape: tuple[int, int], argname: str = "depth") -> np.ndarray:
    """A float ``H×W`` ray-distance map in metres: finite >= 0 or ``+inf`` (sky)."""
    if not isinstance(depth, np.ndarray):
        raise TypeError(f"{argname} must be a numpy.ndarray of metres (float HxW), got {type(depth).__name__}")
    if not np.issubdtype(depth.dtype, np.floating):
        raise TypeError(f"{argname} must have a floating dtype (metres), got {depth.dtype}")
    if depth.shape != tuple(shape):
        raise ValueError(f"{argname} must have the image's shape {tuple(shape)}, got {depth.shape}")
    if np.isnan(depth).any():
        raise ValueError(f"{argname} contains NaN; allowed: finite distances >= 0 and +inf for the sky")
    if (depth < 0).any():
        raise ValueError(f"{argname} contains negative distances; allowed: >= 0 metres and +inf")
    return depth


def check_level(meta: PerturbationInfo, level: object) -> int:
    """``level`` as an int that is 0 (clean) or one of ``meta.levels``."""
    if isinstance(level, bool) or not isinstance(level, numbers.Integral):
        raise TypeError(f"level must be an int, got {type(level).__name__}")
    level = int(level)
    if level != 0 and level not in meta.levels:
        raise ValueError(
            f"level {level} is out of range for {meta.name!r}; allowed: 0 (clean) or {list(meta.levels)}"
        )
    return level


def to_uint8_trunc(x: np.ndarray) -> np.ndarray:
    """Clip to [0, 255] and truncate, as the ImageNet-C reference's ``np.uint8(...)`` does."""
    np.clip(x, 0, 255, out=x)
    return x.astype(np.uint8)


def to_uint8_round(x: np.ndarray) -> np.ndarray:
    """Clip to [0, 255] and round to the nearest grey level."""
    np.clip(x, 0, 255, out=x)
    return np.rint(x).astype(np.uint8)


# ----------------------------------------------------------------------------- apply


def apply(
    image: np.ndarray,
    name: str,
    level: int,
    *,
    seed: int = 0,
    key: str = "",
    depth: np.ndarray | None = None,
    backend: str = "native",
    **options: Any,
) -> np.ndarray:
    """Apply perturbation ``name`` at ``level`` to ``image`` and return a new image.

    ``image`` is ``uint8`` ``H×W×3`` (RGB, both sides >= 32 px). Level 0 is the
    identity (a copy). Random perturbations draw from
    ``repro.rng(key, name, level, seed)``, where ``key`` is the item id, so the
    same ``(image, name, level, seed, key)`` gives the same bytes in every
    process (the three overlays share the stream name ``"overlay"``, which
    gives them identical geometry). ``depth`` (float ``H×W`` ray distance in metres, ``inf`` = sky) is
    required by the physical visibility perturbations and checked whenever it is
    given. ``backend="reference"`` runs PyPI ``imagecorruptions-imaug`` for the
    19 ImageNet-C types. ``options`` are perturbation-specific keyword options
    (``info(name).options`` lists them).
    """
    meta, fn = _lookup(name)
    x = check_image(image)
    level = check_level(meta, level)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not isinstance(key, str):
        raise TypeError(f"key must be a str (the item id), got {type(key).__name__}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    unknown = set(options) - set(meta.options)
    if unknown:
        raise ValueError(
            f"unknown option(s) {sorted(unknown)} for {name!r}; allowed: {list(meta.options) or 'none'}"
        )
    if depth is not None:
        depth = check_depth(depth, x.shape[:2])
    elif meta.needs_depth and level != 0:
        raise ValueError(f"{name!r} needs depth (float HxW ray distance in metres, inf for sky)")
    if level == 0:
        return x.copy()
    gen = repro.rng(key, meta.extra.get("rng_name", name), level, int(seed)) if meta.random else None
    if backend == "reference":
        if not meta.reference:
            raise ValueError(
                f"backend='reference' exists only for the ImageNet-C types; {name!r} has only backend='native'"
            )
        from .reference import apply_reference

        return apply_reference(x, name, level, gen)
    out = fn(x, level, gen, depth, **options)
    if out.shape != x.shape or out.dtype != np.uint8:  # pragma: no cover - an implementation bug
        raise RuntimeError(f"{name!r} returned {out.dtype} {out.shape} for {x.shape}")
    if np.may_share_memory(out, image):
        out = out.copy()
    return out


def finite_or_nan(values: list[float]) -> tuple[float, ...]:
    """Parameters as a tuple of floats (helper for registrations)."""
    return tuple(float(v) if v is not None else math.nan for v in values)
