"""Which evidence a region-removing perturbation takes away, from the exact geometry of synthetic items.

Seed 001 reads traversal failures as "missing/cropped context" when the traversal removed what the question
needs (§VII-B) and as misreadings when it did not, but it can only guess which case a failure is. The
synthetic benchmark knows: every item's ``meta`` holds the tight pixel box of every object and of the
target (the boxed object, the sign, the answer object or bar), the red box's rectangle, and the counting
rule. For the perturbations that remove a region and keep the rest in place or rescaled (the traversals of
every fill, the sky-only control, the BRUCE center crop) the surviving part of the image is a rectangle
(:func:`kept_extent`), so the share of each box that was removed is exact.

Evidence of an item, by family (the boxes are tight pixel boxes, so a box's share removed bounds the share
of the object's own pixels removed):

* ``colour``, ``shape``, ``verify``, ``text``, ``exist`` (answer yes): the target (the boxed object, the
  sign, the queried object); ``exist`` with answer no has no evidence box (what is absent cannot be removed);
* ``spatial``, ``size``, ``chart``: the answer object or bar (removing another object leaves the extreme
  one extreme; a truncated bar is a partly removed target);
* ``count``: every counted object (matching the question's colour or shape); ``visible_count`` is the
  answer minus the counted objects removed entirely.

States (:data:`EVIDENCE_STATES`): ``removed`` (an evidence box removed entirely: the target is gone, or for
``count`` the count changed), ``partial`` (some evidence box cut, none removed), ``intact`` (no evidence box
touched), ``none`` (the item has no evidence box), ``n/a`` (no geometry: a perturbation that degrades the
image in place, such as blur, contrast or rotation, or an item without synthetic ``meta``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ._core import info
from .escalation import CROP_REMOVED, band_extent, sky_band_extent

__all__ = ["EVIDENCE_STATES", "EVIDENCE_COLUMNS", "kept_extent", "share_outside", "evidence_boxes",
           "evidence_record", "evidence_table"]

EVIDENCE_STATES = ("removed", "partial", "intact", "none", "n/a")
EVIDENCE_COLUMNS = ("item_id", "perturbation", "level", "scene", "share_removed", "target_removed",
                    "box_removed", "n_evidence", "n_removed", "n_partial", "visible_count", "evidence")
_TRAVERSAL_FAMILIES = ("traversal", "fill")


def kept_extent(name: str, level: int, shape: tuple[int, ...], image: np.ndarray | None = None,
                depth: np.ndarray | None = None) -> tuple[int, int, int, int] | None:
    """The rectangle ``(x0, y0, x1, y1)`` (ends exclusive) of the original image that ``name`` keeps.

    Level 0 keeps everything. Traversals keep all but their band (:func:`~.escalation.band_extent`), the
    center crop its central ``1 - p`` of each side, the sky-only control all but its sky rows (it needs
    ``image`` and ``depth``). ``None`` for perturbations that remove no region.
    """
    h, w = shape[:2]
    if level == 0:
        return 0, 0, w, h
    meta = info(name)
    if meta.family in _TRAVERSAL_FAMILIES:
        return band_extent(shape, name.split("_")[1], meta.param(level))
    if name == "bruce_center_crop":
        p = CROP_REMOVED[level - 1]
        kh, kw = max(1, int(round((1 - p) * h))), max(1, int(round((1 - p) * w)))
        y0, x0 = (h - kh) // 2, (w - kw) // 2
        return x0, y0, x0 + kw, y0 + kh
    if meta.family == "control":
        if image is None or depth is None:
            raise ValueError(f"{name!r} removes the sky-only rows: its kept extent needs the image and its depth")
        return sky_band_extent(image, depth, meta.param(level))
    return None


def share_outside(box: Sequence[float], kept: Sequence[float]) -> float:
    """Share of the area of ``box`` ``(x0, y0, x1, y1)`` (ends exclusive) that lies outside ``kept``."""
    x0, y0, x1, y1 = (float(v) for v in box)
    area = max(x1 - x0, 0.0) * max(y1 - y0, 0.0)
    if area <= 0:
        raise ValueError(f"box must have a positive area, got {tuple(box)}")
    kx0, ky0, kx1, ky1 = (float(v) for v in kept)
    inside = max(min(x1, kx1) - max(x0, kx0), 0.0) * max(min(y1, ky1) - max(y0, ky0), 0.0)
    return 1.0 - inside / area


def evidence_boxes(meta: Mapping) -> list[list[int]]:
    """The evidence boxes of one synthetic item (see the module docstring); ``[]`` when it has none."""
    family = meta.get("family")
    if family == "count":
        by = meta["by"]
        want = meta[by]
        return [o["bbox"] for o in meta["objects"] if o.get(by) == want and o.get("bbox") is not None]
    return [meta["bbox"]] if meta.get("bbox") is not None else []


def evidence_record(meta: Mapping | str | None, kept: Sequence[int] | None) -> dict:
    """What the kept rectangle ``kept`` leaves of one item's evidence (columns of :data:`EVIDENCE_COLUMNS`).

    ``meta`` is the item's synthetic ``meta`` (a dict or its JSON text); without ``objects`` or with
    ``kept=None`` the record says ``n/a``.
    """
    if isinstance(meta, str):
        meta = json.loads(meta) if meta.strip() else {}
    meta = meta or {}
    rec = {"scene": meta.get("scene", ""), "share_removed": np.nan, "target_removed": np.nan,
           "box_removed": np.nan, "n_evidence": 0, "n_removed": 0, "n_partial": 0, "visible_count": np.nan,
           "evidence": "n/a"}
    if kept is None or "objects" not in meta:
        return rec
    size = int(meta["size"])
    rec["share_removed"] = share_outside((0, 0, size, size), kept)
    if meta.get("bbox") is not None:
        rec["target_removed"] = share_outside(meta["bbox"], kept)
    if meta.get("box") is not None:
        x0, y0, x1, y1 = meta["box"]  # inclusive outline lines
        rec["box_removed"] = share_outside((x0, y0, x1 + 1, y1 + 1), kept)
    shares = np.array([share_outside(b, kept) for b in evidence_boxes(meta)])
    rec["n_evidence"] = int(shares.size)
    rec["n_removed"] = int((shares >= 1.0).sum())
    rec["n_partial"] = int(((shares > 0) & (shares < 1.0)).sum())
    if meta.get("family") == "count":
        rec["visible_count"] = float(int(meta["count"]) - rec["n_removed"])
    rec["evidence"] = ("none" if not shares.size else "removed" if rec["n_removed"] else
                       "partial" if rec["n_partial"] else "intact")
    return rec


def evidence_table(items: pd.DataFrame, conditions: Mapping[str, Sequence[int]]) -> pd.DataFrame:
    """One :func:`evidence_record` per item × condition (columns :data:`EVIDENCE_COLUMNS`).

    ``conditions`` maps perturbation names to levels, as for a sweep. Images and depth are rendered only
    for the sky-only control, whose band depends on them.
    """
    from .. import data

    rows = []
    for it in items.itertuples(index=False):
        meta = json.loads(it.meta) if isinstance(it.meta, str) and it.meta.strip() else {}
        size = int(meta.get("size", 0) or 0)
        rendered = None
        for name, levels in conditions.items():
            control = info(name).family == "control"
            if control and size and rendered is None and it.depth_ref:
                rendered = (data.load_image(it.image_ref), data.load_depth(it.depth_ref))
            img, dep = rendered if control and rendered is not None else (None, None)
            for level in levels:
                kept = None
                if size and (not control or img is not None):
                    kept = kept_extent(name, int(level), (size, size), img, dep)
                rows.append({"item_id": it.item_id, "perturbation": name, "level": int(level),
                             **evidence_record(meta, kept)})
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
