"""One sweep for every lens: the card's conditions, its item variants and its one call into the hand-off.

Every read-out of a reliability card comes from one predictions table and one
probe table over the **same items and the same corrupted images**:

==================  =====================================================  =================================
lens                conditions                                             rows
==================  =====================================================  =================================
RAS, mCE            ImageNet-C corruptions at their severities (seed 000)  the items as given
drift               the same conditions (probe rows of the same forwards)  the items as given
RCI / T-RCI         BRUCE's four ladders and four traversals (seed 001)    the items as given
W per signal        physical fog and water at visibility levels (003)     the items, and their **abstain
                                                                           variants** (the option "I cannot
                                                                           tell, ..." appended)
answer order        the clean images, options rotated (the card's own)     **order variants** of the items
==================  =====================================================  =================================

:func:`card_predictions` asks :func:`vlmrobust.sweep.predictions` four times
(on one Dask cluster when it runs on one), because a sweep crosses every item
with every condition and each part needs only some: the items clean and under
the ImageNet-C corruptions as a **probe sweep** (:class:`vlmrobust.probes.ProbeSpec`:
the hidden states ride on the scoring forwards, so drift is read on exactly the
images RAS and mCE score); the items under the ladders, traversals and the
visibility levels without probes (the card reads no drift there, and the probe
regimes' extra forwards would double their cost); the abstain variants clean
and at the visibility levels; the order variants on clean images. All go through
the shared shard cache, and the result is one predictions table and one probe
table. Which variant a row scores is a column, :data:`VARIANT` (``""`` for the
items as given, the abstain wording ``"unclear"`` for an abstain variant, whose
``item_id`` is ``<id>~unclear`` so that every scored item keeps its own id); an
order variant's rows become perturbation
:data:`~vlmrobust.analysis.card.readouts.ORDER` at level ``k`` of the base item.
The read-outs select rows by that column (:func:`is_base`), never by parsing ids.

Choices stated here: the traversals use the registry's mean fill (the
synthetic world's mean colour) so that every condition is a registered one;
the abstain option is appended after the given options (its index is ``K``);
a card item's ``meta`` names its **scene** (the base item, the unit of
seed 003's bootstrap), its abstain variant and its chance ``1/K``, as
:func:`vlmrobust.synth.visibility.scene_items` does, so notebook 06's read-outs
take the card's rows unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ... import corrupt, sweep
from ...corrupt import escalation as esc
from ...schema import ABSTAIN_TEXTS, CLEAN
from .readouts import ORDER, option_orders, permute_options

__all__ = ["ARMS", "LADDERS", "VARIANT", "CardInputs", "card_conditions", "card_items", "with_depth",
           "abstain_variants", "order_variants", "card_predictions", "base_rows", "is_base"]

#: The item-variant column of the card's items and predictions: ``""`` for an item as given, the abstain
#: wording (a key of :data:`vlmrobust.schema.ABSTAIN_TEXTS`) for its abstain variant.
VARIANT = "variant"

#: The visibility arms of the card: perturbation -> arm (seed 003's physical fog and underwater attenuation).
ARMS = {"fog_physical": "fog", "underwater": "water"}
#: BRUCE's escalation ladders (seed 001 §III), the RCI conditions.
LADDERS = ("bruce_blur", "bruce_contrast", "bruce_rotate", "bruce_center_crop")
_ABSTAIN = "unclear"


def card_conditions(imagenet_c: Sequence[str], severities: Sequence[int], *,
                    ladder_levels: Sequence[int] = (1, 2, 3, 4), visibility_levels: Sequence[int] = tuple(range(1, 9)),
                    fill: str = "mean") -> dict[str, list[int]]:
    """The image conditions of one card sweep: ImageNet-C corruptions at ``severities``, the four ladders and
    the four traversals (``fill``) at ``ladder_levels``, fog and water at ``visibility_levels``."""
    bad = [c for c in imagenet_c if c not in corrupt.manifest("imagenet_c")]
    if bad or not imagenet_c:
        raise ValueError(f"imagenet_c must name ImageNet-C corruptions ({list(corrupt.manifest('imagenet_c'))}); "
                         f"got {bad or imagenet_c}")
    out = {c: sorted(int(s) for s in severities) for c in imagenet_c}
    out |= {n: sorted(int(v) for v in ladder_levels) for n in [*LADDERS, *esc.traversal_names(fill).values()]}
    out |= {n: sorted(int(v) for v in visibility_levels) for n in ARMS}
    for name, levels in out.items():
        known = corrupt.info(name).levels
        if not levels or any(lv not in known for lv in levels):
            raise ValueError(f"levels of {name} must be among {list(known)}, got {levels}")
    return out


def _meta(items: pd.DataFrame, variant: str) -> list[str]:
    """Each item's card ``meta``: its scene (the item itself), the abstain ``variant`` and chance 1/K."""
    return [json.dumps({"scene": str(i), "abstain": variant, "chance": 1.0 / len(o)}, sort_keys=True)
            for i, o in zip(items.item_id, items.options, strict=True)]


