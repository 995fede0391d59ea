"""The selection score, the split and its stability (seed 000, §IV-D Eq. 6, §IV-E Table I).

.. math::

    e(q) = \\kappa(q) + \\nu(q), \\qquad
    \\mathcal Q = \\{q \\in \\mathcal A^+ : e(q) > \\mathbb E_{q' \\in \\mathcal A^+}[e(q')]\\}  \\qquad (6)

Choices the paper leaves open, fixed here:

* The cut is **strict**: an item whose ``e`` equals the mean is left out.
  Scores are compared at :data:`~vlmrobust.analysis.selection.novelty.TIE_DECIMALS`
  decimals, so float noise never decides.
* Table I's variants are **size-matched**: each keeps the top-|S| items by its
  own ``e`` (the paper's Jaccard and retention figures imply |S′| = |S| = 849
  in every row). Ties at the cut go to the highest κ, then the lowest item_id.
  *Fixed* variants keep A⁺ and the traversal's ν and recompute κ (and ``e``)
  without the removed selector; *recomputed* variants also recompute A⁺ and ν.
* Semantic-only keeps the top-|S| of A⁺ by ν, inconsistency-only the top-|S|
  by κ; both are compared by their Jaccard index.

The split's tables: :func:`category_shift` (Figs. 3(b) / 8, the share of each
task family or source in pool and split) and :func:`selection_table` (the
per-question scores notebook 01 writes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .novelty import TIE_DECIMALS, greedy_novelty
from .responsiveness import eligible, kappa, selector_gini

__all__ = ["Selection", "select", "split_mask", "top_k", "jaccard", "leave_one_out", "table_i", "criteria_overlap",
           "category_shift", "selection_table", "TABLE_I_COLUMNS"]

TABLE_I_COLUMNS = ("removed", "fixed_ji", "fixed_kept", "fixed_retention", "recomputed_eligible",
                   "recomputed_ji", "recomputed_kept", "recomputed_retention", "split_size")


@dataclass(frozen=True)
class Selection:
    """One run of the selection over a pool: per-item scores and the split (arrays in pool order).

    ``nu``, ``e`` and ``pick`` (the greedy step, 0-based) are NaN / -1 outside A⁺.
    """

    item_ids: np.ndarray
    kappa: np.ndarray
    eligible: np.ndarray
    nu: np.ndarray
    e: np.ndarray
    pick: np.ndarray
    selected: np.ndarray
    threshold: float

    @property
    def size(self) -> int:
        return int(self.selected.sum())

    def table(self) -> pd.DataFrame:
        """One row per pool item: ``item_id, kappa, eligible, nu, e, pick, selected``."""
        return pd.DataFrame({"item_id": self.item_ids, "kappa": self.kappa, "eligible": self.eligible,
                             "nu": self.nu, "e": self.e, "pick": self.pick, "selected": self.selected})


def _round(x: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(x, dtype=np.float64), TIE_DECIMALS)


def split_mask(e: np.ndarray, eligible_mask: np.ndarray) -> tuple[np.ndarray, float]:
    """Eq. 6: the eligible items whose ``e`` is **strictly** above the mean ``e`` over A⁺; and that mean."""
    e = np.asarray(e, dtype=np.float64)
    el = np.asarray(eligible_mask, dtype=bool)
    if e.shape != el.shape:
        raise ValueError(f"e and eligible must have one entry per item, got {e.shape} and {el.shape}")
    if not el.any():
        return np.zeros_like(el), float("nan")
    if not np.isfinite(e[el]).all():
        raise ValueError("e must be finite on every eligible item")
    mean = float(e[el].mean())
    return el & (_round(np.where(el, e, -np.inf)) > _round(mean)), mean


def top_k(score: np.ndarray, k: int, kappa_: np.ndarray, item_ids: Sequence[str],
          mask: np.ndarray | None = None) -> np.ndarray:
    """The ``k`` items of ``mask`` with the highest ``score`` (ties: highest κ, then lowest item_id).

    Returns a boolean mask; fewer than ``k`` items are kept when ``mask`` holds fewer.
    """
    score = np.asarray(score, dtype=np.float64)
    mask = np.ones(score.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    ids = np.asarray([str(i) for i in item_ids])
    if not (score.shape == mask.shape == ids.shape == np.shape(kappa_)):
        raise ValueError("score, kappa, item_ids and mask must have one entry per item")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    idx = np.flatnonzero(mask)
    order = np.lexsort((ids[idx], -_round(np.asarray(kappa_)[idx]), -_round(score[idx])))
    out = np.zeros(score.shape, dtype=bool)
    out[idx[order[:k]]] = True
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """|a ∩ b| / |a ∪ b| of two boolean masks (NaN when both are empty)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    union = int((a | b).sum())
    return float((a & b).sum() / union) if union else float("nan")


