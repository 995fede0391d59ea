"""Seed 001's observations that apply to the model organisms, checked on a run's tables (notebook 07).

Each function returns a :class:`~vlmrobust.stats.claims.Claim`; ``reproduced`` is ``None`` when
the run holds no data to decide or the row holds by construction. The thresholds are stated in each
check's ``check`` text and are arguments, so a reader can tighten them. The checks with intervals (shares
of instances, rank correlations, the permutation null of the dataset dependence) are in :mod:`.claims`.
"""


from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import interval_of
from ...stats.claims import Claim, claims_frame, interval_text
from ...stats.correlation import spearman
from .ablation import rank_correlations
from .paper_table import PAPER_TABLE_I, paper_rank_correlation
from .replicates import interval

__all__ = ["share_similar_different", "share_clean_not_robust", "share_direction_spread", "share_worst_is",
           "share_non_monotone", "share_crop_worse", "group_spread", "rho_rci_trci", "rho_per_state", "obs_shares",
           "obs_rl_most_fragile", "obs_crop_not_blur", "obs_dataset_dependence", "obs_corruption_vs_traversal",
           "obs_no_spatial_model_level", "obs_no_spatial_per_state", "obs_latent_share", "obs_three_regimes",
           "obs_weighting_insensitive", "check_bottomup_hurts_more", "accuracy_by_evidence", "min_rank_correlation",
           "claims_table"]


def _spearman(x, y) -> float:
    return spearman(np.asarray(x, float), np.asarray(y, float))


# ----------------------------------------------------------------------------- statistics of the run's tables


def share_similar_different(t, acc: str = "A_CR", index: str = "RCI_mu", acc_tol: float = 0.05,
                            gap: float = 0.05) -> float:
    """O6: among pairs of units with ``|Δacc| <= acc_tol``, the share with ``|Δindex| >= gap`` (NaN: no pair)."""
    t1 = t.table1[[acc, index]].dropna()
    a, r = t1[acc].to_numpy(), t1[index].to_numpy()
    i, j = np.triu_indices(len(t1), 1)
    close = np.abs(a[i] - a[j]) <= acc_tol
    return float((np.abs(r[i] - r[j])[close] >= gap).mean()) if close.any() else float("nan")


def share_clean_not_robust(t, group: str = "group") -> float:
    """O4: among pairs of models of one group with different ``A_CL``, the share in which the model with
    the higher clean accuracy has the higher (worse) ``RCI_mu``."""
    hits = tot = 0
    t1 = t.table1.dropna(subset=["A_CL", "RCI_mu"])
    for _, g in (t1.groupby(group, observed=True) if group in t1 else [(None, t1)]):
        a, r = g["A_CL"].to_numpy(), g["RCI_mu"].to_numpy()
        i, j = np.triu_indices(len(g), 1)
        d = a[i] != a[j]
        hits += int((np.sign(a[i] - a[j]) == np.sign(r[i] - r[j]))[d].sum())
        tot += int(d.sum())
    return hits / tot if tot else float("nan")


def share_direction_spread(t, gap: float = 0.05) -> float:
    """O9/S4: the share of units whose T-RCI(r) spans ``>= gap`` over the directions."""
    unit = list(t.directions.attrs.get("unit", ("model", "group")))
    s = t.directions.groupby(unit, observed=True)["T_RCI"].agg(lambda x: x.max() - x.min()).dropna()
    return float((s >= gap).mean()) if len(s) else float("nan")


def share_worst_is(t, direction: str = "RL") -> float:
    """O9: the share of units whose most fragile direction ``W_D`` is ``direction``."""
    w = t.table1["W_D"].dropna().astype(str)
    return float((w == direction).mean()) if len(w) else float("nan")


def share_non_monotone(t, kind: str | None = "traversal") -> float:
    """S3: the share of fragility curves (``kind``: traversal perturbations only, or all) that rise by more
    than the regimes' ``tol`` from one level to the next."""
    r = t.regimes
    if kind == "traversal":
        r = r[r["perturbation"].astype(str).str.startswith("traverse_")]
    return float(r["non_monotone"].mean()) if len(r) else float("nan")


def _drops(t, ladders: Sequence[str]) -> pd.DataFrame:
    c = t.curves[t.curves["perturbation"].isin(list(ladders))]
    clean = c[c["level"] == 0].set_index(["model", "perturbation"])["accuracy"]
    mean = c[c["level"] > 0].groupby(["model", "perturbation"])["accuracy"].mean()
    return (clean - mean).unstack("perturbation")


