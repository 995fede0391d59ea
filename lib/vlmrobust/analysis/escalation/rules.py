r"""Notebook 07's claim rules against their nulls, by simulation (:class:`~vlmrobust.stats.nullsim.RuleCheck`).

Each rule of :mod:`.claims` is a function of :mod:`.decide`; here the same function is applied to data drawn
at the notebook's default size (:data:`PER_FAMILY` questions per family): 9 models, groups of 80, 60 and 40
questions (180; 27 model × group units), the four ladders and traversals at four levels, :data:`N_BOOT` = 100
question resamples. A unit's statistic is the mean over its questions of per-question values (a question effect
shared by the models, which pairs them, plus noise) whose spreads gave the run at 90 questions its standard errors
(RCI_mu 0.04, T_mu 0.03, accuracies 0.05–0.08; √2 smaller at 180); the replicates are the same means on resampled
questions (drawn with replacement from the pool, as :func:`~.replicates.item_bootstrap` draws them).

**Nulls** (what each claim being false looks like): equal units for the "some instance" claims; RCI_mu and
T_mu two noisy copies of one ranking (O4); exchangeable group labels (O1/O8); equal directions (O9); a
curve set whose retentions sit on the regimes' edges (S1); flat curves (S3); correlations at the edge 0.9 of
"nearly identical" (§II-F), drawn with the question noise that both scores share; warnings independent of flips (§VI).
**Positives** draw at the paper's effect size: Table I's rows as the units' true values where the claim
is about them (O1/O8, O4, O6, O9), and the effect named in each rule's text elsewhere. Every rule is checked in
``tests/test_rules.py``; ``python -m vlmrobust.analysis.rules --only 07`` prints false passes and power.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import combinations

import numpy as np
from scipy.stats import norm

from ...stats.bootstrap import resample_counts
from ...stats.claims import combine
from ...stats.nullsim import RuleCheck
from . import decide as D
from .claims_base import RHO_IDENTICAL
from .claims_curves import latent_difference, paired_all_above
from .paper_table import PAPER_TABLE_I

__all__ = ["RULES", "N_BOOT", "GROUP_SIZES", "N_MODELS", "PER_FAMILY"]  # one RuleCheck per claim row of notebook 07

N_BOOT = 100
PER_FAMILY = 20  # the notebook's default n_per_family (tests/test_rules.py holds them equal)
GROUP_SIZES = (4 * PER_FAMILY, 3 * PER_FAMILY, 2 * PER_FAMILY)  # attributes, relations, reading: 4, 3, 2 families
N_MODELS = 9
CI = 0.95
GAP = 0.05  # acc_tol, index_gap and direction_gap of the notebook
TOL = 0.02  # monotone_tol
DF_UNIT = min(GROUP_SIZES) - 1  # a unit's standard error rests on its group's questions
GROUP = np.repeat(np.arange(len(GROUP_SIZES)), GROUP_SIZES)
N_Q = int(sum(GROUP_SIZES))
SIZE = f"{N_MODELS} models × 3 groups ({', '.join(map(str, GROUP_SIZES))} questions), 100 question resamples"
N_TRAJ = 26 * N_Q  # trajectories of §VI: 9 models × 4 directions × the clean-correct questions (about 72 %)
N_GROUND = 8 * PER_FAMILY  # ground-plane questions (eight in ten of the items)
DF_ALL = N_Q - 1
_T = PAPER_TABLE_I.reset_index(drop=True)
_DATASETS = list(dict.fromkeys(_T["dataset"]))


def _counts(rng: np.random.Generator, n: int = N_Q) -> np.ndarray:
    return resample_counts(n, N_BOOT, rng)


def _unit_means(V: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-question values ``V`` (questions × models × features) → unit (model × group) means ``(units, f)`` and
    their replicates ``(B, units, f)`` under the resample counts ``C``; units ordered model-major."""
    n, m = V.shape[:2]
    f = int(np.prod(V.shape[2:])) if V.ndim > 2 else 1
    pt, rp = np.empty((m, len(GROUP_SIZES), f)), np.empty((C.shape[0], m, len(GROUP_SIZES), f))
    for g in range(len(GROUP_SIZES)):
        sel = GROUP == g
        X = V[sel].reshape(sel.sum(), m * f)
        pt[:, g] = X.mean(0).reshape(m, f)
        w = C[:, sel]
        rp[:, :, g] = ((w @ X) / np.maximum(w.sum(1, keepdims=True), 1)).reshape(-1, m, f)
    return pt.reshape(m * len(GROUP_SIZES), f), rp.reshape(C.shape[0], m * len(GROUP_SIZES), f)


