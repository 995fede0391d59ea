"""Statistics shared by several analyses: bootstrap over questions, calibration, grouped sums, observations.

* :mod:`.bootstrap` — resampling counts and percentile intervals (every analysis' intervals);
* :mod:`.correlation` — Spearman's ρ across units with a bootstrap interval (paired replicates or units);
* :mod:`.calibration` — reliability table, ECE, error-detection AUROC (seeds 001 and 003);
* :mod:`.grouped` — integer group codes and ``bincount`` sums, the vectorised group-by under the analyses;
* :mod:`.observations` — the observations-table type every notebook closes with.
"""

from .calibration import ece, error_auroc, reliability
from .observations import OBSERVATION_COLUMNS, Check, observations_table

__all__ = ["OBSERVATION_COLUMNS", "Check", "ece", "error_auroc", "observations_table", "reliability"]
