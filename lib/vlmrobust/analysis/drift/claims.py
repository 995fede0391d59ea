"""Seed 002's findings and patterns checked on a run (notebook 05): the observations table, one row each.

Entry point: :func:`claims_table` (its inputs: :class:`DriftRun` and
:class:`SizeLadder`). The rows, in order:

1. (i) stable answers hide unstable representations (union IV; kept answers drift far);
2. (ii) TextOverlay has the highest IFR;
3. (iii) TextOverlay's drift is nearest the control (largest Cohen's d; its share of the control);
4. (iv) along a size ladder accuracy rises while TextOverlay IFR, union IV and drift do not fall;
5. (v) errors both ways on MCQ, conservative on yes/no;
6. Pattern 1: TextOverlay drifts most in every regime (Table 3);
7. Pattern 2: ctx_mcq steadier than ctx_open, not carried to the answer probes;
8. the overlay ordering semantic > random > empty (§4.1);
9. the signs of ΔE_dir, and flips' larger |ΔE| (§4.5, App. E);
10. PGD success above 79 % in every band (Table 29);
11. the blank-image prior answers No (§7, App. D);
12. C.4: MCQ probes steadier than open ones.

Each row decides by a 95 % percentile bootstrap interval over items against a
region stated in its ``check`` text, with where the region comes from
(:mod:`.findings`; :func:`vlmrobust.stats.claims.verdict`). A claim made
for every model holds when every model's part holds, fails when one fails
(:func:`~vlmrobust.stats.claims.combine`). Each row draws its resamples
from its own generator ``vlmrobust.repro.rng(seed, NB_ID, "findings", row)``, so
rows do not depend on each other or on their order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import repro
from ...schema import CLEAN
from ...stats.claims import Claim, claims_frame, combine
from .claims_patterns import (
    obs_dirichlet_signs,
    obs_mcq_steadier,
    obs_overlay_near_control,
    obs_pattern1_overlay_drifts_most,
    obs_pattern2_context_not_answer,
)
from .instability import TABLE_UNIONS, label
from .itemboot import ABOVE_0, BELOW_0, TEXT, Est, ItemBoot, drift_rows, flip_rates, mean_drift, models_of, smallest
from .representation import control_values, with_flips

__all__ = ["DriftRun", "SizeLadder", "claims_table", "obs_disconnect", "obs_overlay_most_disruptive",
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


@dataclass(frozen=True)
class SizeLadder:
    """A size ladder for finding (iv): the same items scored on every rung.

    * ``pred`` — the predictions table of every rung (``model, item_id, perturbation, correct``; the clean
      rows give the accuracy);
    * ``pairs`` — their flip pairs (as :attr:`DriftRun.pairs`);
    * ``sizes`` — model -> size (e.g. language-model parameters); models without a size are left out;
    * ``probes`` — their probe rows (drift rows of ``regime``), or ``None`` (the drift part is undecided);
    * ``regime`` — the drift read-out (ctx_open: §5's Gemma comparison, "ctx_open cos 0.957 -> 0.918");
    * ``note`` — appended to the row's text when it is undecided (e.g. why the zoo has no ladder).
    """

    pred: pd.DataFrame
    pairs: pd.DataFrame
    sizes: Mapping[str, float]
    probes: pd.DataFrame | None = None
    regime: str = "ctx_open"
    note: str = ""


def _boot_of(n_boot: int, rng: np.random.Generator, *cols: pd.Series | None) -> ItemBoot:
    """An :class:`ItemBoot` over the items named in ``cols`` (item-id columns of the row's frames)."""
    given = [c.astype(str) for c in cols if c is not None]
    return ItemBoot(pd.concat(given) if given else [], n_boot, rng)


def _bool(s: pd.Series) -> np.ndarray:
    return s.fillna(False).to_numpy(dtype=bool)


def obs_disconnect(pairs: pd.DataFrame, probes: pd.DataFrame, regime: str, n_boot: int, rng: np.random.Generator,
                   *, q: float = 0.05, min_iv: float = 1 / 3) -> Claim:
    """(i): per model, union IV (Table 1's union, all eight perturbations) at least ``min_iv`` ("over one
    third of images", §4.1), and a positive share of the kept-answer instances whose ``regime`` cosine drift
    reaches the ``q`` quantile of the model's control distances ("in some cases", §1; the quantile is fixed)."""
    drift = drift_rows(probes, [regime])
    boot = _boot_of(n_boot, rng, pairs["item_id"], drift["item_id"])
    iv = flip_rates(boot, pairs)
    kept = with_flips(drift, pairs)
    kept = kept[kept["flip"].eq(False)]
    parts, oks = [], []
    for m in models_of(pairs, drift):
        e_iv = iv.get((m, "any"), Est(np.nan, np.full(n_boot, np.nan)))
        ctrl, km = control_values(probes, regime, "cos", model=m), kept[kept["model"] == m]
        if ctrl.size and len(km):
            thr = float(np.quantile(ctrl, q))
            far = boot.sums(km, ["model"], (km["cos"] >= thr).to_numpy(dtype=np.float64))[(m,)]
            share, where = boot.ratio(far, boot.sums(km, ["model"])[(m,)]), f" ({thr:.3g})"
        else:
            share, where = Est(np.nan, np.full(n_boot, np.nan)), " (no control or no kept answer)"
        oks += [e_iv.verdict(min_iv, 1.0), share.verdict(ABOVE_0, 1.0)]
        parts.append(f"{m}: union IV {e_iv.text(3)}; kept answers drifting past the control's {100 * q:g}th "
                     f"percentile{where}: {share.text(1, 100)} %")
    return Claim("(i) stable answers hide unstable representations",
                 "37.6 % of images flip under at least one perturbation ('over one third', §4.1, Table 1); in some "
                 "cases the answer is kept despite substantial drift (§1)",
                 f"per model: union IV (Table 1's union, all eight perturbations) within [{min_iv:.3g}, 1] ('over "
                 f"one third of images', §4.1); and the share of kept-answer instances whose {regime} cosine "
                 f"drift reaches the {100 * q:g}th percentile of the model's control distances (unrelated image "
                 "pairs; 'in some cases', §1) above 0; 95 % intervals over items",
                 "; ".join(parts) or "no flip pairs", combine(oks) if oks else None)


def obs_overlay_most_disruptive(pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """(ii): per model, IFR(TextOverlay) minus the IFR of every other perturbation of Table 1, paired over
    items, above 0 (TextOverlay has the highest instance flip rate, §4.1)."""
    boot = _boot_of(n_boot, rng, pairs["item_id"])
    ifr = flip_rates(boot, pairs, union=())
    parts, oks = [], []
    for m in models_of(pairs):
        others = {p: ifr[(m, TEXT)] - e for (mm, p), e in ifr.items() if mm == m and p != TEXT and (m, TEXT) in ifr}
        if not others:
            parts.append(f"{m}: no TextOverlay or no other perturbation")
            oks.append(None)
            continue
        oks += [v.verdict(ABOVE_0) for v in others.values()]
        p, v = smallest(others)
        parts.append(f"{m}: TextOverlay {ifr[(m, TEXT)].text(3)}; closest {label(p)} {ifr[(m, p)].text(3)}, "
                     f"difference {v.text(3, sign=True)}")
    return Claim("(ii) text overlays are the most disruptive perturbation",
                 "TextOverlay IFR 19.2 %, the highest of Table 1; geometric perturbations 6-12 %, RandomText 6.4 %, "
                 "BoxOverlay 4.3 % (§4.1)",
                 "per model: IFR(TextOverlay) - IFR(p) above 0 for every other perturbation p, 95 % interval over "
                 "items (paired)",
                 "; ".join(parts) or "no flip pairs", combine(oks) if oks else None)


_SCALE = ("(iv) robustness does not improve with scale",
          "within every family accuracy rises with scale while TextOverlay IFR and union IV do not decrease "
          "(Table 5); larger models show comparable or greater drift (§1, §5: Gemma ctx_open cos 0.957 -> 0.918)")


def obs_scale(ladder: SizeLadder | None, n_boot: int, rng: np.random.Generator, *, tol_ifr: float = 0.005,
              tol_iv: float = 0.008, tol_drift: float = 0.001) -> Claim:
    """(iv): at every step of the size ladder (rungs by size), paired over items: clean accuracy rises (the
    difference above 0); TextOverlay IFR, union IV (Table 5's union, all eight) and the union's mean cosine drift in
    ``ladder.regime`` (Table 3's Any) do not fall by more than a tolerance: Table 1's cross-run SD (0.005 IFR,
    0.008 IV) and 0.001 for drift (the resolution of Table 3's similarities). ``None`` with fewer than two sizes."""
    rule = (f"at every step to the next larger rung, 95 % intervals over items (paired): accuracy difference above "
            f"0; TextOverlay IFR and union IV differences within [-{tol_ifr}, inf) and [-{tol_iv}, inf) (Table 1's "
            f"cross-run SD); union drift difference within [-{tol_drift}, inf) (Table 3's resolution)")
    if ladder is None:
        return Claim(*_SCALE, rule, "no size ladder given", None)
    sizes = {m: float(s) for m, s in ladder.sizes.items() if s is not None and np.isfinite(float(s))}
    rungs = sorted((m for m in models_of(ladder.pred) if m in sizes), key=lambda m: (sizes[m], m))
    n_sizes = len({sizes[m] for m in rungs})
    if n_sizes < 2:
        return Claim(*_SCALE, rule, f"needs a size ladder of at least two sizes; got {n_sizes} "
                     f"({', '.join(rungs) or 'no sized model'}){ladder.note}", None)
    clean = ladder.pred[ladder.pred["perturbation"] == CLEAN]
    drift = drift_rows(ladder.probes, [ladder.regime]) if ladder.probes is not None else None
    boot = _boot_of(n_boot, rng, clean["item_id"], ladder.pairs["item_id"],
                    None if drift is None else drift["item_id"])
    nan = Est(np.nan, np.full(n_boot, np.nan))
    acc_s, acc_n = boot.sums(clean, ["model"], clean["correct"].to_numpy(dtype=np.float64)), boot.sums(clean, ["model"])
    ifr = flip_rates(boot, ladder.pairs, TABLE_UNIONS["table5"])
    md = mean_drift(boot, drift) if drift is not None else {}
    stat = {m: {"acc": boot.ratio(acc_s.get((m,)), acc_n.get((m,))), "ifr": ifr.get((m, TEXT), nan),
                "iv": ifr.get((m, "any"), nan), "drift": md.get((m, "any", ladder.regime), nan)} for m in rungs}
    text = [f"{m} ({sizes[m]:.3g}): accuracy {s['acc'].text(1, 100)} %, TextOverlay IFR {s['ifr'].text(3)}, union "
            f"IV {s['iv'].text(3)}, {ladder.regime} drift {s['drift'].text(4)}" for m, s in stat.items()]
    oks, steps = [], []
    for a, b in zip(rungs, rungs[1:], strict=False):
        if sizes[b] == sizes[a]:
            steps.append(f"{a} = {b} in size: no step")
            continue
        d = {k: stat[b][k] - stat[a][k] for k in ("acc", "ifr", "iv", "drift")}
        oks += [d["acc"].verdict(ABOVE_0), d["ifr"].verdict(-tol_ifr), d["iv"].verdict(-tol_iv),
                d["drift"].verdict(-tol_drift)]
        steps.append(f"{a} -> {b}: accuracy {d['acc'].text(1, 100, sign=True)} pts, IFR {d['ifr'].text(3, sign=True)},"
                     f" IV {d['iv'].text(3, sign=True)}, drift {d['drift'].text(4, sign=True)}"
                     + ("" if drift is not None else " (no probe rows)"))
    return Claim(*_SCALE, rule, "; ".join(text) + " | steps: " + "; ".join(steps), combine(oks) if oks else None)


def obs_errors_random_but_conservative(pairs: pd.DataFrame, pope: pd.DataFrame, n_boot: int,
                                       rng: np.random.Generator) -> Claim:
    """(v): per model, on multiple choice both R->W and W->R occur (their shares of Table 2's union instances
    above 0, §4.2); on yes/no, per model with clean false positives, the FP->TN rate exceeds the TN->FP rate
    (paired over items) and the clean false positives' margin ``s_Yes - s_No`` falls (mean shift below 0, §7)."""
    u = pairs[pairs["perturbation"].isin(list(TABLE_UNIONS["table2"]))]
    boot = _boot_of(n_boot, rng, u["item_id"])
    bc, c = _bool(u["base_correct"]), _bool(u["correct"])
    rw, wr, n = boot.sums(u, ["model"], bc & ~c), boot.sums(u, ["model"], ~bc & c), boot.sums(u, ["model"])
    parts, oks = [], []
    for (m,) in n:
        s_rw, s_wr = boot.ratio(rw[(m,)], n[(m,)]), boot.ratio(wr[(m,)], n[(m,)])
        oks += [s_rw.verdict(ABOVE_0), s_wr.verdict(ABOVE_0)]
        parts.append(f"{m}: R->W {s_rw.text(1, 100)} %, W->R {s_wr.text(1, 100)} % of union instances")
    key = [k for k in ("model", "item_id", "method") if k in pope.columns]
    clean = pope[pope["perturbation"] == CLEAN][key + ["pred_yes", "margin_yes"]].rename(
        columns={"pred_yes": "base_yes", "margin_yes": "base_margin"})
    pert = pope[pope["perturbation"] != CLEAN].merge(clean, on=key, how="inner")
    yn_oks = []
    if len(pert):
        yb = _boot_of(n_boot, rng, pert["item_id"])
        gt, b, p = _bool(pert["gt_yes"]), _bool(pert["base_yes"]), _bool(pert["pred_yes"])
        fp, tn = ~gt & b, ~gt & ~b
        shift = np.where(fp, pert["margin_yes"].to_numpy(np.float64) - pert["base_margin"].to_numpy(np.float64), 0.0)
        S = {k: yb.sums(pert, ["model"], v) for k, v in
             {"fp": fp, "tn": tn, "fp_tn": fp & ~p, "tn_fp": tn & p, "shift": shift}.items()}
        for (m,) in S["fp"]:
            if not S["fp"][(m,)].sum():
                parts.append(f"{m}: no clean false positive on yes/no (nothing to correct)")
                continue
            fix, hall = yb.ratio(S["fp_tn"][(m,)], S["fp"][(m,)]), yb.ratio(S["tn_fp"][(m,)], S["tn"][(m,)])
            ms = yb.ratio(S["shift"][(m,)], S["fp"][(m,)])
            yn_oks += [(fix - hall).verdict(ABOVE_0), ms.verdict(high=BELOW_0)]
            parts.append(f"{m}: FP->TN rate {fix.text(3)} - TN->FP rate {hall.text(3)} = "
                         f"{(fix - hall).text(3, sign=True)}; clean FPs' margin shift {ms.text(3, sign=True)}")
    if not yn_oks:
        parts.append("yes/no part undecided: " + ("no clean false positive in any model" if len(pert)
                                                  else "no perturbed yes/no predictions"))
    return Claim("(v) errors look random on reasoning, conservative on hallucination",
                 "MCQ: every perturbation shows both R->W and W->R (§4.2, Table 2); POPE: perturbations reduce false "
                 "positives, margins of clean false positives shift negative (flip margin -0.96, §7, App. D)",
                 "per model: R->W and W->R shares of Table 2's union instances above 0; on yes/no items, per model "
                 "with clean false positives (all perturbations): FP->TN rate - TN->FP rate above 0 and the clean "
                 "false positives' mean margin shift s_Yes - s_No (perturbed - clean) below 0; 95 % intervals over "
                 "items", "; ".join(parts) or "no flip pairs", combine(oks + (yn_oks or [None])) if oks else None)


def obs_overlay_ordering(pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """§4.1: per model, IFR TextOverlay > RandomText > BoxOverlay (both paired differences above 0)."""
    names = [TEXT, "random_text", "box_overlay"]
    sub = pairs[pairs["perturbation"].isin(names)]
    boot = _boot_of(n_boot, rng, sub["item_id"])
    ifr = flip_rates(boot, sub, union=())
    parts, oks = [], []
    for m in models_of(sub):
        if not all((m, p) in ifr for p in names):
            parts.append(f"{m}: an overlay variant is missing")
            oks.append(None)
            continue
        sem, edge = ifr[(m, TEXT)] - ifr[(m, "random_text")], ifr[(m, "random_text")] - ifr[(m, "box_overlay")]
        oks += [sem.verdict(ABOVE_0), edge.verdict(ABOVE_0)]
        parts.append(f"{m}: IFR " + ", ".join(f"{label(p)} {ifr[(m, p)].text(3)}" for p in names)
                     + f"; semantic gap {sem.text(3, sign=True)}, edge gap {edge.text(3, sign=True)}")
    return Claim("Overlays: semantic > random text > empty box",
                 "IFR TextOverlay 19.2 % > RandomText 6.4 % > BoxOverlay 4.3 % (§4.1, Table 1); the ordering holds "
                 "for Gemma-3 (App. C.4)",
                 "per model: IFR(TextOverlay) - IFR(RandomText) and IFR(RandomText) - IFR(BoxOverlay) above 0, "
                 "95 % intervals over items (paired)",
                 "; ".join(parts) or "no overlay instances", combine(oks) if oks else None)


def obs_pgd_success(pgd: Mapping[str, pd.DataFrame], n_boot: int, rng: np.random.Generator, *,
                    min_asr: float = 0.79) -> Claim:
    """§6, App. F.3: per model and attack mode, ASR = 1 - adversarial accuracy over the attacked items within
    ``[min_asr, 1]`` ("attack success rates exceed 79 %", Table 29's lowest)."""
    frames = [adv.assign(mode=mode) for mode, adv in pgd.items() if len(adv)]
    claim = ("Frequency-constrained PGD succeeds in every band",
             "ASR 0.8125 pixel, 0.79 low-frequency, 0.8225 high-frequency at eps = 8/255; 'attack success rates "
             "exceed 79 %' (§6, Table 29)",
             f"per model and mode: ASR = 1 - adversarial accuracy, 95 % interval over the attacked items within "
             f"[{min_asr:g}, 1] (Table 29's lowest)")
    if not frames:
        return Claim(*claim, "PGD did not run (no adversarial predictions)", None)
    adv = pd.concat(frames, ignore_index=True)
    boot = _boot_of(n_boot, rng, adv["item_id"])
    ok_s = boot.sums(adv, ["model", "mode"], adv["correct"].to_numpy(dtype=np.float64))
    n = boot.sums(adv, ["model", "mode"])
    parts, oks = [], []
    for m in models_of(adv):
        cells = []
        for mode in pgd:
            if (m, mode) in n:
                asr = 1.0 - boot.ratio(ok_s[(m, mode)], n[(m, mode)])
                oks.append(asr.verdict(min_asr, 1.0))
                cells.append(f"{mode} {asr.text(3)}")
        parts.append(f"{m}: ASR " + ", ".join(cells))
    return Claim(*claim, "; ".join(parts), combine(oks) if oks else None)


def obs_blank_prior_no(prior: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """§7, App. D: per model, on the blank image, the share of yes/no questions answered No above 0.5 and
    ``S_prior = mean P(Yes | q, blank)`` below 0.5 (the prior favours No over an indifferent 0.5)."""
    claim = ("The blank-image prior answers No",
             "without visual input the model predicts 'No' for nearly all samples: a skeptic language prior "
             "(§7, App. D; S_prior = P(Yes | q, blank), §3.3)",
             "per model, yes/no items on the blank image: share answered No within (0.5, 1] and S_prior = mean "
             "P(Yes) within [0, 0.5) (against an indifferent prior, 0.5), 95 % intervals over items")
    if not len(prior):
        return Claim(*claim, "no blank-image yes/no predictions", None)
    boot = _boot_of(n_boot, rng, prior["item_id"])
    no = (~_bool(prior["pred_yes"])).astype(np.float64)
    s_no, s_p, n = boot.sums(prior, ["model"], no), boot.sums(prior, ["model"], "p_yes"), boot.sums(prior, ["model"])
    parts, oks = [], []
    for (m,) in n:
        share, sp = boot.ratio(s_no[(m,)], n[(m,)]), boot.ratio(s_p[(m,)], n[(m,)])
        oks += [share.verdict(0.5 + ABOVE_0, 1.0), sp.verdict(0.0, 0.5 + BELOW_0)]
        parts.append(f"{m}: answered No {share.text(1, 100)} %, S_prior {sp.text(3)}")
    return Claim(*claim, "; ".join(parts), combine(oks) if oks else None)


def claims_table(run: DriftRun, ladder: SizeLadder | None = None, *, n_boot: int = 500, seed: int = 0) -> pd.DataFrame:
    """Notebook 05's observations table: one row per finding and pattern of seed 002, in the order of the
    module docstring (columns :data:`~vlmrobust.stats.claims.CLAIM_COLUMNS`).

    ``run``: :class:`DriftRun`; ``ladder``: :class:`SizeLadder` (``None``: finding (iv) undecided). ``n_boot``
    resamples of items per row; row ``k`` draws from ``vlmrobust.repro.rng(seed, NB_ID, "findings", k)``.
    """
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")

    def r(key: str) -> np.random.Generator:
        return repro.rng(seed, NB_ID, "findings", key)

    checks = [
        obs_disconnect(run.pairs, run.probes, run.regime, n_boot, r("i")),
        obs_overlay_most_disruptive(run.pairs, n_boot, r("ii")),
        obs_overlay_near_control(run.probes, run.regime, n_boot, r("iii")),
        obs_scale(ladder, n_boot, r("iv")),
        obs_errors_random_but_conservative(run.pairs, run.pope, n_boot, r("v")),
        obs_pattern1_overlay_drifts_most(run.probes, n_boot, r("pattern1")),
        obs_pattern2_context_not_answer(run.probes, n_boot, r("pattern2")),
        obs_overlay_ordering(run.pairs, n_boot, r("ordering")),
        obs_dirichlet_signs(run.probes, run.pairs, n_boot, r("dirichlet")),
        obs_pgd_success(run.pgd, n_boot, r("pgd")),
        obs_blank_prior_no(run.prior, n_boot, r("prior")),
        obs_mcq_steadier(run.probes, n_boot, r("c4")),
    ]
    return claims_frame(checks)
