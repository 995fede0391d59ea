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
averages over the same corruptions. Values are ratios (1 = the reference), not
percentages.

*Decided on counts.* Whether the reference degrades (``Σ_s (E^ref_{s,c} −
E^ref_clean) > 0``) is decided on the error **counts** of each cell, in exact
rational arithmetic (:func:`excess_error`), never on a sum of rounded rates: a
sum of rates that is exactly 0 (the reference as wrong under the corruption as
clean) stays 0 instead of becoming ±1e-16, which would turn the relative CE into
±1e15. *Refused below* :data:`MIN_RCE_CORRUPTIONS` (3): a relative mCE that only one or two
corruptions define is those corruptions' relative CE, not a mean over
corruptions, so it is NaN, its interval too, and ``rel_mCE_note`` says why (on the
synthetic world the default reference ``tiny-base`` degrades under fog alone).
The set of corruptions is fixed by the full sample; a resample in which the
reference does not degrade under one of them averages the others.

**Answer-order control: rotations.** The same question with its options rotated
(:func:`option_orders`: rotation ``k`` shows at position ``j`` the given option
``(j + k) mod K``, ``k = 1 .. K − 1``, the abstain option, where an item has one,
keeping its place), scored as perturbation ``"option_order"`` at level ``k``
(level 0 = the clean, given order). ``order[j]`` is the given index of the option
shown at position ``j``. A rotation moves every option, so no pair leaves the
clean choice in place (random permutations do, in 12-22 % of pairs, and a model that
always answers the same position then looks order-robust). Per model:

* **CircularEval accuracy** ``circular_acc`` (MMBench's CircularEval, Liu et al.,
  ECCV 2024): the share of items answered right in the given order *and* in every
  rotation scored (all ``K − 1`` when ``n_orders ≥ K − 1``);
* **flip rate**: over (item, rotation) pairs, the share whose chosen option (by
  content, ``order[pred_idx]``) differs from the clean answer's;
* **position rate**: over the *informative* pairs, those where the option at the
  clean answer's position changed (every rotation pair), the share that picked
  the same position again: the answer followed the position, not the content. A
  model that always answers one position has flip and position rates 1 and
  CircularEval accuracy 0.

Intervals: percentile bootstrap over items, the same resample for every model,
corruption and severity (paired), by resampling counts (:mod:`vlmrobust.stats.bootstrap`).
A read-out whose value is NaN has a NaN interval.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd

from ... import repro
from ...schema import CLEAN
from ...stats.bootstrap import point_interval, replicate_sums, resample_counts

__all__ = ["ORDER", "MIN_RCE_CORRUPTIONS", "error_cells", "excess_error", "corruption_errors", "mce",
           "option_orders", "permute_options", "answer_order_flips"]

#: The perturbation name of the answer-order control.
ORDER = "option_order"
#: Fewest corruptions that must define a relative CE (the reference degrades under them) for a relative mCE.
MIN_RCE_CORRUPTIONS = 3


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
    """``name``, ``name_lo``, ``name_hi`` from ``v`` = point estimate then replicates (NaN interval without any,
    and for a NaN point estimate)."""
    x, lo, hi = point_interval(v, ci)
    if not np.isfinite(x):
        lo = hi = np.nan
    return {name: x, f"{name}_lo": lo, f"{name}_hi": hi}


