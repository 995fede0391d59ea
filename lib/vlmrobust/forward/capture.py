"""Hidden states read off the forwards that scoring and decoding already run (forward hooks, no extra pass).

A :class:`Recorder` hooks the language decoder of a loaded model: the input of
its first layer (**layer 0**: token embeddings with the projected vision tokens
merged in), the output of every decoder layer ``l = 1..L`` (the **pre-norm
residual stream**) and the output of the final norm (**final**, the post-norm
state that ``transformers`` returns as ``hidden_states[-1]`` and that the LM head
reads: seed 002 reads its probes there, "before the output projection", §3.3).
Every state array in this package therefore has ``L + 2`` rows: ``0..L``
pre-norm, then the final post-norm row (index ``-1``).

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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from .layout import VisionLayout, decoder_parts, vision_layout
from .passes import forward, last_logits

__all__ = ["Recorder", "Growing", "feed", "probed_prompt", "prompt_states", "prompt_summary", "answer_states",
           "grid_energy_torch"]

_TYPE_KEYS = ("token_type_ids", "mm_token_type_ids")


class Recorder:
    """Forward hooks on a model's language decoder (see the module docstring); use as a context manager."""

    def __init__(self, lm: Any):
        self.layers, self.norm = decoder_parts(lm.model)
        self.n_layers = len(self.layers)
        self._fn: Callable | None = None
        self._out: list | None = None
        self._handles: list = []

    def __enter__(self) -> Recorder:
        self._handles = [self.layers[0].register_forward_pre_hook(self._pre, with_kwargs=True)]
        for i, layer in enumerate(self.layers):
            self._handles.append(layer.register_forward_hook(partial(self._post, i + 1)))
        self._handles.append(self.norm.register_forward_hook(partial(self._post, self.n_layers + 1)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def _pre(self, module, args, kwargs):
        hs = args[0] if args else kwargs["hidden_states"]
        self._store(0, hs)

    def _post(self, idx, module, args, out):
        self._store(idx, out[0] if isinstance(out, tuple) else out)

    def _store(self, idx: int, hs: Any) -> None:
        if self._fn is not None:
            self._out[idx] = self._fn(hs.detach(), idx)

    def run(self, reduce: Callable, thunk: Callable) -> tuple[Any, list]:
        """Run ``thunk()`` with every hooked state reduced by ``reduce``; return its result and the ``L + 2`` reductions."""
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


@dataclass
class Growing:
    """A batch extended token by token after a cached prompt forward: ids, mask, other processor inputs."""

    ids: Any
    mask: Any
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, inputs: Any) -> Growing:
        return cls(inputs["input_ids"], inputs["attention_mask"],
                   {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")})


def feed(lm: Any, seq: Growing, cache: Any, new_ids: Any, *, logits_to_keep: int = 0) -> tuple[Any, Any, Growing]:
    """Feed ``new_ids`` ``(B, n)`` after ``seq`` whose KV cache is ``cache``; return ``(logits, cache, extended seq)``.

    Positions and masks come from the model's ``prepare_inputs_for_generation``
    (so left padding stays masked); Qwen-VL models get their 3-D M-RoPE positions
    from the ``rope_deltas`` their prompt forward stored.
    """
    import torch

    n = new_ids.shape[1]
    ids = torch.cat([seq.ids, new_ids.to(seq.ids.device)], dim=1)
    mask = torch.cat([seq.mask, torch.ones((seq.mask.shape[0], n), dtype=seq.mask.dtype, device=seq.mask.device)], 1)
    extra = dict(seq.extra)
    for key in _TYPE_KEYS:
        if key in extra:
            v = extra[key]
            extra[key] = torch.cat([v, torch.zeros((v.shape[0], n), dtype=v.dtype, device=v.device)], dim=1)
    kw = lm.model.prepare_inputs_for_generation(ids, next_sequence_length=n, cache=cache, attention_mask=mask,
                                                use_cache=True, is_first_iteration=False, **extra)
    kw = {k: v for k, v in kw.items() if v is not None}
    inner = getattr(lm.model, "model", None)
    deltas = getattr(inner, "rope_deltas", None)
    if deltas is not None:
        pos = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)[:, -n:]
        kw["position_ids"] = pos[None].expand(3, -1, -1) + deltas.to(pos.device)
    with torch.inference_mode():
        out = lm.model(**kw, logits_to_keep=logits_to_keep)
    new_cache = out.get("cache") if hasattr(out, "get") and out.get("cache") is not None else getattr(
        out, "past_key_values", None)
    return out.logits, new_cache, Growing(ids, mask, extra)


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
    _, outs2 = rec.run(_answer_reducer, lambda: feed(lm, Growing.of(inputs), cache, new, logits_to_keep=1))
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
