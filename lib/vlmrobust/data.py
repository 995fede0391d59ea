"""The item table, image references and real-data loaders.

The item table has one row per multiple-choice question; its columns are
:data:`vlmrobust.schema.ITEM_COLUMNS` (documented there).

:func:`load_image` turns any ``image_ref`` into a uint8 ``H×W×3`` array; a
corrupt or unreadable image raises :class:`ImageError` naming the reference.

Loaders (:func:`load_tsv` for VLMEvalKit TSV files, :func:`load_parquet` and
:func:`load_hf_dataset` through a column mapping) check every image when the
table is read — strict base64, a decoded-size guard (:data:`MAX_IMAGE_BYTES`),
a readable header within :data:`MAX_PIXELS` — and raise naming the row, so a
bad row stops the load before any work starts; they return a whole table or
nothing. :func:`save_items` writes a table atomically.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .schema import ITEM_COLUMNS, OPTION_LETTERS

__all__ = [
    "ImageError", "ItemTableError", "MAX_PIXELS", "MAX_IMAGE_BYTES", "DEFAULT_COLUMNS", "validate_items",
    "load_image", "load_depth", "decode_image", "check_image_bytes", "b64_image", "save_items", "load_tsv",
    "items_from_records", "load_parquet", "load_hf_dataset",
]

MAX_PIXELS = 50_000_000  # refuse decompression bombs before decoding
MAX_IMAGE_BYTES = 32 * 2**20  # refuse encoded images larger than this when a table is read

#: The column mapping of :func:`items_from_records` (item field -> table column).
DEFAULT_COLUMNS: dict[str, object] = {"id": None, "question": "question", "options": "options", "answer": "answer",
                                      "image": "image", "task": None, "category": "category", "hint": "hint"}


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


def save_items(items: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Validate an item table and write it as parquet, atomically (a temporary file, then a rename).

    A table that fails validation writes nothing; a failed write leaves any
    previous file at ``path`` as it was.
    """
    validate_items(items)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        items.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


# --------------------------------------------------------------------------- image checks at read time


