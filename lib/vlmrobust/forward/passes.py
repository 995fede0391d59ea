"""The forward pass that scoring and probes share: processor inputs, length-sorted batches, one call.

* :func:`model_inputs` — a batch through the model's own processor (left padding, one image per prompt);
* :func:`batches` — item indices grouped by prompt length (stable), for little padding;
* :func:`forward` — one pass without gradients, with or without a KV cache, returning ``(logits, cache)``;
* :func:`last_logits` — the answer position's logits, refusing NaN/inf with a :class:`ScoringError`
  that names the item;
* :func:`stop_ids` — the token ids that end a generated answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ScoringError", "as_pil", "model_inputs", "forward", "last_logits", "token_lengths", "batches",
           "stop_ids"]


class ScoringError(ValueError):
    """Scoring failed for a named item (bad options, corrupt image, NaN logits, ...)."""

    def __init__(self, item_id: str, message: str):
        super().__init__(f"item {item_id!r}: {message}")
        self.item_id = item_id


def as_pil(image: Any) -> Any:
    from PIL import Image

    if isinstance(image, np.ndarray):
        return Image.fromarray(image)
    return image


def model_inputs(lm: Any, prompts: list[str], images: list[Any]) -> Any:
    """Processor inputs for a batch (left padding, no extra special tokens: the chat template has them)."""
    proc = lm.processor
    # One list of images per prompt: the form every image-text processor accepts.
    batch = proc(images=[[as_pil(im)] for im in images], text=list(prompts), padding=True, padding_side="left",
                 add_special_tokens=False, return_tensors="pt")
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


def token_lengths(lm: Any, prompts: Sequence[str]) -> list[int]:
    """Text-token length of each prompt (before image-token expansion), for length-sorted batches."""
    enc = lm.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    return [len(e) for e in enc]


def batches(lm: Any, prompts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (sorted by token length, stable)."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    order = np.argsort(np.asarray(token_lengths(lm, prompts)), kind="stable")
    return [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]


_END_OF_TURN = ("<|end|>", "<|im_end|>", "<end_of_turn>", "<end_of_utterance>", "<|eot_id|>", "<|endoftext|>")


def stop_ids(lm: Any) -> set[int]:
    """End-of-sequence ids of the tokenizer and generation config, and the usual end-of-turn tokens."""
    ids = set()
    vocab = lm.tokenizer.get_vocab()
    ids.update(vocab[t] for t in _END_OF_TURN if t in vocab)
    for src in (getattr(lm.tokenizer, "eos_token_id", None),
                getattr(getattr(lm.model, "generation_config", None), "eos_token_id", None)):
        if isinstance(src, int):
            ids.add(src)
        elif isinstance(src, (list, tuple)):
            ids.update(int(s) for s in src)
    return ids
