"""Notebook 08's claim rules against their nulls, by simulation (:mod:`vlmrobust.stats.nullsim`).

Each rule calls the decision function the claims table calls on the run's data
(:func:`.agreement.rank_test`, :func:`.claims.smallest_check`), here on data drawn
at the notebook's default size:

* **08.1-08.4**, the lenses rank the models alike: 9 units (the default run's
  evaluated organisms). Null: two unrelated read-outs (independent normal values,
  so unrelated rankings). Positive: the two read-outs share a latent correlation of
  0.8 (no paper gives an effect size; 0.8 is a strong agreement), which the test
  passes in only part of the draws: at 9 models a rank correlation decides
  only when |ρ| ≥ 0.68 (at 14 models, 0.54).
* **08.5**, the corruptions: 6 units (the default ImageNet-C conditions: the default
  sweep's five and pixelate), :data:`.agreement.MIN_UNITS`, the fewest at which the
  rule decides at all (at 5 units only a perfect ranking clears the permutation test,
  so the card refuses to decide there).
* **08.6**, the construction check (the error-aware control has the smallest W):
  14 models whose W differ between models (sd 0.3 in log10 metres) and are measured
  with a standard error of 0.15 (about the default run's interval widths). Null: the
  control's W drawn like the others'. Positive: it lies 0.6 below the smallest
  other. ``holds`` counts as a pass.
"""

from __future__ import annotations

import numpy as np

from ...stats.claims import NOT_REPRODUCED, REPRODUCED, UNDECIDED
from ...stats.nullsim import RuleCheck
from .agreement import rank_test
from .claims import smallest_check

__all__ = ["RULES", "N_MODELS", "N_CORRUPTIONS", "N_CARD_MODELS"]

#: The default run's evaluated organisms, ImageNet-C corruptions, and models on the card (evaluated + control).
N_MODELS, N_CORRUPTIONS, N_CARD_MODELS = 9, 6, 14
LATENT_R = 0.8


def _pairs(rng: np.random.Generator, n: int, r: float) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal(n)
    return x, r * x + np.sqrt(1 - r * r) * rng.standard_normal(n)


def _agreement(n: int, r: float):
    def draw(rng: np.random.Generator) -> str:
        x, y = _pairs(rng, n, r)
        return rank_test(x, y, 1, rng=rng)["verdict"]
    return draw


def _smallest(shift: float | None):
    def draw(rng: np.random.Generator) -> str:
        true = rng.normal(0.6, 0.3, N_CARD_MODELS)
        if shift is not None:
            true[0] = true[1:].min() - shift
        est = true + rng.normal(0.0, 0.15, N_CARD_MODELS)
        out = smallest_check(est, est + 1.96 * 0.15, 0)
        return {"holds": REPRODUCED, "fails": NOT_REPRODUCED, "undecided": UNDECIDED}[out]
    return draw


_NULL = "unrelated rankings: two independent read-outs"
_POS = f"read-outs with latent correlation {LATENT_R}"
RULES = tuple(
    RuleCheck(name, _agreement(N_MODELS, 0.0), _agreement(N_MODELS, LATENT_R), _NULL, _POS,
              f"{N_MODELS} evaluated models")
    for name in ("08.1 drift and RAS loss rank the models alike",
                 "08.2 W (internal, fog) and the overconfidence share rank the models alike",
                 "08.3 RCI_mu and mCE rank the models alike",
                 "08.4 flip rate and RAS loss rank the models alike")
) + (
    RuleCheck("08.5 drift and RAS loss rank the corruptions alike", _agreement(N_CORRUPTIONS, 0.0),
              _agreement(N_CORRUPTIONS, LATENT_R), _NULL, _POS + " (never decided below 6 units)",
              f"{N_CORRUPTIONS} corruptions"),
    RuleCheck("08.6 construction: the error-aware control has the smallest W (abstain, fog)", _smallest(None),
              _smallest(0.6), "the control's W drawn like the other models' (sd 0.3, se 0.15)",
              "the control's W 0.6 below the smallest other", f"{N_CARD_MODELS} models"),
)
