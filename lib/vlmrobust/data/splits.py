"""Saved splits: the selected items with the scores that chose them, an item source for every notebook.

A split named ``<name>`` is one parquet file, ``<results root>/splits/<name>.parquet``
(:func:`split_path`). It holds one row per selected item: the item table's
columns (:data:`vlmrobust.schema.ITEM_COLUMNS`), then the scores that chose it
(:data:`SCORE_COLUMNS`: κ, ν, ``e``, the greedy step, each selector's mean G)
and ``pool_digest``, the content hash of the whole candidate pool
(:func:`vlmrobust.data.items_digest`). The file's metadata
(``DataFrame.attrs["vlmrobust_split"]``) records the selectors, corruptions,
levels, the mean ``e`` of the cut, the pool's size and A⁺'s size.

Notebook 01 writes it with :func:`save_split`; any notebook reads it as the
item source ``split:<name>`` (:func:`vlmrobust.sweep.item_source`). The file is
written to a temporary name and renamed, so a reader never sees half of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import paths
from ..schema import ITEM_COLUMNS
from .items import items_digest, validate_items, write_parquet_atomic

__all__ = ["SCORE_COLUMNS", "SPLIT_META", "split_path", "splits_dir", "list_splits", "save_split", "read_split",
           "check_name"]

SCORE_COLUMNS = ("kappa", "nu", "e", "pick")
SPLIT_META = "vlmrobust_split"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_name(name: str) -> str:
    """A split name: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"split name must match {_NAME.pattern} (letters, digits, '.', '_', '-'), got {name!r}")
    return name


def splits_dir(create: bool = False) -> Path:
    """``<results root>/splits``: where saved splits live."""
    path = paths.results_root() / "splits"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def split_path(name: str) -> Path:
    """The file of split ``name``."""
    return splits_dir() / f"{check_name(name)}.parquet"


def list_splits() -> list[str]:
    """Names of the saved splits, sorted."""
    d = splits_dir()
    return sorted(p.stem for p in d.glob("*.parquet")) if d.is_dir() else []


def save_split(name: str, pool: pd.DataFrame, selection, *, selector_gini: np.ndarray | None = None,
               selectors: Sequence[str] = (), meta: Mapping | None = None) -> Path:
    """Write the split of ``selection`` (a :class:`~vlmrobust.analysis.selection.Selection` over ``pool``) as ``name``.

    ``pool`` is the item table the selection ran on (same items, same order);
    ``selector_gini`` (items × selectors, optional) adds one ``G_<selector>``
    column per selector. Returns the path written.
    """

    validate_items(pool)
    ids = pool["item_id"].astype(str).to_numpy()
    if len(ids) != len(selection.item_ids) or (ids != np.asarray(selection.item_ids, dtype=str)).any():
        raise ValueError("the selection's items differ from the pool's (same ids in the same order are needed)")
    keep = np.asarray(selection.selected, dtype=bool)
    out = pool.loc[keep, list(ITEM_COLUMNS)].reset_index(drop=True)
    for col in SCORE_COLUMNS:
        out[col] = np.asarray(getattr(selection, col))[keep]
    if selector_gini is not None:
        sg = np.asarray(selector_gini, dtype=np.float64)
        if sg.shape != (len(ids), len(selectors)):
            raise ValueError(f"selector_gini must be (items, selectors) = ({len(ids)}, {len(selectors)}), "
                             f"got {sg.shape}")
        for j, s in enumerate(selectors):
            out[f"G_{s}"] = sg[keep, j]
    digest = items_digest(pool)
    out["pool_digest"] = digest
    out.attrs[SPLIT_META] = {"name": name, "pool_digest": digest, "pool_size": len(pool),
                             "eligible": int(np.asarray(selection.eligible).sum()), "size": int(keep.sum()),
                             "threshold": float(selection.threshold), "selectors": list(selectors),
                             **dict(meta or {})}
    path = split_path(name)
    splits_dir(create=True)
    write_parquet_atomic(out, path)
    return path


def read_split(name: str) -> pd.DataFrame:
    """The saved split ``name`` (item columns, scores, ``pool_digest``; metadata in ``attrs``)."""
    path = split_path(name)
    if not path.is_file():
        have = list_splits()
        raise FileNotFoundError(f"no saved split {name!r} at {path}; saved splits: {have or 'none'} "
                                "(notebook 01_dataset_selection writes them)")
    df = pd.read_parquet(path)
    missing = [c for c in (*ITEM_COLUMNS, *SCORE_COLUMNS, "pool_digest") if c not in df.columns]
    if missing:
        raise ValueError(f"{path} is not a saved split: it lacks column(s) {missing}")
    df["options"] = df["options"].map(list)
    return df
