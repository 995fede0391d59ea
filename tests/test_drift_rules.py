"""Notebook 05's claim rules (:mod:`vlmrobust.analysis.drift.rules`): each says "reproduced" on a clear positive
and not on draws from its null; their calibration at the default size is checked in ``tests/test_rules.py``."""

from __future__ import annotations

import time

import numpy as np
import pytest

from vlmrobust.analysis.drift import rules as R
from vlmrobust.analysis.drift.itemboot import TEXT
from vlmrobust.stats.claims import REPRODUCED
from vlmrobust.stats.nullsim import false_pass_bound

BY_NAME = {r.name.split(" ")[0]: r for r in R.RULES}

#: A clear positive for each rule: the paper's effect where it is strong enough at the default size, a larger one
#: (or, for PGD, more attacked items) where the rule has little power there.
CLEAR = {
    "05.1": R._disconnect(0.8, 0.1),
    "05.2": R._disconnect(0.8, 0.1),
    "05.3": R._text_lead({**R.PAPER_IFR, TEXT: 0.6}),
    "05.4": BY_NAME["05.4"].positive,
    "05.5": R._scale((0.2, 0.6, 0.9), (0.1, 0.4, 0.4), (0.2, 0.6, 0.6), (0.02, 0.1, 0.1)),
    "05.6": R._scale((0.2, 0.6, 0.9), (0.1, 0.4, 0.4), (0.2, 0.6, 0.6), (0.02, 0.1, 0.1)),
    "05.7": BY_NAME["05.7"].positive,
    "05.8": R._conservative(-2.0),
    "05.9": BY_NAME["05.9"].positive,
    "05.10": BY_NAME["05.10"].positive,
    "05.11": BY_NAME["05.11"].positive,
    "05.12": R._ordering({TEXT: 0.6, "random_text": 0.3, "box_overlay": 0.05}),
    "05.13": R._dirichlet(60.0),
    "05.14": R._pgd(0.95, 1.0, n=60),
    "05.15": BY_NAME["05.15"].positive,
}


def test_every_rule_has_a_clear_positive_and_a_notebook_name():
    assert set(CLEAR) == set(BY_NAME) and len(R.RULES) == 15
    assert all(r.name.startswith("05.") and r.positive is not None for r in R.RULES)


def _passes(draw, n: int, seed: int) -> int:
    return sum(draw(np.random.default_rng(np.random.SeedSequence([seed, k]))) == REPRODUCED for k in range(n))


@pytest.mark.parametrize("key", sorted(BY_NAME, key=lambda k: int(k.split(".")[1])))
def test_rule_reproduced_on_a_clear_positive_not_on_its_null(key):
    assert _passes(CLEAR[key], 10, 1) >= 8, key
    assert _passes(BY_NAME[key].null, 40, 2) <= false_pass_bound(40), key  # 5 % with the binomial slack


def test_rules_are_cheap():
    """200 draws of a rule take well under 10 s (the calibration test draws every rule 200 times)."""
    t = time.perf_counter()
    for r in R.RULES:
        for k in range(10):
            r.null(np.random.default_rng(k))
    assert (time.perf_counter() - t) / len(R.RULES) * 20 < 10
