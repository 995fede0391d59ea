"""Corrupted images computed once per (perturbation, level) and shared by every model of a sweep.

A sweep of M models corrupts each image M times unless the images are kept: the
shard ``(model, perturbation)`` of each model needs the same corrupted images at
each level. The first shard that needs a level corrupts every item at it and
writes them to ``<shards>/images/``; every later shard of that level (another
model, a resumed run, another notebook with the same items) reads them.

A level's **image key** hashes everything that determines its pixels: the items
(:func:`vlmrobust.data.items.items_digest`, which covers ``image_ref`` and
``depth_ref``), the perturbation, the level, the seed, the corruption backend,
the corruption function's identity (``SweepSpec.corrupt_id``) and the
perturbation's implementation version; nothing about the model enters it. Each
level is one ``.npz`` file: the images stacked (``stack``, when they share shape
and dtype) or one array per item (``i0``, ``i1``, ...). Files are written to a
temporary name and renamed, so an interrupted run leaves a whole file or none;
two workers writing the same level write the same bytes.

Only the shards that score every item at a level use the store: an overlay
shard under ``overlay_rule="not_base"`` shows each item other letters (a subset
per model) and corrupts its own. Sharing is on by default
(``SweepSpec.share_images``) for the default image, depth and corruption
functions and for a named corruption function; a sweep with injected loaders
and no name corrupts in each shard.

Memory: a shard holds its clean images and one level at a time (846 items of
64 x 64 x 3 bytes are 10 MB a level); the store lives on disk (Bench-C at 846
items: 95 levels, about 1 GB), and ``make clean`` or deleting the folder frees it.
"""

from __future__ import annotations

import os
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..repro import stable_hash

__all__ = ["IMAGES_VERSION", "image_key", "image_path", "image_store", "level_images", "level_key", "load_level",
           "save_level"]

#: Bumped when the stored layout changes meaning.
IMAGES_VERSION = 1


def image_key(*, items_digest: str, perturbation: str, level: int, seed: int, backend: str,
              corrupt_id: str | None = None, version: Any = None) -> str:
    """The key of one level's corrupted images (the fields in the module docstring)."""
    return stable_hash({"images": IMAGES_VERSION, "items": items_digest, "perturbation": perturbation,
                        "level": int(level), "seed": int(seed), "backend": backend, "corrupt": corrupt_id,
                        "version": version}, 20)


def image_path(root: str | os.PathLike, perturbation: str, level: int, key: str) -> Path:
    from .spec import _slug

    return Path(root) / f"{_slug(perturbation)}__{int(level)}__{key}.npz"


def save_level(path: Path, images: list[np.ndarray]) -> None:
    """Write one level's images atomically (a temporary file beside ``path``, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = [np.asarray(im) for im in images]
    same = len({(a.shape, a.dtype.str) for a in arrays}) == 1
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "wb") as fh:
            if same:
                np.savez(fh, stack=np.stack(arrays), n=np.int64(len(arrays)))
            else:
                np.savez(fh, n=np.int64(len(arrays)), **{f"i{i}": a for i, a in enumerate(arrays)})
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def load_level(path: Path, n: int) -> list[np.ndarray] | None:
    """One level's images, or ``None`` when the file is absent, unreadable or holds another number of items."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if int(z["n"]) != n:
                return None
            if "stack" in z.files:
                return list(z["stack"])
            return [z[f"i{i}"] for i in range(n)]
    except (FileNotFoundError, OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
        return None


def level_images(root: Path | None, key: str | None, perturbation: str, level: int, n: int,
                 make: Callable[[], list[np.ndarray]]) -> tuple[list[np.ndarray], bool]:
    """``(images, read)``: the stored images of a level, else ``make()`` (stored when ``root`` is set).

    ``read`` says whether they came from the store. A damaged file is replaced.
    """
    if root is None or key is None:
        return make(), False
    path = image_path(root, perturbation, level, key)
    got = load_level(path, n) if path.exists() else None
    if got is not None:
        return got, True
    images = make()
    save_level(path, images)
    return images, False


def image_store(spec: Any, out_dir: Path, corrupt_fn, image_fn, depth_fn) -> Path | None:
    """The shared image store of this sweep (``<out_dir>/images``), or ``None`` when images are not shared."""
    if not spec.share_images or image_fn is not None or depth_fn is not None:
        return None
    if corrupt_fn is not None and spec.corrupt_id is None:
        return None  # an unnamed corruption function: its images cannot be keyed
    return out_dir / "images"


def level_key(spec: Any, digest: str, name: str, level: int) -> str:
    from .spec import _impl_version

    return image_key(items_digest=digest, perturbation=name, level=level, seed=spec.seed, backend=spec.backend,
                     corrupt_id=spec.corrupt_id, version=_impl_version(name))
