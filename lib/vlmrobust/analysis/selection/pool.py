"""The candidate pool: several item sources balanced across sources and task families (seed 000, §IV-A).

"We balance the pool across source benchmarks and task families, yielding an
initial set A of 4,000 samples." The paper does not say how; here the quota
is split equally over the sources, then equally over each source's tasks
(:func:`allocate`: a group smaller than its share gives the rest to the others,
and the last few items go to the groups first in name order), and each group's
items are drawn without replacement from ``repro.rng("select.pool", seed, source, task)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ... import repro

__all__ = ["allocate", "balanced_pool"]


def allocate(n: int, capacities: Sequence[int]) -> np.ndarray:
    """Split ``n`` over groups as equally as their ``capacities`` allow (sums to ``min(n, Σ capacities)``)."""
    caps = np.asarray(capacities, dtype=np.int64)
    if n < 0 or (caps < 0).any():
        raise ValueError(f"n and capacities must be non-negative, got {n} and {caps.tolist()}")
    alloc = np.zeros(len(caps), dtype=np.int64)
    remaining = min(int(n), int(caps.sum()))
    while remaining > 0:
        open_ = np.flatnonzero(alloc < caps)
        share = remaining // len(open_)
        if share == 0:
            alloc[open_[:remaining]] += 1
            break
        add = np.minimum(share, caps[open_] - alloc[open_])
        alloc[open_] += add
        remaining -= int(add.sum())
    return alloc


def balanced_pool(items: pd.DataFrame, n: int, *, seed: int = 0, by: tuple[str, str] = ("source", "task")
                  ) -> pd.DataFrame:
    """``n`` items of ``items`` balanced over ``by[0]`` (sources), then ``by[1]`` (tasks); input order kept.

    ``n = 0`` or ``n >= len(items)`` keeps every item.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    missing = [c for c in by if c not in items.columns]
    if missing:
        raise ValueError(f"items lack column(s) {missing} to balance on")
    if n == 0 or n >= len(items):
        return items.reset_index(drop=True)
    outer, inner = by
    groups = {k: g for k, g in items.groupby(outer, sort=True)}
    keep = []
    for (src, g), quota in zip(groups.items(), allocate(n, [len(g) for g in groups.values()]), strict=True):
        tasks = {k: t for k, t in g.groupby(inner, sort=True)}
        for (task, t), q in zip(tasks.items(), allocate(int(quota), [len(t) for t in tasks.values()]), strict=True):
            rng = repro.rng("select.pool", seed, str(src), str(task))
            keep.append(t.index.to_numpy()[np.sort(rng.choice(len(t), size=int(q), replace=False))])
    idx = np.sort(np.concatenate(keep)) if keep else np.empty(0, dtype=np.int64)
    return items.loc[idx].reset_index(drop=True)
