"""The fast path's inputs: text built once per item set, pixels straight from the stored uint8 images.

* :class:`PixelTable` — the image processor's map from a uint8 value to a normalised float, per
  channel, read off the processor itself (an image holding every value once per channel), and
  checked bit for bit against the processor on a random image. Images of the processor's size go
  through the table (the processor's same-size resize is the identity); any other image, and every
  image when the check fails, goes through the processor;
* :class:`Batch` — one batch of rows ready for the lean forward (:mod:`vlmrobust.forward.lean`):
  the processor's own token ids (image tokens expanded, left padding), positions counted from each
  row's first real token, the image-feature index of every position, the attention mask and the
  answer positions to read;
* :func:`prompt_batches` — prompts alone (letters, options of one token): one answer position;
* :func:`packed_batches` — prompts with the continuations of all their options in the same row
  (option ``o``'s tokens but its last, after the prompt; each sees the prompt and its own earlier
  tokens only, at the positions a KV-cache continuation gives them).

Neither depends on the image, so a sweep builds them once per item set and reuses them for every
condition (:class:`vlmrobust.score.fast.FastScorer` keeps them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .passes import as_pil, batches, model_inputs

__all__ = ["Batch", "PixelTable", "prompt_batches", "packed_batches"]


def _field(size: Any, key: str) -> int:
    """``size[key]`` of an image processor's size (a dict or a ``SizeDict``), 0 when absent."""
    val = size.get(key) if isinstance(size, dict) else getattr(size, key, None)
    return int(val or 0)


class PixelTable:
    """uint8 images of the processor's size to ``pixel_values`` without the processor (module docstring)."""

    def __init__(self, lm: Any):
        self.lm = lm
        ip = lm.processor.image_processor
        size = getattr(ip, "size", None)
        self.shape = (int(_field(size, "height")), int(_field(size, "width")))
        if getattr(ip, "do_center_crop", False):
            self.shape = (0, 0)  # a crop after the resize: leave it all to the processor
        self.table: np.ndarray | None = None
        if min(self.shape) > 0:
            h, w = self.shape
            ramp = (np.arange(h * w) % 256).astype(np.uint8).reshape(h, w)
            if h * w >= 256:
                pv = self._processor([np.stack([ramp] * 3, -1)])[0]  # (3, h, w)
                flat = pv.reshape(3, -1)
                table = flat[:, :256].copy()
                if all(np.array_equal(flat[:, i::256], np.broadcast_to(table[:, i:i + 1], flat[:, i::256].shape))
                       for i in range(256)):
                    self.table = table
        if self.table is not None:
            probe = np.random.default_rng(0).integers(0, 256, (*self.shape, 3), dtype=np.uint8)
            if not np.array_equal(self._lookup(np.stack([probe])), self._processor([probe])):
                self.table = None  # not an elementwise map of the value: the processor does it all

    @property
    def exact(self) -> bool:
        """Whether images of the processor's size skip the processor (the table matched it bit for bit)."""
        return self.table is not None

    def _processor(self, images: Sequence[Any]) -> np.ndarray:
        out = self.lm.processor.image_processor([as_pil(im) for im in images], return_tensors="np")
        return np.asarray(out["pixel_values"], dtype=np.float32)

    def _lookup(self, stack: np.ndarray) -> np.ndarray:
        out = np.empty((stack.shape[0], 3, *stack.shape[1:3]), dtype=np.float32)
        for c in range(3):
            np.take(self.table[c], stack[..., c], out=out[:, c])
        return out

    def __call__(self, images: Sequence[Any]) -> np.ndarray:
        """``pixel_values`` ``(B, 3, H, W)`` float32 of a batch of uint8 ``HxWx3`` arrays (or PIL images)."""
        fits = [self.table is not None and isinstance(im, np.ndarray) and im.shape == (*self.shape, 3)
                and im.dtype == np.uint8 for im in images]
        if all(fits):
            return self._lookup(np.stack(images))
        out = [self._lookup(im[None])[0] if ok else self._processor([im])[0] for im, ok in zip(images, fits,
                                                                                               strict=True)]
        return np.stack(out)


