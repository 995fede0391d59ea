"""Twins of the LLaVA family: LLaVA-1.5, LLaVA-NeXT (Mistral) and LLaVA-OneVision.

* **LLaVA** — a CLIP vision tower, a two-layer MLP projector and a Llama text
  model; one view of the image, ``(size / patch)^2`` image tokens (the
  architecture of the project's model organisms).
* **LLaVA-NeXT** — the same tower and projector with AnyRes: the image's best
  ``image_grid_pinpoints`` resolution is cut into tiles of the tower's size,
  the base (resized) view comes first, the tiles follow with a learned
  ``image_newline`` token closing each row of tile features; a Mistral text
  model and the ``[INST] ... [/INST]`` format, as ``llava-v1.6-mistral-7b-hf``.
* **LLaVA-OneVision** — a SigLIP tower (no class token, ``full`` strategy),
  AnyRes tiling with ``anyres_max_9`` pooling, a Qwen2 text model.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import models
from ._common import (
    MISTRAL_INST_TEMPLATE,
    QWEN_TEMPLATE,
    SIMPLE_TEMPLATE,
    llama_text,
    seeded,
    word_tokenizer,
)

__all__ = ["PINPOINTS", "tiny_llava", "tiny_llava_next", "tiny_llava_onevision"]

#: The AnyRes resolutions of the tiled twins (in units of the 32 px tower input).
PINPOINTS = [[32, 32], [32, 64], [64, 32], [64, 64]]


def _clip_vision(hidden: int, layers: int, image_size: int):
    from transformers import CLIPVisionConfig

    return CLIPVisionConfig(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                            num_attention_heads=4, image_size=image_size, patch_size=8, projection_dim=32)


def tiny_llava(extra_texts: Iterable[str] = (), seed: int = 0, image_size: int = 32, hidden: int = 48,
               layers: int = 2, vision_hidden: int = 32):
    """A LLaVA twin (CLIP vision tower, MLP projector, Llama text model) with its LlavaProcessor.

    The defaults are tiny (tests); ``hidden``, ``layers``, ``vision_hidden`` and
    ``image_size`` scale it up (benchmarks).
    """
    from transformers import LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tok = word_tokenizer(["<image>"], extra_texts, bos="<s>")
    ip = CLIPImageProcessorPil(size={"shortest_edge": image_size},
                               crop_size={"height": image_size, "width": image_size})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8,
                          vision_feature_select_strategy="default", chat_template=SIMPLE_TEMPLATE,
                          num_additional_image_tokens=1)
    cfg = LlavaConfig(vision_config=_clip_vision(vision_hidden, layers, image_size),
                      text_config=llama_text(len(tok), hidden, layers, pad_token_id=tok.pad_token_id,
                                             eos_token_id=tok.eos_token_id),
                      image_token_id=tok.convert_tokens_to_ids("<image>"), vision_feature_layer=-1,
                      vision_feature_select_strategy="default", projector_hidden_act="gelu")
    with seeded(seed):
        return LlavaForConditionalGeneration(cfg).eval(), proc


def tiny_llava_next(extra_texts: Iterable[str] = (), seed: int = 0):
    """A LLaVA-NeXT twin with a Mistral text model (llava-v1.6-mistral style): CLIP tower, AnyRes tiles.

    Features from the second-to-last tower layer, class token dropped
    (``default``), pinpoints :data:`PINPOINTS`; ``<s>[INST] <image>\\n... [/INST]``.
    """
    from transformers import (
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextProcessor,
        MistralConfig,
    )
    from transformers.models.llava_next.image_processing_pil_llava_next import (
        LlavaNextImageProcessorPil,
    )

    tok = word_tokenizer(["<image>", "[INST]", "[/INST]"], extra_texts, bos="<s>", eos="</s>")
    ip = LlavaNextImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
                                    image_grid_pinpoints=PINPOINTS)
    proc = LlavaNextProcessor(image_processor=ip, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                              chat_template=MISTRAL_INST_TEMPLATE, num_additional_image_tokens=1)
    text = MistralConfig(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=12, max_position_embeddings=1024,
                         sliding_window=None, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                         bos_token_id=tok.bos_token_id)
    cfg = LlavaNextConfig(vision_config=_clip_vision(32, 2, 32), text_config=text,
                          image_token_index=tok.convert_tokens_to_ids("<image>"), image_grid_pinpoints=PINPOINTS,
                          vision_feature_select_strategy="default", vision_feature_layer=-2, image_seq_length=16)
    with seeded(seed):
        return LlavaNextForConditionalGeneration(cfg).eval(), proc


def tiny_llava_onevision(extra_texts: Iterable[str] = (), seed: int = 0):
    """A LLaVA-OneVision twin: SigLIP encoder, AnyRes tiling (base + grid crops), Qwen2 text model."""
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionProcessor,
    )
    from transformers.models.llava_onevision.image_processing_pil_llava_onevision import (
        LlavaOnevisionImageProcessorPil,
    )

    specials = ["<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tok = word_tokenizer(specials, extra_texts, eos="<|endoftext|>")
    ip = LlavaOnevisionImageProcessorPil(size={"height": 32, "width": 32}, image_grid_pinpoints=PINPOINTS)
    template = QWEN_TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", "<image>\n")
    proc = models.image_only(LlavaOnevisionProcessor)(image_processor=ip, tokenizer=tok, num_image_tokens=16,
                                                      vision_feature_select_strategy="full", chat_template=template,
                                                      vision_aspect_ratio="anyres_max_9")
    cfg = LlavaOnevisionConfig(
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8),
        text_config=dict(model_type="qwen2", vocab_size=len(tok), hidden_size=48, intermediate_size=96,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), bos_token_id=None),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        video_token_index=tok.convert_tokens_to_ids("<video>"), image_grid_pinpoints=PINPOINTS,
        vision_feature_select_strategy="full", vision_feature_layer=-1, vision_aspect_ratio="anyres_max_9")
    with seeded(seed):
        return LlavaOnevisionForConditionalGeneration(cfg).eval(), proc
