"""Placing billboards on the ground so that they are visible, inside the image and apart.

Legibility bands: a family asks for its key objects to span a band of apparent
heights, given in pixels **at 64 x 64** (the same fraction of the image at any
size). For an object of height ``h`` metres the band ``[p_min, p_max]``
becomes the forward-distance range
``z in [F * 64 * h / p_max, F * 64 * h / p_min]`` with ``F = FOCAL_PER_SIZE``,
intersected with the user's ``distance`` range. The bands are listed in
:data:`BANDS_PX` and, in metres, by :func:`family_range`. With the default
range (3, 40) m they give these forward distances (small 1.0 m / large 1.7 m
objects; the sign's glyph is 1.12 m tall):

======== ============ ============ ============ =====================================
family   band (px)    small (m)    large (m)    other objects
======== ============ ============ ============ =====================================
colour   8-24         3.2-9.6      5.4-16.3     1-3 optional clutter anywhere in range
shape    12-28        3.1-6.4      4.7-10.9     1-3 optional clutter anywhere in range
verify   10-28        3.1-7.7      4.7-13.1     1-3 optional clutter anywhere in range
count    8-16         4.8-9.6      8.2-16.3     every object in the band (all must count)
spatial  8-14         5.5-9.6      9.3-16.3     the extreme one 1.3 x nearer / farther
exist    8-18         4.3-9.6      7.3-16.3     every object in the band
size     7-12         6.4-11.0     --           four side by side at one distance
text     9-20 glyph   4.3-9.6 (sign)            0-2 optional clutter anywhere in range
======== ============ ============ ============ =====================================

Clutter objects may be tiny (a 1.0 m object at 40 m spans 2 px): they give
depth variety for fog and are never asked about. Objects never overlap: their
rectangles keep :func:`gap_px` apart, which leaves room for the red box.
"""

from __future__ import annotations

import math

import numpy as np

from . import camera as cam
from .raster import SIGN_GLYPH_HEIGHT_M, SIZES_M, Billboard

__all__ = ["BANDS_PX", "family_range", "z_range", "place", "PlacementError"]

BANDS_PX: dict[str, tuple[float, float]] = {
    "colour": (8.0, 24.0),
    "shape": (12.0, 28.0),
    "count": (8.0, 16.0),
    "spatial": (8.0, 14.0),
    "text": (9.0, 20.0),  # height of the glyph (7 font rows), not of the board
    "size": (7.0, 12.0),  # the small objects; large ones are 1.7 x as tall
    "verify": (10.0, 28.0),
    "exist": (8.0, 18.0),
}
"""Apparent height band of each family's key objects, pixels at 64 x 64."""

_MIN_Z = cam.ground_visible_from_m() * 1.05


class PlacementError(RuntimeError):
    """No placement satisfying the constraints was found (should not happen with sane arguments)."""


def z_range(h: float, band: tuple[float, float], distance: tuple[float, float]) -> tuple[float, float]:
    """Forward-distance range for an object of height ``h`` to span ``band`` px (at 64), within ``distance``."""
    k = cam.FOCAL_PER_SIZE * 64.0 * h
    lo = max(distance[0], k / band[1], _MIN_Z)
    hi = min(distance[1], k / band[0])
    if lo > hi:  # large objects may not fit a narrow user range: honour the user range
        lo, hi = max(distance[0], _MIN_Z), max(distance[1], _MIN_Z)
    return lo, hi


def family_range(family: str, distance: tuple[float, float]) -> tuple[float, float]:
    """The key objects' forward-distance range (metres) of ``family`` for small objects.

    Raises ``ValueError`` naming ``distance`` when the user range leaves no room.
    """
    if family == "size":  # the widest row (three large, one small) must fit side by side
        w = 3 * SIZES_M["large"] + SIZES_M["small"]
        need = cam.focal_px(64) * w / (64 - 4.0 - 3 * gap_px(64, False)) * 1.02 + 0.05
        if distance[1] < need:
            raise ValueError(f"distance={tuple(distance)} leaves no room for family 'size': its four objects "
                             f"stand side by side and need a far limit of at least {need:.2f} m")
    band = BANDS_PX[family]
    h = SIGN_GLYPH_HEIGHT_M if family == "text" else SIZES_M["small"]
    k = cam.FOCAL_PER_SIZE * 64.0 * h
    lo = max(distance[0], k / band[1], _MIN_Z)
    hi = min(distance[1], k / band[0])
    if lo > hi:
        raise ValueError(
            f"distance={tuple(distance)} leaves no room for family {family!r}: its key objects must lie "
            f"within [{max(k / band[1], _MIN_Z):.2f}, {k / band[0]:.2f}] m to span {band[0]:g}-{band[1]:g} px "
            "at 64x64; pass a distance range that overlaps it"
        )
    return lo, hi


def _inside(b: tuple[float, float, float, float], size: int) -> bool:
    return b[0] >= 1.0 and b[1] >= 1.0 and b[2] <= size - 1.0 and b[3] <= size - 1.0


def _apart(b: tuple[float, float, float, float], others: list, gap: float) -> bool:
    for o in others:
        if not (b[2] + gap <= o[0] or o[2] + gap <= b[0] or b[3] + gap <= o[1] or o[3] + gap <= b[1]):
            return False
    return True


