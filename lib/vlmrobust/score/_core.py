"""Shared machinery of the scoring methods: validation, model inputs, forwards with a KV cache."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ScoringError", "OptionScores", "check_item", "as_pil", "model_inputs", "forward",
           "last_logits", "next_token_logprobs", "softmax", "margin_of", "argmax_low"]


class ScoringError(ValueError):
    """Scoring failed for a named item (bad options, corrupt image, NaN logits, ...)."""

    def __init__(self, item_id: str, message: str):
        super().__init__(f"item {item_id!r}: {message}")
        self.item_id = item_id


@dataclass
class OptionScores:
    """One item's result under one scoring method.

    ``scores`` are in the method's units (letter logits, summed or length-normalised
    log-likelihoods, sample counts), ``probs`` the option distribution (sums to 1).
    """

    probs: np.ndarray
    scores: np.ndarray | None
    margin: float
    verbal_conf: float = float("nan")
    unparsed_rate: float = float("nan")
    extra: dict = field(default_factory=dict)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax in float64 (seed 000 §V-A: logits restricted to the K options, then softmax)."""
    x = np.asarray(x, dtype=np.float64)
    z = np.exp(x - x.max())
    return z / z.sum()


def argmax_low(x: np.ndarray) -> int:
    """Argmax with ties broken towards the lowest option index (DESIGN.md)."""
    x = np.asarray(x)
    return int(np.flatnonzero(x == x.max())[0])


def margin_of(scores: np.ndarray) -> float:
    """Top score minus runner-up (seed 002 §3.1, Eq. 2), in the scores' own units; NaN when K < 2."""
    s = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    return float(s[0] - s[1]) if s.size >= 2 else float("nan")


def check_item(item_id: str, options: Sequence[str], image: Any) -> None:
    """Raise :class:`ScoringError` naming the item for an empty option list or an unusable image."""
    if options is None or len(options) == 0:
        raise ScoringError(item_id, "empty option list (need at least 2 options)")
    if len(options) < 2:
        raise ScoringError(item_id, f"needs at least 2 options, got {len(options)}")
    for i, opt in enumerate(options):
        if not isinstance(opt, str) or not opt.strip():
            raise ScoringError(item_id, f"option {i} is empty or not a string: {opt!r}")
    if hasattr(image, "mode") and hasattr(image, "size"):  # PIL image
        return
    if not isinstance(image, np.ndarray):
        raise ScoringError(item_id, f"corrupt image: expected a uint8 HxWx3 array, got {type(image).__name__}")
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 1:
        raise ScoringError(item_id, f"corrupt image: expected a uint8 HxWx3 array, got {image.dtype} "
                                    f"array of shape {image.shape}")


def as_pil(image: Any) -> Any:
    from PIL import Image

    if isinstance(image, np.ndarray):
        return Image.fromarray(image)
    return image


def model_inputs(lm: Any, prompts: list[str], images: list[Any]) -> Any:
    """Processor inputs for a batch (left padding, no extra special tokens: the chat template has them)."""
    proc = lm.processor
    # One list of images per prompt: the form every image-text processor accepts.
    batch = proc(images=[[as_pil(im)] for im in images], text=list(prompts), padding=True, padding_side="left", add_special_tokens=False,
                 return_tensors="pt")
    return batch.to(lm.device)


_CACHE_KW: dict[type, str] = {}


def _cache_kw(model: Any) -> str:
    cls = type(model)
    if cls not in _CACHE_KW:
        params = inspect.signature(model.forward).parameters
        _CACHE_KW[cls] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KW[cls]


def forward(lm: Any, inputs: dict, *, cache: Any = None, use_cache: bool = False, logits_to_keep: int = 0) -> Any:
    """One forward pass without gradients; returns ``(logits, cache)``.

    ``logits_to_keep=1`` computes the LM head for the last position only.
    """
    import torch

    kw = dict(inputs)
    if cache is not None:
        kw[_cache_kw(lm.model)] = cache
    with torch.inference_mode():
        out = lm.model(**kw, use_cache=use_cache or cache is not None, logits_to_keep=logits_to_keep)
    if "cache" in out or hasattr(type(out), "cache"):
        new_cache = out.get("cache") if hasattr(out, "get") else out.cache
    else:  # transformers < 5.24 names it past_key_values
        new_cache = getattr(out, "past_key_values", None)
    return out.logits, new_cache


def last_logits(logits: Any, item_ids: Sequence[str]) -> np.ndarray:
    """Float64 logits of the last position per row; NaN/inf raise :class:`ScoringError` naming the item."""
    arr = logits[:, -1, :].float().cpu().numpy().astype(np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ScoringError(item_ids[i], "non-finite (NaN or inf) logits at the answer position")
    return arr


def next_token_logprobs(logits_row: np.ndarray) -> np.ndarray:
    x = logits_row - logits_row.max()
    return x - np.log(np.exp(x).sum())
