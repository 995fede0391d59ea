"""Probe shards: what the sweep engine writes for a probe sweep (one shard per model x perturbation).

A probe shard holds one row per ``(item, condition, regime, kind)``
(:data:`PROBE_COLUMNS`), so its size grows with items x layers, never with
items x conditions x hidden size:

* ``kind = "state"`` (clean shard only): the clean states themselves, the
  final post-norm vector (``state``, H floats) and the pre-norm layers
  ``0..L`` (``state_layers``, ``(L + 1) * H`` floats, row-major);
* ``kind = "drift"`` (perturbed shards): distances to the same item's clean
  state, computed inside the shard: cosine distance ``1 - cos`` and L2 at the
  final post-norm state (``cos``, ``l2``) and per pre-norm layer
  (``cos_layers``, ``l2_layers``, L + 1 values);
* ``kind = "floor"`` (clean shard): the same clean inputs scored again in
  another batch composition (batch size ``floor_batch_size``), distances to
  the first pass - the noise floor;
* ``kind = "control"`` (clean shard): distances between the clean states of
  ``n_control`` random pairs of distinct items (``other_id`` the partner) -
  the control distribution of seed 002 App. A.9. The pairs of each regime are
  drawn among the items that have a state in it (a free answer can be empty),
  so every control distance is finite.

The ``vision_grid`` rows carry the Dirichlet energy of the grid per layer
(``energy_layers``, L + 2 values) and at ``grid_layer`` (``energy``), and for
``drift``/``floor`` rows its change ``d_energy = E(x') - E(x)`` (App. E.1).
``pred_idx`` is the scoring prediction for the scoring-forward regimes, and
the parsed option of the generated answer (``-1`` when none) for the open and
free-MCQ regimes; ``text`` holds the generated answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import repro
from .regimes import REGIMES, VISION_PROBES, ProbeSpec, probe_condition

__all__ = ["PROBE_COLUMNS", "KINDS", "ALL_REGIMES", "SHARD_VERSION", "control_pairs", "state_rows", "distance_rows",
           "control_rows", "clean_states", "score_condition"]

ALL_REGIMES = REGIMES + VISION_PROBES
#: Enters the probe shards' keys; bumped when what a probe shard holds changes meaning.
SHARD_VERSION = 1
KINDS = ("state", "drift", "floor", "control")
PROBE_COLUMNS = (
    "model", "item_id", "task", "category", "perturbation", "level", "param", "method", "template", "seed",
    "regime", "kind", "other_id", "pred_idx", "text", "n_tokens", "cos", "l2", "cos_layers", "l2_layers",
    "energy", "energy_layers", "d_energy", "d_energy_layers", "state", "state_layers",
)


def _dist(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise cosine distance ``1 - cos`` and L2 distance of two ``(n, H)`` arrays (float64)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = 1.0 - (a * b).sum(-1) / (na * nb)
    return cos, np.linalg.norm(a - b, axis=-1)


def _base(meta: dict, rec: dict, regime: str, kind: str) -> dict:
    row = {c: None for c in PROBE_COLUMNS}
    row.update(meta)
    row.update(item_id=str(rec["item_id"]), task=str(rec.get("task", "")), category=str(rec.get("category", "")),
               regime=regime, kind=kind, other_id="", pred_idx=-1, text="", n_tokens=0)
    for c in ("cos", "l2", "energy", "d_energy"):
        row[c] = float("nan")
    return row


def state_rows(meta: dict, recs: list[dict], states: list[dict], grid_layer: int) -> list[dict]:
    """``kind = "state"`` rows: the clean vectors of every regime, the grid energies."""
    rows = []
    for rec, st in zip(recs, states, strict=True):
        for regime in ALL_REGIMES:
            s = st[regime]
            row = _base(meta, rec, regime, "state")
            row.update(pred_idx=int(s["pred"]), text=s["text"], n_tokens=int(s["n_tokens"]))
            if regime == "vision_grid":
                row.update(energy=float(s["energy"][grid_layer]), energy_layers=s["energy"].tolist())
            else:
                arr = np.asarray(s["state"], dtype=np.float32)
                row.update(state=arr[-1].tolist(), state_layers=arr[:-1].ravel().tolist())
            rows.append(row)
    return rows


def clean_states(table: pd.DataFrame) -> dict[tuple[str, str], dict]:
    """``(item_id, regime) -> {"state": (L + 2, H), "energy": (L + 2,)}`` from a clean shard's state rows."""
    out = {}
    for r in table[table["kind"] == "state"].itertuples():
        if r.regime == "vision_grid":
            out[(r.item_id, r.regime)] = {"energy": np.asarray(r.energy_layers, dtype=np.float64)}
        else:
            final = np.asarray(r.state, dtype=np.float32)
            layers = np.asarray(r.state_layers, dtype=np.float32).reshape(-1, final.size)
            out[(r.item_id, r.regime)] = {"state": np.vstack([layers, final[None]]), "pred": int(r.pred_idx)}
    return out