def gap_px(size: int, boxed: bool = True) -> float:
    """Minimal pixel gap between rectangles: room for the red box (4 px at 64), else 2 px at 64."""
    return max(4.0, size / 16.0) if boxed else max(1.0, size / 32.0)


def _free_column(rng, spec, z, bounds, gap, size, clo, chi) -> float | None:
    """Draw a centre column uniformly from the columns where the billboard fits beside ``bounds``."""
    probe = Billboard(spec["kind"], 0.0, z, spec["w"], spec["h"]).corners_px(size)
    centre = size / 2.0
    left, right = centre - probe[0], probe[2] - centre  # half-widths (widest row)
    lo = max(clo * size, 1.0 + left)
    hi = min(chi * size, size - 1.0 - right)
    if lo > hi:
        return None
    free = [(lo, hi)]
    for o in bounds:
        if probe[3] + gap <= o[1] or o[3] + gap <= probe[1]:
            continue  # vertically apart
        a, b = o[0] - gap - right, o[2] + gap + left
        nxt = []
        for u, v in free:
            if b <= u or a >= v:
                nxt.append((u, v))
                continue
            if a > u:
                nxt.append((u, a))
            if b < v:
                nxt.append((b, v))
        free = nxt
    lengths = np.array([v - u for u, v in free])
    total = float(lengths.sum()) if len(free) else 0.0
    if total <= 0.0:
        return None
    r = float(rng.uniform(0.0, total))
    for (u, _v), ln in zip(free, lengths, strict=True):
        if r <= ln:
            return u + r
        r -= ln
    return free[-1][1]


def place(
    rng: np.random.Generator,
    specs: list[dict],
    size: int,
    tries: int = 60,
    *,
    boxed: bool = True,
    existing: list[Billboard] = (),
) -> list[Billboard | None]:
    """Place billboards one by one by rejection sampling.

    Each spec has ``kind, w, h, zr=(lo, hi)``, ``required`` and the attribute
    fields of :class:`Billboard`. A spec may fix ``z``. A placement is accepted
    when the billboard's rectangle is inside the image and at least
    :func:`gap_px` away from every placed one (and from ``existing``). A spec
    may restrict the centre column to ``colr=(lo, hi)`` (fractions of the width). A required object that cannot be
    placed raises :class:`PlacementError` (callers retry the scene); an optional
    one is left out (``None``).
    """
    placed: list[Billboard | None] = []
    bounds: list[tuple[float, float, float, float]] = [b.corners_px(size) for b in existing]
    gap = gap_px(size, boxed)
    for spec in specs:
        clo, chi = spec.get("colr", (0.06, 0.94))
        attrs = {k: spec[k] for k in ("colour", "shape", "size", "char") if k in spec}
        got = None
        for _ in range(tries):
            z = spec["z"] if "z" in spec else float(rng.uniform(*spec["zr"]))
            col = _free_column(rng, spec, z, bounds, gap, size, clo, chi)
            if col is None:
                continue
            x = cam.lateral_for_column(col, spec["h"] / 2, z, size)
            bb = Billboard(spec["kind"], x, z, spec["w"], spec["h"], **attrs)
            b = bb.corners_px(size)
            if _inside(b, size) and _apart(b, bounds, gap):
                got = bb
                bounds.append(b)
                break
        if got is None and spec.get("required", True):
            raise PlacementError(f"could not place {spec}")
        placed.append(got)
    return placed


def row_min_z(specs: list[dict], size: int, boxed: bool = False) -> float:
    """Smallest forward distance at which ``specs`` fit side by side (see :func:`place_row`)."""
    usable = size - 4.0 - gap_px(size, boxed) * (len(specs) - 1)
    return cam.focal_px(size) * sum(s["w"] for s in specs) / max(usable, 1.0) * 1.02 + 0.05


def place_row(
    rng: np.random.Generator,
    specs: list[dict],
    z: float,
    size: int,
    boxed: bool = False,
) -> list[Billboard]:
    """Place billboards side by side at one forward distance ``z``, in the given order.

    The free width is split at random (Dirichlet) between the margins and the
    gaps. Raises :class:`PlacementError` when they do not fit.
    """
    f = cam.focal_px(size)
    gap = gap_px(size, boxed)
    widths = []
    for s in specs:
        fwd = -math.sin(math.radians(cam.PITCH_DEG)) * (s["h"] / 2 - cam.CAMERA_HEIGHT_M) + math.cos(
            math.radians(cam.PITCH_DEG)) * z
        widths.append(f * s["w"] / fwd)
    usable = size - 2.0 - 2.0  # one-pixel margins plus rounding room
    slack = usable - sum(widths) - gap * (len(specs) - 1)
    if slack <= 0:
        raise PlacementError(f"{len(specs)} objects do not fit side by side at z={z:.2f} m")
    parts = rng.dirichlet(np.ones(len(specs) + 1)) * slack
    out = []
    col = 2.0 + parts[0]
    for k, (s, wpx) in enumerate(zip(specs, widths, strict=True)):
        centre = col + wpx / 2
        x = cam.lateral_for_column(centre, s["h"] / 2, z, size)
        attrs = {a: s[a] for a in ("colour", "shape", "size", "char") if a in s}
        bb = Billboard(s["kind"], x, z, s["w"], s["h"], **attrs)
        if not _inside(bb.corners_px(size), size):
            raise PlacementError("row leaves the image")
        out.append(bb)
        col += wpx + gap + parts[k + 1]
    return out
