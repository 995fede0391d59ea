"""Prediction-structure components and the Robustness Alignment Score (seed 000, §V).

All functions here are element-wise over *padded* option-distribution matrices:
``P`` has shape ``(n, K_max)``, row ``i`` holds the question's ``K[i]`` option
probabilities in columns ``0 .. K[i]-1`` and zeros after them. Padding zeros
change neither the entropy (``0 log 0 = 0``) nor the arg-max (a valid row has a
positive entry), so one matrix serves questions with 2 to 5 options.

Choices the paper leaves open, fixed here (DESIGN.md, "Definitions to keep exact"):

* Normalised entropy divides by ``log K`` with the question's **own** ``K``
  (Eq. 7); ``K = 1`` has no defined normalisation and is an error.
* ``0 log 0 = 0``.
* Arg-max ties go to the **lowest** option index. With ``tie_tol > 0`` every
  option within ``tie_tol`` of the maximum counts as tied (default ``0``: exact
  ties only).
* The confidence in Eq. 9 is the maximum probability, whatever the tie rule.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from ...score.probs import rowsum

__all__ = [
    "normalised_entropy", "top1", "alignment", "ras", "positive_part",
]


def _check_matrix(P: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=np.float64)
    K = np.asarray(K)
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2:
        raise ValueError(f"probs must be a 1-D or 2-D array, got shape {P.shape}")
    if K.ndim == 0:
        K = np.full(P.shape[0], int(K))
    if K.shape != (P.shape[0],):
        raise ValueError(f"K must hold one option count per row ({P.shape[0]}), got shape {K.shape}")
    if not np.issubdtype(K.dtype, np.integer):
        raise TypeError(f"K must be integers, got dtype {K.dtype}")
    if K.size and (K.min() < 2 or K.max() > P.shape[1]):
        raise ValueError(
            f"K must lie in [2, {P.shape[1]}] (the number of probability columns); "
            f"got values from {K.min()} to {K.max()} (K = 1 has no normalised entropy)"
        )
    return P, K


def positive_part(x: np.ndarray) -> np.ndarray:
    """``[x]_+ = max(0, x)`` (seed 000, Eq. 11)."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def normalised_entropy(P: np.ndarray, K: np.ndarray | int) -> np.ndarray:
    r"""Normalised entropy :math:`\mathcal S(p) = -\sum_k p_k\log p_k / \log K` (seed 000, Eq. 7).

    ``K`` is each row's own option count (``2 <= K``); ``0 log 0 = 0``. The
    result lies in ``[0, 1]`` for a probability vector: 0 for a one-hot row,
    1 for the uniform distribution over the ``K`` options.
    """
    P, K = _check_matrix(P, K)
    plogp = xlogy(P, P)  # p log p with 0 log 0 = 0
    return -rowsum(plogp) / np.log(K)


def top1(P: np.ndarray, K: np.ndarray | int | None = None, tie_tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Arg-max option and its probability for each row: ``(pred_idx, max_prob)``.

    Ties go to the lowest index; options within ``tie_tol`` (>= 0) of the
    maximum count as tied. Padding columns (beyond ``K``) hold zeros and can
    only win in a row of zeros, which :func:`vlmrobust.analysis.ras.pairs` rejects.
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim == 1:
        P = P[None, :]
    if K is not None:
        P, K = _check_matrix(P, K)
    if not (isinstance(tie_tol, (int, float)) and tie_tol >= 0 and np.isfinite(tie_tol)):
        raise ValueError(f"tie_tol must be a finite number >= 0, got {tie_tol!r}")
    idx = P.argmax(axis=1)
    mx = np.take_along_axis(P, idx[:, None], axis=1)[:, 0]
    if tie_tol > 0:
        idx = (P >= (mx - tie_tol)[:, None]).argmax(axis=1)
    return idx.astype(np.int64), mx


def alignment(P: np.ndarray, K: np.ndarray | int, y: np.ndarray | int, tie_tol: float = 0.0) -> np.ndarray:
    r"""Confidence–correctness residual :math:`\mathcal C(p,y)=|\mathbf 1\{\arg\max_k p_k=y\}-\max_k p_k|` (Eq. 9).

    Small when a correct top-1 answer is confident or a wrong one is not; in
    ``[0, 1]``. ``y`` is the 0-based answer index; arg-max ties follow
    :func:`top1`.
    """
    P, K = _check_matrix(P, K)
    y = np.broadcast_to(np.asarray(y), (P.shape[0],))
    if y.size and ((y < 0) | (y >= K)).any():
        raise ValueError("answer index y must lie in [0, K) for every row")
    idx, mx = top1(P, tie_tol=tie_tol)
    return np.abs((idx == y).astype(np.float64) - mx)


def ras(dS: np.ndarray, dC: np.ndarray) -> np.ndarray:
    r"""Robustness Alignment Score of one clean–corrupted pair (seed 000, Eq. 11).

    .. math::
        \mathrm{RAS} = -\Delta\mathcal C
        - [\Delta\mathcal C]_+[-\Delta\mathcal S]_+
        - [\Delta\mathcal S]_+[-\Delta\mathcal C]_+

    ``dS`` is the uncertainty shift (Eq. 8) and ``dC`` the alignment shift
    (Eq. 10), both corrupted minus clean. The first penalty (overconfidence)
    applies when alignment worsens while the distribution sharpens; the second
    (hesitation) when alignment improves while it flattens. With
    ``dS, dC`` in ``[-1, 1]`` the score lies in ``[-2, 1]``; with no penalty
    (same signs, or either shift zero) it equals ``-dC``. Since the two
    penalties never apply together and each equals ``|ΔC ΔS|`` when it does,
    ``RAS = -ΔC + min(0, ΔC ΔS)``, which is how it is evaluated.
    """
    dS = np.asarray(dS, dtype=np.float64)
    dC = np.asarray(dC, dtype=np.float64)
    # At most one penalty is non-zero, and either equals -dC*dS when it applies (opposite signs), so
    # RAS = -dC + min(0, dC*dS): the same IEEE result as the three-term form, with fewer temporaries.
    out = np.multiply(dC, dS, out=np.empty(np.broadcast(dC, dS).shape))
    np.minimum(out, 0.0, out=out)
    out -= dC
    return out if out.ndim else out[()]