def select(G: np.ndarray, image_emb: np.ndarray, text_emb: np.ndarray, item_ids: Sequence[str], *,
           progress: bool = False) -> Selection:
    """Eqs. 2–6 on one pool: κ, A⁺, the greedy ν over A⁺, ``e`` and the split.

    ``G``: ``(items, selectors, corruptions)`` from :func:`~vlmrobust.analysis.selection.gini`;
    ``image_emb``, ``text_emb``: one row per pool item (only A⁺'s rows are used).
    """
    G = np.asarray(G, dtype=np.float64)
    ids = np.asarray([str(i) for i in item_ids], dtype=object)
    if G.ndim != 3 or len(ids) != G.shape[0] or len(image_emb) != G.shape[0] or len(text_emb) != G.shape[0]:
        raise ValueError(f"G (items, selectors, corruptions) {G.shape}, item_ids {len(ids)}, image_emb "
                         f"{len(image_emb)} and text_emb {len(text_emb)} must agree on the items")
    k = kappa(G)
    el = eligible(G)
    nu, pick = _novelty(image_emb, text_emb, k, ids, el, progress)
    e = k + nu
    selected, mean = split_mask(e, el)
    return Selection(ids, k, el, nu, e, pick, selected, mean)


def _novelty(image_emb, text_emb, k, ids, el, progress):
    idx = np.flatnonzero(el)
    nu = np.full(len(ids), np.nan)
    pick = np.full(len(ids), -1, dtype=np.int64)
    if len(idx):
        nov = greedy_novelty(np.asarray(image_emb)[idx], np.asarray(text_emb)[idx], k[idx], ids[idx],
                             progress=progress)
        nu[idx] = nov.nu
        pick[idx[nov.order]] = np.arange(len(idx))
    return nu, pick


def leave_one_out(G: np.ndarray, image_emb: np.ndarray, text_emb: np.ndarray, selection: Selection,
                  selectors: Sequence[str], *, progress: bool = False) -> dict[str, dict[str, np.ndarray]]:
    """Table I's variants as masks: for each removed selector, ``fixed`` and ``recomputed`` (the size-matched
    top-|S| selections, rules of the module docstring) and ``eligible`` (the recomputed A⁺).

    Empty with fewer than two selectors. :func:`table_i` summarises these masks.
    """
    G = np.asarray(G, dtype=np.float64)
    if len(selectors) != G.shape[1]:
        raise ValueError(f"{len(selectors)} selector names for {G.shape[1]} selectors in G")
    size, ids = selection.size, selection.item_ids
    out = {}
    for s, name in enumerate(selectors if G.shape[1] > 1 else []):
        Gs = np.delete(G, s, axis=1)
        k = kappa(Gs)
        fixed = top_k(k + selection.nu, size, k, ids, selection.eligible)
        el = eligible(Gs)
        nu, _ = _novelty(image_emb, text_emb, k, ids, el, progress)
        out[name] = {"fixed": fixed, "recomputed": top_k(k + nu, size, k, ids, el), "eligible": el}
    return out


