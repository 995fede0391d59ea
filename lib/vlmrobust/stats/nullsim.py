"""Rules checked by simulation: how often a claim's rule says "reproduced" when the claim is false.

A claim's rule is only as good as its false-pass rate. Each analysis package lists
its rules in ``rules.py`` as :class:`RuleCheck` entries: a function that draws one
data set **from the null** (what the claim being false looks like, at the
notebook's default size: permuted labels, split halves, equal units, a model
that cannot see) and returns the rule's verdict on it, and one that draws at the
paper's effect size. :func:`run_check` draws each ``draws`` times (one child seed per
draw, :class:`numpy.random.SeedSequence`) and reports the false-pass rate and the
power.

**The bound.** A rule is calibrated when it says ``reproduced`` on at most 5 % of
null draws. With a finite number of draws the count is binomial, so a test
accepts up to :func:`false_pass_bound` passes: the 99th percentile of
Binomial(draws, 0.05) (18 of 200, 37 of 500). A rule whose true rate is 5 % exceeds
the bound with probability under 1 %. The slack is the Monte-Carlo error of the
check: a rule whose true rate is 10 % stays within the bound with probability
0.37 at 200 draws and 0.03 at 500, so the tests draw 500 times where a draw is
cheap, and every rule's measured rate is printed beside its bound
(``python -m vlmrobust.analysis.rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from .claims import REPRODUCED

__all__ = ["RuleCheck", "RuleResult", "false_pass_bound", "run_check", "run_checks", "results_frame"]

Draw = Callable[[np.random.Generator], str]


@dataclass(frozen=True)
class RuleCheck:
    """One claim's rule with its null and positive simulations.

    ``name``: ``"04.1 …"`` (notebook and claim); ``null``/``positive``: one draw → the rule's verdict;
    ``null_text``/``positive_text``: what is drawn, in words; ``size``: the notebook's default size in words.
    """

    name: str
    null: Draw
    positive: Draw | None
    null_text: str
    positive_text: str
    size: str


@dataclass(frozen=True)
class RuleResult:
    name: str
    draws: int
    false_passes: int
    bound: int
    power: float
    null_text: str
    positive_text: str
    size: str

    @property
    def false_pass_rate(self) -> float:
        return self.false_passes / self.draws

    @property
    def calibrated(self) -> bool:
        return self.false_passes <= self.bound


def false_pass_bound(draws: int, alpha: float = 0.05, slack: float = 0.01) -> int:
    """Largest number of ``reproduced`` verdicts out of ``draws`` null draws accepted as a rate of at most
    ``alpha``: the ``1 - slack`` quantile of Binomial(draws, alpha)."""
    if draws < 1:
        raise ValueError("draws must be at least 1")
    return int(sps.binom.ppf(1.0 - slack, draws, alpha))


def _passes(draw: Draw, draws: int, seed: int) -> int:
    children = np.random.SeedSequence(seed).spawn(draws)
    return sum(draw(np.random.default_rng(c)) == REPRODUCED for c in children)


def run_check(check: RuleCheck, *, draws: int = 200, seed: int = 0, power_draws: int | None = None) -> RuleResult:
    """Draw ``check``'s null ``draws`` times (and its positive ``power_draws`` times, default ``draws``)."""
    fp = _passes(check.null, draws, seed)
    pd_ = draws if power_draws is None else power_draws
    power = _passes(check.positive, pd_, seed + 1) / pd_ if check.positive is not None and pd_ else float("nan")
    return RuleResult(check.name, draws, fp, false_pass_bound(draws), power, check.null_text, check.positive_text,
                      check.size)


def run_checks(checks: Sequence[RuleCheck], **kw) -> list[RuleResult]:
    return [run_check(c, **kw) for c in checks]


def results_frame(results: Sequence[RuleResult]):
    """The results as a table: rule, size, null, false passes, bound, rate, power, calibrated."""
    import pandas as pd

    return pd.DataFrame([{"rule": r.name, "size": r.size, "null": r.null_text, "false_passes": r.false_passes,
                          "draws": r.draws, "bound": r.bound, "false_pass_rate": r.false_pass_rate,
                          "positive": r.positive_text, "power": r.power, "calibrated": r.calibrated}
                         for r in results])
