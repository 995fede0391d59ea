"""Seed 001's claims that apply to the model organisms, each a calibrated test on a run's tables (notebook 07).

Every function returns a :class:`~vlmrobust.stats.claims.Claim` row: the subject (the models the run's
tables hold), the null (what the claim being false looks like), the test, the statistic with its
interval and a verdict. The decisions are the pure functions of :mod:`.decide`, applied here to arrays
read from :class:`~.replicates.RunTables` (the run and its question resamples) and in :mod:`.rules` to
arrays drawn from each null (false passes) and at the paper's effect size (power).

* "Some instance" claims (O4, O6, O9, §V, S1, S3) are decided per instance: a pair of units, a unit's pair of
  directions, a model, a curve. Each instance's difference has a paired interval (both sides recomputed on the
  same resampled questions), Bonferroni-adjusted over the instances; the row reports the clearest instance.
  Their null is equal units: what question noise alone gives when the instances do not differ.
* The dataset dependence (O1/O8) is a permutation test of the questions' group labels.
* Correlations (§II-F) are read on Fisher's scale; "nearly identical" means above :data:`RHO_IDENTICAL`.
* §VI's warning share is bootstrapped over questions (a question's trajectories move together).

The statistics of the run's tables (Table I, T-RCI per direction, curves, regimes, ablation) are in
:mod:`.replicates`; this module only reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.claims import Claim, claims_frame
from .claims_base import (
    DIRECTIONS,
    RHO_IDENTICAL,
    _models,
    group_spread,
    min_rank_correlation,
    paper_models,
    rho_per_state,
    rho_rci_trci,
)
from .claims_curves import (
    accuracy_by_evidence,
    check_bottomup_hurts_more,
    latent_difference,
    obs_crop_not_blur,
    obs_latent_share,
    obs_no_spatial_model_level,
    obs_no_spatial_per_state,
    obs_non_monotone,
    obs_three_regimes,
    obs_weighting_insensitive,
)
from .claims_units import (
    obs_clean_not_robust,
    obs_corruption_vs_traversal,
    obs_dataset_dependence,
    obs_direction_dependence,
    obs_rl_most_fragile,
    obs_similar_different,
)

__all__ = ["RHO_IDENTICAL", "DIRECTIONS", "paper_models", "group_spread", "rho_rci_trci", "rho_per_state",
           "min_rank_correlation",
           "obs_similar_different", "obs_clean_not_robust", "obs_corruption_vs_traversal", "obs_dataset_dependence",
           "obs_direction_dependence", "obs_rl_most_fragile", "obs_crop_not_blur", "obs_three_regimes",
           "obs_non_monotone", "obs_weighting_insensitive", "obs_no_spatial_model_level", "obs_no_spatial_per_state",
           "obs_latent_share", "latent_difference", "check_bottomup_hurts_more", "accuracy_by_evidence",
           "claims_table"]


def claims_table(point, boot, perms, warnings: pd.DataFrame, rho_model: float, max_resid: float, *,
                 acc_tol: float = 0.05, index_gap: float = 0.05, direction_gap: float = 0.05,
                 monotone_tol: float = 0.02, latent_rng: np.random.Generator, ci: float = 0.95,
                 unit_questions: int | None = None, extra: Sequence[Claim] = ()) -> pd.DataFrame:
    """Notebook 07's claims in order: O6 (twice), O4 (two rows), O1/O8, O9 (two rows), §V, S1, S3, the
    weighting ablation, D_spatial at the model level (by construction) and per state, §VI, then ``extra``.

    ``point``/``boot``/``perms``: :class:`~.replicates.RunTables` of the run (the paper's subjects only), of
    question resamples and of group permutations; ``warnings``: :func:`~.fragility.early_warnings` of the same
    models; ``rho_model``, ``max_resid``: the model-level ablation ρ and affine residual; the thresholds as
    the notebook's parameters; ``unit_questions``: the fewest questions behind a unit (the smallest group), whose
    noise the units' standard errors carry (Student's t with one fewer degrees of freedom).
    """
    kw = dict(ci=ci, df=None if unit_questions is None else max(int(unit_questions) - 1, 1))
    return claims_frame([
        obs_similar_different(point, boot, "A_CR", "RCI_mu", acc_tol=acc_tol, gap=index_gap, **kw),
        obs_similar_different(point, boot, "A_T", "T_mu", acc_tol=acc_tol, gap=index_gap,
                              claim="6. similar traversal accuracy, different T-RCI",
                              paper="the same along T-RCI (Fig. 3)", **kw),
        obs_clean_not_robust(point, boot, **kw),
        obs_corruption_vs_traversal(point, boot, **kw),
        obs_dataset_dependence(point, boot, perms, **kw),
        obs_direction_dependence(point, boot, direction_gap, **kw),
        obs_rl_most_fragile(point, boot, **kw),
        obs_crop_not_blur(point, boot, ci=ci),
        obs_three_regimes(point, boot, ci=ci),
        obs_non_monotone(point, boot, monotone_tol, ci=ci),
        obs_weighting_insensitive(point, boot, **kw),
        obs_no_spatial_model_level(rho_model, max_resid, _models(point)),
        obs_no_spatial_per_state(point, boot, **kw),
        obs_latent_share(warnings, len(boot), latent_rng, ci),
        *extra,
    ])