def _per_question(rng: np.random.Generator, mu: np.ndarray, sd: np.ndarray, shared: float = 0.5) -> np.ndarray:
    """Per-question values with unit means ``mu`` (models × groups × features) and per-question sd ``sd``
    (features): a question effect shared by the models (share ``shared`` of the variance) plus noise."""
    m, _, f = mu.shape
    q = rng.normal(0.0, 1.0, (N_Q, 1, f)) * np.sqrt(shared)
    e = rng.normal(0.0, 1.0, (N_Q, m, f)) * np.sqrt(1 - shared)
    return mu[:, GROUP, :].transpose(1, 0, 2) + (q + e) * sd


def _units_from_table(cols: list[str], scale: tuple[float, ...]) -> np.ndarray:
    """Table I's rows as true unit values (models × groups × features): dataset d → group d, its models in
    order, cycled to :data:`N_MODELS`."""
    out = np.empty((N_MODELS, len(GROUP_SIZES), len(cols)))
    for g, ds in enumerate(_DATASETS):
        rows = _T[_T["dataset"] == ds][cols].to_numpy(float) * np.asarray(scale)
        out[:, g] = rows[np.arange(N_MODELS) % len(rows)]
    return out


# ----------------------------------------------------------------------------- O6, O4: pairs of units

_SD = {"A_CR": 0.30, "RCI_mu": 0.20, "A_T": 0.27, "T_mu": 0.16, "A_CL": 0.42}


