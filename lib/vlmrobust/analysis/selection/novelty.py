"""Greedy semantic novelty over the eligible pool (seed 000, §IV-D, Eqs. 4–5).

With image and text embeddings ``v^I_q``, ``v^T_q`` (each L2-normalised) and
the centroids ``μ_{n-1}`` of the items already picked,

.. math::

    \\nu_n(q) = 1 - \\frac{\\cos(v^I_q, \\mu^I_{n-1}) + \\cos(v^T_q, \\mu^T_{n-1})}{2}  \\qquad (4)

    q^\\star_n = \\arg\\max_{q \\in \\mathcal A^+ \\setminus \\mathcal A^\\star_{n-1}} \\nu_n(q)  \\qquad (5)

and every eligible item's ν is its novelty at the step it was picked; the
traversal runs over all of A⁺.

Choices the paper leaves open, fixed here:

* Both similarities are 0 at the first step, so every item starts at ν = 1.
  That tie, and every later one, goes to the **highest κ**, then the **lowest
  item_id** (string order). Values are compared at :data:`TIE_DECIMALS` decimals,
  so floating-point noise never decides a pick.
* A centroid is the plain mean of the picked (normalised) embeddings; a
  centroid of length 0 has cosine 0 with everything.

The centroid is a running sum ``S``: ``cos(v, μ) = v·S / |S|``, and the dots
``v·S`` move by ``v·v_pick`` per step, so a step costs O(N·d) at most. Most
steps cost far less: exact dots are kept only for a few hundred best
candidates, and a bound proves that none of the other items can win or tie
(a unit vector's cosine with the centroid moves by at most the distance the
centroid's unit direction has moved since their scores were last computed).
When the bound cannot prove it, a full pass rescores every remaining item (in
float32, with its rounding error bounded) and picks new candidates. The picks
are those of the plain definition (``bench/selection.py`` checks them against a
per-item loop; the tests against a direct implementation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TIE_DECIMALS", "Novelty", "normalise", "preference", "greedy_novelty"]

#: Scores (ν, κ, e) are compared at this many decimals: closer values tie.
TIE_DECIMALS = 9
_MARGIN = 1e-8  # in units of the summed cosines (2 × the ν scale), above the tie resolution
_EPS = 1e-12


@dataclass(frozen=True)
class Novelty:
    """The greedy traversal: ``nu[i]`` is item ``i``'s novelty when picked, ``order`` the pick order."""

    nu: np.ndarray
    order: np.ndarray
    full_passes: int


