"""Twins of Idefics3 / SmolVLM, SmolVLM2, Gemma 3, Gemma 4, InternVL and Ovis2 (``-hf`` formats).

* **Idefics3** (SmolVLM-Instruct) — a SigLIP-style encoder, a pixel-shuffle
  connector (``scale_factor`` 2: 16 patches become 4 tokens), a Llama text
  model; one global image (no splitting).
* **SmolVLM2** — the SmolVLM architecture (``SmolVLMForConditionalGeneration``)
  with image splitting: a 64 px image is cut into 2x2 tiles of 32 px plus the
  global image, each tile announced by its ``<row_r_col_c>`` token. Its
  processor, like the real one, needs the package ``num2words``.
* **Gemma 3** — a SigLIP encoder, average-pooled image tokens (``mm_tokens_per_image``),
  bidirectional attention over the image, sliding-window text layers.
* **Gemma 4** (gemma-4-E2B style, image-text) — a ViT over patches packed to a
  fixed budget (``max_soft_tokens`` x ``pooling_kernel_size^2`` patches, padded), 2-D
  learned position tables, 3x3 position-wise pooling; the text model has
  per-layer input embeddings, sliding and full attention with a wider head on
  the full layers, the last two layers reusing the key-value cache of earlier
  ones, and a final logit soft cap. The Gemma 4 turn format
  (``<|turn>user ... <turn|>``, ``<|image>`` / ``<|image|>`` / ``<image|>``).
* **InternVL** — InternViT (with layer scale), pixel shuffle by
  ``downsample_ratio`` 0.5 and an MLP projector; dynamic tiling (up to
  ``max_patches`` tiles and a thumbnail), each tile ``image_seq_length`` tokens
  between ``<img>`` and ``</img>``; a Qwen2 (InternVL3) or Qwen3 (InternVL3.5)
  text model.
* **Ovis2** (native ``Ovis2ForConditionalGeneration``, the format of the
  converted ``-hf`` checkpoints) — the vision tower ends in a softmax over a
  visual vocabulary whose embedding table gives each image token its embedding
  (a probabilistic visual tokenizer); five visual indicator tokens frame the
  image's global view and grid of tiles; a Qwen2 text model.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import models
from ._common import (
    GEMMA3_TEMPLATE,
    GEMMA4_TEMPLATE,
    IDEFICS3_TEMPLATE,
    INTERNVL_TEMPLATE,
    llama_text,
    seeded,
    word_tokenizer,
)

__all__ = ["GEMMA4_TOKENS", "INTERNVL_TOKENS", "OVIS2_INDICATORS", "tiny_idefics3", "tiny_smolvlm2", "tiny_gemma3",
           "tiny_gemma4", "tiny_internvl", "tiny_ovis2"]


def _siglip(**kw) -> dict:
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                patch_size=8, **kw)


def tiny_idefics3(extra_texts: Iterable[str] = (), seed: int = 0):
    """An Idefics3 (SmolVLM) twin: SigLIP-style encoder, pixel-shuffle connector, Llama text model."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

    specials = ["<|im_start|>", "<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
    tok = word_tokenizer(specials, extra_texts, bos="<s>", eos="<end_of_utterance_eos>")
    ip = Idefics3ImageProcessorPil(size={"longest_edge": 32}, max_image_size={"longest_edge": 32},
                                   do_image_splitting=False)
    proc = Idefics3Processor(image_processor=ip, tokenizer=tok, image_seq_len=4, chat_template=IDEFICS3_TEMPLATE)
    cfg = Idefics3Config(
        vision_config=_siglip(),
        text_config=llama_text(len(tok), pad_token_id=tok.pad_token_id,
                               eos_token_id=tok.convert_tokens_to_ids("<end_of_utterance>")).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=2)
    with seeded(seed):
        return Idefics3ForConditionalGeneration(cfg).eval(), proc


def tiny_smolvlm2(extra_texts: Iterable[str] = (), seed: int = 0):
    """A SmolVLM2 twin: SmolVLM model, image splitting into 2x2 tiles of 32 px plus the global image.

    Raises ``ImportError`` when ``num2words`` is missing: the SmolVLM processor
    (real or twin) cannot be made without it.
    """
    from transformers import SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMProcessor
    from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    tiles = [f"<row_{r}_col_{c}>" for r in range(1, 5) for c in range(1, 5)]
    specials = ["<|im_start|>", "<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>",
                "<video>", *tiles]
    tok = word_tokenizer(specials, extra_texts, bos="<|im_start|>", eos="<end_of_utterance>")
    ip = SmolVLMImageProcessorPil(size={"longest_edge": 64}, max_image_size={"longest_edge": 32},
                                  do_image_splitting=True)
    proc = models.image_only(SmolVLMProcessor)(image_processor=ip, tokenizer=tok, video_processor=None,
                                               image_seq_len=4, chat_template=DEFAULT_CHAT_TEMPLATE)
    cfg = SmolVLMConfig(
        vision_config=_siglip(),
        text_config=llama_text(len(tok), pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                               bos_token_id=tok.bos_token_id).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=2)
    with seeded(seed):
        return SmolVLMForConditionalGeneration(cfg).eval(), proc


def tiny_gemma3(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Gemma 3 twin: SigLIP encoder, average-pooled image tokens with bidirectional image attention,
    Gemma 3 text model with sliding-window layers.

    As in the real model, the image projection starts at zero (the twin is blind
    until it is given weights, e.g. by :func:`vlmrobust.dry.twins.build`).
    """
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    named = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
    specials = ["<start_of_turn>", "<end_of_turn>", *named.values()]
    tok = word_tokenizer(specials, extra_texts, bos="<bos>", eos="<eos>",
                         extra_attrs={"extra_special_tokens": named})
    ip = Gemma3ImageProcessorPil(size={"height": 32, "width": 32}, do_pan_and_scan=False)
    proc = Gemma3Processor(image_processor=ip, tokenizer=tok, image_seq_length=4, chat_template=GEMMA3_TEMPLATE)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in named.items()}
    cfg = Gemma3Config(
        vision_config=dict(model_type="siglip_vision_model", **_siglip()),
        text_config=dict(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=12, query_pre_attn_scalar=12,
                         sliding_window=8, layer_types=["sliding_attention", "full_attention"],
                         max_position_embeddings=1024, pad_token_id=tok.pad_token_id,
                         eos_token_id=[tok.eos_token_id, tok.convert_tokens_to_ids("<end_of_turn>")],
                         bos_token_id=tok.bos_token_id),
        mm_tokens_per_image=4, boi_token_index=ids["boi_token"], eoi_token_index=ids["eoi_token"],
        image_token_index=ids["image_token"])
    with seeded(seed):
        return Gemma3ForConditionalGeneration(cfg).eval(), proc


#: Gemma 4's named multimodal tokens (the tokenizer attributes its processor reads).
GEMMA4_TOKENS = {"image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
                 "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>"}


def tiny_gemma4(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Gemma 4 twin (E2B style, image and text; no audio tower).

    Images: patches of 4 px, resized to the 70-soft-token budget (630 patches,
    padded) and pooled 3x3, so a 40x48 image gives 63 image tokens. Text: four
    layers (sliding, full, sliding, full; window 8), heads of 12 (24 on the full
    layers), per-layer inputs of width 8, the last two layers sharing the cache
    of the first two, logits soft-capped at 30. The processor keeps Gemma 4's
    audio feature extractor, as the real E2B processor does.
    """
    from transformers import Gemma4Config, Gemma4ForConditionalGeneration, Gemma4Processor
    from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
    from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil

    specials = ["<|turn>", "<turn|>", *GEMMA4_TOKENS.values(), "<|video|>"]
    tok = word_tokenizer(specials, extra_texts, bos="<bos>", eos="<eos>",
                         extra_attrs={"extra_special_tokens": GEMMA4_TOKENS})
    ip = Gemma4ImageProcessorPil(patch_size=4, max_soft_tokens=70, pooling_kernel_size=3)
    proc = models.image_only(Gemma4Processor)(feature_extractor=Gemma4AudioFeatureExtractor(), image_processor=ip,
                                              tokenizer=tok, video_processor=None, chat_template=GEMMA4_TEMPLATE,
                                              image_seq_length=70)
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in GEMMA4_TOKENS.items()}
    text = dict(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=1, head_dim=12, global_head_dim=24,
                layer_types=["sliding_attention", "full_attention"] * 2, sliding_window=8,
                max_position_embeddings=1024, hidden_size_per_layer_input=8, vocab_size_per_layer_input=len(tok),
                num_kv_shared_layers=2, final_logit_softcapping=30.0, pad_token_id=tok.pad_token_id,
                eos_token_id=[tok.eos_token_id, tok.convert_tokens_to_ids("<turn|>")], bos_token_id=tok.bos_token_id)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, head_dim=8, patch_size=4, pooling_kernel_size=3, position_embedding_size=256)
    cfg = Gemma4Config(text_config=text, vision_config=vision, audio_config=None,
                       image_token_id=ids["image_token"], boi_token_id=ids["boi_token"], eoi_token_id=ids["eoi_token"],
                       video_token_id=tok.convert_tokens_to_ids("<|video|>"), audio_token_id=ids["audio_token"],
                       boa_token_id=ids["boa_token"], eoa_token_index=ids["eoa_token"])
    with seeded(seed):
        return Gemma4ForConditionalGeneration(cfg).eval(), proc


