"""The item table, image references and real-data loaders.

The item table has one row per multiple-choice question; its columns are
:data:`vlmrobust.schema.ITEM_COLUMNS` (documented there).

:func:`load_image` turns any ``image_ref`` into a uint8 ``H×W×3`` array; a
corrupt or unreadable image raises :class:`ImageError` naming the reference.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .schema import ITEM_COLUMNS, OPTION_LETTERS

__all__ = [
    "ImageError", "ItemTableError", "validate_items", "load_image",
    "load_depth", "decode_image", "load_tsv", "load_hf_dataset",
]

MAX_PIXELS = 50_000_000  # refuse decompression bombs before decoding


class ImageError(ValueError):
    """An image could not be read or decoded."""


class ItemTableError(ValueError):
    """An item table is malformed."""


def validate_items(items: pd.DataFrame) -> pd.DataFrame:
    """Check an item table against the schema; return it unchanged or raise.

    Errors name the offending column and item id.
    """
    if not isinstance(items, pd.DataFrame):
        raise ItemTableError(f"items must be a pandas DataFrame, got {type(items).__name__}")
    missing = [c for c in ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ItemTableError(f"item table lacks column(s) {missing}; required: {list(ITEM_COLUMNS)}")
    if len(items) == 0:
        raise ItemTableError("item table is empty")
    dup = items["item_id"][items["item_id"].duplicated()]
    if len(dup):
        raise ItemTableError(f"item_id values are not unique, e.g. {dup.iloc[0]!r}")
    for row in items.itertuples(index=False):
        opts = row.options
        if not isinstance(opts, (list, tuple, np.ndarray)) or len(opts) == 0:
            raise ItemTableError(f"item {row.item_id!r}: options must be a non-empty list, got {opts!r}")
        k = len(opts)
        if not 2 <= k <= len(OPTION_LETTERS):
            raise ItemTableError(f"item {row.item_id!r}: {k} options; allowed 2..{len(OPTION_LETTERS)}")
        if any(not isinstance(o, str) or not o.strip() for o in opts):
            raise ItemTableError(f"item {row.item_id!r}: every option must be non-empty text, got {list(opts)!r}")
        if len(set(opts)) != k:
            raise ItemTableError(f"item {row.item_id!r}: options repeat: {list(opts)!r}")
        if not (isinstance(row.answer_idx, (int, np.integer)) and 0 <= row.answer_idx < k):
            raise ItemTableError(f"item {row.item_id!r}: answer_idx {row.answer_idx!r} not in [0, {k})")
        if not (isinstance(row.abstain_idx, (int, np.integer)) and -1 <= row.abstain_idx < k):
            raise ItemTableError(f"item {row.item_id!r}: abstain_idx {row.abstain_idx!r} not in [-1, {k})")
        if row.abstain_idx == row.answer_idx:
            raise ItemTableError(f"item {row.item_id!r}: the answer cannot be the abstain option")
        if not isinstance(row.question, str) or not row.question.strip():
            raise ItemTableError(f"item {row.item_id!r}: question must be non-empty text")
    return items


def decode_image(data: bytes, ref: str = "<bytes>") -> np.ndarray:
    """Decode encoded image bytes into a uint8 RGB array, with guards.

    Truncated files, non-images and images over :data:`MAX_PIXELS` raise
    :class:`ImageError` naming ``ref``. Greyscale, palette and alpha images are
    converted to RGB (alpha composited on white).
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                if im.width * im.height > MAX_PIXELS:
                    raise ImageError(f"image {ref!r} has {im.width}x{im.height} pixels (limit {MAX_PIXELS})")
                im.load()
                if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
                    rgba = im.convert("RGBA")
                    bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                    im = Image.alpha_composite(bg, rgba)
                arr = np.asarray(im.convert("RGB"), dtype=np.uint8)
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"cannot decode image {ref!r}: {exc}") from exc
    if arr.ndim != 3 or arr.shape[2] != 3 or min(arr.shape[:2]) < 1:
        raise ImageError(f"image {ref!r} decoded to shape {arr.shape}, expected H×W×3")
    return arr