def distance_rows(meta: dict, recs: list[dict], states: list[dict], clean: dict, kind: str,
                  grid_layer: int) -> list[dict]:
    """``drift`` or ``floor`` rows: per-layer distances of each regime's state to the item's clean state."""
    rows = []
    for rec, st in zip(recs, states, strict=True):
        iid = str(rec["item_id"])
        for regime in ALL_REGIMES:
            s, c = st[regime], clean[(iid, regime)]
            row = _base(meta, rec, regime, kind)
            row.update(pred_idx=int(s["pred"]), text=s["text"], n_tokens=int(s["n_tokens"]))
            if regime == "vision_grid":
                e, e0 = np.asarray(s["energy"], dtype=np.float64), c["energy"]
                row.update(energy=float(e[grid_layer]), energy_layers=e.tolist(),
                           d_energy=float(e[grid_layer] - e0[grid_layer]), d_energy_layers=(e - e0).tolist())
            else:
                cos, l2 = _dist(np.asarray(s["state"]), c["state"])
                row.update(cos=float(cos[-1]), l2=float(l2[-1]), cos_layers=cos[:-1].tolist(),
                           l2_layers=l2[:-1].tolist())
            rows.append(row)
    return rows


def control_pairs(item_ids: list[str], image_refs: list[str], n: int, *keys: Any) -> np.ndarray:
    """``min(n, available)`` random unordered pairs ``(i, j)`` of items with different images, drawn without
    replacement.

    Drawn from ``repro.rng("control", *keys)``; ``(m, 2)`` int array, ``i < j``.
    """
    m = len(item_ids)
    if n <= 0 or m < 2:
        return np.zeros((0, 2), dtype=int)
    iu, ju = np.triu_indices(m, k=1)
    refs = np.asarray(image_refs, dtype=object)
    keep = refs[iu] != refs[ju]
    iu, ju = iu[keep], ju[keep]
    rng = repro.rng("control", *keys)
    pick = rng.choice(len(iu), size=min(n, len(iu)), replace=False)
    return np.stack([iu[np.sort(pick)], ju[np.sort(pick)]], axis=1)


def control_rows(meta: dict, recs: list[dict], clean: dict, pairs: np.ndarray,
                 regimes: tuple[str, ...] = REGIMES + ("vision_mean",)) -> list[dict]:
    """``control`` rows: distances between the clean states of unrelated items (``pairs`` of record indices)."""
    rows = []
    for regime in regimes:
        for i, j in pairs:
            a = clean[(str(recs[i]["item_id"]), regime)]["state"]
            b = clean[(str(recs[j]["item_id"]), regime)]["state"]
            cos, l2 = _dist(a, b)
            row = _base(meta, recs[i], regime, "control")
            row.update(other_id=str(recs[j]["item_id"]), cos=float(cos[-1]), l2=float(l2[-1]),
                       cos_layers=cos[:-1].tolist(), l2_layers=l2[:-1].tolist())
            rows.append(row)
    return rows


def score_condition(lm: Any, items: pd.DataFrame, images: list, *, spec: ProbeSpec, method: str, template: str,
                    batch_size: int, meta: dict, clean: dict | None, seed_keys: tuple = ()
                    ) -> tuple[pd.DataFrame, pd.DataFrame, dict | None]:
    """Predictions and probe rows of one condition (clean: states, floor and control; else drift rows).

    ``clean`` is :func:`clean_states` of the clean shard (``None`` when this is
    the clean condition). Returns ``(predictions, probe rows, clean states)``.
    """
    recs = items.to_dict("records")
    kw = dict(method=method, template=template, spec=spec,
              **{k: v for k, v in meta.items() if k in ("seed", "perturbation", "level", "param")})
    kw["model_name"] = meta["model"]
    pred, states = probe_condition(lm, items, images, batch_size=batch_size, **kw)
    if clean is not None:
        rows = distance_rows(meta, recs, states, clean, "drift", spec.grid_layer)
        return pred, pd.DataFrame(rows, columns=list(PROBE_COLUMNS)), clean
    rows = state_rows(meta, recs, states, spec.grid_layer)
    table = pd.DataFrame(rows, columns=list(PROBE_COLUMNS))
    own = clean_states(table)
    extra = []
    if spec.noise_floor:
        _, again = probe_condition(lm, items, images, batch_size=spec.floor_batch_size, **kw)
        extra += distance_rows(meta, recs, again, own, "floor", spec.grid_layer)
    ids = [str(r["item_id"]) for r in recs]
    refs = [str(r.get("image_ref", r["item_id"])) for r in recs]
    for regime in REGIMES + ("vision_mean",):
        ok = np.array([i for i, iid in enumerate(ids) if np.isfinite(own[(iid, regime)]["state"]).all()], dtype=int)
        pairs = control_pairs([ids[i] for i in ok], [refs[i] for i in ok], spec.n_control, *seed_keys, regime)
        extra += control_rows(meta, recs, own, ok[pairs] if len(pairs) else pairs, (regime,))
    if extra:
        table = pd.concat([table, pd.DataFrame(extra, columns=list(PROBE_COLUMNS))], ignore_index=True)
    return pred, table, own
