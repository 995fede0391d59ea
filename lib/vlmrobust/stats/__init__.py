"""Statistics shared by several analyses: bootstrap over questions, calibration, grouped sums, observations.

* :mod:`.bootstrap` — resampling counts and percentile intervals (every analysis' intervals);
* :mod:`.correlation` — Spearman's ρ across units with a bootstrap interval (paired replicates or units);
* :mod:`.calibration` — reliability table, ECE, error-detection AUROC (seeds 001 and 003);
* :mod:`.grouped` — integer group codes and ``bincount`` sums, the vectorised group-by under the analyses;
* :mod:`.claims` — the claims-table type every notebook closes with, and its verdict vocabulary;
* :mod:`.nullsim` — each claim rule's false-pass rate and power, by simulation of its null.
"""

from .calibration import ece, error_auroc, reliability
from .claims import (
                     CLAIM_COLUMNS,
                     VERDICTS,
                     Claim,
                     claims_frame,
                     combine,
                     decide_text,
                     interval_text,
                     no_subject,
                     verdict,
)

__all__ = ["CLAIM_COLUMNS", "VERDICTS", "Claim", "claims_frame", "combine", "decide_text", "ece", "error_auroc",
           "interval_text", "no_subject", "reliability", "verdict"]
