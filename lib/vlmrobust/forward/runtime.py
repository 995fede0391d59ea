"""The lean forward exported to ONNX Runtime: exported once per organism, cached by its digest, one thread.

* :func:`digest` — a hash of the weights the model holds now (and its config, the lean module's
  version, the exporter's settings): the exported file's name, so a changed weight is a new file;
* :func:`onnx_path` — export :class:`~vlmrobust.forward.lean.LeanLlava` with dynamic batch, length
  and answer positions (torch's TorchScript exporter, ``dynamo=False``, which needs the ``onnx``
  package only) into the cache folder, atomically, unless the file is there;
* :func:`session` — an ONNX Runtime CPU session with ``intra_op_num_threads`` threads (one per
  worker: the project's default), one inter-op thread, every graph optimisation and the engine's
  own memory arena (which keeps the activations' memory between batches instead of asking the
  system for it afresh).

The cache folder is ``VLMROBUST_ONNX_CACHE`` when set, else ``<repo>/.cache/onnx`` (ignored by git).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..paths import REPO_ROOT
from .lean import LEAN_VERSION, LeanLlava

__all__ = ["INPUTS", "OPSET", "cache_dir", "digest", "onnx_path", "session"]

#: The lean module's inputs, in the order of its ``forward``.
INPUTS = ("input_ids", "pixel_values", "position_ids", "image_index", "mask", "gather")
OPSET = 17
_DYNAMIC = {"input_ids": {0: "batch", 1: "length"}, "pixel_values": {0: "batch"},
            "position_ids": {0: "batch", 1: "length"}, "image_index": {0: "batch", 1: "length"},
            "mask": {0: "batch", 1: "length", 2: "length"}, "gather": {0: "batch", 1: "answers"},
            "logits": {0: "batch", 1: "answers"}}


def cache_dir() -> Path:
    """Where exported organisms are kept: ``VLMROBUST_ONNX_CACHE``, else ``<repo>/.cache/onnx``."""
    return Path(os.environ.get("VLMROBUST_ONNX_CACHE") or REPO_ROOT / ".cache" / "onnx")


def digest(model: Any) -> str:
    """A hash of the model's current weights and config, the lean module's version and the export settings."""
    import torch

    h = hashlib.sha256()
    h.update(json.dumps({"lean": LEAN_VERSION, "opset": OPSET, "torch": torch.__version__.split("+")[0]}).encode())
    h.update(model.config.to_json_string(use_diff=False).encode())
    seen: set[int] = set()
    for name, t in model.state_dict().items():
        ptr = t.data_ptr()
        if ptr in seen:  # tied weights (the LM head is the embedding)
            continue
        seen.add(ptr)
        h.update(f"{name}:{tuple(t.shape)}:{t.dtype}".encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:20]


def _dummy(model: Any) -> tuple:
    """Tracing inputs: two rows of a short prompt holding the image tokens, one answer position each."""
    import torch

    vc = model.config.vision_config
    n_img = (int(vc.image_size) // int(vc.patch_size)) ** 2
    t = n_img + 6
    ids = torch.randint(0, int(model.config.text_config.vocab_size), (2, t))
    image_index = torch.full((2, t), -1, dtype=torch.long)
    image_index[:, 3:3 + n_img] = torch.arange(n_img)
    pos = torch.arange(t).expand(2, t).contiguous()
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool)).expand(2, t, t).contiguous()
    pixels = torch.zeros(2, int(vc.num_channels), int(vc.image_size), int(vc.image_size))
    return ids, pixels, pos, image_index, mask, torch.full((2, 1), t - 1, dtype=torch.long)


def onnx_path(model: Any, key: str | None = None) -> Path:
    """The exported lean forward of ``model`` (exported now unless the cache holds it); ``key`` is its
    :func:`digest` when the caller has it."""
    import torch

    key = key or digest(model)
    path = cache_dir() / f"lean-llava-{key}.onnx"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lean = LeanLlava(model).eval()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
            torch.onnx.export(lean, _dummy(model), str(tmp), dynamo=False, input_names=list(INPUTS),
                              output_names=["logits"], dynamic_axes=_DYNAMIC, opset_version=OPSET,
                              custom_opsets={"com.microsoft": 1})
        os.replace(tmp, path)  # atomic: a worker exporting the same organism at once writes the same bytes
    finally:
        tmp.unlink(missing_ok=True)
    return path


def session(path: str | os.PathLike, threads: int = 1) -> Any:
    """An ONNX Runtime CPU session of an exported file: ``threads`` intra-op threads, sequential execution,
    every graph optimisation, the CPU memory arena on."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_cpu_mem_arena = True
    so.log_severity_level = 3  # errors only
    if threads > 1:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared machines: no busy waits
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def run(sess: Any, feed: dict[str, np.ndarray]) -> np.ndarray:
    """The logits ``(B, P, V)`` of one prepared batch (float32)."""
    return sess.run(["logits"], {k: feed[k] for k in INPUTS})[0]