def share_crop_worse(t, crop: str = "bruce_center_crop", others: Sequence[str] = ("bruce_blur", "bruce_contrast"),
                     margin: float = 0.0) -> float:
    """§V: the share of models whose mean accuracy drop over the crop ladder exceeds their drop under each
    of ``others`` by more than ``margin``."""
    d = _drops(t, [crop, *others]).dropna()
    others = [o for o in others if o in d]
    if d.empty or crop not in d or not others:
        return float("nan")
    return float((d[crop] > d[others].max(axis=1) + margin).mean())


def group_spread(t, column: str = "RCI_mu", group: str = "group") -> float:
    """O1/O8: max − min over groups of the models' mean ``column`` (``RCI_mu`` or ``T_mu``)."""
    m = t.table1.groupby(group, observed=True)[column].mean().dropna()
    return float(m.max() - m.min()) if len(m) > 1 else float("nan")


def rho_rci_trci(t) -> float:
    """O4: Spearman ρ between ``RCI_mu`` and ``T_mu`` over the units of Table I."""
    return _spearman(t.table1["RCI_mu"], t.table1["T_mu"])


def rho_per_state(t) -> float:
    """§II-F: Spearman ρ between the per-state T-RCI terms with and without D_spatial, pooled over unit ×
    direction × state (at the model level the two are an affine map and ρ = 1 by construction)."""
    return _spearman(t.states["T_equal"], t.states["T_no_spatial"])


# ----------------------------------------------------------------------------- checks


def obs_shares(claim: str, paper: str, stat, point, reps, what: str, null: float = 0.0, ci: float = 0.95) -> Claim:
    """A "some instance" claim: the share ``stat`` with its interval; holds when the interval's lower end
    exceeds ``null``."""
    v, lo, hi = interval(stat, point, reps, ci)
    if not np.isfinite(v):
        return Claim(claim, paper, f"share of {what}; its {ci:.0%} interval above {null:g}", "no instance to count",
                     None)
    return Claim(claim, paper, f"share of {what}, {ci:.0%} bootstrap interval over the questions ({len(reps)} "
                 f"resamples), lower end above {null:g}", f"share {interval_text(v, lo, hi, 3)}",
                 bool(np.isfinite(lo) and lo > null))


def obs_rl_most_fragile(point, reps, ci: float = 0.95) -> Claim:
    """O9: right-to-left recurs as the most fragile direction: its share of W_D against 1/4 (four directions)."""
    paper = (PAPER_TABLE_I["W_D"] == "RL").mean()
    return obs_shares("9. right-to-left is the recurring most fragile direction",
                      f"W_D = RL in {int((PAPER_TABLE_I['W_D'] == 'RL').sum())} of 19 rows ({paper:.2f}); 6 of 7 on "
                      "ScienceQA (Table I)", share_worst_is, point, reps, "units whose W_D is RL, against the "
                      "1/4 of four exchangeable directions", null=0.25, ci=ci)


def obs_crop_not_blur(point, reps, margin: float = 0.0, ci: float = 0.95) -> Claim:
    """§V: stable under blur and low contrast, larger degradation under centre crop."""
    return obs_shares("V. robust to blur and contrast, not to centre crop",
                      "several models stable under blur and low contrast degrade more under centre crop (Fig. 6)",
                      lambda t: share_crop_worse(t, margin=margin), point, reps,
                      f"models whose mean accuracy drop over the crop ladder exceeds both blur's and contrast's by "
                      f"> {margin:g}", ci=ci)


def obs_dataset_dependence(point, perms, alpha: float = 0.05) -> Claim:
    """O1/O8: the groups differ in mean RCI_mu and T_mu by more than permuted group labels make them."""
    parts, ok = [], []
    for col in ("RCI_mu", "T_mu"):
        obs = group_spread(point, col)
        null = np.array([group_spread(p, col) for p in perms], dtype=np.float64)
        p = (1 + np.sum(null >= obs - 1e-12)) / (1 + len(null)) if len(null) and np.isfinite(obs) else np.nan
        order = point.table1.groupby("group", observed=True)[col].mean().sort_values()
        parts.append(f"{col} spread {obs:.3f}, permutation p = {p:.3f} (order {' < '.join(map(str, order.index))})")
        ok.append(np.isfinite(p) and p < alpha)
    return Claim("1/8. robustness depends on the dataset",
                 "ScienceQA RCI_mu < 0.12 for the strong models, MMJEE far worse, MathVista between (Table I)",
                 f"spread (max − min) of the groups' mean RCI_mu and T_mu against {len(perms)} permutations of "
                 f"the questions' group labels; both p < {alpha:g}", "; ".join(parts),
                 None if not perms else bool(all(ok)))


