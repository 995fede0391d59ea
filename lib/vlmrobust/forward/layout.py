"""Where the vision tokens sit in a prompt, how they form a grid, and where the decoder's layers are.

The positions come from the processor's own image-token expansion: every
position whose input id is the model's image token (``config.image_token_id``)
holds a vision token. The **grid** is one view of the image laid out row-major
as ``rows x cols`` tokens, read from the processor's outputs:

===================  =============================================================================
architecture         grid (``block``)
===================  =============================================================================
LLaVA (organisms)    the single view: ``(H / patch, W / patch)`` of ``pixel_values``; with the
                     ``full`` feature strategy the leading CLS token is not part of the grid
Qwen2-VL / 2.5 / 3   the merged patch grid: ``image_grid_thw = (t, h, w)`` gives
                     ``(h / merge, w / merge)`` (``merge = spatial_merge_size``), one frame
Idefics3 / SmolVLM   the global image: the last ``image_seq_len`` image tokens, a square of side
                     ``sqrt(image_seq_len)`` (the tiles before it are left out of the grid)
LLaVA-OneVision /    the base image: the first ``(image_size / patch)^2`` image tokens (the AnyRes
LLaVA-NeXT           tiles and their row-newline tokens that follow are left out of the grid)
Gemma 3              the pooled image: ``mm_tokens_per_image`` tokens, a square
===================  =============================================================================

Any other architecture whose image-token count is a perfect square is read as a
single square view; otherwise :class:`ProbeError` names it. The vision-token
**mean** is over every image token of the prompt (tiles and newlines included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ProbeError", "VisionLayout", "image_token_id", "vision_layout", "decoder", "decoder_parts"]


class ProbeError(ValueError):
    """A probe cannot be read for this model or input (the message names the architecture and why)."""


@dataclass(frozen=True)
class VisionLayout:
    """Per batch row: the image-token positions, the grid's positions (row-major) and its ``(rows, cols)``."""

    positions: tuple[np.ndarray, ...]
    grid: tuple[np.ndarray, ...]
    shape: tuple[tuple[int, int], ...]
    block: str


def _cfg(lm: Any) -> Any:
    return lm.model.config


def image_token_id(lm: Any) -> int:
    """The id of the image placeholder token (model config first, then the processor)."""
    cfg = _cfg(lm)
    for key in ("image_token_id", "image_token_index"):
        val = getattr(cfg, key, None)
        if isinstance(val, int):
            return val
    val = getattr(lm.processor, "image_token_id", None)
    if isinstance(val, int):
        return val
    raise ProbeError(f"{type(lm.model).__name__}: no image token id in the config or the processor")


def _square(n: int, what: str) -> int:
    side = math.isqrt(n)
    if side * side != n:
        raise ProbeError(f"{what}: {n} grid tokens do not form a square")
    return side


def _row_grid(kind: str, lm: Any, batch: Any, j: int, pos: np.ndarray, img_index: int) -> tuple[np.ndarray, tuple]:
    cfg = _cfg(lm)
    n = len(pos)
    if kind in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"):
        t, h, w = (int(v) for v in batch["image_grid_thw"][img_index])
        merge = int(getattr(cfg.vision_config, "spatial_merge_size", 2))
        rows, cols = h // merge, w // merge
        return pos[: rows * cols], (rows, cols)
    if kind in ("idefics3", "smolvlm"):
        seq = int(getattr(lm.processor, "image_seq_len", 0) or 0)
        side = _square(seq, kind)
        if n % seq:
            raise ProbeError(f"{kind}: {n} image tokens are not a whole number of {seq}-token blocks")
        return pos[n - seq:], (side, side)
    if kind in ("llava_onevision", "llava_next"):
        vc = cfg.vision_config
        side = int(vc.image_size) // int(vc.patch_size)
        return pos[: side * side], (side, side)
    if kind == "gemma3":
        seq = int(getattr(cfg, "mm_tokens_per_image", n))
        side = _square(seq, kind)
        return pos[:seq], (side, side)
    if kind == "llava":
        pv = batch["pixel_values"]
        patch = int(cfg.vision_config.patch_size)
        rows, cols = int(pv.shape[-2]) // patch, int(pv.shape[-1]) // patch
        if n < rows * cols:
            raise ProbeError(f"llava: {n} image tokens for a {rows}x{cols} patch grid")
        return pos[n - rows * cols:], (rows, cols)  # a leading CLS token ('full' strategy) is not in the grid
    side = _square(n, f"{kind} (unknown architecture, read as one square view)")
    return pos, (side, side)


def vision_layout(lm: Any, batch: Any) -> VisionLayout:
    """The vision-token layout of each row of a processor batch (one image per row; see the module docstring)."""
    ids = batch["input_ids"]
    ids = ids.cpu().numpy() if hasattr(ids, "cpu") else np.asarray(ids)
    tok = image_token_id(lm)
    kind = str(getattr(_cfg(lm), "model_type", ""))
    positions, grids, shapes = [], [], []
    for j in range(ids.shape[0]):
        pos = np.flatnonzero(ids[j] == tok)
        if pos.size == 0:
            raise ProbeError(f"{kind}: batch row {j} holds no image token (id {tok})")
        grid, shape = _row_grid(kind, lm, batch, j, pos, j)
        if grid.size != shape[0] * shape[1]:
            raise ProbeError(f"{kind}: grid of {shape} but {grid.size} tokens in row {j}")
        positions.append(pos)
        grids.append(grid)
        shapes.append(shape)
    block = {"llava": "single view", "qwen2_vl": "merged patch grid", "qwen2_5_vl": "merged patch grid",
             "qwen3_vl": "merged patch grid", "idefics3": "global image", "smolvlm": "global image",
             "llava_onevision": "base image", "llava_next": "base image", "gemma3": "pooled image"}.get(kind,
                                                                                                   "square view")
    return VisionLayout(tuple(positions), tuple(grids), tuple(shapes), block)


def decoder(model: Any) -> Any:
    """The language decoder of an image-text model: the module holding its ``.layers`` and final ``.norm``."""
    candidates = []
    if hasattr(model, "get_decoder"):
        try:
            candidates.append(model.get_decoder())
        except (AttributeError, NotImplementedError):
            pass
    inner = getattr(model, "model", None)
    for name in ("language_model", "text_model"):
        candidates += [getattr(inner, name, None), getattr(model, name, None)]
    for dec in candidates:
        if dec is not None and hasattr(dec, "layers") and hasattr(dec, "norm"):
            return dec
    raise ProbeError(f"{type(model).__name__}: no language decoder with .layers and .norm found")


def decoder_parts(model: Any) -> tuple[Any, Any]:
    """``(layers, final_norm)`` of the language decoder of an image-text model."""
    dec = decoder(model)
    return dec.layers, dec.norm