#: InternVL's named image tokens (the tokenizer attributes its processor reads).
INTERNVL_TOKENS = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
                   "video_token": "<video>"}


def tiny_internvl(extra_texts: Iterable[str] = (), seed: int = 0, text: str = "qwen2"):
    """An InternVL twin in the ``-hf`` format: 32 px tiles of 4 tokens, up to 4 tiles plus a thumbnail.

    ``text`` is the language model: ``"qwen2"`` (InternVL3, e.g. InternVL3-1B-hf)
    or ``"qwen3"`` (InternVL3.5, e.g. InternVL3_5-2B-HF; query/key norms).
    """
    from transformers import InternVLConfig, InternVLForConditionalGeneration, InternVLProcessor
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    if text not in ("qwen2", "qwen3"):
        raise ValueError(f"text must be 'qwen2' or 'qwen3', got {text!r}")
    specials = ["<|im_start|>", "<|im_end|>", *INTERNVL_TOKENS.values()]
    tok = word_tokenizer(specials, extra_texts, eos="<|endoftext|>",
                         extra_attrs={"extra_special_tokens": INTERNVL_TOKENS})
    ip = GotOcr2ImageProcessorPil(size={"height": 32, "width": 32}, crop_to_patches=True, min_patches=1,
                                  max_patches=4)
    proc = models.image_only(InternVLProcessor)(image_processor=ip, tokenizer=tok, video_processor=None,
                                                image_seq_length=4, chat_template=INTERNVL_TEMPLATE)
    text_cfg = dict(model_type=text, vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                    pad_token_id=tok.pad_token_id, eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
                    bos_token_id=None, **({"head_dim": 12} if text == "qwen3" else {}))
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                  patch_size=8)
    cfg = InternVLConfig(vision_config=vision, text_config=text_cfg,
                         image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"), image_seq_length=4,
                         downsample_ratio=0.5, vision_feature_layer=-1, vision_feature_select_strategy="default")
    with seeded(seed):
        return InternVLForConditionalGeneration(cfg).eval(), proc


