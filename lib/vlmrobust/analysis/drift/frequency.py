"""Frequency read-outs of seed 002 §6 and App. F: signed margins, flip curves, flip thresholds.

* :func:`signed_margin` - the margin of the **base** option: ``s_base - max_{j != base} s_j``
  in the scoring method's units (Figs. 16, 19: "base option minus strongest
  competitor"), negative once the answer has flipped; on the clean image it is
  the usual top-minus-runner-up margin (seed 002 Eq. 2);
* :func:`flip_curve` - flip rate per condition parameter (noise ``eps``, cutoff ``c``), Fig. 17;
* :func:`flip_thresholds` - per item the cutoff at which the answer flips under an
  ablation (Fig. 18). ``rule="smallest"`` is the paper's wording, the smallest
  cutoff ``c`` whose image flips the answer; ``rule="first"`` is the first flip
  along the path from the mildest to the harshest ablation (low-pass keep:
  decreasing ``c``; high-pass keep: increasing ``c``). For high-pass keep the two
  agree; for low-pass keep "smallest" is the lowest cutoff that still flips.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["signed_margin", "flip_curve", "flip_thresholds"]


def signed_margin(logits: Sequence[Sequence[float]], base: Sequence[int]) -> np.ndarray:
    """``s_base - max_{j != base} s_j`` per row (NaN for K < 2 or missing scores)."""
    out = np.full(len(base), np.nan)
    for i, (s, b) in enumerate(zip(logits, base, strict=True)):
        if s is None or len(s) < 2:
            continue
        s = np.asarray(s, dtype=np.float64)
        out[i] = s[int(b)] - np.delete(s, int(b)).max()
    return out


def flip_curve(pairs: pd.DataFrame, by: Sequence[str] = ("model", "perturbation")) -> pd.DataFrame:
    """Flip rate and mean signed margin per group and level parameter (``param``), clean first as 0."""
    p = pairs.assign(signed=signed_margin(pairs["logits"], pairs["base_pred"]))
    g = p.groupby(list(by) + ["level", "param"], sort=True)
    return g.agg(flip_rate=("flip", "mean"), signed_margin=("signed", "mean"), n=("flip", "size")).reset_index()


def flip_thresholds(pairs: pd.DataFrame, rule: str = "smallest", by: Sequence[str] = ("model", "perturbation")
                    ) -> pd.DataFrame:
    """Per item and ablation, the flip threshold of ``rule`` (NaN when no cutoff flips the answer).

    ``pairs``: ablation instances with ``level`` (1 = mildest) and ``param`` (the cutoff).
    """
    if rule not in ("smallest", "first"):
        raise ValueError(f"rule must be 'smallest' or 'first', got {rule!r}")
    rows = []
    for key, g in pairs.groupby(list(by) + ["item_id"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        flipped = g[g["flip"]]
        if flipped.empty:
            c = np.nan
        elif rule == "smallest":
            c = float(flipped["param"].min())
        else:
            c = float(flipped.sort_values("level")["param"].iloc[0])
        rows.append({**dict(zip(list(by) + ["item_id"], key, strict=True)), "threshold": c})
    return pd.DataFrame(rows)
