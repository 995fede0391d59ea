"""Calibration of a confidence signal: reliability table, expected calibration error, error-detection AUROC.

Used by seed 003 (visibility: internal and verbalized confidence against
accuracy, Fig. 5) and seed 001 (BRUCE's D_cal = |ECE_p − ECE_clean|).

* **Bins**: ``n_bins`` equal-width bins on [0, 1]; bin ``b`` holds confidences in
  ``[b/n, (b+1)/n)``, the last bin also holds 1.0 (the usual convention).
* **ECE** = Σ_b (n_b / N) · |acc_b − conf_b| over non-empty bins, with acc_b the
  bin's accuracy and conf_b its mean confidence (Guo et al., 2017).
* **AUROC** of a confidence for *detecting errors*: the probability that a wrong
  answer has a lower confidence than a right one, ties counted one half (the
  Mann–Whitney U statistic divided by n_right · n_wrong); NaN when either group
  is empty.

NaN confidences (an unparsed verbal confidence) are dropped with their
correctness; the functions report how many were kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["bin_index", "reliability", "ece", "error_auroc"]


def _clean(conf, correct) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(conf, dtype=np.float64).reshape(-1)
    y = np.asarray(correct, dtype=bool).reshape(-1)
    if c.shape != y.shape:
        raise ValueError(f"conf and correct must have the same length, got {c.shape[0]} and {y.shape[0]}")
    keep = ~np.isnan(c)
    c, y = c[keep], y[keep]
    if ((c < 0) | (c > 1)).any():
        raise ValueError("confidences must lie in [0, 1]")
    return c, y


def bin_index(conf, n_bins: int = 10) -> np.ndarray:
    """Equal-width bin of each confidence in [0, 1] (1.0 goes to the last bin)."""
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive int, got {n_bins!r}")
    c = np.asarray(conf, dtype=np.float64)
    return np.minimum((c * n_bins).astype(np.int64), n_bins - 1)


def reliability(conf, correct, n_bins: int = 10) -> pd.DataFrame:
    """The reliability table: one row per bin (``lo``, ``hi``, ``n``, ``confidence``, ``accuracy``, ``gap``).

    Empty bins have ``n`` = 0 and NaN means. ``gap`` = accuracy − confidence.
    """
    c, y = _clean(conf, correct)
    b = bin_index(c, n_bins)
    n = np.bincount(b, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf_b = np.bincount(b, weights=c, minlength=n_bins) / n
        acc_b = np.bincount(b, weights=y.astype(np.float64), minlength=n_bins) / n
    edges = np.arange(n_bins + 1) / n_bins
    return pd.DataFrame({"lo": edges[:-1], "hi": edges[1:], "n": n, "confidence": conf_b, "accuracy": acc_b,
                         "gap": acc_b - conf_b})


def ece(conf, correct, n_bins: int = 10) -> float:
    """Expected calibration error with ``n_bins`` equal-width bins (NaN when no confidence is left)."""
    c, y = _clean(conf, correct)
    if not len(c):
        return float("nan")
    b = bin_index(c, n_bins)
    n = np.bincount(b, minlength=n_bins).astype(np.float64)
    gap = np.abs(np.bincount(b, weights=y.astype(np.float64), minlength=n_bins)
                 - np.bincount(b, weights=c, minlength=n_bins))
    return float(gap.sum() / n.sum())


def error_auroc(conf, correct) -> float:
    """AUROC of ``conf`` for separating right from wrong answers (0.5: no better than chance).

    Equals P(conf_right > conf_wrong) + ½ P(conf_right = conf_wrong), computed from
    average ranks (ties share their mean rank).
    """
    from scipy.stats import rankdata

    c, y = _clean(conf, correct)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(c)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