def table_i(G: np.ndarray, image_emb: np.ndarray, text_emb: np.ndarray, selection: Selection,
            selectors: Sequence[str], *, progress: bool = False,
            variants: dict[str, dict[str, np.ndarray]] | None = None) -> pd.DataFrame:
    """Table I: leave-one-selector-out, with A⁺ fixed and with eligibility recomputed, size-matched.

    One row per removed selector (columns :data:`TABLE_I_COLUMNS`): the Jaccard
    index against the split, the items of the split kept, and the retention
    ``kept / |S|``, for the fixed and the recomputed variant, and the size of the
    recomputed A⁺. Empty with fewer than two selectors. ``variants``: the masks of
    :func:`leave_one_out` when already computed (else computed here).
    """
    if variants is None:
        variants = leave_one_out(G, image_emb, text_emb, selection, selectors, progress=progress)
    S, size = selection.selected, selection.size
    rows = []
    for name, v in variants.items():
        fixed, recomputed, el = v["fixed"], v["recomputed"], v["eligible"]
        rows.append({"removed": name, "fixed_ji": jaccard(fixed, S), "fixed_kept": int((fixed & S).sum()),
                     "fixed_retention": (fixed & S).sum() / size if size else np.nan,
                     "recomputed_eligible": int(el.sum()), "recomputed_ji": jaccard(recomputed, S),
                     "recomputed_kept": int((recomputed & S).sum()),
                     "recomputed_retention": (recomputed & S).sum() / size if size else np.nan,
                     "split_size": size})
    return pd.DataFrame(rows, columns=list(TABLE_I_COLUMNS))


def criteria_overlap(selection: Selection) -> dict:
    """Semantic-only (top-|S| of A⁺ by ν) against inconsistency-only (top-|S| by κ): sizes and Jaccard index."""
    size, el, ids, k = selection.size, selection.eligible, selection.item_ids, selection.kappa
    semantic = top_k(np.where(el, selection.nu, -np.inf), size, k, ids, el)
    inconsistency = top_k(k, size, k, ids, el)
    return {"size": size, "semantic_kept": int((semantic & selection.selected).sum()),
            "inconsistency_kept": int((inconsistency & selection.selected).sum()),
            "both": int((semantic & inconsistency).sum()), "ji": jaccard(semantic, inconsistency),
            "semantic": semantic, "inconsistency": inconsistency}


def category_shift(groups: pd.Series, selected: np.ndarray, *, sort: bool = True) -> pd.DataFrame:
    """Figs. 3(b) / 8: each category's share of the pool and of the split, and the shift ``split - pool``.

    ``groups``: one category per pool item (e.g. ``items.task`` or ``items.source``); ``selected``: the split's
    mask. One row per category (indexed by it), columns ``pool``, ``split`` (0 for a category the split lacks)
    and ``shift``; sorted by decreasing shift unless ``sort=False``.
    """
    comp = pd.DataFrame({"pool": groups.value_counts(normalize=True),
                         "split": groups[selected].value_counts(normalize=True)}).fillna(0.0)
    comp["shift"] = comp.split - comp.pool
    return comp.sort_values("shift", ascending=False) if sort else comp


def selection_table(selection: Selection, items: pd.DataFrame, G: np.ndarray, selectors: Sequence[str],
                    eval_gini: np.ndarray | None = None) -> pd.DataFrame:
    """The per-question scores of a pool: :meth:`Selection.table` with the items' ``task`` and ``source``, each
    selector's mean G (``G_<selector>``, :func:`~vlmrobust.analysis.selection.selector_gini`) and, when given,
    the evaluated models' Gini (``gini_evaluated``)."""
    table = selection.table().assign(task=items.task.to_numpy(), source=items.source.to_numpy())
    for j, s in enumerate(selectors):
        table[f"G_{s}"] = selector_gini(G)[:, j]
    if eval_gini is not None:
        table["gini_evaluated"] = eval_gini
    return table
