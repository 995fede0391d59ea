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

BASE_WORDS = (
    "what colour is the object which shape how many objects are there where left right above below "
    "of a an this is red green blue yellow circle square triangle star one two three four five yes no "
    "option i cannot tell image too unclear to decide don't know answer with option's letter from given "
    "choices directly word question options please select correct above after your on new line state "
    "how confident you that number 0 100 in format confidence n 80 90 50 it s t is there "
    "user assistant model system"
).split()
LETTER_WORDS = list("ABCDE")
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


def _llama_text(vocab: int, **kw):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=vocab, hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, **kw)


def _seed(seed: int) -> None:
    torch.manual_seed(seed)


SIMPLE_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }}: {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def tiny_llava(extra_texts: Iterable[str] = (), seed: int = 0, image_size: int = 32):
    """A LLaVA twin (CLIP vision tower, MLP projector, Llama text model) with its LlavaProcessor."""
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    tok = word_tokenizer(["<image>"], extra_texts, bos="<s>")
    ip = CLIPImageProcessor(size={"shortest_edge": image_size},
                            crop_size={"height": image_size, "width": image_size})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8,
                          vision_feature_select_strategy="default", chat_template=SIMPLE_TEMPLATE,
                          num_additional_image_tokens=1)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                              image_size=image_size, patch_size=8, projection_dim=32)
    cfg = LlavaConfig(vision_config=vision, text_config=_llama_text(len(tok), pad_token_id=tok.pad_token_id,
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
