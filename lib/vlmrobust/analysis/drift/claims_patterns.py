"""Seed 002's claim rows that read only the probe rows (notebook 05): finding (iii), Patterns 1 and 2, C.4's
MCQ-vs-open, the Dirichlet signs.

Each row reduces the probe rows to per-item sums and hands them to its decision in :mod:`.decisions` (paired
item-bootstrap intervals, :class:`~vlmrobust.analysis.drift.itemboot.ItemBoot`); the table and the other rows
are in :mod:`.claims` and :mod:`.claims_scale`, the row builder in :mod:`.claims_base`. "Drifts more" means by
at least :data:`~.decisions.DRIFT_MARGIN` of the mean distance between unrelated images (the model's control in
the same regime), so that floating-point noise (a model that cannot see drifts by about 1e-7) does not count
as a difference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...probes.regimes import REGIMES
from ...stats.claims import Claim
from .claims_base import claim_row
from .decisions import DRIFT_MARGIN, MIN_PCT, dirichlet_parts, gap_part, near_control_parts
from .itemboot import ABOVE_0, GEOMETRIC, TABLE_SIX, TEXT, ItemBoot, Part, drift_rows, models_of, nan_est
from .representation import control_values, with_flips

__all__ = ["obs_overlay_near_control", "obs_pattern1_overlay_drifts_most", "obs_pattern2_context_not_answer",
           "obs_mcq_steadier", "obs_dirichlet_signs"]


def _margin(probes: pd.DataFrame, model: str, regime: str) -> float:
    """:data:`~.decisions.DRIFT_MARGIN` times the model's mean control distance in ``regime`` (a strict 0 without
    one)."""
    c = control_values(probes, regime, "cos", model=model)
    return DRIFT_MARGIN * float(c.mean()) if c.size else ABOVE_0


def obs_overlay_near_control(probes: pd.DataFrame, regime: str, n_boot: int, rng: np.random.Generator, *,
                             min_pct: float = MIN_PCT) -> Claim:
    """(iii): per model, in ``regime`` (Table 4's ans_mcq_free), TextOverlay's Cohen's d against the control
    is above every other Table 4 perturbation's (paired differences over items; the control pairs are
    resampled with their first item), and TextOverlay's mean drift is at least ``min_pct`` % of the mean control
    distance (Table 4: geometric perturbations stay below 10 %, TextOverlay reaches 77.7 %;
    :func:`.decisions.near_control_parts`)."""
    drift = drift_rows(probes, [regime])
    drift = drift[drift["perturbation"].isin(list(TABLE_SIX))]
    ctrl = probes[(probes["kind"] == "control") & (probes["regime"] == regime)]
    ctrl = ctrl[np.isfinite(ctrl["cos"].to_numpy(dtype=np.float64))]
    boot = ItemBoot(pd.concat([drift["item_id"], ctrl["item_id"]]), n_boot, rng)
    by = ["model", "perturbation"]
    x, xc = drift["cos"].to_numpy(dtype=np.float64), ctrl["cos"].to_numpy(dtype=np.float64)
    mp = [boot.sums(drift, by, v) for v in (None, x, x * x)] if len(drift) else [{}, {}, {}]
    mc = [boot.sums(ctrl, ["model"], v) for v in (None, xc, xc * xc)] if len(ctrl) else [{}, {}, {}]
    parts, models = [], []
    for m in models_of(drift):
        if (m, TEXT) not in mp[0] or (m,) not in mc[0]:
            continue
        models.append(m)
        pert = {p: tuple(d[k] for d in mp) for k in mp[0] if k[0] == m and (p := k[1]) in TABLE_SIX}
        parts += near_control_parts(boot, m, pert, tuple(d[(m,)] for d in mc), min_pct=min_pct)
    return claim_row("(iii) text overlays move representations toward unrelated images",
                "ans_mcq_free: TextOverlay d = -0.34, 77.7 % of control; geometric d <= -3.5, drift < 10 % of "
                "control (Table 4)",
                "TextOverlay's drift distributed as the nearest other perturbation's (equal Cohen's d), or below "
                f"{min_pct:g} % of the control",
                f"per model, {regime} cosine drift: Cohen's d(TextOverlay) - d(p) above 0 for every other "
                "perturbation p of Table 4 (the largest d, i.e. the closest to 0 when all are negative), and "
                f"TextOverlay's mean drift at least {min_pct:g} % of the mean control distance (Table 4's ceiling of "
                "the geometric perturbations); 95 % intervals over items, paired", parts, models,
                empty="TextOverlay drift rows with a control")


def obs_pattern1_overlay_drifts_most(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator,
                                     regimes=REGIMES) -> Claim:
    """Pattern 1 (§4.3, Table 3): per model and regime, TextOverlay's mean cosine drift exceeds every geometric
    perturbation's by at least :data:`~.decisions.DRIFT_MARGIN` of the control (paired differences over items)."""
    rows = drift_rows(probes, regimes)
    boot = ItemBoot(rows["item_id"], n_boot, rng)
    by = ["model", "perturbation", "regime"]
    s, n = (boot.sums(rows, by, "cos"), boot.sums(rows, by)) if len(rows) else ({}, {})
    parts, models = [], []
    for m in models_of(rows):
        mine = []
        for r in regimes:
            t = (m, TEXT, r)
            if t not in s:  # a regime without TextOverlay rows leaves "every regime" open
                mine.append(Part(f"{m} {r}: TextOverlay - geometric", nan_est(boot), why=f"no {r} TextOverlay rows"))
                continue
            mine += [gap_part(boot, f"{m} {r}: TextOverlay - {p}", (s[t], n[t]), (s[k], n[k]),
                              _margin(probes, m, r), digits=4) for p in GEOMETRIC if (k := (m, p, r)) in s]
        if any(np.isfinite(p.est.point) for p in mine):
            models.append(m)
            parts += mine
    return claim_row("Pattern 1: TextOverlay induces the largest drift in every regime",
                "TextOverlay's similarity is the lowest in all five regimes, e.g. ctx_open 0.866 vs ~0.99 for "
                "translation and pad/crop (§4.3, Table 3)",
                "TextOverlay drifting no more than the geometric perturbation nearest it (equal mean drift)",
                "per model and regime (" + ", ".join(regimes) + f"): TextOverlay's mean cosine drift minus each "
                f"geometric perturbation's at least {DRIFT_MARGIN:g} x the model's mean control distance in that "
                "regime, 95 % interval over items (paired)", parts, models, empty="TextOverlay drift rows")


