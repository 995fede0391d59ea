"""The forward pass shared by scoring and probes, and the hidden states read off it as it runs.

* :mod:`.passes` — model inputs, length-sorted batches, one forward with a KV cache, last-position logits;
* :mod:`.layout` — vision-token positions and grid shape from the processor's image tokens, for the
  organisms (LLaVA) and Qwen2-VL, Idefics3, LLaVA-OneVision, Gemma 3;
* :mod:`.capture` — forward hooks on every decoder layer (pre-norm residual stream, layers ``0..L``)
  and the final norm (post-norm, seed 002's read-out), reduced inside the hooks.

The fast path of the zoo's organisms (:mod:`vlmrobust.score.fast`) has three modules of its own, imported
where used: :mod:`.lean` (the forward at the answer positions only), :mod:`.runtime` (its ONNX export,
cached by the weights' digest, and the ONNX Runtime session) and :mod:`.prepared` (text inputs built once
per item set, pixels from the stored uint8 images).

It sits below both :mod:`vlmrobust.score` (which reads probes off its own forward when asked) and
:mod:`vlmrobust.probes` (the probe regimes and shards built on scoring).
"""

from .passes import (
    ScoringError,
    as_pil,
    batches,
    forward,
    last_logits,
    model_inputs,
    stop_ids,
    token_lengths,
)

__all__ = ["ScoringError", "as_pil", "batches", "forward", "last_logits", "model_inputs", "stop_ids", "token_lengths"]
