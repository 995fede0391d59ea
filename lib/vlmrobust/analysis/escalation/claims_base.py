"""Shared pieces of notebook 07's claim rows: reading a run's tables into arrays, a row from a decision,
the claims' subjects, and the statistics of the run's tables that the claims read (seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from ...stats.claims import UNDECIDED, Claim, decide_text
from ...stats.correlation import spearman
from . import decide as D
from .ablation import rank_correlations

__all__ = ["RHO_IDENTICAL", "DIRECTIONS", "NAN", "paper_models", "group_spread", "rho_rci_trci", "rho_per_state",
           "min_rank_correlation"]

#: "nearly identical" rankings (§II-F: ρ ≈ 0.95, pairwise 0.95–0.99): a correlation decided above this
RHO_IDENTICAL = 0.9
DIRECTIONS = ("TD", "BU", "LR", "RL")
NAN = float("nan")


def _spearman(x, y) -> float:
    return spearman(np.asarray(x, float), np.asarray(y, float))


def _models(t) -> str:
    return ", ".join(map(str, dict.fromkeys(t.table1["model"].astype(str))))


def _n_questions(t) -> int:
    """The questions a model answered (the size an undecided row's ``decide`` text scales)."""
    return int(t.curves["n"].max()) if t.curves is not None and len(t.curves) else 0


def paper_models(models: Sequence[str]) -> list[str]:
    """The models a paper claim may be tried on: every model but the zoo's controls (organisms built to behave a
    given way); a blind twin ``blind:NAME`` counts as NAME does."""
    from ...models import zoo
    from ...models.loading import BLIND_PREFIX

    names = set(zoo.names())
    out = []
    for m in models:
        base = str(m).removeprefix(BLIND_PREFIX)
        if base not in names or zoo.role(base) != "control":
            out.append(str(m))
    return out


def _row(claim: str, paper: str, subject: str, null: str, test: str, dec: D.Decision, measured: str, n: int,
         *, edge: float = 0.0, section: str = "paper", unit: str = "questions") -> Claim:
    """A claim row from a decision; an undecided row says the size that would decide it."""
    why = ""
    if dec.verdict == UNDECIDED:
        why = (decide_text(n, dec.value, dec.lo, dec.hi, low=edge, unit=unit) if np.isfinite(dec.lo)
               else f"more {unit} per unit than now ({n:,}): the question noise is as large as what is measured, "
               "or too few resamples (n_boot) to estimate it")
    return Claim(claim, paper, subject, null, test, dec.value, dec.lo, dec.hi, measured, dec.verdict, why, section)


def _arrays(point: pd.DataFrame, reps: Sequence[pd.DataFrame], keys: Sequence[str], cols: Sequence[str]):
    """The index of ``point``'s rows, ``point[cols]`` ``(k, c)`` and the replicates aligned to it ``(B, k, c)``."""
    p = point.set_index(list(keys))[list(cols)]
    idx = p.index
    r = [q.set_index(list(keys))[list(cols)].reindex(idx).to_numpy(np.float64) for q in reps]
    return idx, p.to_numpy(np.float64), (np.stack(r) if r else np.empty((0, *p.shape)))


def _name(ix) -> str:
    return "/".join(map(str, ix)) if isinstance(ix, tuple) else str(ix)


# ----------------------------------------------------------------------------- statistics of the run's tables


def group_spread(t, column: str = "RCI_mu", group: str = "group") -> float:
    """O1/O8: max − min over groups of the models' mean ``column`` (``RCI_mu`` or ``T_mu``)."""
    m = t.table1.groupby(group, observed=True)[column].mean().dropna()
    return float(m.max() - m.min()) if len(m) > 1 else NAN


def rho_rci_trci(t) -> float:
    """O4: Spearman ρ between ``RCI_mu`` and ``T_mu`` over the units of Table I."""
    return _spearman(t.table1["RCI_mu"], t.table1["T_mu"])


def rho_per_state(t) -> float:
    """§II-F: Spearman ρ between the per-state T-RCI terms with and without D_spatial, pooled over unit ×
    direction × state (at the model level the two are an affine map and ρ = 1 by construction)."""
    return _spearman(t.states["T_equal"], t.states["T_no_spatial"])


def _scheme_pairs(ablation: pd.DataFrame) -> list[tuple[str, str]]:
    cols = [c for c in ablation.columns if ":" in c and c != "T-RCI:no-spatial"]
    return [(a, b) for a, b in combinations(cols, 2) if a.split(":")[0] == b.split(":")[0]]


def _scheme_rhos(ablation: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    return np.array([_spearman(ablation[a], ablation[b]) for a, b in pairs])


def min_rank_correlation(t) -> float:
    """§II-F: the smallest pairwise Spearman ρ between the four weighting schemes, over RCI_mu and T_mu
    (no-spatial left out: its own row)."""
    v = np.concatenate([rank_correlations(t.ablation, "RCI").to_numpy()[~np.eye(4, dtype=bool)],
                        _scheme_rhos(t.ablation, [p for p in _scheme_pairs(t.ablation) if p[0].startswith("T")])])
    v = v[np.isfinite(v)]
    return float(v.min()) if v.size else NAN
