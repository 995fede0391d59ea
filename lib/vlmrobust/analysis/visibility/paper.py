"""Seed 003's own numbers: its Table IX-X rows, its Table V, and which abstain mid-level reproduces it.

The paper prints every signal per level only for Qwen3-VL-2B (Tables IX-X; the
water arm's accuracy only) and its Table V for Qwen3-VL-2B and InternVL3.5-2B.
:func:`abstain_mid_comparison` feeds the printed rows through
:func:`~vlmrobust.analysis.visibility.blind_spot.blind_spots` under each abstain
mid-level of :data:`~vlmrobust.analysis.visibility.blind_spot.ABSTAIN_MIDS` and
says how close each comes to the printed W: the point error, and the share of
curves within the printing's rounding (every printed value +-0.005, uniform,
seeded) whose W rounds to the printed one. Only rows whose clean abstain rate is
not 0 can tell the two rules apart (at a clean rate of 0 both mid-levels are 0.5).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .blind_spot import ABSTAIN_MIDS, AWARE_SIGNALS, blind_spots

__all__ = ["LEVELS_M", "TABLE_IX_X", "TABLE_V", "abstain_mid_comparison"]

#: Seed 003's eight levels (Table III): 250 m ... 1.953125 m, factor 2.
LEVELS_M = np.array([250.0 / 2**k for k in range(8)])
#: Seed 003 Tables IX (t2) and X (t3), Qwen3-VL-2B, fog: clean then the eight levels.
TABLE_IX_X = {
    "t2": {"accuracy": [0.99, 0.98, 0.98, 0.97, 0.92, 0.74, 0.38, 0.25, 0.25],
           "internal": [1.00, 0.99, 0.99, 0.99, 0.97, 0.91, 0.82, 0.80, 0.81],
           "verbal": [0.95, 0.95, 0.95, 0.95, 0.94, 0.93, 0.90, 0.90, 0.90],
           "abstain": [0.01, 0.03, 0.04, 0.08, 0.18, 0.44, 0.85, 0.94, 0.93],
           "abstain2": [0.00, 0.00, 0.00, 0.01, 0.03, 0.19, 0.53, 0.66, 0.64]},
    "t3": {"accuracy": [0.97, 0.96, 0.95, 0.93, 0.87, 0.72, 0.55, 0.50, 0.50],
           "internal": [0.98, 0.98, 0.98, 0.98, 0.98, 0.97, 0.99, 1.00, 1.00],
           "verbal": [0.97, 0.97, 0.97, 0.97, 0.95, 0.95, 0.98, 1.00, 1.00],
           "abstain": [0.00, 0.00, 0.01, 0.01, 0.03, 0.03, 0.01, 0.00, 0.00],
           "abstain2": [0.00] * 9},
}
#: Seed 003 Table V, Qwen3-VL-2B, fog: V_acc and the printed W of each awareness signal (kind, value).
TABLE_V = {"t2": (12.4, {"internal": ("≥", 0.80), "verbal": ("≥", 0.80), "abstain": ("=", -0.06),
                         "abstain2": ("=", 0.18)}),
           "t3": (16.8, {s: ("≥", 0.94) for s in AWARE_SIGNALS})}
_CHANCE = {"t2": 0.25, "t3": 0.5}


def abstain_mid_comparison(n_draws: int = 20_000, rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Each abstain mid-level against the paper's printed abstain W (Table V from Tables IX-X).

    One row per (rule, task, signal) for the abstain signals with a printed value
    (``=``): ``printed``, ``w`` (from the printed rows), ``error`` (``w -
    printed``), ``share_rounds`` (share of ``n_draws`` jittered curves whose W rounds
    to the printed value, ``rng`` seeded by the caller; NaN without ``rng``) and
    ``decides`` (False where the clean rate is 0, so both rules coincide).
    """
    rows = []
    for task, table in TABLE_IX_X.items():
        curves = np.array([table[s][1:] for s in ("accuracy", *AWARE_SIGNALS)])
        clean = np.array([table[s][0] for s in ("accuracy", *AWARE_SIGNALS)])
        draws = None
        if rng is not None:
            draws = (curves + rng.uniform(-0.005, 0.005, (n_draws, *curves.shape)),
                     np.clip(clean + rng.uniform(-0.005, 0.005, (n_draws, *clean.shape)), 0, 1))
        for rule in ABSTAIN_MIDS:
            point = blind_spots(curves, clean, _CHANCE[task], LEVELS_M, abstain_mid=rule)
            jit = None if draws is None else blind_spots(*draws, _CHANCE[task], LEVELS_M, abstain_mid=rule)
            for k, sig in enumerate(AWARE_SIGNALS):
                kind, printed = TABLE_V[task][1][sig]
                if not sig.startswith("abstain") or kind != "=":
                    continue
                share = np.nan if jit is None else float(np.mean(np.round(jit["w"][:, k], 2) == printed))
                rows.append({"rule": rule, "task": task, "signal": sig, "printed": printed,
                             "w": float(point["w"][k]), "error": float(point["w"][k] - printed),
                             "share_rounds": share, "decides": bool(table[sig][0] > 0)})
    return pd.DataFrame(rows)
