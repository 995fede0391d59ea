"""Items: one rendered multiple-choice question, tables of them, and ``synth://`` references."""

from __future__ import annotations

import json
import math
import numbers
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from .. import repro
from ..schema import ABSTAIN_TEXTS, ITEM_COLUMNS
from . import camera as cam
from .families import BINARY, CATEGORIES, FAMILIES, build, option_texts, question_texts
from .raster import background, box_for, draw_billboard, draw_box, render_chart
from .scene import BANDS_PX, family_range

__all__ = [
    "SynthItem", "make_item", "generate", "render", "make_ref", "parse_ref", "balance_table",
    "item_from_ref", "vocabulary", "words", "check_args",
]


DEFAULT_DISTANCE = (3.0, 40.0)
MIN_SIZE = 32
REF_VERSION = "v1"
_WORD_RE = re.compile(r"\w+|[^\w\s]+")


@dataclass(frozen=True)
class SynthItem:
    """One rendered item: question, options, answer and the image with its metric depth."""

    family: str
    category: str
    question: str
    options: list[str]
    answer_idx: int
    abstain_idx: int
    image: np.ndarray  # uint8 (size, size, 3)
    depth: np.ndarray  # float32 (size, size), ray distance in metres, inf = sky
    meta: dict

    @property
    def answer(self) -> str:
        """The correct option's text."""
        return self.options[self.answer_idx]


# --------------------------------------------------------------------------- arguments


def check_args(family=None, size=64, abstain=None, distance=DEFAULT_DISTANCE) -> tuple[float, float]:
    """Validate the shared arguments; return ``distance`` as a float pair."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < MIN_SIZE:
        raise ValueError(f"size must be an int >= {MIN_SIZE}, got {size!r}")
    if abstain is not None and abstain not in ABSTAIN_TEXTS:
        raise ValueError(f"abstain must be None or one of {tuple(ABSTAIN_TEXTS)}, got {abstain!r}")
    try:
        lo, hi = (float(d) for d in distance)
    except (TypeError, ValueError):
        raise ValueError(f"distance must be a pair (near, far) of metres, got {distance!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
        raise ValueError(f"distance must satisfy 0 < near < far (finite metres), got {distance!r}")
    if family is not None and family != "chart":
        family_range(family, (lo, hi))
    return lo, hi


# --------------------------------------------------------------------------- rendering


def _obj_meta(o, bbox) -> dict:
    cy = o.h / 2 - cam.CAMERA_HEIGHT_M
    d = {"kind": o.kind, "x_m": round(o.x, 4), "z_m": round(o.z, 4), "height_m": o.h, "width_m": o.w,
         "distance_m": round(math.sqrt(o.x * o.x + cy * cy + o.z * o.z), 4),
         "bbox": list(bbox) if bbox is not None else None}
    if o.kind == "shape":
        d.update(colour=o.colour, shape=o.shape, size=o.size)
    else:
        d.update(char=o.char)
    return d


def make_item(
    family: str,
    rng: np.random.Generator,
    size: int = 64,
    abstain: str | None = None,
    distance: tuple[float, float] = DEFAULT_DISTANCE,
    *,
    truth: bool | None = None,
    box: bool = True,
) -> SynthItem:
    """Draw and render one item of ``family`` from ``rng`` (the fast path for training data).

    ``distance`` bounds every object's forward distance (metres); each family's
    key objects are further limited to its legibility band
    (:data:`vlmrobust.synth.scene.BANDS_PX`). ``truth`` forces the answer of the
    binary families (``True`` = "yes"); ``box=False`` leaves the red box out of
    the image (its rectangle stays in ``meta["box"]``; add it later with
    :func:`vlmrobust.synth.draw_box`, e.g. after a corruption as in seed 003).
    """
    lo_hi = check_args(family, size, abstain, distance)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (e.g. vlmrobust.repro.rng(...)), got {type(rng).__name__}")
    if truth is not None and family not in BINARY:
        raise ValueError(f"truth applies to the yes/no families {sorted(BINARY)} only, got family={family!r}")
    plan = build(family, rng, size, lo_hi, truth)

    objects_meta: list[dict] = []
    bbox = None
    if plan.scene == "chart":
        img, bars = render_chart(size, plan.chart["heights"], plan.chart["colours"])
        depth = np.array(cam.chart_depth(size), dtype=np.float32)
        bbox = list(bars[plan.target])
        objects_meta = [{"kind": "bar", "colour": c, "height": round(h, 4), "bbox": list(b)}
                        for c, h, b in zip(plan.chart["colours"], plan.chart["heights"], bars, strict=True)]
        scene_meta = {"board_distance_m": cam.CHART_DISTANCE_M}
    else:
        ground_id = int(rng.integers(4))
        phase = (float(rng.uniform(0, 2)), float(rng.uniform(0, 2)), float(rng.uniform(0, 2 * math.pi)))
        img, depth64 = background(size, ground_id, phase)
        order = sorted(range(len(plan.objects)), key=lambda k: -plan.objects[k].z if plan.objects[k] else 0)
        bboxes: dict[int, tuple | None] = {}
        for k in order:
            o = plan.objects[k]
            if o is not None:
                bboxes[k] = draw_billboard(img, depth64, o, size)
        objects_meta = [_obj_meta(o, bboxes.get(k)) for k, o in enumerate(plan.objects) if o is not None]
        depth = depth64.astype(np.float32)
        if plan.target is not None:
            tb = bboxes.get(plan.target)
            bbox = list(tb) if tb is not None else None
        scene_meta = {"ground": ground_id}
    image = np.clip(np.rint(img), 0, 255).astype(np.uint8)

    box_rect = None
    if plan.boxed and bbox is not None:
        box_rect = list(box_for(tuple(bbox), size))
        if box:
            image = draw_box(image, box_rect)

    options = [plan.answer] + list(plan.distractors)
    perm = rng.permutation(len(options))
    options = [options[i] for i in perm]
    answer_idx = int(np.flatnonzero(perm == 0)[0])
    abstain_idx = -1
    if abstain is not None:
        options.append(ABSTAIN_TEXTS[abstain])
        abstain_idx = len(options) - 1

    tidx, tdist = None, None
    if plan.scene == "chart":
        tidx, tdist = int(plan.target), cam.CHART_DISTANCE_M
    elif plan.target is not None:
        tidx = _visible_index(plan, plan.target)
        tdist = objects_meta[tidx]["distance_m"]
    target_attrs = {}
    if tidx is not None:
        t_obj = objects_meta[tidx]
        target_attrs = {f"target_{k}": t_obj[k] for k in ("kind", "colour", "shape", "size", "char", "z_m")
                        if k in t_obj}
    meta = {
        "family": family, "category": CATEGORIES[family], "scene": plan.scene, "size": size,
        "answer": plan.answer, "objects": objects_meta,
        "target": tidx, "target_distance_m": tdist,
        "bbox": bbox, "box": box_rect if plan.boxed else None, "box_drawn": bool(box and box_rect is not None),
        "camera": {"height_m": cam.CAMERA_HEIGHT_M, "pitch_deg": cam.PITCH_DEG if plan.scene == "ground" else 0.0,
                   "focal_px": cam.focal_px(size)},
        "distance_range_m": list(lo_hi), **target_attrs, **scene_meta, **plan.info,
    }
    return SynthItem(family, CATEGORIES[family], plan.question, options, answer_idx, abstain_idx, image, depth, meta)


def _visible_index(plan, k: int) -> int:
    """Index of object ``k`` among the placed (non-None) objects."""
    return sum(1 for o in plan.objects[:k] if o is not None)


# --------------------------------------------------------------------------- references


def _check_seed(seed) -> int:
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    return int(seed)


def make_ref(seed: int, family: str, index: int, size: int = 64, abstain: str | None = None,
             distance: tuple[float, float] = DEFAULT_DISTANCE, box: bool = True) -> str:
    """The ``synth://`` reference of one item, e.g. ``synth://v1/0/colour/3?size=64&abstain=none&distance=3.0,40.0``."""
    lo, hi = check_args(family, size, abstain, distance)
    seed = _check_seed(seed)
    if not isinstance(index, numbers.Integral) or isinstance(index, bool) or index < 0:
        raise ValueError(f"index must be an int >= 0, got {index!r}")
    ref = (f"synth://{REF_VERSION}/{seed}/{family}/{int(index)}?size={int(size)}"
           f"&abstain={abstain or 'none'}&distance={lo!r},{hi!r}")
    return ref if box else ref + "&box=0"


