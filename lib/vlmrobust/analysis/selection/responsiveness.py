"""Corruption responsiveness: answer paths, normalised Gini impurity, κ and eligibility (seed 000, §IV-C/D).

For a question ``q``, selector ``f_s`` and corruption ``d``, the **answer path**
is the selector's top-1 answer at the corrupted severities ``ℓ = 1..5`` (the clean
answer is not part of it). With ``π_k`` the share of the path's answers that
are option ``k``,

.. math::

    G^{(d)}_{f_s}(q) = \\frac{K}{K-1}\\Bigl[1 - \\sum_{k=1}^{K}
    \\bigl(\\pi^{(d)}_{k,f_s}(q)\\bigr)^2\\Bigr]  \\qquad (1)

    \\kappa(q) = \\frac{1}{|\\mathcal D|\\,|\\mathcal F|} \\sum_{d}\\sum_{f_s} G^{(d)}_{f_s}(q)  \\qquad (2)

    \\mathcal A^{+} = \\{q : \\tfrac{1}{|\\mathcal D|}\\textstyle\\sum_d G^{(d)}_{f_s}(q) > 0
    \\ \\forall f_s\\}  \\qquad (3)

Choices the paper leaves open, fixed here:

* ``K`` is the question's **own** number of options (a yes/no question has
  ``K = 2``); ``K = 1`` is an error. With five answers and ``K = 4`` the largest
  value is 0.96 (a path can hold at most four distinct answers, 2-1-1-1).
* Only the corrupted severities enter a path (level 0 is excluded), and every
  path must be complete: a missing ``(item, selector, corruption, level)``
  prediction is an error, never silently dropped.
* A selector contributes one scoring method; a predictions table with several
  methods for one model is an error (choose one first).
* Eq. 3 needs no tolerance: G is 0 exactly for a path with one answer and at
  least 0.32 otherwise (five answers), so a selector's mean G is positive
  exactly when one of its paths holds two different answers.

Arrays are ``(items, selectors, corruptions, levels)``; every function here is
vectorised over all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...schema import CLEAN, MAX_OPTIONS

__all__ = ["AnswerPaths", "answer_paths", "gini", "kappa", "eligible", "selector_gini", "responsive_shares",
           "path_counts"]


@dataclass(frozen=True)
class AnswerPaths:
    """Top-1 answers of selectors over corruptions and severities, one array per item.

    ``pred`` and ``correct``: ``(items, selectors, corruptions, levels)``;
    ``clean_pred``, ``clean_correct``: ``(items, selectors)`` (``-1``/``False``
    where the table holds no clean row); ``K`` and ``answer_idx``: ``(items,)``.
    """

    item_ids: np.ndarray
    models: tuple[str, ...]
    perturbations: tuple[str, ...]
    levels: tuple[int, ...]
    pred: np.ndarray
    correct: np.ndarray
    K: np.ndarray
    answer_idx: np.ndarray
    clean_pred: np.ndarray
    clean_correct: np.ndarray

    def subset(self, models: Sequence[str]) -> AnswerPaths:
        """The same paths for a subset of the selectors (in the order given)."""
        idx = [self.models.index(m) for m in models]
        return AnswerPaths(self.item_ids, tuple(models), self.perturbations, self.levels, self.pred[:, idx],
                           self.correct[:, idx], self.K, self.answer_idx, self.clean_pred[:, idx],
                           self.clean_correct[:, idx])


def answer_paths(pred: pd.DataFrame, *, models: Sequence[str] | None = None,
                 perturbations: Sequence[str] | None = None, levels: Sequence[int] = (1, 2, 3, 4, 5),
                 item_ids: Sequence[str] | None = None) -> AnswerPaths:
    """The answer paths of a predictions table (columns of :data:`vlmrobust.schema.PRED_COLUMNS`).

    ``models``, ``perturbations`` and ``item_ids`` default to those of the table
    (first-seen order for models and perturbations, sorted ids); ``levels`` are
    the corrupted severities of a path. Raises ``ValueError`` naming the model
    that has several methods, an item whose ``K`` varies, or the first missing
    ``(model, item, perturbation, level)`` prediction.
    """
    need = {"model", "item_id", "perturbation", "level", "method", "K", "answer_idx", "pred_idx"}
    missing = sorted(need - set(pred.columns))
    if missing:
        raise ValueError(f"predictions table lacks column(s) {missing}")
    levels = tuple(int(lv) for lv in levels)
    if not levels or min(levels) < 1 or len(set(levels)) != len(levels):
        raise ValueError(f"levels must be distinct corrupted severities >= 1, got {list(levels)}")
    models = list(pd.unique(pred["model"])) if models is None else list(models)
    methods = pred.groupby("model", sort=False)["method"].unique()
    for m in models:
        if m not in methods.index:
            raise ValueError(f"model {m!r} has no predictions; the table holds {list(methods.index)}")
        if len(methods[m]) != 1:
            raise ValueError(f"model {m!r} has predictions from several methods {sorted(methods[m])}; "
                             "keep one method per selector")
    corrupted = pred[(pred["perturbation"] != CLEAN) & (pred["level"] > 0)]
    if perturbations is None:
        perturbations = list(pd.unique(corrupted["perturbation"]))
    perturbations = list(perturbations)
    if not perturbations:
        raise ValueError("the predictions table holds no corrupted condition")
    ids = np.asarray(sorted(pd.unique(pred["item_id"])) if item_ids is None else list(item_ids), dtype=object)
    if len(set(ids)) != len(ids):
        raise ValueError("item_ids repeat")
    sub = corrupted[corrupted["model"].isin(models) & corrupted["perturbation"].isin(perturbations)
                    & corrupted["level"].isin(levels) & corrupted["item_id"].isin(ids)]
    shape = (len(ids), len(models), len(perturbations), len(levels))
    codes = [pd.Categorical(sub["item_id"], categories=ids).codes,
             pd.Categorical(sub["model"], categories=models).codes,
             pd.Categorical(sub["perturbation"], categories=perturbations).codes,
             pd.Categorical(sub["level"], categories=list(levels)).codes]
    flat = np.ravel_multi_index(codes, shape)
    filled = np.bincount(flat, minlength=int(np.prod(shape)))
    if (filled > 1).any():
        i, s, d, lv = np.unravel_index(int(np.argmax(filled > 1)), shape)
        raise ValueError(f"repeated prediction for model {models[s]!r}, item {ids[i]!r}, {perturbations[d]!r} "
                         f"level {levels[lv]}")
    if (filled == 0).any():
        i, s, d, lv = np.unravel_index(int(np.argmax(filled == 0)), shape)
        raise ValueError(f"{int((filled == 0).sum())} prediction(s) missing, e.g. model {models[s]!r}, item "
                         f"{ids[i]!r}, {perturbations[d]!r} level {levels[lv]}: every path needs all levels "
                         f"{list(levels)}")
    P = np.empty(int(np.prod(shape)), dtype=np.int8)
    P[flat] = sub["pred_idx"].to_numpy()
    ok = np.empty(int(np.prod(shape)), dtype=bool)
    ok[flat] = (sub["pred_idx"].to_numpy() == sub["answer_idx"].to_numpy())
    per_item = pred[pred["item_id"].isin(ids)].groupby("item_id")[["K", "answer_idx"]].agg(["min", "max"])
    bad = per_item[(per_item[("K", "min")] != per_item[("K", "max")])
                   | (per_item[("answer_idx", "min")] != per_item[("answer_idx", "max")])]
    if len(bad):
        raise ValueError(f"item {bad.index[0]!r} has different K or answer_idx in different rows")
    K = per_item.loc[ids, ("K", "min")].to_numpy(dtype=np.int64)
    ans = per_item.loc[ids, ("answer_idx", "min")].to_numpy(dtype=np.int64)
    clean = pred[(pred["perturbation"] == CLEAN) & pred["model"].isin(models) & pred["item_id"].isin(ids)]
    cp = np.full((len(ids), len(models)), -1, dtype=np.int8)
    ci = pd.Categorical(clean["item_id"], categories=ids).codes
    cs = pd.Categorical(clean["model"], categories=models).codes
    cp[ci, cs] = clean["pred_idx"].to_numpy()
    P = P.reshape(shape)
    return AnswerPaths(ids, tuple(models), tuple(perturbations), levels, P, ok.reshape(shape), K, ans, cp,
                       cp == ans[:, None])


def path_counts(pred: np.ndarray, K: np.ndarray) -> np.ndarray:
    """``Σ_k c_k²``: the sum of squared option counts of each path (last axis), as integers.

    ``pred``: ``(items, ..., L)`` option indices; ``K``: ``(items,)``. Raises
    ``ValueError`` for ``K < 2``, ``K`` above :data:`~vlmrobust.schema.MAX_OPTIONS`,
    or an index outside ``[0, K)``.
    """
    pred = np.asarray(pred)
    K = np.asarray(K)
    if pred.ndim < 2 or K.shape != pred.shape[:1]:
        raise ValueError(f"pred must be (items, ..., levels) and K (items,), got {pred.shape} and {K.shape}")
    if not np.issubdtype(K.dtype, np.integer) or not np.issubdtype(pred.dtype, np.integer):
        raise TypeError("pred and K must hold integers")
    if K.size and (K.min() < 2 or K.max() > MAX_OPTIONS):
        raise ValueError(f"K must lie in [2, {MAX_OPTIONS}] (K = 1 has no normalised Gini), got {K.min()}..{K.max()}")
    Kb = K.reshape(K.shape + (1,) * (pred.ndim - 1))
    if pred.size and ((pred < 0).any() or (pred >= Kb).any()):
        bad = np.argwhere((pred < 0) | (pred >= Kb))[0]
        raise ValueError(f"option index {int(pred[tuple(bad)])} at {tuple(int(b) for b in bad)} is outside "
                         f"[0, K = {int(K[bad[0]])})")
    # Σ_k c_k² counts the ordered pairs of equal answers: L (each with itself) + 2 per equal pair i < j
    L = pred.shape[-1]
    out = np.full(pred.shape[:-1], L, dtype=np.int64)
    for i in range(L):
        for j in range(i + 1, L):
            out += 2 * (pred[..., i] == pred[..., j])
    return out


def gini(pred: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Eq. 1: normalised Gini impurity of each answer path (last axis), with the item's own ``K``.

    ``G = K/(K-1) · (1 - Σ_k π_k²)`` with ``π_k = c_k / L`` over the ``L``
    answers of the path. 0 when every answer is the same; 1 when the answers are
    spread evenly over all K options (reachable only when ``K`` divides ``L``).
    """
    pred = np.asarray(pred)
    ss = path_counts(pred, K)
    L = pred.shape[-1]
    Kf = np.asarray(K, dtype=np.float64).reshape((-1,) + (1,) * (ss.ndim - 1))
    return Kf / (Kf - 1.0) * (1.0 - ss / float(L * L))


