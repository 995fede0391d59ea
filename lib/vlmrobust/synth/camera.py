"""The pinhole camera, the ground plane, the sky and exact per-pixel ray distance.

World frame: ``x`` to the right, ``y`` up, ``z`` forward along the ground; the
ground is the plane ``y = 0``. The camera sits at ``(0, CAMERA_HEIGHT_M, 0)``,
looks along ``+z`` pitched down by ``PITCH_DEG`` and has square pixels with focal
length ``f = FOCAL_PER_SIZE * size`` pixels (horizontal field of view
``2 atan(1 / (2 * FOCAL_PER_SIZE))`` = 45.2 degrees at every resolution). Pixel
``(i, j)`` (row, column) is sampled at its centre ``(j + 0.5, i + 0.5)``.

Depth convention (seed 003, Eq. 1 needs the distance light travels): every
depth map holds the **ray distance** in metres from the camera centre to the
surface seen through the pixel centre, *not* the planar depth along the optical
axis. For a ground pixel with unit ray direction ``d`` (``d_y < 0``) it is the
ray-plane intersection ``t = h / (-d_y)``; for the sky (``d_y >= 0``) it is
``inf``. Objects are upright planar billboards (see :mod:`.render`), so their
ray distance is exact too.

All arrays returned here are cached per image size and read-only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CAMERA_HEIGHT_M", "PITCH_DEG", "FOCAL_PER_SIZE", "CHART_DISTANCE_M", "Rays", "rays", "project",
    "focal_px", "ground_visible_from_m", "chart_depth", "perspective_check",
]

CAMERA_HEIGHT_M = 1.6
"""Height of the camera centre above the ground (metres)."""
PITCH_DEG = 6.0
"""Downward pitch of the optical axis (degrees)."""
FOCAL_PER_SIZE = 1.2
"""Focal length in units of the image side: ``f_px = 1.2 * size``."""
CHART_DISTANCE_M = 2.0
"""Planar distance of the fronto-parallel chart board (chart scenes)."""

_SIN = math.sin(math.radians(PITCH_DEG))
_COS = math.cos(math.radians(PITCH_DEG))


def focal_px(size: int) -> float:
    """Focal length in pixels for a ``size x size`` image."""
    return FOCAL_PER_SIZE * size


def ground_visible_from_m() -> float:
    """Nearest forward distance ``z`` whose ground point is inside the bottom image edge."""
    below = math.radians(PITCH_DEG) + math.atan(0.5 / FOCAL_PER_SIZE)
    return CAMERA_HEIGHT_M / math.tan(below)


@dataclass(frozen=True)
class Rays:
    """Per-pixel unit ray directions (world frame) and ground/sky geometry.

    ``dx, dy, dz``: unit ray components, ``(size, size)``; ``ground``: bool mask of
    pixels whose ray hits the ground; ``t_ground``: ray distance to the ground
    (``inf`` for sky); ``gx, gz``: world ``x, z`` of the ground hit (0 for sky);
    ``footprint``: ground distance covered by one pixel row (metres, for
    texture fading); ``sky_t``: 0 at the horizon, 1 at the top row.
    """

    size: int
    dx: np.ndarray
    dy: np.ndarray
    dz: np.ndarray
    ground: np.ndarray
    t_ground: np.ndarray
    gx: np.ndarray
    gz: np.ndarray
    footprint: np.ndarray
    sky_t: np.ndarray


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@lru_cache(maxsize=16)
def rays(size: int) -> Rays:
    """The cached ray grid of a ``size x size`` image."""
    f = focal_px(size)
    c = size / 2.0
    idx = np.arange(size, dtype=np.float64) + 0.5
    a = ((idx - c) / f)[None, :].repeat(size, 0)  # camera right
    b = (-(idx - c) / f)[:, None].repeat(size, 1)  # camera up
    # d = right * a + up * b + forward, with up = (0, cos, sin), forward = (0, -sin, cos)
    dx = a
    dy = _COS * b - _SIN
    dz = _SIN * b + _COS
    norm = np.sqrt(dx * dx + dy * dy + dz * dz)
    dx, dy, dz = dx / norm, dy / norm, dz / norm
    ground = dy < -1e-9
    with np.errstate(divide="ignore"):
        t = np.where(ground, CAMERA_HEIGHT_M / np.where(ground, -dy, 1.0), np.inf)
    tg = np.where(ground, t, 0.0)
    gx = tg * dx
    gz = tg * dz
    # ground distance covered by one row ~ z^2 / (f h): used to fade fine texture
    footprint = np.where(ground, gz * gz / (f * CAMERA_HEIGHT_M), np.inf)
    horizon_b = _SIN / _COS  # camera "up" coordinate of the horizon
    top_b = c / f
    sky_t = np.clip((b - horizon_b) / max(top_b - horizon_b, 1e-6), 0.0, 1.0)
    return Rays(size, _ro(dx), _ro(dy), _ro(dz), _ro(ground), _ro(t), _ro(gx), _ro(gz),
                _ro(footprint), _ro(sky_t))


def project(x: np.ndarray, y: np.ndarray, z: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Continuous pixel coordinates ``(col, row)`` of world points (pinhole model)."""
    f = focal_px(size)
    c = size / 2.0
    x = np.asarray(x, dtype=np.float64)
    yr = np.asarray(y, dtype=np.float64) - CAMERA_HEIGHT_M
    z = np.asarray(z, dtype=np.float64)
    up = _COS * yr + _SIN * z
    fwd = -_SIN * yr + _COS * z
    return c + f * x / fwd, c - f * up / fwd


