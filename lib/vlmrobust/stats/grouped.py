"""Integer group codes and bincount sums: the vectorised group-by under the metrics."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def as_cols(by: str | Sequence[str] | None, name: str = "by") -> tuple[str, ...]:
    """Normalise a grouping argument to a tuple of column names."""
    if by is None:
        return ()
    if isinstance(by, str):
        return (by,)
    if not all(isinstance(c, str) for c in by):
        raise TypeError(f"{name} must be a column name or a sequence of column names, got {by!r}")
    return tuple(by)


def factorize(col: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(col, sort=True)`` (int64 codes, sorted distinct values; -1 for a missing value), faster on
    tables sorted by the column's runs.

    Predictions tables come in long runs (one model's rows, one item's conditions); when the first rows show
    runs, only the first row of each run is factorised and its code repeated over the run. Categorical
    columns keep their category order.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64), pd.Index(col.cat.categories)
    n = len(col)
    probe = min(n, 1024)
    if n > 4 * probe and col.iloc[:probe].ne(col.iloc[:probe].shift()).sum() * 8 < probe:
        values = col.to_numpy() if col.dtype == object or not isinstance(col.dtype, pd.StringDtype) else col.array
        change = np.ones(n, dtype=bool)
        change[1:] = np.asarray(values[1:] != values[:-1], dtype=bool)
        if col.hasnans:  # NaN != NaN: keep missing values on their own rows (factorize gives them -1)
            change |= np.asarray(col.isna(), dtype=bool)
        heads = np.flatnonzero(change)
        codes, u = pd.factorize(col.iloc[heads], sort=True)
        return np.repeat(codes.astype(np.int64), np.diff(np.append(heads, n))), pd.Index(u)
    codes, u = pd.factorize(col, sort=True)
    return codes.astype(np.int64), pd.Index(u)


def group_codes(df: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense group codes ``0..G-1`` for the rows of ``df`` and the key frame of the ``G`` groups.

    Groups are ordered by their keys (categories in category order, numbers
    ascending); only groups that occur are returned.
    """
    by = tuple(by)
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise ValueError(f"grouping column(s) {missing} not in the table; available: {list(df.columns)}")
    n = len(df)
    if not by:
        return np.zeros(n, dtype=np.int64), pd.DataFrame(index=[0])
    parts, uniques = [], []
    for c in by:
        codes, u = factorize(df[c])
        if (codes < 0).any():
            raise ValueError(f"grouping column {c!r} has missing values")
        parts.append(codes)
        uniques.append(pd.Index(u))
    combined, space = combined_codes(parts, [len(u) for u in uniques])
    inv, present = dense_codes(combined, space)
    frame = {}
    rem = present
    for c, u in reversed(list(zip(by, uniques, strict=True))):
        size = max(len(u), 1)
        idx = rem % size
        rem = rem // size
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            frame[c] = pd.Categorical.from_codes(idx, dtype=df[c].dtype)
        else:
            frame[c] = u.take(idx)
    keys = pd.DataFrame({c: frame[c] for c in by})
    return inv, keys


