r"""Metric depth for the physical degradations of seed 003, and boxed scenes from real (COCO-style) images.

Seed 003 applies fog and water "with a monocular metric depth map"; the image
formation model (its Eq. 1) needs the **ray distance** ``r`` of every pixel. A
**depth provider** is a callable ``provider(image, ref) -> r`` (float ``H×W``,
metres, ``inf`` for the sky) with a ``name``:

* :class:`ExactDepth` — the synthetic world's exact ray distance (``ref`` is a
  ``synth://`` reference);
* :class:`PipelineDepth` — a ``transformers`` depth-estimation pipeline with a
  *metric* model (e.g. Depth Anything V2 Metric Outdoor); its planar depth ``z``
  (distance along the optical axis) is converted to ray distance;
* :class:`ConstantPlaneDepth` — the fallback: a fronto-parallel plane at a
  stated distance, converted to ray distance the same way.

**Planar to ray** (pinhole camera, principal point at the image centre
``(c_x, c_y) = ((W-1)/2, (H-1)/2)``, square pixels, focal length ``f`` in pixels):

.. math::  r(u, v) = z(u, v)\,\sqrt{1 + \frac{(u - c_x)^2 + (v - c_y)^2}{f^2}},
           \qquad f = \frac{W / 2}{\tan(\mathrm{FOV}_h / 2)} .

Real photographs carry no intrinsics; the stated default is a horizontal field of
view of 60° (:data:`DEFAULT_FOV_DEG`), a parameter. (The synthetic camera has
``f = 1.2 W``, a 45.2° field of view: :func:`vlmrobust.synth.focal_px`.)

**Sky cap.** Sky pixels have infinite depth in the synthetic world, so any fog, at
any V, turns the whole sky into the veiling light. Seed 003's depth comes from a
monocular *metric* depth model, which never returns infinity: the outdoor model of
its paper variant (Depth Anything V2 Metric Outdoor) predicts depth up to its
``max_depth`` of 80 m, the sky included. :func:`cap_sky` replaces infinite depths
by a stated distance (finite depths are kept, even beyond it);
:data:`METRIC_SKY_DEPTH_M` (80 m) is the sky depth the paper's pipeline sees, the
default of notebook 06; an infinite sky stays a parameter there.

:func:`real_scenes` turns COCO-style annotations into the scene table of
:mod:`vlmrobust.synth.visibility` (one boxed object per image), so real images
run through the same items, sweeps and read-outs as the synthetic ones.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

__all__ = ["DEFAULT_FOV_DEG", "METRIC_SKY_DEPTH_M", "DepthProvider", "ExactDepth",
           "ConstantPlaneDepth", "PipelineDepth",
           "focal_from_fov", "planar_to_ray", "ray_to_planar", "cap_sky", "make_provider", "attach_depth",
           "real_scenes"]

#: Stated horizontal field of view of real photographs without intrinsics (degrees).
DEFAULT_FOV_DEG = 60.0
#: The sky's depth as a metric outdoor depth model gives it: Depth Anything V2 Metric Outdoor's ``max_depth``.
METRIC_SKY_DEPTH_M = 80.0


class DepthProvider(Protocol):
    """``provider(image, ref) -> ray distance`` (float ``H×W`` metres, ``inf`` = sky), with a ``name``."""

    name: str

    def __call__(self, image: np.ndarray, ref: str | None = None) -> np.ndarray: ...


def focal_from_fov(width: int, fov_deg: float) -> float:
    """Focal length in pixels of a pinhole camera ``width`` pixels wide with horizontal field of view ``fov_deg``."""
    if not (isinstance(fov_deg, (int, float)) and 0 < fov_deg < 180):
        raise ValueError(f"fov_deg must be in (0, 180) degrees, got {fov_deg!r}")
    if not (isinstance(width, (int, np.integer)) and width >= 1):
        raise ValueError(f"width must be a positive int, got {width!r}")
    return (width / 2.0) / math.tan(math.radians(fov_deg) / 2.0)


def _ray_factor(shape: tuple[int, int], focal_px: float) -> np.ndarray:
    if not (focal_px > 0 and math.isfinite(focal_px)):
        raise ValueError(f"focal_px must be a positive number of pixels, got {focal_px!r}")
    h, w = shape
    u = np.arange(w, dtype=np.float64) - (w - 1) / 2.0
    v = np.arange(h, dtype=np.float64) - (h - 1) / 2.0
    return np.sqrt(1.0 + (u[None, :] ** 2 + v[:, None] ** 2) / focal_px**2)


def planar_to_ray(z: np.ndarray, focal_px: float) -> np.ndarray:
    """Ray distance from planar depth ``z`` (metres along the optical axis) for a centred pinhole camera."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"z must be an H×W array of metres, got shape {z.shape}")
    return z * _ray_factor(z.shape, focal_px)


