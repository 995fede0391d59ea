"""Notebook 08's observations: do the lenses agree on this run, and do the controls land where they were built to.

No paper compares the four lenses, so the agreement rows test a direction stated
in advance (:data:`MODEL_PAIRS`, :data:`CONDITION_PAIRS`) with Spearman's rho and
its interval (:func:`.agreement.agreement_table`); nothing is claimed beyond the
run's models and conditions. The control rows are **construction checks**: an
organism trained to abstain exactly where it would be wrong should show the
smallest abstain blind spot; a row that holds there confirms the card's W reads
what the organism was built to do, and is not a finding about models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.claims import Claim, claims_frame, interval_text
from .. import ras
from ..drift import representation as drift
from .agreement import agreement_checks, agreement_table
from .inputs import base_rows

__all__ = ["MODEL_PAIRS", "CONDITION_PAIRS", "CLAIMS", "with_losses", "condition_lenses", "model_agreement",
           "obs_smallest_blind_spot", "claims_table"]

#: (x, y, sign) across models: the four comparisons of the card.
MODEL_PAIRS = (("drift_pct", "ras_loss", 1), ("W_internal_fog", "over_share", 1), ("RCI_mu", "mCE", 1),
               ("flip_rate", "ras_loss", 1))
#: (x, y, sign) across corruptions (pooled over models and severities).
CONDITION_PAIRS = (("drift_pct", "ras_loss", 1),)
CLAIMS = {
    ("drift_pct", "ras_loss"): "the model whose representations drift most also loses most RAS",
    ("W_internal_fog", "over_share"): "the widest blind spot (internal confidence, fog) belongs to the most "
                                      "overconfident model (largest overconfidence share of RAS)",
    ("RCI_mu", "mCE"): "BRUCE's escalation index and ImageNet-C's mCE rank the models alike",
    ("flip_rate", "ras_loss"): "a model whose answer follows the option order also loses more RAS",
}


def with_losses(card: pd.DataFrame) -> pd.DataFrame:
    """``card`` with ``ras_loss = -RAS`` (and its interval), the direction the agreement pairs read."""
    out = card.copy()
    out["ras_loss"], out["ras_loss_lo"], out["ras_loss_hi"] = -card.RAS, -card.RAS_hi, -card.RAS_lo
    return out


def condition_lenses(pred: pd.DataFrame, probes: pd.DataFrame, perturbations: Sequence[str], *,
                     regime: str = "ans_mcq_free") -> pd.DataFrame:
    """Per corruption: ``ras_loss`` (minus the mean RAS over its pairs, every model and severity) and
    ``drift_pct`` (the mean over models of each model's drift as a % of its control, seed 002 Table 4)."""
    pairs = ras.pairs(base_rows(pred, perturbations))
    pairs = pairs[pairs.perturbation.isin(perturbations)]
    loss = (-pairs.groupby(pairs.perturbation.astype(str), observed=True)["RAS"].mean()).rename("ras_loss")
    out = loss.reset_index().rename(columns={"index": "perturbation"})
    if probes is not None and not probes.empty:
        t4 = drift.drift_vs_control(probes, regime, "cos", by=("model",), union=())
        t4 = t4[t4.perturbation.isin(perturbations)]
        out = out.merge(t4.groupby("perturbation")["pct_mean"].mean().rename("drift_pct").reset_index(),
                        on="perturbation", how="left")
    else:
        out["drift_pct"] = np.nan
    return out


def model_agreement(card: pd.DataFrame, conditions: pd.DataFrame | None, *, n_boot: int,
                    rng_models: np.random.Generator, rng_conditions: np.random.Generator,
                    ci: float = 0.95) -> pd.DataFrame:
    """The agreement table: :data:`MODEL_PAIRS` across models, :data:`CONDITION_PAIRS` across corruptions
    (``across`` names which); intervals from resampled models, or resampled corruptions."""
    lenses = with_losses(card)
    parts = [agreement_table(lenses, [p for p in MODEL_PAIRS if {p[0], p[1]} <= set(lenses.columns)],
                             unit="model", n_boot=n_boot, rng=rng_models, ci=ci).assign(across="models")]
    if conditions is not None and len(conditions) > 2:
        parts.append(agreement_table(conditions, list(CONDITION_PAIRS), unit="perturbation", n_boot=n_boot,
                                     rng=rng_conditions, ci=ci).assign(across="corruptions"))
    return pd.concat(parts, ignore_index=True)


def obs_smallest_blind_spot(card: pd.DataFrame, behaviours: Mapping[str, str], *,
                            column: str = "W_abstain_fog") -> Claim:
    """Construction check: the error-aware control (behaviour ``aware-err``) has the smallest ``column``.

    Holds when its point value is the smallest of the models with a value and its interval's upper end lies
    below the next smallest point; fails when another model's point is smaller; undecided otherwise."""
    claim = "construction check: the error-aware control has the smallest blind spot (W abstain, fog)"
    paper = "no paper has such a model (the testbed's control: abstains where its own answer would be wrong)"
    names = [m for m, b in behaviours.items() if b == "aware-err" and m in set(card.model)]
    rule = (f"smallest {column} of the models (point), its 95 % interval's upper end below the next smallest "
            "point; by construction, not counted as a finding")
    if not names or column not in card.columns:
        return Claim(claim, paper, rule, "not available: no model with behaviour 'aware-err' in this run", None)
    c = card[np.isfinite(card[column].to_numpy(float))].sort_values(column)
    if len(c) < 2 or names[0] not in set(c.model):
        return Claim(claim, paper, rule, f"{names[0]}: no finite {column} (its crossing is undefined)", None)
    me = c[c.model == names[0]].iloc[0]
    others = c[c.model != names[0]]
    nxt = others.iloc[0]
    text = (f"{names[0]}: {interval_text(me[column], me[f'{column}_lo'], me[f'{column}_hi'])}; smallest other: "
            f"{nxt.model} {nxt[column]:.2f}; rank {int((c.model.to_numpy() == names[0]).argmax()) + 1} of {len(c)}")
    if me[column] > nxt[column]:
        return Claim(claim, paper, rule, text, False)
    return Claim(claim, paper, rule, text, True if me[f"{column}_hi"] < nxt[column] else None)


def claims_table(agreement: pd.DataFrame, card: pd.DataFrame, behaviours: Mapping[str, str]) -> pd.DataFrame:
    """Notebook 08's claims table: the agreement rows (one per pair and unit) and the construction check."""
    out = []
    for across, g in agreement.groupby("across", sort=False):
        unit = "model" if across == "models" else "perturbation"
        claims = CLAIMS if across == "models" else {
            ("drift_pct", "ras_loss"): "the corruption that moves representations most also costs most RAS"}
        out += agreement_checks(g, claims, unit=unit)
    out.append(obs_smallest_blind_spot(card, behaviours))
    return claims_frame(out)
