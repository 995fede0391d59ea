"""Notebook 08's claims: do the lenses agree on this run, and does a control land where it was built to.

No paper compares the four lenses, so the agreement rows test a direction stated
in advance (:data:`MODEL_PAIRS`, :data:`CONDITION_PAIRS`) with Spearman's ρ against
its permutation null (:func:`.agreement.rank_test`); nothing is claimed beyond the
run's models and corruptions. The subject of every agreement row is the run's
**evaluated** organisms (:func:`evaluated`): the controls, built to behave a given
way, would carry their construction into a ranking, so they never enter these rows.
A blind twin (``blind:NAME``) is read by the role of ``NAME``.

The control row is a **construction check** (section ``"construction"``): an
organism trained to abstain exactly where it would be wrong should show the
smallest abstain blind spot. When it holds, its verdict is ``by construction`` (it
confirms the card's W reads what the organism was built to do, never a finding
about models); when another model has the smaller W it is ``not reproduced``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...models import zoo
from ...models.loading import BLIND_PREFIX
from ...stats.claims import (
    BY_CONSTRUCTION,
    NOT_REPRODUCED,
    UNDECIDED,
    Claim,
    claims_frame,
    interval_text,
    no_subject,
)
from .. import ras
from ..drift import representation as drift
from .agreement import agreement_checks, agreement_table
from .inputs import base_rows

__all__ = ["MODEL_PAIRS", "CONDITION_PAIRS", "CLAIMS", "zoo_name", "behaviours", "evaluated", "with_losses",
           "condition_lenses", "model_agreement", "smallest_check", "obs_smallest_blind_spot", "claims_table"]

#: (x, y, sign) across models: the four comparisons of the card.
MODEL_PAIRS = (("drift_pct", "ras_loss", 1), ("W_internal_fog", "over_share", 1), ("RCI_mu", "mCE", 1),
               ("flip_rate", "ras_loss", 1))
#: (x, y, sign) across corruptions (pooled over the evaluated models and the severities).
CONDITION_PAIRS = (("drift_pct", "ras_loss", 1),)
CLAIMS = {
    ("drift_pct", "ras_loss"): "the model whose representations drift most also loses most RAS",
    ("W_internal_fog", "over_share"): "the widest blind spot (internal confidence, fog) belongs to the most "
                                      "overconfident model (largest overconfidence share of RAS)",
    ("RCI_mu", "mCE"): "BRUCE's escalation index and ImageNet-C's mCE rank the models alike",
    ("flip_rate", "ras_loss"): "a model whose answer follows the option order also loses more RAS",
}
CONDITION_CLAIMS = {("drift_pct", "ras_loss"): "the corruption that moves representations most also costs most RAS"}


def zoo_name(model: str) -> str:
    """The zoo organism behind a model spec: ``NAME`` for ``blind:NAME``, the spec itself otherwise."""
    return model[len(BLIND_PREFIX):] if model.startswith(BLIND_PREFIX) else model


def behaviours(models: Sequence[str]) -> dict[str, str]:
    """Each model's zoo ``behaviour`` (``""`` for none, a hub model or a folder), read through a blind twin."""
    known = set(zoo.names())
    return {m: str(zoo.meta(zoo_name(m)).get("behaviour", "") or "") if zoo_name(m) in known else "" for m in models}


def evaluated(models: Sequence[str]) -> list[str]:
    """The evaluated models among ``models``: zoo role ``evaluated`` (through a blind twin), and every model that
    is not a zoo organism (a hub id or a folder is what a user evaluates)."""
    known = set(zoo.names())
    return [m for m in models if zoo_name(m) not in known or zoo.role(zoo_name(m)) == "evaluated"]


def with_losses(card: pd.DataFrame) -> pd.DataFrame:
    """``card`` with ``ras_loss = -RAS`` (and its interval), the direction the agreement pairs read."""
    out = card.copy()
    out["ras_loss"], out["ras_loss_lo"], out["ras_loss_hi"] = -card.RAS, -card.RAS_hi, -card.RAS_lo
    return out