def selector_gini(G: np.ndarray) -> np.ndarray:
    """Each selector's mean G over the corruptions, ``(items, selectors)`` (the inner mean of Eq. 3)."""
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 3:
        raise ValueError(f"G must be (items, selectors, corruptions), got shape {G.shape}")
    return G.mean(axis=2)


def kappa(G: np.ndarray) -> np.ndarray:
    """Eq. 2: κ(q), the mean of G over the corruptions and the selectors; ``G`` is
    ``(items, selectors, corruptions)``."""
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 3:
        raise ValueError(f"G must be (items, selectors, corruptions), got shape {G.shape}")
    return G.mean(axis=(1, 2))


def eligible(G: np.ndarray) -> np.ndarray:
    """Eq. 3: the items on which **every** selector has a positive mean G over the corruptions.

    ``G``: ``(items, selectors, corruptions)``, non-negative. A selector's mean is
    positive exactly when one of its paths holds two different answers.
    """
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 3 or G.shape[1] < 1:
        raise ValueError(f"G must be (items, selectors >= 1, corruptions), got shape {G.shape}")
    if G.size and G.min() < 0:
        raise ValueError(f"G must be non-negative (Eq. 1), got a minimum of {G.min()}")
    return (G.mean(axis=2) > 0).all(axis=1)


def responsive_shares(G: np.ndarray, models: Sequence[str]) -> pd.DataFrame:
    """Per selector: the share of items it responds to and the items that only it excludes from A⁺.

    Columns ``selector``, ``responsive`` (items with a positive mean G),
    ``share``, ``only_silent`` (items every other selector responds to while
    this one does not: Eq. 3 excludes them because of this selector alone) and
    ``only_silent_share``. A blind selector has a small ``share`` and a large
    ``only_silent``: it decides eligibility.
    """
    G = np.asarray(G, dtype=np.float64)
    resp = (G > 0).any(axis=2)
    n_items, n_sel = resp.shape
    if len(models) != n_sel:
        raise ValueError(f"{len(models)} selector names for {n_sel} selectors")
    others = resp.sum(axis=1, keepdims=True) - resp  # how many other selectors respond
    only = (~resp) & (others == n_sel - 1)
    return pd.DataFrame({
        "selector": list(models), "responsive": resp.sum(axis=0), "share": resp.mean(axis=0),
        "only_silent": only.sum(axis=0), "only_silent_share": only.mean(axis=0),
    })
