"""Random-weight twins of every architecture the paper variants name, built from configs, offline.

A twin has the real model's classes (model, processor, image processor), its
image-token expansion, its chat format, and tiny sizes (hidden widths of
32-48, two to four layers, images of 32-64 px), with seeded random weights and
a word-level tokenizer in which option letters and option words are single
tokens. It exercises the paths a real model takes through the library —
loading, prompting, scoring, forward hooks — in seconds on a CPU, not its answers.

* :data:`BUILDERS` — twin name -> builder ``(extra_texts=(), seed=0) -> (model, processor)``;
* :data:`ARCHITECTURES` — twin name -> what it is a twin of;
* :data:`KINDS` — twin name -> ``"vlm"``, ``"image_encoder"`` or ``"depth"``;
* :data:`HUB_ARCHITECTURES` — every hub id of ``params/*/paper.yaml`` -> its twin;
* :func:`build` — build a twin and save it as a folder that
  :func:`vlmrobust.models.load` (VLMs), ``AutoModel`` + ``AutoImageProcessor`` (the
  image encoder) or ``pipeline("depth-estimation")`` (the depth model) loads.

Modules: :mod:`._common` (tokenizer, seeding, saving, chat templates),
:mod:`.llava`, :mod:`.qwen`, :mod:`.others` (Idefics3, SmolVLM2, Gemma 3 and 4,
InternVL, Ovis2) and :mod:`.encoders` (DINOv2, Depth Anything V2 metric).

Every VLM twin loads through :func:`vlmrobust.models.load` on a machine
without torchvision, as the real checkpoints do: the processors are built and
loaded by :func:`vlmrobust.models.image_only`, which leaves the video
processor out (Gemma 4's and SmolVLM's included).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ._common import (
    GEMMA3_TEMPLATE,
    GEMMA4_TEMPLATE,
    IDEFICS3_TEMPLATE,
    INTERNVL_TEMPLATE,
    MISTRAL_INST_TEMPLATE,
    QWEN_TEMPLATE,
    SIMPLE_TEMPLATE,
    llama_text,
    save_twin,
    seeded,
    unblind,
    word_tokenizer,
)
from .encoders import tiny_depth_anything_metric, tiny_dinov2
from .llava import tiny_llava, tiny_llava_next, tiny_llava_onevision
from .others import (
    tiny_gemma3,
    tiny_gemma4,
    tiny_idefics3,
    tiny_internvl,
    tiny_ovis2,
    tiny_smolvlm2,
)
from .qwen import full_size_qwen3_vl, tiny_qwen2_5_vl, tiny_qwen2_vl, tiny_qwen3_vl

__all__ = [
    "BUILDERS", "ARCHITECTURES", "KINDS", "HUB_ARCHITECTURES", "build", "default_texts",
    "word_tokenizer", "llama_text", "seeded", "save_twin", "unblind",
    "SIMPLE_TEMPLATE", "QWEN_TEMPLATE", "IDEFICS3_TEMPLATE", "GEMMA3_TEMPLATE", "GEMMA4_TEMPLATE",
    "INTERNVL_TEMPLATE", "MISTRAL_INST_TEMPLATE",
    "tiny_llava", "tiny_llava_next", "tiny_llava_onevision",
    "tiny_qwen2_vl", "tiny_qwen2_5_vl", "tiny_qwen3_vl", "full_size_qwen3_vl",
    "tiny_idefics3", "tiny_smolvlm2", "tiny_gemma3", "tiny_gemma4", "tiny_internvl", "tiny_ovis2",
    "tiny_dinov2", "tiny_depth_anything_metric",
]


def _internvl3_5(extra_texts: Iterable[str] = (), seed: int = 0):
    """The InternVL twin with a Qwen3 text model (InternVL3.5)."""
    return tiny_internvl(extra_texts, seed, text="qwen3")


#: Twin name -> builder ``(extra_texts=(), seed=0) -> (model, processor)`` (the image processor for the
#: image encoder and the depth model, which have no tokenizer and ignore ``extra_texts``).
BUILDERS: dict[str, Callable] = {
    "llava": tiny_llava,
    "llava_next_mistral": tiny_llava_next,
    "llava_onevision": tiny_llava_onevision,
    "qwen2_vl": tiny_qwen2_vl,
    "qwen2_5_vl": tiny_qwen2_5_vl,
    "qwen3_vl": tiny_qwen3_vl,
    "idefics3": tiny_idefics3,
    "smolvlm2": tiny_smolvlm2,
    "gemma3": tiny_gemma3,
    "gemma4": tiny_gemma4,
    "internvl": tiny_internvl,
    "internvl3_5": _internvl3_5,
    "ovis2": tiny_ovis2,
    "dinov2": tiny_dinov2,
    "depth_anything_metric": tiny_depth_anything_metric,
}

#: Twin name -> what it is a twin of.
ARCHITECTURES: dict[str, str] = {
    "llava": "LLaVA-1.5: CLIP tower, MLP projector, Llama (LlavaForConditionalGeneration; the organisms')",
    "llava_next_mistral": "LLaVA-NeXT with Mistral, as llava-v1.6-mistral-7b-hf (LlavaNextForConditionalGeneration)",
    "llava_onevision": "LLaVA-OneVision: SigLIP, AnyRes, Qwen2 (LlavaOnevisionForConditionalGeneration)",
    "qwen2_vl": "Qwen2-VL: dynamic-resolution ViT, M-RoPE (Qwen2VLForConditionalGeneration)",
    "qwen2_5_vl": "Qwen2.5-VL: window-attention ViT (Qwen2_5_VLForConditionalGeneration)",
    "qwen3_vl": "Qwen3-VL: DeepStack after decoder layer 0, interleaved M-RoPE (Qwen3VLForConditionalGeneration)",
    "idefics3": "Idefics3 / SmolVLM-Instruct: pixel-shuffle connector, Llama (Idefics3ForConditionalGeneration)",
    "smolvlm2": "SmolVLM2: image splitting into tiles + global image (SmolVLMForConditionalGeneration)",
    "gemma3": "Gemma 3: SigLIP, pooled image tokens, sliding layers (Gemma3ForConditionalGeneration)",
    "gemma4": "Gemma 4 E2B style, image-text: per-layer inputs, shared KV cache (Gemma4ForConditionalGeneration)",
    "internvl": "InternVL3 -hf: InternViT, pixel shuffle, tiling, Qwen2 (InternVLForConditionalGeneration)",
    "internvl3_5": "InternVL3.5 -hf: as internvl with a Qwen3 text model (InternVLForConditionalGeneration)",
    "ovis2": "Ovis2 -hf (native): visual vocabulary and indicator tokens, Qwen2 (Ovis2ForConditionalGeneration)",
    "dinov2": "DINOv2 image encoder, as facebook/dinov2-base (Dinov2Model)",
    "depth_anything_metric": "Depth Anything V2 metric, max depth 80 m (DepthAnythingForDepthEstimation)",
}

#: Twin name -> kind of model: what loads the saved folder (module docstring).
KINDS: dict[str, str] = {**{n: "vlm" for n in BUILDERS}, "dinov2": "image_encoder", "depth_anything_metric": "depth"}

#: Every hub id named in ``params/*/paper.yaml`` (``models``, ``selectors``, ``ladder``, ``image_encoder``,
#: ``depth_model``) -> the twin that stands for it.
#:
#: Two of them ship their model classes as hub code (``trust_remote_code``), for which no twin is built:
#: ``AIDC-AI/Ovis2-1B`` has a native transformers class, ``Ovis2ForConditionalGeneration``
#: (``transformers/models/ovis2``), that loads the converted checkpoint ``thisisiron/Ovis2-1B-hf`` (the
#: alternative :data:`vlmrobust.models.REMOTE_CODE` names), so its twin is the native ``ovis2``;
#: ``vikhyatk/moondream2`` has no native class in transformers 5.24 (no ``models/moondream*``), so it stands
#: as the twin of its native alternative in :data:`vlmrobust.models.REMOTE_CODE`,
#: ``HuggingFaceTB/SmolVLM-256M-Instruct`` (an Idefics3 model).
HUB_ARCHITECTURES: dict[str, str] = {
    "Qwen/Qwen2-VL-2B-Instruct": "qwen2_vl",
    "Qwen/Qwen2.5-VL-3B-Instruct": "qwen2_5_vl",
    "Qwen/Qwen2.5-VL-72B-Instruct": "qwen2_5_vl",
    "Qwen/Qwen3-VL-2B-Instruct": "qwen3_vl",
    "Qwen/Qwen3-VL-4B-Instruct": "qwen3_vl",
    "Qwen/Qwen3-VL-8B-Instruct": "qwen3_vl",
    "HuggingFaceTB/SmolVLM-Instruct": "idefics3",
    "HuggingFaceTB/SmolVLM2-2.2B-Instruct": "smolvlm2",
    "llava-hf/llava-onevision-qwen2-0.5b-ov-hf": "llava_onevision",
    "llava-hf/llava-onevision-qwen2-7b-ov-hf": "llava_onevision",
    "llava-hf/llava-v1.6-mistral-7b-hf": "llava_next_mistral",
    "google/gemma-3-4b-it": "gemma3",
    "google/gemma-4-E2B-it": "gemma4",
    "OpenGVLab/InternVL3-1B-hf": "internvl",
    "OpenGVLab/InternVL3_5-2B-HF": "internvl3_5",
    "AIDC-AI/Ovis2-1B": "ovis2",
    "vikhyatk/moondream2": "idefics3",
    "facebook/dinov2-base": "dinov2",
    "depth-anything/Depth-Anything-V2-Metric-Outdoor-Large-hf": "depth_anything_metric",
}


def default_texts() -> list[str]:
    """Texts whose words every built twin's tokenizer holds: the synthetic world's vocabulary and the prompt
    templates."""
    from ... import synth
    from ...models import TEMPLATES

    texts = [" ".join(synth.vocabulary())]
    for t in TEMPLATES.values():
        texts += [t.head, t.option, t.tail, t.prefill, t.confidence]
    return texts


def build(name: str, folder: str | os.PathLike, seed: int = 0, extra_texts: Iterable[str] = ()) -> Path:
    """Build twin ``name`` from ``seed`` and save it to ``folder``; returns the folder.

    VLM tokenizers hold :func:`default_texts` and ``extra_texts``. Weight
    matrices that the architecture initialises to zero get random weights
    (:func:`._common.unblind`), so no twin ignores its image. The folder's
    ``vlmrobust.json`` holds ``answer_format`` (``"letters"``, VLMs only), the
    model class (``architecture``), the twin's name and seed, and the names of
    the filled matrices.
    """
    if name not in BUILDERS:
        raise ValueError(f"unknown twin {name!r}; twins are {sorted(BUILDERS)}")
    texts = [*default_texts(), *extra_texts] if KINDS[name] == "vlm" else []
    model, processor = BUILDERS[name](texts, seed=int(seed))
    filled = unblind(model, seed)
    meta = {"architecture": type(model).__name__, "twin": name, "seed": int(seed), "filled_zero_weights": filled}
    return save_twin(model, processor, folder, answer_format="letters" if KINDS[name] == "vlm" else None, meta=meta)