def condition_lenses(pred: pd.DataFrame, probes: pd.DataFrame, perturbations: Sequence[str], *,
                     regime: str = "ans_mcq_free", models: Sequence[str] | None = None) -> pd.DataFrame:
    """Per corruption, over ``models`` (default every model of ``pred``): ``ras_loss`` (minus the mean RAS over
    its pairs, every model and severity) and ``drift_pct`` (the mean over models of each model's drift as a %
    of its control, seed 002 Table 4)."""
    if models is not None:
        pred = pred[pred.model.astype(str).isin(models)]
        probes = probes[probes.model.astype(str).isin(models)] if probes is not None and len(probes) else probes
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
                    ci: float = 0.95, models: Sequence[str] | None = None) -> pd.DataFrame:
    """The agreement table: :data:`MODEL_PAIRS` across ``models`` (default: the evaluated ones, :func:`evaluated`),
    :data:`CONDITION_PAIRS` across corruptions (``across`` names which); permutation tests, intervals from
    resampled models or corruptions."""
    keep = evaluated(list(card.model.astype(str))) if models is None else list(models)
    lenses = with_losses(card[card.model.astype(str).isin(keep)].reset_index(drop=True))
    parts = [agreement_table(lenses, [p for p in MODEL_PAIRS if {p[0], p[1]} <= set(lenses.columns)],
                             unit="model", n_boot=n_boot, rng=rng_models, ci=ci).assign(across="models")]
    if conditions is not None and len(conditions):
        parts.append(agreement_table(conditions, list(CONDITION_PAIRS), unit="perturbation", n_boot=n_boot,
                                     rng=rng_conditions, ci=ci).assign(across="corruptions"))
    return pd.concat(parts, ignore_index=True)


def smallest_check(value: np.ndarray, hi: np.ndarray, target: int) -> str:
    """The construction check's rule, a pure function of the arrays: ``holds`` when unit ``target`` has the
    smallest point value and its interval's upper end lies below every other unit's point; ``fails`` when
    another unit's point is smaller; ``undecided`` otherwise (and when ``target`` has no value)."""
    value, hi = np.asarray(value, float), np.asarray(hi, float)
    others = np.delete(value, target)
    others = others[np.isfinite(others)]
    if not np.isfinite(value[target]) or not len(others):
        return "undecided"
    if value[target] > others.min():
        return "fails"
    return "holds" if np.isfinite(hi[target]) and hi[target] < others.min() else "undecided"


def obs_smallest_blind_spot(card: pd.DataFrame, behaviour: Mapping[str, str], *,
                            column: str = "W_abstain_fog") -> Claim:
    """Construction check: the error-aware control (behaviour ``aware-err``) has the smallest ``column``
    (:func:`smallest_check`); ``by construction`` when it holds."""
    claim = "construction check: the error-aware control has the smallest blind spot (W abstain, fog)"
    paper = "no paper has such a model (the testbed's control: abstains where its own answer would be wrong)"
    null = "the control is one of the models: its W drawn like theirs (equal units)"
    rule = (f"smallest {column} of the models (point), its 95 % interval's upper end below every other model's "
            "point; by construction when it holds, never counted as a finding")
    names = [m for m, b in behaviour.items() if b == "aware-err" and m in set(card.model)]
    if not names or column not in card.columns:
        return no_subject(claim, paper, null, rule, "no model with behaviour 'aware-err' in this run",
                          section="construction")
    c = card[np.isfinite(card[column].to_numpy(float))].sort_values(column).reset_index(drop=True)
    me_name = names[0]
    if len(c) < 2 or me_name not in set(c.model):
        return no_subject(claim, paper, null, rule, f"{me_name}: no finite {column} (its crossing is undefined)",
                          section="construction")
    target = int(np.flatnonzero(c.model.to_numpy() == me_name)[0])
    me = c.iloc[target]
    nxt = c.drop(index=target).iloc[0]
    text = (f"{me_name}: {interval_text(me[column], me[f'{column}_lo'], me[f'{column}_hi'])}; smallest other: "
            f"{nxt.model} {nxt[column]:.2f}; rank {target + 1} of {len(c)}")
    out = smallest_check(c[column].to_numpy(float), c[f"{column}_hi"].to_numpy(float), target)
    verdict = {"holds": BY_CONSTRUCTION, "fails": NOT_REPRODUCED, "undecided": UNDECIDED}[out]
    decide = "" if verdict != UNDECIDED else (
        f"an interval for {me_name} narrower than its distance to {nxt.model} ({abs(nxt[column] - me[column]):.2f} "
        "in log10 metres): more scenes (the notebook's controls variant quadruples them)")
    return Claim(claim, paper, ", ".join(c.model.astype(str)), null, rule, float(me[column]),
                 float(me[f"{column}_lo"]), float(me[f"{column}_hi"]), text, verdict, decide, section="construction")


def claims_table(agreement: pd.DataFrame, card: pd.DataFrame, behaviour: Mapping[str, str]) -> pd.DataFrame:
    """Notebook 08's claims table: the agreement rows (one per pair and unit) and the construction check."""
    out = []
    models = ", ".join(evaluated(list(card.model.astype(str))))  # the subject: the evaluated models tried
    for across, g in agreement.groupby("across", sort=False):
        if across == "models":
            out += agreement_checks(g, CLAIMS, unit="model", subject=models)
        else:
            out += agreement_checks(g, CONDITION_CLAIMS, unit="corruption", subject=models)
    out.append(obs_smallest_blind_spot(card, behaviour))
    return claims_frame(out)