@lru_cache(maxsize=4096)
def _load_cached(ref: str) -> tuple[np.ndarray, np.ndarray | None]:
    if ref.startswith("synth://"):
        from . import synth

        image, depth = synth.render(ref)
    elif ref.startswith("b64:"):
        try:
            raw = base64.b64decode(ref[4:], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ImageError(f"image reference is not valid base64: {ref[:40]!r}...") from exc
        image, depth = decode_image(raw, ref[:40] + "..."), None
    else:
        path = Path(os.path.expanduser(ref))
        if not path.is_file():
            raise ImageError(f"image file not found: {ref!r}")
        image, depth = decode_image(path.read_bytes(), ref), None
    image = np.ascontiguousarray(image, dtype=np.uint8)
    image.flags.writeable = False
    if depth is not None:
        depth = np.ascontiguousarray(depth, dtype=np.float32)
        depth.flags.writeable = False
    return image, depth


def load_image(ref: str) -> np.ndarray:
    """The uint8 ``H×W×3`` image behind ``ref`` (read-only; cached per process)."""
    if not isinstance(ref, str) or not ref:
        raise ImageError(f"image_ref must be a non-empty string, got {ref!r}")
    return _load_cached(ref)[0]


def load_depth(ref: str | None) -> np.ndarray | None:
    """Metric ray distance (float32 ``H×W``, metres, ``inf`` for sky) behind ``ref``.

    ``ref`` is a ``synth://`` reference (exact depth of a synthetic scene) or the
    path of a ``.npy`` file holding the float array (e.g. written by
    :func:`vlmrobust.assets.store_depth`). Returns ``None`` when ``ref`` is ``None``
    (the item has no depth).
    """
    if ref is None or (isinstance(ref, float) and np.isnan(ref)):
        return None
    if isinstance(ref, str) and ref.endswith(".npy") and not ref.startswith("synth://"):
        return _load_depth_file(ref)
    if not isinstance(ref, str) or not ref.startswith("synth://"):
        raise ImageError(f"depth_ref must be a synth:// reference, a .npy file of metres or None, got {ref!r}")
    return _load_cached(ref)[1]


@lru_cache(maxsize=1024)
def _load_depth_file(ref: str) -> np.ndarray:
    path = Path(os.path.expanduser(ref))
    if not path.is_file():
        raise ImageError(f"depth file not found: {ref!r}")
    try:
        depth = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ImageError(f"cannot read depth file {ref!r}: {exc}") from exc
    if depth.ndim != 2 or not np.issubdtype(depth.dtype, np.floating):
        raise ImageError(f"depth file {ref!r} must hold a float H×W array of metres, got {depth.dtype} {depth.shape}")
    depth = np.ascontiguousarray(depth, dtype=np.float32)
    depth.flags.writeable = False
    return depth


def _items_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    return validate_items(df)


def load_tsv(path: str | os.PathLike, source: str | None = None, max_items: int | None = None) -> pd.DataFrame:
    """Read a VLMEvalKit-style multiple-choice TSV into the item schema.

    Expected columns: ``index``, ``question``, ``A``..``E`` (empty for absent
    options), ``answer`` (a letter) and ``image`` (base64) or ``image_path``;
    ``category`` and ``hint`` are used when present (the hint is prepended to
    the question, as VLMEvalKit does). Rows with a malformed answer or fewer
    than two options raise :class:`ItemTableError` naming the row index.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"TSV file not found: {path}")
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for col in ("index", "question", "answer"):
        if col not in table.columns:
            raise ItemTableError(f"{path.name}: column {col!r} is missing; columns are {list(table.columns)}")
    if "image" not in table.columns and "image_path" not in table.columns:
        raise ItemTableError(f"{path.name}: needs an 'image' (base64) or 'image_path' column")
    source = source or path.stem
    rows = []
    for _, r in table.iterrows():
        if max_items is not None and len(rows) >= max_items:
            break
        options = [r[c].strip() for c in OPTION_LETTERS if c in table.columns and str(r[c]).strip()]
        letter = str(r["answer"]).strip().upper()
        if len(options) < 2 or letter not in OPTION_LETTERS[: len(options)]:
            raise ItemTableError(f"{path.name}: row index={r['index']!r} has answer {letter!r} and {len(options)} options")
        question = r["question"].strip()
        if "hint" in table.columns and str(r["hint"]).strip():
            question = f"Hint: {r['hint'].strip()}\n{question}"
        if "image" in table.columns and r["image"]:
            image_ref = "b64:" + r["image"]
        else:
            image_ref = str((path.parent / r["image_path"]).resolve())
        rows.append({
            "item_id": f"{source}-{r['index']}", "source": source,
            "task": r.get("category", "") or "mcq", "category": r.get("category", "") or "mcq",
            "question": question, "options": options, "answer_idx": OPTION_LETTERS.index(letter),
            "image_ref": image_ref, "depth_ref": None, "abstain_idx": -1,
            "meta": json.dumps({"index": r["index"], "l2-category": r.get("l2-category", "")}),
        })
    return _items_frame(rows)


def load_hf_dataset(
    name: str,
    split: str = "test",
    *,
    question: str = "question",
    options: str | Sequence[str] = "options",
    answer: str = "answer",
    image: str = "image",
    category: str | None = None,
    max_items: int | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Read a Hugging Face multiple-choice dataset into the item schema.

    ``options`` names one list column or several option columns; ``answer`` is
    a letter, an index or the answer text. Images are re-encoded as PNG into
    ``b64:`` references. Needs the optional ``datasets`` package and hub access.
    """
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError("load_hf_dataset needs the 'datasets' package: pip install datasets") from exc
    ds = datasets.load_dataset(name, split=split, cache_dir=cache_dir)
    rows = []
    for i, ex in enumerate(ds):
        if max_items is not None and i >= max_items:
            break
        opts = list(ex[options]) if isinstance(options, str) else [ex[c] for c in options if ex.get(c)]
        ans = ex[answer]
        if isinstance(ans, str) and len(ans.strip()) == 1 and ans.strip().upper() in OPTION_LETTERS:
            idx = OPTION_LETTERS.index(ans.strip().upper())
        elif isinstance(ans, (int, np.integer)):
            idx = int(ans)
        elif ans in opts:
            idx = opts.index(ans)
        else:
            raise ItemTableError(f"{name}[{i}]: answer {ans!r} is neither a letter, an index nor an option")
        buf = io.BytesIO()
        ex[image].convert("RGB").save(buf, format="PNG")
        rows.append({
            "item_id": f"{name.replace('/', '_')}-{split}-{i}", "source": name,
            "task": str(ex.get(category, "mcq")) if category else "mcq",
            "category": str(ex.get(category, "mcq")) if category else "mcq",
            "question": ex[question], "options": [str(o) for o in opts], "answer_idx": idx,
            "image_ref": "b64:" + base64.b64encode(buf.getvalue()).decode(), "depth_ref": None,
            "abstain_idx": -1, "meta": json.dumps({"split": split, "row": i}),
        })
    return _items_frame(rows)
