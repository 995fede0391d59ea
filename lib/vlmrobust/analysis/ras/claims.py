"""Seed 000's four numbered observations (§VII-B to §VII-E) as tests on a run: the claims table of notebook 04.

Each observation is decided by a pure function of a :class:`~vlmrobust.analysis.ras.cube.PairCube` and a
seed (``decide_*``), the same code the rules' simulations call (:mod:`vlmrobust.analysis.ras.rules`).
Every interval resamples the questions (all pairs of a question together, so that models, severities and
clean/corrupted roles are compared on the same questions).

**The null of every row: no vision.** A model that cannot see scores a question the same way whatever its
image; clean and corrupted scorings are then exchangeable (identical for a deterministic model, the blind
twins ``blind:NAME``; independent draws of the same distribution when scoring is noisy). Under that null
RAS is *not* centred at 0: its penalties (Eq. 11) are never positive, and selecting pairs by their clean
answer (R_c, R_w, Eq. 15) moves noise into the sources (regression to the mean). So each test uses a
statistic that is centred at 0 under exchangeability: ΔC of still-correct pairs (Eq. 10, antisymmetric in
the two roles), R_c against R_c with the roles swapped, severity slopes (the severities are exchangeable
too), and differences between models. An exact 0 (a blind twin) never counts as an effect.

Rows:

1. *Answer stability can hide structural instability* (§VII-B): (a) still-correct pairs lose support,
   mean ΔC of Q_cc > 0 (Table III: +0.019); (b) response robustness and RAS order some pair of models
   oppositely, both orders decided (Table VI).
2. *Apparent accuracy gains are not always structural gains* (§VII-C): every model's clean-correct side
   is damaged beyond what the no-vision null gives (R_c below R_c with clean and corrupted swapped), while
   wrong→correct pairs gain (Q_wc mean RAS > 0; Table III: +0.462).
3. *Same answer paths can differ in support* (§VII-D): some model's loss trajectories are overconfident on
   average (class means of the trajectory medians ΔS̃ < 0 and ΔC̃ > 0, Gemma3 in Fig. 6) and some model's
   correction trajectories hesitant (ΔS̃ > 0 and ΔC̃ < 0, DeepSeek).
4. *Stronger corruption can make wrong answers look better* (§VII-E): the slope of R_w over severity > 0,
   that of R_c < 0, and R_w stays below the clean-correct cost (mean of −R_c − R_w over severities > 0;
   Fig. 7).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.claims import (
    NO_SUBJECT,
    NOT_REPRODUCED,
    REPRODUCED,
    UNDECIDED,
    Claim,
    claims_frame,
    combine,
    decide_text,
    verdict,
)
from .cube import PairCube, boot_ratio, boot_weights, from_pairs
from .trajectories import classify_paths

__all__ = ["EPS", "NULL", "Decision", "decide_support_loss", "decide_rank_mismatch", "decide_gains",
           "decide_paths", "decide_severity", "claims_rows", "claims_table"]

#: Effects at or below this size are no effect: a blind twin's exact zeros never pass a test.
EPS = 1e-9
#: The null of every row, in one line.
NULL = ("no vision: the model scores a question alike whatever its image, so clean and corrupted scorings are "
        "exchangeable (the no-vision simulation; blind twins are its noiseless case)")


@dataclass(frozen=True)
class Decision:
    """A rule's outcome: the reported statistic with its interval, the region it is judged against, the
    verdict, and the numbers in words."""

    value: float
    lo: float
    hi: float
    low: float
    high: float
    verdict: str
    measured: str
    n_items: int


def _interval(reps: np.ndarray, ci: float) -> tuple[float, float, float]:
    """Estimate (row 0) and percentile interval of the resamples (rows 1..) along axis 0."""
    a = (1.0 - ci) / 2.0
    with warnings.catch_warnings():  # a statistic with no pairs in any resample has a NaN interval
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(reps[1:], [100 * a, 100 * (1 - a)], axis=0) if len(reps) > 1 else (np.nan,) * 2
    return reps[0], lo, hi


def _sum_items(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-question, per-model sums of ``x`` over the pairs in ``mask``: ``(N, M)``."""
    return np.where(mask, x, 0.0).sum(axis=(2, 3)).T


