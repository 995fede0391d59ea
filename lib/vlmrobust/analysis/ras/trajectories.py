"""Severity trajectories and their classes (seed 000, §VII-D, Figs. 6 and 12).

A trajectory is one ``model × method × question × perturbation`` followed over
the severities ``levels`` (default 1–5), together with its clean answer. Only
complete trajectories (a pair at every level of ``levels``) are kept; the
number of incomplete ones is reported in ``attrs["n_incomplete"]``.

Classes (exact rules; ``c_0`` = clean correctness, ``c_1 .. c_L`` = corrupted
correctness at the ordered levels, ``f`` = the first level whose correctness
differs from ``c_0``):

=======================  =========================================================
clean correct (c_0 = 1)
-----------------------------------------------------------------------------------
always correct           ``c_ℓ = 1`` for every level
persistent loss          wrong at ``f`` and at every level after ``f``
transient loss           wrong at some level, correct again at a later one
clean wrong (c_0 = 0)
-----------------------------------------------------------------------------------
always wrong             ``c_ℓ = 0`` for every level
persistent correction    correct at ``f`` and at every level after ``f`` (through the last)
transient correction     correct at some level, wrong again at a later one
=======================  =========================================================

Per trajectory: the mean RAS over its levels (the class-conditioned RAS of
Fig. 6 is the class mean of these), and the **trajectory medians** of ΔS and
ΔC over its levels (Fig. 6 dashed boxes, Fig. 12 coordinates are class means
of these medians).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.grouped import as_cols, check_single_method, codes_in, group_codes, gsum, safe_div

__all__ = ["TRAJECTORY_CLASSES", "classify_paths", "trajectories", "trajectory_summary"]

#: Trajectory classes: three clean-correct, then three clean-wrong.
TRAJECTORY_CLASSES = (
    "always correct", "transient loss", "persistent loss",
    "always wrong", "transient correction", "persistent correction",
)

TRAJ_KEY = ("model", "method", "item_id", "perturbation")


def classify_paths(clean_correct: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Class code (index into :data:`TRAJECTORY_CLASSES`) of each correctness path.

    ``clean_correct``: ``(n,)`` booleans; ``correct``: ``(n, L)`` booleans over
    the ordered severities (``L >= 1``). Rules in the module docstring.
    """
    c0 = np.asarray(clean_correct, dtype=bool)
    c = np.asarray(correct, dtype=bool)
    if c.ndim != 2 or c.shape[0] != c0.shape[0] or c.shape[1] < 1:
        raise ValueError(f"correct must be (n, L>=1) with n = len(clean_correct) = {c0.shape[0]}, got {c.shape}")
    changed = c != c0[:, None]  # wrong for clean-correct paths, correct for clean-wrong ones
    any_change = changed.any(axis=1)
    first = changed.argmax(axis=1)
    L = c.shape[1]
    # persistent: every level from the first change on has changed state
    persistent = changed.sum(axis=1) == (L - first)
    code = np.where(~any_change, 0, np.where(persistent, 2, 1))
    return np.where(c0, code, code + 3).astype(np.int64)