def parse_ref(ref: str) -> dict:
    """Parse a ``synth://`` reference into ``seed, family, index, size, abstain, distance, box``."""
    if not isinstance(ref, str) or not ref.startswith("synth://"):
        raise ValueError(f"ref must be a synth:// reference, got {ref!r}")
    parts = urlsplit(ref)
    path = [parts.netloc] + [p for p in parts.path.split("/") if p]
    if len(path) != 4 or path[0] != REF_VERSION:
        raise ValueError(f"ref must look like synth://{REF_VERSION}/<seed>/<family>/<index>?..., got {ref!r}")
    try:
        seed, index = int(path[1]), int(path[3])
    except ValueError:
        raise ValueError(f"ref has a non-integer seed or index: {ref!r}") from None
    q = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    unknown = set(q) - {"size", "abstain", "distance", "box"}
    if unknown:
        raise ValueError(f"ref has unknown parameter(s) {sorted(unknown)}: {ref!r}")
    try:
        size = int(q.get("size", 64))
        distance = tuple(float(x) for x in q["distance"].split(",")) if "distance" in q else DEFAULT_DISTANCE
    except ValueError:
        raise ValueError(f"ref has a malformed size or distance: {ref!r}") from None
    abstain = q.get("abstain", "none")
    abstain = None if abstain in ("none", "") else abstain
    box = q.get("box", "1") not in ("0", "false", "no")
    out = {"seed": _check_seed(seed), "family": path[2], "index": index, "size": size, "abstain": abstain,
           "distance": distance, "box": box}
    if index < 0:
        raise ValueError(f"ref has a negative index: {ref!r}")
    check_args(out["family"], size, abstain, distance)
    return out


