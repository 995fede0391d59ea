"""Structure of the vision-token grid: Dirichlet energy and its change (seed 002 §3.3, §4.5, App. E).

``E(Z) = sum over 4-neighbour edges (i,j) ~ (i',j'), each counted once, of ||z_ij - z_i'j'||^2``
(§3.3) on the ``rows x cols`` grid of vision tokens, and
``dE = E(x') - E(x)`` (App. E.1). The grid is, by default, the decoder's states at
the image-token positions at the final (post-norm) layer
(:mod:`vlmrobust.forward.layout` says which view of each architecture); the probe
shards keep E at every layer (``energy_layers``).

* :func:`dirichlet_energy`, :func:`n_edges` - the energy of one or many grids;
* :func:`energy_table` - Table 28: dE mean +- std over all instances and over the
  instances that flip the prediction;
* :func:`energy_drift_correlation` - App. E.3: Pearson correlation of dE with drift.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["dirichlet_energy", "n_edges", "energy_table", "energy_drift_correlation"]


def n_edges(rows: int, cols: int) -> int:
    """Number of 4-neighbour edges of a ``rows x cols`` grid, each once: ``rows (cols - 1) + cols (rows - 1)``."""
    if rows < 1 or cols < 1:
        raise ValueError(f"a grid needs rows, cols >= 1, got {rows} x {cols}")
    return rows * (cols - 1) + cols * (rows - 1)


def dirichlet_energy(grid: np.ndarray) -> np.ndarray | float:
    """Dirichlet energy of ``(..., rows, cols, H)`` grids (float64; a float for one grid)."""
    z = np.asarray(grid, dtype=np.float64)
    if z.ndim < 3:
        raise ValueError(f"grid must be (..., rows, cols, H), got shape {z.shape}")
    e = ((z[..., 1:, :, :] - z[..., :-1, :, :]) ** 2).sum(axis=(-3, -2, -1)) \
        + ((z[..., :, 1:, :] - z[..., :, :-1, :]) ** 2).sum(axis=(-3, -2, -1))
    return float(e) if np.ndim(e) == 0 else e


def energy_table(grid_rows: pd.DataFrame, by: Sequence[str] = ("model", "perturbation")) -> pd.DataFrame:
    """Table 28: ``dE`` mean and std over all instances and over the flip-inducing ones.

    ``grid_rows``: ``vision_grid`` drift rows with a ``flip`` column
    (:func:`vlmrobust.analysis.drift.representation.with_flips`).
    """
    g = grid_rows[grid_rows["regime"] == "vision_grid"]
    rows = []
    for key, gp in g.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        f = gp[gp["flip"].fillna(False).astype(bool)]
        rows.append({**dict(zip(by, key, strict=True)), "dE_all": float(gp["d_energy"].mean()),
                     "sd_all": float(gp["d_energy"].std(ddof=1)), "n_all": len(gp),
                     "dE_flips": float(f["d_energy"].mean()) if len(f) else np.nan,
                     "sd_flips": float(f["d_energy"].std(ddof=1)) if len(f) > 1 else np.nan, "n_flips": len(f),
                     "abs_all": float(gp["d_energy"].abs().mean()),
                     "abs_flips": float(f["d_energy"].abs().mean()) if len(f) else np.nan})
    return pd.DataFrame(rows)


def energy_drift_correlation(probes: pd.DataFrame, regime: str = "ans_mcq_free", metric: str = "cos",
                             by: Sequence[str] = ("model", "perturbation")) -> pd.DataFrame:
    """App. E.3: Pearson ``corr(dE, drift)`` over the instances of each group (drift of ``regime``)."""
    d = probes[probes["kind"] == "drift"]
    key = ["model", "item_id", "perturbation", "level"]
    e = d[d["regime"] == "vision_grid"][key + ["d_energy"]]
    x = d[d["regime"] == regime][key + [metric]]
    j = e.merge(x, on=key, how="inner")
    rows = []
    for k, g in j.groupby(list(by), sort=False):
        k = k if isinstance(k, tuple) else (k,)
        ok = np.isfinite(g["d_energy"]) & np.isfinite(g[metric])
        a, b = g.loc[ok, "d_energy"].to_numpy(), g.loc[ok, metric].to_numpy()
        r = float(np.corrcoef(a, b)[0, 1]) if len(a) > 2 and a.std() > 0 and b.std() > 0 else float("nan")
        rows.append({**dict(zip(by, k, strict=True)), "corr": r, "n": int(ok.sum())})
    return pd.DataFrame(rows)
