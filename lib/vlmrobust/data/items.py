"""The item table: its schema check, its stable digest, and atomic writes of tables.

The item table has one row per multiple-choice question; its columns are
:data:`vlmrobust.schema.ITEM_COLUMNS` (documented there).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from ..repro import stable_hash
from ..schema import ITEM_COLUMNS, ITEM_KEY_COLUMNS, OPTION_LETTERS

__all__ = ["ItemTableError", "validate_items", "save_items", "items_digest", "write_parquet_atomic"]


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


def items_digest(items: pd.DataFrame) -> str:
    """A stable hash of the item table's ids and contents (the columns that change a prediction)."""
    cols = [c for c in ITEM_KEY_COLUMNS if c in items.columns]
    recs = items[cols].to_dict("records")
    clean = [{k: (list(v) if not isinstance(v, (str, int, float, type(None))) else v) for k, v in r.items()}
             for r in recs]
    return stable_hash(clean, 32)


def write_parquet_atomic(df: pd.DataFrame, path: Path) -> None:
    """Write to a temporary file beside ``path``, then ``os.replace``: readers never see a partial file."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        df.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def save_items(items: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Validate an item table and write it as parquet, atomically (a temporary file, then a rename).

    A table that fails validation writes nothing; a failed write leaves any
    previous file at ``path`` as it was.
    """
    validate_items(items)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet_atomic(items, path)
    return path