def error_cells(pred: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str]]:
    """Per item and per (model, perturbation, level) cell: wrong answers and rows, as ``(cells, wrong, n, items)``.

    ``wrong`` and ``n`` are ``(items, cells)`` arrays of whole numbers; ``E = wrong.sum(0) / n.sum(0)`` per cell.
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


def excess_error(wrong: np.ndarray, n: np.ndarray, wrong0: np.ndarray, n0: np.ndarray) -> np.ndarray:
    """``Σ_s (wrong_s / n_s − wrong0 / n0)`` per row, from whole-number counts ``(B, S)`` and ``(B,)``, exact where
    it is 0 or near it: the rows within 1e-9 of 0 are recomputed as sums of fractions, so an excess that is 0 in
    counts is 0.0 (not ±1e-16) and a positive one is positive. NaN where a count of rows is 0."""
    wrong, n = np.atleast_2d(np.asarray(wrong, float)), np.atleast_2d(np.asarray(n, float))
    wrong0, n0 = np.atleast_1d(np.asarray(wrong0, float)), np.atleast_1d(np.asarray(n0, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (wrong / n).sum(1) - wrong.shape[1] * wrong0 / n0
    bad = (n <= 0).any(1) | (n0 <= 0)
    v[bad] = np.nan
    for b in np.flatnonzero(~bad & (np.abs(v) < 1e-9)):
        exact = sum((Fraction(int(round(w)), int(round(m))) for w, m in zip(wrong[b], n[b], strict=True)),
                    Fraction(0)) - wrong.shape[1] * Fraction(int(round(wrong0[b])), int(round(n0[b])))
        v[b] = float(exact)
    return v


def _ce(wrong: np.ndarray, n: np.ndarray, cells: pd.DataFrame, reference: str) -> pd.DataFrame:
    """CE and relative CE per (model, corruption) from error counts ``wrong`` and row counts ``n`` ``(B, cells)``;
    columns ``CE``, ``rCE`` and ``rden`` (the reference's excess error, exact at 0) hold ``(B,)`` arrays."""
    idx = {k: i for i, k in enumerate(zip(cells.model, cells.perturbation, cells.level, strict=True))}
    corr = sorted(set(cells.perturbation) - {CLEAN})
    levels = {c: sorted(cells.level[(cells.perturbation == c) & (cells.model == reference)]) for c in corr}
    rows = []
    for m in sorted(cells.model.unique()):
        for c in corr:
            try:
                j_m = [idx[(m, c, s)] for s in levels[c]]
                j_r = [idx[(reference, c, s)] for s in levels[c]]
                c_m, c_r = idx[(m, CLEAN, 0)], idx[(reference, CLEAN, 0)]
            except KeyError as exc:
                raise ValueError(f"model {m!r} or the reference lacks cell {exc.args[0]}; every model needs the "
                                 f"reference's corruptions and severities, and a clean cell") from None
            with np.errstate(divide="ignore", invalid="ignore"):
                e_m, e_r = (wrong[:, j_m] / n[:, j_m]).sum(1), (wrong[:, j_r] / n[:, j_r]).sum(1)
                ce = np.where(wrong[:, j_r].sum(1) > 0, e_m / e_r, np.nan)  # the reference errs: decided on counts
                rden = excess_error(wrong[:, j_r], n[:, j_r], wrong[:, c_r], n[:, c_r])
                rnum = excess_error(wrong[:, j_m], n[:, j_m], wrong[:, c_m], n[:, c_m])
                rce = np.where(rden > 0, rnum / rden, np.nan)
            rows.append({"model": m, "perturbation": c, "CE": ce, "rCE": rce, "rden": rden})
    return pd.DataFrame(rows)


def corruption_errors(pred: pd.DataFrame, reference: str) -> pd.DataFrame:
    """CE and relative CE per model and corruption against ``reference`` (module docstring)."""
    _check_reference(pred, reference)
    cells, wrong, n, _ = error_cells(pred)
    out = _ce(wrong.sum(0)[None], n.sum(0)[None], cells, reference)
    out["CE"], out["rCE"] = [float(v[0]) for v in out.CE], [float(v[0]) for v in out.rCE]
    out["reference_degrades"] = [bool(v[0] > 0) for v in out.rden]
    return out.drop(columns="rden")


def mce(pred: pd.DataFrame, reference: str, *, n_boot: int = 1000, rng: np.random.Generator | None = None,
        ci: float = 0.95, min_rce: int = MIN_RCE_CORRUPTIONS) -> pd.DataFrame:
    """mCE and relative mCE per model with percentile intervals over items (module docstring); relative mCE is
    refused (NaN, with ``rel_mCE_note``) when fewer than ``min_rce`` corruptions define it."""
    _check_reference(pred, reference)
    cells, wrong, n, items = error_cells(pred)
    sums = replicate_sums(_weights(len(items), n_boot, rng, "card.mce"), np.hstack([wrong, n]))
    per = _ce(sums[:, : len(cells)], sums[:, len(cells):], cells, reference)
    rows = []
    for m, g in per.groupby("model", sort=True):
        row = {"model": m, "reference": reference, "n_corruptions": len(g), "n_items": len(items)}
        defined = np.array([v[0] > 0 for v in g.rden])  # the corruptions under which the reference degrades
        degrading = [str(c) for c, d in zip(g.perturbation, defined, strict=True) if d]
        for key, col, count in (("mCE", "CE", "n_ce"), ("rel_mCE", "rCE", "n_rce")):
            v = np.stack(list(g[col]), 1)  # (B, corruptions); NaN where the reference's denominator is not > 0
            if col == "rCE":
                v = v[:, defined]
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a resample where no corruption has one
                row |= _with_interval(key, np.nanmean(v, 1) if v.shape[1] else np.full(len(v), np.nan), ci)
            row[count] = int(np.isfinite(v[0]).sum())
        note = ""
        if row["n_rce"] < min_rce:
            row |= {"rel_mCE": np.nan, "rel_mCE_lo": np.nan, "rel_mCE_hi": np.nan}
            note = (f"refused: the reference {reference} degrades under {row['n_rce']} of {len(g)} corruptions"
                    + (f" ({', '.join(degrading)})" if degrading else "")
                    + f"; relative mCE needs at least {min_rce}")
        row["rel_mCE_note"] = note
        row["mCE_note"] = "" if row["n_ce"] else f"the reference {reference} makes no error under any corruption"
        rows.append(row)
    return pd.DataFrame(rows)


def option_orders(items: pd.DataFrame, n_orders: int) -> pd.DataFrame:
    """The first ``n_orders`` rotations of every item's options (``K − 1`` at most; module docstring).

    Rows ``item_id, level (1..), order`` (a tuple: the given index shown at each position): rotation ``k`` shows
    the given option ``free[(j + k) mod len(free)]`` at the ``j``-th free position, where ``free`` are the
    options other than the abstain option (``abstain_idx``), which keeps its place.
    """
    if n_orders < 1:
        raise ValueError(f"n_orders must be at least 1, got {n_orders}")
    rows = []
    for r in items.itertuples(index=False):
        K = len(r.options)
        ab = getattr(r, "abstain_idx", -1)
        fixed = int(ab) if ab is not None and not pd.isna(ab) and int(ab) >= 0 else None
        free = [j for j in range(K) if j != fixed]
        for k in range(1, min(n_orders, len(free) - 1) + 1):
            order = [free[(j + k) % len(free)] for j in range(len(free))]
            if fixed is not None:
                order.insert(fixed, fixed)
            rows.append({"item_id": r.item_id, "level": k, "order": tuple(order)})
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
                       rng: np.random.Generator | None = None, ci: float = 0.95,
                       items: pd.DataFrame | None = None) -> pd.DataFrame:
    """CircularEval accuracy, flip rate and position rate per model (module docstring), with percentile intervals
    over items; ``full_circle`` says whether every item was scored in all its ``K − 1`` rotations (read from
    ``items``; False without them).

    ``pred``: rows of perturbation ``clean`` (level 0) and ``option_order`` (levels of ``orders``) with
    ``pred_idx`` the chosen position and ``correct``. Orders without a clean answer for their item are an error.
    """
    clean = pred[pred.perturbation == CLEAN].set_index(["model", "item_id"])
    perm = pred[pred.perturbation == ORDER].merge(orders, on=["item_id", "level"], how="left")
    if perm.order.isna().any():
        raise ValueError("option_order predictions at levels that orders does not hold")
    key = pd.MultiIndex.from_frame(perm[["model", "item_id"]])
    if not key.isin(clean.index).all():
        raise ValueError("option_order predictions for items without a clean prediction of the same model")
    p0 = clean["pred_idx"].reindex(key).to_numpy().astype(int)
    pk = perm.pred_idx.to_numpy().astype(int)
    content = np.array([o[j] for o, j in zip(perm.order, pk, strict=True)])
    informative = np.array([o[j] != j for o, j in zip(perm.order, p0, strict=True)])  # the clean choice moved
    perm = perm.assign(flip=(content != p0).astype(float), informative=informative.astype(float),
                       position=((pk == p0) & informative).astype(float),
                       wrong=1.0 - perm.correct.astype(float))
    ids = sorted(perm.item_id.astype(str).unique())
    W = _weights(len(ids), n_boot, rng, "card.order-flips")
    n_rot = ({} if items is None else   # rotations an item has: K − 1, its abstain option kept in place
             {str(r.item_id): len(r.options) - 1 - int(not pd.isna(r.abstain_idx) and int(r.abstain_idx) >= 0)
              for r in items.assign(abstain_idx=items.get("abstain_idx", -1)).itertuples(index=False)})
    rows = []
    for m, g in perm.groupby("model", sort=True):
        ii = pd.Index(ids).get_indexer(g.item_id.astype(str))
        X = np.zeros((len(ids), 6))
        np.add.at(X, ii, np.c_[g.flip, g.position, g.informative, np.ones(len(g)), g.wrong, np.zeros(len(g))])
        c0 = clean.loc[m]["correct"].astype(float)
        c0 = c0.set_axis(c0.index.astype(str)).reindex(ids).to_numpy()
        X[:, 5] = (X[:, 3] > 0).astype(float)  # items with a rotation
        solved = ((c0 == 1.0) & (X[:, 4] == 0) & (X[:, 5] > 0)).astype(float)
        s = replicate_sums(W, np.c_[X, solved])
        per_item = g.groupby(g.item_id.astype(str)).size()
        full = bool(n_rot) and all(per_item.get(i, 0) >= n_rot.get(i, 0) for i in per_item.index)  # all K − 1
        row = {"model": m, "n_items": int((X[:, 3] > 0).sum()), "n_orders": len(g),
               "n_informative": int(X[:, 2].sum()), "full_circle": full}
        with np.errstate(divide="ignore", invalid="ignore"):
            row |= (_with_interval("circular_acc", s[:, 6] / s[:, 5], ci)
                    | _with_interval("flip_rate", s[:, 0] / s[:, 3], ci)
                    | _with_interval("position_rate", s[:, 1] / s[:, 2], ci))
        rows.append(row)
    return pd.DataFrame(rows)
