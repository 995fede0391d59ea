"""A small seeded COCO instances file and its JPEG folder, in the format notebook 06's paper variant reads.

**The COCO file** has ``info``, ``licenses``, ``images`` (``file_name`` = the 12-digit id),
``annotations`` (``bbox`` ``[x, y, w, h]``, ``area`` = the drawn object's pixel count,
``segmentation`` polygons, ``iscrowd``) and ``categories`` (real COCO ids, names, supercategories).
Each JPEG holds a filled rectangle or ellipse in its category's colour exactly inside its box; one
image holds only an object below 1 % of its area and one a crowd region (RLE) larger than its
objects, the two cases :func:`vlmrobust.depth.real_scenes` passes over.

Everything is drawn from ``repro.rng("fabricate", COCO_ANNOTATIONS, seed)``: the same seed writes the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from ..repro import rng as seeded_rng

__all__ = ["COCO_ANNOTATIONS", "COCO_IMAGES", "COCO_CATEGORIES", "write_coco"]

COCO_ANNOTATIONS = "data/coco/annotations/instances_val2017.json"
COCO_IMAGES = "data/coco/val2017"
#: ``(id, name, supercategory, RGB)``: real COCO ids and names, one flat colour each.
COCO_CATEGORIES = (
    (1, "person", "person", (230, 120, 180)), (2, "bicycle", "vehicle", (40, 160, 60)),
    (3, "car", "vehicle", (40, 70, 210)), (10, "traffic light", "outdoor", (240, 210, 30)),
    (13, "stop sign", "outdoor", (220, 40, 40)), (17, "cat", "animal", (150, 50, 180)),
    (18, "dog", "animal", (245, 130, 20)), (44, "bottle", "kitchen", (0, 170, 170)),
    (47, "cup", "kitchen", (245, 245, 245)), (62, "chair", "furniture", (25, 25, 25)),
    (64, "potted plant", "furniture", (128, 128, 0)), (72, "tv", "electronic", (90, 40, 10)))


def _rle(mask: np.ndarray) -> dict:
    """COCO's uncompressed RLE of a bool mask (column-major runs, starting with a run of zeros)."""
    flat = mask.ravel(order="F")
    bounds = np.concatenate([[0], np.flatnonzero(flat[1:] != flat[:-1]) + 1, [flat.size]])
    counts = ([0] if flat[0] else []) + np.diff(bounds).astype(int).tolist()
    return {"counts": counts, "size": [int(mask.shape[0]), int(mask.shape[1])]}


def write_coco(annotations: str | Path, images_dir: str | Path, seed: int = 0, n_images: int = 8) -> Path:
    """A COCO instances file and its JPEG folder: objects drawn where their boxes are (module docstring).

    Image ``n_images - 1`` holds only a 3 x 3 px object; image 1 has a crowd region
    (``iscrowd`` 1, RLE) larger than its other objects. JPEGs in ``images_dir``
    that the file does not list are removed, so the folder matches the file.
    """
    g = seeded_rng("fabricate", COCO_ANNOTATIONS, seed)
    folder, images, anns = Path(images_dir), [], []
    folder.mkdir(parents=True, exist_ok=True)
    ids = np.sort(g.choice(np.arange(100, 581_000), n_images, replace=False))
    for j, img_id in enumerate(ids.tolist()):
        w, h = [(128, 96), (96, 128), (120, 90), (112, 112)][int(g.integers(4))]
        img = np.empty((h, w, 3), np.uint8)
        img[: int(0.4 * h)], img[int(0.4 * h):] = (150, 190, 230), (120, 110, 90)
        yy, xx = np.mgrid[0:h, 0:w] + 0.5
        cats = g.permutation(len(COCO_CATEGORIES))
        cells = g.permutation(2) if j == 1 else g.permutation(4)  # image 1: the crowd takes the bottom half
        n = 1 if j == n_images - 1 else int(g.integers(1, len(cells) + 1))
        objs = [(int(cats[m]), int(cells[m]), False) for m in range(n)] + ([(int(cats[n]), -1, True)] if j == 1 else [])
        for cat, cell, crowd in objs:
            cid, _, sup, rgb = COCO_CATEGORIES[cat]
            if crowd:
                x0, y0, bw, bh = 2.0, h / 2 + 2, w - 4.0, h / 2 - 4
            elif j == n_images - 1:
                x0, y0, bw, bh = w / 2, h / 2, 3.0, 3.0
            else:
                cw, ch = w / 2, h / 2
                bw, bh = cw * g.uniform(0.45, 0.85), ch * g.uniform(0.45, 0.85)
                x0 = (cell % 2) * cw + g.uniform(2, cw - bw - 2)
                y0 = (cell // 2) * ch + g.uniform(2, ch - bh - 2)
            u, v = (xx - x0 - bw / 2) / (bw / 2), (yy - y0 - bh / 2) / (bh / 2)
            ellipse = sup in ("person", "animal") and not crowd
            mask = u * u + v * v <= 1 if ellipse else (np.abs(u) <= 1) & (np.abs(v) <= 1)
            img[mask] = rgb
            ys, xs = np.nonzero(mask)
            bx, by, bx1, by1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
            t = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            poly = (np.stack([x0 + bw / 2 * (1 + np.cos(t)), y0 + bh / 2 * (1 + np.sin(t))], 1) if ellipse
                    else np.array([[bx, by], [bx1, by], [bx1, by1], [bx, by1]], float))
            seg = _rle(mask) if crowd else [np.round(poly, 2).ravel().tolist()]
            anns.append({"segmentation": seg, "area": float(mask.sum()), "iscrowd": int(crowd), "image_id": img_id,
                         "bbox": [float(bx), float(by), float(bx1 - bx), float(by1 - by)], "category_id": cid,
                         "id": 900_000 + len(anns)})
        name = f"{img_id:012d}.jpg"
        Image.fromarray(img).save(folder / name, format="JPEG", quality=90)
        images.append({"license": 1, "file_name": name, "coco_url": "", "height": h, "width": w,
                       "date_captured": "2017-01-01 00:00:00", "flickr_url": "", "id": img_id})
    keep = {im["file_name"] for im in images}
    for stale in sorted(p for p in folder.glob("*.jpg") if p.name not in keep):
        stale.unlink()
    doc = {"info": {"description": "vlmrobust: a small fabricated file in the COCO instances format", "version": "1.0",
                    "year": 2017, "contributor": "vlmrobust", "date_created": "2017/09/01"},
           "licenses": [{"url": "", "id": 1, "name": "fabricated"}], "images": images, "annotations": anns,
           "categories": [{"supercategory": s, "id": i, "name": n} for i, n, s, _ in COCO_CATEGORIES]}
    Path(annotations).parent.mkdir(parents=True, exist_ok=True)
    Path(annotations).write_text(json.dumps(doc, separators=(",", ":")))
    return Path(annotations)
