"""Seed 002's findings and patterns checked on a run (notebook 05): the claims table, one row each.

Entry point: :func:`claims_table` (its inputs: :class:`DriftRun` and
:class:`~.claims_scale.SizeLadder`). The rows, in order (finding (iv) in :mod:`.claims_scale`, (iii), the
patterns, the Dirichlet signs and C.4 in :mod:`.claims_patterns`, the rest here; the row builder they share in
:mod:`.claims_base`):

1. (i) stable answers hide unstable representations (union IV; kept answers drift far);
2. (ii) TextOverlay has the highest IFR;
3. (iii) TextOverlay's drift is nearest the control (largest Cohen's d; its share of the control);
4. (iv) along a size ladder accuracy rises while TextOverlay IFR, union IV and drift stay comparable or grow;
5. (v) errors both ways on MCQ, conservative on yes/no;
6. Pattern 1: TextOverlay drifts most in every regime (Table 3);
7. Pattern 2: ctx_mcq steadier than ctx_open, not carried to the answer probes;
8. the overlay ordering semantic > random > empty (§4.1);
9. the signs of ΔE_dir, and flips' larger |ΔE| (§4.5, App. E);
10. PGD success above 79 % in every band (Table 29);
11. the blank-image prior answers No (§7, App. D);
12. C.4: MCQ probes steadier than open ones.

Each row reduces the run's frames to per-item sums and hands them to its decision in
:mod:`.decisions` (the same functions the null simulations of :mod:`.rules` call): statistics with 95 %
bootstrap intervals over items (:class:`~.itemboot.ItemBoot`, paired within a row)
against acceptance regions stated in the row's ``test`` text, beside the ``null`` the
rule was calibrated on. A claim made for every model is reproduced when every
model's part is, not reproduced when one part lies wholly outside its region, and
undecided otherwise (:func:`~vlmrobust.stats.claims.combine`); the row's value and
interval are those of the part that decides it (:func:`~.itemboot.lead`), and an
undecided row says the number of items that would decide that part. Each row draws
its resamples from its own generator ``vlmrobust.repro.rng(seed, NB_ID, "findings",
row)``, so rows do not depend on each other or on their order.

**Subjects.** Paper rows read the run's evaluated models only (blind twins included:
they are the null model that cannot see); organisms of zoo role ``control`` give the
same rows in the ``construction`` section. Every rule but the blank-image prior's is
a claim about vision: on blind twins none may come out reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ... import repro
from ...schema import CLEAN
from ...stats.claims import Claim, claims_frame, no_subject
from .claims_base import as_bool, boot_of, claim_row, per_item, role_of
from .claims_patterns import (
    obs_dirichlet_signs,
    obs_mcq_steadier,
    obs_overlay_near_control,
    obs_pattern1_overlay_drifts_most,
    obs_pattern2_context_not_answer,
)
from .claims_scale import SizeLadder, obs_scale
from .decisions import (
    MIN_ASR,
    MIN_IV,
    both_ways_parts,
    conservative_part,
    disconnect_parts,
    gap_part,
    pgd_parts,
    prior_parts,
)
from .instability import TABLE_UNIONS, label
from .itemboot import TEXT, drift_rows, models_of
from .representation import control_values, with_flips

__all__ = ["DriftRun", "SizeLadder", "claims_table", "obs_disconnect",
           "obs_overlay_most_disruptive",
           "obs_overlay_near_control", "obs_scale", "obs_errors_random_but_conservative",
           "obs_pattern1_overlay_drifts_most", "obs_pattern2_context_not_answer", "obs_overlay_ordering",
           "obs_dirichlet_signs", "obs_pgd_success", "obs_blank_prior_no", "obs_mcq_steadier", "NB_ID"]

NB_ID = "05_representation_drift"


@dataclass(frozen=True)
class DriftRun:
    """The frames of one notebook-05 run that :func:`claims_table` reads (one scoring method per model).

    * ``pairs`` — the flip pairs the tables read (:func:`~vlmrobust.analysis.drift.instability.flip_pairs`
      through :func:`~vlmrobust.analysis.drift.protocol.table_pairs`): ``model, item_id, perturbation, level,
      flip, base_correct, correct``; all of them pooled (the intervals come from resampling items, not from
      the disjoint subsets of the tables' run SD);
    * ``probes`` — the sweep's probe rows (:data:`vlmrobust.probes.shard.PROBE_COLUMNS`), the same selection:
      ``kind = "drift"`` rows (``cos`` per regime, ``d_energy`` of ``vision_grid``) and ``kind = "control"``
      rows (``cos`` per regime; ``item_id`` is the first item of the random pair);
    * ``pope`` — :func:`~vlmrobust.analysis.drift.prior.pope_rows` of the yes/no predictions, clean and
      perturbed: ``model, item_id, method, perturbation, gt_yes, pred_yes, margin_yes``;
    * ``prior`` — ``pope_rows`` of the blank-image predictions: ``model, item_id, p_yes, pred_yes``;
    * ``pgd`` — attack mode -> adversarial predictions (``pgd_attacks(...).preds``): ``model, item_id,
      correct``; empty when PGD did not run;
    * ``regime`` — the regime of Table 4 (findings (i) and (iii)).
    """

    pairs: pd.DataFrame
    probes: pd.DataFrame
    pope: pd.DataFrame
    prior: pd.DataFrame
    pgd: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    regime: str = "ans_mcq_free"


def obs_disconnect(pairs: pd.DataFrame, probes: pd.DataFrame, regime: str, n_boot: int, rng: np.random.Generator,
                   *, q: float = 0.05, min_iv: float = MIN_IV) -> Claim:
    """(i): per model, union IV (Table 1's union, all eight perturbations) at least ``min_iv`` ("over one
    third of images", §4.1), and a positive share of the kept-answer instances whose ``regime`` cosine drift
    reaches the ``q`` quantile of the model's control distances ("in some cases", §1; the quantile is fixed)
    (:func:`.decisions.disconnect_parts`)."""
    drift = drift_rows(probes, [regime])
    boot = boot_of(n_boot, rng, pairs["item_id"], drift["item_id"])
    u = pairs[pairs["perturbation"].isin(list(TABLE_UNIONS["table1"]))]
    anyf = per_item(boot, u, ["model"], u["flip"].to_numpy(dtype=np.float64), how="max")
    seen = per_item(boot, u, ["model"], how="max")
    kept = with_flips(drift, pairs)
    kept = kept[kept["flip"].eq(False)]
    parts, models = [], models_of(pairs, drift)
    z = boot.zeros()
    for m in models:
        ctrl, km = control_values(probes, regime, "cos", model=m), kept[kept["model"] == m]
        far = (z, z)
        if ctrl.size and len(km):
            thr = float(np.quantile(ctrl, q))
            far = (boot.sums(km, ["model"], (km["cos"] >= thr).to_numpy(dtype=np.float64))[(m,)],
                   boot.sums(km, ["model"])[(m,)])
        parts += disconnect_parts(boot, m, (anyf.get((m,), z), seen.get((m,), z)), far, min_iv=min_iv)
    return claim_row("(i) stable answers hide unstable representations",
                     "37.6 % of images flip under at least one perturbation ('over one third', §4.1, Table 1); in "
                     "some cases the answer is kept despite substantial drift (§1)",
                     f"answers and representations both stable: union IV exactly {min_iv:.3g} (at most a third of "
                     "images flip) and no kept answer drifting as far as unrelated images",
                     f"per model: union IV (Table 1's union, all eight perturbations) within [{min_iv:.3g}, 1]; the "
                     f"share of kept-answer instances whose {regime} cosine drift reaches the {100 * q:g}th "
                     "percentile of the model's control distances (unrelated image pairs) above 0; 95 % intervals "
                     "over items", parts, models, empty="no flip pairs")


def obs_overlay_most_disruptive(pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """(ii): per model, IFR(TextOverlay) minus the IFR of every other perturbation of Table 1, paired over
    items, above 0 (TextOverlay has the highest instance flip rate, §4.1)."""
    boot = boot_of(n_boot, rng, pairs["item_id"])
    by = ["model", "perturbation"]
    f, n = per_item(boot, pairs, by, pairs["flip"].to_numpy(dtype=np.float64)), per_item(boot, pairs, by)
    parts, models = [], models_of(pairs)
    for m in models:
        if (m, TEXT) not in f:
            continue
        parts += [gap_part(boot, f"{m}: IFR TextOverlay - {label(p)}", (f[(m, TEXT)], n[(m, TEXT)]),
                           (f[k], n[k])) for k in f if k[0] == m and (p := k[1]) != TEXT]
    return claim_row("(ii) text overlays are the most disruptive perturbation",
                     "TextOverlay IFR 19.2 %, the highest of Table 1; geometric perturbations 6-12 %, RandomText "
                     "6.4 %, BoxOverlay 4.3 % (§4.1)",
                     "TextOverlay no more disruptive than the most disruptive other perturbation (equal IFR)",
                     "per model: IFR(TextOverlay) - IFR(p) above 0 for every other perturbation p, 95 % interval "
                     "over items (paired)", parts, models, empty="no TextOverlay flip pairs")


def obs_errors_random_but_conservative(pairs: pd.DataFrame, pope: pd.DataFrame, n_boot: int,
                                       rng: np.random.Generator) -> Claim:
    """(v): per model, on multiple choice both R->W and W->R occur (their shares of Table 2's union instances
    above 0, §4.2; :func:`.decisions.both_ways_parts`); on yes/no, the mean margin shift ``s_Yes - s_No``
    (perturbed minus clean) of the ground-truth-No items below 0 (:func:`.decisions.conservative_part`, §7). The
    clean false positives' shift (the paper's flip margin) is shown beside it: selected on a positive clean
    margin it is negative by regression to the mean alone, so it does not decide."""
    u = pairs[pairs["perturbation"].isin(list(TABLE_UNIONS["table2"]))]
    boot = boot_of(n_boot, rng, u["item_id"])
    bc, c = as_bool(u["base_correct"]), as_bool(u["correct"])
    rw, wr, n = (per_item(boot, u, ["model"], v) for v in (bc & ~c, ~bc & c, None))
    parts, models = [], [m for (m,) in n]
    for m in models:
        parts += both_ways_parts(boot, m, (rw[(m,)], n[(m,)]), (wr[(m,)], n[(m,)]))
    key = [k for k in ("model", "item_id", "method") if k in pope.columns]
    clean = pope[pope["perturbation"] == CLEAN][key + ["pred_yes", "margin_yes"]].rename(
        columns={"pred_yes": "base_yes", "margin_yes": "base_margin"})
    pert = pope[pope["perturbation"] != CLEAN].merge(clean, on=key, how="inner")
    pert = pert[~as_bool(pert["gt_yes"])]
    yb = boot_of(n_boot, rng, pert["item_id"])
    note = ""
    if len(pert):
        shift = pert["margin_yes"].to_numpy(np.float64) - pert["base_margin"].to_numpy(np.float64)
        S, N = yb.sums(pert, ["model"], shift), yb.sums(pert, ["model"])
        fp = as_bool(pert["base_yes"])
        Sf, Nf = yb.sums(pert, ["model"], np.where(fp, shift, 0.0)), yb.sums(pert, ["model"], fp.astype(float))
        shown = []
        for m in models:
            if (m,) in S:
                parts.append(conservative_part(yb, m, (S[(m,)], N[(m,)])))
                shown.append(f"{m} {yb.ratio(Sf[(m,)], Nf[(m,)]).text(3, sign=True)}")
        note = " | clean false positives' margin shift (shown, not decided): " + ", ".join(shown)
    z = yb.zeros()
    for m in models:
        if not len(pert) or (m,) not in yb.sums(pert, ["model"]):
            parts.append(replace(conservative_part(yb, m, (z, z)), why="no perturbed yes/no item with ground truth No"))
    return claim_row("(v) errors look random on reasoning, conservative on hallucination",
                     "MCQ: every perturbation shows both R->W and W->R (§4.2, Table 2); POPE: perturbations reduce "
                     "false positives, margins of clean false positives shift negative (flip margin -0.96, §7, "
                     "App. D)",
                     "errors one way only (no W->R), and perturbed yes/no margins a fresh reading of each item's "
                     "own with no shift toward No",
                     "per model: R->W and W->R shares of Table 2's union instances above 0; mean margin shift "
                     "s_Yes - s_No (perturbed - clean) over the instances of ground-truth-No yes/no items below 0; "
                     "95 % intervals over items", parts, models, empty="no flip pairs", note=note)


def obs_overlay_ordering(pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """§4.1: per model, IFR TextOverlay > RandomText > BoxOverlay (both paired differences above 0)."""
    names = [TEXT, "random_text", "box_overlay"]
    sub = pairs[pairs["perturbation"].isin(names)]
    boot = boot_of(n_boot, rng, sub["item_id"])
    by = ["model", "perturbation"]
    f, n = per_item(boot, sub, by, sub["flip"].to_numpy(dtype=np.float64)), per_item(boot, sub, by)
    parts, models = [], []
    for m in models_of(sub):
        if not all((m, p) in f for p in names):
            continue
        models.append(m)
        r = {p: (f[(m, p)], n[(m, p)]) for p in names}
        parts += [gap_part(boot, f"{m}: IFR TextOverlay - RandomText", r[TEXT], r["random_text"]),
                  gap_part(boot, f"{m}: IFR RandomText - BoxOverlay", r["random_text"], r["box_overlay"])]
    return claim_row("Overlays: semantic > random text > empty box",
                     "IFR TextOverlay 19.2 % > RandomText 6.4 % > BoxOverlay 4.3 % (§4.1, Table 1); the ordering "
                     "holds for Gemma-3 (App. C.4)",
                     "adjacent overlays flip alike (RandomText's IFR equal to BoxOverlay's, or TextOverlay's to "
                     "RandomText's)",
                     "per model: IFR(TextOverlay) - IFR(RandomText) and IFR(RandomText) - IFR(BoxOverlay) above 0, "
                     "95 % intervals over items (paired)", parts, models,
                     empty="the three overlay variants on one model")


def obs_pgd_success(pgd: Mapping[str, pd.DataFrame], n_boot: int, rng: np.random.Generator, *,
                    clean: pd.DataFrame | None = None, min_asr: float = MIN_ASR) -> Claim:
    """§6, Table 29: per model and attack mode, ASR = 1 - adversarial accuracy over the attacked items within
    ``[min_asr, 1]`` ("attack success rates exceed 79 %", Table 29's lowest; an exact interval), and the accuracy
    the attack takes (clean minus adversarial on the same items, ``clean``: ``model, item_id, correct``)
    above 0 (:func:`.decisions.pgd_parts`)."""
    frames = [adv.assign(mode=mode) for mode, adv in pgd.items() if len(adv)]
    claim = ("Frequency-constrained PGD succeeds in every band",
             "ASR 0.8125 pixel, 0.79 low-frequency, 0.8225 high-frequency at eps = 8/255; 'attack success rates "
             "exceed 79 %' (§6, Table 29)",
             f"the attack fails in a band: ASR exactly {min_asr:g}, or no accuracy taken (a model that cannot see, "
             "or answers wrong anyway)",
             f"per model and mode: ASR = 1 - adversarial accuracy within [{min_asr:g}, 1] (Table 29's lowest; "
             "Clopper-Pearson 95 % interval over the attacked items), and clean minus adversarial accuracy "
             "above 0 (95 % interval over items, paired)")
    if not frames:
        return no_subject(*claim, "adversarial predictions: PGD did not run")
    adv = pd.concat(frames, ignore_index=True)
    if clean is not None and len(clean):
        base = clean[["model", "item_id", "correct"]].drop_duplicates(["model", "item_id"])
        adv = adv.merge(base.rename(columns={"correct": "clean_correct"}), on=["model", "item_id"], how="left")
    else:
        adv = adv.assign(clean_correct=np.nan)
    boot = boot_of(n_boot, rng, adv["item_id"])
    by = ["model", "mode"]
    wrong = per_item(boot, adv, by, 1.0 - adv["correct"].to_numpy(dtype=np.float64))
    has = adv["clean_correct"].notna().to_numpy()
    drop = per_item(boot, adv, by, np.where(has, adv["clean_correct"].astype(float).fillna(0.0)
                                              - adv["correct"].to_numpy(dtype=np.float64), 0.0))
    nd, n = per_item(boot, adv, by, has.astype(float)), per_item(boot, adv, by)
    parts, models = [], models_of(adv)
    for m in models:
        for mode in pgd:
            if (m, mode) in n:
                parts += pgd_parts(boot, f"{m} {mode}", (wrong[(m, mode)], n[(m, mode)]),
                                   (drop[(m, mode)], nd[(m, mode)]), min_asr=min_asr)
    return claim_row(*claim, parts, models, empty="no adversarial predictions")


def obs_blank_prior_no(prior: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """§7, App. D: per model, on the blank image, the share of yes/no questions answered No above 0.5 and
    ``S_prior = mean P(Yes | q, blank)`` below 0.5 (:func:`.decisions.prior_parts`). A claim about the language
    prior: it needs no vision, and a blind twin may reproduce it."""
    claim = ("The blank-image prior answers No (a language prior: needs no vision)",
             "without visual input the model predicts 'No' for nearly all samples: a skeptic language prior "
             "(§7, App. D; S_prior = P(Yes | q, blank), §3.3)",
             "an indifferent prior: P(Yes | q, blank) about 0.5",
             "per model, yes/no items on the blank image: share answered No within (0.5, 1] and S_prior = mean "
             "P(Yes) within [0, 0.5), 95 % intervals over items")
    if not len(prior):
        return no_subject(*claim, "blank-image yes/no predictions")
    boot = boot_of(n_boot, rng, prior["item_id"])
    no = (~as_bool(prior["pred_yes"])).astype(np.float64)
    s_no, s_p, n = boot.sums(prior, ["model"], no), boot.sums(prior, ["model"], "p_yes"), boot.sums(prior, ["model"])
    parts, models = [], [m for (m,) in n]
    for m in models:
        parts += prior_parts(boot, m, (s_no[(m,)], n[(m,)]), (s_p[(m,)], n[(m,)]))
    return claim_row(*claim, parts, models, empty="no blank-image predictions")


def _only(run: DriftRun, keep: set[str]) -> DriftRun:
    def f(df):
        return df[df["model"].isin(keep)] if df is not None and len(df) and "model" in df.columns else df
    return DriftRun(f(run.pairs), f(run.probes), f(run.pope), f(run.prior), {k: f(v) for k, v in run.pgd.items()},
                    run.regime)


def claims_table(run: DriftRun, ladder: SizeLadder | None = None, *, n_boot: int = 500, seed: int = 0) -> pd.DataFrame:
    """Notebook 05's claims table: one row per finding and pattern of seed 002, in the order of the module
    docstring (columns :data:`~vlmrobust.stats.claims.CLAIM_COLUMNS`), on the evaluated models; the same rows
    on control organisms (zoo role ``control``, :func:`role_of`) follow in the ``construction`` section.

    ``run``: :class:`DriftRun`; ``ladder``: :class:`SizeLadder` (``None``: finding (iv) has no subject). ``n_boot``
    resamples of items per row; row ``k`` draws from ``vlmrobust.repro.rng(seed, NB_ID, "findings", k)``.
    """
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")

    def r(key: str) -> np.random.Generator:
        return repro.rng(seed, NB_ID, "findings", key)

    models = models_of(run.pairs, run.probes, run.pope, run.prior)
    controls = {m for m in models if role_of(m) == "control"}
    rows = _rows(_only(run, set(models) - controls) if controls else run, ladder, n_boot, r)
    if controls:
        built = _rows(_only(run, controls), None, n_boot, r)
        rows += [replace(c, section="construction") for k, c in enumerate(built) if k != 3]  # no ladder there
    return claims_frame(rows)


def _rows(run: DriftRun, ladder: SizeLadder | None, n_boot: int, r) -> list[Claim]:
    base = run.pairs.drop_duplicates(["model", "item_id"])[["model", "item_id", "base_correct"]].rename(
        columns={"base_correct": "correct"}) if len(run.pairs) else None
    return [
        obs_disconnect(run.pairs, run.probes, run.regime, n_boot, r("i")),
        obs_overlay_most_disruptive(run.pairs, n_boot, r("ii")),
        obs_overlay_near_control(run.probes, run.regime, n_boot, r("iii")),
        obs_scale(ladder, n_boot, r("iv")),
        obs_errors_random_but_conservative(run.pairs, run.pope, n_boot, r("v")),
        obs_pattern1_overlay_drifts_most(run.probes, n_boot, r("pattern1")),
        obs_pattern2_context_not_answer(run.probes, n_boot, r("pattern2")),
        obs_overlay_ordering(run.pairs, n_boot, r("ordering")),
        obs_dirichlet_signs(run.probes, run.pairs, n_boot, r("dirichlet")),
        obs_pgd_success(run.pgd, n_boot, r("pgd"), clean=base),
        obs_blank_prior_no(run.prior, n_boot, r("prior")),
        obs_mcq_steadier(run.probes, n_boot, r("c4")),
    ]