def decide_support_loss(cube: PairCube, *, n_boot: int, ci: float, rng: np.random.Generator) -> Decision:
    """Obs. 1(a): mean ΔC over still-correct pairs (Q_cc, pooled over models) is above 0 (Eqs. 10, 12).

    ΔC of a still-correct pair is the loss of top-1 confidence; it is antisymmetric in the clean and
    corrupted roles, so centred at 0 when they are exchangeable (no vision)."""
    cc = cube.state_masks()["cc"]
    W = boot_weights(cube.n_items, n_boot, rng)
    x, lo, hi = _interval(boot_ratio(W, _sum_items(cube.dC, cc).sum(1), _sum_items(1.0, cc).sum(1)), ci)
    ras_cc = float(np.nanmean(np.where(cc, cube.RAS, np.nan))) if cc.any() else np.nan
    return Decision(float(x), float(lo), float(hi), EPS, np.inf, verdict(lo, hi, low=EPS),
                    f"Q_cc: {int(cc.sum()):,} pairs, mean ΔC {x:+.4f} [{lo:+.4f}, {hi:+.4f}], mean RAS "
                    f"{ras_cc:+.4f}", cube.n_items)


def decide_rank_mismatch(cube: PairCube, *, n_boot: int, ci: float, rng: np.random.Generator) -> Decision:
    """Obs. 1(b): two models ordered one way by ΔAcc and the other way by mean RAS, each order decided.

    Paired differences per model pair over the same resampled questions, each interval at level
    ``1 − (1 − ci)/n_pairs`` (Bonferroni over the pairs). The pair shown is the most discordant one; the value
    is its RAS difference oriented so that ΔAcc prefers the first model (the claim: below 0)."""
    M = len(cube.models)
    if M < 2:
        return Decision(np.nan, np.nan, np.nan, -np.inf, -EPS, NO_SUBJECT,
                        f"{M} model: a ranking needs at least two", cube.n_items)
    W = boot_weights(cube.n_items, n_boot, rng)
    p = cube.present
    c0 = np.broadcast_to(cube.correct_clean[:, :, None, None], p.shape)
    den = _sum_items(1.0, p)
    acc = boot_ratio(W, _sum_items(cube.correct.astype(float) - c0, p), den)  # (B+1, M): ΔAcc
    rs = boot_ratio(W, _sum_items(cube.RAS, p), den)
    pairs = [(a, b) for a in range(M) for b in range(a + 1, M)]
    level = 1.0 - (1.0 - ci) / len(pairs)
    found = []
    for a, b in pairs:
        sign = 1.0 if acc[0, a] >= acc[0, b] else -1.0
        da, dr = sign * (acc[:, a] - acc[:, b]), sign * (rs[:, a] - rs[:, b])
        (xa, la, ha), (xr, lr, hr) = _interval(da, level), _interval(dr, level)
        v = combine([verdict(la, ha, low=EPS), verdict(lr, hr, high=-EPS)])
        score = min(la / max(ha - la, EPS), -hr / max(hr - lr, EPS)) if np.isfinite(la + hr) else -np.inf
        names = (cube.models[a], cube.models[b])[:: int(sign)]
        found.append(((v == REPRODUCED, v == UNDECIDED, score), v, names, (xa, la, ha), (xr, lr, hr)))
    verdicts = [f[1] for f in found]
    v = REPRODUCED if REPRODUCED in verdicts else NOT_REPRODUCED if all(
        x == NOT_REPRODUCED for x in verdicts) else UNDECIDED
    _, _, (m1, m2), (xa, la, ha), (xr, lr, hr) = max(found, key=lambda f: f[0])
    return Decision(float(xr), float(lr), float(hr), -np.inf, -EPS, v,
                    f"most discordant pair {m1} vs {m2}: ΔAcc difference {xa:+.4f} [{la:+.4f}, {ha:+.4f}], "
                    f"RAS difference {xr:+.4f} [{lr:+.4f}, {hr:+.4f}] ({level:.2%} intervals, {len(pairs)} pairs)",
                    cube.n_items)


