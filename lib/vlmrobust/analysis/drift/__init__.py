"""Same answer, different representations (seed 002): the analysis of notebook 05.

The package's face: the notebook imports it by one name (``from vlmrobust.analysis import drift``), checks its
parameters in one call (:class:`Params`, from :mod:`.params`) and calls the computational functions flat
(``drift.flip_pairs``, ``drift.invariance_table``, ...), the figures through their modules
(``drift.figures.<fn>``, ``drift.frequency_figures.<fn>``). Modules:

* :mod:`.instability` — flip pairs, instance flip rate and image vulnerability (Eq. 3, Table 1), transitions;
* :mod:`.representation` — hidden-state drift against control drift, Cohen's d (§3.3, §4.3–4.4);
* :mod:`.dirichlet` — Dirichlet energy of the vision-token grid and its change (§3.3, App. E);
* :mod:`.prior` — drift to the prior on yes/no questions (POPE, §7);
* :mod:`.frequency` — signed margins, flip curves and thresholds of the frequency experiments (§6, App. F);
* :mod:`.protocol` — the paper's protocol: shift reading, disjoint subsets, set-apart instances, POPE prompt;
* :mod:`.claims` — findings (i)–(v) and the patterns of §4 checked on a run, each against a stated null
  (:mod:`.claims_scale` holds finding (iv) and its size ladder, :mod:`.claims_patterns` the probe-based rows,
  :mod:`.claims_base` the row builder they share, :mod:`.itemboot` the item bootstrap, :mod:`.decisions` the
  decisions and :mod:`.rules` their simulations at the default size);
* :mod:`.figures` — the notebook's figures of labels, drift, Dirichlet energy, the prior and scale (Figs. 1-3, 5,
  10-14); :mod:`.frequency_figures` — those of the frequency experiments (Figs. 15-20).

``cohens_d`` is not re-exported flat: :func:`.representation.cohens_d` (of two samples) and
:func:`.itemboot.cohens_d` (on bootstrap replicates) differ; name the module.
"""

from . import figures, frequency_figures
from .claims import DriftRun, claims_table
from .claims_base import role_of, zoo_name
from .claims_scale import SizeLadder
from .dirichlet import energy_drift_correlation, energy_table
from .exercises import exercise_05_1, exercise_05_2, exercise_05_3
from .frequency import (
    example_items,
    flip_curve,
    instance_spectral_drift,
    pgd_attacks,
    spread_items,
    threshold_summary,
    threshold_table,
)
from .instability import flip_pairs, ifr_iv, label, overlay_decomposition, scale_table, transitions
from .params import Params
from .prior import (
    drift_by_perturbation,
    margin_shift,
    pope_rows,
    pope_transitions,
    prior_summary,
    yes_no_subset,
)
from .protocol import (
    SET_APART,
    across_subsets,
    check_gt_changing,
    disjoint_subsets,
    model_sizes,
    natural_predictions,
    one_token_options,
    table_pairs,
)
from .representation import (
    TABLE4_COLUMNS,
    TABLE7_COLUMNS,
    drift_vs_control,
    invariance_cells,
    invariance_table,
    layer_curves,
    noise_floor,
    with_flips,
    with_interval,
    with_similarity,
)

__all__ = [
    "figures", "frequency_figures",
    "SET_APART", "TABLE4_COLUMNS", "TABLE7_COLUMNS", "DriftRun", "SizeLadder", "Params",
    "flip_pairs", "ifr_iv", "label", "overlay_decomposition", "scale_table", "transitions",
    "drift_vs_control", "invariance_cells", "invariance_table", "layer_curves", "noise_floor", "with_flips",
    "with_interval", "with_similarity",
    "energy_drift_correlation", "energy_table",
    "drift_by_perturbation", "margin_shift", "pope_rows", "pope_transitions", "prior_summary", "yes_no_subset",
    "example_items", "flip_curve", "instance_spectral_drift", "pgd_attacks", "spread_items", "threshold_summary",
    "threshold_table",
    "across_subsets", "check_gt_changing", "disjoint_subsets", "model_sizes", "natural_predictions",
    "one_token_options", "table_pairs",
    "claims_table", "role_of", "zoo_name",
    "exercise_05_1",
    "exercise_05_2",
    "exercise_05_3",
]
