"""Small seeded data files in the formats the paper variants read: VLMEvalKit TSVs and a COCO instances file.

:func:`fabricate_all` writes one file per data path named in a ``params/<id>/paper.yaml`` and returns
the mapping from that path, exactly as the variant writes it, to the file: the six pool sources of
notebook 01 (seed 000 §IV-A, ``~/LMUData/<name>.tsv``); ``data/bench_c.tsv`` (notebook 04, rows of
the six sources, with a ``source`` column); ``data/SEEDBench_IMG.tsv`` (SEED-Bench's nine image
dimensions), ``data/MMMU_DEV_VAL.tsv`` and ``data/POPE_adversarial.tsv`` (notebook 05, seed 002 App.
A); ``data/bruce.tsv`` (notebook 07; ``category`` names seed 001's three datasets); the COCO file
``data/coco/annotations/instances_val2017.json`` and its folder ``data/coco/val2017`` (notebook 06).

**The TSVs** follow VLMEvalKit's layout, each benchmark's columns in its order (:data:`BENCHES`):
``index``, ``question``, option columns (empty where a row has fewer options), ``answer`` (a letter;
``Yes``/``No`` for POPE, the values VLMEvalKit's POPE rating compares; the answer's text for MMMU's
open questions, whose options are empty), ``category`` / ``l2-category`` where the benchmark has
them, ``image`` (base64 JPEG; PNG for SEEDBench2_Plus and MMMU), and ``split``, ``hint``,
``source``, ``id``, ``image_path``, ``comment`` where the real file has them. A row showing an image
that an earlier row holds carries that row's ``index`` in ``image`` (VLMEvalKit's back-reference;
each POPE image serves four questions); multi-image rows (LEGO, MMMU) hold a Python list of base64
strings, with ``<image k>`` markers in MMMU's questions. MMMU also has ``dev`` rows, two open
questions and one with six options. Images are drawn scenes of 64-96 px (two or three flat shapes
of :mod:`vlmrobust.synth.raster`'s palette in the quadrants of a plain background, and a sign with one
glyph of :data:`vlmrobust.synth.glyphs.SIGN_CHARS`) or bar charts; each answer is computed from the scene.

**The COCO file** of notebook 06 is written by :mod:`vlmrobust.dry.coco`.

Everything is drawn from ``repro.rng("fabricate", <path>, seed)``: the same seed writes the same bytes.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from ..repro import rng as seeded_rng
from ..schema import LETTERS, MAX_OPTIONS
from ..synth.glyphs import SIGN_CHARS, glyph
from ..synth.raster import COLOURS, SHAPES, SIGN_BOARD_RGB, SIGN_INK_RGB, render_chart, shape_mask
from .coco import COCO_ANNOTATIONS, COCO_CATEGORIES, COCO_IMAGES, write_coco

__all__ = ["SEED", "Bench", "BENCHES", "POPE", "COCO_ANNOTATIONS", "COCO_IMAGES", "COCO_CATEGORIES",
           "target_path", "write_tsv", "write_pope", "write_coco", "fabricate_all"]

SEED = 0
BACKGROUNDS = {"white": (250, 250, 250), "grey": (150, 150, 150), "beige": (225, 205, 170),
               "light blue": (175, 205, 240)}
CELLS = ("top left", "top right", "bottom left", "bottom right")
_PAD = ("none of the above", "cannot be determined")  # distractors when a pool is short
_REPEAT = {"count": "colour", "scene": "shape", "text": "location"}  # kinds with one question per image


@dataclass(frozen=True)
class Bench:
    """One VLMEvalKit TSV: columns in file order, per row ``(category, l2-category, kind[:options])``.

    ``backref``: rows whose image is a back-reference to the previous row's image
    (they repeat its category). ``extra``: further columns, one value or one per row.
    ``marker``: questions start with ``<image 1>`` (MMMU).
    """

    columns: tuple[str, ...]
    tasks: tuple[tuple[str, str, str], ...]
    backref: tuple[int, ...] = ()
    options: int = 4
    fmt: str = "JPEG"
    start: int = 0
    marker: bool = False
    extra: dict = field(default_factory=dict)


def _cols(*names: str, n_letters: int = 4) -> tuple[str, ...]:
    """Column names with ``"*"`` standing for the option columns, the first ``n_letters`` of ``LETTERS``."""
    return tuple(c for n in names for c in (LETTERS[:n_letters] if n == "*" else [n]))


_SEED9 = [("Scene Understanding", "scene"), ("Instance Identity", "shape"), ("Instance Attributes", "colour"),
          ("Instance Location", "location"), ("Instances Counting", "count"), ("Spatial Relation", "spatial"),
          ("Instance Interaction", "spatial"), ("Visual Reasoning", "count"), ("Text Understanding", "text")]
_MMB = [("image_scene", "coarse_perception", "scene"),
        ("object_localization", "finegrained_perception (instance-level)", "location"),
        ("attribute_recognition", "finegrained_perception (instance-level)", "colour:3"),
        ("spatial_relationship", "relation_reasoning", "spatial"),
        ("ocr", "finegrained_perception (instance-level)", "text:2"),
        ("physical_property_reasoning", "attribute_reasoning", "shape")]
_MMSTAR = [("coarse perception", "image scene and topic", "scene"), ("fine-grained perception", "object counting",
           "count"), ("fine-grained perception", "localization", "location"), ("instance reasoning",
           "cross-instance relation reasoning", "spatial"), ("logical reasoning", "diagram reasoning", "chart"),
           ("math", "numeric commonsense and calculation", "count")]
_RW = [("color", "Autonomous_Driving", "colour"), ("count", "Monitoring", "count"), ("position", "Remote Sensing",
       "location"), ("text recognition", "OCR with Complex Context", "text"), ("chart", "Diagram and Table", "chart:4")]
_MMT = [("visual_recognition", "color_recognition", "colour"), ("counting", "counting_by_category", "count"),
        ("localization", "object_localization", "location"), ("ocr", "scene_text_recognition", "text"),
        ("spatial_understanding", "spatial_relation", "spatial")]
_LEGO = [("rotation", "", "shape"), ("position", "", "location"), ("adjacency", "", "spatial"),
         ("height", "", "spatial"), ("ordering", "", "multi"), ("multiview", "", "colour"), ("outlier", "", "multi"),
         ("dependency", "", "count")]
_MMMU = [("Accounting", "Business", "count"), ("Art_Theory", "Art & Design", "colour"), ("Biology", "Science", "shape"),
         ("Chemistry", "Science", "multi"), ("Clinical_Medicine", "Health & Medicine", "location"),
         ("Computer_Science", "Tech & Engineering", "open"), ("History", "Humanities & Social Science", "spatial"),
         ("Math", "Science", "multi"), ("Physics", "Science", "wide:6"),
         ("Geography", "Humanities & Social Science", "text"), ("Economics", "Business", "open"),
         ("Design", "Art & Design", "multi"), ("Biology", "Science", "scene"),
         ("Materials", "Tech & Engineering", "count")]
_SOURCES = ("SEEDBench2_Plus", "LEGO", "MME-RealWorld-Lite", "MMT-Bench_VAL", "MMStar", "MMBench_DEV_EN_V11")
_HINT = "The picture shows flat coloured shapes on a plain background."

BENCHES: dict[str, Bench] = {
    "~/LMUData/SEEDBench2_Plus.tsv": Bench(_cols("index", "question", "*", "answer", "category", "image"), tuple(
        (c, "", k) for c, k in [("chart", "chart")] * 4 + [("map", "location"), ("map", "spatial")] * 2
        + [("web", "text")] * 4), backref=(1, 3, 5, 9), fmt="PNG"),
    "~/LMUData/LEGO.tsv": Bench(_cols("index", "question", "*", "answer", "category", "image", "image_path"),
                                tuple(_LEGO + _LEGO[4:]), start=100),
    "~/LMUData/MME-RealWorld-Lite.tsv": Bench(_cols("index", "question", "*", "answer", "category", "l2-category",
                                                    "image", n_letters=MAX_OPTIONS),
                                              tuple(_RW * 2), options=5, start=0),
    "~/LMUData/MMT-Bench_VAL.tsv": Bench(_cols("index", "question", "*", "answer", "category", "l2-category",
                                               "image"), tuple(_MMT * 2), backref=(5,)),
    "~/LMUData/MMStar.tsv": Bench(_cols("index", "question", "*", "answer", "category", "l2-category", "image"),
                                  tuple(_MMSTAR * 2)),
    "~/LMUData/MMBench_DEV_EN_V11.tsv": Bench(
        _cols("index", "question", "hint", "*", "answer", "category", "image", "source", "l2-category", "comment",
              "split"), tuple(_MMB * 2), backref=(3, 8), start=1000,
        extra={"hint": tuple(_HINT if i % 3 == 0 else None for i in range(12)), "source": "vlmrobust",
               "split": "dev"}),
    "data/bench_c.tsv": Bench(
        _cols("index", "question", "hint", "*", "answer", "category", "l2-category", "image", "source",
              n_letters=MAX_OPTIONS), tuple(_MMB[:3] + _RW[:3] + _MMT[2:5] + _MMSTAR[3:6]),
        extra={"source": tuple(_SOURCES[i % 6] for i in range(12)),
               "hint": tuple(_HINT if i % 4 == 1 else None for i in range(12))}),
    "data/SEEDBench_IMG.tsv": Bench(_cols("index", "question", "*", "answer", "category", "image"),
                                    tuple((c, "", k) for c, k in _SEED9 for _ in range(2)), backref=(3, 11), start=1),
    "data/MMMU_DEV_VAL.tsv": Bench(
        _cols("index", "id", "question", "*", "answer", "category", "l2-category", "image", "image_path", "split",
              n_letters=9), tuple(_MMMU), fmt="PNG", marker=True,
        extra={"split": ("dev", "dev") + ("validation",) * 12}),
    "data/bruce.tsv": Bench(
        _cols("index", "question", "hint", "*", "answer", "category", "l2-category", "image", n_letters=MAX_OPTIONS),
        tuple([("ScienceQA-Chemistry", "chemistry", k) for k in ("colour:2", "shape:3", "count", "text:2")]
              + [("MMJEE-Chemistry-MCQ", "chemistry", k) for k in ("count", "spatial", "location", "shape")]
              + [("MathVista-MCQ", "math", k) for k in ("chart", "count:5", "chart", "spatial")]),
        extra={"hint": (_HINT,) * 4 + (None,) * 8}),
}
#: POPE (adversarial split): yes/no questions, four per image, two with answer Yes and two with No.
POPE = "data/POPE_adversarial.tsv"
def target_path(key: str) -> str:
    """Where a variant's data path is written under :func:`fabricate_all`'s folder (``~/`` and ``data/`` dropped)."""
    return key.removeprefix("~/").removeprefix("data/")


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _encode(img: np.ndarray, fmt: str) -> str:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return base64.b64encode(buf.getvalue()).decode()


def _scene(g: np.random.Generator) -> dict:
    """Two or three objects of distinct shapes and colours in distinct quadrants, and a sign in a free one."""
    n, cells, names = int(g.integers(2, 4)), g.permutation(4), list(COLOURS)
    shapes, colours = g.choice(len(SHAPES), n, replace=False), g.choice(len(names), n, replace=False)
    objs = [(SHAPES[s], names[c], int(cells[k])) for k, (s, c) in enumerate(zip(shapes, colours, strict=True))]
    return {"size": int(g.choice([64, 80, 96])), "bg": list(BACKGROUNDS)[int(g.integers(4))], "objs": objs,
            "sign": (SIGN_CHARS[int(g.integers(len(SIGN_CHARS)))], int(cells[n]))}


def _chart(g: np.random.Generator) -> dict:
    heights, colours = (g.permutation(4) + 1) / 4.0, [str(c) for c in g.choice(list(COLOURS), 4, replace=False)]
    return {"size": int(g.choice([64, 80, 96])), "chart": (heights.tolist(), colours), "first": int(g.integers(3))}


def _render(sc: dict) -> np.ndarray:
    """The scene's uint8 image."""
    s = sc["size"]
    if "chart" in sc:
        return np.clip(np.round(render_chart(s, *sc["chart"])[0]), 0, 255).astype(np.uint8)
    img = np.empty((s, s, 3), np.uint8)
    img[:] = BACKGROUNDS[sc["bg"]]
    yy, xx = np.mgrid[0:s, 0:s] + 0.5
    for shape, colour, cell in sc["objs"]:
        cx, cy = s * (0.25 + 0.5 * (cell % 2)), s * (0.25 + 0.5 * (cell // 2))
        img[shape_mask(shape, (xx - cx) / (0.19 * s), (cy - yy) / (0.19 * s))] = COLOURS[colour]
    char, cell = sc["sign"]
    k = max(2, s // 32)
    ink = np.kron(glyph(char), np.ones((k, k), bool))
    y0, x0 = (int(s * (0.25 + 0.5 * (cell // 2))) - ink.shape[0] // 2,
              int(s * (0.25 + 0.5 * (cell % 2))) - ink.shape[1] // 2)
    img[y0 - k:y0 + ink.shape[0] + k, x0 - k:x0 + ink.shape[1] + k] = SIGN_BOARD_RGB
    img[y0:y0 + ink.shape[0], x0:x0 + ink.shape[1]][ink] = SIGN_INK_RGB
    return img


def _options(right: str, pool: list[str], k: int, g: np.random.Generator) -> tuple[list[str], int]:
    """``k`` shuffled options: ``right`` and ``k - 1`` others from ``pool`` (padded when it is short)."""
    others = [p for p in pool if p != right]
    others += [p for p in _PAD if p not in others][: max(0, k - 1 - len(others))]
    picked = [right] + [others[i] for i in g.choice(len(others), k - 1, replace=False)]
    perm = g.permutation(k)
    return [picked[i] for i in perm], int(np.flatnonzero(perm == 0)[0])


def _ask(kind: str, sc: dict, g: np.random.Generator, k: int, nth: int = 0) -> tuple[str, list[str], int]:
    """The ``nth`` question of ``kind`` about scene ``sc`` with ``k`` options: ``(question, options, answer)``."""
    if kind == "chart":
        heights, colours = sc["chart"]
        pick = (sc["first"] + nth) % 3
        which = [int(np.argmax(heights)), int(np.argmin(heights)), int(g.integers(4))][pick]
        q = ["Which bar is the tallest?", "Which bar is the shortest?",
             f"What colour is bar {which + 1} from the left?"][pick]
        return (q, *_options(colours[which], colours + [c for c in COLOURS if c not in colours], k, g))
    objs = sc["objs"]
    shape, colour, cell = objs[nth % len(objs)]
    if kind == "spatial":
        a, b = objs[nth % len(objs)], objs[(nth + 1) % len(objs)]
        (ar, ac), (br, bc) = divmod(a[2], 2), divmod(b[2], 2)
        right = "left of" if ac < bc else "right of" if ac > bc else "above" if ar < br else "below"
        q, pool = (f"Is the {a[1]} {a[0]} left of, right of, above or below the {b[1]} {b[0]}?",
                   ["left of", "right of", "above", "below"])
    else:
        q, right, pool = {
            "colour": (f"What colour is the {shape}?", colour, list(COLOURS)),
            "shape": (f"What shape is the {colour} object?", shape, list(SHAPES)),
            "location": (f"Where is the {colour} {shape} in the image?", CELLS[cell], list(CELLS)),
            "count": ("How many coloured shapes are in the image?", str(len(objs)), [str(i) for i in range(6)]),
            "wide": ("How many coloured shapes are in the image?", str(len(objs)), [str(i) for i in range(6)]),
            "scene": ("What colour is the background of the image?", sc["bg"], list(BACKGROUNDS)),
            "text": ("Which character is written on the sign?", sc["sign"][0], list(SIGN_CHARS)),
        }[kind]
    return (q, *_options(right, pool, k, g))


def _multi(g: np.random.Generator, k_images: int) -> tuple[str, list[str], int, list[np.ndarray]]:
    """A question over ``k_images`` scenes: which one shows an object that only one of them holds."""
    scenes = [_scene(g) for _ in range(k_images)]
    j = int(g.integers(k_images))
    shape, colour, _ = scenes[j]["objs"][0]
    for i, sc in enumerate(scenes):
        if i != j:
            sc["objs"] = [o for o in sc["objs"] if (o[0], o[1]) != (shape, colour)]
    markers = " ".join(f"<image {i + 1}>" for i in range(k_images))
    options = [f"Image {i + 1}" for i in range(k_images)] + ["None of them"]
    return f"{markers} Which image shows {_a(colour)} {shape}?", options, j, [_render(sc) for sc in scenes]


def _write(rows: list[dict], columns: tuple[str, ...], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, sep="\t", index=False, lineterminator="\n")
    return path


def write_tsv(key: str, path: str | Path, seed: int = SEED) -> Path:
    """Write the TSV of :data:`BENCHES` ``[key]`` to ``path``, drawn from ``repro.rng("fabricate", key, seed)``."""
    bench, g = BENCHES[key], seeded_rng("fabricate", key, seed)
    rows: list[dict] = []
    ext = "png" if bench.fmt == "PNG" else "jpg"
    prev = None  # (scene, kind, category, l2, index holding its image)
    for i, (cat, l2, spec) in enumerate(bench.tasks):
        kind, _, k = spec.partition(":")
        index, k = bench.start + i, int(k or bench.options)
        row: dict = {"index": index, "category": cat or None, "l2-category": l2 or None}
        if i in bench.backref and prev is not None:
            sc, kind, row["category"], row["l2-category"], held = prev
            kind = _REPEAT.get(kind, kind)
            q, options, ans = _ask(kind, sc, g, k, nth=1)
            row["image"] = str(held)
        elif kind == "multi":
            q, options, ans, imgs = _multi(g, int(g.integers(2, 4)))
            row["image"] = str([_encode(im, bench.fmt) for im in imgs])
            row["image_path"] = str([f"{index}_{n + 1}.{ext}" for n in range(len(imgs))])
        else:
            sc = _chart(g) if kind == "chart" else _scene(g)
            q, options, ans = _ask("count" if kind == "open" else kind, sc, g, 4 if kind == "open" else k)
            row["image"] = _encode(_render(sc), bench.fmt)
            prev = (sc, kind, cat or None, l2 or None, index)
        if bench.marker and not q.startswith("<image"):
            q = "<image 1> " + q
        row.update({"question": q, "answer": options[ans] if kind == "open" else LETTERS[ans]})
        if kind != "open":
            row.update(zip(LETTERS, options, strict=False))
        row.setdefault("image_path", f"{index}.{ext}")
        for col, value in bench.extra.items():
            row[col] = value[i] if isinstance(value, tuple) else value
        if "id" in bench.columns:
            row["id"] = f"{row.get('split', 'validation')}_{cat}_{i + 1}"
        rows.append(row)
    return _write(rows, bench.columns, Path(path))


def write_pope(path: str | Path, seed: int = SEED, n_images: int = 3) -> Path:
    """POPE's adversarial split as VLMEvalKit holds it: per image two present objects (``Yes``) and two absent
    ones that share a shape or a colour with a present one (``No``, the adversarial negatives)."""
    g, rows = seeded_rng("fabricate", POPE, seed), []
    for j in range(n_images):
        sc = _scene(g)
        present = {(o[0], o[1]) for o in sc["objs"]}
        near = sorted({(s, c) for s, c0 in present for c in COLOURS} | {(s, c) for s0, c in present for s in SHAPES})
        absent = [p for p in near if p not in present]
        qs = [(p, "Yes") for p in sorted(present)[:2]] + [(absent[i], "No") for i in g.choice(len(absent), 2, False)]
        for n, i in enumerate(g.permutation(4)):
            (shape, colour), answer = qs[i]
            rows.append({"index": 4 * j + n, "question": f"Is there {_a(colour)} {shape} in the image?",
                         "answer": answer, "category": "adversarial",
                         "image": _encode(_render(sc), "JPEG") if n == 0 else str(4 * j)})
    return _write(rows, ("index", "question", "answer", "category", "image"), Path(path))


def fabricate_all(folder: str | Path, seed: int = SEED) -> dict[str, Path]:
    """Write every fabricated file under ``folder``: variant data path (as in ``paper.yaml``) -> written path."""
    root = Path(folder)
    out = {key: write_tsv(key, root / target_path(key), seed) for key in BENCHES}
    out[POPE] = write_pope(root / target_path(POPE), seed)
    out[COCO_ANNOTATIONS] = write_coco(root / target_path(COCO_ANNOTATIONS), root / target_path(COCO_IMAGES), seed)
    out[COCO_IMAGES] = root / target_path(COCO_IMAGES)
    return out