def _any_gaps(probes, n_boot, rng, gaps: list[tuple[str, str]]):
    regs = list(dict.fromkeys(r for g in gaps for r in g))
    rows = drift_rows(probes, regs)
    rows = rows[rows["perturbation"].isin(list(TABLE_SIX))]
    boot = ItemBoot(rows["item_id"], n_boot, rng)
    s, n = (boot.sums(rows, ["model", "regime"], "cos"), boot.sums(rows, ["model", "regime"])) if len(rows) else ({},
                                                                                                                 {})
    parts, models = [], models_of(rows)
    for m in models:
        parts += [gap_part(boot, f"{m}: Any drift {a} - {b}", (s[(m, a)], n[(m, a)]) if (m, a) in s else None,
                           (s[(m, b)], n[(m, b)]) if (m, b) in s else None, _margin(probes, m, b), digits=4)
                  for a, b in gaps]
    return parts, models


def _gap_test(gaps) -> str:
    return ("per model, mean cosine drift of Table 3's Any (union): " + " and ".join(f"{a} - {b}" for a, b in gaps)
            + f" at least {DRIFT_MARGIN:g} x the model's mean control distance, 95 % intervals over items (paired)")


def obs_pattern2_context_not_answer(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """Pattern 2 (§4.3): on Table 3's Any rows, ctx_open drifts more than ctx_mcq (MCQ conditioning steadies
    the context), and ans_mcq_free drifts more than ctx_mcq (the steadiness does not reach the answer the
    model gives with the options shown); paired over items.

    ``ans_mcq`` is left out of the rule: in the paper's own Table 3 Any row it is *steadier* than ctx_mcq
    (0.988 vs 0.984), so "does not propagate to ans_mcq" cannot mean "drifts more than ctx_mcq" there.
    """
    gaps = [("ctx_open", "ctx_mcq"), ("ans_mcq_free", "ctx_mcq")]
    parts, models = _any_gaps(probes, n_boot, rng, gaps)
    return claim_row("Pattern 2: MCQ conditioning steadies the context, not the answer",
                "ctx_mcq is more stable than ctx_open, and the stability does not propagate to ans_mcq and "
                "ans_mcq_free (§4.3). Table 3's Any: ctx_open 0.970, ctx_mcq 0.984, ans_mcq 0.988, ans_mcq_free "
                "0.968 (there ans_mcq is the steadier, so only ans_mcq_free is checked); Gemma's Tables 10, 22, "
                "23: both answer probes drift more",
                "the regimes drift alike (ctx_open or ans_mcq_free no further than ctx_mcq)", _gap_test(gaps),
                parts, models, empty="drift rows of ctx_open, ctx_mcq and ans_mcq_free")


def obs_mcq_steadier(probes: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> Claim:
    """C.4 (v): on Table 3's Any rows, ctx_open drifts more than ctx_mcq and ans_open more than ans_mcq."""
    gaps = [("ctx_open", "ctx_mcq"), ("ans_open", "ans_mcq")]
    parts, models = _any_gaps(probes, n_boot, rng, gaps)
    return claim_row("C.4: MCQ probes are steadier than open ones",
                "ctx_mcq and ans_mcq are consistently more stable than ctx_open and ans_open (App. C.4, Tables "
                "10, 22, 23; Table 3's Any: 0.984 vs 0.970 and 0.988 vs 0.970)",
                "open and MCQ probes drift alike (ctx_open as ctx_mcq, or ans_open as ans_mcq)", _gap_test(gaps),
                parts, models, empty="drift rows of the four probe regimes")


def obs_dirichlet_signs(probes: pd.DataFrame, pairs: pd.DataFrame, n_boot: int, rng: np.random.Generator
                        ) -> Claim:
    """§4.5, App. E (Table 28): per model, mean ΔE_dir of Translation above 0, of TextOverlay below 0, of
    Rotation below every other Table 28 perturbation's; and flip-inducing instances move E more: the mean over
    flipping instances of ``|ΔE|`` minus the mean ``|ΔE|`` of the non-flipping instances of the same
    perturbation above 0 (:func:`.decisions.dirichlet_parts`)."""
    grid = drift_rows(probes, ["vision_grid"], "d_energy")
    grid = grid[grid["perturbation"].isin(list(TABLE_SIX))]
    boot = ItemBoot(grid["item_id"], n_boot, rng)
    by = ["model", "perturbation"]
    g = with_flips(grid, pairs)
    g = g.assign(abs_dE=g["d_energy"].abs())
    flips, kept = g[g["flip"].eq(True)], g[g["flip"].eq(False)]

    def sums(df, value=None):
        return boot.sums(df, by, value) if len(df) else {}
    s, n = sums(grid, "d_energy"), sums(grid)
    Sf, Nf, Sn, Nn = sums(flips, "abs_dE"), sums(flips), sums(kept, "abs_dE"), sums(kept)
    parts, models = [], []
    for m in models_of(grid):
        de = {p: (s[(m, p)], n[(m, p)]) for p in TABLE_SIX if (m, p) in s}
        if not {"translate", TEXT, "rotate"} <= set(de):
            continue
        models.append(m)
        fa = {p: (Sf[(m, p)], Nf[(m, p)]) for p in de if (m, p) in Sf}
        ka = {p: (Sn[(m, p)], Nn[(m, p)]) for p in de if (m, p) in Sn}
        parts += dirichlet_parts(boot, m, de, fa, ka)
    return claim_row("Dirichlet energy: its sign follows the perturbation, flips move it more",
                "ΔE_dir Translation +10.34, TextOverlay -33.87, Rotation -72.73 (the most negative); flip-inducing "
                "instances show larger |ΔE| (§4.5, Table 28, App. E.3)",
                "ΔE without a sign per perturbation, and flip labels independent of |ΔE|",
                "per model, mean ΔE_dir of the vision-token grid: Translation above 0, TextOverlay below 0, "
                "Rotation minus every other Table 28 perturbation below 0; and flipping instances' |ΔE| minus the "
                "mean |ΔE| of the same perturbation's non-flipping instances, averaged over the flips, above 0; "
                "95 % intervals over items (paired)", parts, models,
                empty="vision-grid rows of Translation, TextOverlay and Rotation")
