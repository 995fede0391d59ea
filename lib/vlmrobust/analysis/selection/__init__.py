"""Responsiveness-based selection of a diagnostic split (seed 000 "Bench-C", §IV and suppl. II).

The pipeline of notebook 01, one module per step:

* :mod:`.responsiveness` — answer paths of the selectors over the corrupted
  severities, normalised Gini impurity (Eq. 1), κ (Eq. 2), eligibility A⁺ (Eq. 3);
* :mod:`.embed` — image (vision tower or hub encoder) and question (sentence
  encoder) embeddings;
* :mod:`.novelty` — the greedy semantic novelty ν over A⁺ (Eqs. 4–5);
* :mod:`.selection` — ``e = κ + ν`` and the strict cut at the mean (Eq. 6),
  the size-matched leave-one-selector-out Table I, semantic vs inconsistency,
  the category shift (Figs. 3(b) / 8) and the per-question table;
* :mod:`.pool` — a candidate pool balanced over sources and task families;
* :mod:`.coverage` — sources, families and L2 categories of pool and split; selectors silent on a family;
* :mod:`.nulls` — random size-matched subsets, the nulls the checks compare with;
* :mod:`.claims` — the claims table of §IV and supplement II, each claim against its null, from the rows of
  :mod:`.claims_split` (what the split is: responsiveness, κ and difficulty, Eq. 3 and novelty) and
  :mod:`.claims_stability` (the other criterion, Table I, the sources and families kept), with their shared
  pieces in :mod:`.claims_base`;
* :mod:`.decisions` — the tests behind the claims, pure functions of arrays;
* :mod:`.rules` — each test drawn from its null and at the paper's effect size (false passes, power);
* :mod:`.simulate` — a synthetic selection problem for benchmarks and scaling, and its timing;
* :mod:`.figures` — the notebook's figures (κ and G, novelty, the (κ, ν) plane, Figs. 3(a)/9(a), 3(b)/8,
  9(b–d), the scaling plot), drawn from the arrays and tables above.

The package is the notebook's one import: :class:`Params` checks its parameters in one call (:mod:`.params`),
and what else it uses is re-exported here flat (``selection.select``,
``selection.category_shift``, ``selection.time_selection``, ...), and the figures are
``selection.figures.<fn>`` (``selection.figures.category_shift`` draws what ``selection.category_shift`` counts).

>>> paths = answer_paths(pred)                    # predictions table of the selectors' sweep
>>> G = gini(paths.pred, paths.K)                 # (items, selectors, corruptions)
>>> sel = select(G, image_emb, text_emb, paths.item_ids)
>>> sel.selected, sel.kappa, sel.nu, sel.e
"""

from . import figures
from .claims import (
    CLAIM_STREAMS,
    claims_table,
    obs_evaluated_gini,
    paper_models,
)
from .coverage import (
    composition_groups,
    composition_level,
    coverage_table,
    largest_share,
    pooled_threshold,
    silent_families,
)
from .embed import IMAGE_POOLING, TEXT_ENCODER, image_embeddings, text_embeddings
from .exercises import exercise_01_1, exercise_01_2, exercise_01_3
from .novelty import TIE_DECIMALS, Novelty, greedy_novelty, normalise, preference
from .nulls import mean_shift
from .params import Params
from .pool import allocate, balanced_pool
from .responsiveness import (
    AnswerPaths,
    answer_paths,
    eligible,
    gini,
    kappa,
    path_counts,
    responsive_shares,
    selector_gini,
)
from .selection import (
    TABLE_I_COLUMNS,
    Selection,
    category_shift,
    criteria_overlap,
    jaccard,
    leave_one_out,
    select,
    selection_table,
    split_mask,
    table_i,
    top_k,
)
from .simulate import SyntheticPool, simulate_pool, time_selection

__all__ = [
    "AnswerPaths", "IMAGE_POOLING", "Novelty", "CLAIM_STREAMS", "Params", "Selection", "SyntheticPool",
    "TABLE_I_COLUMNS", "TEXT_ENCODER", "TIE_DECIMALS", "allocate", "answer_paths", "balanced_pool",
    "composition_groups", "composition_level", "coverage_table", "criteria_overlap", "eligible", "gini",
    "greedy_novelty", "image_embeddings", "jaccard", "kappa", "largest_share", "leave_one_out", "mean_shift",
    "normalise", "obs_evaluated_gini", "paper_models", "path_counts", "pooled_threshold", "preference",
    "responsive_shares",
    "select", "claims_table", "selector_gini", "silent_families", "simulate_pool", "split_mask",
    "table_i", "text_embeddings", "top_k", "category_shift", "selection_table", "time_selection",
    "figures",
    "exercise_01_1",
    "exercise_01_2",
    "exercise_01_3",
]
