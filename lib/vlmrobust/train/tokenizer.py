"""Word-level tokenizer and chat template of the model organisms.

The organisms read a closed synthetic world, so a word-level vocabulary is
enough and keeps every answer a single, inspectable token: letters ``A``-``E``
and digits are single tokens, and so is every colour, shape or word of the
synthetic world. The tokenizer is built offline with the ``tokenizers``
library and wrapped as a ``PreTrainedTokenizerFast`` so that it saves and loads
like any Hugging Face tokenizer.

Pre-tokenization splits on whitespace, isolates punctuation and splits digits
one by one (``"12"`` -> ``"1", "2"``), so ``"A."`` is ``["A", "."]`` and the
letter after ``<|assistant|>`` is exactly one token (the letter-scoring
protocol of seed 000, Bench-C, Sec. 3.2, reads one logit per option letter).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..schema import OPTION_LETTERS

__all__ = [
    "SPECIAL_TOKENS",
    "DIGITS",
    "CHAT_TEMPLATE",
    "pre_tokenizer",
    "words_of",
    "build_vocabulary",
    "build_tokenizer",
]

PAD, UNK, BOS = "[PAD]", "[UNK]", "[BOS]"
IMAGE, USER, ASSISTANT, END = "<image>", "<|user|>", "<|assistant|>", "<|end|>"
#: Special tokens, in id order (ids 0..6).
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, BOS, IMAGE, USER, ASSISTANT, END)
DIGITS: tuple[str, ...] = tuple(str(i) for i in range(10))

#: Chat template (Jinja). A user turn holds its content parts in order (the image
#: placeholder, then the text); ``add_generation_prompt`` opens the assistant turn.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<image>\n' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def pre_tokenizer() -> Any:
    """The pre-tokenizer: whitespace split, isolated punctuation, single digits."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Punctuation("isolated"),
        pre_tokenizers.Digits(individual_digits=True),
    ])


def words_of(texts: Iterable[str]) -> set[str]:
    """All word pieces the pre-tokenizer makes of ``texts``."""
    pre = pre_tokenizer()
    out: set[str] = set()
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must hold strings, got {type(text).__name__}")
        out.update(piece for piece, _ in pre.pre_tokenize_str(text))
    return out


def build_vocabulary(texts: Iterable[str]) -> list[str]:
    """Token list: special tokens, letters A-E, digits, then every other word of ``texts``, sorted."""
    fixed = list(SPECIAL_TOKENS) + list(OPTION_LETTERS) + list(DIGITS)
    rest = sorted(words_of(texts) - set(fixed))
    return fixed + rest


def build_tokenizer(vocabulary: list[str]) -> Any:
    """A ``PreTrainedTokenizerFast`` over ``vocabulary`` (from :func:`build_vocabulary`).

    Unknown words map to ``[UNK]``; ``<|end|>`` is the end-of-turn (eos) token
    and ``<image>`` the image placeholder that the processor expands.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    if list(vocabulary[: len(SPECIAL_TOKENS)]) != list(SPECIAL_TOKENS):
        raise ValueError("vocabulary must start with SPECIAL_TOKENS (use build_vocabulary)")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError("vocabulary must not repeat tokens")
    vocab = {tok: i for i, tok in enumerate(vocabulary)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIAL_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=END, pad_token=PAD, unk_token=UNK,
        extra_special_tokens={"image_token": IMAGE}, model_max_length=512,
        padding_side="right",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast
