"""Seed 002's finding (iv), robustness does not improve with scale (notebook 05): its input and its row.

Unlike the other rows of :func:`~vlmrobust.analysis.drift.claims.claims_table`, this one reads its own models: a
:class:`SizeLadder` of the same items scored on models of several sizes. :func:`obs_scale` reduces the ladder to
per-item sums and hands them to :func:`.decisions.scale_parts`; the null it was calibrated on is simulated in
:mod:`.rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...schema import CLEAN
from ...stats.claims import Claim, no_subject
from .claims_base import boot_of, claim_row, per_item
from .decisions import SCALE_RATIO, scale_parts
from .instability import TABLE_UNIONS
from .itemboot import TEXT, drift_rows, models_of

__all__ = ["SizeLadder", "obs_scale"]


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



_SCALE = ("(iv) robustness does not improve with scale",
          "within every family accuracy rises with scale while TextOverlay IFR and union IV do not decrease "
          "(Table 5); 'every larger model is less robust than the 2B' (App. C.2); larger models show comparable "
          "or greater drift (§1, §5: Gemma ctx_open cos 0.957 -> 0.918)")


def obs_scale(ladder: SizeLadder | None, n_boot: int, rng: np.random.Generator, *, ratio: float = SCALE_RATIO
              ) -> Claim:
    """(iv): every larger rung of the size ladder against the smallest, paired over items
    (:func:`.decisions.scale_parts`): clean accuracy rises (difference above 0), and TextOverlay IFR, union IV
    (Table 5's union, all eight) and the union's mean cosine drift in ``ladder.regime`` (Table 3's Any) stay
    "comparable or greater": at least ``ratio`` times the smallest rung's. The null, the claim false, is
    robustness improving with scale at that effect: a larger rung's rate at most half the smallest's (App. A.7
    calls 2.9 % "comparable" to 6-8 %). ``no subject`` with fewer than two sizes."""
    null = (f"robustness improves with scale: a larger rung's TextOverlay IFR, union IV or drift at most {ratio:g} "
            "times the smallest rung's (or accuracy not rising)")
    rule = (f"every larger rung against the smallest, 95 % intervals over items (paired): accuracy difference above "
            f"0; TextOverlay IFR, union IV and {ladder.regime if ladder else 'ctx_open'} union drift of the larger "
            f"rung minus {ratio:g} x the smallest's at least 0 ('comparable or greater'; App. A.7 calls 2.9 % "
            "comparable to 6-8 %)")
    if ladder is None:
        return no_subject(*_SCALE, null, rule, "no size ladder given")
    sizes = {m: float(s) for m, s in ladder.sizes.items() if s is not None and np.isfinite(float(s))}
    rungs = sorted((m for m in models_of(ladder.pred) if m in sizes), key=lambda m: (sizes[m], m))
    if len({sizes[m] for m in rungs}) < 2:
        return no_subject(*_SCALE, null, rule, f"a size ladder of at least two sizes; got "
                          f"{len({sizes[m] for m in rungs})} ({', '.join(rungs) or 'no sized model'}){ladder.note}")
    rungs = [rungs[0]] + [m for m in rungs[1:] if sizes[m] > sizes[rungs[0]]]
    clean = ladder.pred[ladder.pred["perturbation"] == CLEAN]
    drift = drift_rows(ladder.probes, [ladder.regime]) if ladder.probes is not None else None
    if drift is not None:
        drift = drift[drift["perturbation"].isin(list(TABLE_UNIONS["table3"]))]
    boot = boot_of(n_boot, rng, clean["item_id"], ladder.pairs["item_id"],
                    None if drift is None else drift["item_id"])
    P = ladder.pairs
    acc = (per_item(boot, clean, ["model"], clean["correct"].to_numpy(dtype=np.float64)),
           per_item(boot, clean, ["model"]))
    t = P[P["perturbation"] == TEXT]
    ifr = (per_item(boot, t, ["model"], t["flip"].to_numpy(dtype=np.float64)), per_item(boot, t, ["model"]))
    u = P[P["perturbation"].isin(list(TABLE_UNIONS["table5"]))]
    iv = (per_item(boot, u, ["model"], u["flip"].to_numpy(dtype=np.float64), how="max"),
          per_item(boot, u, ["model"], how="max"))
    dr = ((per_item(boot, drift, ["model"], "cos"), per_item(boot, drift, ["model"]))
          if drift is not None else ({}, {}))
    z = boot.zeros()
    stats = {}
    for m in rungs:
        stats[m] = {k: (num.get((m,), z), den.get((m,), z)) for k, (num, den) in
                    {"acc": acc, "ifr": ifr, "iv": iv, "drift": dr}.items() if drift is not None or k != "drift"}
    parts = scale_parts(boot, rungs, stats, ratio=ratio)
    sized = "; ".join(f"{m} ({sizes[m]:.3g})" for m in rungs)
    return claim_row(*_SCALE, null, rule, parts, rungs, empty="no rung",
                     note=f" | rungs by size: {sized}" + ("" if drift is not None else " (no probe rows)"))


