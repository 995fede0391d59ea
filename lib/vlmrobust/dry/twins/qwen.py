"""Twins of the Qwen vision-language family: Qwen2-VL, Qwen2.5-VL and Qwen3-VL.

All three share the dynamic-resolution recipe: the image is resized to a
multiple of ``patch_size * merge_size`` within a pixel budget, cut into
``patch_size`` patches (two frames deep), and every 2x2 block of patches is
merged into one LLM token, so a prompt holds ``t * h * w / 4`` ``<|image_pad|>``
tokens (``image_grid_thw``). The text model uses M-RoPE (temporal, height and
width sections of the rotary dimensions). What differs:

* **Qwen2-VL** — full attention in every ViT block.
* **Qwen2.5-VL** — window attention in the ViT (``window_size`` pixels) except the
  blocks of ``fullatt_block_indexes``; RMSNorm and a gated MLP in the ViT.
* **Qwen3-VL** — learned position embeddings interpolated to the image's grid and
  **DeepStack**: the merged outputs of the ViT blocks of ``deepstack_visual_indexes``
  are added to the hidden states at the image positions after the first
  ``len(deepstack_visual_indexes)`` decoder layers; interleaved M-RoPE; Qwen3 text
  model with query/key norms.

The processors carry a video processor that needs torchvision; the twins are
built with :func:`vlmrobust.models.image_only` and load the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import models
from ._common import QWEN_TEMPLATE, seeded, word_tokenizer

__all__ = ["QWEN_SPECIALS", "tiny_qwen2_vl", "tiny_qwen2_5_vl", "tiny_qwen3_vl", "full_size_qwen3_vl"]

#: The special tokens of the Qwen chat format and its vision markers.
QWEN_SPECIALS = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                 "<|video_pad|>"]


def _tokenizer(extra_texts: Iterable[str]):
    tok = word_tokenizer(QWEN_SPECIALS, extra_texts, eos="<|endoftext|>")
    return tok, {t: tok.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}


def _image_processor(patch: int = 8, mean=None, std=None):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    kw = {} if mean is None else {"image_mean": mean, "image_std": std}
    return Qwen2VLImageProcessorPil(min_pixels=16 * 16, max_pixels=48 * 48, patch_size=patch, merge_size=2,
                                    temporal_patch_size=2, **kw)


def _text(tok, ids: dict, **kw) -> dict:
    base = dict(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                eos_token_id=ids["<|im_end|>"], pad_token_id=tok.pad_token_id, bos_token_id=None)
    base.update(kw)
    return base


def _ids(ids: dict) -> dict:
    return dict(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])


def tiny_qwen2_vl(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Qwen2-VL twin: dynamic-resolution ViT with 2x2 patch merging and M-RoPE text model."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    tok, ids = _tokenizer(extra_texts)
    proc = models.image_only(Qwen2VLProcessor)(image_processor=_image_processor(), tokenizer=tok,
                                               video_processor=None, chat_template=QWEN_TEMPLATE)
    cfg = Qwen2VLConfig(
        vision_config=dict(depth=2, embed_dim=32, hidden_size=48, num_heads=4, mlp_ratio=2, patch_size=8,
                           spatial_merge_size=2, temporal_patch_size=2),
        text_config=_text(tok, ids, rope_parameters={"rope_type": "default", "mrope_section": [2, 2, 2],
                                                     "rope_theta": 10000.0}),
        **_ids(ids))
    with seeded(seed):
        return Qwen2VLForConditionalGeneration(cfg).eval(), proc


def tiny_qwen2_5_vl(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Qwen2.5-VL twin: window attention in ViT block 0 (windows of 2x2 merged tokens), full attention in block 1.

    The window is ``window_size = 32`` pixels, i.e. 2x2 merged tokens of 16 px,
    so a 48 px image (3x3 merged tokens) is split into padded windows as the real
    model splits its 112 px windows.
    """
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
    )

    tok, ids = _tokenizer(extra_texts)
    proc = models.image_only(Qwen2_5_VLProcessor)(image_processor=_image_processor(), tokenizer=tok,
                                                  video_processor=None, chat_template=QWEN_TEMPLATE)
    cfg = Qwen2_5_VLConfig(
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=4, patch_size=8,
                           spatial_merge_size=2, temporal_patch_size=2, window_size=32, out_hidden_size=48,
                           fullatt_block_indexes=[1]),
        text_config=_text(tok, ids, rope_parameters={"rope_type": "default", "mrope_section": [2, 2, 2],
                                                     "rope_theta": 10000.0}),
        **_ids(ids))
    with seeded(seed):
        return Qwen2_5_VLForConditionalGeneration(cfg).eval(), proc


def tiny_qwen3_vl(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Qwen3-VL twin with DeepStack: ViT block 0's merged output is added after decoder layer 0.

    ``deepstack_visual_indexes = [0]`` (transformers' default, as Qwen3-VL-8B,
    takes blocks 8, 16 and 24 of 27 and adds them after decoder layers 0, 1 and
    2); learned position
    embeddings on a 6x6 grid, interpolated to each image's patch grid; image
    mean and std 0.5, as the real processor.
    """
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor

    tok, ids = _tokenizer(extra_texts)
    ip = _image_processor(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])
    proc = models.image_only(Qwen3VLProcessor)(image_processor=ip, tokenizer=tok, video_processor=None,
                                               chat_template=QWEN_TEMPLATE)
    cfg = Qwen3VLConfig(
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=4, patch_size=8,
                           spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=48,
                           num_position_embeddings=36, deepstack_visual_indexes=[0]),
        text_config=_text(tok, ids, head_dim=12,
                          rope_parameters={"rope_type": "default", "mrope_section": [2, 2, 2],
                                           "mrope_interleaved": True, "rope_theta": 10000.0}),
        **_ids(ids))
    with seeded(seed):
        return Qwen3VLForConditionalGeneration(cfg).eval(), proc



def full_size_qwen3_vl(extra_texts: Iterable[str] = (), seed: int = 0, n_layers: int | None = None):
    """A Qwen3-VL twin at the sizes of Qwen3-VL-2B-Instruct (random weights; for GPU checks).

    Vision: 24 blocks of width 1024 (MLP 4096, 16 heads, 16 px patches, 48x48
    learned position embeddings) merged 2x2 to 2048, DeepStack from blocks 5, 11
    and 17 (added after decoder layers 0, 1 and 2); text: 28 Qwen3 layers of width
    2048 (MLP 6144, 16 heads of 128, 8 KV heads, interleaved M-RoPE sections
    24/20/20, θ = 5·10^6). The processor's patching and normalisation are the real
    one's (16 px patches, 2x2 merging, mean and std 0.5), with a pixel budget of
    at most 1024 merged tokens. Only the vocabulary is the twins' word-level one.
    ``n_layers`` cuts both towers to that many blocks and layers (DeepStack from
    block 0), widths kept, for a check on a CPU.
    """
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tok, ids = _tokenizer(extra_texts)
    ip = Qwen2VLImageProcessorPil(min_pixels=32 * 32 * 4, max_pixels=32 * 32 * 1024, patch_size=16, merge_size=2,
                                  temporal_patch_size=2, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    proc = models.image_only(Qwen3VLProcessor)(image_processor=ip, tokenizer=tok, video_processor=None,
                                               chat_template=QWEN_TEMPLATE)
    depth, layers = (24, 28) if n_layers is None else (int(n_layers), int(n_layers))
    cfg = Qwen3VLConfig(
        vision_config=dict(depth=depth, hidden_size=1024, intermediate_size=4096, num_heads=16, patch_size=16,
                           spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=2048,
                           num_position_embeddings=2304,
                           deepstack_visual_indexes=[5, 11, 17] if n_layers is None else [0]),
        text_config=_text(tok, ids, hidden_size=2048, intermediate_size=6144, num_hidden_layers=layers,
                          num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                          max_position_embeddings=32768,
                          rope_parameters={"rope_type": "default", "mrope_section": [24, 20, 20],
                                           "mrope_interleaved": True, "rope_theta": 5000000.0}),
        **_ids(ids))
    with seeded(seed):
        return Qwen3VLForConditionalGeneration(cfg).eval(), proc
