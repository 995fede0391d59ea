"""Metrics computed from the predictions table.

Seed 000 (Bench-C) structural diagnosis: :func:`pairs` (Eqs. 7–12 per
clean–corrupted pair), :func:`state_effects` (state and source attribution,
Eqs. 13–16), the model tables (:func:`table_ii`, :func:`table_iii`,
:func:`table_iv`, :func:`table_vi`), severity :func:`trajectories` and
question-level bootstrap intervals; calibration (:mod:`~vlmrobust.metrics.calibration`: reliability,
ECE, error-detection AUROC); and the observations tables every notebook closes with
(:mod:`~vlmrobust.metrics.observations`).
"""

from .attribution import state_effects
from .calibration import ece, error_auroc, reliability
from .observations import OBSERVATION_COLUMNS, Check, bench_c_observations, observations_table
from .pairs import STATES, pairs, probs_matrix
from .ras import alignment, normalised_entropy, ras, top1
from .tables import (
    REGIME_NAMES,
    REGIME_STATES,
    REGIMES,
    regime_examples,
    regime_of,
    table_ii,
    table_iii,
    table_iv,
    table_vi,
)
from .trajectories import TRAJECTORY_CLASSES, classify_paths, trajectories, trajectory_summary

__all__ = [
    "STATES", "REGIMES", "REGIME_NAMES", "REGIME_STATES", "TRAJECTORY_CLASSES", "OBSERVATION_COLUMNS",
    "Check", "observations_table", "bench_c_observations", "regime_examples", "ece", "error_auroc", "reliability",
    "pairs", "probs_matrix", "alignment", "normalised_entropy", "ras", "top1",
    "state_effects", "table_ii", "table_iii", "table_iv", "table_vi", "regime_of",
    "classify_paths", "trajectories", "trajectory_summary",
]