def ray_to_planar(r: np.ndarray, focal_px: float) -> np.ndarray:
    """Planar depth from ray distance (the inverse of :func:`planar_to_ray`)."""
    r = np.asarray(r, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"r must be an H×W array of metres, got shape {r.shape}")
    return r / _ray_factor(r.shape, focal_px)


def cap_sky(depth: np.ndarray, cap_m: float) -> np.ndarray:
    """``depth`` with infinite distances (the sky) replaced by ``cap_m`` metres; ``cap_m = inf`` changes nothing."""
    if not (isinstance(cap_m, (int, float)) and cap_m > 0) or math.isnan(cap_m):
        raise ValueError(f"cap_m must be > 0 metres (inf keeps the sky infinite), got {cap_m!r}")
    d = np.asarray(depth, dtype=np.float32)
    return np.where(np.isinf(d), np.float32(cap_m), d) if math.isfinite(cap_m) else d.copy()


def _check_out(depth: np.ndarray, image: np.ndarray, who: str) -> np.ndarray:
    d = np.asarray(depth, dtype=np.float32)
    if d.shape != np.asarray(image).shape[:2]:
        raise ValueError(f"{who}: depth has shape {d.shape}, the image {np.asarray(image).shape[:2]}")
    if np.isnan(d).any() or (d < 0).any():
        raise ValueError(f"{who}: depth must be >= 0 metres or +inf, with no NaN")
    return d


@dataclass(frozen=True)
class ExactDepth:
    """The synthetic world's exact ray distance, read from a ``synth://`` reference."""

    name: str = "exact"

    def __call__(self, image: np.ndarray, ref: str | None = None) -> np.ndarray:
        from . import data

        if not isinstance(ref, str) or not ref.startswith("synth://"):
            raise ValueError(f"ExactDepth needs a synth:// reference, got {ref!r}; real images need a depth model "
                             "(PipelineDepth) or ConstantPlaneDepth")
        return _check_out(data.load_depth(ref), image, self.name)


@dataclass(frozen=True)
class ConstantPlaneDepth:
    """A fronto-parallel plane ``distance_m`` metres away (planar depth), as ray distance at ``fov_deg``."""

    distance_m: float = 10.0
    fov_deg: float = DEFAULT_FOV_DEG

    @property
    def name(self) -> str:
        return f"plane-{self.distance_m:g}m-fov{self.fov_deg:g}"

    def __call__(self, image: np.ndarray, ref: str | None = None) -> np.ndarray:
        if not (self.distance_m > 0 and math.isfinite(self.distance_m)):
            raise ValueError(f"distance_m must be a positive finite number of metres, got {self.distance_m!r}")
        h, w = np.asarray(image).shape[:2]
        z = np.full((h, w), float(self.distance_m))
        return _check_out(planar_to_ray(z, focal_from_fov(w, self.fov_deg)), image, self.name)