def lateral_for_column(col: float, y: float, z: float, size: int) -> float:
    """World ``x`` that projects to column ``col`` for a point at height ``y``, forward ``z``."""
    f = focal_px(size)
    fwd = -_SIN * (y - CAMERA_HEIGHT_M) + _COS * z
    return (col - size / 2.0) / f * fwd


def horizon_row(size: int) -> float:
    """Continuous row of the horizon line."""
    return size / 2.0 - focal_px(size) * _SIN / _COS


@lru_cache(maxsize=16)
def chart_depth(size: int) -> np.ndarray:
    """Ray distance (float32) to a fronto-parallel board at planar distance ``CHART_DISTANCE_M``.

    The chart camera looks straight at the board (no pitch), so the ray distance
    is ``D * sqrt(1 + a^2 + b^2)`` with ``(a, b)`` the pixel's normalised image
    coordinates: 2.0 m at the centre, about 2.17 m in the corners.
    """
    f = focal_px(size)
    idx = (np.arange(size, dtype=np.float64) + 0.5 - size / 2.0) / f
    d = CHART_DISTANCE_M * np.sqrt(1.0 + idx[None, :] ** 2 + idx[:, None] ** 2)
    return _ro(d.astype(np.float32))


def perspective_check(metas) -> pd.DataFrame:
    """Rendered against predicted apparent height of every unclipped circle and sign of ground scenes.

    ``metas`` are items' ``meta`` dicts. Circles and signs fill their billboard's
    full height, so the rendered bounding-box height must match the pinhole
    projection of the object's top and bottom edge (:func:`project`) to about a
    pixel. Columns: ``kind``, ``distance_m``, ``measured_px``, ``predicted_px``.
    """
    import pandas as pd

    rows = []
    for m in metas:
        if m.get("scene") != "ground":
            continue
        for o in m["objects"]:
            if o.get("bbox") is None or (o["kind"] == "shape" and o.get("shape") != "circle"):
                continue  # circles and signs fill their billboard's full height
            x0, y0, x1, y1 = o["bbox"]
            if y0 <= 0 or y1 >= m["size"] or x0 <= 0 or x1 >= m["size"]:
                continue  # clipped by the image border
            _, top = project(o["x_m"], o["height_m"], o["z_m"], m["size"])
            _, bottom = project(o["x_m"], 0.0, o["z_m"], m["size"])
            rows.append({"kind": o["kind"], "distance_m": o["distance_m"], "measured_px": y1 - y0,
                         "predicted_px": float(bottom - top)})
    return pd.DataFrame(rows, columns=["kind", "distance_m", "measured_px", "predicted_px"])
