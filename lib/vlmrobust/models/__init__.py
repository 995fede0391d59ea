"""Loading vision-language models, building multiple-choice prompts, resolving letter tokens.

Every model reaches the scoring engine as a :class:`LoadedModel`: the
``transformers`` model, its processor and tokenizer, and the model's declared
**answer format** — ``"letters"`` (it answers with the option's letter, the
format of instruction-tuned VLMs) or ``"text"`` (it answers with the option's
text, the native format of the project's model organisms). The answer format
picks the default scoring method (:func:`default_method`).

Prompts follow one contract: the user turn holds one image followed by a text,
rendered through the processor's chat template with the generation prompt
appended. The text comes from :func:`mcq_text`; its default template
``"vlmrobust"`` is the one the organisms are trained on::

    {question}
    A. {opt0}
    B. {opt1}
    Answer with the option's letter from the given choices directly.

The papers' templates are available by name (:data:`TEMPLATES`):
``"seed002_mcq"`` (seed 002, App. A.3, ``ans_mcq`` regime), ``"seed003"``
(seed 003, Table II, with the assistant turn prefilled with ``"Answer:"``),
and ``"open"`` (open answers, used to train the organisms).
"""

from . import zoo
from .loading import (
                      REMOTE_CODE,
                      LoadedModel,
                      ModelLoadError,
                      default_method,
                      fingerprint,
                      hub_cached,
                      hub_reachable,
                      image_only,
                      load,
                      offline,
)
from .prompts import (
                      CONFIDENCE_REQUEST,
                      TEMPLATES,
                      LetterTokenError,
                      Template,
                      build_prompt,
                      continuation_ids,
                      letter_token_ids,
                      mcq_text,
)

__all__ = [
    "CONFIDENCE_REQUEST", "REMOTE_CODE", "TEMPLATES", "LetterTokenError", "LoadedModel",
    "ModelLoadError", "Template", "build_prompt", "continuation_ids", "default_method", "fingerprint",
    "hub_cached", "hub_reachable", "image_only", "letter_token_ids", "load", "mcq_text", "offline", "zoo",
]
