"""Tiny random-weight twins of VLM architectures, built from configs for offline tests.

Each builder returns ``(model, processor)`` with a small word-level tokenizer made
here (so letters and option words are single tokens), the architecture's own
processor class (so its image-token expansion is the real one) and a chat
template in the style of the real model. Weights are random (seeded), so the
twins exercise code paths, not answers.

Architectures: LLaVA (the organisms' architecture), Qwen2-VL, Idefics3
(SmolVLM), LLaVA-OneVision and Gemma 3.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import torch

from vlmrobust import models, schema

BASE_WORDS = (
    "what colour is the object which shape how many objects are there where left right above below "
    "of a an this is red green blue yellow circle square triangle star one two three four five yes no "
    "option i cannot tell image too unclear to decide don't know answer with option's letter from given "
    "choices directly word question options please select correct above after your on new line state "
    "how confident you that number 0 100 in format confidence n 80 90 50 it s t is there "
    "user assistant model system"
).split()
LETTER_WORDS = list(schema.OPTION_LETTERS)
PUNCT = list(".,:;?!'()\n")


def _words(texts: Iterable[str]) -> list[str]:
    out: list[str] = []
    for t in texts:
        out += re.findall(r"\w+|[^\w\s]", t)
    return out


def word_tokenizer(specials: list[str], extra_texts: Iterable[str] = (), *, bos: str | None = None,
                   eos: str = "</s>", pad: str = "<pad>", unk: str = "<unk>", extra_attrs: dict | None = None):
    """A word-level fast tokenizer: ``specials`` first, then lower/upper-case words and punctuation."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab: dict[str, int] = {}
    for tok in [pad, unk, eos] + ([bos] if bos else []) + list(specials):
        vocab.setdefault(tok, len(vocab))
    for w in BASE_WORDS + LETTER_WORDS + PUNCT + _words(extra_texts):
        for form in (w, w.lower(), w.capitalize(), w.upper()):
            vocab.setdefault(form, len(vocab))
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tk.add_special_tokens([t for t in [pad, unk, eos, bos, *specials] if t])
    kw = dict(tokenizer_object=tk, pad_token=pad, unk_token=unk, eos_token=eos)
    if bos:
        kw["bos_token"] = bos
    kw.update(extra_attrs or {})
    tok = PreTrainedTokenizerFast(**kw)
    tok.padding_side = "left"
    return tok


def _llama_text(vocab: int, hidden: int = 48, layers: int = 2, **kw):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024, **kw)


def _seed(seed: int) -> None:
    torch.manual_seed(seed)


