"""Shared machinery of the scoring methods: option scores, validation, soft-max and margins.

The forward pass itself (model inputs, batches, the call with a KV cache) is :mod:`vlmrobust.forward`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..forward import ScoringError

__all__ = ["OptionScores", "check_item", "next_token_logprobs", "softmax", "margin_of", "argmax_low"]


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


def next_token_logprobs(logits_row: np.ndarray) -> np.ndarray:
    x = logits_row - logits_row.max()
    return x - np.log(np.exp(x).sum())
