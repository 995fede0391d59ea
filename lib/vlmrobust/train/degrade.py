"""The boxed object's world conditions under fog and water: what training streams and behaviour checks share.

:func:`degrade` applies the engine's physical fog or underwater attenuation
(:mod:`vlmrobust.corrupt.physical`) at a visibility in metres; :func:`boxed_condition`
renders an item without its red box, degrades it, draws the box afterwards and
says whether the boxed object is still visible (its luminance transmittance
against :data:`AWARE_THRESHOLD`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..corrupt.physical import FOG_AIRLIGHT, luminance_transmittance, physical_fog, underwater

__all__ = ["BOXED_FAMILIES", "ARMS", "AWARE_THRESHOLD", "EXTENDED_LEVELS_M", "object_transmittance", "degrade",
           "boxed_condition"]

#: Families whose question is about the object inside the red box.
BOXED_FAMILIES: tuple[str, ...] = ("colour", "shape", "verify")
ARMS: tuple[str, ...] = ("fog", "water")
#: The aware organism's threshold on the boxed object's luminance transmittance (5 % contrast).
AWARE_THRESHOLD = 0.05
#: Visibility levels of the measurements: seed 003's 8 levels (250 m ... 1.95 m) extended upwards from 16 km.
EXTENDED_LEVELS_M: tuple[float, ...] = tuple(16000.0 / 2**k for k in range(14))


def _arm(arm: str) -> str:
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    return arm


def object_transmittance(distance_m: float, arm: str, visibility: float) -> float:
    """Luminance transmittance ``sum_c w_c exp(-beta_c d)`` of an object ``distance_m`` away (1 when clear):
    :func:`vlmrobust.corrupt.physical.luminance_transmittance` of the arm at one distance."""
    d = float(distance_m)
    if not d >= 0 or math.isnan(d):
        raise ValueError(f"distance_m must be >= 0 metres, got {distance_m!r}")
    return float(luminance_transmittance(np.array([d]), float(visibility), _arm(arm))[0])


def degrade(image: np.ndarray, depth: np.ndarray, arm: str, visibility: float) -> np.ndarray:
    """``image`` under the engine's fog (:func:`vlmrobust.corrupt.physical_fog`) or water
    (:func:`vlmrobust.corrupt.underwater`) at ``visibility`` metres (``inf``: the image unchanged)."""
    if math.isinf(float(visibility)):
        return np.asarray(image).copy()
    if _arm(arm) == "fog":
        return physical_fog(image, depth, float(visibility), airlight=FOG_AIRLIGHT)
    return underwater(image, depth, float(visibility))


def boxed_condition(item: Any, arm: str, visibility: float, threshold: float = AWARE_THRESHOLD) \
        -> tuple[np.ndarray, float, bool]:
    """An item rendered without its box (``make_item(..., box=False)``) under ``arm`` at ``visibility``.

    Returns the degraded image with the red box drawn afterwards, the boxed object's
    transmittance ``t`` and whether it is invisible (``t < threshold``).
    """
    from ..synth import draw_box

    meta = item.meta
    if meta.get("box") is None:
        raise ValueError(f"item of family {meta.get('family')!r} has no red box")
    if meta.get("box_drawn"):
        raise ValueError("the box must be drawn after the degradation: make the item with box=False")
    img = degrade(item.image, item.depth, arm, visibility)
    t = object_transmittance(meta["target_distance_m"], arm, visibility)
    return draw_box(img, meta["box"]), t, bool(t < threshold)
