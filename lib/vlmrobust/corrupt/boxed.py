r"""Seed 003's degradations with the red box drawn **after** them, and its visibility controls.

Seed 003 (Fig. 1a) degrades a scene and only then adds the red box that the
question refers to ("a red box is added to the degraded image"), so the box
itself never fades into the fog. The sweep engine loads an item's image once,
clean, and passes it to :func:`vlmrobust.corrupt.apply`; the clean condition
must show the box, so the loaded image carries it. The perturbations of family
``boxed`` (names ``<base>+box``) therefore **re-draw the box after the base
degradation**: the box is found as the pixels whose colour is exactly
:data:`vlmrobust.synth.BOX_RGB`, they are set to black before the base runs and
painted with the box colour after it.

* For per-pixel degradations (physical fog and water, the sky-only control,
  the blank image) the result equals degrading the box-free image and drawing the
  box afterwards, byte for byte, provided no other pixel has the box colour. The
  synthetic palette never has it; the real-image builder
  (:func:`vlmrobust.depth.real_scenes`) moves any such pixel one grey level away
  before drawing the box.
* ImageNet-C fog depends on the image globally only through its maximum ``m``
  (gain ``m / (m + c)``); with the box pixels blacked out ``m`` is the maximum of
  the box-free image except under the box's one-pixel outline (stated choice).
  Its plasma is the same draw as plain ``fog`` of the same item (same random
  stream name).

Bases (``+box`` is appended to each name; all of seed 003):

======================  ==============================================================================
base                    what it does
======================  ==============================================================================
fog_physical            Koschmieder fog, the paper's 8 levels (250 m ... 1.953125 m)
underwater              pure-water attenuation, the same 8 levels
fog_physical_ext        Koschmieder fog on the extended visibility range: 14 levels from 16,000 m down to
                        1.953125 m by factors of 2 (levels 7-14 are the paper's 8 levels)
underwater_ext          the underwater arm on the extended visibility range
fog                     ImageNet-C fog, severities 1-5 (a depth-independent plasma-fractal haze)
sky_only_fog            control: the sky (infinite depth) becomes the fog's veiling light, every other
                        pixel keeps transmittance 1 (so the only change is the sky)
sky_only_water          the same with the water arm's veiling light
blank                   control: a uniform grey image (sRGB level 128); only the box remains
======================  ==============================================================================

The extended arms call the public functions :func:`.physical.physical_fog` and
:func:`.physical.underwater` (and the registered ``fog_physical``,
``underwater`` and ``fog``), so a change to the physical model of either arm
carries over here unchanged.
"""

from __future__ import annotations

import numpy as np

from . import physical
from ._core import PerturbationInfo, _lookup, register

__all__ = ["VISIBILITY_RANGE_EXT_M", "BLANK_GREY", "BOXED", "box_mask", "sky_only", "blank", "boxed_name",
           "register_all"]

#: The extended visibility range: 16,000 m down to 1.953125 m by factors of two (14 levels);
#: its last eight levels are seed 003's levels (:data:`.physical.VISIBILITY_LEVELS_M`).
VISIBILITY_RANGE_EXT_M = tuple(16000.0 / 2**k for k in range(14))
#: Grey level of the blank control (seed 003 Table VIII: "uniform grey image").
BLANK_GREY = 128
_EXT_LEVELS = tuple(range(1, 15))


def box_mask(image: np.ndarray) -> np.ndarray:
    """Boolean ``H×W`` mask of the pixels whose colour is exactly the red box's (:data:`vlmrobust.synth.BOX_RGB`)."""
    from ..synth.raster import BOX_RGB

    return np.all(np.asarray(image) == np.asarray(BOX_RGB, dtype=np.uint8), axis=-1)


def sky_only(image: np.ndarray, depth: np.ndarray, arm: str = "fog") -> np.ndarray:
    """The sky-only control: pixels of infinite depth become the arm's veiling light, all others keep t = 1.

    Built from the public arms with the depth map replaced by 0 (finite pixels,
    t = 1) and ``inf`` (the sky, t = 0), so the veiling light is exactly the
    arm's own (fog: grey 0.8; water: the blue-green light of
    :func:`.physical.underwater`).
    """
    if arm not in ("fog", "water"):
        raise ValueError(f"arm must be 'fog' or 'water', got {arm!r}")
    d = np.where(np.isfinite(np.asarray(depth, dtype=np.float64)), 0.0, np.inf).astype(np.float32)
    fn = physical.physical_fog if arm == "fog" else physical.underwater
    return fn(image, d, 1.0)  # any visibility: t is 1 at depth 0 and 0 at infinite depth


