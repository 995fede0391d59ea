"""Task families: scene layout, question, answer and distractor options.

Every builder draws from the item's generator only, in a fixed order, and
returns a :class:`Plan` (what to render and what to ask). Question wording
follows seed 003 where it has one ("the object inside the red box"). Category
labels follow the benchmarks the families stand for.

======== ============================= =====================================================
family   category                      question (options)
======== ============================= =====================================================
colour   attribute                     What colour is the object inside the red box? (4 colours)
shape    identification                What shape is the object inside the red box? (4 shapes)
count    counting                      How many red objects are there? / How many stars ... (1-4)
spatial  spatial                       Which object is furthest to the left / right, nearest to
                                       the camera, farthest from the camera? (the 4 objects)
text     text                          What is written on the sign? (4 characters)
size     size                          Which object is the largest / smallest? (the 4 objects,
                                       standing side by side at one distance)
chart    chart                         Which bar is the tallest / shortest? (the 4 bar colours)
verify   verification                  Is the object inside the red box a red square? (yes / no)
exist    existence                     Is there a yellow star in the image? (yes / no; POPE)
======== ============================= =====================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import camera as cam
from .glyphs import SIGN_CHARS
from .raster import (
    COLOURS,
    SHAPES,
    SIGN_GLYPH_HEIGHT_M,
    SIGN_HEIGHT_M,
    SIGN_WIDTH_M,
    SIZES_M,
    Billboard,
)
from .scene import BANDS_PX, PlacementError, place, place_row, row_min_z, z_range

__all__ = ["FAMILIES", "CATEGORIES", "BINARY", "Plan", "build", "PLURALS", "question_texts"]

FAMILIES: tuple[str, ...] = ("colour", "shape", "count", "spatial", "text", "size", "chart", "verify", "exist")
CATEGORIES: dict[str, str] = {
    "colour": "attribute",
    "shape": "identification",
    "count": "counting",
    "spatial": "spatial",
    "text": "text",
    "size": "size",
    "chart": "chart",
    "verify": "verification",
    "exist": "existence",
}
BINARY = frozenset({"verify", "exist"})
PLURALS = {"circle": "circles", "square": "squares", "triangle": "triangles", "star": "stars", "cross": "crosses"}
COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)
_LETTERS = tuple(c for c in SIGN_CHARS if c.isalpha())
_DIGITS = tuple(c for c in SIGN_CHARS if c.isdigit())

SPATIAL_QUESTIONS = {
    "left": "Which object is furthest to the left?",
    "right": "Which object is furthest to the right?",
    "nearest": "Which object is nearest to the camera?",
    "farthest": "Which object is farthest from the camera?",
}
SIZE_QUESTIONS = {"largest": "Which object is the largest?", "smallest": "Which object is the smallest?"}
CHART_QUESTIONS = {"tallest": "Which bar is the tallest?", "shortest": "Which bar is the shortest?"}


@dataclass
class Plan:
    """What to render and what to ask."""

    scene: str  # "ground" or "chart"
    question: str
    answer: str
    distractors: list[str]
    objects: list[Billboard] = field(default_factory=list)
    target: int | None = None  # index into objects (ground) or bars (chart)
    boxed: bool = False
    chart: dict | None = None
    info: dict = field(default_factory=dict)


def _pick(rng: np.random.Generator, pool, k: int, exclude=()) -> list:
    cand = [p for p in pool if p not in exclude]
    idx = rng.choice(len(cand), size=k, replace=False)
    return [cand[i] for i in idx]


def _shape_spec(colour: str, shape: str, size: str, zr, required: bool = True) -> dict:
    h = SIZES_M[size]
    return {"kind": "shape", "w": h, "h": h, "colour": colour, "shape": shape, "size": size, "zr": zr,
            "required": required}


def _size(rng: np.random.Generator) -> str:
    return "small" if rng.random() < 0.5 else "large"


def _clutter(rng: np.random.Generator, n: int, distance, avoid=None) -> list[dict]:
    """Optional background objects anywhere in the user's distance range."""
    specs = []
    for _ in range(n):
        while True:
            c = COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))]
            s = SHAPES[rng.integers(len(SHAPES))]
            if avoid is None or not avoid(c, s):
                break
        specs.append(_shape_spec(c, s, _size(rng), distance, required=False))
    return specs