def _similar(acc: str, index: str, positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        if positive:
            mu = _units_from_table([acc, index], (0.01, 1.0))
        else:
            mu = np.broadcast_to(np.array([0.55, 0.2]), (N_MODELS, len(GROUP_SIZES), 2))
        pt, rp = _unit_means(_per_question(rng, mu, np.array([_SD[acc], _SD[index]])), _counts(rng))
        return D.pairs_differ(pt[:, 0], pt[:, 1], rp[:, :, 1], x_tol=GAP, gap=GAP, ci=CI, df=DF_UNIT)[0].verdict

    return draw


_UNIT_GROUP = np.tile(np.arange(len(GROUP_SIZES)), N_MODELS)
_WITHIN = np.array([(i, j) for i, j in combinations(range(N_MODELS * len(GROUP_SIZES)), 2)
                    if _UNIT_GROUP[i] == _UNIT_GROUP[j]])


def _clean_not_robust(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        if positive:
            mu = _units_from_table(["A_CL", "RCI_mu"], (0.01, 1.0))
        else:
            mu = np.broadcast_to(np.array([0.7, 0.15]), (N_MODELS, len(GROUP_SIZES), 2))
        pt, rp = _unit_means(_per_question(rng, mu, np.array([_SD["A_CL"], _SD["RCI_mu"]])), _counts(rng))
        return D.pairs_sign(pt[:, 0], pt[:, 1], rp[:, :, 0], rp[:, :, 1], _WITHIN, same_sign=True, ci=CI,
                            df=DF_UNIT)[0].verdict

    return draw


def _mechanisms(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        if positive:
            mu = _units_from_table(["RCI_mu", "T_mu"], (1.0, 1.0))
        else:  # one ranking s; T a monotone function of it
            s = rng.uniform(0.06, 0.24, (N_MODELS, len(GROUP_SIZES)))
            mu = np.stack([s, 0.15 + 0.8 * s], axis=2)
        pt, rp = _unit_means(_per_question(rng, mu, np.array([_SD["RCI_mu"], _SD["T_mu"]])), _counts(rng))
        return D.pairs_sign(pt[:, 0], pt[:, 1], rp[:, :, 0], rp[:, :, 1], same_sign=False, ci=CI,
                            df=DF_UNIT)[0].verdict

    return draw


# ----------------------------------------------------------------------------- O1/O8: groups


def _spreads(r: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Spread (max − min) over groups of the group means of per-question values ``r`` (questions × 2)."""
    s = np.stack([np.bincount(labels, weights=r[:, k], minlength=len(GROUP_SIZES)) for k in range(r.shape[1])], 1)
    m = s / np.bincount(labels, minlength=len(GROUP_SIZES))[:, None]
    return m.max(0) - m.min(0)


def _dataset(positive: bool) -> Callable[[np.random.Generator], str]:
    means = _T.groupby("dataset", sort=False)[["RCI_mu", "T_mu"]].mean().reindex(_DATASETS).to_numpy()

    def draw(rng: np.random.Generator) -> str:
        mu = np.broadcast_to(means if positive else means.mean(0), (N_MODELS, len(GROUP_SIZES), 2))
        V = _per_question(rng, np.ascontiguousarray(mu), np.array([_SD["RCI_mu"], _SD["T_mu"]]))
        r = V.mean(axis=1)  # the models' mean per question
        obs = _spreads(r, GROUP)
        null = np.stack([_spreads(r, rng.permutation(GROUP)) for _ in range(N_BOOT)])
        return D.permutation_decision(obs, null)[0]

    return draw


# ----------------------------------------------------------------------------- O9: directions

_PAIRS4 = list(combinations(range(4), 2))


def _directions(rng: np.random.Generator, positive: bool):
    """Unit × direction T-RCI (units, 4) and replicates; positive: Table I's rows, the worst direction W_D
    higher by 4/3 (W_T − T_mu) than the three others (so that its W_T and T_mu are the row's)."""
    mu = np.full((N_MODELS, len(GROUP_SIZES), 4), 0.28)
    if positive:
        t = _units_from_table(["T_mu", "W_T"], (1.0, 1.0))
        wd = np.empty((N_MODELS, len(GROUP_SIZES)), dtype=int)
        for g, ds in enumerate(_DATASETS):
            w = _T[_T["dataset"] == ds]["W_D"].map({"TD": 0, "BU": 1, "LR": 2, "RL": 3}).to_numpy()
            wd[:, g] = w[np.arange(N_MODELS) % len(w)]
        delta = 4 / 3 * (t[..., 1] - t[..., 0])
        mu = np.repeat((t[..., 0] - delta / 4)[..., None], 4, axis=2)
        np.put_along_axis(mu, wd[..., None], (t[..., 0] + 3 * delta / 4)[..., None], axis=2)
    return _unit_means(_per_question(rng, mu, np.full(4, _SD["T_mu"]), shared=0.6), _counts(rng))


def _direction_dependence(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        pt, rp = _directions(rng, positive)
        d = np.concatenate([pt[:, a] - pt[:, b] for a, b in _PAIRS4])
        dr = np.concatenate([rp[:, :, a] - rp[:, :, b] for a, b in _PAIRS4], axis=1)
        return D.some_instance(d, dr, CI, two_sided=True, null_edge=GAP, df=DF_UNIT).verdict

    return draw


def _rl(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        pt, rp = _directions(rng, positive)
        comp = np.array([np.mean(pt[:, 3] - pt[:, k]) for k in range(3)])
        cr = np.stack([np.mean(rp[:, :, 3] - rp[:, :, k], axis=1) for k in range(3)], axis=1)
        return D.all_instances(comp, cr, CI, df=DF_UNIT).verdict

    return draw


# ----------------------------------------------------------------------------- §V, S1, S3: models and curves


def _crop(positive: bool) -> Callable[[np.random.Generator], str]:
    """Drops from clean per model (over all :data:`N_Q` questions) under crop, blur and contrast."""

    def draw(rng: np.random.Generator) -> str:
        mu = np.full((N_MODELS, 1, 3), 0.1)
        if positive:
            mu[: N_MODELS // 2 + 1, 0, 0] += 0.12
        q = rng.normal(0, 1, (N_Q, 1, 3)) * np.sqrt(0.5)
        V = mu[:, 0][None] + (q + rng.normal(0, 1, (N_Q, N_MODELS, 3)) * np.sqrt(0.5)) * 0.3
        C = _counts(rng)
        X = V.reshape(N_Q, -1)
        pt, rp = X.mean(0).reshape(N_MODELS, 3), (C @ X / N_Q).reshape(-1, N_MODELS, 3)
        comp = np.stack([pt[:, 0] - pt[:, 1], pt[:, 0] - pt[:, 2]], axis=1)
        cr = np.stack([rp[:, :, 0] - rp[:, :, 1], rp[:, :, 0] - rp[:, :, 2]], axis=2)
        return D.some_instance(comp, cr, CI, df=DF_ALL).verdict

    return draw


N_CURVES, N_UNITS = N_MODELS * 4, N_MODELS * len(GROUP_SIZES)


def _curves(rng: np.random.Generator, acc: np.ndarray, shared: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Right/wrong answers of :data:`N_Q` questions on ``N_CURVES`` curves at true accuracies ``acc`` (curves × L),
    a question's ease shared along its curve → accuracies ``(curves, L)`` and replicates ``(B, curves, L)``."""
    z = rng.normal(0, 1, (N_Q, N_CURVES, 1)) * np.sqrt(shared) + rng.normal(0, 1, (N_Q, N_CURVES, acc.shape[1])) * \
        np.sqrt(1 - shared)
    X = (z < norm.ppf(acc)[None]).astype(float).reshape(N_Q, -1)
    C = _counts(rng)
    return X.mean(0).reshape(N_CURVES, -1), (C @ X / N_Q).reshape(-1, N_CURVES, acc.shape[1])


def _regimes(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        ret = np.resize([0.95, 0.65, 0.25] if positive else [0.8, 0.5], N_CURVES)
        pt, rp = _curves(rng, np.stack([np.full(N_CURVES, 0.7), 0.7 * ret], axis=1))
        r, rr = pt[:, 1] / pt[:, 0], rp[:, :, 1] / rp[:, :, 0]  # clean accuracy 0.7: no zero division
        parts = [D.some_instance(r - 0.8, rr - 0.8, CI, df=DF_ALL),
                 D.some_instance(np.stack([r - 0.5, 0.8 - r], 1), np.stack([rr - 0.5, 0.8 - rr], 2), CI, df=DF_ALL),
                 D.some_instance(0.5 - r, 0.5 - rr, CI, df=DF_ALL)]
        return combine(p.verdict for p in parts)

    return draw


def _monotone(positive: bool) -> Callable[[np.random.Generator], str]:
    def draw(rng: np.random.Generator) -> str:
        acc = np.tile([0.6, 0.6, 0.6, 0.6, 0.6] if not positive else [0.7, 0.6, 0.5, 0.4, 0.3], (N_CURVES, 1))
        if positive:
            acc[: N_CURVES // 4, 2] = 0.72  # a gain of 0.12 at the middle level on a quarter of the curves
        pt, rp = _curves(rng, acc, shared=0.8)
        return D.some_instance(np.diff(pt, axis=1).ravel(), np.diff(rp, axis=2).reshape(N_BOOT, -1), CI,
                               null_edge=TOL, df=DF_ALL).verdict

    return draw


# ----------------------------------------------------------------------------- §II-F: correlations


def _pair_at(rng: np.random.Generator, n: int, rho: float, tol: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Two vectors of ``n`` true values whose Pearson r is within ``tol`` of ``rho``."""
    c = np.sqrt(1 - rho ** 2)
    for _ in range(10_000):
        x = rng.normal(0, 1, n)
        y = rho * x + c * rng.normal(0, 1, n)
        if abs(np.corrcoef(x, y)[0, 1] - rho) <= tol:
            return x, y
    raise RuntimeError("no draw at the requested correlation")


def _weighting(positive: bool) -> Callable[[np.random.Generator], str]:
    """Two schemes' true scores over the 27 units at r = 0.9 (null) or 0.97 (the paper's 0.95–0.99); their question
    noise correlated 0.8, as schemes weighing the same terms share it."""

    def draw(rng: np.random.Generator) -> str:
        x, y = _pair_at(rng, N_UNITS, 0.97 if positive else RHO_IDENTICAL)
        mu = (np.stack([x, y], 1) * 0.05 + 0.15).reshape(N_MODELS, len(GROUP_SIZES), 2)
        zero = np.zeros((N_MODELS, len(GROUP_SIZES), 1))
        za, zo = _per_question(rng, zero, np.ones(1)), _per_question(rng, zero, np.ones(1))
        V = mu[:, GROUP, :].transpose(1, 0, 2) + 0.2 * np.concatenate([za, 0.8 * za + 0.6 * zo], axis=2)
        pt, rp = _unit_means(V, _counts(rng))
        rho, rr = D.corrected_correlation(pt[:, 0], pt[:, 1], rp[:, :, 0], rp[:, :, 1])
        return D.all_instances([rho], rr[:, None], CI, edge=RHO_IDENTICAL, fisher=True, df=DF_UNIT).verdict

    return draw


@lru_cache(maxsize=4)
def _state_spread(rho: float) -> float:
    """The spread of T_no-spatial at which r(T_equal, T_no-spatial) is ``rho`` (bisection on one large draw)."""
    s = np.tile([0.2, 0.4, 0.6, 0.8], 5_000)
    base = np.random.default_rng(0).normal(0, 1, s.size)
    lo, hi = 1e-3, 4.0
    for _ in range(40):
        mid = (lo + hi) / 2
        x = 0.25 + mid * 0.1 * base
        lo, hi = (mid, hi) if np.corrcoef(0.8 * x + 0.2 * s, x)[0, 1] < rho else (lo, mid)
    return (lo + hi) / 2


def _per_state(positive: bool) -> Callable[[np.random.Generator], str]:
    """The 432 per-state terms (27 units × 4 directions × 4 states): T_equal = 4/5 T_no-spatial + s_k / 5 exactly,
    T_no-spatial's true values spread so that r(T_equal, T_no-spatial) is 0.9 (null) or 0.97, plus question
    noise (sd 0.07 per state term, as the default run's) that enters both and pushes the observed r towards 1."""
    s = np.tile([0.2, 0.4, 0.6, 0.8], N_UNITS * 4)
    n = s.size

    def draw(rng: np.random.Generator) -> str:
        x = 0.25 + _state_spread(0.97 if positive else RHO_IDENTICAL) * 0.1 * rng.normal(0, 1, n)
        obs = x + rng.normal(0, 0.07, n)
        reps = obs[None] + rng.normal(0, 0.07, (N_BOOT, n))
        rho, rr = D.corrected_correlation(0.8 * obs + 0.2 * s, obs, 0.8 * reps + 0.2 * s, reps)
        return D.all_instances([rho], rr[:, None], CI, edge=RHO_IDENTICAL, fisher=True, df=DF_UNIT).verdict

    return draw


# ----------------------------------------------------------------------------- §VI and the ground truth


def _latent(positive: bool) -> Callable[[np.random.Generator], str]:
    """:data:`N_TRAJ` trajectories (9 models × 4 directions × the clean-correct questions) of :data:`N_Q` questions; a
    question's trajectories share a random effect on flipping and on warning."""

    def draw(rng: np.random.Generator) -> str:
        item = rng.integers(0, N_Q, N_TRAJ)
        qf, qw = rng.normal(0, 1, N_Q), rng.normal(0, 1, N_Q)
        flip = rng.normal(0, 1, N_TRAJ) + qf[item] < 0.65
        warn_p = 0.14 if not positive else np.where(flip, 0.3, 0.1)
        warned = rng.random(N_TRAJ) < warn_p * np.exp(0.3 * qw[item]) / np.exp(0.045)
        v = latent_difference(flip, warned)
        reps = D.cluster_bootstrap(lambda r: latent_difference(flip, warned, r), item, N_BOOT, rng)
        lo, hi = D.normal_intervals(v, reps, CI, df=DF_ALL)
        return D.side_verdict(float(lo), float(hi), 0.0)

    return draw


def _ground(positive: bool) -> Callable[[np.random.Generator], str]:
    """:data:`N_GROUND` ground-plane questions × 9 models: top-down minus bottom-up accuracy per question (mean of
    four right/wrong states), equal directions (null) or bottom-up 0.12 worse (positive)."""

    def draw(rng: np.random.Generator) -> str:
        q = rng.normal(0, 1, (N_GROUND, 1, 1))
        td = (q + rng.normal(0, 1, (N_GROUND, N_MODELS, 4)) < 0.0).mean(2)
        bu = (q + rng.normal(0, 1, (N_GROUND, N_MODELS, 4)) < (-0.32 if positive else 0.0)).mean(2)
        return paired_all_above(td - bu, N_BOOT, rng, CI, df=N_GROUND - 1).verdict

    return draw


def _check(k: int, name: str, fn, null_text: str, positive_text: str, size: str = SIZE) -> RuleCheck:
    return RuleCheck(f"07.{k} {name}", fn(False), fn(True), null_text, positive_text, size)


RULES = (
    _check(1, "similar accuracy, different RCI", lambda p: _similar("A_CR", "RCI_mu", p),
           "equal units: every unit's A_CR 0.55 and RCI_mu 0.20", "Table I's (A_CR, RCI_mu) as the units' values"),
    _check(2, "similar traversal accuracy, different T-RCI", lambda p: _similar("A_T", "T_mu", p),
           "equal units: every unit's A_T 0.55 and T_mu 0.20", "Table I's (A_T, T_mu) as the units' values"),
    _check(3, "clean accuracy not robustness", _clean_not_robust,
           "equal units: every unit's A_CL 0.70 and RCI_mu 0.15", "Table I's (A_CL, RCI_mu) as the units' values"),
    _check(4, "distinct mechanisms", _mechanisms,
           "one mechanism: T_mu = 0.15 + 0.8 RCI_mu, RCI_mu spread 0.06–0.24 over the units",
           "Table I's (RCI_mu, T_mu) as the units' values (ρ 0.35)"),
    _check(5, "dataset dependence", _dataset, "no group effect: the groups' mean RCI_mu and T_mu equal",
           "Table I's dataset means of RCI_mu and T_mu as the groups' (100 permutations)"),
    _check(6, "direction dependence", _direction_dependence, "equal directions: T-RCI(r) 0.28 in all four",
           "Table I: the worst direction W_D higher by 4/3 (W_T − T_mu) than the three others"),
    _check(7, "RL most fragile", _rl, "equal directions: T-RCI(r) 0.28 in all four",
           "Table I's W_D and W_T − T_mu per unit (RL worst in 11 of 19 rows)"),
    _check(8, "crop not blur", _crop, "equal drops 0.10 under crop, blur and contrast for every model",
           f"crop's drop 0.12 above blur's and contrast's for {N_MODELS // 2 + 1} of the models",
           f"{N_MODELS} models × {N_Q} questions"),
    _check(9, "three regimes", _regimes, f"{N_CURVES} curves, retentions on the edges 0.8 and 0.5 (none severe)",
           "retentions 0.95, 0.65 and 0.25 (a curve in three each)", f"{N_CURVES} traversal curves × {N_Q} questions"),
    _check(10, "non-monotone curves", _monotone, f"{N_CURVES} flat curves at 0.6 over five levels",
           "declining curves, a quarter of them gaining 0.12 at the middle level",
           f"{N_CURVES} traversal curves × 5 levels × {N_Q} questions"),
    _check(11, "weighting insensitive", _weighting, f"two schemes' true scores rank the {N_UNITS} units at ρ = 0.9",
           "ρ = 0.97 (the paper's 0.95–0.99)"),
    _check(12, "D_spatial per state", _per_state, "per-state ρ(T_equal, T_no-spatial) = 0.9 in truth",
           "ρ = 0.97 (the paper's ∼0.95 read as nearly identical)", f"{N_UNITS * 16} per-state terms, 100 resamples"),
    _check(13, "latent instability", _latent, "warnings independent of flips (14 % warned either way)",
           "30 % of flips warned before, 10 % false alarms", f"{N_TRAJ:,} trajectories of {N_Q} questions"),
    _check(14, "ground truth: bottom-up hurts more", _ground, "equal accuracy under top-down and bottom-up",
           "bottom-up 0.12 less accurate for every model", f"{N_GROUND} ground-plane questions × {N_MODELS} models"),
)
