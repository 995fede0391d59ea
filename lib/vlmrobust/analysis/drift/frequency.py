"""Frequency read-outs of seed 002 §6 and App. F: signed margins, flip curves, flip thresholds.

* :func:`signed_margin` - the margin of the **base** option: ``s_base - max_{j != base} s_j``
  in the scoring method's units (Figs. 16, 19: "base option minus strongest
  competitor"), negative once the answer has flipped; on the clean image it is
  the usual top-minus-runner-up margin (seed 002 Eq. 2);
* :func:`flip_curve` - flip rate per condition parameter (noise ``eps``, cutoff ``c``), Fig. 17;
* :func:`flip_thresholds` - per item the cutoff at which the answer flips under an
  ablation (Fig. 18). ``rule="smallest"`` is the paper's wording, the smallest
  cutoff ``c`` whose image flips the answer; ``rule="first"`` is the first flip
  along the path from the mildest to the harshest ablation (low-pass keep:
  decreasing ``c``; high-pass keep: increasing ``c``). For high-pass keep the two
  agree; for low-pass keep "smallest" is the lowest cutoff that still flips.
* :func:`threshold_table`, :func:`threshold_summary` - both rules side by side per item, and per ablation
  the share of items that flip and the median thresholds (the table beside Fig. 18);
* :func:`instance_spectral_drift` - App. F.4, Fig. 15: the relative band change ``D_band`` of every
  perturbation instance of a sweep (:func:`vlmrobust.corrupt.frequency.spectral_drift`);
* :func:`spread_items`, :func:`example_items` - the items of an experiment, spread over the task families,
  and the single samples the figures follow;
* :func:`pgd_attacks` - App. F.3, Table 29, Fig. 20: frequency-constrained PGD (:mod:`vlmrobust.attack`) of
  every mode on every model that allows it, rescored through the normal scoring path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["signed_margin", "flip_curve", "flip_thresholds", "threshold_table", "threshold_summary",
           "instance_spectral_drift", "spread_items", "example_items", "PGDRuns", "pgd_attacks"]


def signed_margin(logits: Sequence[Sequence[float]], base: Sequence[int]) -> np.ndarray:
    """``s_base - max_{j != base} s_j`` per row (NaN for K < 2 or missing scores)."""
    out = np.full(len(base), np.nan)
    for i, (s, b) in enumerate(zip(logits, base, strict=True)):
        if s is None or len(s) < 2:
            continue
        s = np.asarray(s, dtype=np.float64)
        out[i] = s[int(b)] - np.delete(s, int(b)).max()
    return out


def flip_curve(pairs: pd.DataFrame, by: Sequence[str] = ("model", "perturbation")) -> pd.DataFrame:
    """Flip rate and mean signed margin per group and level parameter (``param``), clean first as 0."""
    p = pairs.assign(signed=signed_margin(pairs["logits"], pairs["base_pred"]))
    g = p.groupby(list(by) + ["level", "param"], sort=True)
    return g.agg(flip_rate=("flip", "mean"), signed_margin=("signed", "mean"), n=("flip", "size")).reset_index()


def flip_thresholds(pairs: pd.DataFrame, rule: str = "smallest", by: Sequence[str] = ("model", "perturbation")
                    ) -> pd.DataFrame:
    """Per item and ablation, the flip threshold of ``rule`` (NaN when no cutoff flips the answer).

    ``pairs``: ablation instances with ``level`` (1 = mildest) and ``param`` (the cutoff).
    """
    if rule not in ("smallest", "first"):
        raise ValueError(f"rule must be 'smallest' or 'first', got {rule!r}")
    rows = []
    for key, g in pairs.groupby(list(by) + ["item_id"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        flipped = g[g["flip"]]
        if flipped.empty:
            c = np.nan
        elif rule == "smallest":
            c = float(flipped["param"].min())
        else:
            c = float(flipped.sort_values("level")["param"].iloc[0])
        rows.append({**dict(zip(list(by) + ["item_id"], key, strict=True)), "threshold": c})
    return pd.DataFrame(rows)


def threshold_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per model, ablation and item: ``threshold`` (rule ``"smallest"``) and ``first_flip`` (rule ``"first"``)
    of :func:`flip_thresholds`."""
    return flip_thresholds(pairs, "smallest").merge(
        flip_thresholds(pairs, "first").rename(columns={"threshold": "first_flip"}),
        on=["model", "perturbation", "item_id"])


def threshold_summary(thr: pd.DataFrame) -> pd.DataFrame:
    """Per model and ablation of :func:`threshold_table`: the share of items whose answer flips at some cutoff
    (``flipped``) and the median smallest and first-flip cutoffs (over the items that flip)."""
    return thr.groupby(["model", "perturbation"]).agg(
        flipped=("threshold", lambda s: float(s.notna().mean())), median_smallest=("threshold", "median"),
        median_first=("first_flip", "median"))


