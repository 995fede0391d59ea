r"""Seed 001's Table I as printed, and the bound its RCI column obeys (§IV-A, Table I; §II-D1, §II-E).

:data:`PAPER_TABLE_I` holds the 19 rows of the paper's Table I (accuracies in %, as printed). Under the
paper's own definitions (§II-D1) a model whose predictions do not change under any corruption has
:math:`\mathcal D_{acc} = \mathcal D_{cal} = \mathcal D_{ent} = \mathcal D_{fail} = 0` and RCI = 0, in either
literal reading of :math:`\mathcal D_{fail}`. The table says otherwise: both LLaVA-NeXT rows keep their
accuracy (:math:`A_{CL} = A_{CR}`) and score 0.203 and 0.182. Every row obeys

.. math:: \mathrm{RCI}_\mu \ge c\,(1 - A_{CR}), \qquad c^\ast = \min_i \frac{\mathrm{RCI}_{\mu,i}}{1 - A_{CR,i}}
          = 0.3001,

with three rows on the bound (both LLaVA rows and Claude Opus 4.7 on MMJEE, clean accuracy 0).
:func:`bound_fit` derives :math:`c^\ast` and the range of :math:`c` consistent with the table's rounding to
three decimals (:math:`\pm 0.0005` on RCI, :math:`\pm 0.005` points on the accuracy): a bound
:math:`c` must keep every row at or above it and the on-bound rows within rounding of it; 0.300 is inside.
The RCI that reproduces the bound is the ``"table-i"`` reading of :mod:`.indices` (a :math:`\mathcal D_{fail}`
proportional to the perturbed error rate); :func:`bound_residuals` gives the 19 residuals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PAPER_TABLE_I", "bound_fit", "bound_residuals", "paper_rank_correlation"]

_ROWS = """\
MMJEE-Chemistry-MCQ|ChemVLM-8B|15.22|18.75|0.250|0.361|6.52|0.395|0.680|RL|0.479
MMJEE-Chemistry-MCQ|Claude Opus 4.7|0.00|0.82|0.298|0.300|13.59|0.324|0.561|RL|0.349
MMJEE-Chemistry-MCQ|GPT-4.1|21.74|20.79|0.312|0.541|12.91|0.501|0.707|BU|0.564
MMJEE-Chemistry-MCQ|Gemini 3.5 Flash|6.52|6.39|0.339|0.520|1.22|0.424|0.770|LR|0.725
MMJEE-Chemistry-MCQ|InternVL2.5-8B|21.74|23.19|0.263|0.311|7.86|0.311|0.366|LR|0.316
MMJEE-Chemistry-MCQ|LLaVA-NeXT-Mistral-7B|10.87|12.23|0.272|0.414|18.61|0.323|0.670|RL|0.386
MMJEE-Chemistry-MCQ|Qwen2.5-VL-72B-Instruct|13.04|17.80|0.254|0.384|14.40|0.342|0.563|TD|0.387
MathVista-MCQ|GPT-4.1|60.19|58.16|0.149|0.184|59.69|0.194|0.304|RL|0.201
MathVista-MCQ|Gemini 3.5 Flash|32.00|34.50|0.199|0.254|11.38|0.320|0.470|LR|0.342
MathVista-MCQ|InternVL2.5-8B|71.85|69.35|0.120|0.195|34.44|0.538|0.632|RL|0.547
MathVista-MCQ|LLaVA-NeXT-Mistral-7B|32.41|32.41|0.203|0.203|38.84|0.249|0.310|LR|0.256
MathVista-MCQ|Qwen2.5-VL-72B-Instruct|69.63|68.62|0.108|0.173|63.50|0.211|0.305|LR|0.218
ScienceQA-Chemistry|ChemVLM-8B|77.66|73.74|0.114|0.220|42.49|0.269|0.504|TD|0.294
ScienceQA-Chemistry|Claude Opus 4.7|58.51|43.55|0.348|0.522|68.68|0.246|0.384|LR|0.282
ScienceQA-Chemistry|GPT-4.1|85.11|80.25|0.100|0.284|69.95|0.242|0.402|RL|0.306
ScienceQA-Chemistry|Gemini 3.5 Flash|58.00|53.50|0.195|0.307|18.38|0.427|0.745|RL|0.526
ScienceQA-Chemistry|InternVL2.5-8B|85.11|84.04|0.065|0.128|42.75|0.373|0.550|RL|0.473
ScienceQA-Chemistry|LLaVA-NeXT-Mistral-7B|39.36|39.36|0.182|0.182|46.88|0.259|0.356|RL|0.276
ScienceQA-Chemistry|Qwen2.5-VL-72B-Instruct|87.23|84.18|0.073|0.120|71.28|0.227|0.412|RL|0.269"""
_COLS = ["dataset", "model", "A_CL", "A_CR", "RCI_mu", "RCI_max", "A_T", "T_mu", "T_max", "W_D", "W_T"]


def _table() -> pd.DataFrame:
    t = pd.DataFrame([r.split("|") for r in _ROWS.splitlines()], columns=_COLS)
    for c in _COLS:
        if c not in ("dataset", "model", "W_D"):
            t[c] = t[c].astype(np.float64)
    return t


#: Seed 001's Table I, 19 rows, accuracies in % as printed.
PAPER_TABLE_I: pd.DataFrame = _table()


def bound_fit(table: pd.DataFrame = PAPER_TABLE_I, *, rci_tol: float = 5e-4, acc_tol: float = 5e-3,
              on_bound: float = 1e-3) -> dict:
    """The bound :math:`\\mathrm{RCI}_\\mu \\ge c (1 - A_{CR})` of ``table`` (accuracies in %).

    Returns ``c_star`` (the largest ``c`` every row obeys as printed), ``c_lo`` and ``c_hi`` (the ``c``
    consistent with the rounding: every row at or above the bound within ``rci_tol`` and ``acc_tol``
    points, the rows within ``on_bound`` of it at or below it within the same), ``on_bound`` (their
    indices) and ``n`` (rows).
    """
    err = 1.0 - table["A_CR"].to_numpy(dtype=np.float64) / 100.0
    rci = table["RCI_mu"].to_numpy(dtype=np.float64)
    if (err <= 0).any():
        raise ValueError("a row with A_CR = 100 % leaves the bound undefined")
    ratio = rci / err
    c_star = float(ratio.min())
    hit = np.flatnonzero(rci - c_star * err <= on_bound)
    c_hi = float(((rci + rci_tol) / np.maximum(err - acc_tol / 100.0, 1e-12)).min())
    c_lo = float(((rci[hit] - rci_tol) / (err[hit] + acc_tol / 100.0)).max())
    return {"c_star": c_star, "c_lo": c_lo, "c_hi": c_hi, "on_bound": hit.tolist(), "n": len(table)}


def bound_residuals(table: pd.DataFrame = PAPER_TABLE_I, c: float = 0.3, *, percent: bool = True) -> pd.DataFrame:
    """Per row: ``bound`` :math:`c (1 - A_{CR})` and ``residual`` :math:`\\mathrm{RCI}_\\mu` − bound, beside
    ``A_CL``, ``A_CR``, ``RCI_mu`` (and ``dataset``/``model`` or the unit columns when present).
    ``percent``: the accuracies are in % (the paper's table) rather than shares (a run's Table I)."""
    keep = [k for k in ("dataset", "group", "model") if k in table.columns]
    out = table[[*keep, "A_CL", "A_CR", "RCI_mu"]].copy()
    acc = out["A_CR"].to_numpy(dtype=np.float64) / (100.0 if percent else 1.0)
    out["bound"] = c * (1.0 - acc)
    out["residual"] = out["RCI_mu"] - out["bound"]
    return out.reset_index(drop=True)


def paper_rank_correlation(table: pd.DataFrame = PAPER_TABLE_I, x: str = "RCI_mu", y: str = "T_mu") -> float:
    """Spearman ρ between two columns over the rows of ``table`` (the paper's: ρ(RCI_mu, T_mu) over 19 rows)."""
    from scipy.stats import spearmanr

    return float(spearmanr(table[x].to_numpy(), table[y].to_numpy()).statistic)
