"""Read-outs the four papers do not give: ImageNet-C's corruption errors and the answer-order control.

**Corruption error** (Hendrycks & Dietterich, ICLR 2019, §3 "ImageNet-C"). With
``E^f_{s,c}`` the error rate (1 − accuracy) of model ``f`` under corruption ``c``
at severity ``s``, and ``E^f_clean`` its clean error,

* ``CE^f_c = Σ_s E^f_{s,c} / Σ_s E^ref_{s,c}`` and ``mCE^f = mean_c CE^f_c``;
* ``relative CE^f_c = Σ_s (E^f_{s,c} − E^f_clean) / Σ_s (E^ref_{s,c} − E^ref_clean)``
  and ``relative mCE^f = mean_c relative CE^f_c``,

against a stated reference model ``ref`` (AlexNet in the paper), which then has
``mCE = 1`` by construction. Choices the paper leaves open here: the sums run
over the severities present for the corruption, which must be the same for
every model; a corruption whose reference denominator is 0 (no error), or for
the relative CE not above 0 (the reference does not degrade), has no CE (NaN),
and the means run over the corruptions that have one (reported as
``n_ce`` / ``n_rce``). Both denominators are the reference's, so every model
averages over the same corruptions (in each bootstrap resample too). Values are
ratios (1 = the reference), not percentages.

**Answer-order control.** The same question with its options permuted
(:func:`option_orders`, :func:`permute_options`), scored as perturbation
``"option_order"`` at level ``k`` = the ``k``-th order (level 0 = the clean,
given order). ``order[j]`` is the given index of the option shown at position
``j``; the abstain option, where an item has one, keeps its place. Per model,
over items and orders ``k ≥ 1``: the **flip rate** is the share whose chosen
option (by content, ``order[pred_idx]``) differs from the clean answer's; the
**position rate** is the share that picked the same position as on the clean
order while the content there changed, i.e. the answer followed the position
instead of the content.

Intervals: percentile bootstrap over items, the same resample for every model,
corruption and severity (paired), by resampling counts (:mod:`vlmrobust.stats.bootstrap`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ... import repro
from ...schema import CLEAN
from ...stats.bootstrap import point_interval, replicate_sums, resample_counts

__all__ = ["ORDER", "error_cells", "corruption_errors", "mce", "option_orders", "permute_options",
           "answer_order_flips"]

#: The perturbation name of the answer-order control.
ORDER = "option_order"


def _one_scoring(pred: pd.DataFrame) -> pd.DataFrame:
    need = {"model", "item_id", "perturbation", "level", "correct"}
    missing = sorted(need - set(pred.columns))
    if missing:
        raise ValueError(f"predictions table is missing columns {missing}")
    for col in ("method", "template"):
        if col in pred.columns and (pred.groupby("model")[col].nunique() > 1).any():
            raise ValueError(f"predictions mix several {col}s {sorted(pred[col].unique())} for one model; pass one")
    if pred["correct"].isna().any():
        raise ValueError("predictions hold rows without 'correct'")
    return pred


def _check_reference(pred: pd.DataFrame, reference: str) -> None:
    if reference not in set(pred["model"]):
        raise ValueError(f"reference {reference!r} is not among the models {sorted(pred['model'].unique())}")


def _weights(n: int, n_boot: int, rng: np.random.Generator | None, key: str) -> np.ndarray:
    """Row 0: every item once (the point estimate); rows 1..n_boot: bootstrap resample counts."""
    return np.vstack([np.ones(n), resample_counts(n, n_boot, rng if rng is not None else repro.rng(key))])


def _with_interval(name: str, v: np.ndarray, ci: float) -> dict:
    """``name``, ``name_lo``, ``name_hi`` from ``v`` = point estimate then replicates (NaN interval without any)."""
    x, lo, hi = point_interval(v, ci)
    return {name: x, f"{name}_lo": lo, f"{name}_hi": hi}


def error_cells(pred: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str]]:
    """Per item and per (model, perturbation, level) cell: wrong answers and rows, as ``(cells, wrong, n, items)``.

    ``wrong`` and ``n`` are ``(items, cells)`` arrays; ``E = wrong.sum(0) / n.sum(0)`` per cell.
    """
    pred = _one_scoring(pred)
    cells = pred[["model", "perturbation", "level"]].drop_duplicates().sort_values(
        ["model", "perturbation", "level"]).reset_index(drop=True)
    items = sorted(pred["item_id"].astype(str).unique())
    ci = pd.MultiIndex.from_frame(cells).get_indexer(pd.MultiIndex.from_frame(pred[["model", "perturbation", "level"]]))
    ii = pd.Index(items).get_indexer(pred["item_id"].astype(str))
    wrong = np.zeros((len(items), len(cells)))
    n = np.zeros_like(wrong)
    np.add.at(wrong, (ii, ci), 1.0 - pred["correct"].astype(float).to_numpy())
    np.add.at(n, (ii, ci), 1.0)
    return cells, wrong, n, items


def _ce(E: np.ndarray, cells: pd.DataFrame, reference: str) -> pd.DataFrame:
    """CE and relative CE per (model, corruption) from error rates ``E`` ``(B, cells)``; columns hold ``(B,)``
    arrays."""
    idx = {k: i for i, k in enumerate(zip(cells.model, cells.perturbation, cells.level, strict=True))}
    corr = sorted(set(cells.perturbation) - {CLEAN})
    levels = {c: sorted(cells.level[(cells.perturbation == c) & (cells.model == reference)]) for c in corr}
    rows = []
    for m in sorted(cells.model.unique()):
        for c in corr:
            try:
                e_m = np.stack([E[:, idx[(m, c, s)]] for s in levels[c]], 1)
                e_r = np.stack([E[:, idx[(reference, c, s)]] for s in levels[c]], 1)
                clean_m, clean_r = E[:, idx[(m, CLEAN, 0)]], E[:, idx[(reference, CLEAN, 0)]]
            except KeyError as exc:
                raise ValueError(f"model {m!r} or the reference lacks cell {exc.args[0]}; every model needs the "
                                 f"reference's corruptions and severities, and a clean cell") from None
            den, rden = e_r.sum(1), (e_r - clean_r[:, None]).sum(1)
            with np.errstate(divide="ignore", invalid="ignore"):
                ce = np.where(den > 0, e_m.sum(1) / den, np.nan)
                rce = np.where(rden > 0, (e_m - clean_m[:, None]).sum(1) / rden, np.nan)
            rows.append({"model": m, "perturbation": c, "CE": ce, "rCE": rce})
    return pd.DataFrame(rows)


def corruption_errors(pred: pd.DataFrame, reference: str) -> pd.DataFrame:
    """CE and relative CE per model and corruption against ``reference`` (module docstring)."""
    _check_reference(pred, reference)
    cells, wrong, n, _ = error_cells(pred)
    out = _ce((wrong.sum(0) / n.sum(0))[None], cells, reference)
    out["CE"], out["rCE"] = [float(v[0]) for v in out.CE], [float(v[0]) for v in out.rCE]
    return out


def mce(pred: pd.DataFrame, reference: str, *, n_boot: int = 1000, rng: np.random.Generator | None = None,
        ci: float = 0.95) -> pd.DataFrame:
    """mCE and relative mCE per model with percentile intervals over items (module docstring)."""
    _check_reference(pred, reference)
    cells, wrong, n, items = error_cells(pred)
    sums = replicate_sums(_weights(len(items), n_boot, rng, "card.mce"), np.hstack([wrong, n]))
    with np.errstate(divide="ignore", invalid="ignore"):
        E = sums[:, : len(cells)] / sums[:, len(cells):]
    per = _ce(E, cells, reference)
    rows = []
    for m, g in per.groupby("model", sort=True):
        row = {"model": m, "reference": reference, "n_corruptions": len(g), "n_items": len(items)}
        for key, col, count in (("mCE", "CE", "n_ce"), ("rel_mCE", "rCE", "n_rce")):
            v = np.stack(list(g[col]), 1)  # (B, corruptions); NaN where the reference's denominator is not > 0
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a resample where no corruption has one
                row |= _with_interval(key, np.nanmean(v, 1), ci)
            row[count] = int(np.isfinite(v[0]).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def option_orders(items: pd.DataFrame, n_orders: int, seed: int = 0) -> pd.DataFrame:
    """``n_orders`` distinct non-identity option orders per item (fewer where ``K`` allows fewer), seeded per item.

    Rows ``item_id, level (1..), order`` (a tuple: the given index shown at each position). The abstain
    option (``abstain_idx``) keeps its place. Orders are drawn by ``repro.rng("card.order", item_id, seed)``.
    """
    import math

    if n_orders < 1:
        raise ValueError(f"n_orders must be at least 1, got {n_orders}")
    rows = []
    for r in items.itertuples(index=False):
        K = len(r.options)
        ab = getattr(r, "abstain_idx", -1)
        fixed = int(ab) if ab is not None and not pd.isna(ab) and int(ab) >= 0 else None
        free = [j for j in range(K) if j != fixed]
        want = min(n_orders, math.factorial(len(free)) - 1)
        gen, seen = repro.rng("card.order", str(r.item_id), int(seed)), {tuple(free)}
        while len(seen) - 1 < want:
            perm = tuple(int(free[j]) for j in gen.permutation(len(free)))
            if perm in seen:
                continue
            seen.add(perm)
            order = list(perm)
            if fixed is not None:
                order.insert(fixed, fixed)
            rows.append({"item_id": r.item_id, "level": len(seen) - 1, "order": tuple(order)})
    return pd.DataFrame(rows, columns=["item_id", "level", "order"])


def permute_options(items: pd.DataFrame, orders: pd.DataFrame, level: int) -> pd.DataFrame:
    """The items with their options in order ``level`` (answer and abstain indices moved with their options)."""
    by_item = {r.item_id: r.order for r in orders[orders.level == level].itertuples(index=False)}
    out = items[items.item_id.isin(by_item)].copy()
    out["options"] = [[opts[j] for j in by_item[i]] for i, opts in zip(out.item_id, out.options, strict=True)]
    out["answer_idx"] = [by_item[i].index(int(a)) for i, a in zip(out.item_id, out.answer_idx, strict=True)]
    if "abstain_idx" in out.columns:
        out["abstain_idx"] = [a if a is None or pd.isna(a) or int(a) < 0 else by_item[i].index(int(a))
                              for i, a in zip(out.item_id, out.abstain_idx, strict=True)]
    return out.reset_index(drop=True)


def answer_order_flips(pred: pd.DataFrame, orders: pd.DataFrame, *, n_boot: int = 1000,
                       rng: np.random.Generator | None = None, ci: float = 0.95) -> pd.DataFrame:
    """Flip rate and position rate per model (module docstring), with percentile intervals over items.

    ``pred``: rows of perturbation ``clean`` (level 0) and ``option_order`` (levels of ``orders``) with
    ``pred_idx`` the chosen position. Orders without a clean answer for their item are an error.
    """
    clean = pred[pred.perturbation == CLEAN].set_index(["model", "item_id"])["pred_idx"]
    perm = pred[pred.perturbation == ORDER].merge(orders, on=["item_id", "level"], how="left")
    if perm.order.isna().any():
        raise ValueError("option_order predictions at levels that orders does not hold")
    key = pd.MultiIndex.from_frame(perm[["model", "item_id"]])
    if not key.isin(clean.index).all():
        raise ValueError("option_order predictions for items without a clean prediction of the same model")
    p0 = clean.reindex(key).to_numpy().astype(int)
    pk = perm.pred_idx.to_numpy().astype(int)
    content = np.array([o[j] for o, j in zip(perm.order, pk, strict=True)])
    perm = perm.assign(flip=(content != p0).astype(float), position=((pk == p0) & (content != p0)).astype(float))
    items = sorted(perm.item_id.astype(str).unique())
    W = _weights(len(items), n_boot, rng, "card.order-flips")
    rows = []
    for m, g in perm.groupby("model", sort=True):
        ii = pd.Index(items).get_indexer(g.item_id.astype(str))
        X = np.zeros((len(items), 3))
        np.add.at(X, ii, np.c_[g.flip, g.position, np.ones(len(g))])
        s = replicate_sums(W, X)
        row = {"model": m, "n_items": int((X[:, 2] > 0).sum()), "n_orders": len(g)}
        with np.errstate(divide="ignore", invalid="ignore"):
            row |= (_with_interval("flip_rate", s[:, 0] / s[:, 2], ci)
                    | _with_interval("position_rate", s[:, 1] / s[:, 2], ci))
        rows.append(row)
    return pd.DataFrame(rows)
