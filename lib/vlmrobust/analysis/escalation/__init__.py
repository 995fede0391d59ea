"""Robustness under corruption escalation (seed 001, BRUCE): the analysis of notebook 07.

* :mod:`.ladders` — the ladders' readings (contrast kept, crop area) and the items' mean fill, as a sweep runs them
  (§III);
* :mod:`.cells` — the per-cell sums behind every index (one pass over the predictions table);
* :mod:`.indices` — RCI, T-RCI, the worst direction and the Table I analogue (§II-D–F);
* :mod:`.ablation` — the weighting ablation and its rank correlations (§II-F);
* :mod:`.fragility` — fragility curves, regimes and latent instability (§IV-C, §V, §VI);
* :mod:`.taxonomy` — the failure taxonomy (§II-H, §VII);
* :mod:`.paper_table` — the paper's Table I as printed and the bound RCI_mu >= 0.3 (1 - A_CR) it obeys;
* :mod:`.replicates` — the run's tables on resampled questions and permuted groups (intervals and nulls);
* :mod:`.claims` — the paper's claims as calibrated tests on a run (the claims table); :mod:`.decide` — their
  decision rules, pure functions of arrays; :mod:`.rules` — each rule against its null by simulation;
* :mod:`.figures` — the notebook's figures (Figs. 3–8, the fill figures and the heatmaps), from its small tables.

The package is the notebook's one import: :class:`Params` checks its parameters in one call, the
functions and constants it uses are re-exported here flat (``escalation.cell_stats``, ``escalation.trci``,
``escalation.fragility_curves``, ...), and the figures are
``escalation.figures.<fn>``.
"""

from . import figures
from .ablation import ablation_scores, affine_residual, rank_correlations, spatial_table
from .cells import cell_stats
from .claims import accuracy_by_evidence, check_bottomup_hurts_more, claims_table, paper_models, rho_per_state
from .exercises import exercise_07_1, exercise_07_2, exercise_07_3
from .fragility import (
    curve_regimes,
    early_warnings,
    evidence_lost_share,
    fill_comparison,
    fragility_curves,
    latent_instability,
    regime_counts,
    warning_examples,
    warning_summary,
)
from .indices import FAIL_READINGS, TABLE_I_BOUND, rci, rci_notes, table_i, trci, trci_states
from .ladders import escalation_predictions, items_mean_colour, rung_images
from .paper_table import PAPER_TABLE_I, bound_fit, bound_residuals
from .params import Params
from .replicates import group_permutations, interval, item_bootstrap, run_tables
from .taxonomy import CLASSES, classify, failures, taxonomy_counts

__all__ = [
    "figures",  # the module of the notebook's figures
    "CLASSES", "FAIL_READINGS", "Params", "PAPER_TABLE_I", "TABLE_I_BOUND", "ablation_scores", "accuracy_by_evidence",
    "affine_residual", "bound_fit", "bound_residuals", "cell_stats", "check_bottomup_hurts_more", "claims_table",
    "classify", "curve_regimes", "early_warnings", "escalation_predictions", "evidence_lost_share", "failures",
    "fill_comparison", "fragility_curves", "group_permutations", "interval", "item_bootstrap", "items_mean_colour",
    "latent_instability", "paper_models", "rank_correlations", "rci", "rci_notes", "regime_counts", "rho_per_state",
    "rung_images",
    "run_tables", "spatial_table", "table_i", "taxonomy_counts", "trci", "trci_states", "warning_examples",
    "warning_summary",
    "exercise_07_1",
    "exercise_07_2",
    "exercise_07_3",
]
