"""Notebook 07's claims about curves, the weighting ablation and latent instability (seed 001: §V, S1, S3, §II-F,
§VI), and the ground truth of the synthetic world."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...stats.claims import (
    BY_CONSTRUCTION,
    Claim,
    combine,
    interval_text,
    no_subject,
)
from . import decide as D
from .claims_base import (
    NAN,
    RHO_IDENTICAL,
    _arrays,
    _models,
    _n_questions,
    _name,
    _row,
    _scheme_pairs,
    _scheme_rhos,
    rho_per_state,
)

__all__ = ["obs_crop_not_blur", "obs_three_regimes", "obs_non_monotone", "obs_weighting_insensitive",
           "obs_no_spatial_model_level", "obs_no_spatial_per_state", "latent_difference", "obs_latent_share",
           "paired_item_matrix", "check_bottomup_hurts_more", "paired_all_above", "accuracy_by_evidence"]


def _ladder_drops(t, ladders: Sequence[str]) -> pd.DataFrame:
    c = t.curves[t.curves["perturbation"].isin(list(ladders))]
    clean = c[c["level"] == 0].set_index(["model", "perturbation"])["accuracy"]
    mean = c[c["level"] > 0].groupby(["model", "perturbation"])["accuracy"].mean()
    return (clean - mean).unstack("perturbation").reindex(columns=list(ladders))


def obs_crop_not_blur(point, reps, crop: str = "bruce_center_crop",
                      others: Sequence[str] = ("bruce_blur", "bruce_contrast"), ci: float = 0.95) -> Claim:
    """§V: some model loses more accuracy over the crop ladder than over blur's and over contrast's (mean drop
    from clean over the levels; both paired differences decided, Bonferroni over the models)."""
    claim = "V. robust to blur and contrast, not to centre crop"
    paper = "several models stable under blur and low contrast degrade more under centre crop (Fig. 6)"
    null = "the crop ladder costs no model more than blur or contrast (worst case: equal drops)"
    test = (f"some model's paired {ci:.0%} intervals of drop(crop) − drop(blur) and drop(crop) − drop(contrast) "
            "both above 0 (Bonferroni over the models); margin = the smaller difference")
    lads = [crop, *others]
    pt = _ladder_drops(point, lads)
    if pt.empty or pt.isna().all().any():
        return no_subject(claim, paper, null, test, "the run lacks the crop, blur or contrast ladder")
    comp = np.stack([pt[crop] - pt[o] for o in others], axis=1)
    cr = np.stack([np.stack([(d[crop] - d[o]).to_numpy() for o in others], axis=1)
                   for d in (_ladder_drops(r, lads).reindex(pt.index) for r in reps)]) if reps else \
        np.empty((0, *comp.shape))
    dec = D.some_instance(comp, cr, ci, df=_n_questions(point) - 1)
    m = pt.index[dec.best]
    measured = (f"margin {interval_text(dec.value, dec.lo, dec.hi, 3)} for {m} (drops: crop {pt.loc[m, crop]:.3f}, "
                + ", ".join(f"{o.removeprefix('bruce_')} {pt.loc[m, o]:.3f}" for o in others)
                + f"); {dec.n_decided} of {dec.n} models decided")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


def _traversal(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["perturbation"].astype(str).str.startswith("traverse_")]


def obs_three_regimes(point, reps, ci: float = 0.95) -> Claim:
    """S1: the traversal curves fall into all three regimes: for each of stable (retention >= ``stable_min``),
    progressive and severe (< ``severe_below``) some curve's retention interval lies inside the band
    (Bonferroni over the curves; the three parts must all hold)."""
    reg = _traversal(point.regimes)
    lo_b, hi_b = reg.attrs.get("severe_below", 0.5), reg.attrs.get("stable_min", 0.8)
    claim = "S1. three traversal regimes: stable, progressive, severe"
    paper = "Qwen2.5-VL stable, GPT-4.1 progressive, Gemini 3.5 Flash severe (Fig. 5)"
    null = "the curves fill at most two of the regimes (worst case: retentions on the bands' edges)"
    test = (f"for each regime some traversal curve's {ci:.0%} retention interval (A_last / A_clean; Bonferroni over "
            f"the curves) lies inside its band: stable >= {hi_b:g}, progressive [{lo_b:g}, {hi_b:g}), "
            f"severe < {lo_b:g}")
    if reg.empty:
        return no_subject(claim, paper, null, test, "no traversal curve")
    keys = ["model", "perturbation"]
    idx, P, R = _arrays(reg, [_traversal(r.regimes) for r in reps], keys, ["retention"])
    ret, rr = P[:, 0], R[:, :, 0]
    bands = {"stable": ([ret - hi_b], [rr - hi_b]), "progressive": ([ret - lo_b, hi_b - ret], [rr - lo_b, hi_b - rr]),
             "severe": ([lo_b - ret], [lo_b - rr])}
    dfa = _n_questions(point) - 1
    decs = {k: D.some_instance(np.stack(c, axis=1), np.stack(r, axis=2), ci, df=dfa) for k, (c, r) in bands.items()}
    v = combine(d.verdict for d in decs.values())
    weak = min(decs, key=lambda k: decs[k].lo if np.isfinite(decs[k].lo) else -np.inf)
    w = decs[weak]
    counts = point.regimes.pipe(_traversal)["regime"].astype(str).value_counts()
    measured = (f"weakest regime {weak}: {_name(idx[w.best])} inside its band by "
                f"{interval_text(w.value, w.lo, w.hi, 3)}; "
                "curves decided per regime: " + ", ".join(f"{k} {d.n_decided}" for k, d in decs.items())
                + " (point counts " + ", ".join(f"{k} {counts.get(k, 0)}" for k in decs) + f" of {len(reg)})")
    return _row(claim, paper, _models(point), null, test, D.Decision(v, w.value, w.lo, w.hi, w.best), measured,
                _n_questions(point))


def _rises(t, keys: Sequence[str]) -> pd.DataFrame:
    c = _traversal(t.curves).sort_values([*keys, "level"])
    c = c.assign(rise=c.groupby(list(keys), observed=True)["accuracy"].diff())
    return c.dropna(subset=["rise"])


def obs_non_monotone(point, reps, tol: float = 0.02, ci: float = 0.95) -> Claim:
    """S3: degradation is not strictly monotone: some traversal curve gains accuracy from one level to the
    next (paired interval of the rise above 0, Bonferroni over every curve × step)."""
    claim = "S3. degradation is not strictly monotonic"
    paper = "several models gain accuracy at intermediate crop severities before declining (Fig. 5)"
    null = "monotone curves: accuracy never rises from one level to the next (worst case: flat curves)"
    test = (f"some traversal curve's paired {ci:.0%} interval of A(level k) − A(level k−1) above 0 (Bonferroni over "
            f"curves × steps, clean to level 1 included); not reproduced when every rise's upper end is <= {tol:g}")
    keys = ["model", "perturbation"]
    pt = _rises(point, keys)
    if pt.empty:
        return no_subject(claim, paper, null, test, "no traversal curve with two levels")
    idx, P, R = _arrays(pt, [_rises(r, keys) for r in reps], [*keys, "level"], ["rise"])
    dec = D.some_instance(P[:, 0], R[:, :, 0], ci, null_edge=tol, df=_n_questions(point) - 1)
    m, pert, lv = idx[dec.best]
    measured = (f"rise {interval_text(dec.value, dec.lo, dec.hi, 3)} for {m}, {pert} level {int(lv) - 1} → {int(lv)}; "
                f"{dec.n_decided} of {dec.n} steps decided rising")
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point))


# ----------------------------------------------------------------------------- the weighting ablation (§II-F)


def obs_weighting_insensitive(point, reps, *, edge: float = RHO_IDENTICAL, ci: float = 0.95,
                              df: int | None = None) -> Claim:
    """§II-F: the weighting schemes rank the units alike: every pairwise Spearman ρ between schemes (RCI_mu and
    T_mu, no-spatial aside) has its interval above ``edge``."""
    claim = "II-F. rankings are insensitive to the weighting"
    paper = "accuracy-, entropy-, failure-heavy and equal weights: pairwise correlations ≈ 0.95–0.99"
    null = f"some pair of schemes correlates at r = {edge:g} over the units (the edge of 'nearly identical')"
    test = (f"every pairwise correlation r between the schemes' scores over the units, corrected for the question "
            f"noise they share, {ci:.0%} interval on Fisher's scale above {edge:g}")
    pairs = _scheme_pairs(point.ablation)
    if len(point.ablation) < 3 or not pairs:
        return no_subject(claim, paper, null, test, "fewer than three units, or fewer than two schemes, to rank")
    keys = [c for c in ("model", "group") if c in point.ablation]
    cols = list(dict.fromkeys(c for p in pairs for c in p))
    _, P, R = _arrays(point.ablation, [r.ablation for r in reps], keys, cols)
    raw = _scheme_rhos(point.ablation, pairs)
    est = [D.corrected_correlation(P[:, cols.index(a)], P[:, cols.index(b)], R[:, :, cols.index(a)],
                                   R[:, :, cols.index(b)]) for a, b in pairs]
    rho = np.array([e[0] for e in est])
    rr = np.stack([e[1] for e in est], axis=1)
    dec = D.all_instances(rho, rr, ci, edge=edge, fisher=True, df=df)
    a, b = pairs[dec.best]
    measured = (f"r({a}, {b}) {interval_text(dec.value, dec.lo, dec.hi, 3)} corrected for the question noise the "
                f"schemes share (Spearman ρ {raw[dec.best]:.3f}), the weakest of {len(pairs)} pairs; {dec.n_decided} "
                f"of {dec.n} above {edge:g}" + ("; the noise is as large as the units' differences: no correction "
                                                 "holds" if not np.isfinite(dec.value) else ""))
    return _row(claim, paper, _models(point), null, test, dec, measured, _n_questions(point), edge=edge)


def obs_no_spatial_model_level(rho_model: float, residual: float, subject: str = "") -> Claim:
    """§II-F at the model level: T_equal = 4/5 T_no-spatial + α4 Σγ s for every unit, so ρ = 1 by construction."""
    return Claim("II-F. removing D_spatial, model level (by construction)",
                 "ρ ∼ 0.95 between T-RCI with and without D_spatial", subject,
                 "none: an identity of the definitions", "T_equal = 4/5 T_no-spatial + α4 Σ_k γ_k s_k with the same "
                 "offset for every unit, so the units' Spearman ρ is 1 on complete data; not counted",
                 rho_model, NAN, NAN, f"ρ = {rho_model:.6f}; largest affine residual {residual:.1e}", BY_CONSTRUCTION)


def obs_no_spatial_per_state(point, reps, *, edge: float = RHO_IDENTICAL, paper_rho: float = 0.95,
                             ci: float = 0.95, df: int | None = None) -> Claim:
    """§II-F per state: removing D_spatial leaves nearly identical trends: ρ between the per-state terms with
    and without D_spatial, its interval (Fisher's scale) above ``edge``."""
    claim = "II-F. removing D_spatial leaves nearly identical trends, per state"
    paper = f"ρ ∼ {paper_rho:g} between T-RCI with and without D_spatial"
    null = f"r = {edge:g} between the per-state terms with and without D_spatial (the edge of 'nearly identical')"
    test = (f"correlation r of the per-state terms τ(r, s_k) with and without D_spatial over unit × direction × state, "
            f"corrected for the question noise both carry, {ci:.0%} interval on Fisher's scale above {edge:g}")
    keys = [c for c in (*point.states.attrs.get("unit", ("model", "group")), "direction", "level")
            if c in point.states]
    _, P, R = _arrays(point.states, [r.states for r in reps], keys, ["T_equal", "T_no_spatial"])
    n = int(np.isfinite(P).all(axis=1).sum())
    raw = rho_per_state(point)
    if not np.isfinite(raw):
        return no_subject(claim, paper, null, test, f"the per-state terms do not vary (n = {n}): nothing to correlate")
    rho, rr = D.corrected_correlation(P[:, 0], P[:, 1], R[:, :, 0], R[:, :, 1])
    dec = D.all_instances([rho], rr[:, None], ci, edge=edge, fisher=True, df=df)
    return _row(claim, paper, _models(point), null, test, dec, f"r {interval_text(dec.value, dec.lo, dec.hi, 3)} "
                f"corrected for the question noise both terms share (Spearman ρ {raw:.3f} uncorrected; n = {n})",
                _n_questions(point), edge=edge)


# ----------------------------------------------------------------------------- §VI and the ground truth


def latent_difference(flip: np.ndarray, warned: np.ndarray, rows: np.ndarray | None = None) -> float:
    """Share of flipping trajectories warned before the flip minus the share of never-flipping ones warned."""
    f, w = (flip, warned) if rows is None else (flip[rows], warned[rows])
    nf, nn = f.sum(), (~f).sum()
    return float((w & f).sum() / nf - (w & ~f).sum() / nn) if nf and nn else NAN


def obs_latent_share(warnings: pd.DataFrame, n_boot: int, rng: np.random.Generator, ci: float = 0.95) -> Claim:
    """§VI: a warning precedes the flip more often than it comes without one: :func:`latent_difference`, its
    interval from ``n_boot`` resamples of the questions (a question's trajectories drawn together)."""
    claim = "VI. latent instability precedes the flip"
    paper = "T-RCI rises 0.00 → 0.15 while the answer is still right, before it flips at RL-0.8 (Fig. 7)"
    null = "warnings independent of flips: the same warning rate on trajectories that flip and on those that do not"
    test = (f"share of flips warned before (D_conf >= threshold while right) minus the share of never-flipping "
            f"trajectories warned, {ci:.0%} interval over resampled questions above 0")
    flip = warnings["flip_level"].notna().to_numpy()
    warned = warnings["warn_level"].notna().to_numpy()
    if not flip.any() or flip.all():
        return no_subject(claim, paper, null, test, "no flip, or no trajectory without one")
    v = latent_difference(flip, warned)
    reps = D.cluster_bootstrap(lambda r: latent_difference(flip, warned, r), warnings["item_id"].to_numpy(),
                               n_boot, rng)
    lo, hi = D.normal_intervals(v, reps, ci, df=int(warnings['item_id'].nunique()) - 1)
    dec = D.Decision(D.side_verdict(float(lo), float(hi), 0.0), v, float(lo), float(hi))
    models = ", ".join(map(str, dict.fromkeys(warnings["model"].astype(str))))
    measured = (f"{(warned & flip).sum() / flip.sum():.3f} warned − {(warned & ~flip).sum() / (~flip).sum():.3f} "
                f"false alarms = {interval_text(v, dec.lo, dec.hi, 3)} ({flip.sum()} flips, {(~flip).sum()} without)")
    return _row(claim, paper, models, null, test, dec, measured, int(warnings["item_id"].nunique()))


def paired_item_matrix(pred: pd.DataFrame, a: str, b: str) -> tuple[pd.Index, np.ndarray]:
    """Per question (rows) and model (columns): accuracy over the levels of perturbation ``a`` minus over ``b``."""
    acc = pred[pred["perturbation"].isin([a, b])].pivot_table(index="item_id", columns=["model", "perturbation"],
                                                             values="correct", aggfunc="mean")
    m = acc.xs(a, axis=1, level="perturbation") - acc.xs(b, axis=1, level="perturbation")
    return m.columns, m.to_numpy(np.float64)


def check_bottomup_hurts_more(pred: pd.DataFrame, evidence: pd.DataFrame, traversals: Mapping[str, str],
                              n_boot: int, rng: np.random.Generator, ci: float = 0.95,
                              td: str = "TD", bu: str = "BU") -> Claim:
    """Ground truth: in ground-plane scenes (sky on top) bottom-up removes more evidence than top-down, so it
    should hurt more: every model's accuracy over the states, paired per question, is lower under bottom-up
    (each model's interval over resampled questions above 0; intersection-union).

    ``pred``: the predictions on ground scenes; ``evidence``: the evidence table of the same items with a
    ``direction`` column; ``traversals``: direction label → perturbation name.
    """
    claim = "ground truth: bottom-up hurts more than top-down in ground scenes"
    paper = "not a claim of the paper: the synthetic world has its sky on top and its objects on the ground"
    null = "the band's direction does not matter: equal accuracy under top-down and bottom-up"
    test = (f"per model, accuracy under top-down minus bottom-up paired per question, {ci:.0%} interval over "
            "resampled questions above 0 for every model")
    ev = evidence[evidence["direction"].isin([td, bu])]
    rem = ev.groupby("direction")["target_removed"].mean()
    if td not in traversals or bu not in traversals or td not in rem or bu not in rem or pred.empty:
        return no_subject(claim, paper, null, test, "no top-down and bottom-up states on ground scenes",
                          section="construction")
    if not rem[bu] > rem[td]:
        return no_subject(claim, paper, null, test, f"bottom-up removes no more of the target than top-down here "
                          f"(BU {rem[bu]:.3f}, TD {rem[td]:.3f})", section="construction")
    cols, M = paired_item_matrix(pred, traversals[td], traversals[bu])
    dec = paired_all_above(M, n_boot, rng, ci, df=M.shape[0] - 1)
    subject = ", ".join(map(str, cols))
    measured = (f"weakest model {cols[dec.best]}: TD − BU {interval_text(dec.value, dec.lo, dec.hi, 3)}; "
                f"{dec.n_decided} of {dec.n} models decided; target share removed BU {rem[bu]:.3f} vs TD {rem[td]:.3f}")
    return _row(claim, paper, subject, null, test, dec, measured, M.shape[0], section="construction")


def paired_all_above(M: np.ndarray, n_boot: int, rng: np.random.Generator, ci: float = 0.95,
                     df: int | None = None) -> D.Decision:
    """Every column's mean of per-question differences ``M`` (questions × columns) above 0, each with its interval
    over ``n_boot`` resamples of the questions (:func:`.decide.all_instances`)."""
    from ...stats.bootstrap import resample_counts

    M = np.asarray(M, dtype=np.float64)
    ok = np.isfinite(M)
    X = np.where(ok, M, 0.0)
    C = resample_counts(M.shape[0], n_boot, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = X.sum(0) / ok.sum(0)
        reps = (C @ X) / (C @ ok)
    return D.all_instances(point, reps, ci, df=df)


def accuracy_by_evidence(pred: pd.DataFrame, evidence: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per traversal ``direction`` (rows) and evidence state (columns: ``intact``, ``partial``,
    ``removed``, ...), with ``n`` rows per direction: the rows of ``pred`` joined to the ``evidence`` table of
    the same items and conditions (with a ``direction`` column), as the ground-truth check reads them.
    Accuracy with the evidence intact is what the fill costs by itself."""
    by_ev = pred.merge(evidence[["item_id", "perturbation", "level", "evidence", "direction"]],
                       on=["item_id", "perturbation", "level"])
    return (by_ev.pivot_table(index="direction", columns="evidence", values="correct", aggfunc="mean")
            .join(by_ev.groupby("direction").size().rename("n")))