def obs_corruption_vs_traversal(point, reps, hi_bound: float = 0.95, ci: float = 0.95) -> Claim:
    """O4: corruption robustness and traversal robustness are distinct: ρ(RCI_mu, T_mu) well below the
    paper's own level of "nearly identical" rankings (0.95, §II-F)."""
    v, lo, hi = interval(rho_rci_trci, point, reps, ci)
    return Claim("4. corruption robustness and traversal robustness capture distinct mechanisms",
                 f"Claude: highest RCI_mu on ScienceQA yet competitive under traversal; Spearman ρ(RCI_mu, T_mu) "
                 f"over Table I's 19 rows {paper_rank_correlation():.3f}",
                 f"Spearman ρ(RCI_mu, T_mu) over the units, {ci:.0%} bootstrap interval below {hi_bound:g} (the "
                 "paper's ρ for 'nearly identical' rankings)", f"ρ {interval_text(v, lo, hi, 3)}",
                 None if not np.isfinite(v) else bool(np.isfinite(hi) and hi < hi_bound))


def obs_no_spatial_model_level(rho_model: float, residual: float) -> Claim:
    """§II-F at the model level: T_equal = 4/5 T_no-spatial + α4 Σγ s for every unit, so ρ = 1 by construction."""
    return Claim("II-F. removing D_spatial, model level (by construction)",
                 "ρ ∼ 0.95 between T-RCI with and without D_spatial",
                 "by construction: T_equal = 4/5 T_no-spatial + α4 Σ_k γ_k s_k with the same offset for every unit, "
                 "so the units' Spearman ρ is 1 on complete data; not counted",
                 f"ρ = {rho_model:.6f}; largest affine residual {residual:.1e}", None)


def obs_no_spatial_per_state(point, reps, paper: float = 0.95, ci: float = 0.95) -> Claim:
    """§II-F per state: ρ between the per-state terms with and without D_spatial; holds when the interval
    covers the paper's 0.95."""
    v, lo, hi = interval(rho_per_state, point, reps, ci)
    n = int(point.states[["T_equal", "T_no_spatial"]].dropna().shape[0])
    return Claim("II-F. removing D_spatial leaves nearly identical trends, per state",
                 f"ρ ∼ {paper:g} between T-RCI with and without D_spatial",
                 f"Spearman ρ of the per-state terms τ(r, s_k) with and without D_spatial pooled over unit × "
                 f"direction × state, {ci:.0%} bootstrap interval covers {paper:g}",
                 f"ρ {interval_text(v, lo, hi, 3)} (n = {n})",
                 None if not np.isfinite(v) else bool(lo <= paper <= hi))


def obs_latent_share(warnings: pd.DataFrame, n_boot: int, rng: np.random.Generator, ci: float = 0.95) -> Claim:
    """§VI: a warning precedes the flip more often than it comes without one: share of flips warned before
    minus the share of never-flipping trajectories warned (false alarms), bootstrap over the trajectories."""
    flip = warnings["flip_level"].notna().to_numpy()
    warned = warnings["warn_level"].notna().to_numpy()
    if not flip.any() or flip.all():
        return Claim("VI. latent instability precedes the flip", "", "", "no flip, or no trajectory without one", None)

    def diff(ix):
        f, w = flip[ix], warned[ix]
        return (w & f).sum() / max(f.sum(), 1) - (w & ~f).sum() / max((~f).sum(), 1)

    v = diff(np.arange(len(flip)))
    reps = np.array([diff(rng.integers(0, len(flip), len(flip))) for _ in range(n_boot)])
    lo, hi = interval_of(reps, ci) if n_boot else (np.nan, np.nan)
    return Claim("VI. latent instability precedes the flip",
                 "T-RCI rises 0.00 → 0.15 while the answer is still right, before it flips at RL-0.8 (Fig. 7)",
                 f"share of flips warned before (D_conf >= threshold while right) minus the false-alarm share of "
                 f"trajectories that never flip, {ci:.0%} bootstrap interval above 0",
                 f"{(warned & flip).sum() / flip.sum():.3f} warned − {(warned & ~flip).sum() / (~flip).sum():.3f} "
                 f"false alarms = {interval_text(v, lo, hi, 3)}", bool(lo > 0))