@dataclass
class PipelineDepth:
    """A ``transformers`` depth-estimation pipeline with a metric model; planar depth converted to ray distance.

    ``model`` is a hub id or folder (e.g. ``depth-anything/Depth-Anything-V2-Metric-Outdoor-Large-hf``);
    the pipeline's ``predicted_depth`` (metres, planar) is resized bilinearly to
    the image when its size differs, clipped at 0, and converted with
    :func:`planar_to_ray` at ``fov_deg``. The pipeline is built on first use;
    ``pipeline_fn`` replaces ``transformers.pipeline`` (tests build one offline).
    """

    model: str
    fov_deg: float = DEFAULT_FOV_DEG
    device: str = "cpu"
    revision: str | None = None
    pipeline_fn: Callable[..., Any] | None = None
    _pipe: Any = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        return f"pipeline:{self.model}@{self.revision or 'main'}-fov{self.fov_deg:g}"

    def __call__(self, image: np.ndarray, ref: str | None = None) -> np.ndarray:
        from PIL import Image

        if self._pipe is None:
            if self.pipeline_fn is None:
                from transformers import pipeline as build
            else:
                build = self.pipeline_fn
            self._pipe = build("depth-estimation", model=self.model, revision=self.revision, device=self.device)
        arr = np.asarray(image)
        out = self._pipe(Image.fromarray(arr))
        pred = out["predicted_depth"]
        pred = pred.detach().float().cpu().numpy() if hasattr(pred, "detach") else np.asarray(pred, np.float32)
        pred = np.squeeze(pred)
        h, w = arr.shape[:2]
        if pred.shape != (h, w):
            pred = np.asarray(Image.fromarray(pred.astype(np.float32), mode="F").resize((w, h), Image.BILINEAR))
        z = np.clip(pred.astype(np.float64), 0.0, None)
        return _check_out(planar_to_ray(z, focal_from_fov(w, self.fov_deg)), arr, self.name)


PROVIDERS = ("exact", "pipeline", "plane")


def make_provider(kind: str, *, model: str = "", fov_deg: float = DEFAULT_FOV_DEG, plane_m: float = 10.0,
                  device: str = "cpu") -> DepthProvider:
    """A provider by name: ``exact`` (synthetic), ``pipeline`` (``model`` a metric depth model) or ``plane``."""
    if kind == "exact":
        return ExactDepth()
    if kind == "plane":
        return ConstantPlaneDepth(float(plane_m), float(fov_deg))
    if kind == "pipeline":
        if not model:
            raise ValueError("the pipeline depth provider needs a metric depth model (hub id or folder)")
        return PipelineDepth(model, float(fov_deg), device)
    raise ValueError(f"depth provider must be one of {PROVIDERS}, got {kind!r}")


def attach_depth(scenes: pd.DataFrame, provider: DepthProvider | None = None, *, sky_cap_m: float = math.inf,
                 root: str | os.PathLike | None = None) -> pd.DataFrame:
    """Scenes whose ``depth_ref`` holds ``provider``'s depth (or their own, capped) in the asset store.

    ``provider`` sees each scene's box-free image (``clean_ref``, also passed as
    the reference); ``None`` keeps the scene's depth. :func:`cap_sky` then caps
    infinite depths at ``sky_cap_m``. With no provider and no cap the scenes are
    returned unchanged (no files written).
    """
    from . import assets, data

    if provider is None and math.isinf(sky_cap_m):
        return scenes.copy()
    out = scenes.copy()
    refs = []
    for s in scenes.itertuples(index=False):
        if provider is None:
            depth = data.load_depth(s.depth_ref)
            if depth is None:
                raise ValueError(f"scene {s.scene_id!r} has no depth to cap; give a depth provider")
        else:
            depth = provider(data.load_image(s.clean_ref), s.clean_ref)
        refs.append(assets.store_depth(cap_sky(depth, sky_cap_m), root))
    out["depth_ref"] = refs
    return out


# ----------------------------------------------------------------------------- real images


def _coco(annotations: str | os.PathLike) -> tuple[dict, dict, dict]:
    path = Path(annotations)
    if not path.is_file():
        raise FileNotFoundError(f"COCO annotation file not found: {path}")
    doc = json.loads(path.read_text())
    for key in ("images", "annotations", "categories"):
        if key not in doc:
            raise ValueError(f"{path.name}: a COCO instances file needs {key!r}; it has {sorted(doc)}")
    images = {int(im["id"]): im for im in doc["images"]}
    cats = {int(c["id"]): str(c["name"]) for c in doc["categories"]}
    by_image: dict[int, list[dict]] = {}
    for a in doc["annotations"]:
        by_image.setdefault(int(a["image_id"]), []).append(a)
    return images, cats, by_image