def decide_gains(cube: PairCube, *, n_boot: int, ci: float, rng: np.random.Generator) -> Decision:
    """Obs. 2: for every model, R_c − R_c(swapped) < 0, and pooled Q_wc mean RAS > 0 (Eqs. 11, 12, 15).

    R_c(swapped) is the clean-correct source's mean RAS with the two roles exchanged (corrupted → clean,
    i.e. ``ΔC + min(0, ΔC·ΔS)``, over pairs whose corrupted answer is correct): what R_c is when corruption
    does nothing but noise. An intersection of per-model tests: each interval at level ``ci``. The value is the
    least damaged model's difference, or Q_wc's mean RAS when only that part is short of reproduced."""
    p = cube.present
    c0 = np.broadcast_to(cube.correct_clean[:, :, None, None], p.shape)
    W = boot_weights(cube.n_items, n_boot, rng)
    swapped = cube.dC + np.minimum(0.0, cube.dC * cube.dS)
    rc = boot_ratio(W, _sum_items(cube.RAS, p & c0), _sum_items(1.0, p & c0))
    rc_swap = boot_ratio(W, _sum_items(swapped, p & cube.correct), _sum_items(1.0, p & cube.correct))
    x, lo, hi = _interval(rc - rc_swap, ci)
    per_model = [verdict(lo[m], hi[m], high=-EPS) for m in range(len(cube.models))]
    wc = cube.state_masks()["wc"]
    xw, lw, hw = _interval(boot_ratio(W, _sum_items(cube.RAS, wc).sum(1), _sum_items(1.0, wc).sum(1)), ci)
    v_wc = verdict(lw, hw, low=EPS)
    v = combine([*per_model, v_wc])
    worst = int(np.nanargmax(hi)) if np.isfinite(hi).any() else 0
    # the row shows the part that decides it: the least damaged model, or Q_wc when every model is decided
    shown = (xw, lw, hw, EPS, np.inf) if v_wc != REPRODUCED and all(p_ == REPRODUCED for p_ in per_model) else (
        x[worst], lo[worst], hi[worst], -np.inf, -EPS)
    return Decision(*(float(t) for t in shown), v,
                    "R_c − R_c(swapped): " + ", ".join(f"{m} {x[k]:+.3f} [{lo[k]:+.3f}, {hi[k]:+.3f}]"
                                                      for k, m in enumerate(cube.models))
                    + f"; Q_wc: {int(wc.sum()):,} pairs, mean RAS {xw:+.3f} [{lw:+.3f}, {hw:+.3f}]", cube.n_items)


LOSS, CORRECTION = (1, 2), (4, 5)  # trajectory class codes (TRAJECTORY_CLASSES)


