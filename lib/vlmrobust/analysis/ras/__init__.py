"""The structural diagnosis of seed 000 (Bench-C, §V–VII): the analysis of notebook 04.

Computed from the predictions table: :func:`pairs` (Eqs. 7–12 per
clean–corrupted pair), :func:`state_effects` (state and source attribution,
Eqs. 13–16), the model tables (:func:`table_ii`, :func:`table_iii`,
:func:`table_iv`, :func:`table_vi`), severity :func:`trajectories` and
question-level bootstrap intervals, and the paper's four observations decided on a run against a model that
cannot see (:func:`claims_table`; the rules' calibration in :mod:`.rules`). Modules: :mod:`.components`
(Eqs. 7–11), :mod:`.pairs`,
:mod:`.attribution`, :mod:`.tables` (with :func:`~.tables.with_ci`, Table II's display form),
:mod:`.trajectories`, :mod:`.cube` (the pair table as arrays, the question bootstrap), :mod:`.claims`,
:mod:`.rules`, :mod:`.simulate` (a predictions table without a model), and
:mod:`.figures` (the notebook's Figs. 4, 5/11, 6, 7 and 12, drawn from the tables above).

The package is the notebook's one import: :class:`Params` checks its parameters in one call (:mod:`.params`),
and what else it uses is re-exported here flat (``ras.pairs``,
``ras.with_ci``, ``ras.simulate_predictions``, ...), and the figures are ``ras.figures.<fn>``.
"""

from ...score.probs import probs_matrix
from . import figures
from .attribution import state_effects
from .claims import claims_table
from .components import alignment, normalised_entropy, ras, top1
from .exercises import exercise_04_1, exercise_04_2, exercise_04_3
from .pairs import STATES, pairs
from .params import Params
from .simulate import simulate_predictions
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
    with_ci,
)
from .trajectories import TRAJECTORY_CLASSES, classify_paths, trajectories, trajectory_summary

__all__ = [
    "Params", "STATES", "REGIMES", "REGIME_NAMES", "REGIME_STATES", "TRAJECTORY_CLASSES",
    "claims_table", "regime_examples",
    "pairs", "probs_matrix", "alignment", "normalised_entropy", "ras", "top1",
    "state_effects", "table_ii", "table_iii", "table_iv", "table_vi", "regime_of",
    "classify_paths", "trajectories", "trajectory_summary", "simulate_predictions", "with_ci",
    "figures",
    "exercise_04_1",
    "exercise_04_2",
    "exercise_04_3",
]
