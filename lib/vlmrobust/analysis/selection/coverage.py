"""What the split covers: sources, task families, L2 categories, and who decides eligibility (seed 000, §IV-D,
supplement II-A, Fig. 8).

* :func:`composition_groups` — the grouping of Fig. 3(b) / supplementary Fig. 8(b): the **L2 category** of a
  real benchmark item (the loaders store VLMEvalKit's ``l2-category`` as the item's ``category``; ``task`` is
  the coarser ``category`` column), the **task family** of a synthetic item (whose ``category`` is a 1:1
  relabelling of its family).
* :func:`silent_families` — the diagnostic before the selection: a selector whose mean G (inner mean of
  Eq. 3) is 0 on **every** item of a family excludes that whole family from A⁺, whatever the other selectors
  do, so it alone decides the family's eligibility.
* :func:`coverage_table` — per group, its items in the pool, in A⁺ and in the split, and where a group the
  split lacks was lost (at Eq. 3 or at the cut of Eq. 6).
* :func:`largest_share` — the largest group's share of a selection (the concentration the novelty term of
  Eqs. 4–5 is meant to limit).
* :func:`pooled_threshold` — the items a threshold on the pooled κ would keep at the size of A⁺ (the
  alternative Eq. 3 is stricter than, §IV-D).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .responsiveness import eligible, selector_gini
from .selection import top_k

__all__ = ["SYNTH_SOURCE", "composition_groups", "composition_level", "silent_families", "coverage_table",
           "largest_share", "pooled_threshold"]

#: The ``source`` of the synthetic benchmark's items (:func:`vlmrobust.synth.generate`).
SYNTH_SOURCE = "synth"


def composition_groups(items: pd.DataFrame) -> pd.Series:
    """The group of each item for Fig. 3(b) / 8(b): ``category`` (the L2 category) for real items, ``task``
    (the family) for synthetic ones (``source == "synth"``). Indexed like ``items``, named ``group``."""
    missing = [c for c in ("source", "task", "category") if c not in items.columns]
    if missing:
        raise ValueError(f"items lack column(s) {missing}")
    synthetic = items["source"].astype(str) == SYNTH_SOURCE
    return pd.Series(np.where(synthetic, items["task"], items["category"]), index=items.index, name="group",
                     dtype=object)


def composition_level(items: pd.DataFrame) -> str:
    """The name of the level :func:`composition_groups` reads: ``task families``, ``L2 categories`` or both."""
    synthetic = items["source"].astype(str) == SYNTH_SOURCE
    return "task families" if synthetic.all() else "L2 categories" if not synthetic.any() else \
        "L2 categories (real) / task families (synthetic)"


def silent_families(G: np.ndarray, groups: Sequence[str], selectors: Sequence[str]) -> pd.DataFrame:
    """Selectors that never change their answer on a whole family (mean G = 0 on all its items).

    One row per (selector, family) pair that is silent, columns ``selector``, ``family``, ``items`` (the
    family's items in the pool), ``eligible`` (its items in A⁺: 0, since Eq. 3 needs every selector) and
    ``eligible_without`` (its items that would be eligible with this selector removed): the family's
    eligibility is this selector's decision alone. Empty (with those columns) when no selector is silent.
    """
    G = np.asarray(G, dtype=np.float64)
    g = np.asarray(groups, dtype=object)
    if G.ndim != 3 or len(g) != G.shape[0] or len(selectors) != G.shape[1]:
        raise ValueError(f"G (items, selectors, corruptions) {G.shape}, {len(g)} groups and {len(selectors)} "
                         "selector names must agree")
    resp = selector_gini(G) > 0
    el = eligible(G) if G.shape[1] else np.zeros(len(g), dtype=bool)
    rows = []
    for s, name in enumerate(selectors):
        without = eligible(np.delete(G, s, axis=1)) if G.shape[1] > 1 else np.ones(len(g), dtype=bool)
        for fam in sorted(set(g.tolist()), key=str):
            m = g == fam
            if not resp[m, s].any():
                rows.append({"selector": name, "family": fam, "items": int(m.sum()), "eligible": int(el[m].sum()),
                             "eligible_without": int(without[m].sum())})
    return pd.DataFrame(rows, columns=["selector", "family", "items", "eligible", "eligible_without"])


def coverage_table(groups: Sequence[str], eligible_mask: np.ndarray, selected: np.ndarray) -> pd.DataFrame:
    """Per group (sorted): ``pool``, ``eligible`` and ``split`` item counts and ``lost_at``: ``"Eq. 3"`` when
    no item of the group is eligible, ``"Eq. 6"`` when some are but none passes the cut, ``""`` when the split
    holds the group."""
    g = pd.Series(np.asarray(groups, dtype=object))
    el, sel = np.asarray(eligible_mask, dtype=bool), np.asarray(selected, dtype=bool)
    if not (len(g) == len(el) == len(sel)):
        raise ValueError("groups, eligible and selected must have one entry per item")
    t = pd.DataFrame({"pool": g.value_counts(), "eligible": g[el].value_counts(),
                      "split": g[sel].value_counts()}).fillna(0).astype(int)
    t = t.loc[sorted(t.index, key=str)]
    t["lost_at"] = np.where(t.split > 0, "", np.where(t.eligible > 0, "Eq. 6", "Eq. 3"))
    return t.rename_axis("group")


def largest_share(groups: Sequence[str], mask: np.ndarray, weights: np.ndarray | None = None) -> tuple[str, float]:
    """The largest group of the items in ``mask`` and its share (weighted by ``weights`` when given; ties:
    the first group in sorted order); ``("", nan)`` for an empty selection."""
    g = np.asarray(groups, dtype=object).astype(str)
    m = np.asarray(mask, dtype=bool)
    w = np.ones(len(g)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(w[m].sum())
    if not m.any() or total <= 0:
        return "", float("nan")
    labels = np.unique(g[m])
    sums = np.array([w[m & (g == lab)].sum() for lab in labels])
    j = int(np.argmax(sums))
    return str(labels[j]), float(sums[j] / total)


def pooled_threshold(kappa: np.ndarray, n: int, item_ids: Sequence[str]) -> np.ndarray:
    """The top-``n`` items by pooled κ (Eq. 2; ties: lowest item id): the set a pooled-κ threshold of the size
    of A⁺ keeps, to compare with Eq. 3."""
    k = np.asarray(kappa, dtype=np.float64)
    return top_k(k, int(n), k, item_ids)