def card_items(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` with the ``meta`` of a card item: its scene (itself), abstain variant ``none`` and chance 1/K."""
    out = items.copy()
    out["meta"] = _meta(out, "none")
    if "abstain_idx" in out.columns and (out.abstain_idx.fillna(-1).astype(int) >= 0).any():
        raise ValueError("card items must not offer an abstain option already; the card adds its own variant")
    out["abstain_idx"] = -1
    out[VARIANT] = ""
    return out.reset_index(drop=True)


def with_depth(items: pd.DataFrame, provider: Any = None) -> pd.DataFrame:
    """``items`` whose ``depth_ref`` is set for fog and water: kept where an item has one; elsewhere the
    ``provider``'s depth (a :mod:`vlmrobust.depth` provider: a metric depth model, or a constant plane) of its
    clean image, written to the asset store. An item without depth and no provider is an error."""
    from ... import assets, data

    has = items["depth_ref"].notna() if "depth_ref" in items.columns else pd.Series(False, index=items.index)
    if has.all():
        return items
    if provider is None:
        missing = items.loc[~has, "item_id"].astype(str).tolist()
        raise ValueError(f"{len(missing)} items have no depth map (e.g. {missing[:3]}); fog and water need one: "
                         "give a depth provider (depth_provider: pipeline with a metric depth model, or plane)")
    out = items.copy()
    out["depth_ref"] = [r if ok else assets.store_depth(provider(data.load_image(img), img))
                        for r, ok, img in zip(out.get("depth_ref", [None] * len(out)), has, out.image_ref, strict=True)]
    return out


def abstain_variants(items: pd.DataFrame, variant: str = _ABSTAIN) -> pd.DataFrame:
    """The items with seed 003's abstain option ``ABSTAIN_TEXTS[variant]`` appended (ids ``<id>~<variant>``)."""
    if variant not in ABSTAIN_TEXTS:
        raise ValueError(f"variant must be one of {sorted(ABSTAIN_TEXTS)}, got {variant!r}")
    out = card_items(items)
    out["meta"] = _meta(out, variant)
    out["abstain_idx"] = [len(o) for o in out.options]
    out["options"] = [list(o) + [ABSTAIN_TEXTS[variant]] for o in out.options]
    out["item_id"] = [f"{i}~{variant}" for i in out.item_id]
    out[VARIANT] = variant
    return out


def order_variants(items: pd.DataFrame, orders: pd.DataFrame) -> pd.DataFrame:
    """Every order of ``orders`` as its own item (ids ``<id>~o<k>``), options reordered by :func:`permute_options`;
    columns ``base_item_id`` and ``order_level`` say which item and which order each one is."""
    parts = []
    for k in sorted(orders.level.unique()):
        p = permute_options(items, orders, int(k))
        parts.append(p.assign(base_item_id=p.item_id, order_level=int(k), item_id=[f"{i}~o{k}" for i in p.item_id]))
    return pd.concat(parts, ignore_index=True) if parts else items.iloc[:0]


def is_base(table: pd.DataFrame) -> pd.Series:
    """Rows of the items as given (:data:`VARIANT` empty); every row of a table without that column."""
    if VARIANT not in table.columns:
        return pd.Series(True, index=table.index)
    return table[VARIANT].astype(str).eq("")


@dataclass
class CardInputs:
    """The card's rows: ``pred`` (one predictions table), ``probes`` (one probe table), the card ``items``
    (base items and abstain variants, with their ``meta``), the option ``orders`` and the sweeps' summaries."""

    pred: pd.DataFrame
    probes: pd.DataFrame
    items: pd.DataFrame
    orders: pd.DataFrame
    summary: dict


@contextmanager
def _executor(executor: str, client: Any, dask_workers: int):
    """One Dask client for the card's sweeps: ``client`` as given, or a local cluster of ``dask_workers``."""
    if executor != "dask" or client is not None or not dask_workers:
        yield client
        return
    own = sweep.notebook_client(executor, "", dask_workers)
    try:
        yield own
    finally:
        cluster = own.cluster
        own.close()
        cluster.close()


def card_predictions(models: Sequence[str], items: pd.DataFrame, conditions: Mapping[str, Sequence[int]], *,
                     n_orders: int = 3, probes: Any = None, probe_on: Sequence[str] | None = None, seed: int = 0,
                     executor: str = "local", client: Any = None, dask_workers: int = 0,
                     **sweep_kw: Any) -> CardInputs:
    """The card's sweep (module docstring): ``conditions`` from :func:`card_conditions`.

    ``probes`` a :class:`~vlmrobust.probes.ProbeSpec` (``None``: no probe rows, no drift) read on the clean
    images and the conditions ``probe_on`` (default: the ImageNet-C ones, where the card reads drift; the
    other conditions are scored without the probes' extra forwards). ``executor="dask"`` runs every shard on
    ``client`` or on one local cluster of ``dask_workers`` processes for all the calls; ``sweep_kw`` go to
    :func:`vlmrobust.sweep.predictions` (``methods``, ``batch_size``, ``progress``, ``out_dir``, ...).
    """
    base = card_items(items)
    if base.item_id.astype(str).str.contains("~").any():
        raise ValueError("item ids must not contain '~' (the card's variant separator)")
    if probes is None:
        probe_on = []
    elif probe_on is None:
        probe_on = [n for n in conditions if n in corrupt.manifest("imagenet_c")]
    unknown = sorted(set(probe_on) - set(conditions))
    if unknown:
        raise ValueError(f"probe_on names conditions that are not swept: {unknown}")
    vis = {n: list(v) for n, v in conditions.items() if n in ARMS}
    abstaining = abstain_variants(base) if vis else base.iloc[:0]
    orders = option_orders(base, n_orders) if n_orders else pd.DataFrame(columns=["item_id", "level", "order"])
    with _executor(executor, client, dask_workers) as cl:
        kw = dict(seed=seed, executor=executor, client=cl, **sweep_kw)
        parts, summ, probe_rows = [], {}, pd.DataFrame()
        if probes is not None:
            first = sweep.predictions(models, base, {n: conditions[n] for n in probe_on}, probes=probes, **kw)
            parts.append(first.table)
            probe_rows, summ["items, with probes"] = first.probes, first.summary()
        rest = {n: list(v) for n, v in conditions.items() if n not in probe_on}
        if rest or probes is None:
            plain = sweep.predictions(models, base, rest, include_clean=probes is None, **kw)
            parts.append(plain.table)
            summ["items"] = plain.summary()
        if vis:
            abst = sweep.predictions(models, abstaining, vis, **kw)
            parts.append(abst.table)
            summ["abstain variants"] = abst.summary()
        if len(orders):
            variants = order_variants(base, orders)
            ordered = sweep.predictions(models, variants, {}, **kw)
            t = ordered.table.copy()
            of = variants.set_index("item_id")
            ids = t.item_id.astype(str)
            t["item_id"], t["perturbation"] = of.base_item_id.reindex(ids).to_numpy(), ORDER
            t["level"] = of.order_level.reindex(ids).to_numpy().astype(int)
            parts.append(t)
            summ["order variants"] = ordered.summary()
    pred = pd.concat(parts, ignore_index=True)
    all_items = pd.concat([base, abstaining], ignore_index=True) if vis else base
    variant_of = dict(zip(all_items.item_id.astype(str), all_items[VARIANT], strict=True))
    pred[VARIANT] = pred.item_id.astype(str).map(variant_of).fillna("").to_numpy()
    return CardInputs(pred, probe_rows if probe_rows is not None else pd.DataFrame(), all_items, orders, summ)


def base_rows(pred: pd.DataFrame, perturbations: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows of the items as given (no abstain variant, no order), clean and of ``perturbations``."""
    keep = is_base(pred) & (pred.perturbation != ORDER)
    if perturbations is not None:
        keep &= pred.perturbation.isin([CLEAN, *perturbations])
    return pred[keep].reset_index(drop=True)