def real_scenes(annotations: str | os.PathLike, images_dir: str | os.PathLike, n_scenes: int, seed: int,
                provider: DepthProvider, *, min_area: float = 0.01, sky_cap_m: float = math.inf,
                root: str | os.PathLike | None = None, progress: bool | None = None) -> pd.DataFrame:
    """Scenes (:data:`vlmrobust.synth.visibility.SCENE_COLUMNS`) from COCO-style instance annotations.

    Choices (seed 003 states none of them): images are those with a non-crowd
    object covering at least ``min_area`` of the image, drawn without
    replacement from ``repro.rng("visibility-coco", seed)``; the boxed object is
    the image's largest such object; the box outline runs ``max(2, W // 32)``
    pixels outside its bounding box; the three distractors are categories absent
    from the image, drawn from the same generator; the object's distance is the
    median ray distance inside its bounding box. The provider sees the image
    without the box; pixels that already have the box colour are moved one grey
    level (255, 0, 0 -> 254, 0, 0) so that the box is the only such colour
    (:mod:`vlmrobust.corrupt.boxed`). Boxed and box-free images and the depth maps
    (with :func:`cap_sky` at ``sky_cap_m``) go to the asset store.
    """
    from . import assets, data, repro
    from .progress import bar
    from .synth.raster import BOX_RGB, draw_box

    images, cats, by_image = _coco(annotations)
    folder = Path(images_dir)

    def target(img_id: int):
        im = images[img_id]
        area = float(im["width"]) * float(im["height"])
        ok = [a for a in by_image.get(img_id, []) if not a.get("iscrowd", 0) and float(a["bbox"][2]) *
              float(a["bbox"][3]) >= min_area * area]
        return max(ok, key=lambda a: (float(a["bbox"][2]) * float(a["bbox"][3]), -int(a.get("id", 0)))) if ok \
            else None

    usable = sorted(i for i in images if target(i) is not None)
    if len(usable) < n_scenes:
        raise ValueError(f"{Path(annotations).name}: only {len(usable)} images have an object of at least "
                         f"{min_area:.0%} of the image; asked for {n_scenes}")
    rng = repro.rng("visibility-coco", int(seed))
    chosen = [usable[k] for k in sorted(rng.choice(len(usable), size=n_scenes, replace=False))]
    rows = []
    for img_id in bar(chosen, desc="real scenes", progress=progress):
        im, ann = images[img_id], target(img_id)
        ref = str(folder / im["file_name"])
        pixels = np.array(data.load_image(ref), dtype=np.uint8, copy=True)
        h, w = pixels.shape[:2]
        depth = np.asarray(provider(pixels, ref), dtype=np.float32)
        x, y, bw, bh = (float(v) for v in ann["bbox"])
        gap = max(2, w // 32)
        box = [max(int(x) - gap, 0), max(int(y) - gap, 0), min(int(math.ceil(x + bw)) - 1 + gap, w - 1),
               min(int(math.ceil(y + bh)) - 1 + gap, h - 1)]
        inside = depth[int(y):int(math.ceil(y + bh)), int(x):int(math.ceil(x + bw))]
        inside = inside[np.isfinite(inside)]
        present = {cats[int(a["category_id"])] for a in by_image.get(img_id, [])}
        pool = sorted(set(cats.values()) - present)
        if len(pool) < 3:
            raise ValueError(f"image {img_id}: fewer than three categories absent from it")
        distractors = [pool[k] for k in rng.choice(len(pool), size=3, replace=False)]
        pixels[np.all(pixels == np.asarray(BOX_RGB, np.uint8), axis=-1)] = (254, 0, 0)
        rows.append({
            "scene_id": f"coco-{img_id}", "source": "coco",
            "image_ref": assets.store_image(draw_box(pixels, box), root),
            "clean_ref": assets.store_image(pixels, root),
            "depth_ref": assets.store_depth(cap_sky(depth, sky_cap_m), root), "box": box,
            "object": cats[int(ann["category_id"])], "distractors": distractors,
            "target_distance_m": float(np.median(inside)) if inside.size else float("nan"),
            "meta": json.dumps({"image_id": img_id, "file_name": im["file_name"], "annotation_id": ann.get("id"),
                                "depth": provider.name, "sky_cap_m": sky_cap_m if math.isfinite(sky_cap_m) else None},
                               sort_keys=True),
        })
    from .synth.visibility import SCENE_COLUMNS

    return pd.DataFrame(rows, columns=list(SCENE_COLUMNS))
