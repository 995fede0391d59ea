"""Hidden states read off the forwards that scoring and decoding already run (forward hooks, no extra pass).

A :class:`Recorder` hooks the language decoder of a loaded model: the input of
its first layer (**layer 0**: token embeddings with the projected vision tokens
merged in), the output of every decoder layer ``l = 1..L`` (the **pre-norm
residual stream**) and the output of the final norm (**final**, the post-norm
state that ``transformers`` returns as ``hidden_states[-1]`` and that the LM head
reads: seed 002 reads its probes there, "before the output projection", §3.3).
Every state array in this package therefore has ``L + 2`` rows: ``0..L``
pre-norm, then the final post-norm row (index ``-1``). Qwen3-VL adds deepstack
features to the image positions after layers ``1..k`` return, where no layer hook
sees it; the recorder wraps that step, so rows ``1..k`` hold what the next layer reads.

Each hook reduces the layer's ``(B, T, H)`` tensor at once to what the probes
keep, so nothing of size ``T x H`` outlives the forward:

* prompt forwards: the last prompt token (the context probes), the mean over
  the image tokens, and the Dirichlet energy of the vision-token grid
  (:func:`vlmrobust.analysis.drift.dirichlet.dirichlet_energy`, seed 002 §3.3);
* answer forwards (teacher-forced options, decoded tokens): the fed positions.

:func:`probed_prompt` is the scoring forward with probes: the prompt forward
(with a KV cache) gives the scores, the caller picks each row's answer tokens
from them, and one cached continuation feeds those tokens to read their states.
:func:`feed` is that continuation for any architecture: it uses the model's own
``prepare_inputs_for_generation`` (attention mask over left padding, token
types), plus the 3-D M-RoPE positions of Qwen-VL models.

**Handing on the cache.** Inside :func:`handing_on`, each probed scoring
forward (:func:`probed_prompt`, and the per-item log-likelihood forward of
:mod:`vlmrobust.score.methods`) hands its KV cache on once its own answer
states are read (:func:`hand_on`), so that a later prompt sharing a prefix with
the scoring prompt can continue from it instead of a new prefill
(:mod:`vlmrobust.probes.regimes`). :func:`crop_rows` and :func:`merge_cached`
cut such a cache to a prefix, pick or repeat its rows, and join several; the
continued rows get explicit positions (:class:`Growing` ``pos0`` / ``deltas``),
so padding in the middle of a row is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from .layout import VisionLayout, decoder, vision_layout
from .passes import forward, last_logits

__all__ = ["Recorder", "Growing", "feed", "probed_prompt", "prompt_states", "prompt_summary", "answer_states",
           "grid_energy_torch", "last_states", "handing_on", "hand_on", "can_continue", "crop_rows", "merge_cached",
           "rope_deltas"]

_TYPE_KEYS = ("token_type_ids", "mm_token_type_ids")


class Recorder:
    """Forward hooks on a model's language decoder (see the module docstring); use as a context manager."""

    def __init__(self, lm: Any):
        self._decoder = decoder(lm.model)
        self.layers, self.norm = self._decoder.layers, self._decoder.norm
        self.n_layers = len(self.layers)
        self._fn: Callable | None = None
        self._out: list | None = None
        self._handles, self._last = [], 0

    def __enter__(self) -> Recorder:
        self._handles = [self.layers[0].register_forward_pre_hook(self._pre, with_kwargs=True)]
        for i, layer in enumerate(self.layers):
            self._handles.append(layer.register_forward_hook(partial(self._post, i + 1)))
        self._handles.append(self.norm.register_forward_hook(partial(self._post, self.n_layers + 1)))
        if hasattr(type(self._decoder), "_deepstack_process"):
            self._decoder._deepstack_process = self._deepstack
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        self._decoder.__dict__.pop("_deepstack_process", None)

    def _deepstack(self, *args, **kwargs):  # Qwen3-VL's addition, recorded as the output of the layer just run
        self._store(self._last, out := type(self._decoder)._deepstack_process(self._decoder, *args, **kwargs))
        return out

    def _pre(self, module, args, kwargs):
        hs = args[0] if args else kwargs["hidden_states"]
        self._store(0, hs)

    def _post(self, idx, module, args, out):
        self._last = idx
        self._store(idx, out[0] if isinstance(out, tuple) else out)

    def _store(self, idx: int, hs: Any) -> None:
        if self._fn is not None:
            self._out[idx] = self._fn(hs.detach(), idx)

    def run(self, reduce: Callable, thunk: Callable) -> tuple[Any, list]:
        """Run ``thunk()`` with every hooked state reduced by ``reduce``; return its result and the ``L + 2``
        reductions."""
        if not self._handles:
            raise RuntimeError("Recorder.run needs the recorder entered (use it as a context manager)")
        self._fn, self._out = reduce, [None] * (self.n_layers + 2)
        try:
            res = thunk()
        finally:
            out, self._fn, self._out = self._out, None, None
        if any(o is None for o in out):
            missing = [i for i, o in enumerate(out) if o is None]
            raise RuntimeError(f"decoder states {missing} were not produced by the forward")
        return res, out


