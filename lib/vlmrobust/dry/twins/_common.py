"""What the twin builders share: the word-level tokenizer, seeded construction, saving, chat templates.

A twin's tokenizer is word-level (:func:`word_tokenizer`): the architecture's
special tokens first, then every word of :data:`BASE_WORDS`, the option letters
(:data:`~vlmrobust.schema.OPTION_LETTERS`), punctuation and the words of any
extra texts, each in four casings. So an option letter or an option word is
one token, as the scoring methods need, in every architecture alike. Weights
are drawn inside :func:`seeded`, which leaves the caller's torch generator as
it was; :func:`unblind` gives weights to matrices an architecture starts at
zero; and :func:`save_twin` writes the folder.

The templates render the processor-side chat format of each family: the
image placeholder where the real model puts it and the turn markers it uses.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ... import repro, schema

__all__ = ["BASE_WORDS", "LETTER_WORDS", "PUNCT", "word_tokenizer", "llama_text", "seeded", "save_twin",
           "unblind", "SIMPLE_TEMPLATE", "QWEN_TEMPLATE", "IDEFICS3_TEMPLATE",
           "GEMMA3_TEMPLATE", "GEMMA4_TEMPLATE", "INTERNVL_TEMPLATE", "MISTRAL_INST_TEMPLATE"]

#: Words of the project's prompts and the synthetic items, each a token in every twin.
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
    """A word-level fast tokenizer: ``specials`` first, then lower/upper-case words and punctuation.

    ``extra_attrs`` are passed to ``PreTrainedTokenizerFast`` (for example
    ``extra_special_tokens``, which gives the tokenizer named token attributes
    such as ``image_token`` and ``image_token_id`` that some processors read).
    Padding is on the left, as batched scoring needs.
    """
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
    kw: dict[str, Any] = dict(tokenizer_object=tk, pad_token=pad, unk_token=unk, eos_token=eos)
    if bos:
        kw["bos_token"] = bos
    kw.update(extra_attrs or {})
    tok = PreTrainedTokenizerFast(**kw)
    tok.padding_side = "left"
    return tok


def llama_text(vocab: int, hidden: int = 48, layers: int = 2, **kw):
    """A small ``LlamaConfig`` (4 heads, 2 key-value heads, MLP twice the width) for a twin's text model."""
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024, **kw)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Draw random weights from ``seed`` inside the block; the caller's torch generator is restored after."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        yield


def unblind(model: Any, seed: int = 0) -> list[str]:
    """Give random weights to every weight matrix a model's initialisation leaves at zero; their names.

    Some architectures initialise a projection between the vision tower and the
    text model to zero (Gemma 3's ``mm_input_projection_weight``), which makes a
    random-weight twin blind: its outputs would not depend on the image. Each such
    matrix gets standard normal weights divided by the square root of its last
    dimension, drawn from a generator keyed by ``seed``.
    """
    import torch

    gen = torch.Generator().manual_seed(repro.key_to_int("twins.unblind", int(seed)) % 2**63)
    filled = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2 and p.is_floating_point() and not bool(p.any()):
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) / max(p.shape[-1], 1) ** 0.5)
                filled.append(name)
    return filled


def save_twin(model, processor, folder: str | Path, answer_format: str | None = None,
              meta: dict | None = None) -> Path:
    """Save a twin as a local model folder: weights, processor, and a ``vlmrobust.json`` when there is metadata.

    ``answer_format`` (and any ``meta`` keys) go into ``vlmrobust.json``, the file
    :func:`vlmrobust.models.zoo.answer_format` reads.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    data = dict(meta or {})
    if answer_format:
        data = {"answer_format": answer_format, **data}
    if data:
        (folder / "vlmrobust.json").write_text(json.dumps(data, indent=2) + "\n")
    return folder


def _content(image: str) -> str:
    """The Jinja loop over a message's content: ``image`` for each image part, the text of each text part."""
    return ("{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
            "{% if c['type'] == 'image' %}" + image + "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}")


#: ``USER: <image>\n... ASSISTANT:`` (LLaVA-1.5).
SIMPLE_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }}: {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)

#: ChatML with Qwen's vision markers (Qwen2-VL, Qwen2.5-VL, Qwen3-VL).
QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: ``<|im_start|>User:<image>...<end_of_utterance>\nAssistant:`` (Idefics3, SmolVLM).
IDEFICS3_TEMPLATE = (
    "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:{% if m['content'] is string %}"
    "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}"
    "{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)

#: ``<start_of_turn>user\n<start_of_image>...<end_of_turn>\n<start_of_turn>model\n`` (Gemma 3).
GEMMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

#: ``<|turn>user\n<|image|>...<turn|>\n<|turn>model\n`` (Gemma 4: the image placeholder the processor expands).
GEMMA4_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    + _content("<|image|>") +
    "<turn|>\n{% endfor %}{% if add_generation_prompt %}<|turn>model\n{% endif %}"
)

#: ChatML with ``<IMG_CONTEXT>`` on its own line where the image goes (InternVL ``-hf``).
INTERNVL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n" + _content("<IMG_CONTEXT>\n")
    + "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: ``<s>[INST] <image>\n... [/INST]`` (Mistral instruct, as llava-v1.6-mistral-7b-hf).
MISTRAL_INST_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] " + _content("<image>\n")
    + " [/INST]{% elif m['role'] == 'assistant' %} " + _content("")
    + "{{ eos_token }}{% else %}" + _content("") + "\n\n{% endif %}{% endfor %}"
)
