"""The reliability card's read-outs beyond the four papers (notebook 08 builds on them).

* :mod:`.readouts` — ImageNet-C's corruption error (CE, mCE, relative mCE, against a reference model) and
  the answer-order control (option orders, flip rate, position rate), with paired bootstrap intervals.
"""

from .readouts import (
           ORDER,
           answer_order_flips,
           corruption_errors,
           error_cells,
           mce,
           option_orders,
           permute_options,
)

__all__ = ["ORDER", "answer_order_flips", "corruption_errors", "error_cells", "mce", "option_orders",
           "permute_options"]