def normalise(x: np.ndarray, name: str = "embeddings") -> np.ndarray:
    """Rows of ``x`` scaled to unit length (float64); a zero or non-finite row raises ``ValueError`` naming it."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D array (items, dimensions), got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1)
    bad = ~np.isfinite(norms) | (norms <= _EPS)
    if bad.any():
        raise ValueError(f"{name}: row {int(np.argmax(bad))} has length {norms[bad][0]!r}; rows must be finite "
                         "and non-zero")
    return x / norms[:, None]


def preference(kappa: np.ndarray, item_ids: Sequence[str]) -> np.ndarray:
    """Tie-break rank of each item: 0 for the highest κ (at :data:`TIE_DECIMALS`), then the lowest item_id."""
    k = np.round(np.asarray(kappa, dtype=np.float64), TIE_DECIMALS)
    ids = np.asarray([str(i) for i in item_ids])
    if k.shape != ids.shape or k.ndim != 1:
        raise ValueError(f"kappa and item_ids must be 1-D of one length, got {k.shape} and {ids.shape}")
    if len(set(ids.tolist())) != len(ids):
        raise ValueError("item_ids repeat")
    order = np.lexsort((ids, -k))
    rank = np.empty(len(k), dtype=np.int64)
    rank[order] = np.arange(len(k))
    return rank


def greedy_novelty(image_emb: np.ndarray, text_emb: np.ndarray, kappa: np.ndarray, item_ids: Sequence[str], *,
                   candidates: int | None = None, progress: bool | None = None) -> Novelty:
    """Eqs. 4–5 over all the items given (the eligible pool A⁺): each item's ν and the pick order.

    ``image_emb``, ``text_emb``: ``(N, d_I)``, ``(N, d_T)``, normalised here;
    ``kappa`` and ``item_ids`` break ties (module docstring). ``candidates``
    sets how many best items keep exact dots between full passes (a speed
    knob, default ``max(256, 5·√N)``; the result does not depend on it).
    """
    VI = normalise(image_emb, "image embeddings")
    VT = normalise(text_emb, "text embeddings")
    n = len(VI)
    if len(VT) != n or np.shape(kappa) != (n,):
        raise ValueError(f"image_emb, text_emb and kappa must have one row per item, got {len(VI)}, {len(VT)}, "
                         f"{np.shape(kappa)}")
    if candidates is None:
        candidates = max(256, int(5 * np.sqrt(n)))
    if not isinstance(candidates, int) or candidates < 1:
        raise ValueError(f"candidates must be a positive int, got {candidates!r}")
    rank = preference(kappa, item_ids)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # small products: threads only add waiting
        return _greedy(VI, VT, rank, candidates, progress)


def _greedy(VI: np.ndarray, VT: np.ndarray, rank: np.ndarray, candidates: int, progress: bool | None) -> Novelty:
    n = len(VI)
    VI32, VT32 = VI.astype(np.float32), VT.astype(np.float32)
    # bound on the float32 error of a summed cosine (two dots of unit vectors, inputs rounded to float32)
    eps32 = 2.0 * (VI.shape[1] + VT.shape[1] + 4) * float(np.finfo(np.float32).eps)
    nu = np.full(n, np.nan)
    order = np.empty(n, dtype=np.int64)
    if n == 0:
        return Novelty(nu, order, 0)
    first = int(np.argmin(rank))  # every ν is 1 at the first step: the tie rule decides
    nu[first], order[0] = 1.0, first
    alive = np.ones(n, dtype=bool)
    alive[first] = False
    SI, ST = VI[first].copy(), VT[first].copy()
    passes = 0
    C = np.empty(0, dtype=np.int64)
    live = np.empty(0, dtype=bool)
    CI = CT = DI = DT = np.empty(0)
    ref = None  # unit centroid directions and theta at the last full pass

    from ...progress import bar as progress_bar

    bar = progress_bar(total=n, desc="greedy novelty", progress=False if n < 5000 else progress,
                       unit="item")
    bar.update(1)
    for step in range(1, n):
        nI, nT = float(np.linalg.norm(SI)), float(np.linalg.norm(ST))
        wI = 1.0 / nI if nI > _EPS else 0.0
        wT = 1.0 / nT if nT > _EPS else 0.0
        while True:
            if ref is not None and live.any():
                a = np.where(live, DI * wI + DT * wT, np.inf)
                a_min = float(a.min())
                uIr, uTr, theta = ref
                if not np.isfinite(theta):
                    break
                if wI and wT:  # an outside item's summed cosine moved by at most |Δû_I| + |Δû_T|
                    drift = float(np.linalg.norm(SI * wI - uIr) + np.linalg.norm(ST * wT - uTr))
                    if a_min + _MARGIN < theta - drift:  # so none can reach the best or tie with it
                        break
            # full pass over every remaining item, in float32 (its error is bounded by eps32): keep the best
            # `candidates` and their near-ties, whose exact dots are then computed in float64
            passes += 1
            a_all = VI32 @ (SI * wI).astype(np.float32) + VT32 @ (ST * wT).astype(np.float32)
            a_all = np.where(alive, a_all.astype(np.float64), np.inf)
            n_rem = n - step
            if n_rem <= candidates or not (wI and wT):
                C, theta = np.flatnonzero(alive), np.inf
            else:
                kth = np.partition(a_all, candidates - 1)[candidates - 1]
                C = np.flatnonzero(a_all <= kth + 2 * (_MARGIN + eps32))
                outside = a_all.copy()
                outside[C] = np.inf
                theta = float(outside.min()) - eps32
            CI, CT = VI[C], VT[C]
            DI, DT = CI @ SI, CT @ ST
            live = np.ones(len(C), dtype=bool)
            ref = (SI * wI, ST * wT, theta)
        nu_c = 1.0 - a / 2.0
        r = np.where(live, np.round(nu_c, TIE_DECIMALS), -np.inf)
        tied = np.flatnonzero(r == r.max())
        j = int(tied[np.argmin(rank[C[tied]])]) if len(tied) > 1 else int(tied[0])
        pick = int(C[j])
        nu[pick], order[step] = float(nu_c[j]), pick
        live[j], alive[pick] = False, False
        SI += VI[pick]
        ST += VT[pick]
        DI += CI @ VI[pick]
        DT += CT @ VT[pick]
        if step % 1000 == 0:
            bar.update(1000)
    bar.update(n - bar.n)
    bar.close()
    return Novelty(nu, order, passes)