def _trajectory_sums(cube: PairCube, klass: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per question and model: count of complete trajectories in ``klass`` and sums of their medians."""
    M, N, J, L = cube.present.shape
    complete = cube.present.all(axis=3)
    c0 = np.broadcast_to(cube.correct_clean[:, :, None], (M, N, J))
    code = classify_paths(c0.reshape(-1), cube.correct.reshape(-1, L)).reshape(M, N, J)
    sel = complete & np.isin(code, klass)
    med = [np.median(np.where(sel[..., None], q, 0.0), axis=3) for q in (cube.dS, cube.dC)]
    return (sel.sum(2).T.astype(float), *(np.where(sel, m_, 0.0).sum(2).T for m_ in med))


def decide_paths(cube: PairCube, *, n_boot: int, ci: float, rng: np.random.Generator, min_n: int = 5) -> Decision:
    """Obs. 3: some model's loss trajectories overconfident and some model's corrections hesitant.

    Per model, the class means (over its transient and persistent loss, resp. correction, trajectories)
    of the trajectory medians ΔS̃ and ΔC̃ (§VII-D, Figs. 6 and 12); overconfident: ΔS̃ < 0 and ΔC̃ > 0, hesitant:
    ΔS̃ > 0 and ΔC̃ < 0, each interval at level ``1 − (1 − ci)/M`` (some model: Bonferroni over the models).
    Models with fewer than ``min_n`` trajectories in the class cannot show it. The value is the best
    overconfident model's mean ΔS̃."""
    M = len(cube.models)
    W = boot_weights(cube.n_items, n_boot, rng)
    level = 1.0 - (1.0 - ci) / max(M, 1)
    parts, words, shown = [], [], None
    for name, klass, signs in (("overconfident loss", LOSS, (-1, 1)), ("hesitant correction", CORRECTION, (1, -1))):
        n, s_dS, s_dC = _trajectory_sums(cube, klass)
        (xs, ls, hs), (xc, lc, hc) = (_interval(boot_ratio(W, s, n), level) for s in (s_dS, s_dC))
        per = []
        for m in range(M):
            if n[:, m].sum() < min_n:
                per.append((NO_SUBJECT, m))
                continue
            vs = verdict(ls[m], hs[m], low=EPS) if signs[0] > 0 else verdict(ls[m], hs[m], high=-EPS)
            vc = verdict(lc[m], hc[m], low=EPS) if signs[1] > 0 else verdict(lc[m], hc[m], high=-EPS)
            per.append((combine([vs, vc]), m))
        real = [(v, m) for v, m in per if v != NO_SUBJECT]
        if not real:
            parts.append(NO_SUBJECT)
            words.append(f"{name}: no model with {min_n} trajectories")
            continue
        hits = [m for v, m in real if v == REPRODUCED]
        part = REPRODUCED if hits else NOT_REPRODUCED if all(v == NOT_REPRODUCED for v, _ in real) else UNDECIDED
        parts.append(part)
        key = hits[0] if hits else real[0][1]
        if name.startswith("over"):
            shown = (xs[key], ls[key], hs[key])
        words.append(f"{name}: " + ", ".join(f"{cube.models[m]} ΔS̃ {xs[m]:+.3f} [{ls[m]:+.3f}, {hs[m]:+.3f}] "
                                             f"ΔC̃ {xc[m]:+.3f} [{lc[m]:+.3f}, {hc[m]:+.3f}] (n {int(n[:, m].sum())})"
                                             for _, m in real))
    v = NO_SUBJECT if all(p_ == NO_SUBJECT for p_ in parts) else combine(
        [p_ if p_ != NO_SUBJECT else NOT_REPRODUCED for p_ in parts])
    x, lo, hi = shown if shown is not None else (np.nan, np.nan, np.nan)
    return Decision(float(x), float(lo), float(hi), -np.inf, -EPS, v, "; ".join(words), cube.n_items)


def decide_severity(cube: PairCube, *, n_boot: int, ci: float, rng: np.random.Generator) -> Decision:
    """Obs. 4: slope of R_w over severity > 0, slope of R_c < 0, and mean over severities of −R_c − R_w > 0.

    R_c and R_w per severity pool the models and corruptions (Eq. 15); slopes are least-squares fits on the
    severity number, each with its question-bootstrap interval (the same questions at every severity). The
    value is the slope of R_w."""
    L = len(cube.levels)
    if L < 2:
        return Decision(np.nan, np.nan, np.nan, EPS, np.inf, NO_SUBJECT,
                        f"{L} severity level: a slope needs two", cube.n_items)
    p = cube.present
    c0 = np.broadcast_to(cube.correct_clean[:, :, None, None], p.shape)
    W = boot_weights(cube.n_items, n_boot, rng)

    def per_level(mask):
        num = np.where(mask, cube.RAS, 0.0).sum(axis=(0, 2)).reshape(cube.n_items, L)
        return boot_ratio(W, num, mask.sum(axis=(0, 2)).reshape(cube.n_items, L).astype(float))

    rc, rw = per_level(p & c0), per_level(p & ~c0)
    x = np.asarray(cube.levels, dtype=float) - np.mean(cube.levels)
    slope = lambda r: (r * x).sum(1) / (x @ x)  # noqa: E731
    (sw, lw, hw), (sc, lc, hc), (gap, lg, hg) = (_interval(s, ci) for s in (slope(rw), slope(rc),
                                                                          (-rc - rw).mean(1)))
    v = combine([verdict(lw, hw, low=EPS), verdict(lc, hc, high=-EPS), verdict(lg, hg, low=EPS)])
    return Decision(float(sw), float(lw), float(hw), EPS, np.inf, v,
                    "R_c by severity " + " ".join(f"{r:+.3f}" for r in rc[0]) + f", slope {sc:+.4f} [{lc:+.4f}, "
                    f"{hc:+.4f}]; R_w " + " ".join(f"{r:+.3f}" for r in rw[0]) + f", slope {sw:+.4f} [{lw:+.4f}, "
                    f"{hw:+.4f}]; mean −R_c − R_w {gap:+.4f} [{lg:+.4f}, {hg:+.4f}]", cube.n_items)


ROWS = (
    ("1. answer stability can hide structural instability: still-correct pairs lose support",
     "Q_cc (39.9 % of pairs) keeps its answer yet loses alignment: mean ΔC +0.019, RAS −0.019 (Table III)",
     "mean ΔC of Q_cc pairs (pooled over models), 95 % question-bootstrap interval wholly above 0",
     decide_support_loss),
    ("1. answer stability can hide structural instability: response and RAS rankings disagree",
     "similar response robustness, different RAS profiles; response and RAS ranks differ (Table VI)",
     "some model pair ordered one way by ΔAcc and the other by mean RAS, both paired question-bootstrap "
     "intervals (Bonferroni over pairs) excluding 0", decide_rank_mismatch),
    ("2. apparent accuracy gains are not always structural gains",
     "Q_wc mean RAS +0.462 while R_c < 0 for every model; mixed cells common (Tables II, III)",
     "for every model R_c − R_c(clean and corrupted swapped) < 0 (95 % paired question-bootstrap interval), "
     "and pooled Q_wc mean RAS interval above 0", decide_gains),
    ("3. same answer paths can differ in support",
     "overconfident answer loss (Gemma3) and hesitant persistent correction (DeepSeek) within trajectory "
     "classes (Fig. 6)",
     "some model's loss trajectories: mean ΔS̃ < 0 and ΔC̃ > 0; some model's correction trajectories: mean ΔS̃ > 0 "
     "and ΔC̃ < 0 (question-bootstrap intervals, Bonferroni over models; at least 5 trajectories)", decide_paths),
    ("4. stronger corruption can make wrong answers look better",
     "R_c grows more negative with severity while R_w becomes more positive but stays smaller (Fig. 7)",
     "slope of R_w over severity > 0, slope of R_c < 0, mean −R_c − R_w > 0 (95 % question-bootstrap "
     "intervals)", decide_severity),
)


def claims_rows(cube: PairCube, *, n_boot: int = 1000, ci: float = 0.95, seed: int = 0) -> list[Claim]:
    """The notebook's claim rows on a cube (every rule with its own child seed of ``seed``)."""
    rows = []
    subject = ", ".join(cube.models)
    seeds = np.random.SeedSequence(seed).spawn(len(ROWS))
    for (claim, paper, test, fn), s in zip(ROWS, seeds, strict=True):
        d = fn(cube, n_boot=n_boot, ci=ci, rng=np.random.default_rng(s))
        decide = ""
        if d.verdict == UNDECIDED:
            decide = decide_text(d.n_items, d.value, d.lo, d.hi, d.low, d.high, unit="questions")
        rows.append(Claim(claim, paper, subject, NULL, test, d.value, d.lo, d.hi, d.measured, d.verdict, decide))
    return rows


def claims_table(pairs: pd.DataFrame, levels=None, *, n_boot: int = 1000, ci: float = 0.95,
                 seed: int = 0) -> pd.DataFrame:
    """Seed 000's four observations decided on a run's pair table (notebook 04)."""
    return claims_frame(claims_rows(from_pairs(pairs, levels), n_boot=n_boot, ci=ci, seed=seed))