def obs_three_regimes(regimes: pd.DataFrame) -> Claim:
    """S1: the traversal curves fall into all three regimes (stable, progressive, severe)."""
    counts = regimes["regime"].astype(str).value_counts()
    rule = (f"each of stable (retention >= {regimes.attrs.get('stable_min', 0.8):g}), progressive and severe "
            f"(retention < {regimes.attrs.get('severe_below', 0.5):g}) holds at least one traversal curve")
    ok = None if regimes.empty else bool(all(counts.get(k, 0) > 0 for k in ("stable", "progressive", "severe")))
    return Claim("S1. three traversal regimes: stable, progressive, severe",
                 "Qwen2.5-VL stable, GPT-4.1 progressive, Gemini 3.5 Flash severe (Fig. 5)", rule,
                 ", ".join(f"{k} {counts.get(k, 0)}" for k in ("stable", "progressive", "severe", "undefined"))
                 + f" of {len(regimes)} curves", ok)


def _offdiag(rho: pd.DataFrame, drop: tuple[str, ...] = ()) -> np.ndarray:
    r = rho.drop(index=list(drop), columns=list(drop), errors="ignore").to_numpy()
    return r[~np.eye(len(r), dtype=bool)]


def min_rank_correlation(t) -> float:
    """§II-F: the smallest pairwise Spearman ρ between the four weighting schemes, over RCI_mu and T_mu
    (the ``ablation`` scores of :class:`~vlmrobust.analysis.escalation.replicates.RunTables`)."""
    vals = [_offdiag(rank_correlations(t.ablation, "RCI")),
            _offdiag(rank_correlations(t.ablation, "T-RCI"), ("no-spatial",))]
    v = np.concatenate(vals)
    v = v[np.isfinite(v)]
    return float(v.min()) if v.size else float("nan")


def obs_weighting_insensitive(point, reps, *, lo: float = 0.9, ci: float = 0.95) -> Claim:
    """§II-F: the weighting schemes rank the units alike: the smallest pairwise ρ, its interval above ``lo``."""
    v, a, b = interval(min_rank_correlation, point, reps, ci)
    if not np.isfinite(v):
        return Claim("II-F. rankings are insensitive to the weighting", "", "", "too few units to rank", None)
    return Claim("II-F. rankings are insensitive to the weighting",
                 "accuracy-, entropy-, failure-heavy and equal weights: pairwise correlations ≈ 0.95–0.99",
                 f"smallest pairwise Spearman ρ between the four schemes (RCI_mu and T_mu), {ci:.0%} bootstrap "
                 f"interval above {lo:g}", f"min ρ {v:.3f} [{a:.3f}, {b:.3f}]", bool(np.isfinite(a) and a >= lo))


def check_bottomup_hurts_more(states: pd.DataFrame, evidence: pd.DataFrame, model: str = "model",
                              td: str = "TD", bu: str = "BU") -> Claim:
    """Ground truth: in ground-plane scenes (sky on top), bottom-up removes more evidence than top-down,
    so it should hurt more: per model, the mean accuracy over the states is lower under bottom-up.

    ``states``: :func:`~vlmrobust.analysis.escalation.indices.trci_states` on ground scenes only; ``evidence``:
    the evidence table of the two traversals on the same items, with a ``direction`` column.
    """
    ev = evidence[evidence["direction"].isin([td, bu])]
    rem = ev.groupby("direction")["target_removed"].mean()
    acc = states[states["direction"].isin([td, bu])].groupby([model, "direction"], observed=True)["A"].mean()
    acc = acc.unstack("direction")
    if acc.empty or td not in acc or bu not in acc or td not in rem or bu not in rem:
        return Claim("ground truth: bottom-up hurts more than top-down in ground scenes", "", "",
                     "no top-down and bottom-up states on ground scenes", None)
    worse = acc[bu] < acc[td]
    ev_ok = bool(rem[bu] > rem[td])
    return Claim(
        "ground truth: bottom-up hurts more than top-down in ground scenes",
        "not a claim of the paper: the synthetic world has its sky on top and its objects on the ground",
        "bottom-up removes a larger mean share of the target's box than top-down (evidence record), and every "
        "model's mean accuracy over the four states is lower under bottom-up",
        f"target share removed: BU {rem[bu]:.3f} vs TD {rem[td]:.3f}; accuracy lower under BU for "
        f"{int(worse.sum())} of {len(worse)} models (mean BU {acc[bu].mean():.3f} vs TD {acc[td].mean():.3f})",
        bool(ev_ok and worse.all()))