def check_image_bytes(raw: bytes, where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> None:
    """Refuse image bytes that are too large, not an image, or over :data:`MAX_PIXELS` (header only).

    Raises :class:`ImageError` naming ``where`` (the row); nothing is decoded beyond the header.
    """
    from PIL import Image, UnidentifiedImageError

    if len(raw) > max_bytes:
        raise ImageError(f"{where}: image is {len(raw):,} bytes (limit {max_bytes:,})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as im:
                w, h = im.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"{where}: not a readable image ({exc})") from exc
    if w * h > MAX_PIXELS:
        raise ImageError(f"{where}: image has {w}x{h} pixels (limit {MAX_PIXELS:,})")


def b64_image(text: str, where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """Check a base64 image (strict alphabet, decoded-size guard, image header) and return its ``b64:`` reference."""
    text = text[4:] if text.startswith("b64:") else text
    if len(text) * 3 // 4 > max_bytes + 3:  # refuse before decoding
        raise ImageError(f"{where}: base64 image decodes to about {len(text) * 3 // 4:,} bytes (limit {max_bytes:,})")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"{where}: image is not valid base64 ({exc})") from exc
    check_image_bytes(raw, where, max_bytes=max_bytes)
    return "b64:" + text


# --------------------------------------------------------------------------- VLMEvalKit TSV


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip().lower() in ("", "nan")


def load_tsv(path: str | os.PathLike, source: str | None = None, max_items: int | None = None, *,
             max_image_bytes: int = MAX_IMAGE_BYTES, skip_multi_image: bool = True) -> pd.DataFrame:
    """Read a VLMEvalKit multiple-choice TSV into the item schema, checking every image as it reads.

    Columns: ``index``, ``question``, option columns ``A``..``E`` (empty or
    ``nan`` for an absent option; present options must be contiguous),
    ``answer`` (a letter) and ``image`` (base64) or ``image_path``; ``hint``
    (prepended to the question as ``Hint: ...``, as VLMEvalKit does),
    ``category`` (the item's ``task``) and ``l2-category`` (its ``category``;
    ``category`` when absent) are used when present and kept in ``meta``. An
    ``image`` value of at most 64 characters is VLMEvalKit's back-reference: it
    names the ``index`` of the row that holds the image. Multi-image rows (a
    list of images) are skipped with a warning (``skip_multi_image=False``:
    an error), since an item holds one image.

    Every problem raises :class:`ItemTableError` or :class:`ImageError` naming
    the file and the row's index — a malformed table, a missing column or
    answer, a bad option layout, invalid base64, a back-reference to a missing
    index, an image over ``max_image_bytes`` or :data:`MAX_PIXELS` — before
    anything is returned.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"TSV file not found: {path}")
    try:
        table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ItemTableError(f"{path.name}: malformed TSV: {exc}") from exc
    for col in ("index", "question", "answer"):
        if col not in table.columns:
            raise ItemTableError(f"{path.name}: column {col!r} is missing; columns are {list(table.columns)}")
    if "image" not in table.columns and "image_path" not in table.columns:
        raise ItemTableError(f"{path.name}: needs an 'image' (base64) or 'image_path' column")
    dup = table["index"][table["index"].duplicated()]
    if len(dup):
        raise ItemTableError(f"{path.name}: index {dup.iloc[0]!r} repeats")
    source = source or path.stem
    images = dict(zip(table["index"], table["image"], strict=True)) if "image" in table.columns else {}
    checked: dict[str, str] = {}
    rows, skipped = [], 0
    for r in table.to_dict("records"):
        if max_items is not None and len(rows) >= max_items:
            break
        where = f"{path.name}: row index={r['index']!r}"
        if images and images[r["index"]].strip():
            value = images[r["index"]].strip()
            if len(value) <= 64:  # a back-reference to the row holding the image
                if value not in images:
                    raise ItemTableError(f"{where}: image refers to index {value!r}, which is not in the table")
                if len(images[value].strip()) <= 64:
                    raise ItemTableError(f"{where}: image refers to index {value!r}, which holds no image itself")
                value = images[value].strip()
            if value.startswith("["):
                if skip_multi_image:
                    skipped += 1
                    continue
                raise ItemTableError(f"{where}: holds several images; an item holds one")
            if value not in checked:
                checked[value] = b64_image(value, where, max_bytes=max_image_bytes)
            image_ref = checked[value]
        elif "image_path" in table.columns and str(r["image_path"]).strip():
            image_ref = str((path.parent / r["image_path"].strip()).resolve())
        else:
            raise ItemTableError(f"{where}: has no image")
        present = [c for c in OPTION_LETTERS if c in table.columns and not _missing(r[c])]
        if present != list(OPTION_LETTERS[: len(present)]):
            raise ItemTableError(f"{where}: options {present} are not contiguous from A")
        options = [str(r[c]).strip() for c in present]
        letter = str(r["answer"]).strip().upper()
        if not letter:
            raise ItemTableError(f"{where}: answer is empty")
        if len(options) < 2 or letter not in OPTION_LETTERS[: len(options)]:
            raise ItemTableError(f"{where} has answer {letter!r} and {len(options)} options")
        question = str(r["question"]).strip()
        hint = "" if _missing(r.get("hint")) else str(r["hint"]).strip()
        if hint:
            question = f"Hint: {hint}\n{question}"
        cat = "" if _missing(r.get("category")) else str(r["category"]).strip()
        l2 = "" if _missing(r.get("l2-category")) else str(r["l2-category"]).strip()
        rows.append({
            "item_id": f"{source}-{r['index']}", "source": source, "task": cat or "mcq",
            "category": l2 or cat or "mcq", "question": question, "options": options,
            "answer_idx": OPTION_LETTERS.index(letter), "image_ref": image_ref, "depth_ref": None,
            "abstain_idx": -1, "meta": json.dumps({"index": r["index"], "category": cat, "l2-category": l2}),
        })
    if skipped:
        warnings.warn(f"{path.name}: skipped {skipped} multi-image row(s)", stacklevel=2)
    if not rows:
        raise ItemTableError(f"{path.name}: no single-image row to read")
    return _items_frame(rows)


# --------------------------------------------------------------------------- tables with a column mapping


def _image_value(value: object, where: str, base: Path | None, max_bytes: int) -> str:
    """An ``image_ref`` from bytes, ``{"bytes", "path"}`` (Hugging Face), a PIL image, base64 text or a path."""
    if isinstance(value, dict):
        value = value.get("bytes") or value.get("path")
    if hasattr(value, "save") and hasattr(value, "mode"):  # a PIL image
        buf = io.BytesIO()
        value.convert("RGB").save(buf, format="PNG")
        value = buf.getvalue()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        check_image_bytes(raw, where, max_bytes=max_bytes)
        return "b64:" + base64.b64encode(raw).decode()
    if isinstance(value, str) and value.strip():
        file = Path(value).expanduser()
        file = file if file.is_absolute() or base is None else base / file
        return str(file.resolve()) if file.is_file() else b64_image(value.strip(), where, max_bytes=max_bytes)
    raise ImageError(f"{where}: no image ({type(value).__name__})")


def items_from_records(records: Iterable[Mapping], *, source: str, columns: Mapping[str, object] | None = None,
                       base: Path | None = None, max_items: int | None = None,
                       max_image_bytes: int = MAX_IMAGE_BYTES) -> pd.DataFrame:
    """Rows of any multiple-choice table into the item schema, through a column mapping.

    ``columns`` maps item fields to the table's columns (defaults in
    :data:`DEFAULT_COLUMNS`): ``question``; ``options`` (one list column, or a
    list of option columns, empty ones dropped); ``answer`` (a letter, an index
    or the answer's text); ``image``; optional ``id``, ``task``, ``category``,
    ``hint``. Images are checked as they are read. Errors name the row.
    """
    cols = {**DEFAULT_COLUMNS, **dict(columns or {})}
    rows = []
    for i, rec in enumerate(records):
        if max_items is not None and len(rows) >= max_items:
            break
        rid = rec.get(cols["id"], i) if cols.get("id") else i
        where = f"{source}: row {rid!r}"
        for field in ("question", "answer", "image"):
            if cols[field] not in rec:
                raise ItemTableError(f"{where}: column {cols[field]!r} (the {field}) is missing; columns are "
                                     f"{sorted(rec)}")
        spec = cols["options"]
        if isinstance(spec, str):
            if spec not in rec:
                raise ItemTableError(f"{where}: options column {spec!r} is missing")
            opts = [str(o).strip() for o in list(rec[spec])]
        else:
            opts = [str(rec[c]).strip() for c in spec if c in rec and not _missing(rec[c])]
        ans = rec[cols["answer"]]
        if isinstance(ans, str) and ans.strip().upper() in OPTION_LETTERS[: len(opts)] and len(ans.strip()) == 1:
            idx = OPTION_LETTERS.index(ans.strip().upper())
        elif isinstance(ans, (int, np.integer)) and not isinstance(ans, bool) and 0 <= ans < len(opts):
            idx = int(ans)
        elif str(ans).strip() in opts:
            idx = opts.index(str(ans).strip())
        else:
            raise ItemTableError(f"{where}: answer {ans!r} is neither a letter, an index nor one of {opts}")
        question = str(rec[cols["question"]]).strip()
        hint = rec.get(cols["hint"]) if cols.get("hint") else None
        if not _missing(hint):
            question = f"Hint: {str(hint).strip()}\n{question}"
        task = str(rec.get(cols["task"], "") or "") if cols.get("task") else ""
        cat = str(rec.get(cols["category"], "") or "") if cols.get("category") else ""
        rows.append({
            "item_id": f"{source}-{rid}", "source": source, "task": task or cat or "mcq",
            "category": cat or task or "mcq", "question": question, "options": opts, "answer_idx": idx,
            "image_ref": _image_value(rec[cols["image"]], where, base, max_image_bytes), "depth_ref": None,
            "abstain_idx": -1, "meta": json.dumps({"row": i, "id": str(rid)}),
        })
    if not rows:
        raise ItemTableError(f"{source}: no rows")
    return _items_frame(rows)


def load_parquet(path: str | os.PathLike, columns: Mapping[str, object] | None = None, *, source: str | None = None,
                 max_items: int | None = None, max_image_bytes: int = MAX_IMAGE_BYTES) -> pd.DataFrame:
    """A parquet multiple-choice table (e.g. a Hugging Face dataset export) through a column mapping.

    See :func:`items_from_records`; relative image paths are read from the file's folder.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"parquet file not found: {path}")
    table = pd.read_parquet(path)
    return items_from_records(table.to_dict("records"), source=source or path.stem, columns=columns,
                              base=path.parent, max_items=max_items, max_image_bytes=max_image_bytes)


def load_hf_dataset(name: str, split: str = "test", columns: Mapping[str, object] | None = None, *,
                    max_items: int | None = None, cache_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """A Hugging Face multiple-choice dataset through a column mapping (see :func:`items_from_records`).

    Needs the optional ``datasets`` package and the dataset in the local cache or hub access.
    """
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError("load_hf_dataset needs the 'datasets' package: pip install datasets") from exc
    ds = datasets.load_dataset(name, split=split, cache_dir=cache_dir)
    return items_from_records(ds, source=f"{name.replace('/', '_')}-{split}", columns=columns, max_items=max_items)
