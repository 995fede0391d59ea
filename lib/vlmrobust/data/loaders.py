"""Real-data loaders: VLMEvalKit TSV files, parquet tables and Hugging Face datasets, into the item schema.

:func:`load_tsv` for VLMEvalKit TSV files, :func:`load_parquet` and
:func:`load_hf_dataset` through a column mapping check every image when the
table is read — strict base64, a decoded-size guard (:data:`~vlmrobust.data.images.MAX_IMAGE_BYTES`),
a readable header within :data:`~vlmrobust.data.images.MAX_PIXELS` — and raise naming the row, so a
bad row stops the load before any work starts; they return a whole table or nothing. :func:`load_tsv`
keeps what the papers score (multiple-choice and yes/no rows, MMMU's multi-image rows tiled into one
image) and counts what it drops (open-ended rows, other benchmarks' multi-image rows, rows with more
options than an item holds) in the table's ``attrs``.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import ITEM_COLUMNS, LETTERS, MAX_OPTIONS, OPTION_LETTERS
from .images import (
    MAX_IMAGE_BYTES,
    MAX_PIXELS,
    ImageError,
    b64_image,
    check_image_bytes,
    decode_image,
)
from .items import ItemTableError, validate_items

__all__ = ["DEFAULT_COLUMNS", "MULTI_IMAGE", "MULTI_IMAGE_MODES", "SKIP_COUNTS", "load_tsv", "multi_image_mode",
           "tile_images", "items_from_records", "load_parquet", "load_hf_dataset"]

#: The column mapping of :func:`items_from_records` (item field -> table column).
DEFAULT_COLUMNS: dict[str, object] = {"id": None, "question": "question", "options": "options", "answer": "answer",
                                      "image": "image", "task": None, "category": "category", "hint": "hint"}


def _items_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    return validate_items(df)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip().lower() in ("", "nan")


#: How each VLMEvalKit benchmark's multi-image rows are read (its file stem, or the stem's part before the
#: first ``_``: ``MMMU_DEV_VAL`` -> ``MMMU``). Seed 002 keeps MMMU's multi-image questions (App. A.2, Table 6:
#: "MMMU | Validation | 847 | Multi-image MCQ"; A.3 interleaves the images at their ``<image k>`` markers;
#: A.5 applies a perturbation "to all image components ... simultaneously"), so they are tiled into one image.
#: Every other benchmark's are skipped and counted:
#: seed 000 writes a question as one image and its text, ``q = (I, x, O, y)`` (§IV-B), and seed 001's three
#: datasets are single-image.
MULTI_IMAGE: dict[str, str] = {"MMMU": "tile"}
#: The readings of a multi-image row: skip it (counted), tile its images into one, or refuse the table.
MULTI_IMAGE_MODES = ("skip", "tile", "error")
#: The counts attached to the table :func:`load_tsv` returns (``items.attrs[name]``).
SKIP_COUNTS = ("multi_image_skipped", "multi_image_tiled", "open_skipped", "over_options_skipped")
_WARN = {"multi_image_skipped": "skipped {} multi-image row(s)",
         "open_skipped": "skipped {} open-ended row(s) (no options and no yes/no answer)",
         "over_options_skipped": f"skipped {{}} row(s) with more than {MAX_OPTIONS} options"}


def multi_image_mode(path: str | os.PathLike, skip_multi_image: bool = True) -> str:
    """How :func:`load_tsv` reads the multi-image rows of ``path`` by default (see :data:`MULTI_IMAGE`)."""
    stem = Path(path).stem
    return MULTI_IMAGE.get(stem) or MULTI_IMAGE.get(stem.split("_")[0]) or ("skip" if skip_multi_image else "error")


def _image_list(value: str, where: str) -> list[str]:
    """The base64 strings of a VLMEvalKit image list (``"['<b64>', '<b64>']"``, Python or JSON quoting)."""
    try:
        out = ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise ItemTableError(f"{where}: image list is not readable: {exc}") from None
    if not isinstance(out, list) or not out or not all(isinstance(s, str) and s.strip() for s in out):
        raise ItemTableError(f"{where}: image column starts with '[' but is not a list of base64 images")
    return [s.strip() for s in out]


def tile_images(b64s: list[str], where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """One ``b64:`` PNG holding the images side by side, in their order, each centred vertically on white.

    Every image is checked as :func:`~vlmrobust.data.images.b64_image` checks
    one; the tile is refused over :data:`~vlmrobust.data.images.MAX_PIXELS`.
    """
    from PIL import Image

    arrays = []
    for k, text in enumerate(b64s, 1):
        ref = b64_image(text, f"{where} image {k}", max_bytes=max_bytes)
        arrays.append(decode_image(base64.b64decode(ref[4:]), f"{where} image {k}"))
    h, w = max(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)
    if h * w > MAX_PIXELS:
        raise ImageError(f"{where}: the tile of {len(arrays)} images has {w}x{h} pixels (limit {MAX_PIXELS:,})")
    canvas, x = np.full((h, w, 3), 255, np.uint8), 0
    for a in arrays:
        top = (h - a.shape[0]) // 2
        canvas[top:top + a.shape[0], x:x + a.shape[1]] = a
        x += a.shape[1]
    buf = io.BytesIO()
    Image.fromarray(canvas).save(buf, format="PNG")
    check_image_bytes(buf.getvalue(), where, max_bytes=max_bytes)
    return "b64:" + base64.b64encode(buf.getvalue()).decode()


def load_tsv(path: str | os.PathLike, source: str | None = None, max_items: int | None = None, *,
             max_image_bytes: int = MAX_IMAGE_BYTES, skip_multi_image: bool = True,
             multi_image: str | None = None) -> pd.DataFrame:
    """Read a VLMEvalKit TSV (multiple-choice or yes/no) into the item schema, checking every image as it reads.

    Columns: ``index``, ``question``, option columns ``A``, ``B``, ... (empty or
    ``nan`` for an absent option; present options must be contiguous from
    ``A``), ``answer`` (a letter) and ``image`` (base64) or ``image_path``;
    ``hint`` (prepended to the question as ``Hint: ...``, as VLMEvalKit does),
    ``category`` (the item's ``task``) and ``l2-category`` (or ``l2_category``;
    its ``category``, else ``category``) are used when present and kept in
    ``meta``, with ``split`` where the table has one. An ``image`` value of at
    most 64 characters is VLMEvalKit's back-reference: it names the ``index`` of
    the row that holds the image.

    Rows the papers do not score are dropped and counted, each count attached
    as ``items.attrs[name]`` (:data:`SKIP_COUNTS`, 0 when none) with a warning:

    * **yes/no rows** (no options, ``answer`` Yes or No in any case; POPE, MME)
      are kept with the options ``["Yes", "No"]``: seed 002 scores POPE as that
      pair (App. A.3, one-token Yes/No answer; App. D, the margin ``s_Yes - s_No``);
    * **open-ended rows** (no options and another answer; MMMU's open questions)
      are dropped (``open_skipped``): the papers score multiple-choice and binary
      questions only (seed 002 §3, "restricting our scope to multiple-choice and
      binary decision subsets"; seeds 000 §IV-A and 001 §III: MCQ);
    * **rows with more options** than an item holds (:data:`~vlmrobust.schema.MAX_OPTIONS`,
      ``A``-``E``) are dropped (``over_options_skipped``);
    * **multi-image rows** (an image list; a one-image list is a single image)
      follow ``multi_image``: ``"skip"`` (``multi_image_skipped``), ``"tile"``
      (``multi_image_tiled``: :func:`tile_images` puts the images side by side, so
      the item still holds one image and a corruption reaches every component;
      a geometric shift then moves the tile as a whole, not each image; the
      question keeps its ``<image k>`` markers, image k being the k-th from the
      left, and ``meta["images"]`` their number) or ``"error"``. By default
      :func:`multi_image_mode` decides per benchmark (:data:`MULTI_IMAGE`:
      tiled for MMMU, skipped elsewhere; ``skip_multi_image=False``: an error
      elsewhere).

    Every problem raises :class:`ItemTableError` or :class:`ImageError` naming
    the file and the row's index — a malformed table, a missing column or
    answer, a bad option layout, invalid base64, a back-reference to a missing
    index, an image over ``max_image_bytes`` or :data:`MAX_PIXELS` — before
    anything is returned.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"TSV file not found: {path}")
    mode = multi_image or multi_image_mode(path, skip_multi_image)
    if mode not in MULTI_IMAGE_MODES:
        raise ValueError(f"multi_image must be one of {MULTI_IMAGE_MODES}, got {mode!r}")
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
    letters = [c for c in LETTERS if c in table.columns]
    l2_col = next((c for c in ("l2-category", "l2_category") if c in table.columns), None)
    images = dict(zip(table["index"], table["image"], strict=True)) if "image" in table.columns else {}
    checked: dict[str, str] = {}
    rows, counts = [], dict.fromkeys(SKIP_COUNTS, 0)
    for r in table.to_dict("records"):
        if max_items is not None and len(rows) >= max_items:
            break
        where = f"{path.name}: row index={r['index']!r}"
        parts: list[str] = []
        if images and images[r["index"]].strip():
            value = images[r["index"]].strip()
            if len(value) <= 64:  # a back-reference to the row holding the image
                if value not in images:
                    raise ItemTableError(f"{where}: image refers to index {value!r}, which is not in the table")
                if len(images[value].strip()) <= 64:
                    raise ItemTableError(f"{where}: image refers to index {value!r}, which holds no image itself")
                value = images[value].strip()
            parts = _image_list(value, where) if value.startswith("[") else [value]
            if len(parts) > 1 and mode == "skip":
                counts["multi_image_skipped"] += 1
                continue
            if len(parts) > 1 and mode == "error":
                raise ItemTableError(f"{where}: holds several images; an item holds one")
        elif not ("image_path" in table.columns and str(r["image_path"]).strip()):
            raise ItemTableError(f"{where}: has no image")
        present = [c for c in letters if not _missing(r[c])]
        letter = str(r["answer"]).strip()
        if not letter:
            raise ItemTableError(f"{where}: answer is empty")
        if not present and letter.lower() in ("yes", "no"):
            options, answer_idx = ["Yes", "No"], 0 if letter.lower() == "yes" else 1
        elif not present:
            counts["open_skipped"] += 1
            continue
        elif present != list(LETTERS[: len(present)]):
            raise ItemTableError(f"{where}: options {present} are not contiguous from A")
        elif len(present) > MAX_OPTIONS:
            counts["over_options_skipped"] += 1
            continue
        else:
            options, letter = [str(r[c]).strip() for c in present], letter.upper()
            if len(options) < 2 or letter not in OPTION_LETTERS[: len(options)]:
                raise ItemTableError(f"{where} has answer {letter!r} and {len(options)} options")
            answer_idx = OPTION_LETTERS.index(letter)
        if parts:
            key = "\n".join(parts)
            if key not in checked:
                checked[key] = (tile_images(parts, where, max_bytes=max_image_bytes) if len(parts) > 1
                                else b64_image(parts[0], where, max_bytes=max_image_bytes))
            image_ref = checked[key]
            counts["multi_image_tiled"] += len(parts) > 1
        else:
            image_ref = str((path.parent / r["image_path"].strip()).resolve())
        question = str(r["question"]).strip()
        hint = "" if _missing(r.get("hint")) else str(r["hint"]).strip()
        if hint:
            question = f"Hint: {hint}\n{question}"
        cat = "" if _missing(r.get("category")) else str(r["category"]).strip()
        l2 = "" if l2_col is None or _missing(r[l2_col]) else str(r[l2_col]).strip()
        meta = {"index": r["index"], "category": cat, "l2-category": l2}
        if "split" in table.columns and not _missing(r["split"]):
            meta["split"] = str(r["split"]).strip()
        if len(parts) > 1:
            meta["images"] = len(parts)
        rows.append({
            "item_id": f"{source}-{r['index']}", "source": source, "task": cat or "mcq",
            "category": l2 or cat or "mcq", "question": question, "options": options,
            "answer_idx": answer_idx, "image_ref": image_ref, "depth_ref": None,
            "abstain_idx": -1, "meta": json.dumps(meta),
        })
    for name, n in counts.items():
        if n and name in _WARN:
            warnings.warn(f"{path.name}: " + _WARN[name].format(n), stacklevel=2)
    if not rows:
        raise ItemTableError(f"{path.name}: no row to read (skipped: "
                             + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")")
    items = _items_frame(rows)
    items.attrs.update(counts)
    return items


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
