"""Content-addressed files for derived images and depth maps that items point to.

An item's ``image_ref`` or ``depth_ref`` can name a file (a PNG image, a ``.npy``
array of metres) instead of a ``synth://`` reference: the shuffled-image control
of seed 003 (another scene's pixels with this item's box), real images with the
red box drawn, depth maps from a depth model or with the sky capped. Files are
written once under :func:`vlmrobust.paths.assets_dir` with the SHA-256 of their
content in the name, so a reference identifies its content: the sweep's shard
keys (which hash the item table's references) change whenever the pixels or the
metres do. Writes are atomic (a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import hashlib
import io
import os
import uuid
from pathlib import Path

import numpy as np

from . import paths

__all__ = ["store_image", "store_depth"]


def _write_once(data: bytes, suffix: str, root: str | os.PathLike | None) -> str:
    base = Path(root) if root is not None else paths.assets_dir()
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{hashlib.sha256(data).hexdigest()[:32]}{suffix}"
    if not path.exists():
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
    return str(path)


def store_image(image: np.ndarray, root: str | os.PathLike | None = None) -> str:
    """Write a ``uint8`` ``H×W×3`` image as PNG (lossless) and return its path (named by content)."""
    from PIL import Image

    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError(f"image must be a uint8 HxWx3 array, got {arr.dtype} {arr.shape}")
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG", optimize=False)
    return _write_once(buf.getvalue(), ".png", root)


def store_depth(depth: np.ndarray, root: str | os.PathLike | None = None) -> str:
    """Write a float ``H×W`` ray-distance map (metres, ``inf`` = sky) as ``.npy`` float32; return its path."""
    arr = np.asarray(depth)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(f"depth must be a float HxW array of metres, got {arr.dtype} {arr.shape}")
    if np.isnan(arr).any() or (arr < 0).any():
        raise ValueError("depth must hold distances >= 0 metres or +inf (no NaN)")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
    return _write_once(buf.getvalue(), ".npy", root)
