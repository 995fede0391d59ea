"""Seed 003's claims checked on a run: notebook 06's claims table, one row per claim.

Paper rows (section ``paper``), tried on the run's **evaluated** organisms that see
(:func:`~.claims_accuracy.seeing_models`: accuracy falls with V, so a blind twin ``blind:NAME`` is no subject),
each decided by a 95 % bootstrap interval over scenes against a region from the paper (:mod:`.claims_accuracy`,
:mod:`.claims_awareness`, :mod:`.claims_controls`; each rule's null simulation is in :mod:`.rules`):

1. t2 accuracy falls to chance within a factor of 10 in V (abstract, Fig. 3);
2. water is harsher than fog, as a ratio beside the paper's and the physics' (Table V);
3. confident models (clean mean internal confidence >= 0.8) keep their internal confidence, W >= 0.79, and
   4. their verbalized one (abstract);
5. an under-confident model (clean confidence below clean accuracy) has an internal confidence that follows
   accuracy (abstract);
6. abstaining with a reason follows accuracy, W_abstain in [-0.21, 0] (abstract, Table V), and 7. with
   "I don't know" it lags for some model (Table V), both for the models that take the abstain option at all
   (blank-image abstain rate >= 0.5);
8. on t3 no awareness signal reaches its mid-level (Table V);
9. under fog the confident models' internal confidence is worse calibrated than clean (Fig. 5);
10. ImageNet-C fog severities are tens of metres (no model involved), 11. outside the failure band, 12. and
    leave accuracy within 5 points of clean (abstract, Table VII);
13. verbalized confidence stays high under three wordings (Table VI);
14. blank and shuffled images give chance accuracy, 15. the blank image keeps a high confidence, 16. and is
    abstained on (Table VIII).

Construction rows (section ``construction``), about the **controls** (zoo role ``control``, built to behave a
given way: ``aware``, ``aware-err``, ``abstainer``, ``talker``, ``talker-90``), never pooled into a paper row:
the confidence and abstain claims 3, 4, 6, 7, 13 and 16 on the controls; the sky-only check of the synthetic
world; the aware organism against its object's transmittance threshold; the error-aware organism against
|W| <= 0.1; the learned abstainer (by construction on the blank image).

Every interval of a cube statistic uses the resample counts of the blind-spot table (the same scenes move
together); the ImageNet-C rows draw their image resamples from ``rng``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.bootstrap import resample_counts
from ...stats.claims import NO_SUBJECT, Claim, claims_frame
from . import claims_accuracy as ca
from . import claims_awareness as cw
from . import claims_controls as cc
from .blind_spot import SignalCube, blind_spots, bootstrap_means, level_means
from .means import ConditionMeans, condition_means
from .readouts import signal_rows

__all__ = ["control_rows", "wording_rows", "condition_means", "claims_table", "base_name", "split_roles"]

#: The prefix of a blind twin's name (``vlmrobust.models.loading.BLIND_PREFIX``).
BLIND = "blind:"


def base_name(model: str) -> str:
    """The organism behind a model name: ``blind:NAME`` -> ``NAME`` (its zoo metadata are NAME's)."""
    return model[len(BLIND):] if model.startswith(BLIND) else model


def split_roles(models: Sequence[str], roles: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """``(evaluated, controls)``: a model whose role (``roles``, looked up by name) is ``control`` is a control;
    every other model (evaluated organisms, blind twins of them, real models) is evaluated."""
    controls = [m for m in models if roles.get(m, "") == "control"]
    return [m for m in models if m not in controls], controls


def control_rows(pred: pd.DataFrame, items: pd.DataFrame, shuffled_pred: pd.DataFrame | None = None,
                 shuffled_items: pd.DataFrame | None = None, **kw) -> pd.DataFrame:
    """Per-question signals of the conditions outside the arms (clean, ImageNet-C fog, blank, sky-only) and of
    the shuffled control (perturbation ``shuffled``), for :func:`~.means.condition_means`. ``kw``:
    :func:`~vlmrobust.analysis.visibility.readouts.signal_rows`."""
    rows = [signal_rows(pred, items, **kw)]
    if shuffled_pred is not None and len(shuffled_pred):
        shuf = signal_rows(shuffled_pred, shuffled_items, **kw)
        rows.append(shuf.assign(perturbation=np.where(shuf.perturbation == CLEAN, "shuffled", shuf.perturbation)))
    return pd.concat(rows, ignore_index=True)


def wording_rows(by_wording: Mapping[str, pd.DataFrame], items: pd.DataFrame) -> pd.DataFrame:
    """The verbalized confidence of each wording (Table VI) as signals ``verbal_<wording>``."""
    parts = []
    for name, pred in by_wording.items():
        rows = signal_rows(pred, items)
        parts.append(rows[rows.signal == "verbal"].assign(signal=f"verbal_{name}"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _note(row: Claim, blind_of: dict[str, str], section: str) -> Claim:
    """A no-subject row names the organisms left out for not seeing; a construction row speaks of controls."""
    if row.verdict != NO_SUBJECT:
        return row
    measured = row.measured
    if section == "construction":
        measured = measured.replace("evaluated organism", "control")
    if blind_of:
        measured += "; left out (they do not see): " + ", ".join(f"{m} ({why})" for m, why in blind_of.items())
    return dataclasses.replace(row, measured=measured)


def claims_table(cube: SignalCube, spots: pd.DataFrame, *, n_boot: int, boot_rng: np.random.Generator,
                 per7: pd.DataFrame, cond: ConditionMeans, wordings: ConditionMeans | None, long: pd.DataFrame,
                 distances: Mapping[str, float], behaviours: Mapping[str, str], rng: np.random.Generator,
                 roles: Mapping[str, str] | None = None, models: Sequence[str] | None = None, min_gap: float = 0.1,
                 abstain_mid: str = "fixed", murky_m: float = 15.625) -> pd.DataFrame:
    """Seed 003's claims checked on a run (the rows of the module docstring), columns of
    :data:`vlmrobust.stats.claims.CLAIM_COLUMNS`.

    ``boot_rng``: a generator seeded as the blind-spot table's, so that its ``n_boot`` resample counts of the
    scenes are that table's; ``cond``: the condition means of :func:`control_rows`; ``wordings``: those of
    :func:`wording_rows` (None without a talker); ``distances``: the boxed object's ray distance per scene;
    ``behaviours``: the zoo behaviour per model; ``roles``: the zoo role per model (``control`` for the
    controls; a blind twin takes its organism's role; missing: evaluated).
    """
    models = list(dict.fromkeys(cube.cells.model)) if models is None else list(models)
    evaluated, controls = split_roles(models, roles or {})
    counts_w = resample_counts(len(cube.scenes), n_boot, boot_rng)
    means_reps = bootstrap_means(cube, counts_w) if n_boot else np.empty((0, *level_means(cube).shape))
    means = level_means(cube)
    reps = blind_spots(means_reps[..., 1:], means_reps[..., 0], cube.chance, cube.levels_m, min_gap,
                       abstain_mid) if len(means_reps) else {}
    reps["point"] = blind_spots(means[..., 1:], means[..., 0], cube.chance, cube.levels_m, min_gap, abstain_mid)
    n = len(cube.scenes)

    def subjects(group):
        why = ca.seeing_models(cube, means_reps, group, min_gap=min_gap)
        see = [m for m in group if not why[m]]
        conf = [m for m, ok in cw.confident_models(cube, see).items() if ok]
        return see, conf, cw.abstaining_models(cond, see), {m: w for m, w in why.items() if w}

    see, conf, abst, blind_of = subjects(evaluated)
    c_see, c_conf, c_abst, c_blind = subjects(controls)
    paper = [
        ca.obs_fall_within_decade(cube, means_reps, see),
        ca.obs_water_harsher(cube, means_reps, see),
        cw.obs_confident_stay_confident(cube, spots, see, signal="internal"),
        cw.obs_confident_stay_confident(cube, spots, see, signal="verbal"),
        cw.obs_underconfident_follows(cube, means_reps, spots, see),
        cw.obs_abstain_signed(spots, abst, n),
        cw.obs_idk_lags(cube, reps, abst),
        cw.obs_t3_no_signal(spots, reps, cube, see),
        cw.obs_calibration_fog(long, conf, counts_w, cube.scenes, max_v=murky_m),
        cc.obs_imagenet_tens_of_metres(per7, n_boot, rng),
        cc.obs_imagenet_outside_band(per7, cube, means_reps, see, n_boot, rng),
        cc.obs_imagenet_near_clean(cond, see),
        cc.obs_verbal_wordings(wordings, see),
        cc.obs_controls_at_chance(cond, see),
        cc.obs_blank_confidence(cond, see),
        cc.obs_blank_abstain(cond, see),
    ]
    construction = [
        cw.obs_confident_stay_confident(cube, spots, c_see, signal="internal", section="construction"),
        cw.obs_confident_stay_confident(cube, spots, c_see, signal="verbal", section="construction"),
        cw.obs_abstain_signed(spots, c_abst, n, section="construction"),
        cw.obs_idk_lags(cube, reps, c_abst, section="construction"),
        cc.obs_verbal_wordings(wordings, c_see, section="construction"),
        cc.obs_blank_abstain(cond, c_see, section="construction"),
        cc.obs_sky_only(cond, see + c_see),
        cc.obs_aware_control(cube, means_reps, counts_w, distances, behaviours),
        cc.obs_aware_err_control(spots, behaviours, n),
        cc.obs_learned_abstainer(cond, spots, behaviours),
    ]
    return claims_frame([_note(r, blind_of, "paper") for r in paper]
                        + [_note(r, c_blind, "construction") for r in construction])
