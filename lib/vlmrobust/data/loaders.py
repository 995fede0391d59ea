"""Real-data loaders: VLMEvalKit TSV files, parquet tables and Hugging Face datasets, into the item schema.

:func:`load_tsv` for VLMEvalKit TSV files, :func:`load_parquet` and
:func:`load_hf_dataset` through a column mapping check every image when the
table is read — strict base64, a decoded-size guard (:data:`~vlmrobust.data.images.MAX_IMAGE_BYTES`),
a readable header within :data:`~vlmrobust.data.images.MAX_PIXELS` — and raise naming the row, so a
bad row stops the load before any work starts; they return a whole table or nothing.
"""

from __future__ import annotations

import base64
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import ITEM_COLUMNS, OPTION_LETTERS
from .images import MAX_IMAGE_BYTES, ImageError, b64_image, check_image_bytes
from .items import ItemTableError, validate_items

__all__ = ["DEFAULT_COLUMNS", "load_tsv", "items_from_records", "load_parquet", "load_hf_dataset"]

#: The column mapping of :func:`items_from_records` (item field -> table column).
DEFAULT_COLUMNS: dict[str, object] = {"id": None, "question": "question", "options": "options", "answer": "answer",
                                      "image": "image", "task": None, "category": "category", "hint": "hint"}


def _items_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    return validate_items(df)


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
    an error), since an item holds one image; how many were skipped is
    attached to the table as ``attrs["multi_image_skipped"]`` (0 when none).

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
    items = _items_frame(rows)
    items.attrs["multi_image_skipped"] = skipped
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