def grid_energy_torch(grid: Any) -> Any:
    """Dirichlet energy of a ``(rows, cols, H)`` torch grid, each 4-neighbour edge once (float64)."""
    g = grid.double()
    return ((g[1:] - g[:-1]) ** 2).sum() + ((g[:, 1:] - g[:, :-1]) ** 2).sum()


def _prompt_reducer(layout: VisionLayout, keep_grid: int | None, n_states: int) -> Callable:
    import torch

    idx = [torch.as_tensor(p, dtype=torch.long) for p in layout.positions]
    grid_idx = [torch.as_tensor(g, dtype=torch.long) for g in layout.grid]
    def reduce(hs, layer):
        h = hs.float()
        vis = torch.stack([h[j, idx[j].to(h.device)].mean(0) for j in range(h.shape[0])])
        energy, grids = [], []
        for j, (r, c) in enumerate(layout.shape):
            g = h[j, grid_idx[j].to(h.device)].reshape(r, c, -1)
            energy.append(float(grid_energy_torch(g)))
            if keep_grid is not None and layer == keep_grid % n_states:
                grids.append(g.cpu().numpy().astype(np.float32))
        return {"last": h[:, -1].cpu().numpy(), "vision_mean": vis.cpu().numpy(),
                "energy": np.asarray(energy), "grid": grids, "shape": layout.shape}

    return reduce


def _answer_reducer(hs, layer):
    return hs.float().cpu().numpy()


def last_states(hs, layer):
    """Reducer keeping the last fed position only, ``(B, H)``."""
    return hs[:, -1].float().cpu().numpy()


