"""Texts as the organisms' token ids: the chat-template prompt, answer words, and a talker's confidence line.

:class:`Encoder` wraps an organism's tokenizer (a ``tokenizers`` file); :func:`talk_target` writes the
answer of a talking organism, ``"{letter}\\nConfidence: {n}"``, with the tokens of :data:`TALK_TOKENS`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schema import OPTION_LETTERS

__all__ = ["TALK_TOKENS", "Encoder", "talk_target", "TALK_LETTER", "TALK_TENS", "TALK_UNITS"]

#: Tokens a talking organism adds to the shared vocabulary (appended, so every other id is unchanged): the
#: new line before ``Confidence: N`` and the digits that continue a number (decoded without a space, so
#: ``8 ##5`` reads "85"; the plain digits cannot be glued, the pre-tokenizer splits them one by one).
TALK_TOKENS: tuple[str, ...] = ("\n",) + tuple(f"##{d}" for d in range(10))


class Encoder:
    """Turns texts into token ids with the organism's tokenizer (a ``tokenizers`` file).

    ``prompt(text)`` is the chat-template rendering of a user turn holding one
    image and ``text`` with the generation prompt appended (tested to equal
    ``processor.apply_chat_template``), with ``<image>`` expanded to
    ``n_image_tokens`` placeholders.
    """

    def __init__(self, tokenizer_json: str, n_image_tokens: int) -> None:
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_str(tokenizer_json)
        self.n_image_tokens = n_image_tokens
        self.end_id = self.tok.token_to_id("<|end|>")
        self.pad_id = self.tok.token_to_id("[PAD]")
        self.image_id = self.tok.token_to_id("<image>")
        self.unk_id = self.tok.token_to_id("[UNK]")
        self.letter_ids = [self.tok.token_to_id(c) for c in OPTION_LETTERS]
        self.talk_ids = [self.tok.token_to_id(t) for t in TALK_TOKENS]  # None without the talk tokens

    @staticmethod
    def render(text: str, image: bool = True) -> str:
        return f"[BOS]<|user|>\n{'<image>' + chr(10) if image else ''}{text}<|end|>\n<|assistant|>\n"

    def prompt_ids(self, texts: Sequence[str], image: bool = True) -> list[list[int]]:
        rendered = [self.render(t, image).replace("<image>", "<image>" * self.n_image_tokens) for t in texts]
        return [e.ids for e in self.tok.encode_batch(rendered, add_special_tokens=False)]

    def word_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(list(texts), add_special_tokens=False)]


def talk_target(enc: Encoder, letter: int, n: int) -> list[int]:
    """Token ids of ``"{letter}\\nConfidence: {n}"`` and the end of turn, ``n`` written with two digits
    (0 <= n <= 99, e.g. ``07``), so that the trainer can overwrite letter and digits in place."""
    if None in enc.talk_ids:
        raise ValueError(f"the talk mode needs the talk tokens {TALK_TOKENS} in the vocabulary "
                         "(model.extra_tokens)")
    if not 0 <= int(n) <= 99:
        raise ValueError(f"confidence must be an int in [0, 99], got {n!r}")
    nl, cont = enc.talk_ids[0], enc.talk_ids[1:]
    words = enc.word_ids(["Confidence :", str(int(n) // 10)])
    return [enc.letter_ids[letter], nl, *words[0], *words[1], cont[int(n) % 10], enc.end_id]


#: Offsets of the letter and the two digits inside :func:`talk_target`.
TALK_LETTER, TALK_TENS, TALK_UNITS = 0, 4, 5
