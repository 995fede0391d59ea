"""The shared vocabulary: table columns, option letters, abstain wordings, zoo roles.

Every module, test and notebook imports these names from here; nobody types
them again. This module imports nothing of the project (it is the ground floor).

The item table (one row per multiple-choice question; :data:`ITEM_COLUMNS`):

===========  ======================================================================
column       meaning
===========  ======================================================================
item_id      unique string id
source       ``"synth"`` or the dataset's name
task         task family (``colour``, ``count``, ... or the benchmark's own)
category     the benchmark category the family stands for
question     question text, without options
options      list of K option texts (2 <= K <= :data:`MAX_OPTIONS`), shown as letters A, B, ...
answer_idx   index of the correct option in ``options``
image_ref    where the image comes from: ``synth://...``, a file path, or ``b64:...``
depth_ref    where metric ray distance comes from (``synth://...``) or ``None``
abstain_idx  index of the abstain option, -1 when there is none
meta         JSON text with ground truth and provenance
===========  ======================================================================

The predictions table (one tidy row per ``(model, item_id, perturbation, level,
method)``; :data:`PRED_COLUMNS` keeps the order):

=============== ======= ==============================================================================
column          type    meaning
=============== ======= ==============================================================================
model           str     model name (zoo name, folder name or hub id)
item_id         str     the item's id (unique in the item table)
task            str     task family
category        str     finer category within the family
perturbation    str     corruption name; :data:`CLEAN` at level 0
level           int     severity level, 0 = clean
param           float   physical parameter of the level (sigma, metres, ...); NaN for clean
method          str     one of :data:`METHODS`
template        str     prompt template name (:data:`vlmrobust.models.TEMPLATES`)
seed            int     seed of the condition (corruption and sampling randomness)
K               int     number of options
answer_idx      int     index of the correct option
probs           list    the option distribution (K floats, sums to 1)
pred_idx        int     argmax of probs, ties to the lowest index
correct         bool    pred_idx == answer_idx
confidence      float   max(probs): the option-renormalised probability of the chosen option
token_prob      float   the chosen option's probability over the whole vocabulary (its letter token for
                        ``letter``; exp of its log-likelihood for ``loglik``, of the per-token mean for
                        ``loglik_norm``; the base method's for ``verbal``); NaN for ``sample``
margin          float   top minus runner-up score, in the method's units (logits, log-probs, frequencies)
abstained       bool    the prediction is the abstain option (abstain_idx >= 0)
verbal_conf     float   verbalized confidence in [0, 1] (``verbal`` rows); NaN otherwise or when unparsed
unparsed_rate   float   share of unparseable samples (``sample`` rows); NaN otherwise
logits          list    raw option scores (letter logits / log-likelihoods / counts) or None
=============== ======= ==============================================================================
"""

from __future__ import annotations

__all__ = [
    "LETTERS", "MAX_OPTIONS", "OPTION_LETTERS", "ITEM_COLUMNS", "ITEM_KEY_COLUMNS", "PRED_COLUMNS",
    "METHODS", "ANSWER_FORMATS", "ABSTAIN_TEXTS", "ROLES", "CLEAN",
]

#: Option letters in order: option ``k`` of a question is shown as ``LETTERS[k]``.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Items carry 2..MAX_OPTIONS options (VLMEvalKit's A-E columns).
MAX_OPTIONS = 5
#: The letters an item's options can take.
OPTION_LETTERS = LETTERS[:MAX_OPTIONS]

ITEM_COLUMNS = (
    "item_id", "source", "task", "category", "question", "options", "answer_idx",
    "image_ref", "depth_ref", "abstain_idx", "meta",
)
#: The item columns that change a prediction (hashed into sweep shard keys).
ITEM_KEY_COLUMNS = ("item_id", "task", "category", "question", "options", "answer_idx", "image_ref",
                    "depth_ref", "abstain_idx")

PRED_COLUMNS = (
    "model", "item_id", "task", "category", "perturbation", "level", "param", "method", "template",
    "seed", "K", "answer_idx", "probs", "pred_idx", "correct", "confidence", "token_prob", "margin",
    "abstained", "verbal_conf", "unparsed_rate", "logits",
)
#: Scoring methods: letter logits, option log-likelihood (summed, length-normalised), sampling, verbalized.
METHODS = ("letter", "loglik", "loglik_norm", "sample", "verbal")
#: How a model answers: with the option's letter, or with the option's text.
ANSWER_FORMATS = ("letters", "text")
#: Perturbation name of the clean condition (level 0).
CLEAN = "clean"

#: The two abstain wordings of seed 003 (Table II: main, and the generic "I don't know").
ABSTAIN_TEXTS: dict[str, str] = {
    "unclear": "I cannot tell, the image is too unclear to decide.",
    "dont_know": "I don't know",
}

#: Roles of zoo organisms (``vlmrobust.json`` key ``role``): the evaluated panel, the selectors of
#: notebook 01, the size ladder, behavioural controls (an organism that abstains, one that talks),
#: and training-only trunks and test configs (never exported to the zoo).
ROLES = ("evaluated", "selector", "ladder", "control", "trunk", "test")
