"""The synthetic VQA world: scenes with exact metric depth and multiple-choice items.

A pinhole camera (1.6 m above the ground, pitched down 6 degrees, focal length
``1.2 * size`` pixels) looks over a textured ground plane with a horizon and a
sky. Objects are upright flat billboards (circles, squares, triangles, stars
and crosses in six colours and two physical sizes, 1.0 m and 1.7 m) and signs
with one character of a 5x7 bitmap font, standing on the ground at known metric
distances (default range 3-40 m), so their apparent size follows perspective.
Bar charts are their own scene type: a flat board 2 m in front of the camera.
Every image comes with the exact ray distance of every pixel in metres
(``inf`` for the sky), which makes physical fog (seed 003, Eq. 1) exact.

Public API::

    FAMILIES, CATEGORIES                  # the 9 task families and their category labels
    make_item(family, rng, size=64, abstain=None, distance=(3, 40)) -> SynthItem
    generate(n_per_family, seed, families=None, size=64, abstain=None, distance=(3, 40)) -> DataFrame
    render(ref) -> (image uint8 HxWx3, depth float32 HxW)
    make_ref / parse_ref / item_from_ref  # synth://v1/<seed>/<family>/<index>?size=..&abstain=..&distance=..
    draw_box(image, box)                  # add the red box after a corruption (seed 003)
    vocabulary(), words(text)             # closed word list for a word-level tokenizer

See :mod:`.camera` (geometry and depth), :mod:`.raster` (object model, the red
box), :mod:`.scene` (legibility bands per family), :mod:`.families` (questions).
"""

from __future__ import annotations

from .camera import (
    CAMERA_HEIGHT_M,
    CHART_DISTANCE_M,
    FOCAL_PER_SIZE,
    PITCH_DEG,
    focal_px,
    perspective_check,
)
from .exercises import exercise_00_1, exercise_00_2, exercise_00_3
from .families import BINARY, CATEGORIES, FAMILIES
from .glyphs import SIGN_CHARS
from .items import (
    DEFAULT_DISTANCE,
    MIN_SIZE,
    SynthItem,
    balance_table,
    generate,
    item_from_ref,
    make_item,
    make_ref,
    parse_ref,
    render,
    vocabulary,
    words,
)
from .raster import BOX_RGB, COLOURS, SHAPES, SIZES_M, draw_box
from .scene import BANDS_PX, family_range

__all__ = [
    "FAMILIES", "CATEGORIES", "BINARY", "DEFAULT_DISTANCE", "MIN_SIZE", "SynthItem",
    "balance_table", "perspective_check",
    "make_item", "generate", "render", "make_ref", "parse_ref", "item_from_ref", "vocabulary", "words",
    "draw_box", "COLOURS", "SHAPES", "SIZES_M", "BOX_RGB", "SIGN_CHARS", "BANDS_PX", "family_range",
    "CAMERA_HEIGHT_M", "PITCH_DEG", "FOCAL_PER_SIZE", "CHART_DISTANCE_M", "focal_px",
    "exercise_00_1",
    "exercise_00_2",
    "exercise_00_3",
]
