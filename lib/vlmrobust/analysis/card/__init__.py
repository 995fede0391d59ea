"""The reliability card (notebook 08): every lens on the same models and the same corrupted inputs.

The package is the notebook's one import (``from vlmrobust.analysis import card``): :class:`Params` checks its
parameters in one call, the names below are re-exported flat (:data:`__all__`), and the figures stay a module,
``card.figures``.

* :mod:`.params` — the notebook's parameters and their checks (:class:`Params`);
* :mod:`.inputs` — the card's one sweep: ImageNet-C, BRUCE's ladders and traversals, fog and water on a
  visibility levels, the abstain and option-order variants of the items, probes from the same forwards;
* :mod:`.readouts` — read-outs the four papers do not give: ImageNet-C's corruption error (CE, mCE, relative
  mCE, against a reference model, decided on counts) and the answer-order control (rotations of the options:
  CircularEval accuracy, flip rate, position rate);
* :mod:`.lenses` — one row per model: RAS with R_c / R_w (seed 000), mCE, RCI_mu and T-RCI (seed 001), drift as
  a share of control (seed 002), W per signal (seed 003), ECE beside its calibrated null, CircularEval accuracy
  and the flip and position rates, each with its interval;
* :mod:`.agreement` — do the lenses agree: Spearman's rho between two read-outs across models (or conditions),
  against its permutation null, with a verdict in the stated direction;
* :mod:`.claims` — the agreement rows (evaluated models only) and the controls' construction check;
* :mod:`.rules` — the claim rules drawn from their nulls at the notebook's default size;
* :mod:`.figures` — the cards side by side, and the agreement scatters.
"""

from . import figures
from .agreement import AGREEMENT_COLUMNS, MIN_UNITS, agreement_checks, agreement_table, rank_test
from .claims import behaviours, claims_table, condition_lenses, evaluated, model_agreement, with_losses, zoo_name
from .exercises import exercise_08_1, exercise_08_2, exercise_08_3
from .inputs import ARMS, LADDERS, CardInputs, card_conditions, card_predictions, with_depth
from .lenses import MIN_ECE_ITEMS, READOUTS, card_long, card_table
from .params import Params
from .readouts import (
    MIN_RCE_CORRUPTIONS,
    ORDER,
    answer_order_flips,
    corruption_errors,
    error_cells,
    mce,
    option_orders,
    permute_options,
)

__all__ = ["AGREEMENT_COLUMNS", "ARMS", "LADDERS", "MIN_ECE_ITEMS", "MIN_RCE_CORRUPTIONS", "MIN_UNITS", "ORDER",
           "READOUTS", "CardInputs", "Params", "agreement_checks", "agreement_table", "answer_order_flips",
           "behaviours", "card_conditions", "card_long", "claims_table", "card_predictions", "card_table",
           "condition_lenses", "corruption_errors", "error_cells", "evaluated", "figures", "mce", "model_agreement",
           "option_orders", "permute_options", "rank_test", "with_depth", "with_losses", "zoo_name", "exercise_08_1",
           "exercise_08_2", "exercise_08_3"]
