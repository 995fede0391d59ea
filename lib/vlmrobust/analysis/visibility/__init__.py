"""Visibility blind spots (seed 003): the analysis of notebook 06.

The package is the notebook's one import (``from vlmrobust.analysis import visibility``): :class:`Params` checks
its parameters in one call, the names below are re-exported flat (:data:`__all__`), and the figures stay a
module, ``visibility.figures``.

* :mod:`.params` — the notebook's parameters and their checks (:class:`Params`);
* :mod:`.readouts` — the per-question signals, calibration, transmittance and ImageNet-C fog in metres;
* :mod:`.blind_spot` — curves, half-way crossings V_acc / V_aware and the blind-spot width W, bootstrapped;
* :mod:`.wfit` — W from fitted logistic curves in log V (the project's reading beside the literal crossing),
  with its bootstrap table; the fit itself is :mod:`.wfit_curve`, and :mod:`.wfit_sim` draws the simulated runs
  with a known W that validate it;
* :mod:`.paper` — the paper's own Table IX-X rows and Table V, and the abstain mid-level that reproduces it;
* :mod:`.means` — the condition means behind the rows (how a row decides, an interval against a region from
  the paper, is :func:`vlmrobust.stats.claims.verdict`);
* :mod:`.claims` — the notebook's claims table (:func:`claims_table`), assembled from
  :mod:`.claims_accuracy` (the paper's claims about accuracy, and which models see),
  :mod:`.claims_awareness` (its claims about confidence and abstaining) and
  :mod:`.claims_controls` (the ImageNet-C and blank controls, and the testbed's control organisms), on the shared
  reading of :mod:`.claims_base` (W as a bound, one row over several models); each rule is checked against its
  null by simulation in :mod:`.rules`;
* :mod:`.tables` — Tables IV–X laid out as printed (presentation of numbers computed above);
* :mod:`.figures` — Figs. 2–8 and accuracy against the object's transmittance, drawn from those tables.
"""

from . import figures, wfit
from .blind_spot import ABSTAIN_MIDS, blind_spot_table, level_means, signal_cube
from .claims import base_name, claims_table, control_rows, split_roles, wording_rows
from .exercises import exercise_06_1, exercise_06_2, exercise_06_3
from .means import condition_means
from .paper import abstain_mid_comparison
from .params import Params
from .readouts import (
    INTERNAL,
    accuracy_vs_transmittance,
    calibration_by_level,
    condition_summary,
    imagenet_fog_visibility,
    pooled_reliability,
    signals_long,
    verbal_wordings_table,
)
from .tables import (
    calibration_wide,
    controls_table,
    fog_severity_table,
    murky_table,
    parse_rate_table,
    signal_tables,
    table_v,
)

__all__ = ["ABSTAIN_MIDS", "INTERNAL", "Params", "abstain_mid_comparison", "accuracy_vs_transmittance", "base_name",
           "blind_spot_table", "calibration_by_level", "calibration_wide", "condition_means", "condition_summary",
           "control_rows", "controls_table", "figures", "fog_severity_table", "imagenet_fog_visibility", "level_means",
           "murky_table", "parse_rate_table", "pooled_reliability", "signal_cube", "signal_tables", "signals_long",
           "table_v", "verbal_wordings_table", "wfit", "claims_table", "split_roles", "wording_rows", "exercise_06_1",
           "exercise_06_2", "exercise_06_3"]
