"""A synthetic selection problem: answer paths and embeddings without any model (benchmarks, scaling).

The story is small and stated so a reader can judge it: each item has ``K``
options (2–5) and every selector a base answer. A share ``fragile`` of the
items is fragile with a strength ``f ~ U(0.2, 1)``: for each selector and
corruption, with probability ``f × responsiveness[s]``, the answer switches at
a random severity to another option (and, with probability 1/2, once more at
a later one). Every other path keeps its base answer, except for rare noise
switches (``noise`` per path). Embeddings are clustered (``clusters`` topics
around a shared direction, plus per-item noise and a few near-duplicates), the
shape real image and sentence embeddings have. Its numbers say nothing about
VLMs; they give the selection code realistic work. :func:`time_selection` times
the selection (Eq. 1 to Table I) on one such pool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...schema import MAX_OPTIONS
from .responsiveness import gini
from .selection import select, table_i

__all__ = ["SyntheticPool", "simulate_pool", "time_selection"]


@dataclass(frozen=True)
class SyntheticPool:
    """Answer paths ``pred`` ``(items, selectors, corruptions, levels)``, ``K``, embeddings and ids."""

    item_ids: np.ndarray
    K: np.ndarray
    pred: np.ndarray
    image_emb: np.ndarray
    text_emb: np.ndarray


def _embeddings(rng: np.random.Generator, n: int, dim: int, clusters: int, spread: float) -> np.ndarray:
    shared = rng.standard_normal(dim)
    centres = rng.standard_normal((clusters, dim)) * 0.8 + shared
    which = rng.integers(0, clusters, n)
    x = centres[which] + rng.standard_normal((n, dim)) * spread
    dup = rng.random(n) < 0.01  # near-duplicates of an earlier item
    src = rng.integers(0, np.maximum(np.arange(n), 1))
    x[dup] = x[src[dup]] + rng.standard_normal((int(dup.sum()), dim)) * 0.01
    return x.astype(np.float32)


def simulate_pool(n_items: int, rng: np.random.Generator, *, n_selectors: int = 3, n_corruptions: int = 19,
                  n_levels: int = 5, dim: int = 384, fragile: float = 0.04,
                  responsiveness: tuple[float, ...] = (0.9, 0.7, 0.35), noise: float = 0.002,
                  clusters: int = 60) -> SyntheticPool:
    """A synthetic pool of ``n_items`` (story in the module docstring), drawn from ``rng``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (vlmrobust.repro.rng(...)), got {type(rng).__name__}")
    if n_items < 1 or n_selectors < 1 or n_corruptions < 1 or n_levels < 2 or dim < 1:
        raise ValueError("need n_items, n_selectors, n_corruptions, dim >= 1 and n_levels >= 2")
    if len(responsiveness) < n_selectors:
        responsiveness = tuple(responsiveness) + (responsiveness[-1],) * (n_selectors - len(responsiveness))
    K = rng.choice(np.arange(2, MAX_OPTIONS + 1), size=n_items, p=[0.2, 0.1, 0.6, 0.1])
    base = (rng.random((n_items, n_selectors)) * K[:, None]).astype(np.int64)
    shape = (n_items, n_selectors, n_corruptions)
    strength = np.where(rng.random(n_items) < fragile, rng.uniform(0.2, 1.0, n_items), 0.0)
    p_switch = strength[:, None, None] * np.asarray(responsiveness[:n_selectors])[None, :, None]
    switch = (rng.random(shape) < p_switch) | (rng.random(shape) < noise)
    start = rng.integers(1, n_levels, shape)  # first severity index with the new answer
    second = np.where(rng.random(shape) < 0.5, rng.integers(1, n_levels + 1, shape), n_levels)
    second = np.maximum(second, start)
    Kb = K[:, None, None]
    new1 = (base[:, :, None] + 1 + (rng.random(shape) * (Kb - 1)).astype(np.int64)) % Kb
    new2 = (base[:, :, None] + 1 + (rng.random(shape) * (Kb - 1)).astype(np.int64)) % Kb
    lv = np.arange(n_levels)[None, None, None, :]
    pred = np.where(lv >= second[..., None], new2[..., None], new1[..., None])
    pred = np.where(switch[..., None] & (lv >= start[..., None]), pred, base[:, :, None, None])
    ids = np.char.add("sim-", np.char.zfill(np.arange(n_items).astype(str), len(str(n_items - 1))))
    return SyntheticPool(ids.astype(object), K.astype(np.int64), pred.astype(np.int8),
                         _embeddings(rng, n_items, dim, clusters, 1.2), _embeddings(rng, n_items, dim, clusters, 0.9))


def time_selection(n_items: int, rng: np.random.Generator) -> dict:
    """Time the selection alone on a :func:`simulate_pool` of ``n_items`` (3 selectors): G (Eq. 1), κ, A⁺, ν and
    the split (Eqs. 2–6), then Table I, all without any model; the pool's drawing is not timed.

    Returns ``{"pool", "eligible", "split", "seconds"}``.
    """
    pool = simulate_pool(n_items, rng)
    t0 = time.perf_counter()
    G = gini(pool.pred, pool.K)
    sel = select(G, pool.image_emb, pool.text_emb, pool.item_ids)
    table_i(G, pool.image_emb, pool.text_emb, sel, ["a", "b", "c"])
    return {"pool": n_items, "eligible": int(sel.eligible.sum()), "split": sel.size,
            "seconds": time.perf_counter() - t0}