def _truth_for(seed: int, family: str, index: int) -> bool | None:
    """Exact yes/no balance: alternate by index, with a per-(seed, family) phase."""
    if family not in BINARY:
        return None
    return (index + repro.key_to_int("synth-balance", seed, family)) % 2 == 0


def item_from_ref(ref: str) -> SynthItem:
    """Re-render the item behind ``ref`` (identical to the one :func:`generate` made)."""
    p = parse_ref(ref)
    return make_item(p["family"], repro.rng("synth", p["seed"], p["family"], p["index"]), p["size"], p["abstain"],
                     p["distance"], truth=_truth_for(p["seed"], p["family"], p["index"]), box=p["box"])


def render(ref: str) -> tuple[np.ndarray, np.ndarray]:
    """``(image uint8 HxWx3, depth float32 HxW metres)`` of a ``synth://`` reference."""
    item = item_from_ref(ref)
    return item.image, item.depth


# --------------------------------------------------------------------------- tables


def generate(
    n_per_family: int,
    seed: int,
    families: list[str] | tuple[str, ...] | None = None,
    size: int = 64,
    abstain: str | None = None,
    distance: tuple[float, float] = DEFAULT_DISTANCE,
    box: bool = True,
):
    """An item table (``vlmrobust.data`` schema) with ``n_per_family`` items of each family.

    Item ``i`` of family ``f`` is drawn from ``repro.rng("synth", seed, f, i)``,
    so any row is re-rendered from its ``image_ref`` alone. Yes/no answers
    alternate with the index, so they are balanced exactly (within one item).
    Rows are ordered by family (in ``families`` order), then index.
    """
    import pandas as pd

    if not isinstance(n_per_family, numbers.Integral) or isinstance(n_per_family, bool) or n_per_family <= 0:
        raise ValueError(f"n_per_family must be an int > 0, got {n_per_family!r}")
    seed = _check_seed(seed)
    if families is None:
        families = FAMILIES
    if isinstance(families, str) or not isinstance(families, (list, tuple)) or not families:
        raise ValueError(f"families must be a non-empty list drawn from {FAMILIES}, got {families!r}")
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise ValueError(f"families must be drawn from {FAMILIES}, got unknown {bad}")
    if len(set(families)) != len(families):
        raise ValueError(f"families must not repeat, got {families!r}")
    for f in families:
        check_args(f, size, abstain, distance)
    rows = []
    for fam in families:
        for i in range(int(n_per_family)):
            ref = make_ref(seed, fam, i, size, abstain, distance, box)
            item = make_item(fam, repro.rng("synth", seed, fam, i), size, abstain, distance,
                             truth=_truth_for(seed, fam, i), box=box)
            rows.append({
                "item_id": f"synth-s{seed}-{fam}-{i:05d}", "source": "synth", "task": fam,
                "category": item.category, "question": item.question, "options": list(item.options),
                "answer_idx": int(item.answer_idx), "image_ref": ref, "depth_ref": ref,
                "abstain_idx": int(item.abstain_idx),
                "meta": json.dumps({**item.meta, "seed": seed, "index": i}, sort_keys=True, separators=(",", ":")),
            })
    return pd.DataFrame(rows, columns=list(ITEM_COLUMNS))


def balance_table(items) -> pd.DataFrame:
    """Per family: how often the answer sits at each letter, K, the share of "yes" answers, median target distance.

    A multiple-choice benchmark is informative only when position or "always yes"
    cannot score; this table shows it for an item table of :func:`generate`.
    """
    import pandas as pd

    from ..schema import LETTERS

    fams = [f for f in FAMILIES if f in set(items["task"])] + sorted(set(items["task"]) - set(FAMILIES))
    letter = items["answer_idx"].map(lambda i: LETTERS[i])
    answer = pd.Series([o[i] for o, i in zip(items["options"], items["answer_idx"], strict=True)], index=items.index)
    meta = items["meta"].map(json.loads)
    out = pd.crosstab(items["task"], letter).reindex(fams)
    out["K"] = items.groupby("task")["options"].first().map(len).reindex(fams)
    out["yes share"] = (answer == "yes").groupby(items["task"]).mean().reindex(fams).round(3)
    dist = pd.Series([m.get("target_distance_m") for m in meta], index=items.index, dtype=float)
    out["median target distance (m)"] = dist.groupby(items["task"]).median().reindex(fams).round(1)
    return out.rename_axis(index="task", columns=None)


# --------------------------------------------------------------------------- vocabulary


def words(text: str) -> list[str]:
    """Split text into words and punctuation runs (``\\w+|[^\\w\\s]+``, like a whitespace-punctuation pre-tokenizer)."""
    return _WORD_RE.findall(text)


def vocabulary() -> list[str]:
    """Sorted list of every token that can appear in questions, options and answers.

    Tokens are produced by :func:`words`; case is kept. The prompt template's
    own words (``Answer with the option's letter ...``, letters ``A``-``E``) are
    not included.
    """
    texts = question_texts() + option_texts() + list(ABSTAIN_TEXTS.values())
    return sorted({w for t in texts for w in words(t)})


_ = BANDS_PX  # re-exported through the package
