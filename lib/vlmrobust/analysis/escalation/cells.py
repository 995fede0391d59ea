"""The per-cell sums behind RCI and T-RCI (seed 001, §II-D): one pass of factorisations and ``bincount``s.

:func:`cell_stats` is the only part of :mod:`vlmrobust.analysis.escalation.indices` that reads the predictions table
row by row (10^6 rows in well under a second); everything else works on its cells. The definitions are in
the docstring of :mod:`vlmrobust.analysis.escalation.indices`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.calibration import bin_index
from ...stats.grouped import as_cols, combined_codes, dense_codes, factorize, has_duplicates, safe_div

__all__ = ["CELL_COLUMNS", "cell_stats"]

CELL_COLUMNS = ("perturbation", "level", "param", "n", "n_correct", "n_cc", "n_flip", "w_flip", "w_wrong", "K_max",
                "A", "A_clean", "H", "H_clean", "n_conf", "n_conf_clean", "ECE", "ECE_clean")
_NEED = ("model", "item_id", "perturbation", "level", "K", "answer_idx", "pred_idx")



def _entropy(hist: np.ndarray, n: np.ndarray, kmax: np.ndarray) -> np.ndarray:
    """Normalised entropy of each row of a count matrix, over ``log kmax`` (NaN for an empty row)."""
    q = hist / np.where(n > 0, n, 1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0).sum(axis=1)
    return np.where(n > 0, h / np.log(np.maximum(kmax, 2)), np.nan)


def _grouped_ece(cell: np.ndarray, G: int, conf: np.ndarray, correct: np.ndarray,
                 n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """ECE of every cell at once (calibration.ece's bins and sums) and the number of confidences used."""
    ok = ~np.isnan(conf)
    c = conf if ok.all() else np.where(ok, conf, 0.0)
    if c.size and (c.min() < 0 or c.max() > 1):
        raise ValueError("confidences must lie in [0, 1]")
    b = bin_index(c, n_bins)
    b[~ok] = n_bins  # NaN confidences go to a bin of their own, left out below (as calibration.ece drops them)
    key = cell * (n_bins + 1) + b
    size = G * (n_bins + 1)
    nb = np.bincount(key, minlength=size).reshape(G, n_bins + 1)[:, :n_bins].sum(axis=1)
    # |sum(correct) - sum(conf)| per bin, from one weighted count of (correct - conf)
    gap = np.abs(np.bincount(key, weights=correct - c, minlength=size)).reshape(G, n_bins + 1)[:, :n_bins]
    return safe_div(gap.sum(axis=1), nb), nb


def _row_weights(pred: pd.DataFrame, rows: np.ndarray, fail_class, fail_weights) -> np.ndarray | None:
    if fail_weights is None:
        return None
    if fail_class is None:
        raise ValueError("fail_weights needs fail_class (a column name of pred or one class label per row)")
    labels = pred[fail_class] if isinstance(fail_class, str) else pd.Series(np.asarray(fail_class, dtype=object))
    if len(labels) != len(pred):
        raise ValueError(f"fail_class has {len(labels)} labels for {len(pred)} rows of pred")
    bad = {k: v for k, v in fail_weights.items() if not (np.isfinite(v) and v >= 0)}
    if bad:
        raise ValueError(f"fail_weights must be finite and >= 0, got {bad}")
    codes, uniq = pd.factorize(labels.iloc[rows].astype(object).fillna(""))
    return np.array([float(fail_weights.get(u, 1.0)) for u in uniq])[codes]


def _codes(pred: pd.DataFrame, col: str, often_constant: bool = False) -> tuple[np.ndarray, pd.Index]:
    """Codes of a column into its sorted distinct values (categories in order for a categorical).

    ``often_constant``: first test whether every row holds the first row's value (one comparison pass, much
    cheaper than hashing), as the ``method`` column of a table scored with each model's default usually does.
    """
    x = pred[col]
    if often_constant and len(x) and not isinstance(x.dtype, pd.CategoricalDtype) and bool((x == x.iloc[0]).all()):
        return np.zeros(len(x), dtype=np.int64), pd.Index([x.iloc[0]])
    codes, uniq = factorize(x)
    if len(codes) and codes.min() < 0:
        raise ValueError(f"column {col!r} has missing values")
    return codes, uniq


def _ints(pred: pd.DataFrame, col: str) -> np.ndarray:
    return np.asarray(pred[col].to_numpy(), dtype=np.int64)


def _key(pred: pd.DataFrame, codes: list[np.ndarray], sizes: list[int]) -> tuple[np.ndarray, int]:
    """Integer keys of the rows' code combinations and their range: the combined code itself when its range
    is small, dense codes otherwise."""
    comb, space = combined_codes(codes, sizes)
    if space <= max(4 * len(pred), 1 << 16):
        return comb, space
    key, present = dense_codes(comb, space)
    return key, len(present)


def cell_stats(pred: pd.DataFrame, unit: str | Sequence[str] = ("model",), *,
               perturbations: Sequence[str] | None = None, conf: str = "confidence", n_bins: int = 10,
               fail_class: str | Sequence | None = None, fail_weights: Mapping[str, float] | None = None,
               missing_clean: str = "raise") -> pd.DataFrame:
    """The sums behind every RCI and T-RCI term, one row per ``unit`` × perturbation × level.

    Columns: the unit's, then :data:`CELL_COLUMNS`: ``param`` (the level's physical parameter), ``n`` items,
    ``n_correct``, ``n_cc`` (clean-correct), ``n_flip`` (clean-correct and now wrong), ``w_flip`` (flips
    weighted by ``fail_weights[fail_class]``, classes not named weigh 1; the flip count without weights),
    ``w_wrong`` (every perturbed-wrong row weighted the same way: the ``"table-i"`` reading's count),
    ``K_max``, accuracies ``A``/``A_clean``, entropies of the predicted index ``H``/``H_clean``, confidences
    used ``n_conf``/``n_conf_clean`` and ``ECE``/``ECE_clean`` (``conf`` column, ``n_bins`` bins). Only
    corrupted rows (level > 0, ``perturbations`` when given) make cells; their clean partners are joined by
    ``(model, method, item_id)``. A corrupted row without a clean row raises (``missing_clean="raise"``)
    or is left out (``"drop"``). Cells are ordered by their keys. See the module docstring for every
    definition. Every step is a factorisation, an integer index or a ``bincount`` over the rows.
    """
    unit = as_cols(unit, "unit")
    missing = [c for c in (*_NEED, *unit) if c not in pred.columns]
    if missing:
        raise ValueError(f"pred lacks column(s) {missing}; the predictions table (vlmrobust.schema.PRED_COLUMNS) "
                         "has them")
    if missing_clean not in ("raise", "drop"):
        raise ValueError(f"missing_clean must be 'raise' or 'drop', got {missing_clean!r}")
    if conf not in pred.columns:
        raise ValueError(f"conf names no column of pred: {conf!r}")
    keycols = ("model", "method", "item_id") if "method" in pred.columns else ("model", "item_id")
    codes = {c: _codes(pred, c, often_constant=c == "method") for c in dict.fromkeys((*keycols, "perturbation", *unit))}
    if "method" in codes and "method" not in unit and len(codes["method"][1]) > 1:
        (mc, mu), (ec, eu) = codes["model"], codes["method"]
        seen = np.zeros(len(mu) * len(eu), dtype=bool)
        seen[mc * len(eu) + ec] = True
        per_model = seen.reshape(len(mu), len(eu)).sum(axis=1)
        if (per_model > 1).any():
            raise ValueError(f"model {mu[int(np.argmax(per_model))]!r} appears with several scoring methods; add "
                             f"'method' to unit (e.g. unit={(*unit, 'method')}) or filter to one method first")
    level = _ints(pred, "level")
    pert_codes, pert_u = codes["perturbation"]
    clean_code = pert_u.get_indexer([CLEAN])[0]
    is_clean = pert_codes == clean_code
    if (is_clean & (level != 0)).any():
        raise ValueError(f"rows with perturbation {CLEAN!r} must have level 0")
    corr = ~is_clean & (level > 0)
    if perturbations is not None:
        corr &= np.isin(pert_codes, pert_u.get_indexer(list(perturbations)))
    key, n_keys = _key(pred, [codes[c][0] for c in keycols], [len(codes[c][1]) for c in keycols])
    clean_rows = np.flatnonzero(is_clean)
    if has_duplicates(key[clean_rows], n_keys):
        raise ValueError(f"pred has several clean rows for some {keycols}")
    clean_of = np.full(n_keys, -1, dtype=np.int64)
    clean_of[key[clean_rows]] = clean_rows
    rows = np.flatnonzero(corr)
    partner = clean_of[key[rows]]
    if (partner < 0).any():
        if missing_clean == "raise":
            r = rows[np.flatnonzero(partner < 0)[0]]
            raise ValueError(f"{int((partner < 0).sum())} corrupted row(s) have no clean row for their {keycols}, "
                             f"e.g. {tuple(pred[c].iloc[r] for c in keycols)}; pass missing_clean='drop'")
        rows, partner = rows[partner >= 0], partner[partner >= 0]
    n_lev = int(level.max()) + 1 if len(level) else 1
    if has_duplicates((key[rows] * len(pert_u) + pert_codes[rows]) * n_lev + level[rows],
                       n_keys * len(pert_u) * n_lev):
        raise ValueError("pred has duplicate rows for some (model, method, item_id, perturbation, level)")

    K, y, p = _ints(pred, "K"), _ints(pred, "answer_idx"), _ints(pred, "pred_idx")
    Kr, yr, p1, p0 = K[rows], y[rows], p[rows], p[partner]
    if ((p1 < 0) | (p1 >= Kr) | (p0 < 0) | (p0 >= Kr)).any():
        raise ValueError("pred_idx must lie in [0, K) on every row")
    if (Kr != K[partner]).any() or (yr != y[partner]).any():
        raise ValueError("clean and corrupted rows of a question must have the same K and answer_idx")
    cols = (*unit, "perturbation")
    sizes = [*(len(codes[c][1]) for c in cols), n_lev]
    full, space = combined_codes([*(codes[c][0] for c in cols), level], sizes)
    cell, comb = dense_codes(full[rows], space)
    G = len(comb)
    out = {}
    rem = comb
    for c, k in reversed(list(zip((*cols, "level"), sizes, strict=True))):
        idx, rem = rem % max(k, 1), rem // max(k, 1)
        out[c] = idx if c == "level" else codes[c][1].take(idx)
    out = pd.DataFrame({c: out[c] for c in (*cols, "level")})
    c1, c0 = p1 == yr, p0 == yr
    state = np.bincount(cell * 4 + (c1.view(np.int8) * np.int8(2) + c0.view(np.int8)), minlength=4 * G)
    state = state.reshape(G, 4)  # columns: wrong/wrong, clean-correct only (a flip), now-correct only, both
    n = state.sum(axis=1)
    km = int(Kr.max()) if Kr.size else 2
    kmax = km - np.argmax((np.bincount(cell * (km + 1) + Kr, minlength=G * (km + 1))
                           .reshape(G, km + 1) > 0)[:, ::-1], axis=1)
    hist = np.bincount(cell * km + p1, minlength=G * km).reshape(G, km)
    hist0 = np.bincount(cell * km + p0, minlength=G * km).reshape(G, km)
    cf = pred[conf].to_numpy(dtype=np.float64)
    ece1, nc1 = _grouped_ece(cell, G, cf[rows], c1, n_bins)
    ece0, nc0 = _grouped_ece(cell, G, cf[partner], c0, n_bins)
    w = _row_weights(pred, rows, fail_class, fail_weights)
    if "param" in pred.columns:
        pr = pred["param"].to_numpy(dtype=np.float64)[rows]
        param = np.full(G, np.nan)
        param[cell] = pr
        if not np.array_equal(param[cell], pr, equal_nan=True):
            raise ValueError("param differs between rows of one perturbation and level")
    else:
        param = np.full(G, np.nan)
    out["param"] = param
    out["n"] = n
    out["n_correct"] = state[:, 2] + state[:, 3]
    out["n_cc"] = state[:, 1] + state[:, 3]
    out["n_flip"] = state[:, 1]
    out["w_flip"] = (state[:, 1].astype(np.float64) if w is None
                     else np.bincount(cell, weights=(c0 & ~c1) * w, minlength=G))
    out["w_wrong"] = ((n - out["n_correct"].to_numpy()).astype(np.float64) if w is None
                      else np.bincount(cell, weights=~c1 * w, minlength=G))
    out["K_max"] = kmax
    out["A"] = safe_div(out["n_correct"].to_numpy(), n)
    out["A_clean"] = safe_div(out["n_cc"].to_numpy(), n)
    out["H"] = _entropy(hist, n, kmax)
    out["H_clean"] = _entropy(hist0, n, kmax)
    out["n_conf"], out["n_conf_clean"] = nc1, nc0
    out["ECE"], out["ECE_clean"] = ece1, ece0
    out.attrs["unit"] = unit
    return out