#: Ovis2's visual indicator tokens, in the order of ``visual_indicator_token_ids``.
OVIS2_INDICATORS = ["<IMG_START>", "<IMG_GRID>", "<IMG_COL>", "<IMG_ROW>", "<IMG_END>"]


def tiny_ovis2(extra_texts: Iterable[str] = (), seed: int = 0):
    """An Ovis2 twin (native class): 32 px tiles of 4 ``<IMG_ATOM>`` tokens (hidden stride 2), up to 4 tiles.

    The visual vocabulary has 64 entries, the last five being the indicator
    embeddings; the image placeholder ``<image>`` of the chat template is
    expanded by the processor into atoms framed by :data:`OVIS2_INDICATORS`.
    """
    from transformers import Ovis2Config, Ovis2ForConditionalGeneration, Ovis2Processor
    from transformers.models.ovis2.image_processing_pil_ovis2 import Ovis2ImageProcessorPil

    specials = ["<|im_start|>", "<|im_end|>", "<image>", "<IMG_ATOM>", *OVIS2_INDICATORS]
    tok = word_tokenizer(specials, extra_texts, eos="<|endoftext|>")
    ip = Ovis2ImageProcessorPil(size={"height": 32, "width": 32}, crop_to_patches=True, min_patches=1, max_patches=4)
    template = INTERNVL_TEMPLATE.replace("<IMG_CONTEXT>", "<image>")
    proc = Ovis2Processor(image_processor=ip, tokenizer=tok, chat_template=template, image_seq_length=4)
    text = dict(model_type="qwen2", vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                pad_token_id=tok.pad_token_id, eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), bos_token_id=None)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                  patch_size=8, vocab_size=64, hidden_stride=2, num_visual_indicator_tokens=len(OVIS2_INDICATORS))
    cfg = Ovis2Config(vision_config=vision, text_config=text, image_token_id=tok.convert_tokens_to_ids("<IMG_ATOM>"),
                      visual_indicator_token_ids=[tok.convert_tokens_to_ids(t) for t in OVIS2_INDICATORS],
                      vocab_size=len(tok), hidden_size=48)
    with seeded(seed):
        return Ovis2ForConditionalGeneration(cfg).eval(), proc