@dataclass
class Growing:
    """A batch extended token by token after a cached prompt forward: ids, mask, other processor inputs.

    ``pos0`` (``(B,)``, optional): the position of each row's first attended
    token; with it :func:`feed` passes positions counted over attended tokens
    only (``pos0 + cumsum(mask) - 1``), so masked slots inside a row take no
    position. ``deltas`` (``(B, 1)``, optional): the row's M-RoPE deltas (Qwen-VL),
    used instead of the ones the model stored at its last prompt forward.
    """

    ids: Any
    mask: Any
    extra: dict = field(default_factory=dict)
    pos0: Any = None
    deltas: Any = None

    @classmethod
    def of(cls, inputs: Any) -> Growing:
        return cls(inputs["input_ids"], inputs["attention_mask"],
                   {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")})


def feed(lm: Any, seq: Growing, cache: Any, new_ids: Any, *, logits_to_keep: int = 0,
         new_mask: Any = None) -> tuple[Any, Any, Growing]:
    """Feed ``new_ids`` ``(B, n)`` after ``seq`` whose KV cache is ``cache``; return ``(logits, cache, extended seq)``.

    Positions and masks come from the model's ``prepare_inputs_for_generation``
    (so left padding stays masked); Qwen-VL models get their 3-D M-RoPE positions
    from the ``rope_deltas`` their prompt forward stored (or ``seq.deltas``).
    ``new_mask`` (``(B, n)``, default all ones) masks padding slots among the
    new tokens; ``seq.pos0`` gives positions over attended tokens only (see :class:`Growing`).
    """
    import torch

    n = new_ids.shape[1]
    ids = torch.cat([seq.ids, new_ids.to(seq.ids.device)], dim=1)
    add = (torch.ones((seq.mask.shape[0], n), dtype=seq.mask.dtype, device=seq.mask.device) if new_mask is None
           else new_mask.to(device=seq.mask.device, dtype=seq.mask.dtype))
    mask = torch.cat([seq.mask, add], 1)
    extra = dict(seq.extra)
    for key in _TYPE_KEYS:
        if key in extra:
            v = extra[key]
            extra[key] = torch.cat([v, torch.zeros((v.shape[0], n), dtype=v.dtype, device=v.device)], dim=1)
    kw = lm.model.prepare_inputs_for_generation(ids, next_sequence_length=n, cache=cache, attention_mask=mask,
                                                use_cache=True, is_first_iteration=False, **extra)
    kw = {k: v for k, v in kw.items() if v is not None}
    deltas = seq.deltas if seq.deltas is not None else rope_deltas(lm)
    if deltas is not None:
        pos = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)[:, -n:]
        kw["position_ids"] = pos[None].expand(3, -1, -1) + deltas.to(pos.device)
    elif seq.pos0 is not None:
        pos = (mask.long().cumsum(-1) - 1).clamp(min=0)[:, -n:]
        kw["position_ids"] = pos + seq.pos0.to(pos.device)[:, None]
    with torch.inference_mode():
        out = lm.model(**kw, logits_to_keep=logits_to_keep)
    new_cache = out.get("cache") if hasattr(out, "get") and out.get("cache") is not None else getattr(
        out, "past_key_values", None)
    return out.logits, new_cache, replace(seq, ids=ids, mask=mask, extra=extra)


def rope_deltas(lm: Any) -> Any:
    """The M-RoPE deltas a Qwen-VL model stored at its last prompt forward (``None`` for other models)."""
    return getattr(getattr(lm.model, "model", None), "rope_deltas", None)


def _stack(outs: list, key: str, j: int) -> np.ndarray:
    return np.stack([o[key][j] for o in outs]).astype(np.float32)


def prompt_summary(outs: list, j: int) -> dict:
    """Row ``j`` of a probed prompt forward's reductions: ``ctx``, ``vision_mean``, ``energy``, ``grid_shape``
    (and ``grid`` when a layer's grid was kept)."""
    st = {"ctx": _stack(outs, "last", j), "vision_mean": _stack(outs, "vision_mean", j),
          "energy": np.array([o["energy"][j] for o in outs]), "grid_shape": tuple(outs[0]["shape"][j])}
    kept = [o["grid"][j] for o in outs if o["grid"]]
    if kept:
        st["grid"] = kept[0]
    return st


def probed_prompt(lm: Any, rec: Recorder, inputs: Any, item_ids: Sequence[str],
                  choose: Callable[[int, np.ndarray], Sequence[int]], *, keep_grid: int | None = None
                  ) -> tuple[np.ndarray, list[dict]]:
    """The scoring forward with probes: last-position logits of a batch and each row's states.

    ``choose(j, logits_row)`` returns the answer tokens of row ``j`` (the chosen
    letter, or the chosen option's tokens) to teacher-force after the prompt.
    Each row's dict holds ``ctx`` (last prompt token), ``vision_mean``, ``ans``
    (mean over the answer tokens), each ``(L + 2, H)``; ``energy`` ``(L + 2,)``
    (grid Dirichlet energy per layer); ``grid_shape``; and ``grid`` (the grid at
    layer ``keep_grid``) when asked.
    """
    import torch

    logits, cache, outs = prompt_states(lm, rec, inputs, keep_grid=keep_grid)
    arr = last_logits(logits, item_ids)
    toks = [list(choose(j, arr[j])) for j in range(arr.shape[0])]
    width = max(len(t) for t in toks)
    if min(len(t) for t in toks) < 1:
        raise ValueError("choose returned no answer token for some row")
    pad = lm.tokenizer.pad_token_id or 0
    new = torch.full((len(toks), width), pad, dtype=torch.long)
    for j, t in enumerate(toks):
        new[j, : len(t)] = torch.as_tensor(t)
    deltas = rope_deltas(lm)
    (_, cache, _), outs2 = rec.run(_answer_reducer,
                                   lambda: feed(lm, Growing.of(inputs), cache, new, logits_to_keep=1))
    hand_on(lm, rec, inputs, cache, item_ids, deltas)
    states = []
    for j, t in enumerate(toks):
        st = prompt_summary(outs, j)
        st["ans"] = np.stack([o[j, : len(t)].mean(0) for o in outs2]).astype(np.float32)
        st["n_tokens"] = len(t)
        states.append(st)
    return arr, states


def prompt_states(lm: Any, rec: Recorder, inputs: Any, *, keep_grid: int | None = None) -> tuple[Any, Any, list]:
    """A probed prompt forward without an answer: ``(logits, cache, reductions)`` (used by greedy decoding)."""

    layout = vision_layout(lm, inputs)
    reduce = _prompt_reducer(layout, keep_grid, rec.n_layers + 2)
    (logits, cache), outs = rec.run(reduce, lambda: forward(lm, inputs, use_cache=True, logits_to_keep=1))
    return logits, cache, outs


def answer_states(rec: Recorder, thunk: Callable) -> tuple[Any, list]:
    """Run a continuation ``thunk`` and return its result and the fed positions' states per layer."""
    return rec.run(_answer_reducer, thunk)


_HAND_ON: ContextVar[Callable | None] = ContextVar("vlmrobust_hand_on", default=None)


@contextmanager
def handing_on(take: Callable) -> Iterator[None]:
    """Within the block, each probed scoring forward calls ``take(rec, cache, seq, item_ids)`` once its states are read.

    ``cache`` is the forward's KV cache (the scoring prompt, then the teacher-forced
    answer tokens, which a taker crops away) and the scoring is done with it: the
    taker owns it. ``seq`` is the prompt batch as a :class:`Growing` with ``pos0``
    and ``deltas`` set; its rows are the items ``item_ids``; ``rec`` the active recorder.
    """
    token = _HAND_ON.set(take)
    try:
        yield
    finally:
        _HAND_ON.reset(token)


def hand_on(lm: Any, rec: Recorder, inputs: Any, cache: Any, item_ids: Sequence[str], deltas: Any, *,
            row: int | None = None) -> None:
    """Hand a probed scoring forward's cache to the taker of :func:`handing_on` (does nothing outside one).

    ``deltas``: :func:`rope_deltas` read right after the prompt forward; ``row``:
    the cache's rows all continue one prompt (one row per option), keep that one.
    """
    take = _HAND_ON.get()
    if take is None:
        return
    import torch

    if row is not None:
        cache.batch_select_indices(torch.tensor([row], device=inputs["input_ids"].device))
    seq = Growing.of(inputs)
    take(rec, cache, replace(seq, pos0=(seq.mask.cumsum(-1) == 0).sum(-1), deltas=deltas), list(item_ids))


def can_continue(cache: Any, length: int) -> bool:
    """Whether ``cache`` can be cut back and continued up to ``length`` positions exactly.

    Every layer must be a plain dynamic layer, or a sliding-window layer that has
    dropped nothing and whose window holds all ``length`` positions.
    """
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    layers = getattr(cache, "layers", None)
    if not layers:
        return False
    for layer in layers:
        if type(layer) is DynamicLayer and layer.is_initialized:
            continue
        if (type(layer) is DynamicSlidingWindowLayer and layer.is_initialized
                and layer.cumulative_length == layer.keys.shape[-2] and length <= layer.sliding_window - 1):
            continue
        return False
    return True


def crop_rows(cache: Any, seq: Growing, rows: Sequence[int], lengths: Sequence[int]) -> tuple[Any, Growing]:
    """A new cached batch: row ``r`` holds the first ``lengths[r]`` attended tokens of row ``rows[r]``.

    An index may repeat. The kept tokens are right-aligned over ``max(lengths)``
    positions (the left padding masked) and keep their positions (``seq.pos0``,
    ``seq.deltas``). Works on ``cache`` in place (check :func:`can_continue`
    first); the sequence keeps the token types only of the processor's other inputs.
    """
    import torch

    dev = seq.ids.device
    n = max(lengths)
    idx = torch.as_tensor(list(rows), dtype=torch.long, device=dev)
    col = torch.arange(n, device=dev)[None, :] - (n - torch.as_tensor(list(lengths), device=dev))[:, None]
    keep = col >= 0
    src = (seq.mask[idx].cumsum(-1) == 0).sum(-1)[:, None] + col.clamp(min=0)  # (rows, n) source positions
    for layer in cache.layers:
        layer.keys = layer.keys[idx[:, None], :, src].transpose(1, 2).contiguous()
        layer.values = layer.values[idx[:, None], :, src].transpose(1, 2).contiguous()
        if hasattr(layer, "cumulative_length"):
            layer.cumulative_length = n

    def pick(t):
        return torch.where(keep, t[idx[:, None], src], torch.zeros_like(src, dtype=t.dtype))

    extra = {k: pick(v) for k, v in seq.extra.items() if k in _TYPE_KEYS}
    return cache, Growing(pick(seq.ids), keep.to(seq.mask.dtype), extra,
                          None if seq.pos0 is None else seq.pos0[idx],
                          None if seq.deltas is None else seq.deltas[idx])


def merge_cached(parts: Sequence[tuple[Any, Growing]]) -> tuple[Any, Growing]:
    """Join cached batches cut by :func:`crop_rows` into one, each left-padded to the longest (padding masked).

    The first cache is reused for the result; check :func:`can_continue` on every
    part with the joined length first.
    """
    import torch
    from torch.nn.functional import pad

    n = max(s.ids.shape[1] for _, s in parts)
    base = parts[0][0]
    for li, layer in enumerate(base.layers):
        layer.keys = torch.cat([pad(c.layers[li].keys, (0, 0, n - s.ids.shape[1], 0)) for c, s in parts])
        layer.values = torch.cat([pad(c.layers[li].values, (0, 0, n - s.ids.shape[1], 0)) for c, s in parts])
        if hasattr(layer, "cumulative_length"):
            layer.cumulative_length = n

    def cat(get):
        return torch.cat([pad(get(s), (n - s.ids.shape[1], 0)) for _, s in parts])

    seqs = [s for _, s in parts]
    extra = {k: cat(lambda s, k=k: s.extra[k]) for k in seqs[0].extra}
    pos0 = None if seqs[0].pos0 is None else torch.cat([s.pos0 for s in seqs])
    deltas = None if seqs[0].deltas is None else torch.cat([s.deltas for s in seqs])
    return base, Growing(cat(lambda s: s.ids), cat(lambda s: s.mask), extra, pos0, deltas)
