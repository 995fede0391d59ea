"""Scoring engine: option distributions from letter logits, log-likelihood, sampling and verbal confidence.

* :func:`predict` scores an item table with one model under one condition and
  returns predictions rows (columns documented in :mod:`vlmrobust.score.table`);
* :func:`letter_scores` — letter logits at the answer position (seed 000 §V-A);
* :func:`loglik_scores` — option log-likelihood and its length-normalised form
  with one shared-prefix forward per item (seed 002 §3.1);
* :func:`sample_scores` — empirical option frequencies of n samples at
  temperature T (seed 000 suppl. III-B);
* :func:`verbal_scores` — verbalized confidence ``Confidence: N`` (seed 003 Table II);
* :func:`summary` — accuracy, mean confidence, abstain and parse rates per group;
  :func:`severity_curves` (clean as level 0 of every curve) and :func:`method_agreement`;
* :func:`probs_matrix` — the predictions table's ``probs`` column as a checked, zero-padded matrix;
* :func:`resolve_engine` — which forward scores a model (``engine``: ``"auto"``, ``"hf"``, ``"fast"``):
  the fast path of the zoo's organisms (:mod:`.fast`: :func:`fast_letter_scores`,
  :func:`fast_loglik_scores`) or the model's own Hugging Face forward;
* :mod:`.figures` — notebook 03's figures (``score.figures.severity_bands`` and the others).
"""

from ..forward import ScoringError
from . import figures
from ._core import OptionScores, argmax_low, margin_of, softmax
from .exercises import exercise_03_1, exercise_03_2, exercise_03_3, exercise_03_4
from .fast import ENGINES, fast_letter_scores, fast_loglik_scores, resolve_engine
from .generate import greedy_texts, sample_scores, verbal_scores
from .methods import letter_scores, loglik_full_forward, loglik_scores
from .parsing import parse_answer, parse_confidence
from .probs import probs_matrix
from .summaries import method_agreement, severity_curves, summary
from .table import METHODS, predict

__all__ = [
    "ENGINES", "METHODS", "OptionScores", "ScoringError", "argmax_low", "fast_letter_scores", "fast_loglik_scores",
    "figures", "greedy_texts", "letter_scores",
    "loglik_full_forward", "loglik_scores", "margin_of", "method_agreement", "parse_answer", "parse_confidence",
    "predict", "probs_matrix", "resolve_engine", "severity_curves",
    "sample_scores", "softmax", "summary", "verbal_scores",
    "exercise_03_1", "exercise_03_2", "exercise_03_3", "exercise_03_4",
]
