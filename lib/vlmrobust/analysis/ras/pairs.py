"""Clean–corrupted pairs from the predictions table (seed 000, §V-A and Eqs. 7–12).

A *pair* is one corrupted row of the predictions table joined to the clean row
(``perturbation == "clean"``, ``level == 0``) of the same ``(model, method,
item_id)``. :func:`pairs` computes every per-pair quantity of seed 000 once,
vectorised over millions of rows, and returns one tidy row per pair; the
tables, attribution and trajectories are computed from that frame.

Choices, stated once:

* Option distributions are the table's ``probs`` (length ``K``, the row's own
  ``K`` in ``[2, 5]`` by contract; ``K < 2`` is an error). Each must be finite,
  non-negative and sum to 1 within ``prob_atol``; it is then divided by its
  sum, so the bounds of Eqs. 7–11 hold exactly.
* The top-1 answer is recomputed from ``probs`` (arg-max, ties to the lowest
  index, ``tie_tol`` as in :func:`vlmrobust.analysis.ras.components.top1`); the table's
  ``pred_idx``/``correct`` columns are not used, so Eq. 9 and the states of
  Eq. 12 always agree with the distribution they describe.
* Rows with ``perturbation != "clean"`` and ``level == 0`` (identity
  conditions) are not pairs and are left out; a ``"clean"`` row with a level
  other than 0 is an error.
* A corrupted row without a clean row raises (``missing_clean="raise"``) or is
  dropped (``"drop"``, the number dropped is kept in ``attrs["n_missing_clean"]``).
* Clean and corrupted rows must agree on ``K`` and ``answer_idx``.
* ``task`` and ``category`` are item attributes (columns of the item table):
  they are read from each ``item_id``'s first row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...score.probs import prob_chunk, prob_source
from ...stats.grouped import dense_codes, has_duplicates, present_codes
from .components import normalised_entropy, ras, top1

__all__ = ["PAIR_COLUMNS", "STATES", "pairs"]

#: Correctness states of Eq. 12: first letter clean, second corrupted (c = correct, w = wrong).
STATES = ("cc", "cw", "wc", "ww")

PAIR_COLUMNS = (
    "model", "method", "item_id", "task", "category", "perturbation", "level", "param", "K",
    "answer_idx", "pred_clean", "pred", "correct_clean", "correct", "conf_clean", "conf",
    "S_clean", "S", "C_clean", "C", "dS", "dC", "RAS", "state", "row", "row_clean",
)

_REQUIRED = ("model", "method", "item_id", "perturbation", "level", "K", "answer_idx", "probs")


def _row_stats(probs, K, y, prob_atol: float, tie_tol: float, chunk: int = 1 << 16):
    """Eq. 7 entropy, top-1 index and confidence of every row, in row chunks (small temporaries)."""
    K, src = prob_source(probs, K)
    n = K.shape[0]
    S = np.empty(n)
    top = np.empty(n, dtype=np.int64)
    conf = np.empty(n)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        P = prob_chunk(src, K, a, b, prob_atol)
        S[a:b] = normalised_entropy(P, K[a:b])
        top[a:b], conf[a:b] = top1(P, tie_tol=tie_tol)
    return S, top, conf


def _cat(codes: np.ndarray, uniques: pd.Index) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=uniques)


def pairs(
    pred: pd.DataFrame,
    *,
    tie_tol: float = 0.0,
    prob_atol: float = 1e-3,
    missing_clean: str = "raise",
) -> pd.DataFrame:
    r"""One row per clean–corrupted pair with Eqs. 7–12 of seed 000 evaluated.

    Columns (:data:`PAIR_COLUMNS`): keys (``model, method, item_id, task,
    category, perturbation, level, param``; strings as categoricals), ``K``,
    ``answer_idx``, top-1 answers ``pred_clean``/``pred`` and their correctness,
    confidences (max probability), ``S_clean``/``S`` (Eq. 7),
    ``C_clean``/``C`` (Eq. 9), ``dS = S - S_clean`` (Eq. 8),
    ``dC = C - C_clean`` (Eq. 10), ``RAS`` (Eq. 11) and the correctness
    ``state`` in ``{"cc", "cw", "wc", "ww"}`` (Eq. 12), and the positions
    ``row``/``row_clean`` of the two rows in ``pred`` (to fetch their ``probs``).
    Rows are in the order of the corrupted rows of ``pred``.
    """
    if not isinstance(pred, pd.DataFrame):
        raise TypeError(f"pred must be a pandas DataFrame (the predictions table), got {type(pred).__name__}")
    missing = [c for c in _REQUIRED if c not in pred.columns]
    if missing:
        raise ValueError(f"pred lacks required column(s) {missing}; the predictions table needs {list(_REQUIRED)}")
    if missing_clean not in ("raise", "drop"):
        raise ValueError(f"missing_clean must be 'raise' or 'drop', got {missing_clean!r}")
    n = len(pred)
    level = pred["level"].to_numpy()
    if not np.issubdtype(level.dtype, np.integer):
        if not (np.isfinite(level.astype(float)).all() and (level.astype(float) % 1 == 0).all()):
            raise ValueError("level must hold integers (0 = clean, 1.. = severity)")
    level = np.asarray(level, dtype=np.int64)
    if n and level.min() < 0:
        raise ValueError(f"level must be >= 0, found {level.min()}")
    K = np.asarray(pred["K"].to_numpy(), dtype=np.int64)
    y = np.asarray(pred["answer_idx"].to_numpy(), dtype=np.int64)
    if n and ((y < 0) | (y >= K)).any():
        bad = int(np.flatnonzero((y < 0) | (y >= K))[0])
        raise ValueError(f"answer_idx must lie in [0, K); row {bad} has answer_idx={y[bad]} with K={K[bad]}")

    pert_codes, pert_u = present_codes(pred["perturbation"])
    clean_code = pert_u.get_indexer(["clean"])[0]
    is_clean = pert_codes == clean_code if clean_code >= 0 else np.zeros(n, dtype=bool)
    if (is_clean & (level != 0)).any():
        raise ValueError("rows with perturbation 'clean' must have level 0")
    is_corr = (~is_clean) & (level > 0)

    m_codes, m_u = present_codes(pred["model"])
    me_codes, me_u = present_codes(pred["method"])
    it_codes, it_u = present_codes(pred["item_id"])
    key3 = (m_codes * len(me_u) + me_codes) * len(it_u) + it_codes
    n_key3 = len(m_u) * len(me_u) * len(it_u)
    n_lev = int(level.max()) + 1 if n else 1
    full = (key3 * len(pert_u) + pert_codes) * n_lev + level
    if has_duplicates(full, n_key3 * len(pert_u) * n_lev):
        raise ValueError(
            "pred has duplicate rows for some (model, method, item_id, perturbation, level); "
            "the predictions table holds one row per condition"
        )
    key3_codes = dense_codes(key3, n_key3)[0]
    clean_of = np.full(int(key3_codes.max()) + 1 if n else 0, -1, dtype=np.int64)
    clean_rows = np.flatnonzero(is_clean)
    clean_of[key3_codes[clean_rows]] = clean_rows

    corr_rows = np.flatnonzero(is_corr)
    partner = clean_of[key3_codes[corr_rows]] if corr_rows.size else np.zeros(0, dtype=np.int64)
    lost = partner < 0
    n_missing = int(lost.sum())
    if n_missing:
        if missing_clean == "raise":
            r = corr_rows[np.flatnonzero(lost)[0]]
            raise ValueError(
                f"{n_missing} corrupted row(s) have no clean row (perturbation 'clean', level 0) for their "
                f"(model, method, item_id), e.g. {pred['model'].iloc[r]!r}, {pred['method'].iloc[r]!r}, "
                f"{pred['item_id'].iloc[r]!r}; pass missing_clean='drop' to leave them out"
            )
        corr_rows, partner = corr_rows[~lost], partner[~lost]
    if (K[corr_rows] != K[partner]).any() or (y[corr_rows] != y[partner]).any():
        raise ValueError("clean and corrupted rows of a question must have the same K and answer_idx")

    S_all, top, conf = _row_stats(pred["probs"], K, y, prob_atol, tie_tol)
    C_all = np.abs((top == y).astype(np.float64) - conf)  # Eq. 9, as vlmrobust.analysis.ras.components.alignment
    correct_all = top == y

    npair = corr_rows.size
    ic, io = corr_rows, partner
    out = {
        "model": _cat(m_codes[corr_rows], m_u),
        "method": _cat(me_codes[corr_rows], me_u),
        "item_id": _cat(it_codes[corr_rows], it_u),
    }
    first_of_item = np.full(len(it_u), n, dtype=np.int64)
    np.minimum.at(first_of_item, it_codes, np.arange(n))  # first row of each item_id
    for col in ("task", "category"):
        if col in pred.columns:  # item attributes: read once per item_id, from its first row
            c, u = present_codes(pred[col].iloc[first_of_item])
            out[col] = _cat(c[it_codes[corr_rows]], u)
        else:
            out[col] = _cat(np.zeros(npair, dtype=np.int64), pd.Index(["?"]))
    out["perturbation"] = _cat(pert_codes[corr_rows], pert_u)
    out["level"] = level[corr_rows]
    out["param"] = (pred["param"].to_numpy(dtype=np.float64)[corr_rows] if "param" in pred.columns
                    else np.full(npair, np.nan))
    out["K"] = K[corr_rows]
    out["answer_idx"] = y[corr_rows]
    out["pred_clean"], out["pred"] = top[io], top[ic]
    out["correct_clean"], out["correct"] = correct_all[io], correct_all[ic]
    out["conf_clean"], out["conf"] = conf[io], conf[ic]
    out["S_clean"], out["S"] = S_all[io], S_all[ic]
    out["C_clean"], out["C"] = C_all[io], C_all[ic]
    out["dS"] = out["S"] - out["S_clean"]
    out["dC"] = out["C"] - out["C_clean"]
    out["RAS"] = ras(out["dS"], out["dC"])
    state = (~out["correct_clean"]).view(np.int8) * np.int8(2) + (~out["correct"]).view(np.int8)
    out["state"] = _cat(state, pd.Index(list(STATES)))
    out["row"], out["row_clean"] = corr_rows, partner
    df = pd.DataFrame(out, copy=False)  # no block consolidation: the arrays are fresh
    df.attrs["n_missing_clean"] = n_missing
    df.attrs["tie_tol"] = tie_tol
    return df
