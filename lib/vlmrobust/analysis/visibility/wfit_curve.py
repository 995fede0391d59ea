r"""The logistic curve in log V behind :mod:`.wfit`: fitted to many curves at once, and where it crosses a level.

For each signal of each (model, task, arm) cell :func:`fit_curves` fits, by
quasi-maximum likelihood, a monotone logistic in :math:`x = \log_{10} V`:

.. math:: p(x) = a + (b - a)\,\sigma\big(k\,(x - c)\big), \qquad k > 0,

with :math:`a` the murky floor, :math:`b` the clean level (the clean condition is
the point :math:`x = +\infty`, where :math:`p = b`), :math:`c` the centre and
:math:`k` the steepness per decade. The likelihood is the binomial one on every
question of every level, :math:`\sum_l S_l \log p_l + (N_l - S_l)\log(1 - p_l)`
(:math:`S_l` the sum of the signal over the :math:`N_l` questions at level
:math:`l`); for the continuous confidences it is a quasi-likelihood whose
maximum is a consistent estimate of the mean curve, and the intervals come from
the bootstrap (:mod:`.wfit`), not from the likelihood. The floor and the clean
level are free (a model whose accuracy stops above chance is fitted as it is). A
weak prior keeps the fit inside its space when a level is all 0 or all 1 or the
fall lies between two levels: half a question each way on the floor and on the
clean level (a Beta(1.5, 1.5) density) and a log-normal steepness centred on 4
per decade (a 10-90 % fall over 1.1 decades, seed 003's "within a factor of
about ten in V") with a standard deviation of 1 in log k; with hundreds of
questions per level it moves no crossing visibly.

**Crossing** (:func:`crossings`). Solving :math:`p(x^\ast) = m` for a mid-level :math:`m`:

.. math:: x^\ast = c + \frac{1}{k}\,\operatorname{logit}\frac{m - a}{b - a}

when :math:`m` lies strictly between :math:`a` and :math:`b`;
:math:`V^\ast = 10^{x^\ast}`. The curve is trusted inside the sweep only: a
crossing above the clearest level is the bound :math:`V^\ast \ge V_1`, one
below the murkiest level (or a floor that never reaches :math:`m`) the bound
:math:`V^\ast < V_L`, exactly as in :mod:`.blind_spot`.
"""

from __future__ import annotations

import numpy as np

from .blind_spot import AT_FIRST, CROSSED, NEVER, UNDEFINED

__all__ = ["sigmoid", "log_levels", "fit_curves", "crossings"]

_EPS = 1e-4  # the floor and the clean level stay inside [_EPS, 1 - _EPS]
_K_MIN, _K_MAX = 0.5, 40.0  # steepness per decade: a 10-90 % fall over 8.8 to 0.11 decades
_PRIOR_AB, _PRIOR_K, _PRIOR_LOGK_SD = 0.5, 4.0, 1.0  # the weak prior of fit_curves