@dataclass
class Batch:
    """One batch of rows for the lean forward: ``rows`` are the item indices, ``answers[j]`` the options'
    token lists of row ``j`` (packed batches) and ``feed`` the text inputs (``pixel_values`` added per run)."""

    rows: list[int]
    feed: dict[str, np.ndarray]
    answers: list[list[list[int]]] | None = None


def _prompt_part(lm: Any, prompts: Sequence[str], image_shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """The processor's token ids and mask for a batch of prompts (a blank image of the processor's size:
    the image-token expansion of the organisms does not depend on the image's content)."""
    from .layout import image_token_id

    blank = np.zeros((*image_shape, 3), dtype=np.uint8)
    enc = model_inputs(lm, list(prompts), [blank] * len(prompts))
    ids = enc["input_ids"].cpu().numpy().astype(np.int64)
    real = enc["attention_mask"].cpu().numpy().astype(bool)
    is_img = ids == image_token_id(lm)
    image_index = np.where(is_img, np.cumsum(is_img, 1) - 1, -1).astype(np.int64)
    pos = np.clip(np.cumsum(real, 1) - 1, 0, None).astype(np.int64)
    t = ids.shape[1]
    mask = np.tril(np.ones((t, t), dtype=bool))[None] & real[:, None, :]
    return {"input_ids": ids, "position_ids": pos, "image_index": image_index, "mask": mask, "real": real}


def _image_shape(lm: Any) -> tuple[int, int]:
    vc = lm.model.config.vision_config
    return int(vc.image_size), int(vc.image_size)


def prompt_batches(lm: Any, prompts: Sequence[str], batch_size: int) -> list[Batch]:
    """Length-sorted batches of prompts, each read at its last position (the answer position)."""
    out = []
    for idx in batches(lm, prompts, batch_size):
        part = _prompt_part(lm, [prompts[i] for i in idx], _image_shape(lm))
        part.pop("real")
        b, t = part["input_ids"].shape
        part["gather"] = np.full((b, 1), t - 1, dtype=np.int64)
        out.append(Batch(idx, part))
    return out


def packed_batches(lm: Any, prompts: Sequence[str], conts: Sequence[Sequence[Sequence[int]]],
                   batch_size: int) -> list[Batch]:
    """Length-sorted batches of prompts, each followed by its options' continuations (module docstring).

    The answer positions of a row are its last prompt position (the first token of every option), then
    option by option the positions of its tokens but the last (each predicts the next token).
    """
    pad = int(getattr(lm.tokenizer, "pad_token_id", None) or 0)
    out = []
    for idx in batches(lm, prompts, batch_size):
        part = _prompt_part(lm, [prompts[i] for i in idx], _image_shape(lm))
        real = part.pop("real")
        b, tp = part["input_ids"].shape
        width = max(sum(len(t) - 1 for t in conts[i]) for i in idx)
        t = tp + width
        ids = np.full((b, t), pad, dtype=np.int64)
        pos = np.zeros((b, t), dtype=np.int64)
        image_index = np.full((b, t), -1, dtype=np.int64)
        mask = np.zeros((b, t, t), dtype=bool)
        ids[:, :tp], pos[:, :tp], image_index[:, :tp] = part["input_ids"], part["position_ids"], part["image_index"]
        mask[:, :tp, :tp] = part["mask"]
        mask[:, tp:, :tp] = real[:, None, :]  # every continuation token (and padding) sees the whole prompt
        n_ans = [1 + sum(len(tk) - 1 for tk in conts[i]) for i in idx]
        gather = np.full((b, max(n_ans)), tp - 1, dtype=np.int64)
        for j, i in enumerate(idx):
            n_real, at = int(real[j].sum()), tp
            for tk in conts[i]:
                n = len(tk) - 1
                ids[j, at:at + n] = tk[:-1]
                pos[j, at:at + n] = n_real + np.arange(n)
                mask[j, at:at + n, at:at + n] = np.tril(np.ones((n, n), dtype=bool))
                at += n
            gather[j, 1:n_ans[j]] = np.arange(tp, at)
        feed = {"input_ids": ids, "position_ids": pos, "image_index": image_index, "mask": mask, "gather": gather}
        out.append(Batch(idx, feed, [[list(tk) for tk in conts[i]] for i in idx]))
    return out