def accuracy_by_evidence(pred: pd.DataFrame, evidence: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per traversal ``direction`` (rows) and evidence state (columns: ``intact``, ``partial``,
    ``removed``, ...), with ``n`` rows per direction: the rows of ``pred`` joined to the ``evidence`` table of
    the same items and conditions (with a ``direction`` column), as the ground-truth check reads them.
    Accuracy with the evidence intact is what the fill costs by itself."""
    by_ev = pred.merge(evidence[["item_id", "perturbation", "level", "evidence", "direction"]],
                       on=["item_id", "perturbation", "level"])
    return (by_ev.pivot_table(index="direction", columns="evidence", values="correct", aggfunc="mean")
            .join(by_ev.groupby("direction").size().rename("n")))


def claims_table(point, boot, perms, regimes: pd.DataFrame, warnings: pd.DataFrame, rho_model: float,
                  max_resid: float, *, acc_tol: float = 0.05, index_gap: float = 0.05, direction_gap: float = 0.05,
                  monotone_tol: float = 0.02, latent_rng: np.random.Generator, ci: float = 0.95,
                 extra: Sequence[Claim] = ()) -> pd.DataFrame:
    """Notebook 07's observations in order: O6 (twice), O4 (two rows), O1/O8, O9 (two rows), §V, S1, S3, the
    weighting ablation, D_spatial at the model level (by construction) and per state, §VI.

    ``point``/``boot``/``perms``: :class:`~.replicates.RunTables` of the run, of question resamples and of
    group permutations; ``regimes``: the traversal curves' regimes (S1); ``warnings``:
    :func:`~.fragility.early_warnings`; ``rho_model``, ``max_resid``: the model-level ablation ρ and affine
    residual; the thresholds as in the notebook's parameters.
    """
    share = dict(point=point, reps=boot, ci=ci)
    return claims_frame([
        obs_shares("6. similar accuracy, different RCI",
                          "model–dataset pairs at similar accuracy are separated along RCI (Fig. 3)",
                          lambda t: share_similar_different(t, "A_CR", "RCI_mu", acc_tol, index_gap),
                          what=f"pairs with |ΔA_CR| <= {acc_tol:g} whose RCI_mu differ by >= {index_gap:g}", **share),
        obs_shares("6. similar traversal accuracy, different T-RCI", "the same along T-RCI (Fig. 3)",
                          lambda t: share_similar_different(t, "A_T", "T_mu", acc_tol, index_gap),
                          what=f"pairs with |ΔA_T| <= {acc_tol:g} whose T_mu differ by >= {index_gap:g}", **share),
        obs_shares("4. clean accuracy does not always translate into corruption robustness",
                          "Claude Opus 4.7 competitive clean yet the highest RCI_mu on ScienceQA-Chemistry (Table I)",
                          share_clean_not_robust,
                          what="model pairs of a group in which the higher A_CL has the higher RCI_mu", **share),
        obs_corruption_vs_traversal(point, boot, ci=ci),
        obs_dataset_dependence(point, perms),
        obs_shares("9. robustness depends on the traversal direction",
                          "several models show markedly different T-RCI across directions (Table I, S4)",
                          lambda t: share_direction_spread(t, direction_gap),
                          what=f"units whose T-RCI(r) spans >= {direction_gap:g} over the directions", **share),
        obs_rl_most_fragile(point, boot, ci),
        obs_crop_not_blur(point, boot, ci=ci),
        obs_three_regimes(regimes),
        obs_shares("S3. degradation is not strictly monotonic",
                          "several models gain accuracy at intermediate crop severities before declining (Fig. 5)",
                          share_non_monotone,
                          what=f"traversal curves rising by > {monotone_tol:g} between levels", **share),
        obs_weighting_insensitive(point, boot, ci=ci),
        obs_no_spatial_model_level(rho_model, max_resid),
        obs_no_spatial_per_state(point, boot, ci=ci),
        obs_latent_share(warnings, len(boot), latent_rng, ci),
    ] + list(extra))
