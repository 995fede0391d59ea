"""The reliability card's read-outs beyond the four papers (notebook 08 builds on them).

* :mod:`.readouts` — ImageNet-C's corruption error (CE, mCE, relative mCE, against a reference model) and
  the answer-order control (option orders, flip rate, position rate), with paired bootstrap intervals;
* :mod:`.agreement` — do the lenses agree: Spearman's rho between two read-outs across models, with its
  interval and a verdict in the stated direction, as observation rows.
"""

from .agreement import AGREEMENT_COLUMNS, agreement_checks, agreement_table
from .readouts import (
           ORDER,
           answer_order_flips,
           corruption_errors,
           error_cells,
           mce,
           option_orders,
           permute_options,
)

__all__ = ["AGREEMENT_COLUMNS", "ORDER", "agreement_checks", "agreement_table", "answer_order_flips", "corruption_errors", "error_cells", "mce", "option_orders",
           "permute_options"]