def _boxed(family: str, rng, distance) -> tuple[list[dict], str, str]:
    colour = COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))]
    shape = SHAPES[rng.integers(len(SHAPES))]
    size = _size(rng)
    target = _shape_spec(colour, shape, size, z_range(SIZES_M[size], BANDS_PX[family], distance))
    specs = [target] + _clutter(rng, int(rng.integers(1, 4)), distance)
    return specs, colour, shape


def _colour(rng, size, distance, truth) -> Plan:
    specs, colour, _ = _boxed("colour", rng, distance)
    objs = place(rng, specs, size)
    return Plan("ground", "What colour is the object inside the red box?", colour,
                _pick(rng, COLOUR_NAMES, 3, (colour,)), objs, 0, True)


def _shape(rng, size, distance, truth) -> Plan:
    specs, _, shape = _boxed("shape", rng, distance)
    objs = place(rng, specs, size)
    return Plan("ground", "What shape is the object inside the red box?", shape,
                _pick(rng, SHAPES, 3, (shape,)), objs, 0, True)


def article(word: str) -> str:
    """The indefinite article before ``word`` ("an orange star", "a red square")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _verify(rng, size, distance, truth) -> Plan:
    specs, colour, shape = _boxed("verify", rng, distance)
    objs = place(rng, specs, size)
    if truth is None:
        truth = bool(rng.random() < 0.5)
    qc, qs = colour, shape
    if not truth:
        mode = int(rng.integers(3))  # 0: colour differs, 1: shape differs, 2: both
        if mode in (0, 2):
            qc = _pick(rng, COLOUR_NAMES, 1, (colour,))[0]
        if mode in (1, 2):
            qs = _pick(rng, SHAPES, 1, (shape,))[0]
    q = f"Is the object inside the red box {article(qc)} {qc} {qs}?"
    ans = "yes" if truth else "no"
    return Plan("ground", q, ans, ["no" if truth else "yes"], objs, 0, True,
                info={"truth": truth, "query": [qc, qs]})


def _count(rng, size, distance, truth) -> Plan:
    by_colour = bool(rng.random() < 0.5)
    n = int(rng.integers(1, 5))
    n_other = int(rng.integers(0, 3))
    band = BANDS_PX["count"]
    specs = []
    if by_colour:
        c = COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))]
        for _ in range(n):
            sz = _size(rng)
            specs.append(_shape_spec(c, SHAPES[rng.integers(len(SHAPES))], sz, z_range(SIZES_M[sz], band, distance)))
        for _ in range(n_other):
            sz = _size(rng)
            oc = _pick(rng, COLOUR_NAMES, 1, (c,))[0]
            specs.append(_shape_spec(oc, SHAPES[rng.integers(len(SHAPES))], sz, z_range(SIZES_M[sz], band, distance)))
        q = f"How many {c} objects are there?"
        info = {"count": n, "by": "colour", "colour": c}
    else:
        s = SHAPES[rng.integers(len(SHAPES))]
        for _ in range(n):
            sz = _size(rng)
            specs.append(_shape_spec(COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))], s, sz,
                                     z_range(SIZES_M[sz], band, distance)))
        for _ in range(n_other):
            sz = _size(rng)
            os_ = _pick(rng, SHAPES, 1, (s,))[0]
            specs.append(_shape_spec(COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))], os_, sz,
                                     z_range(SIZES_M[sz], band, distance)))
        q = f"How many {PLURALS[s]} are there?"
        info = {"count": n, "by": "shape", "shape": s}
    specs.sort(key=lambda s: -s["h"])  # big ones first: fewer rejections
    objs = place(rng, specs, size, boxed=False)
    ans = str(n)
    return Plan("ground", q, ans, [str(k) for k in range(1, 5) if k != n], objs, None, False, info=info)


def _distinct_combos(rng, k: int) -> list[tuple[str, str]]:
    combos = [(c, s) for c in COLOUR_NAMES for s in SHAPES]
    idx = rng.choice(len(combos), size=k, replace=False)
    return [combos[i] for i in idx]


def _spatial(rng, size, distance, truth) -> Plan:
    kind = ("left", "right", "nearest", "farthest")[int(rng.integers(4))]
    combos = _distinct_combos(rng, 4)
    band = BANDS_PX["spatial"]
    specs = []
    for c, s in combos:
        sz = _size(rng)
        specs.append(_shape_spec(c, s, sz, z_range(SIZES_M[sz], band, distance)))
    pick = int(rng.integers(4))
    first, rest = specs[pick], [sp for i, sp in enumerate(specs) if i != pick]
    if kind in ("left", "right"):
        # the others first, then the extreme object >= 10 % of the width beyond all their centres
        for sp in rest:
            sp["colr"] = (0.25, 0.96) if kind == "left" else (0.04, 0.75)
        others = place(rng, rest, size, boxed=False)
        cols = [float(cam.project(o.x, o.h / 2, o.z, size)[0]) / size for o in others]
        first["colr"] = (0.04, min(cols) - 0.1) if kind == "left" else (max(cols) + 0.1, 0.96)
        if first["colr"][0] >= first["colr"][1]:
            raise PlacementError("no room for the extreme object")
        placed = place(rng, [first], size, boxed=False, existing=others) + others
    else:
        # the extreme object is >= 1.3 x nearer (farther) than every other; it is small when
        # nearest and large when farthest, so that the others keep room inside their bands
        sz = "small" if kind == "nearest" else "large"
        first.update(size=sz, w=SIZES_M[sz], h=SIZES_M[sz], zr=z_range(SIZES_M[sz], band, distance))
        lo, hi = first["zr"]
        first["z"] = float(rng.uniform(lo, lo + (hi - lo) * 0.3)) if kind == "nearest" else float(
            rng.uniform(lo + (hi - lo) * 0.7, hi))
        z0 = first["z"]
        for sp in rest:
            rlo, rhi = sp["zr"]
            if kind == "nearest":
                sp["zr"] = (max(rlo, z0 * 1.3), min(max(rhi, z0 * 1.3 * 1.25), distance[1]))
            else:
                sp["zr"] = (max(min(rlo, z0 / 1.3 / 1.25), distance[0]), min(rhi, z0 / 1.3))
            if sp["zr"][0] > sp["zr"][1]:
                raise PlacementError("no room for nearer/farther objects within distance")
        placed = place(rng, [first], size, boxed=False)
        placed += place(rng, rest, size, boxed=False, existing=placed)
    objs = [None] * 4
    objs[pick] = placed[0]
    others = [i for i in range(4) if i != pick]
    for i, o in zip(others, placed[1:], strict=True):
        objs[i] = o
    names = [f"{c} {s}" for c, s in combos]
    return Plan("ground", SPATIAL_QUESTIONS[kind], names[pick], [n for i, n in enumerate(names) if i != pick],
                objs, pick, False, info={"relation": kind})


def _size_family(rng, size, distance, truth) -> Plan:
    kind = "largest" if rng.random() < 0.5 else "smallest"
    combos = _distinct_combos(rng, 4)
    odd = int(rng.integers(4))
    common, rare = ("small", "large") if kind == "largest" else ("large", "small")
    zr = z_range(SIZES_M["small"], BANDS_PX["size"], distance)
    specs = [_shape_spec(c, s, rare if i == odd else common, zr) for i, (c, s) in enumerate(combos)]
    zmin = row_min_z(specs, size)
    if zmin > distance[1]:
        raise PlacementError("the row does not fit within distance")
    z = float(rng.uniform(max(zr[0], zmin), max(zr[1], zmin)))
    objs = place_row(rng, specs, z, size)
    names = [f"{c} {s}" for c, s in combos]
    return Plan("ground", SIZE_QUESTIONS[kind], names[odd], [n for i, n in enumerate(names) if i != odd],
                objs, odd, False, info={"relation": kind, "z_m": z})


def _text(rng, size, distance, truth) -> Plan:
    char = SIGN_CHARS[rng.integers(len(SIGN_CHARS))]
    pool = _LETTERS if char.isalpha() else _DIGITS
    zr = z_range(SIGN_GLYPH_HEIGHT_M, BANDS_PX["text"], distance)
    sign = {"kind": "sign", "w": SIGN_WIDTH_M, "h": SIGN_HEIGHT_M, "char": char, "zr": zr, "required": True}
    specs = [sign] + _clutter(rng, int(rng.integers(0, 3)), distance)
    objs = place(rng, specs, size)
    return Plan("ground", "What is written on the sign?", char, _pick(rng, pool, 3, (char,)), objs, 0, False)


def _exist(rng, size, distance, truth) -> Plan:
    if truth is None:
        truth = bool(rng.random() < 0.5)
    n = int(rng.integers(2, 5))
    combos = _distinct_combos(rng, n + 1)
    present = combos[:n] if truth else combos[1:]
    query = combos[0]
    if not truth and rng.random() < 2 / 3:  # adversarial: share colour or shape with a present object
        ref = present[int(rng.integers(n))]
        taken = set(present)
        if rng.random() < 0.5:
            cand = [(ref[0], s) for s in SHAPES if (ref[0], s) not in taken]
        else:
            cand = [(c, ref[1]) for c in COLOUR_NAMES if (c, ref[1]) not in taken]
        if cand:
            query = cand[int(rng.integers(len(cand)))]
    band = BANDS_PX["exist"]
    specs = []
    for c, s in present:
        sz = _size(rng)
        specs.append(_shape_spec(c, s, sz, z_range(SIZES_M[sz], band, distance)))
    objs = place(rng, specs, size, boxed=False)
    target = present.index(query) if truth else None
    q = f"Is there {article(query[0])} {query[0]} {query[1]} in the image?"
    return Plan("ground", q, "yes" if truth else "no", ["no" if truth else "yes"], objs, target, False,
                info={"truth": truth, "query": list(query)})


def _chart(rng, size, distance, truth) -> Plan:
    kind = "tallest" if rng.random() < 0.5 else "shortest"
    colours = _pick(rng, COLOUR_NAMES, 4)
    for _ in range(100):
        heights = rng.uniform(0.15, 1.0, 4)
        s = np.sort(heights)
        if (kind == "tallest" and s[3] - s[2] >= 0.12) or (kind == "shortest" and s[1] - s[0] >= 0.12):
            break
    pick = int(np.argmax(heights) if kind == "tallest" else np.argmin(heights))
    return Plan("chart", CHART_QUESTIONS[kind], colours[pick], [c for i, c in enumerate(colours) if i != pick],
                [], pick, False, chart={"heights": [float(h) for h in heights], "colours": colours},
                info={"relation": kind})


_BUILDERS = {
    "colour": _colour, "shape": _shape, "count": _count, "spatial": _spatial, "text": _text,
    "size": _size_family, "chart": _chart, "verify": _verify, "exist": _exist,
}


def build(family: str, rng: np.random.Generator, size: int, distance: tuple[float, float],
          truth: bool | None, retries: int = 50) -> Plan:
    """Draw the plan of one item; retries the whole scene when a placement fails."""
    fn = _BUILDERS[family]
    for _ in range(retries):
        try:
            return fn(rng, size, distance, truth)
        except PlacementError:
            continue
    raise PlacementError(f"family {family!r}: no valid scene after {retries} attempts "
                         f"(size={size}, distance={distance})")


def question_texts() -> list[str]:
    """Every question text any family can ask (for the vocabulary)."""
    qs = ["What colour is the object inside the red box?", "What shape is the object inside the red box?",
          "What is written on the sign?"]
    qs += [f"How many {c} objects are there?" for c in COLOUR_NAMES]
    qs += [f"How many {PLURALS[s]} are there?" for s in SHAPES]
    qs += list(SPATIAL_QUESTIONS.values()) + list(SIZE_QUESTIONS.values()) + list(CHART_QUESTIONS.values())
    for c in COLOUR_NAMES:
        for s in SHAPES:
            qs.append(f"Is the object inside the red box {article(c)} {c} {s}?")
            qs.append(f"Is there {article(c)} {c} {s} in the image?")
    return qs


def option_texts() -> list[str]:
    """Every option text any family can offer (abstain options excluded)."""
    opts = list(COLOUR_NAMES) + list(SHAPES) + [str(k) for k in range(1, 5)] + list(SIGN_CHARS) + ["yes", "no"]
    opts += [f"{c} {s}" for c in COLOUR_NAMES for s in SHAPES]
    return opts