def blank(image: np.ndarray, grey: int = BLANK_GREY) -> np.ndarray:
    """A uniform grey image of ``image``'s size (the blank control of seed 003 Table VIII)."""
    if not isinstance(grey, (int, np.integer)) or not 0 <= int(grey) <= 255:
        raise ValueError(f"grey must be an int grey level in [0, 255], got {grey!r}")
    return np.full(np.asarray(image).shape, int(grey), dtype=np.uint8)


def boxed_name(base: str) -> str:
    """The registry name of ``base`` with the box drawn after it (``"fog_physical"`` -> ``"fog_physical+box"``)."""
    return f"{base}+box"


def _with_box(base_fn):
    def fn(x: np.ndarray, level: int, rng=None, depth=None, **options) -> np.ndarray:
        mask = box_mask(x)
        if mask.any():
            x = x.copy()
            x[mask] = 0
        out = np.array(base_fn(x, level, rng, depth, **options), dtype=np.uint8, copy=True)
        if mask.any():
            from ..synth.raster import BOX_RGB

            out[mask] = BOX_RGB
        return out

    return fn


def _fog_ext(x, level, rng, depth, **options):
    return physical.physical_fog(x, depth, VISIBILITY_RANGE_EXT_M[level - 1], **options)


def _water_ext(x, level, rng, depth, **options):
    return physical.underwater(x, depth, VISIBILITY_RANGE_EXT_M[level - 1], **options)


def _sky(arm: str):
    return lambda x, level, rng, depth: sky_only(x, depth, arm)


def _blank(x, level, rng, depth):
    return blank(x)


#: The bases wrapped by :func:`register_all`, in registry order.
BOXED = ("fog_physical", "underwater", "fog", "fog_physical_ext", "underwater_ext", "sky_only_fog",
         "sky_only_water", "blank")


def register_all() -> None:
    """Register the ``<base>+box`` perturbations (family ``boxed``; after the physical and ImageNet-C ones)."""
    common = dict(family="boxed", source="003")
    for base in ("fog_physical", "underwater", "fog"):
        meta, fn = _lookup(base)
        register(PerturbationInfo(
            name=boxed_name(base), levels=meta.levels, params=meta.params, param_name=meta.param_name,
            unit=meta.unit, random=meta.random, needs_depth=meta.needs_depth, options=meta.options,
            description=f"{meta.description.rstrip('.')}; the red box drawn after it",
            extra={"rng_name": meta.extra.get("rng_name", base), "base": base,
                   **({"version": meta.extra["version"]} if "version" in meta.extra else {})}, **common),
            _with_box(fn))
    fog_m, water_m = _lookup("fog_physical")[0], _lookup("underwater")[0]
    register(PerturbationInfo(
        name=boxed_name("fog_physical_ext"), levels=_EXT_LEVELS, params=VISIBILITY_RANGE_EXT_M,
        param_name=fog_m.param_name, unit="m", random=False, needs_depth=True, options=fog_m.options,
        description="Koschmieder fog on the extended visibility range (16,000 m to 1.95 m); the red box drawn "
                    "after it",
        extra={"base": "fog_physical_ext"}, **common), _with_box(_fog_ext))
    register(PerturbationInfo(
        name=boxed_name("underwater_ext"), levels=_EXT_LEVELS, params=VISIBILITY_RANGE_EXT_M,
        param_name=water_m.param_name, unit="m", random=False, needs_depth=True, options=water_m.options,
        description="The underwater arm on the extended visibility range (16,000 m to 1.95 m); the red box drawn "
                    "after it",
        extra={"base": "underwater_ext", "version": physical.WATER_VERSION}, **common), _with_box(_water_ext))
    for arm, veil in (("fog", physical.FOG_AIRLIGHT), ("water", float(np.mean(physical.WATER_VEILING)))):
        register(PerturbationInfo(
            name=boxed_name(f"sky_only_{arm}"), levels=(1,), params=(veil,),
            param_name="mean veiling light of the sky", unit="linear RGB", random=False, needs_depth=True,
            description=f"Control: the sky becomes the {arm} veiling light, t = 1 elsewhere; the red box after it",
            extra={"base": f"sky_only_{arm}", **({"version": physical.WATER_VERSION} if arm == "water" else {})},
            **common), _with_box(_sky(arm)))
    register(PerturbationInfo(
        name=boxed_name("blank"), levels=(1,), params=(float(BLANK_GREY),), param_name="grey level",
        unit="sRGB level", random=False, description="Control: a uniform grey image with the red box kept",
        extra={"base": "blank"}, **common), _with_box(_blank))
