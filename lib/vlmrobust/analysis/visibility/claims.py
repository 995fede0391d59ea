"""Seed 003's claims checked on a run: notebook 06's observations table, one row per claim.

The rows, in order (each decided by an interval against a region from the
paper, :mod:`vlmrobust.analysis.visibility.means`; the checks live in
:mod:`.claims_signals` and :mod:`.claims_controls`):

1. t2 accuracy falls to chance within a factor of 10 in V (abstract, Fig. 3);
2. water is harsher than fog, as a ratio beside the paper's and the physics' (Table V);
3. confident models keep their internal confidence, W >= 0.79, and 4. their verbalized one (abstract);
5. the under-confident model's internal confidence follows accuracy (abstract);
6. abstaining with a reason follows accuracy, W_abstain in [-0.21, 0], signed (abstract, Table V);
7. with "I don't know" the abstain option lags for some model, a share (Table V);
8. on t3 no awareness signal reaches its mid-level (Table V);
9. under fog the internal confidence is worse calibrated than clean (Fig. 5);
10. ImageNet-C fog severities are tens of metres, 11. outside the failure band, 12. and leave accuracy within
    5 points of clean (abstract, Table VII);
13. verbalized confidence stays high under three wordings (Table VI);
14. blank and shuffled images give chance accuracy, 15. the blank image keeps a high confidence, 16. and is
    abstained on (Table VIII);
17. the sky-only control (the testbed's);
18. the aware organism against its object's transmittance threshold, 19. the error-aware organism against
    |W| <= 0.1 (the testbed's controls).

Every interval of a cube statistic uses the resample counts of the
blind-spot table (the same scenes move together); the other intervals draw from
``rng`` in the order above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.bootstrap import resample_counts
from ...stats.claims import claims_frame
from . import claims_controls, claims_signals
from .blind_spot import SignalCube, blind_spots, bootstrap_means, level_means
from .means import ConditionMeans, condition_means
from .readouts import signal_rows

__all__ = ["control_rows", "wording_rows", "condition_means", "claims_table"]


def control_rows(pred: pd.DataFrame, items: pd.DataFrame, shuffled_pred: pd.DataFrame | None = None,
                 shuffled_items: pd.DataFrame | None = None, **kw) -> pd.DataFrame:
    """Per-question signals of the conditions outside the arms (clean, ImageNet-C fog, blank, sky-only) and of
    the shuffled control (perturbation ``shuffled``), for :func:`~.verdicts.condition_means`. ``kw``:
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


def claims_table(cube: SignalCube, spots: pd.DataFrame, *, n_boot: int, boot_rng: np.random.Generator,
                            per7: pd.DataFrame,
                            cond: ConditionMeans, wordings: ConditionMeans | None, long: pd.DataFrame,
                            distances: Mapping[str, float], behaviours: Mapping[str, str],
                            rng: np.random.Generator, models: Sequence[str] | None = None, min_gap: float = 0.1,
                            abstain_mid: str = "fixed", murky_m: float = 15.625) -> pd.DataFrame:
    """Seed 003's claims checked on a run (the rows of the module docstring).

    ``boot_rng``: a generator seeded as the blind-spot table's, so that its
    ``n_boot`` resample counts of the scenes are that table's; ``cond``: the condition
    means of :func:`control_rows`; ``wordings``: those of :func:`wording_rows`
    (None without a talker); ``distances``: the boxed object's ray distance per
    scene; ``behaviours``: the zoo behaviour per model.
    """
    models = list(dict.fromkeys(cube.cells.model)) if models is None else list(models)
    counts_w = resample_counts(len(cube.scenes), n_boot, boot_rng)
    means_reps = bootstrap_means(cube, counts_w) if n_boot else np.empty((0, *level_means(cube).shape))
    reps = blind_spots(means_reps[..., 1:], means_reps[..., 0], cube.chance, cube.levels_m, min_gap,
                       abstain_mid) if len(means_reps) else {}
    confident = claims_signals.confident_models(cube, "t2", "fog", 0.8)
    return claims_frame([
        claims_signals.obs_fall_within_decade(cube, means_reps, min_gap=min_gap),
        claims_signals.obs_water_harsher(cube, means_reps, min_gap=min_gap),
        claims_signals.obs_confident_stay_confident(cube, spots, signal="internal"),
        claims_signals.obs_confident_stay_confident(cube, spots, signal="verbal"),
        claims_signals.obs_underconfident_follows(cube, spots),
        claims_signals.obs_abstain_signed(spots),
        claims_signals.obs_idk_lags(cube, spots, reps),
        claims_signals.obs_t3_no_signal(spots, reps, cube),
        claims_signals.obs_calibration_fog(long, confident, n_boot, rng, max_v=murky_m),
        claims_controls.obs_imagenet_tens_of_metres(per7, n_boot, rng),
        claims_controls.obs_imagenet_outside_band(per7, cube, means_reps, n_boot, rng),
        claims_controls.obs_imagenet_near_clean(cond, models),
        claims_controls.obs_verbal_wordings(wordings, models),
        claims_controls.obs_controls_at_chance(cond, models),
        claims_controls.obs_blank_confidence(cond, models),
        claims_controls.obs_blank_abstain(cond, models),
        claims_controls.obs_sky_only(cond, models),
        claims_controls.obs_aware_control(cube, means_reps, counts_w, distances, behaviours),
        claims_controls.obs_aware_err_control(spots, behaviours),
        claims_controls.obs_learned_abstainer(cond, spots, behaviours),
    ])
