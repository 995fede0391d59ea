"""Notebook 04's claim rules against their null by simulation (:mod:`vlmrobust.stats.nullsim`).

The null of every row is **no vision** (:data:`~vlmrobust.analysis.ras.claims.NULL`): the story of
:func:`~vlmrobust.analysis.ras.simulate.simulate_probs` with its corruption effect switched off
(``damage = 0``) and scoring noise on every condition, clean included, so that the clean and corrupted
scorings of a question are exchangeable draws (the noisy case of a blind twin, which is harder for a rule than
the blind twin's exact zeros). The size is the notebook's default: 9 evaluated organisms, 90 questions
(10 per task family, 2 of 9 families with two options, the rest four), the 5 default ImageNet-C corruptions at
severities 1–5, 1,000 bootstrap resamples. Each draw takes the scoring noise from U(0.25, 1.0) (logit SD
relative to the items' spread).

Positive draws are the story with a corruption effect at about the paper's sizes (Table III: Q_cc ΔC
+0.019, Fig. 7: R_c falling by about 0.1 over the severities): the default story (flattening and noise
growing with severity), the flattening-only story for Obs. 4, and for Obs. 3 a story in which half the
models collapse onto a fixed wrong option under corruption (overconfident loss) and the others flatten
(hesitant correction); for Obs. 1(b) half the models only flatten (answers kept, support lost) and half only
add noise (answers flip). Every draw goes through the same ``decide_*`` function the notebook calls.
"""

from __future__ import annotations

import numpy as np

from ...stats.nullsim import RuleCheck
from . import claims
from .cube import from_probs
from .simulate import simulate_probs

__all__ = ["RULES", "DEFAULT_SIZE", "draw_cube"]

#: The notebook's default size: models, questions, option counts per family, corruption strengths, levels.
DEFAULT_SIZE = {"n_models": 9, "n_items": 90, "k_choices": (4, 4, 2, 4, 4, 4, 2, 4, 4),
                "family_strength": (1.0, 1.3, 0.8, 0.7, 0.9), "levels": (1, 2, 3, 4, 5), "n_boot": 1000}
SIZE = f"{DEFAULT_SIZE['n_models']} models × 90 questions × 5 corruptions × 5 severities, 1,000 question resamples"


def draw_cube(rng: np.random.Generator, *, damage: float, scoring_noise: float = 0.0, **story):
    """One simulated data set at the default size, as a cube (``story``: the other knobs of
    :func:`~vlmrobust.analysis.ras.simulate.simulate_probs`)."""
    s = DEFAULT_SIZE
    P, K, y = simulate_probs(s["n_items"], s["n_models"], np.asarray(s["family_strength"]), list(s["levels"]),
                             k_choices=s["k_choices"], damage=damage, scoring_noise=scoring_noise,
                             rng=rng, **story)
    return from_probs(P, K, y, len(s["family_strength"]), s["levels"])


def _null(decide):
    def draw(rng: np.random.Generator) -> str:
        cube = draw_cube(rng, damage=0.0, scoring_noise=float(rng.uniform(0.25, 1.0)))
        return decide(cube, n_boot=DEFAULT_SIZE["n_boot"], ci=0.95, rng=rng).verdict
    return draw


def _positive(decide, **story):
    def draw(rng: np.random.Generator) -> str:
        return decide(draw_cube(rng, **story), n_boot=DEFAULT_SIZE["n_boot"], ci=0.95, rng=rng).verdict
    return draw


_NULL_TEXT = "no vision: clean and corrupted scorings exchangeable (story with damage 0, scoring noise U(0.25, 1))"


def _alt(a: float, b: float) -> np.ndarray:
    """Per-model knob: ``a`` for the even-numbered models (0, 2, ...) and ``b`` for the odd-numbered."""
    return np.where(np.arange(DEFAULT_SIZE["n_models"]) % 2 == 0, a, b)


RULES = (
    RuleCheck("04.1a still-correct pairs lose support", _null(claims.decide_support_loss),
              _positive(claims.decide_support_loss, damage=1.0), _NULL_TEXT,
              "the default story (flattening and noise growing with severity)", SIZE),
    RuleCheck("04.1b response and RAS rankings disagree", _null(claims.decide_rank_mismatch),
              _positive(claims.decide_rank_mismatch, damage=1.0, corruption_noise=_alt(0.0, 1.5),
                        flatten=_alt(0.9, 0.0)), _NULL_TEXT,
              "five models only flatten (answers kept, support lost), four only add noise (answers flip, "
              "little support lost)", SIZE),
    RuleCheck("04.2 accuracy gains are not structural gains", _null(claims.decide_gains),
              _positive(claims.decide_gains, damage=1.0), _NULL_TEXT,
              "the default story (flattening and noise growing with severity)", SIZE),
    RuleCheck("04.3 same answer paths differ in support", _null(claims.decide_paths),
              _positive(claims.decide_paths, damage=1.0, corruption_noise=_alt(0.0, 0.2), flatten=_alt(0.0, 1.2),
                        pull=_alt(6.0, 0.0)), _NULL_TEXT,
              "five models collapse onto a fixed wrong option under corruption, four flatten", SIZE),
    RuleCheck("04.4 severity helps wrong answers", _null(claims.decide_severity),
              _positive(claims.decide_severity, damage=1.0, corruption_noise=0.3), _NULL_TEXT,
              "flattening growing with severity (little fresh noise)", SIZE),
)
