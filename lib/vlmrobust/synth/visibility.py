"""Seed 003's two tasks asked of the same scenes: identification (t2) and verification (t3) of a boxed object.

A **scene** is one image with one boxed object, its metric depth and the names
of three other objects (the distractors). :data:`SCENE_COLUMNS`:

===================  ================================================================================
column               meaning
===================  ================================================================================
scene_id             unique string id
source               ``"synth"`` or the dataset's name
image_ref            the image **with** the red box (what the clean condition shows; the ``+box``
                     perturbations of :mod:`vlmrobust.corrupt.boxed` re-draw it after degrading)
clean_ref            the same image without the box
depth_ref            metric ray distance (``synth://`` or a ``.npy`` file), ``None`` when unknown
box                  the box outline ``[x0, y0, x1, y1]`` (inclusive pixels)
object               the boxed object's name (synthetic: its shape, ``question="name"``, or
                     ``"<colour> <shape>"``, ``question="colour"``; COCO: its category)
distractors          three other names (synthetic: three other shapes, or three other colours each with a
                     shape drawn at random; COCO: three other categories)
target_distance_m    ray distance to the boxed object's centre (NaN when unknown)
meta                 JSON text with provenance
===================  ================================================================================

Every scene gives (seed 003 Table II, with "{obj}" the object's name):

* **t2**, identification, 4 options: "What is the object inside the red box?"
  with the object and its three distractors in a seeded order (chance 1/4);
* **t3**, verification, two questions: "Is the object inside the red box a(n)
  {obj}?" about the object (answer yes) and about the first distractor (answer no)
  (chance 1/2);

each once without an abstain option and once with each abstain wording of
:data:`vlmrobust.schema.ABSTAIN_TEXTS` as the last option (t2: a fifth option E;
t3: "A. Yes B. No C. I cannot tell, ..."). The options' order does not change
with the abstain variant. ``wording="organisms"`` writes the yes/no options in
the organisms' vocabulary ("yes", "no"); ``wording="seed003"`` as seed 003 does
("Yes", "No"). The prompt template is chosen when scoring (:func:`templates`).

Synthetic scenes (:func:`synth_scenes`, :data:`QUESTIONS`) ask by default what seed 003's t2 asks, the
boxed object's **name**: on the synthetic world that is its shape (``question="name"``; distractors: three
other shapes; the scenes are those of the ``shape`` family, one boxed shape drawn 12-28 px tall at 3-11 m and
up to three others). ``question="colour"`` keeps the earlier reading, the object's colour (scenes of the
``colour`` family, 8-24 px at 3-16 m; distractors of three other colours). Under water red goes first, so a
colour question fails in clearer water than a name question does; seed 003's t2 is a name question (Table
II). Both render exact ray distance; the sky's depth is infinite in the scene and made finite, where a
metric depth model would, by :func:`vlmrobust.depth.attach_depth` (``sky_cap_m``).
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np
import pandas as pd

from .. import repro
from ..schema import ABSTAIN_TEXTS, ITEM_COLUMNS
from .families import COLOUR_NAMES, article
from .items import DEFAULT_DISTANCE, item_from_ref, make_ref
from .raster import SHAPES

__all__ = ["SCENE_COLUMNS", "ABSTAIN_VARIANTS", "WORDINGS", "QUESTIONS", "T2_QUESTION", "T3_QUESTION", "synth_scenes",
           "scene_items", "templates", "shuffled_items", "item_meta"]

SCENE_COLUMNS = ("scene_id", "source", "image_ref", "clean_ref", "depth_ref", "box", "object", "distractors",
                 "target_distance_m", "meta")
#: The abstain variants of every question: none, then the two wordings of seed 003 Table II.
ABSTAIN_VARIANTS = ("none", *ABSTAIN_TEXTS)
WORDINGS = ("organisms", "seed003")
T2_QUESTION = "What is the object inside the red box?"
T3_QUESTION = "Is the object inside the red box {article} {obj}?"
#: What t2 asks of a synthetic scene, and the family whose scenes it renders: the name (shape) or the colour.
QUESTIONS = {"name": "shape", "colour": "colour"}
SCENE_FAMILY = "colour"  # the family of question="colour" (kept for readers of older runs)


def _check_int(name: str, value, lo: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < lo:
        raise ValueError(f"{name} must be an int >= {lo}, got {value!r}")
    return int(value)


def synth_scenes(n_scenes: int, seed: int, size: int = 64,
                 distance: tuple[float, float] = DEFAULT_DISTANCE, question: str = "name") -> pd.DataFrame:
    """``n_scenes`` synthetic scenes (:data:`SCENE_COLUMNS`), scene ``i`` drawn from ``repro.rng`` keys only.

    ``question`` (:data:`QUESTIONS`) picks what t2 asks and which family renders
    the scene: the image is that family's item ``i`` of ``seed`` (``synth://``
    reference, re-rendered anywhere). ``"name"``: the object is its shape, the
    distractors three other shapes in a seeded order; ``"colour"``: the object is
    ``"<colour> <shape>"``, the distractors three other colours, each with a shape
    drawn at random. Both from ``repro.rng("visibility-scene", seed, i)``.
    """
    n_scenes, seed = _check_int("n_scenes", n_scenes, 1), _check_int("seed", seed, 0)
    if question not in QUESTIONS:
        raise ValueError(f"question must be one of {list(QUESTIONS)}, got {question!r}")
    family = QUESTIONS[question]
    rows = []
    for i in range(n_scenes):
        ref = make_ref(seed, family, i, size, None, distance)
        item = item_from_ref(ref)
        target = item.meta["objects"][item.meta["target"]]
        colour, shape = target["colour"], target["shape"]
        rng = repro.rng("visibility-scene", seed, i)
        if question == "name":
            name = shape
            distractors = [SHAPES[k] for k in rng.permutation(len(SHAPES)) if SHAPES[k] != shape][:3]
        else:
            name = f"{colour} {shape}"
            others = [COLOUR_NAMES[k] for k in rng.permutation(len(COLOUR_NAMES)) if COLOUR_NAMES[k] != colour][:3]
            distractors = [f"{c} {SHAPES[int(rng.integers(len(SHAPES)))]}" for c in others]
        rows.append({
            "scene_id": f"vis-s{seed}-{i:05d}" + ("" if question == "colour" else f"-{question}"), "source": "synth",
            "image_ref": ref, "clean_ref": make_ref(seed, family, i, size, None, distance, box=False),
            "depth_ref": ref, "box": [int(b) for b in item.meta["box"]], "object": name,
            "distractors": distractors, "target_distance_m": float(item.meta["target_distance_m"]),
            "meta": json.dumps({"seed": seed, "index": i, "family": family, "colour": colour, "shape": shape,
                                "size": size, "question": question}, sort_keys=True),
        })
    return pd.DataFrame(rows, columns=list(SCENE_COLUMNS))


def _yes_no(wording: str) -> list[str]:
    if wording not in WORDINGS:
        raise ValueError(f"wording must be one of {WORDINGS}, got {wording!r}")
    return ["yes", "no"] if wording == "organisms" else ["Yes", "No"]


def scene_items(scenes: pd.DataFrame, abstain: tuple[str, ...] | list[str] = ABSTAIN_VARIANTS,
                wording: str = "organisms") -> pd.DataFrame:
    """The item table (:data:`vlmrobust.schema.ITEM_COLUMNS`) of t2 and t3 on every scene (see the module doc).

    Item ids are ``<scene_id>-t2-<variant>``, ``<scene_id>-t3true-<variant>`` and
    ``<scene_id>-t3false-<variant>``; ``task`` is ``"t2"`` or ``"t3"``. ``meta``
    carries ``scene``, ``abstain`` (the variant), ``question`` (``t2``, ``t3true``,
    ``t3false``), ``chance`` (1 / the number of answer options), the box and the
    object's distance.
    """
    missing = [c for c in SCENE_COLUMNS if c not in scenes.columns]
    if missing:
        raise ValueError(f"scenes lack column(s) {missing}; a scene table has {list(SCENE_COLUMNS)}")
    abstain = list(abstain)
    bad = [a for a in abstain if a not in ABSTAIN_VARIANTS]
    if not abstain or bad:
        raise ValueError(f"abstain must be a non-empty subset of {ABSTAIN_VARIANTS}, got {abstain!r}")
    yes_no = _yes_no(wording)
    rows = []
    for s in scenes.itertuples(index=False):
        distractors = list(s.distractors)
        if len(distractors) < 3 or s.object in distractors:
            raise ValueError(f"scene {s.scene_id!r}: needs three distractor names other than {s.object!r}, "
                             f"got {distractors!r}")
        order = repro.rng("visibility-t2-order", s.scene_id).permutation(4)
        t2_opts = [([s.object] + distractors[:3])[k] for k in order]
        questions = [
            ("t2", "identification", T2_QUESTION, t2_opts, int(np.flatnonzero(order == 0)[0]), "t2"),
            ("t3", "verification", T3_QUESTION.format(article=article(s.object), obj=s.object), yes_no, 0,
             "t3true"),
            ("t3", "verification", T3_QUESTION.format(article=article(distractors[0]), obj=distractors[0]), yes_no,
             1, "t3false"),
        ]
        for task, category, question, opts, answer, qname in questions:
            for variant in abstain:
                options = list(opts) + ([ABSTAIN_TEXTS[variant]] if variant != "none" else [])
                meta = {"scene": s.scene_id, "abstain": variant, "question": qname, "chance": 1.0 / len(opts),
                        "box": [int(b) for b in s.box], "target_distance_m": float(s.target_distance_m),
                        "object": s.object, "wording": wording}
                rows.append({
                    "item_id": f"{s.scene_id}-{qname}-{variant}", "source": s.source, "task": task,
                    "category": category, "question": question, "options": options, "answer_idx": answer,
                    "image_ref": s.image_ref, "depth_ref": s.depth_ref,
                    "abstain_idx": len(options) - 1 if variant != "none" else -1,
                    "meta": json.dumps(meta, sort_keys=True),
                })
    return pd.DataFrame(rows, columns=list(ITEM_COLUMNS))


def item_meta(items: pd.DataFrame) -> pd.DataFrame:
    """The ``meta`` fields of :func:`scene_items` as columns, indexed by ``item_id``."""
    meta = pd.DataFrame([json.loads(m) for m in items["meta"]], index=items["item_id"].to_numpy())
    for col in ("scene", "abstain", "question", "chance", "target_distance_m"):
        if col not in meta.columns:
            raise ValueError(f"item meta lacks {col!r}: items must come from scene_items()")
    meta.index.name = "item_id"
    return meta


def templates(wording: str, task: str, abstain: str, confidence: str = "v1") -> tuple[str, list[str] | None]:
    """``(template, methods)`` to score one (task, abstain variant) group of items under ``wording``.

    ``organisms``: the organisms' own template ``vlmrobust`` for every item,
    each model's default method (``None``). ``seed003`` (Table II): t2, and t3
    with an abstain option, use the lettered ``seed003`` template; t3 without one
    uses ``seed003_yn`` ("Answer with Yes or No."), whose options are scored as
    text (``loglik``), since no letters are shown. ``confidence`` names the
    verbalized-confidence wording (``v1``, ``v2``, ``v3``; seed 003 Table VI).
    """
    _yes_no(wording)
    if task not in ("t2", "t3") or abstain not in ABSTAIN_VARIANTS or confidence not in ("v1", "v2", "v3"):
        raise ValueError(f"task must be t2 or t3, abstain one of {ABSTAIN_VARIANTS}, confidence v1/v2/v3; got "
                         f"{task!r}, {abstain!r}, {confidence!r}")
    base = "vlmrobust" if wording == "organisms" else "seed003"
    if wording == "seed003" and task == "t3" and abstain == "none":
        if confidence != "v1":
            raise ValueError("the t3 yes/no template of seed 003 has only the main confidence wording (v1)")
        return "seed003_yn", ["loglik"]
    return (base if confidence == "v1" else f"{base}_conf_{confidence}"), None


def _scaled_box(box: list[int], own: tuple[int, int], donor: tuple[int, int]) -> list[int]:
    """``box`` (x0, y0, x1, y1, inclusive) of an ``own`` = (w, h) image moved to a ``donor`` image by relative
    position."""
    (ow, oh), (dw, dh) = own, donor
    rx, ry = dw / ow, dh / oh  # pixel edges scale: [x0, x1 + 1) -> [floor(x0 rx), ceil((x1 + 1) rx))
    x0, y0 = min(int(math.floor(box[0] * rx)), dw - 2), min(int(math.floor(box[1] * ry)), dh - 2)
    x1 = min(max(int(math.ceil((box[2] + 1) * rx)) - 1, x0 + 1), dw - 1)
    y1 = min(max(int(math.ceil((box[3] + 1) * ry)) - 1, y0 + 1), dh - 1)
    return [x0, y0, x1, y1]


def shuffled_items(items: pd.DataFrame, scenes: pd.DataFrame, seed: int, root=None) -> pd.DataFrame:
    """The shuffled-image control (seed 003 Table VIII): another scene's clean pixels, this item's box.

    Scenes are permuted by a seeded **derangement** (no scene keeps its own
    pixels; drawn from ``repro.rng("visibility-shuffle", seed)`` by rejection);
    every item of scene ``s`` gets the box-free image of scene ``pi(s)`` with
    ``s``'s box drawn (when the two images differ in size, as real ones do, the
    box is scaled by the ratio of their sizes so that it keeps its relative
    position; seed 003 states no rule for that), written to the asset store
    (:func:`vlmrobust.assets.store_image`; ``root`` overrides its folder). Item
    ids gain the suffix ``-shuffled``; ``depth_ref`` is ``None``.
    """
    from .. import assets, data
    from .raster import draw_box

    ids = list(scenes["scene_id"])
    if len(ids) < 2:
        raise ValueError(f"the shuffled control needs at least 2 scenes, got {len(ids)}")
    rng = repro.rng("visibility-shuffle", _check_int("seed", seed, 0))
    n = len(ids)
    for _ in range(10_000):
        perm = rng.permutation(n)
        if not (perm == np.arange(n)).any():
            break
    else:  # pragma: no cover - the chance of 10,000 rejections is about (1 - 1/e)^10000
        raise RuntimeError("no derangement found")
    by_id = scenes.set_index("scene_id")
    refs = {}
    for i, sid in enumerate(ids):
        donor = by_id.loc[ids[int(perm[i])]]
        pixels = data.load_image(donor["clean_ref"])
        box = [int(b) for b in by_id.loc[sid, "box"]]
        h, w = pixels.shape[:2]
        own_h, own_w = data.load_image(by_id.loc[sid, "clean_ref"]).shape[:2]
        if (own_w, own_h) != (w, h):  # real images differ in size: the box keeps its relative position
            box = _scaled_box(box, (own_w, own_h), (w, h))
        refs[sid] = (assets.store_image(draw_box(pixels, box), root), ids[int(perm[i])])
    meta = item_meta(items)
    out = items.copy()
    scene_of = meta.loc[out["item_id"], "scene"].to_numpy()
    out["image_ref"] = [refs[s][0] for s in scene_of]
    out["depth_ref"] = None
    out["meta"] = [json.dumps({**json.loads(m), "donor_scene": refs[s][1]}, sort_keys=True)
                   for m, s in zip(out["meta"], scene_of, strict=True)]
    out["item_id"] = out["item_id"] + "-shuffled"
    return out.reset_index(drop=True)

