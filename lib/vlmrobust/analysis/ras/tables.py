"""The model-level tables of seed 000: Table II, III, IV and VI, from the pair table.

Every quantity is an ordinary arithmetic mean over clean–corrupted pairs
(seed 000, §VII-A: "Model-, corruption-, and severity-level quantities are
ordinary arithmetic means"), with RAS computed per pair first. :func:`with_ci`
writes a table's values with their bootstrap intervals for display.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts
from ...stats.grouped import as_cols, check_single_method, codes_in, group_codes, gsum, safe_div
from .pairs import STATES

__all__ = ["TABLE_II_STATS", "REGIMES", "REGIME_NAMES", "REGIME_STATES", "table_ii", "table_iii", "table_iv",
           "table_vi", "regime_of", "regime_examples", "with_ci"]

#: Columns of Table II, in order.
TABLE_II_STATS = ("acc_clean", "acc_corr", "delta_acc", "consistency", "rel_rob", "RAS", "R_c", "R_w", "mixed_pct")

#: Sign regimes of (ΔC, ΔS) in Table IV (seed 000, Supp. Table IV), then the boundary.
REGIMES = ("worse-flatter", "worse-sharper", "better-flatter", "better-sharper", "boundary")
#: The paper's reading of each sign regime (seed 000, Fig. 4).
REGIME_NAMES = {"worse-flatter": "weakened support", "worse-sharper": "overconfident degradation",
                "better-flatter": "hesitant support", "better-sharper": "supported improvement"}
#: Correctness states (Eq. 12) that match each regime's usual reading: still correct for weakened support,
#: wrong after corruption for overconfident degradation, corrected for hesitant support, correct after
#: corruption for supported improvement (the Fig. 4 examples are drawn from these).
REGIME_STATES = {"worse-flatter": ("cc",), "worse-sharper": ("cw", "ww"), "better-flatter": ("wc",),
                 "better-sharper": ("wc", "cc")}

_BASE = ("n", "n_cc", "s_corr", "s_cons", "s_ras", "s_ras_c")  # per-question sums behind Table II


def _table_ii_stats(S: np.ndarray, n_cells: int, mixed_tol: float) -> np.ndarray:
    """Table II statistics from sums ``S`` (..., 6 + 4 n_cells); last axis = TABLE_II_STATS."""
    n, ncc, sc, scons, sr, src = (S[..., j] for j in range(6))
    cells = S[..., 6:].reshape(*S.shape[:-1], 4, n_cells)
    nc, sc_c, nw, sw = cells[..., 0, :], cells[..., 1, :], cells[..., 2, :], cells[..., 3, :]
    acc0 = safe_div(ncc, n)
    acc1 = safe_div(sc, n)
    valid = (nc > 0) & (nw > 0)
    with np.errstate(invalid="ignore"):
        mixed = valid & (safe_div(sc_c, nc) < -mixed_tol) & (safe_div(sw, nw) > mixed_tol)
    mixed_pct = 100.0 * safe_div(mixed.sum(axis=-1), valid.sum(axis=-1))
    return np.stack([
        acc0, acc1, acc1 - acc0, safe_div(scons, n), safe_div(acc1, acc0), safe_div(sr, n),
        safe_div(src, ncc), safe_div(sr - src, n - ncc), mixed_pct,
    ], axis=-1)


def table_ii(
    pairs: pd.DataFrame,
    unit: str | Sequence[str] = ("model",),
    cell: str | Sequence[str] = ("perturbation", "level"),
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    rng: np.random.Generator | None = None,
    mixed_tol: float = 0.0,
    return_replicates: bool = False,
) -> pd.DataFrame:
    r"""Seed 000 Table II per ``unit``: capability, response and structural diagnosis.

    Columns (means over the unit's pairs):

    * ``acc_clean`` — :math:`\mathrm{Acc}^{(o)}`, clean accuracy over pairs;
    * ``acc_corr`` — corrupted accuracy (the "absolute robustness" of Table VI);
    * ``delta_acc`` — :math:`\Delta\mathrm{Acc} = \mathrm{Acc}^{(d,\ell)} - \mathrm{Acc}^{(o)}`;
    * ``consistency`` — mean of :math:`\mathbf 1\{\hat y^{(d,\ell)} = \hat y^{(o)}\}`;
    * ``rel_rob`` — relative robustness :math:`\mathrm{Acc}^{(d,\ell)}/\mathrm{Acc}^{(o)}`
      (ratio of the two pair means; NaN when clean accuracy is 0);
    * ``RAS`` — mean per-pair RAS (Eq. 11);
    * ``R_c``, ``R_w`` — mean RAS over clean-correct / clean-wrong pairs (Eq. 15
      pooled over the unit's cells; equal to the mean of the cells' Eq. 15
      values when every question appears in every cell);
    * ``mixed_pct`` — % of ``cell`` groups (perturbation × severity) with
      ``R_c < -mixed_tol`` and ``R_w > mixed_tol``; cells where either source is
      empty are left out of numerator and denominator.

    Intervals: ``<stat>_lo``/``<stat>_hi`` are percentile ``ci`` intervals over
    ``n_boot`` resamples of the questions (distinct ``item_id`` of the table,
    drawn with replacement and shared by all units so that units are compared
    on the same resamples); ``rng`` defaults to
    ``vlmrobust.repro.rng("metrics.table_ii", 0)``. ``n_boot = 0`` skips them.
    With ``return_replicates`` the ``(n_units, n_boot, n_stats)`` replicates are
    in ``attrs["replicates"]``.
    """
    unit, cell = as_cols(unit, "unit"), as_cols(cell, "cell")
    check_single_method(pairs, unit, "unit")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ValueError(f"n_boot must be an integer >= 0, got {n_boot!r}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must lie in (0, 1), got {ci!r}")
    if n_boot and rng is None:
        from ...repro import rng as make_rng

        rng = make_rng("metrics.table_ii", 0)
    u_codes, u_keys = group_codes(pairs, unit)
    it_codes, it_keys = group_codes(pairs, ("item_id",))
    c_codes, c_keys = group_codes(pairs, cell)
    n_items, n_cells, G = len(it_keys), len(c_keys), len(u_keys)

    cc = pairs["correct_clean"].to_numpy().astype(np.float64)
    r = pairs["RAS"].to_numpy()
    rc = r * cc
    cell_vals = [cc, rc, 1.0 - cc, r - rc]  # per (unit, item, cell): clean-correct count, its RAS sum; same for wrong
    item_vals = [pairs["correct"].to_numpy().astype(np.float64),
                 (pairs["pred"].to_numpy() == pairs["pred_clean"].to_numpy()).astype(np.float64)]
    W = resample_counts(n_items, n_boot, rng) if n_boot else None
    point = np.empty((G, len(TABLE_II_STATS)))
    reps = np.empty((G, n_boot, len(TABLE_II_STATS)))
    n_q = np.empty(G, dtype=np.int64)
    per_unit = n_items * n_cells
    batch = max(1, 4_000_000 // max(per_unit, 1))  # units whose (item x cell) sums are built together
    for g0 in range(0, G, batch):
        g1 = min(G, g0 + batch)
        rows = slice(None) if (g0, g1) == (0, G) else np.flatnonzero((u_codes >= g0) & (u_codes < g1))
        ui = (u_codes[rows] - g0) * n_items + it_codes[rows]
        uic = ui * n_cells + c_codes[rows]
        nb = g1 - g0
        cells = [gsum(uic, nb * per_unit, v[rows]).reshape(nb, n_items, n_cells) for v in cell_vals]
        items = [gsum(ui, nb * n_items, v[rows]).reshape(nb, n_items) for v in item_vals]
        for k in range(nb):
            g = g0 + k
            n_c, s_c, n_w, s_w = (c[k] for c in cells)
            X = np.empty((n_items, len(_BASE) + 4 * n_cells))
            X[:, 1] = n_c.sum(axis=1)
            X[:, 0] = X[:, 1] + n_w.sum(axis=1)
            X[:, 2], X[:, 3] = items[0][k], items[1][k]
            X[:, 5] = s_c.sum(axis=1)
            X[:, 4] = X[:, 5] + s_w.sum(axis=1)
            for j, block in enumerate((n_c, s_c, n_w, s_w)):
                X[:, len(_BASE) + j * n_cells: len(_BASE) + (j + 1) * n_cells] = block
            n_q[g] = int((X[:, 0] > 0).sum())
            point[g] = _table_ii_stats(X.sum(axis=0), n_cells, mixed_tol)
            if n_boot:
                reps[g] = _table_ii_stats(replicate_sums(W, X), n_cells, mixed_tol)
    out = u_keys.copy()
    out["n_items"] = n_q
    out["n_pairs"] = np.bincount(u_codes, minlength=G)
    for j, s in enumerate(TABLE_II_STATS):
        out[s] = point[:, j]
    if n_boot:
        for j, s in enumerate(TABLE_II_STATS):
            lo, hi = percentile_interval(reps[:, :, j].T, ci)
            out[f"{s}_lo"], out[f"{s}_hi"] = lo, hi
    out.attrs.update(n_boot=n_boot, ci=ci, n_cells=n_cells, mixed_tol=mixed_tol)
    if return_replicates:
        out.attrs["replicates"] = reps
    return out


def table_iii(pairs: pd.DataFrame, unit: str | Sequence[str] = ()) -> pd.DataFrame:
    r"""Seed 000 Table III: the four correctness states (Eq. 12) under sample averaging.

    One row per unit × state: ``n``; ``share`` = |Q_ab| / |Q| over all the
    unit's pairs; ``cond_rate`` = |Q_ab| / |Q_a| within the clean-side source
    (the α of Eq. 14); means of ``delta_acc`` (correct − correct_clean: 0, −1,
    +1, 0 by construction), ``RAS``, ``dS``, ``dC`` over the state's pairs
    (Eq. 13 pooled over cells). Default ``unit=()`` pools all pairs.
    """
    unit = as_cols(unit, "unit")
    check_single_method(pairs, unit, "unit")
    codes, keys = group_codes(pairs, unit)
    G = len(keys)
    st = codes_in(pairs["state"], STATES, "state")
    gs = codes * 4 + st
    n_ab = gsum(gs, 4 * G).reshape(G, 4)
    n_a = np.repeat(np.stack([n_ab[:, :2].sum(1), n_ab[:, 2:].sum(1)], 1), 2, axis=1)
    n = n_ab.sum(axis=1, keepdims=True)
    # correct - correct_clean is 0, -1, +1, 0 in cc, cw, wc, ww by the definition of the states (Eq. 12)
    dacc = np.where(n_ab > 0, np.array([0.0, -1.0, 1.0, 0.0]), np.nan)
    cols = {"n": n_ab, "share": safe_div(n_ab, n), "cond_rate": safe_div(n_ab, n_a), "delta_acc": dacc}
    for q in ("RAS", "dS", "dC"):
        cols[q] = safe_div(gsum(gs, 4 * G, pairs[q].to_numpy()).reshape(G, 4), n_ab)
    out = keys.loc[keys.index.repeat(4)].reset_index(drop=True)
    out["state"] = pd.Categorical(np.tile(STATES, G), categories=STATES)
    for k, v in cols.items():
        out[k] = v.reshape(-1)
    out["n"] = out["n"].astype(np.int64)
    return out


def regime_of(dS: np.ndarray, dC: np.ndarray, tol: float = 1e-6) -> np.ndarray:
    """Regime code (index into :data:`REGIMES`) of each pair from the signs of ΔC and ΔS.

    A pair is on the **boundary** when ``|ΔC| <= tol`` or ``|ΔS| <= tol``
    (the paper does not state its tolerance; ``tol`` defaults to ``1e-6``,
    about the rounding of float32 probabilities). Otherwise ΔC > 0 is
    "worse" alignment, ΔS > 0 "flatter".
    """
    if not (isinstance(tol, (int, float)) and tol >= 0):
        raise ValueError(f"tol must be a number >= 0, got {tol!r}")
    dS, dC = np.broadcast_arrays(np.asarray(dS, dtype=np.float64), np.asarray(dC, dtype=np.float64))
    shape = dS.shape
    dS, dC = dS.reshape(-1), dC.reshape(-1)
    code = (dC <= 0).view(np.int8) * np.int8(2) + (dS <= 0).view(np.int8)
    code[(np.abs(dC) <= tol) | (np.abs(dS) <= tol)] = 4
    return code.astype(np.int64).reshape(shape)


def regime_examples(pairs: pd.DataFrame, tol: float = 1e-6) -> dict[str, int | None]:
    """For each of the four sign regimes, the position (``iloc``) of its deepest pair, or ``None``.

    Depth is ``min(|ΔS|, |ΔC|)``, how far inside the regime a pair sits. The pair is
    taken among those whose correctness state matches the regime's reading
    (:data:`REGIME_STATES`), or among all of the regime's pairs when none matches
    (seed 000, Fig. 4 shows one pair per regime).
    """
    dS, dC = pairs["dS"].to_numpy(), pairs["dC"].to_numpy()
    code = regime_of(dS, dC, tol)
    depth = np.minimum(np.abs(dS), np.abs(dC))
    state = pairs["state"].astype(str).to_numpy()
    out: dict[str, int | None] = {}
    for c, name in enumerate(REGIMES[:4]):
        idx = np.flatnonzero((code == c) & np.isin(state, REGIME_STATES[name]))
        if not len(idx):
            idx = np.flatnonzero(code == c)
        out[name] = int(idx[np.argmax(depth[idx])]) if len(idx) else None
    return out


def table_iv(pairs: pd.DataFrame, unit: str | Sequence[str] = (), *, tol: float = 1e-6) -> pd.DataFrame:
    """Seed 000 Supp. Table IV: sign regimes of (ΔC, ΔS) and the boundary (see :func:`regime_of`).

    One row per unit × regime with the regime means of ``dC``, ``dS``, ``RAS``,
    its ``share`` of the unit's pairs and ``n``.
    """
    unit = as_cols(unit, "unit")
    check_single_method(pairs, unit, "unit")
    codes, keys = group_codes(pairs, unit)
    G, R = len(keys), len(REGIMES)
    gr = codes * R + regime_of(pairs["dS"].to_numpy(), pairs["dC"].to_numpy(), tol)
    n_r = gsum(gr, G * R).reshape(G, R)
    out = keys.loc[keys.index.repeat(R)].reset_index(drop=True)
    out["regime"] = pd.Categorical(np.tile(REGIMES, G), categories=REGIMES)
    for q in ("dC", "dS", "RAS"):
        out[q] = safe_div(gsum(gr, G * R, pairs[q].to_numpy()).reshape(G, R), n_r).reshape(-1)
    out["share"] = safe_div(n_r, n_r.sum(axis=1, keepdims=True)).reshape(-1)
    out["n"] = n_r.reshape(-1).astype(np.int64)
    out.attrs["tol"] = tol
    return out


def table_vi(t2: pd.DataFrame, unit: str | Sequence[str] = ("model",), *, tie_method: str = "min") -> pd.DataFrame:
    r"""Seed 000 Supp. Table VI: rank mismatch between response metrics and RAS.

    From a :func:`table_ii` frame: for ``abs`` (corrupted accuracy, "absolute
    robustness"), ``delta_acc`` and ``rel_rob``, the value, its rank
    (``<m>_rank``; 1 = best = largest, ties by ``tie_method`` of
    :meth:`pandas.Series.rank`, default ``"min"``) and
    :math:`\Delta r = r_{\mathrm{RAS}} - r_m` (``<m>_dr``; positive when the
    response metric ranks the unit higher than RAS does). Rows are ordered by
    RAS rank.
    """
    unit = as_cols(unit, "unit")
    need = [*unit, "acc_corr", "delta_acc", "rel_rob", "RAS"]
    missing = [c for c in need if c not in t2.columns]
    if missing:
        raise ValueError(f"t2 must be a table_ii frame; it lacks {missing}")
    out = t2[list(unit)].copy()
    ranks = {}
    for m, src in (("RAS", "RAS"), ("abs", "acc_corr"), ("delta_acc", "delta_acc"), ("rel_rob", "rel_rob")):
        out[m] = t2[src].to_numpy()
        ranks[m] = t2[src].rank(ascending=False, method=tie_method, na_option="bottom").to_numpy()
    out["RAS_rank"] = ranks["RAS"].astype(np.int64)
    for m in ("abs", "delta_acc", "rel_rob"):
        out[f"{m}_rank"] = ranks[m].astype(np.int64)
        out[f"{m}_dr"] = (ranks["RAS"] - ranks[m]).astype(np.int64)
    cols = [*unit, "abs", "abs_rank", "abs_dr", "delta_acc", "delta_acc_rank", "delta_acc_dr",
            "rel_rob", "rel_rob_rank", "rel_rob_dr", "RAS", "RAS_rank"]
    return out[cols].sort_values(["RAS_rank", *unit], kind="stable").reset_index(drop=True)


def with_ci(df: pd.DataFrame, cols: Sequence[str], digits: int = 3) -> pd.DataFrame:
    """Display form of a table with intervals (e.g. :func:`table_ii`): ``value [lo, hi]`` strings.

    For each of ``cols``, the value and its ``<col>_lo`` / ``<col>_hi`` bounds with ``digits`` decimals
    (one for ``mixed_pct``); the value alone when the table has no bounds for it. The ``model`` column is
    kept first when present; the index is ``df``'s.
    """
    out = df[["model"]].copy() if "model" in df else pd.DataFrame(index=df.index)
    for c in cols:
        fmt = f"{{:.{1 if c == 'mixed_pct' else digits}f}}"
        if f"{c}_lo" in df:
            out[c] = [f"{fmt.format(v)} [{fmt.format(lo)}, {fmt.format(hi)}]"
                      for v, lo, hi in zip(df[c], df[f"{c}_lo"], df[f"{c}_hi"], strict=True)]
        else:
            out[c] = df[c].map(fmt.format)
    return out
