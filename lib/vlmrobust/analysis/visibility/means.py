"""Per-scene condition means for notebook 06's claim rows, and their bootstrap replicates.

Every row of :mod:`vlmrobust.analysis.visibility.claims` compares a
statistic's 95 % bootstrap interval (over scenes, seeded) with an acceptance
region ``[low, high]`` taken from seed 003 (or from the testbed's design, for its
controls), by the decision rule every analysis shares:
:func:`vlmrobust.stats.claims.verdict` (``reproduced`` when the interval lies inside
the region, ``not reproduced`` when wholly outside, ``undecided`` otherwise) and
:func:`~vlmrobust.stats.claims.combine` (a claim made for several models or
cells is reproduced when every part is, not reproduced when any part is not).

:class:`ConditionMeans` holds the per-scene means of conditions outside the
visibility arms (ImageNet-C fog, blank, shuffled and sky-only images, clean) and
their bootstrap replicates, so that differences against the clean image are
paired over scenes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.bootstrap import percentile_interval, replicate_sums, resample_counts

__all__ = ["ConditionMeans", "condition_means"]


@dataclass
class ConditionMeans:
    """Means per (model, task, perturbation, level, signal) and their bootstrap replicates over scenes."""

    keys: pd.DataFrame
    point: np.ndarray
    reps: np.ndarray
    n_scenes: int = 0

    def find(self, model: str, task: str, perturbation: str, signal: str, level: int | None = None) -> int | None:
        k = self.keys
        sel = (k.model == model) & (k.task == task) & (k.perturbation == perturbation) & (k.signal == signal)
        if level is not None:
            sel &= k.level == level
        hit = np.flatnonzero(sel.to_numpy())
        return int(hit[0]) if hit.size else None

    def value(self, *key, level: int | None = None, ci: float = 0.95) -> tuple[float, float, float]:
        """``(mean, lo, hi)`` of one condition; NaN when absent."""
        i = self.find(*key, level=level)
        if i is None:
            return np.nan, np.nan, np.nan
        lo, hi = percentile_interval(self.reps[:, i], ci) if len(self.reps) else (np.nan, np.nan)
        return float(self.point[i]), float(lo), float(hi)

    def diff(self, a: tuple, b: tuple, level_a: int | None = None, ci: float = 0.95) -> tuple[float, float, float]:
        """``(mean_a - mean_b, lo, hi)``, paired over the same resampled scenes; NaN when either is absent."""
        i, j = self.find(*a, level=level_a), self.find(*b)
        if i is None or j is None:
            return np.nan, np.nan, np.nan
        d = self.reps[:, i] - self.reps[:, j]
        lo, hi = percentile_interval(d, ci) if len(d) else (np.nan, np.nan)
        return float(self.point[i] - self.point[j]), float(lo), float(hi)


def condition_means(rows: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> ConditionMeans:
    """:class:`ConditionMeans` of a table of per-question signals (``model, task, perturbation, level, scene,
    signal, value``, e.g. :func:`vlmrobust.analysis.visibility.readouts.signal_rows`).

    Scenes are resampled with replacement (``n_boot`` resamples of
    :func:`vlmrobust.stats.bootstrap.resample_counts`); a question without a value
    (an unparsed verbalized confidence) counts for nothing.
    """
    need = ["model", "task", "perturbation", "level", "scene", "signal", "value"]
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise ValueError(f"rows lack {missing}; they need {need}")
    data = rows[np.isfinite(rows["value"].to_numpy(np.float64))]
    kcols = ["model", "task", "perturbation", "level", "signal"]
    keys = data[kcols].drop_duplicates().reset_index(drop=True)
    k_idx = pd.MultiIndex.from_frame(keys).get_indexer(pd.MultiIndex.from_frame(data[kcols]))
    scenes = np.array(sorted(set(data["scene"])), dtype=object)
    s_idx = pd.Index(scenes).get_indexer(data["scene"])
    sums, counts = np.zeros((len(scenes), len(keys))), np.zeros((len(scenes), len(keys)))
    np.add.at(sums, (s_idx, k_idx), data["value"].to_numpy(np.float64))
    np.add.at(counts, (s_idx, k_idx), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = sums.sum(0) / counts.sum(0)
        if n_boot and len(scenes):
            w = resample_counts(len(scenes), n_boot, rng)
            reps = replicate_sums(w, sums) / replicate_sums(w, counts)
        else:
            reps = np.empty((0, len(keys)))
    return ConditionMeans(keys, point, reps, len(scenes))