def instance_spectral_drift(pairs: pd.DataFrame, items: pd.DataFrame, seed: int, shift: str = "fixed"
                            ) -> pd.DataFrame:
    """The flip pairs' ``model, item_id, perturbation, level, flip`` with the relative band changes ``D_band``
    (columns of :data:`vlmrobust.corrupt.frequency.DRIFT_BANDS`) of each instance's image (App. F.4).

    Each distinct ``(item, perturbation, level)`` is rebuilt once from the item's clean image with
    :func:`vlmrobust.corrupt.apply`, ``seed`` and ``shift`` (the sweep's seed and shift reading: the same
    instance the model saw).
    """
    from ... import corrupt, data
    from ...corrupt.frequency import spectral_drift

    apply = corrupt.natural.shift_corrupt(shift)
    recs = {r.item_id: r for r in items.itertuples()}
    inst = pairs[["model", "item_id", "perturbation", "level", "flip"]]
    uniq = inst[["item_id", "perturbation", "level"]].drop_duplicates()
    rows = []
    for r in uniq.itertuples():
        clean_img = data.load_image(recs[r.item_id].image_ref)
        bad = apply(clean_img, r.perturbation, int(r.level), seed=seed, key=r.item_id)
        rows.append({"item_id": r.item_id, "perturbation": r.perturbation, "level": r.level,
                     **spectral_drift(clean_img, bad)})
    return inst.merge(pd.DataFrame(rows), on=["item_id", "perturbation", "level"])


def spread_items(items: pd.DataFrame, n: int) -> pd.DataFrame:
    """The first ``n`` items of ``items`` taking at most ``ceil(n / families)`` of each task family (column
    ``task``), in the table's order, with a fresh index."""
    out = items.groupby("task", group_keys=False).head(math.ceil(n / items["task"].nunique()))
    return out.head(n).reset_index(drop=True)


def example_items(items: pd.DataFrame, n: int) -> pd.DataFrame:
    """The first ``n`` items with more than two options (all items when none has), with a fresh index: the
    single samples of Figs. 16 and 19 (a yes/no margin says less than a K = 4 one)."""
    many = items["options"].map(len) > 2
    return (items[many] if many.any() else items).head(n).reset_index(drop=True)


class PGDRuns(NamedTuple):
    """What :func:`pgd_attacks` returns."""

    #: mode -> the adversarial predictions of every attacked model, with the deltas' in-band share ``in_band``
    preds: dict[str, pd.DataFrame]
    #: mode -> the deltas (H x W x C, in [0, 1] units), model after model, item after item
    deltas: dict[str, list[np.ndarray]]
    #: the models attacked, in order
    attacked: list[str]
    #: model -> why it was not attacked (its processor has no differentiable pixel path)
    skipped: dict[str, str]


def pgd_attacks(models: Sequence[str], items: pd.DataFrame, images: Sequence[np.ndarray], clean: pd.DataFrame,
                method_of: Callable[[str], str], *, template: str, seed: int, batch_size: int,
                progress: bool | None = None, **load) -> PGDRuns:
    """App. F.3: :func:`vlmrobust.attack.pgd` in every mode of :data:`vlmrobust.attack.MODES`, untargeted on
    each model's clean prediction (``clean``: its clean rows, ``pred_idx``), then rescored with
    :func:`vlmrobust.score.predict` as perturbation ``pgd_<mode>``, level 1.

    ``method_of``: model -> scoring method; ``load``: keyword arguments of :func:`vlmrobust.models.load`
    (device, dtype). A model whose processor :func:`vlmrobust.attack.pixel_path` refuses is skipped
    (:attr:`PGDRuns.skipped`). A blind twin (``blind:NAME``) is not attacked: it is scored on its grey image in
    every mode (what any δ would leave it), named in :attr:`PGDRuns.skipped`. Pass :attr:`PGDRuns.preds` to
    :func:`vlmrobust.attack.pgd_table` for Table 29.
    """
    from ... import attack, score
    from ... import models as vlm_models

    adv_preds: dict[str, list[pd.DataFrame]] = {}
    deltas: dict[str, list[np.ndarray]] = {}
    attacked: list[str] = []
    skipped: dict[str, str] = {}
    for m in models:
        lm = vlm_models.load(m, **load)
        meth = method_of(m)
        base = clean[clean.model == m].set_index("item_id").loc[items.item_id, "pred_idx"].tolist()
        if getattr(lm, "blind", False):  # no pixel reaches a blind twin: whatever δ, it sees its grey image
            from ...models.loading import blind_image

            grey = [np.asarray(blind_image(np.asarray(img))) for img in images]
            skipped[m] = "a blind twin: no perturbation reaches it, so it is scored on its grey image in every mode"
            for mode in attack.MODES:
                adv = score.predict(lm, items, grey, methods=[meth], template=template, seed=seed,
                                    perturbation=f"pgd_{mode}", level=1, batch_size=batch_size, model_name=m)
                adv_preds.setdefault(mode, []).append(adv.assign(in_band=np.nan))
            continue
        try:
            attack.pixel_path(lm, images[0])
        except NotImplementedError as exc:
            skipped[m] = str(exc)
            continue
        attacked.append(m)
        for mode in attack.MODES:
            out = attack.pgd(lm, items, images, base, mode=mode, method=meth, template=template,
                             batch_size=batch_size, progress=progress)
            adv = score.predict(lm, items, out["adv"], methods=[meth], template=template, seed=seed,
                                perturbation=f"pgd_{mode}", level=1, batch_size=batch_size, model_name=m)
            adv_preds.setdefault(mode, []).append(adv.assign(in_band=out["in_band"]))
            deltas.setdefault(mode, []).extend(out["delta"])
    return PGDRuns({k: pd.concat(v, ignore_index=True) for k, v in adv_preds.items()}, deltas, attacked, skipped)