SIMPLE_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }}: {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def tiny_llava(extra_texts: Iterable[str] = (), seed: int = 0, image_size: int = 32, hidden: int = 48,
               layers: int = 2, vision_hidden: int = 32):
    """A LLaVA twin (CLIP vision tower, MLP projector, Llama text model) with its LlavaProcessor.

    The defaults are tiny (tests); ``hidden``, ``layers``, ``vision_hidden`` and
    ``image_size`` scale it up (benchmarks).
    """
    from transformers import (
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tok = word_tokenizer(["<image>"], extra_texts, bos="<s>")
    ip = CLIPImageProcessorPil(size={"shortest_edge": image_size},
                            crop_size={"height": image_size, "width": image_size})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8,
                          vision_feature_select_strategy="default", chat_template=SIMPLE_TEMPLATE,
                          num_additional_image_tokens=1)
    vision = CLIPVisionConfig(hidden_size=vision_hidden, intermediate_size=2 * vision_hidden, num_hidden_layers=layers,
                              num_attention_heads=4, image_size=image_size, patch_size=8, projection_dim=32)
    cfg = LlavaConfig(vision_config=vision, text_config=_llama_text(len(tok), hidden, layers,
                                                                    pad_token_id=tok.pad_token_id,
                                                                    eos_token_id=tok.eos_token_id),
                      image_token_id=tok.convert_tokens_to_ids("<image>"), vision_feature_layer=-1,
                      vision_feature_select_strategy="default", projector_hidden_act="gelu")
    _seed(seed)
    model = LlavaForConditionalGeneration(cfg).eval()
    return model, proc


def save_twin(model, processor, folder: str | Path, answer_format: str | None = None) -> Path:
    """Save a twin as a local model folder (weights, processor, optional vlmrobust.json)."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    if answer_format:
        (folder / "vlmrobust.json").write_text(json.dumps({"answer_format": answer_format}) + "\n")
    return folder


QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_qwen2_vl(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Qwen2-VL twin: dynamic-resolution ViT with 2x2 patch merging and M-RoPE text model."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    specials = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                "<|video_pad|>"]
    tok = word_tokenizer(specials, extra_texts, eos="<|endoftext|>")
    ip = Qwen2VLImageProcessorPil(min_pixels=16 * 16, max_pixels=48 * 48, patch_size=8, merge_size=2,
                                  temporal_patch_size=2)
    proc = models.image_only(Qwen2VLProcessor)(image_processor=ip, tokenizer=tok, video_processor=None, chat_template=QWEN_TEMPLATE)
    ids = {t: tok.convert_tokens_to_ids(t) for t in specials}
    cfg = Qwen2VLConfig(
        vision_config=dict(depth=2, embed_dim=32, hidden_size=48, num_heads=4, mlp_ratio=2, patch_size=8,
                           spatial_merge_size=2, temporal_patch_size=2),
        text_config=dict(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         rope_parameters={"rope_type": "default", "mrope_section": [2, 2, 2],
                                          "rope_theta": 10000.0},
                         eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), pad_token_id=tok.pad_token_id,
                         bos_token_id=None),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    _seed(seed)
    return Qwen2VLForConditionalGeneration(cfg).eval(), proc


IDEFICS3_TEMPLATE = (
    "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:{% if m['content'] is string %}"
    "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}"
    "{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


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
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           image_size=32, patch_size=8),
        text_config=_llama_text(len(tok), pad_token_id=tok.pad_token_id,
                                eos_token_id=tok.convert_tokens_to_ids("<end_of_utterance>")).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=2)
    _seed(seed)
    return Idefics3ForConditionalGeneration(cfg).eval(), proc


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
    pinpoints = [[32, 32], [32, 64], [64, 32], [64, 64]]
    ip = LlavaOnevisionImageProcessorPil(size={"height": 32, "width": 32}, image_grid_pinpoints=pinpoints)
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
        video_token_index=tok.convert_tokens_to_ids("<video>"), image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="full", vision_feature_layer=-1, vision_aspect_ratio="anyres_max_9")
    _seed(seed)
    return LlavaOnevisionForConditionalGeneration(cfg).eval(), proc


GEMMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def tiny_gemma3(extra_texts: Iterable[str] = (), seed: int = 0):
    """A Gemma 3 twin: SigLIP encoder, average-pooled image tokens with bidirectional image attention,
    Gemma 3 text model with sliding-window layers."""
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
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8),
        text_config=dict(vocab_size=len(tok), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=12, query_pre_attn_scalar=12,
                         sliding_window=8, layer_types=["sliding_attention", "full_attention"],
                         max_position_embeddings=1024, pad_token_id=tok.pad_token_id,
                         eos_token_id=[tok.eos_token_id, tok.convert_tokens_to_ids("<end_of_turn>")],
                         bos_token_id=tok.bos_token_id),
        mm_tokens_per_image=4, boi_token_index=ids["boi_token"], eoi_token_index=ids["eoi_token"],
        image_token_index=ids["image_token"])
    _seed(seed)
    return Gemma3ForConditionalGeneration(cfg).eval(), proc


# ------------------------------------------------------------------ stand-ins for images and corruptions


def fake_image(ref: str):
    """A deterministic uint8 image for any ref (stands in for ``data.load_image`` in sweep tests)."""
    import numpy as np

    from vlmrobust.repro import rng

    return rng("fake-image", ref).integers(0, 256, (40, 48, 3), dtype=np.uint8)


def fake_corrupt(image, name: str, level: int, *, seed: int = 0, key: str = "", depth=None, backend="native"):
    """Deterministic noise of strength ``level`` (stands in for ``corrupt.apply``); ``name="broken"`` raises."""
    import numpy as np

    from vlmrobust.repro import rng

    if name == "broken":
        raise RuntimeError("this corruption always fails")
    noise = rng(key, name, level, seed).normal(0, 20 * level, image.shape)
    return np.clip(image.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def fake_param(name: str, level: int) -> float:
    return 0.5 * level
