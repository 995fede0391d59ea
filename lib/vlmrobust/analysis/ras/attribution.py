"""Source and state attribution of structural change (seed 000, §VI, Eqs. 12–16).

For a condition ``(d, ℓ)`` (by default one model × method × perturbation ×
severity cell) the pairs split by clean correctness into the sources
``Q_c``/``Q_w`` and by corrupted correctness into the states
``Q_cc, Q_cw, Q_wc, Q_ww`` (Eq. 12). For a per-pair diagnostic
``M ∈ {RAS, ΔS, ΔC}``:

* state means ``M̄_ab`` (Eq. 13),
* weights ``α_ab = |Q_ab| / |Q_a|`` and ``π_a = |Q_a| / |Q|`` (Eq. 14),
* source effects ``M̄_a = Σ_b α_ab M̄_ab`` (Eq. 15; ``R_c``, ``R_w`` for RAS),
* the aggregate ``M̄ = Σ_a π_a M̄_a`` (Eq. 16), which equals the plain mean of
  ``M`` over the cell's pairs.

Empty sets: an empty state has no mean (NaN) and weight 0, and contributes
nothing to Eq. 15; an empty source has NaN effect and weight 0 and contributes
nothing to Eq. 16.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.grouped import as_cols, check_single_method, codes_in, group_codes, gsum, safe_div
from .pairs import STATES

__all__ = ["CELL", "QUANTITIES", "state_effects"]

#: The default condition cell of Eqs. 13–16.
CELL = ("model", "method", "perturbation", "level")
#: Per-pair diagnostics attributed by :func:`state_effects`.
QUANTITIES = ("RAS", "dS", "dC")


def _weighted(alpha: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """``Σ alpha * mean`` over the last axis with empty parts (alpha = 0) contributing nothing."""
    return np.where(alpha > 0, alpha * np.nan_to_num(mean), 0.0).sum(axis=-1)


def state_effects(
    pairs: pd.DataFrame,
    by: str | Sequence[str] = CELL,
    quantities: Sequence[str] = QUANTITIES,
) -> pd.DataFrame:
    """Eqs. 13–16 of seed 000 for every group of ``by`` (default: one row per condition cell).

    Columns: the ``by`` keys; ``n`` (= |Q|); ``n_cc .. n_ww``; ``alpha_cc ..
    alpha_ww`` (Eq. 14, NaN when the source is empty); ``pi_c, pi_w`` (Eq. 14);
    for each quantity ``M``: ``M_cc .. M_ww`` (Eq. 13), ``M_c, M_w`` (Eq. 15)
    and ``M_all`` (Eq. 16). ``R_c``/``R_w`` repeat ``RAS_c``/``RAS_w``.
    """
    by = as_cols(by)
    check_single_method(pairs, by, "by")
    for q in quantities:
        if q not in pairs.columns:
            raise ValueError(f"quantity {q!r} is not a column of the pair table; choose from {list(QUANTITIES)}")
    codes, keys = group_codes(pairs, by)
    G = len(keys)
    st = codes_in(pairs["state"], STATES, "state")
    gs = codes * 4 + st
    n_ab = gsum(gs, 4 * G).reshape(G, 4)
    n_a = np.stack([n_ab[:, 0] + n_ab[:, 1], n_ab[:, 2] + n_ab[:, 3]], axis=1)  # (G, 2): c, w
    n = n_a.sum(axis=1)
    alpha = safe_div(n_ab.reshape(G, 2, 2), n_a[:, :, None])  # (G, 2, 2)
    pi = safe_div(n_a, n[:, None])
    out = keys.copy()
    out["n"] = n.astype(np.int64)
    for j, s in enumerate(STATES):
        out[f"n_{s}"] = n_ab[:, j].astype(np.int64)
    for j, s in enumerate(STATES):
        out[f"alpha_{s}"] = alpha.reshape(G, 4)[:, j]
    out["pi_c"], out["pi_w"] = pi[:, 0], pi[:, 1]
    for q in quantities:
        m_ab = safe_div(gsum(gs, 4 * G, pairs[q].to_numpy()).reshape(G, 4), n_ab)  # Eq. 13
        for j, s in enumerate(STATES):
            out[f"{q}_{s}"] = m_ab[:, j]
        m_a = _weighted(np.nan_to_num(alpha), m_ab.reshape(G, 2, 2))  # Eq. 15
        m_a = np.where(n_a > 0, m_a, np.nan)
        out[f"{q}_c"], out[f"{q}_w"] = m_a[:, 0], m_a[:, 1]
        agg = _weighted(np.nan_to_num(pi), m_a)  # Eq. 16
        out[f"{q}_all"] = np.where(n > 0, agg, np.nan)
    if "RAS" in quantities:
        out["R_c"], out["R_w"] = out["RAS_c"], out["RAS_w"]
    return out