def sigmoid(z):
    """The logistic function, written with tanh (no overflow for large ``|z|``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _loglik(S, N, p):
    p = np.clip(p, _EPS * 1e-2, 1 - _EPS * 1e-2)
    return (S * np.log(p) + (N - S) * np.log1p(-p)).sum(-1)


def _prior(theta):
    """The weak prior's log density: half a question each way on the floor and the clean level, and steepness
    log-normal around :data:`_PRIOR_K` per decade with sd :data:`_PRIOR_LOGK_SD` (module docstring)."""
    ab = theta[:, :2]
    return (_PRIOR_AB * (np.log(ab) + np.log1p(-ab)).sum(1)
            - 0.5 * ((theta[:, 3] - np.log(_PRIOR_K)) / _PRIOR_LOGK_SD) ** 2)


def log_levels(levels_m) -> np.ndarray:
    """``log10`` of the visibility levels (metres, clearest first), checked."""
    v = np.asarray(levels_m, dtype=np.float64)
    if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)) or (v <= 0).any() or not np.all(np.diff(v) < 0):
        raise ValueError(f"levels_m must be >= 2 finite visibilities > 0 in metres, strictly decreasing (clearest "
                         f"first), got {levels_m!r}")
    return np.log10(v)


def _curve(theta, x):
    """``p`` at the levels ``(M, L)``, with ``g = sigma(k (x - c))``, for parameters ``(a, b, c, log k)``."""
    a, b, c, k = theta[:, 0:1], theta[:, 1:2], theta[:, 2:3], np.exp(theta[:, 3:4])
    g = sigmoid(k * (x - c))
    return a + (b - a) * g, g, k


def _clip(theta, x):
    theta[:, :2] = np.clip(theta[:, :2], _EPS, 1 - _EPS)
    theta[:, 2] = np.clip(theta[:, 2], x[-1] - 1.0, x[0] + 1.0)
    theta[:, 3] = np.clip(theta[:, 3], np.log(_K_MIN), np.log(_K_MAX))
    return theta


def _initial(S, N, S0, N0, x):
    """Starting values: the best of a grid of centres and steepnesses, floor and clean level by weighted least squares.

    For fixed ``(c, k)`` the curve is linear in ``(a, b)``: ``p = a (1 - g) + b g``
    with ``g = sigma(k (x - c))`` (``g = 1`` at the clean point). Every grid point's
    weighted normal equations come from five matrix products; the point with the
    smallest weighted squared error starts the fit.
    """
    M = S.shape[0]
    y0 = np.where(N0 > 0, S0 / np.where(N0 > 0, N0, 1.0), 0.5)
    step = abs(x[0] - x[1]) if x.size > 1 else 1.0
    cs = np.arange(x[-1] - step / 2, x[0] + step, step / 2)
    ks = np.array([1.5, 4.0, 12.0])
    c_g, k_g = np.repeat(cs, ks.size), np.tile(ks, cs.size)
    g = sigmoid(k_g[None, :] * (x[:, None] - c_g[None, :]))  # (L, G)
    h = 1.0 - g
    s_hh, s_hg = N @ (h * h), N @ (h * g)
    s_gg = N @ (g * g) + N0[:, None]
    r_h, r_g = S @ h, S @ g + S0[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        det = s_hh * s_gg - s_hg**2
        ok = det > 1e-9 * (s_hh * s_gg + 1e-12)
        a = np.where(ok, (s_gg * r_h - s_hg * r_g) / det, y0[:, None])
        b = np.where(ok, (s_hh * r_g - s_hg * r_h) / det, y0[:, None])
    a, b = np.clip(a, _EPS, 1 - _EPS), np.clip(b, _EPS, 1 - _EPS)
    # weighted squared error up to a constant: sum N (p^2 - 2 y p)
    sse = a * a * s_hh + 2 * a * b * s_hg + b * b * s_gg - 2 * (a * r_h + b * r_g)
    best = np.argmin(sse, axis=1)
    rows = np.arange(M)
    return _clip(np.column_stack([a[rows, best], b[rows, best], c_g[best], np.log(k_g[best])]), x)


def fit_curves(S, N, S0, N0, levels_m, n_iter: int = 40) -> np.ndarray:
    r"""Quasi-maximum-likelihood logistic fits of many curves at once: ``(..., 4)`` = ``(a, b, c, k)``.

    ``S``, ``N`` are ``(..., L)``: the sum of the signal and the number of
    questions at each level of ``levels_m`` (clearest first); ``S0``, ``N0``
    ``(...)`` the same for the clean condition. Returns the floor ``a``, the clean
    level ``b``, the centre ``c`` (log10 metres) and the steepness ``k`` (per
    decade) of :math:`p(x) = a + (b - a)\sigma(k(x - c))` (module docstring), by
    Levenberg–Marquardt steps on the binomial likelihood from the best point of a
    grid (:func:`_initial`), within ``a, b`` in [1e-4, 1 - 1e-4], ``c`` within a
    decade of the sweep and ``k`` in [0.5, 40]. A curve stops once a step changes
    no parameter by more than 1e-6 or the likelihood by
    less than 1e-9.
    """
    x = log_levels(levels_m)
    S, N = np.asarray(S, np.float64), np.asarray(N, np.float64)
    S0, N0 = np.asarray(S0, np.float64), np.asarray(N0, np.float64)
    if S.shape != N.shape or S.shape[-1] != x.size or S0.shape != S.shape[:-1] or N0.shape != S0.shape:
        raise ValueError(f"S, N must be (..., {x.size}) and S0, N0 (...); got {S.shape}, {N.shape}, {S0.shape}, "
                         f"{N0.shape}")
    shape = S.shape[:-1]
    S, N = S.reshape(-1, x.size), N.reshape(-1, x.size)
    S0, N0 = S0.reshape(-1), N0.reshape(-1)
    theta = _initial(S, N, S0, N0, x)

    def total(th, i):
        return _loglik(S[i], N[i], _curve(th, x)[0]) + _loglik(S0[i, None], N0[i, None], th[:, 1:2]) + _prior(th)

    act = np.arange(theta.shape[0])
    ll = total(theta, act)
    lam = np.full(act.size, 1e-2)
    eye = np.eye(4)
    for _ in range(n_iter):
        if not act.size:
            break
        th, s_, n_ = theta[act], S[act], N[act]
        p, g, k = _curve(th, x)
        pq = np.clip(p * (1 - p), 1e-8, None)
        dg = (th[:, 1:2] - th[:, 0:1]) * g * (1 - g)
        J = np.stack([1 - g, g, -k * dg, k * dg * (x - th[:, 2:3])], axis=1)  # (M, 4, L): dp/d(a, b, c, log k)
        JW = J * (n_ / pq)[:, None, :]
        info = JW @ J.transpose(0, 2, 1)
        score = (J * ((s_ - n_ * p) / pq)[:, None, :]).sum(-1)
        pq0 = np.clip(th[:, 1] * (1 - th[:, 1]), 1e-8, None)  # the clean point: dp/db = 1
        info[:, 1, 1] += N0[act] / pq0
        score[:, 1] += (S0[act] - N0[act] * th[:, 1]) / pq0
        ab = th[:, :2]
        score[:, :2] += _PRIOR_AB * (1 / ab - 1 / (1 - ab))
        info[:, 0, 0] += _PRIOR_AB * (1 / ab[:, 0] ** 2 + 1 / (1 - ab[:, 0]) ** 2)
        info[:, 1, 1] += _PRIOR_AB * (1 / ab[:, 1] ** 2 + 1 / (1 - ab[:, 1]) ** 2)
        score[:, 3] -= (th[:, 3] - np.log(_PRIOR_K)) / _PRIOR_LOGK_SD**2
        info[:, 3, 3] += 1 / _PRIOR_LOGK_SD**2
        diag = np.einsum("mii->mi", info)
        step = np.linalg.solve(info + (lam[:, None] * diag + 1e-9)[:, :, None] * eye, score[:, :, None])[:, :, 0]
        trial = _clip(th + step, x)
        ll_t = total(trial, act)
        gain = ll_t - ll
        up = gain > 1e-12
        moved = np.abs(trial - th).max(1)
        theta[act[up]], ll[up] = trial[up], ll_t[up]
        lam = np.where(up, lam / 3.0, np.minimum(lam * 4.0, 1e8))
        keep = ~((moved < 1e-6) | (np.abs(gain) < 1e-9) | (lam >= 1e8))
        act, ll, lam = act[keep], ll[keep], lam[keep]
    theta[:, 3] = np.exp(theta[:, 3])
    return theta.reshape((*shape, 4))


def crossings(theta, mid, levels_m, rising=False) -> tuple[np.ndarray, np.ndarray]:
    r"""Where each fitted curve reaches its mid-level: ``(V, status)`` as :func:`.blind_spot.first_crossing` gives.

    ``theta`` is ``(..., 4)`` from :func:`fit_curves`, ``mid`` and ``rising``
    broadcast against ``theta[..., 0]``. :math:`x^\ast = c + \operatorname{logit}(q)/k`,
    :math:`q = (m - a)/(b - a)` (module docstring); status ``CROSSED`` inside the
    sweep, ``AT_FIRST`` (``V = V_1``) when the clean level is already past the
    mid-level or the crossing lies above the clearest level, ``NEVER``
    (``V = V_L``) when the floor never reaches it or the crossing lies below the
    murkiest level, ``UNDEFINED`` (NaN) for a NaN parameter or mid-level.
    """
    x = log_levels(levels_m)
    theta = np.asarray(theta, np.float64)
    a, b, c, k = (theta[..., i] for i in range(4))
    m = np.broadcast_to(np.asarray(mid, np.float64), a.shape)
    sign = np.where(np.broadcast_to(np.asarray(rising, bool), a.shape), -1.0, 1.0)
    # in "falling" orientation (accuracy, confidence): reached where the curve is at or below m
    at_first = sign * (b - m) <= 0
    never = ~at_first & (sign * (a - m) >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (m - a) / (b - a)
        xs = c + np.log(q / (1 - q)) / k
    status = np.where(at_first | (xs > x[0]), AT_FIRST, np.where(never | (xs < x[-1]), NEVER, CROSSED))
    lv = np.asarray(levels_m, np.float64)
    v = np.where(status == AT_FIRST, lv[0], np.where(status == NEVER, lv[-1], 10**xs))
    bad = np.isnan(a + b + c + k + m)
    return np.where(bad, np.nan, v), np.where(bad, UNDEFINED, status)

