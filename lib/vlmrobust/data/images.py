"""Image references: decoding with guards, rendered sources, depth maps, and the checks loaders run at read time.

:func:`load_image` turns any ``image_ref`` into a uint8 ``H×W×3`` array; a
corrupt or unreadable image raises :class:`ImageError` naming the reference. A
reference is a file path, ``b64:<base64>``, or ``<scheme>://...`` for a
*rendered source*: a package that draws images (and their exact depth) from the
reference itself. Rendered sources register under the entry-point group
:data:`SOURCE_GROUP` (the synthetic world, :mod:`vlmrobust.synth`, registers
``synth``), so this module names none of them.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import re
import warnings
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

__all__ = ["ImageError", "MAX_PIXELS", "MAX_IMAGE_BYTES", "SOURCE_GROUP", "load_image", "load_depth", "decode_image",
           "check_image_bytes", "b64_image"]

MAX_PIXELS = 50_000_000  # refuse decompression bombs before decoding
MAX_IMAGE_BYTES = 32 * 2**20  # refuse encoded images larger than this when a table is read
#: Entry-point group of the rendered image sources: ``name = "module:render"``, ``render(ref) -> (image, depth)``.
SOURCE_GROUP = "vlmrobust.image_sources"
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://")


class ImageError(ValueError):
    """An image could not be read or decoded."""


def _scheme(ref: str) -> str | None:
    m = _SCHEME.match(ref)
    return m.group(1) if m else None


@cache
def _source(scheme: str) -> Callable:
    """The ``render`` function registered for ``scheme://`` references (entry-point group :data:`SOURCE_GROUP`)."""
    from importlib.metadata import entry_points

    found = list(entry_points(group=SOURCE_GROUP, name=scheme))
    if not found:
        known = sorted(ep.name for ep in entry_points(group=SOURCE_GROUP))
        raise ImageError(f"no rendered image source is registered for {scheme}:// references (registered: "
                         f"{known or 'none'}; reinstall the package with `make install` if 'synth' is missing)")
    return found[0].load()


def decode_image(data: bytes, ref: str = "<bytes>") -> np.ndarray:
    """Decode encoded image bytes into a uint8 RGB array, with guards.

    Truncated files, non-images and images over :data:`MAX_PIXELS` raise
    :class:`ImageError` naming ``ref``. Greyscale, palette and alpha images are
    converted to RGB (alpha composited on white).
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                if im.width * im.height > MAX_PIXELS:
                    raise ImageError(f"image {ref!r} has {im.width}x{im.height} pixels (limit {MAX_PIXELS})")
                im.load()
                if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
                    rgba = im.convert("RGBA")
                    bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                    im = Image.alpha_composite(bg, rgba)
                arr = np.asarray(im.convert("RGB"), dtype=np.uint8)
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"cannot decode image {ref!r}: {exc}") from exc
    if arr.ndim != 3 or arr.shape[2] != 3 or min(arr.shape[:2]) < 1:
        raise ImageError(f"image {ref!r} decoded to shape {arr.shape}, expected H×W×3")
    return arr


@lru_cache(maxsize=4096)
def _load_cached(ref: str) -> tuple[np.ndarray, np.ndarray | None]:
    scheme = _scheme(ref)
    if scheme is not None:
        image, depth = _source(scheme)(ref)
    elif ref.startswith("b64:"):
        try:
            raw = base64.b64decode(ref[4:], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ImageError(f"image reference is not valid base64: {ref[:40]!r}...") from exc
        image, depth = decode_image(raw, ref[:40] + "..."), None
    else:
        path = Path(os.path.expanduser(ref))
        if not path.is_file():
            raise ImageError(f"image file not found: {ref!r}")
        image, depth = decode_image(path.read_bytes(), ref), None
    image = np.ascontiguousarray(image, dtype=np.uint8)
    image.flags.writeable = False
    if depth is not None:
        depth = np.ascontiguousarray(depth, dtype=np.float32)
        depth.flags.writeable = False
    return image, depth


def load_image(ref: str) -> np.ndarray:
    """The uint8 ``H×W×3`` image behind ``ref`` (read-only; cached per process)."""
    if not isinstance(ref, str) or not ref:
        raise ImageError(f"image_ref must be a non-empty string, got {ref!r}")
    return _load_cached(ref)[0]


def load_depth(ref: str | None) -> np.ndarray | None:
    """Metric ray distance (float32 ``H×W``, metres, ``inf`` for sky) behind ``ref``.

    ``ref`` is a ``synth://`` reference (exact depth of a synthetic scene) or the
    path of a ``.npy`` file holding the float array (e.g. written by
    :func:`vlmrobust.assets.store_depth`). Returns ``None`` when ``ref`` is ``None``
    (the item has no depth).
    """
    if ref is None or (isinstance(ref, float) and np.isnan(ref)):
        return None
    if isinstance(ref, str) and ref.endswith(".npy") and _scheme(ref) is None:
        return _load_depth_file(ref)
    if not isinstance(ref, str) or _scheme(ref) is None:
        raise ImageError(f"depth_ref must be a rendered-source reference (synth://...), a .npy file of metres or "
                         f"None, got {ref!r}")
    return _load_cached(ref)[1]


@lru_cache(maxsize=1024)
def _load_depth_file(ref: str) -> np.ndarray:
    path = Path(os.path.expanduser(ref))
    if not path.is_file():
        raise ImageError(f"depth file not found: {ref!r}")
    try:
        depth = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ImageError(f"cannot read depth file {ref!r}: {exc}") from exc
    if depth.ndim != 2 or not np.issubdtype(depth.dtype, np.floating):
        raise ImageError(f"depth file {ref!r} must hold a float H×W array of metres, got {depth.dtype} {depth.shape}")
    depth = np.ascontiguousarray(depth, dtype=np.float32)
    depth.flags.writeable = False
    return depth


def check_image_bytes(raw: bytes, where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> None:
    """Refuse image bytes that are too large, not an image, or over :data:`MAX_PIXELS` (header only).

    Raises :class:`ImageError` naming ``where`` (the row); nothing is decoded beyond the header.
    """
    from PIL import Image, UnidentifiedImageError

    if len(raw) > max_bytes:
        raise ImageError(f"{where}: image is {len(raw):,} bytes (limit {max_bytes:,})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as im:
                w, h = im.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"{where}: not a readable image ({exc})") from exc
    if w * h > MAX_PIXELS:
        raise ImageError(f"{where}: image has {w}x{h} pixels (limit {MAX_PIXELS:,})")


def b64_image(text: str, where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """Check a base64 image (strict alphabet, decoded-size guard, image header) and return its ``b64:`` reference."""
    text = text[4:] if text.startswith("b64:") else text
    if len(text) * 3 // 4 > max_bytes + 3:  # refuse before decoding
        raise ImageError(f"{where}: base64 image decodes to about {len(text) * 3 // 4:,} bytes (limit {max_bytes:,})")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"{where}: image is not valid base64 ({exc})") from exc
    check_image_bytes(raw, where, max_bytes=max_bytes)
    return "b64:" + text