def present_codes(col: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes into the sorted distinct values that occur in ``col`` (a missing value is an error).

    Unlike :func:`factorize`, a categorical column's unused categories are left out (``pd.factorize``'s
    ``sort=True``). Arrow-backed strings are dictionary-encoded by pyarrow, without a round trip through
    Python objects.
    """
    if hasattr(col.array, "__arrow_array__") and not isinstance(col.dtype, pd.CategoricalDtype):
        import pyarrow as pa
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(pa.chunked_array(pa.array(col.array))).combine_chunks()
        if enc.null_count:
            raise ValueError(f"column {col.name!r} must not contain missing values")
        order = pc.sort_indices(enc.dictionary).to_numpy()
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = rank[enc.indices.to_numpy(zero_copy_only=False)]
        return codes, pd.Index(enc.dictionary.take(pa.array(order)).to_pandas())
    codes, uniques = pd.factorize(col, sort=True)
    if (codes < 0).any():
        raise ValueError(f"column {col.name!r} must not contain missing values")
    return codes.astype(np.int64), pd.Index(uniques)


def combined_codes(codes: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """One int64 key per row from several code columns (mixed radix, the first column most significant) and
    the size of the key space, ``prod(max(size, 1))``."""
    space = 1
    for k in sizes:
        space *= max(int(k), 1)
    if space >= 2**63:
        raise ValueError(f"{space} key combinations do not fit an int64 key; group by fewer columns")
    comb = np.zeros(len(codes[0]) if len(codes) else 0, dtype=np.int64)
    for c, k in zip(codes, sizes, strict=True):
        comb = comb * max(int(k), 1) + c
    return comb, space


def dense_codes(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes ``0..G-1`` for integer ``keys`` in ``[0, space)``, in key order, and the ``G`` keys that occur.

    A lookup table when the key space is small (O(n + space), no sort), ``np.unique`` otherwise.
    """
    keys = np.asarray(keys, dtype=np.int64)
    if space <= max(4 * len(keys), 1 << 16):
        seen = np.zeros(space, dtype=bool)
        seen[keys] = True
        present = np.flatnonzero(seen)
        if len(present) == space:
            return keys, present  # every key occurs: the keys are already dense
        return (np.cumsum(seen) - 1)[keys], present
    present, inv = np.unique(keys, return_inverse=True)
    return inv.reshape(-1).astype(np.int64, copy=False), present


def has_duplicates(keys: np.ndarray, space: int) -> bool:
    """Whether an integer key in ``[0, space)`` occurs twice (the check for one row per condition)."""
    if space <= max(8 * len(keys), 1 << 16):
        return bool(len(keys)) and int(np.bincount(keys, minlength=space).max()) > 1
    srt = np.sort(keys)
    return bool((srt[1:] == srt[:-1]).any())


def codes_in(col: pd.Series, vocabulary: Sequence[str], name: str) -> np.ndarray:
    """Index of each value of ``col`` in ``vocabulary``, for categorical columns in any category order or plain values.

    Raises ``ValueError`` naming ``name`` when a value is outside the vocabulary.
    """
    vocab = pd.Index(list(vocabulary))
    if isinstance(col.dtype, pd.CategoricalDtype):
        remap = vocab.get_indexer(col.cat.categories)
        codes = col.cat.codes.to_numpy().astype(np.int64)
        out = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    else:
        out = vocab.get_indexer(col)
    if (out < 0).any():
        raise ValueError(f"{name} must be one of {tuple(vocabulary)}")
    return out.astype(np.int64)


def gsum(codes: np.ndarray, n_groups: int, values: np.ndarray | None = None) -> np.ndarray:
    """Per-group sum of ``values`` (or counts when ``None``)."""
    if values is None:
        return np.bincount(codes, minlength=n_groups).astype(np.float64)
    return np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=n_groups)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with NaN where ``den == 0`` (an empty group has no mean)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def check_single_method(pairs: pd.DataFrame, unit: Sequence[str], name: str) -> None:
    """Refuse to count a model twice: a model scored by several methods needs ``method`` in the unit.

    Different models scored by different methods (each model's default) may be pooled.
    """
    if "method" in pairs.columns and "method" not in unit and "model" in pairs.columns and len(pairs):
        col = pairs["method"]
        if isinstance(col.dtype, pd.CategoricalDtype) and len(col.cat.categories) <= 1:
            return  # one method in the table
        (mc, mu), (ec, eu) = factorize(pairs["model"]), factorize(pairs["method"])
        seen = np.zeros(len(mu) * len(eu), dtype=bool)
        seen[mc * len(eu) + ec] = True
        per_model = seen.reshape(len(mu), len(eu)).sum(axis=1)
        if (per_model > 1).any():
            i = int(np.flatnonzero(per_model > 1)[0])
            m = mu[i]
            raise ValueError(
                f"model {m!r} appears with {per_model[i]} scoring methods, so it would be counted once per method; "
                f"add 'method' to {name} (e.g. {name}={tuple(unit) + ('method',)}) or filter to one method first"
            )
