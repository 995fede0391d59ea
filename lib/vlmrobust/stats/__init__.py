"""Statistics shared by several analyses: bootstrap over questions, calibration, grouped sums, observations.

* :mod:`.bootstrap` — resampling counts and percentile intervals (every analysis' intervals);
* :mod:`.correlation` — Spearman's ρ across units with a bootstrap interval (paired replicates or units);
* :mod:`.calibration` — reliability table, ECE, error-detection AUROC (seeds 001 and 003);
* :mod:`.grouped` — integer group codes and ``bincount`` sums, the vectorised group-by under the analyses;
* :mod:`.claims` — the observations-table type every notebook closes with.
"""

from .calibration import ece, error_auroc, reliability
from .claims import CLAIM_COLUMNS, Claim, claims_frame, combine, interval_text, verdict

__all__ = ["CLAIM_COLUMNS", "Claim", "claims_frame", "combine", "ece", "error_auroc", "interval_text", "reliability",
           "verdict"]
