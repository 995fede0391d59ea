"""The predictions table's ``probs`` column as a matrix: one reader for every analysis.

:func:`probs_matrix` stacks the per-row option distributions (each of the row's own
length ``K``) into a zero-padded ``(n, max K)`` matrix, after checking them:
each must be finite, non-negative and sum to 1 within ``prob_atol``; it is then
divided by its sum. :func:`prob_source` and :func:`prob_chunk` do the same in row
chunks, for readers of millions of rows (seed 000's pairs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["probs_matrix", "prob_source", "prob_chunk", "rowsum"]


def rowsum(A: np.ndarray) -> np.ndarray:
    """Row sums of a narrow 2-D array, adding columns left to right (fast and order-fixed)."""
    out = A[:, 0].copy()
    for j in range(1, A.shape[1]):
        out += A[:, j]
    return out


def probs_matrix(probs: pd.Series | np.ndarray | list, K: np.ndarray, *, prob_atol: float = 1e-3) -> np.ndarray:
    """Stack per-row probability lists into an ``(n, max K)`` matrix, zero-padded.

    Accepts an object column of lists/arrays (as pandas reads parquet), a
    pyarrow-backed list column, or a 2-D array. Checks each row's length
    against ``K``, finiteness, non-negativity and ``|sum - 1| <= prob_atol``,
    then divides every row by its sum.
    """
    K, src = prob_source(probs, K)
    return prob_chunk(src, K, 0, K.shape[0], prob_atol)


def prob_source(probs, K) -> tuple[np.ndarray, tuple]:
    """Validated ``K`` and the probabilities as ``("dense", 2-D)`` or ``("flat", values, row starts)``."""
    K = np.asarray(K, dtype=np.int64)
    n = K.shape[0]
    if n and K.min() < 2:
        raise ValueError(f"K must be >= 2 for every row (K = 1 has no normalised entropy); found K = {K.min()}")
    if isinstance(probs, np.ndarray) and probs.ndim == 2:
        if probs.shape[0] != n:
            raise ValueError(f"probs has {probs.shape[0]} rows but K has {n}")
        cols = np.arange(probs.shape[1])
        if n and K.max() > probs.shape[1]:
            raise ValueError("probs must have K entries per row; the matrix has fewer columns than max K")
        if (np.abs(np.where(cols[None, :] >= K[:, None], probs, 0)) > 0).any():
            raise ValueError("probs has non-zero entries beyond a row's K options")
        return K, ("dense", np.asarray(probs, dtype=np.float64))
    flat, lengths = _flatten(probs, n)
    if not np.array_equal(lengths, K):
        bad = int(np.flatnonzero(lengths != K)[0])
        raise ValueError(f"probs must have K entries per row; row {bad} has {lengths[bad]} but K = {K[bad]}")
    return K, ("flat", flat, np.concatenate([[0], np.cumsum(K)]))


def prob_chunk(src: tuple, K: np.ndarray, a: int, b: int, prob_atol: float) -> np.ndarray:
    """Rows ``a:b`` as a validated, renormalised ``(b - a, max K)`` matrix."""
    kmax = int(K.max()) if K.shape[0] else 2
    Kc = K[a:b]
    if src[0] == "dense":
        P = np.array(src[1][a:b, :kmax], dtype=np.float64)
    else:
        flat, starts = src[1], src[2]
        seg = flat[starts[a]:starts[b]]
        if (Kc == kmax).all():
            P = np.array(seg.reshape(b - a, kmax), dtype=np.float64)
        else:
            P = np.zeros((b - a, kmax), dtype=np.float64)
            P[np.arange(kmax)[None, :] < Kc[:, None]] = seg  # row-major fill: row i gets its K[i] values
    s = rowsum(P)  # NaN or inf anywhere in a row makes its sum non-finite
    if not np.isfinite(s).all():
        raise ValueError("probs must be finite (found NaN or inf)")
    if P.size and P.min() < 0:
        raise ValueError("probs must be non-negative")
    if P.size and np.abs(s - 1).max() > prob_atol:
        bad = int(np.argmax(np.abs(s - 1)))
        raise ValueError(f"probs must sum to 1 within prob_atol={prob_atol}; row {a + bad} sums to {s[bad]!r}")
    P /= s[:, None]
    return P


def _flatten(probs, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated values and per-row lengths of a list column (through pyarrow, no Python loop)."""
    import pyarrow as pa

    if isinstance(probs, pd.Series) and isinstance(probs.dtype, pd.ArrowDtype):
        arr = pa.chunked_array(probs.array._pa_array).combine_chunks()  # noqa: SLF001
    else:
        values = probs.to_numpy(dtype=object) if isinstance(probs, pd.Series) else list(probs)
        try:
            arr = pa.array(values, type=pa.list_(pa.float64()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise ValueError(f"probs must hold a list of K floats in every row ({exc})") from None
    if isinstance(arr.type, pa.LargeListType):
        arr = arr.cast(pa.list_(pa.float64()))
    if arr.null_count:
        raise ValueError("probs must hold a list of K floats in every row (found a missing row)")
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    # flatten() honours a slice's offset; a missing value inside a list becomes NaN (rejected later)
    flat = np.asarray(arr.flatten().cast(pa.float64()).fill_null(np.nan), dtype=np.float64)
    return flat, np.diff(offsets)
