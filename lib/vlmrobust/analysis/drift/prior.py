"""Drift to prior on yes/no questions (seed 002 §3.3, §7, App. D; POPE).

* :func:`pope_rows` - yes/no rows with the **POPE margin** ``s_Yes - s_No`` (signed, in
  the scoring method's units: letter logits or option log-likelihoods), ``P(Yes)``
  and the ground truth;
* :func:`prior_summary` - the blank-image prior ``S_prior = P(Yes | q, blank)``,
  here a uniform grey image (128) - the share of questions answered No without
  the image says how skeptic the language prior is;
* :func:`pope_transitions` - Figs. 10 and 12: base accuracy and flip rate per
  perturbation, and the rates of TP->FN and FN->TP (over clean positives'
  instances), TN->FP and FP->TN (over clean negatives'), with the counts;
* :func:`margin_shift` - the margin of clean false positives under perturbation
  (the paper's "avg. flip margin" is the mean perturbed margin of the FP -> TN flips);
* :func:`yes_no_subset` - the yes/no items of an item table (the POPE stand-ins of the synthetic set);
* :func:`drift_by_perturbation` - Fig. 11: the transitions beside mean drift and mean Dirichlet-energy change.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from .representation import invariance_table

__all__ = ["yes_no_index", "pope_rows", "prior_summary", "pope_transitions", "margin_shift", "yes_no_subset",
           "drift_by_perturbation"]


def yes_no_index(options: Sequence[str]) -> tuple[int, int] | None:
    """``(yes, no)`` option indices of a yes/no question (case-insensitive), ``None`` otherwise."""
    low = [str(o).strip().lower().rstrip(".") for o in options]
    if len(low) == 2 and set(low) == {"yes", "no"}:
        return low.index("yes"), low.index("no")
    return None


def pope_rows(pred: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The yes/no rows of a predictions table with ``margin_yes = s_Yes - s_No``, ``p_yes``, ``gt_yes``,
    ``pred_yes``."""
    yn = {str(r.item_id): yes_no_index(list(r.options)) for r in items.itertuples()}
    yn = {k: v for k, v in yn.items() if v is not None}
    p = pred[pred["item_id"].astype(str).isin(yn)].copy()
    idx = [yn[str(i)] for i in p["item_id"]]
    p["yes_idx"] = [a for a, _ in idx]
    p["margin_yes"] = [float(np.asarray(s)[a] - np.asarray(s)[b]) if s is not None else np.nan
                       for s, (a, b) in zip(p["logits"], idx, strict=True)]
    p["p_yes"] = [float(np.asarray(pr)[a]) for pr, (a, _) in zip(p["probs"], idx, strict=True)]
    p["gt_yes"] = p["answer_idx"].to_numpy() == p["yes_idx"].to_numpy()
    p["pred_yes"] = p["pred_idx"].to_numpy() == p["yes_idx"].to_numpy()
    return p.reset_index(drop=True)


def prior_summary(prior: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """``S_prior``: mean ``P(Yes)`` on the blank image, the share answered No, and the accuracy of the prior."""
    g = prior.groupby(list(by))
    return g.agg(S_prior=("p_yes", "mean"), share_no=("pred_yes", lambda s: 1 - float(s.mean())),
                 prior_acc=("correct", "mean"), mean_margin=("margin_yes", "mean"), n=("p_yes", "size")).reset_index()


def pope_transitions(rows: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Base accuracy, flip rate and the four yes/no transitions per perturbation (see the module docstring)."""
    key = list(by) + ["item_id", "method"]
    clean = rows[rows["perturbation"] == CLEAN][key + ["pred_yes", "correct", "margin_yes"]].rename(
        columns={"pred_yes": "base_yes", "correct": "base_correct", "margin_yes": "base_margin"})
    pert = rows[rows["perturbation"] != CLEAN].merge(clean, on=key, how="inner")
    out = []
    for k, g in pert.groupby(list(by) + ["perturbation"], sort=False):
        k = k if isinstance(k, tuple) else (k,)
        gt, b, p = g["gt_yes"].to_numpy(), g["base_yes"].to_numpy(), g["pred_yes"].to_numpy()
        cls = {"TP": gt & b, "TN": ~gt & ~b, "FP": ~gt & b, "FN": gt & ~b}
        moves = {"TP→FN": cls["TP"] & ~p, "TN→FP": cls["TN"] & p, "FP→TN": cls["FP"] & ~p, "FN→TP": cls["FN"] & p}
        row = {**dict(zip(list(by) + ["perturbation"], k, strict=True)),
               "base_acc": float(g["base_correct"].mean()), "acc": float(g["correct"].mean()),
               "flip_rate": float((b != p).mean()), "n": len(g)}
        for c, m in cls.items():
            row[f"n_{c}"] = int(m.sum())
        for name, m in moves.items():
            src = cls[name[:2]]
            row[name] = int(m.sum())
            row[f"{name} rate"] = float(m.sum() / src.sum()) if src.sum() else np.nan
        out.append(row)
    return pd.DataFrame(out)


def margin_shift(rows: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Clean false positives under perturbation: their mean clean and perturbed margin ``s_Yes - s_No``, the
    mean shift, the share that flip to No, and the mean perturbed margin of those flips (the flip margin)."""
    key = list(by) + ["item_id", "method"]
    clean = rows[rows["perturbation"] == CLEAN]
    fp = clean[~clean["gt_yes"] & clean["pred_yes"]][key + ["margin_yes"]].rename(columns={"margin_yes": "base"})
    pert = rows[rows["perturbation"] != CLEAN].merge(fp, on=key, how="inner")
    out = []
    for k, g in pert.groupby(list(by) + ["perturbation"], sort=False):
        k = k if isinstance(k, tuple) else (k,)
        flips = g[~g["pred_yes"]]
        out.append({**dict(zip(list(by) + ["perturbation"], k, strict=True)), "n_fp": len(g),
                    "base_margin": float(g["base"].mean()), "margin": float(g["margin_yes"].mean()),
                    "shift": float((g["margin_yes"] - g["base"]).mean()), "share_to_no": float(len(flips) / len(g)),
                    "flip_margin": float(flips["margin_yes"].mean()) if len(flips) else np.nan})
    return pd.DataFrame(out, columns=list(by) + ["perturbation", "n_fp", "base_margin", "margin", "shift",
                                                 "share_to_no", "flip_margin"])


def yes_no_subset(items: pd.DataFrame) -> pd.DataFrame:
    """The items whose options are Yes and No (:func:`yes_no_index`), in their order, with a fresh index."""
    ids = [r.item_id for r in items.itertuples() if yes_no_index(list(r.options)) is not None]
    return items[items["item_id"].isin(ids)].reset_index(drop=True)


def drift_by_perturbation(pope: pd.DataFrame, probes: pd.DataFrame, regime: str) -> pd.DataFrame:
    """Fig. 11's table: :func:`pope_transitions` per model and perturbation joined (inner) to the mean drift of
    ``regime`` (:func:`~vlmrobust.analysis.drift.representation.invariance_table`: ``cos_sim``, ``l2``) and the
    mean Dirichlet-energy change ``dE`` of the vision-token grid, from the yes/no items' probe rows."""
    key = ["model", "perturbation"]
    drift = invariance_table(probes, [regime])
    grid = probes[(probes["kind"] == "drift") & (probes["regime"] == "vision_grid")].groupby(
        key)["d_energy"].mean().rename("dE").reset_index()
    return pope.merge(drift, on=key).merge(grid, on=key)
