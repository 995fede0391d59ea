"""Prompt text, chat-template prompts and the answer's tokens in context (see :mod:`vlmrobust.models`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ..schema import LETTERS

__all__ = ["TEMPLATES", "CONFIDENCE_REQUEST", "CONFIDENCE_WORDINGS", "Template", "LetterTokenError",
           "mcq_text", "build_prompt", "letter_token_ids", "continuation_ids"]

AnswerFormat = Literal["letters", "text"]

#: Seed 003, Table II: the verbalized-confidence request appended to the question text.
CONFIDENCE_REQUEST = (
    "After your answer, on a new line, state how confident you are that your answer is correct, "
    "as a number from 0 to 100, in the format 'Confidence: N'."
)


#: Seed 003, Table VI: three wordings of the confidence request. ``v1`` is the seed's main wording
#: (Table II); the seed does not print ``v2`` and ``v3``, so these are the project's own: ``v2`` asks for a
#: calibrated percentage and names unclear images, ``v3`` is a terse form. Every wording keeps the
#: ``Confidence: N`` format that :func:`vlmrobust.score.parse_confidence` reads.
CONFIDENCE_WORDINGS: dict[str, str] = {
    "v1": CONFIDENCE_REQUEST,
    "v2": ("After your answer, on a new line, write 'Confidence: N', where N from 0 to 100 is the percentage of "
           "answers like this one that you expect to be correct; use a low number when the image is too unclear "
           "to decide."),
    "v3": "Then write 'Confidence: N' with N from 0 to 100.",
}


class LetterTokenError(ValueError):
    """An option letter is not a single token of the tokenizer (letter scoring impossible)."""


@dataclass(frozen=True)
class Template:
    """A named prompt template for the user turn's text.

    ``head`` formats the question (``{question}``), ``option`` one lettered option
    (``{letter}``, ``{text}``), ``sep`` joins head, options and ``tail``;
    ``prefill`` is text the assistant turn starts with (after the generation prompt);
    ``confidence`` is the verbalized-confidence request appended when one is asked for
    (seed 003's main wording unless the template names another).
    """

    name: str
    head: str
    option: str
    sep: str
    tail: str
    prefill: str = ""
    options_sep: str | None = None
    shows_options: bool = True
    source: str = ""
    confidence: str = CONFIDENCE_REQUEST


TEMPLATES: dict[str, Template] = {
    "vlmrobust": Template(
        "vlmrobust", "{question}", "{letter}. {text}", "\n",
        "Answer with the option's letter from the given choices directly.",
        source="project default (LLaVA-1.5 / VLMEvalKit multiple-choice instruction)",
    ),
    "seed002_mcq": Template(
        "seed002_mcq", "Question: {question}\nOptions:", "{letter}. {text}", "\n",
        "Please select the correct answer from the options above.",
        source="seed 002, App. A.3, ans_mcq regime",
    ),
    "seed003": Template(
        "seed003", "{question}", "{letter}. {text}", " ",
        "Answer with the letter of the correct option.", prefill="Answer:",
        source="seed 003, Table II (assistant turn prefilled with 'Answer:')",
    ),
    "seed003_yn": Template(
        "seed003_yn", "{question}", "", " ", "Answer with Yes or No.", prefill="Answer:", shows_options=False,
        source="seed 003, Table II, t3 without the abstain option (options scored as text, e.g. ' Yes' / ' No')",
    ),
    "seed002_pope": Template(
        "seed002_pope", "Question: {question}", "", " ", "Answer with exactly one word: Yes or No.",
        shows_options=False, source="seed 002, App. A.3, POPE (a one-token Yes / No answer)",
    ),
    "open": Template(
        "open", "{question}", "", "\n", "Answer with a word.", shows_options=False,
        source="open answers (training of the model organisms)",
    ),
}


# Seed 003 Table VI: the same prompts with the confidence wordings v2 and v3.
TEMPLATES.update({
    f"{base}_conf_{v}": replace(TEMPLATES[base], name=f"{base}_conf_{v}", confidence=CONFIDENCE_WORDINGS[v],
                                source=f"{TEMPLATES[base].source}; confidence request {v} (seed 003 Table VI)")
    for base in ("vlmrobust", "seed003") for v in ("v2", "v3")
})


def _template(template: str | Template) -> Template:
    if isinstance(template, Template):
        return template
    if not isinstance(template, str) or template not in TEMPLATES:
        raise ValueError(f"template must be one of {sorted(TEMPLATES)} or a Template, got {template!r}")
    return TEMPLATES[template]


def mcq_text(question: str, options: list[str] | tuple[str, ...], template: str | Template = "vlmrobust",
             *, confidence: bool = False) -> str:
    """The text of the user turn for a multiple-choice question.

    ``confidence=True`` appends the template's verbalized-confidence request on
    a new line (seed 003 Table II's wording unless the template names another). Raises ``ValueError`` for an empty
    question, fewer than one or more than 26 options, or an empty option.
    """
    tpl = _template(template)
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    options = list(options)
    if tpl.shows_options:
        if not 1 <= len(options) <= len(LETTERS):
            raise ValueError(f"options must hold 1..{len(LETTERS)} strings, got {len(options)}")
        for i, opt in enumerate(options):
            if not isinstance(opt, str) or not opt.strip():
                raise ValueError(f"options[{i}] must be a non-empty string, got {opt!r}")
    parts = [tpl.head.format(question=question)]
    if tpl.shows_options:
        parts += [tpl.option.format(letter=LETTERS[i], text=o) for i, o in enumerate(options)]
    parts.append(tpl.tail)
    text = tpl.sep.join(parts)
    if confidence:
        text = text + "\n" + tpl.confidence
    return text


def _messages(text: str) -> list[dict]:
    return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]


def build_prompt(processor: Any, question: str, options: list[str], template: str | Template = "vlmrobust",
                 *, confidence: bool = False) -> str:
    """The full prompt string: :func:`mcq_text` rendered through the processor's chat template.

    Messages are ``[{"role": "user", "content": [{"type": "image"}, {"type": "text", ...}]}]``
    with ``add_generation_prompt=True``; the template's prefill (if any) follows.
    """
    tpl = _template(template)
    text = mcq_text(question, options, tpl, confidence=confidence)
    if getattr(processor, "chat_template", None) is None:
        raise ValueError(f"processor {type(processor).__name__} has no chat template; set processor.chat_template")
    prompt = processor.apply_chat_template(_messages(text), add_generation_prompt=True, tokenize=False)
    if isinstance(prompt, list):
        prompt = prompt[0]
    return prompt + tpl.prefill


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def continuation_ids(tokenizer: Any, prompt: str, continuation: str) -> list[int]:
    """Token ids the model produces for ``continuation`` right after ``prompt``.

    Tokenizes ``prompt + continuation`` and keeps what follows the prompt's own
    tokens, so the answer is tokenized in context ("A" vs " A", SentencePiece
    word boundaries). Falls back to the continuation alone when the tokenizer
    merges across the boundary.
    """
    head = _encode(tokenizer, prompt)
    full = _encode(tokenizer, prompt + continuation)
    if len(full) > len(head) and full[: len(head)] == head:
        return full[len(head):]
    return _encode(tokenizer, continuation)


def letter_token_ids(tokenizer: Any, prompt: str, k: int) -> list[int]:
    """The token id of each of the first ``k`` letters as the model's next token after ``prompt``.

    Letters are tokenized in context (:func:`continuation_ids`). After a prompt
    ending in whitespace (``"assistant\\n"``) the bare letter ``"A"`` is used;
    after any other character (``"ASSISTANT:"``, LLaVA-1.5 style) the
    space-prefixed ``" A"`` is preferred when it is one token, since that is what
    such models generate, with the bare letter as the fallback.

    Raises :class:`LetterTokenError` when a letter is not exactly one token in
    context, or two letters share a token: letter scoring needs one token per option.
    """
    if not isinstance(k, int) or not 1 <= k <= len(LETTERS):
        raise ValueError(f"k must be an int in [1, {len(LETTERS)}], got {k!r}")
    out: list[int] = []
    unk = getattr(tokenizer, "unk_token_id", None)
    spaced = not prompt[-1:].isspace()
    for letter in LETTERS[:k]:
        ids = continuation_ids(tokenizer, prompt, " " + letter) if spaced else []
        if len(ids) != 1 or ids[0] == unk:
            ids = continuation_ids(tokenizer, prompt, letter)
        if len(ids) != 1 or (unk is not None and ids[0] == unk):
            pieces = tokenizer.convert_ids_to_tokens(ids) if ids else []
            raise LetterTokenError(
                f"letter {letter!r} is not a single token after the prompt for tokenizer "
                f"{type(tokenizer).__name__} (tokens {pieces}); letter scoring needs one token per "
                "letter: use method='loglik' instead"
            )
        out.append(ids[0])
    if len(set(out)) != len(out):
        raise LetterTokenError(f"letters {LETTERS[:k]!r} do not map to distinct tokens: {out}")
    return out


