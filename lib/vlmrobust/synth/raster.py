"""Vectorised rendering: ground and sky, billboard objects and signs, the red box, bar charts.

Object model: every object is an **upright planar billboard** — a flat cut-out
standing on the ground in the vertical plane ``z = z_obj`` (perpendicular to
the ground and facing the camera's forward direction), centred laterally at
``x_obj``, of width ``w`` and height ``h`` metres, bottom edge on the ground.
A pixel whose ray ``d`` (unit, world frame) meets that plane at
``t = z_obj / d_z`` shows the object when the hit point lies inside the shape's
outline; ``t`` is then the exact ray distance of that pixel. A per-pixel
z-buffer resolves occlusion. Colours are flat (no shading, no anti-aliasing),
so every object pixel has exactly its palette colour.

The red box is a 1-pixel outline (``max(1, size // 64)`` pixels wide) in pure
red ``(255, 0, 0)`` drawn with a gap of ``max(2, size // 32)`` pixels around the
target's tight pixel bounding box. It is an overlay: it does not change the
depth map. The red object colour is ``(200, 30, 30)`` and filled, so the box
stays distinguishable from a red object by being a thin hollow frame of a
different red.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import camera as cam
from .glyphs import FONT_COLS, FONT_ROWS, glyph

__all__ = [
    "COLOURS", "SHAPES", "SIZES_M", "BOX_RGB", "SIGN_WIDTH_M", "SIGN_HEIGHT_M", "Billboard",
    "background", "draw_billboard", "draw_box", "box_for", "render_chart", "shape_mask",
]

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 30),
    "green": (30, 160, 50),
    "blue": (35, 70, 215),
    "yellow": (240, 215, 25),
    "purple": (140, 45, 175),
    "orange": (245, 130, 20),
}
"""Object palette (flat RGB). Well separated from each other, the ground and the sky."""

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross")
"""Object outlines, chosen to stay distinct at 8-16 pixels."""

SIZES_M: dict[str, float] = {"small": 1.0, "large": 1.7}
"""Physical height (= width) of an object, metres."""

BOX_RGB = (255, 0, 0)
SIGN_BOARD_RGB = (238, 238, 232)
SIGN_INK_RGB = (15, 15, 15)
_SIGN_CELLS_W = FONT_COLS + 2
_SIGN_CELLS_H = FONT_ROWS + 2
SIGN_CELL_M = 0.16
SIGN_WIDTH_M = _SIGN_CELLS_W * SIGN_CELL_M
SIGN_HEIGHT_M = _SIGN_CELLS_H * SIGN_CELL_M
SIGN_GLYPH_HEIGHT_M = FONT_ROWS * SIGN_CELL_M

# ground palettes (neutral: never close to an object colour)
_GROUNDS = np.array([(176, 164, 134), (150, 146, 138), (164, 150, 128), (138, 136, 126)], dtype=np.float64)
_SKY_HORIZON = np.array([205, 222, 240], dtype=np.float64)
_SKY_TOP = np.array([118, 165, 225], dtype=np.float64)

# star geometry: outer radius 1, inner radius _STAR_IN, five points, one pointing up
_STAR_IN = 0.48
_STAR_Y2 = _STAR_IN * math.sin(math.pi / 5)
_STAR_X2 = _STAR_IN * math.cos(math.pi / 5)


@dataclass(frozen=True)
class Billboard:
    """One object in the scene: a shape (``kind='shape'``) or a sign (``kind='sign'``)."""

    kind: str
    x: float  # lateral centre, metres
    z: float  # forward distance of its plane, metres
    w: float  # width, metres
    h: float  # height, metres
    colour: str = ""
    shape: str = ""
    size: str = ""
    char: str = ""

    def corners_px(self, size: int) -> tuple[float, float, float, float]:
        """Continuous pixel bounds ``(col0, row0, col1, row1)`` of the billboard's rectangle."""
        xs = np.array([self.x - self.w / 2, self.x + self.w / 2] * 2)
        ys = np.array([0.0, 0.0, self.h, self.h])
        zs = np.full(4, self.z)
        cols, rows = cam.project(xs, ys, zs, size)
        return float(cols.min()), float(rows.min()), float(cols.max()), float(rows.max())