def trajectories(
    pairs: pd.DataFrame,
    levels: Sequence[int] = (1, 2, 3, 4, 5),
    key: str | Sequence[str] = TRAJ_KEY,
) -> pd.DataFrame:
    """One row per complete trajectory: keys, class, mean RAS, median ΔS and ΔC.

    Columns: the ``key`` columns (plus ``task`` and ``category`` when present),
    ``correct_clean``, ``path`` (corrupted correctness as a string of 0/1 over
    ``levels``), ``klass`` (categorical over :data:`TRAJECTORY_CLASSES`),
    ``RAS`` (mean over levels), ``dS_med``, ``dC_med`` (medians over levels).
    Pairs at levels outside ``levels`` are ignored.
    """
    key = as_cols(key, "key")
    levels = [int(v) for v in levels]
    if not levels or len(set(levels)) != len(levels) or sorted(levels) != levels:
        raise ValueError(f"levels must be a non-empty increasing list of distinct severities, got {levels}")
    lv = pairs["level"].to_numpy()
    pos = np.searchsorted(levels, lv)
    pos_c = np.minimum(pos, len(levels) - 1)
    keep = np.asarray(levels)[pos_c] == lv
    sub = pairs.loc[keep] if not keep.all() else pairs
    pos = pos_c[keep]
    codes, keys = group_codes(sub, key)
    T, L = len(keys), len(levels)
    count = np.bincount(codes, minlength=T)
    slot = codes * L + pos
    filled = np.bincount(slot, minlength=T * L).reshape(T, L)
    if (filled > 1).any():
        raise ValueError(f"the pair table has more than one pair per trajectory level for key {key}")
    complete = count == L
    all_complete = bool(complete.all())
    mats = {}
    for q in ("correct", "RAS", "dS", "dC"):
        m = np.zeros(T * L, dtype=bool) if q == "correct" else np.full(T * L, np.nan)
        m[slot] = sub[q].to_numpy()
        mats[q] = m.reshape(T, L) if all_complete else m.reshape(T, L)[complete]
    first_row = np.zeros(T, dtype=np.int64)
    first_row[codes] = np.arange(len(codes))  # any pair of the trajectory: they share clean-side columns
    first_row = first_row if all_complete else first_row[complete]
    c0 = sub["correct_clean"].to_numpy()[first_row]
    corr = mats["correct"]
    out = keys if all_complete else keys.loc[complete].reset_index(drop=True)
    for extra in ("task", "category"):
        if extra in sub.columns and extra not in key:
            out[extra] = sub[extra].array.take(first_row)
    out["correct_clean"] = c0
    out["path"] = _paths(corr)
    out["klass"] = pd.Categorical.from_codes(classify_paths(c0, corr), categories=TRAJECTORY_CLASSES)
    out["RAS"] = mats["RAS"].mean(axis=1)
    out["dS_med"] = _median(mats["dS"])
    out["dC_med"] = _median(mats["dC"])
    out.attrs["n_incomplete"] = int((~complete).sum())
    out.attrs["levels"] = levels
    return out


def _median(m: np.ndarray) -> np.ndarray:
    """Row medians (the middle value for an odd number of levels, else ``np.median``)."""
    if m.shape[1] % 2:
        return np.partition(m, m.shape[1] // 2, axis=1)[:, m.shape[1] // 2].copy()
    return np.median(m, axis=1)


def _paths(corr: np.ndarray) -> pd.Categorical:
    """Correctness paths as a categorical of "0"/"1" strings (one bit per level)."""
    bits = corr.astype(np.int64) @ (1 << np.arange(corr.shape[1])[::-1])
    table = [format(v, f"0{corr.shape[1]}b") for v in range(1 << corr.shape[1])]
    return pd.Categorical.from_codes(bits, categories=table)


def trajectory_summary(traj: pd.DataFrame, unit: str | Sequence[str] = ("model",)) -> pd.DataFrame:
    """Trajectory composition and class-conditioned structure per unit (Figs. 6 and 12).

    One row per unit × class: ``n``; ``share`` of the unit's trajectories;
    ``source_share`` within its clean-side source (clean-correct or
    clean-wrong trajectories); ``RAS`` = class mean of trajectory-mean RAS;
    ``dS_med``, ``dC_med`` = class means of the trajectory medians. The unit's
    mean trajectory RAS (the ordering of Fig. 6's rows) is ``unit_RAS``.
    """
    unit = as_cols(unit, "unit")
    check_single_method(traj, unit, "unit")
    codes, keys = group_codes(traj, unit)
    G, C = len(keys), len(TRAJECTORY_CLASSES)
    k = codes_in(traj["klass"], TRAJECTORY_CLASSES, "klass")
    gk = codes * C + k
    n = gsum(gk, G * C).reshape(G, C)
    src = np.concatenate([np.repeat(n[:, :3].sum(1, keepdims=True), 3, 1),
                          np.repeat(n[:, 3:].sum(1, keepdims=True), 3, 1)], axis=1)
    out = keys.loc[keys.index.repeat(C)].reset_index(drop=True)
    out["klass"] = pd.Categorical(np.tile(TRAJECTORY_CLASSES, G), categories=TRAJECTORY_CLASSES)
    out["n"] = n.reshape(-1).astype(np.int64)
    out["share"] = safe_div(n, n.sum(1, keepdims=True)).reshape(-1)
    out["source_share"] = safe_div(n, src).reshape(-1)
    for q in ("RAS", "dS_med", "dC_med"):
        out[q] = safe_div(gsum(gk, G * C, traj[q].to_numpy()).reshape(G, C), n).reshape(-1)
    unit_ras = safe_div(gsum(codes, G, traj["RAS"].to_numpy()), gsum(codes, G))
    out["unit_RAS"] = np.repeat(unit_ras, C)
    return out