def shape_mask(shape: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Inside test in normalised billboard coordinates ``u, v`` in ``[-1, 1]`` (``v`` up)."""
    if shape == "circle":
        return u * u + v * v <= 1.0
    if shape == "square":
        return (np.abs(u) <= 0.86) & (np.abs(v) <= 0.86)
    if shape == "triangle":  # apex up, base on the bottom
        return (v >= -0.92) & (np.abs(u) <= (0.98 - v) * (1.0 / 1.9))
    if shape == "cross":
        au, av = np.abs(u), np.abs(v)
        return ((au <= 0.32) & (av <= 1.0)) | ((av <= 0.32) & (au <= 1.0))
    if shape == "star":
        r = np.sqrt(u * u + v * v)
        theta = np.arctan2(u, v)  # 0 = pointing up
        sector = 2 * math.pi / 5
        alpha = np.abs(np.mod(theta + sector / 2, sector) - sector / 2)  # angle from nearest tip
        # radius of the edge from tip (1, 0) to inner vertex (x2, y2) along angle alpha
        rad = _STAR_Y2 / (np.cos(alpha) * _STAR_Y2 - np.sin(alpha) * (_STAR_X2 - 1.0))
        return r <= rad
    raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")


def background(size: int, ground_id: int, phase: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Sky and textured ground: float64 ``(size, size, 3)`` image and float64 depth.

    The ground texture is deterministic in world coordinates: 1 m tiles of
    alternating brightness plus a slow diagonal undulation, offset by ``phase``
    (metres, metres, radians); its contrast fades where one pixel row covers
    more than about half a tile, which keeps the horizon free of moire.
    """
    r = cam.rays(size)
    ox, oz, ph = phase
    tiles = (np.floor(r.gx + ox) + np.floor(r.gz + oz)) % 2.0
    wave = np.sin(0.9 * r.gx + 0.45 * r.gz + ph)
    fade = np.clip(1.0 - r.footprint * 1.6, 0.0, 1.0)
    shade = 1.0 + fade * (0.09 * (tiles - 0.5)) + 0.05 * wave
    base = _GROUNDS[ground_id % len(_GROUNDS)]
    sky = _SKY_HORIZON + r.sky_t[..., None] * (_SKY_TOP - _SKY_HORIZON)
    img = np.where(r.ground[..., None], shade[..., None] * base, sky)
    return img, r.t_ground.copy()


def draw_billboard(img: np.ndarray, depth: np.ndarray, bb: Billboard, size: int) -> tuple[int, int, int, int] | None:
    """Draw ``bb`` into ``img``/``depth`` in place (z-buffered).

    Returns the tight pixel bounding box ``(x0, y0, x1, y1)`` (exclusive ends) of
    the pixels it won, or ``None`` when none is visible.
    """
    c0, r0, c1, r1 = bb.corners_px(size)
    j0, i0 = max(int(math.floor(c0)), 0), max(int(math.floor(r0)), 0)
    j1, i1 = min(int(math.ceil(c1)) + 1, size), min(int(math.ceil(r1)) + 1, size)
    if j0 >= j1 or i0 >= i1:
        return None
    r = cam.rays(size)
    sl = (slice(i0, i1), slice(j0, j1))
    t = bb.z / r.dz[sl]
    u = (t * r.dx[sl] - bb.x) * (2.0 / bb.w)
    v = (cam.CAMERA_HEIGHT_M + t * r.dy[sl]) * (2.0 / bb.h) - 1.0
    d = depth[sl]
    if bb.kind == "shape":
        m = shape_mask(bb.shape, u, v) & (t < d)
        if not m.any():
            return None
        img[sl][m] = COLOURS[bb.colour]
    else:  # sign: a light board with one dark glyph (5 x 7 cells inside a one-cell margin)
        m = (np.abs(u) <= 1.0) & (np.abs(v) <= 1.0) & (t < d)
        if not m.any():
            return None
        cu = (u + 1.0) * (0.5 * _SIGN_CELLS_W)  # cell coordinates, 0 at left
        cv = (1.0 - v) * (0.5 * _SIGN_CELLS_H)  # 0 at top
        gi = np.floor(cv).astype(np.intp) - 1
        gj = np.floor(cu).astype(np.intp) - 1
        inside = (gi >= 0) & (gi < FONT_ROWS) & (gj >= 0) & (gj < FONT_COLS)
        ink = inside & glyph(bb.char)[np.clip(gi, 0, FONT_ROWS - 1), np.clip(gj, 0, FONT_COLS - 1)]
        patch = img[sl]
        patch[m] = SIGN_BOARD_RGB
        patch[m & ink] = SIGN_INK_RGB
    d[m] = t[m]
    rows = np.flatnonzero(m.any(1))
    cols = np.flatnonzero(m.any(0))
    return (j0 + int(cols[0]), i0 + int(rows[0]), j0 + int(cols[-1]) + 1, i0 + int(rows[-1]) + 1)


def box_for(bbox: tuple[int, int, int, int], size: int) -> tuple[int, int, int, int]:
    """The red box outline rectangle ``(x0, y0, x1, y1)`` (inclusive pixel lines) around ``bbox``."""
    gap = max(2, size // 32)
    x0, y0, x1, y1 = bbox
    return (max(x0 - gap, 0), max(y0 - gap, 0), min(x1 - 1 + gap, size - 1), min(y1 - 1 + gap, size - 1))


def draw_box(image: np.ndarray, box: tuple[int, int, int, int] | list[int], width: int | None = None) -> np.ndarray:
    """Draw the red box outline ``box = (x0, y0, x1, y1)`` (inclusive) into a copy of ``image``.

    ``width`` defaults to ``max(1, W // 64)``. Use it to add the box after a
    corruption, as seed 003 does ("a red box is added to the degraded image").
    """
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be uint8 HxWx3, got {image.dtype} {image.shape}")
    if len(box) != 4:
        raise ValueError(f"box must be (x0, y0, x1, y1), got {box!r}")
    out = image.copy()
    w = max(1, image.shape[1] // 64) if width is None else int(width)
    x0, y0, x1, y1 = (int(b) for b in box)
    rgb = np.array(BOX_RGB, dtype=np.uint8)
    out[y0:y0 + w, x0:x1 + 1] = rgb
    out[max(y1 - w + 1, 0):y1 + 1, x0:x1 + 1] = rgb
    out[y0:y1 + 1, x0:x0 + w] = rgb
    out[y0:y1 + 1, max(x1 - w + 1, 0):x1 + 1] = rgb
    return out


CHART_BG_RGB = (246, 246, 242)
CHART_AXIS_RGB = (40, 40, 40)


def chart_layout(size: int) -> tuple[int, int, list[tuple[int, int]]]:
    """Baseline row, maximal bar height (px) and the 4 bars' column spans ``[c0, c1)``."""
    base = int(round(size * 0.86))
    top = int(round(size * 0.12))
    left, right = int(round(size * 0.12)), int(round(size * 0.92))
    slot = (right - left) / 4.0
    spans = []
    for k in range(4):
        c0 = int(round(left + k * slot + slot * 0.18))
        c1 = int(round(left + (k + 1) * slot - slot * 0.18))
        spans.append((c0, c1))
    return base, base - top, spans


def render_chart(size: int, heights: list[float],
                 colours: list[str]) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """A bar chart: 4 bars of relative ``heights`` (0-1] in ``colours``; returns float64 image, bar boxes."""
    img = np.empty((size, size, 3), dtype=np.float64)
    img[:] = CHART_BG_RGB
    base, hmax, spans = chart_layout(size)
    lw = max(1, size // 64)
    left = int(round(size * 0.08))
    img[base:base + lw, left:int(round(size * 0.95))] = CHART_AXIS_RGB
    img[int(round(size * 0.08)):base + lw, left:left + lw] = CHART_AXIS_RGB
    boxes = []
    for (c0, c1), hgt, col in zip(spans, heights, colours, strict=True):
        top = base - max(1, int(round(hgt * hmax)))
        img[top:base, c0:c1] = COLOURS[col]
        boxes.append((c0, top, c1, base))
    return img, boxes
