"""Shared pieces of notebook 01's claim rows (seed 000): a row's subject, and a row from a decision of
:mod:`.decisions` (value, interval, verdict, and what would decide it when undecided)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...stats.claims import UNDECIDED, Claim, decide_text, interval_text
from .decisions import Decision


def _subject(models: Sequence[str], what: str = "selectors") -> str:
    return f"{what}: {', '.join(models)}" if len(models) else ""


def _row(claim: str, paper: str, subject: str, null: str, test: str, d: Decision, measured: str, *,
         unit: str = "items", digits: int = 3) -> Claim:
    decide = ""
    if d.verdict == UNDECIDED:
        decide = decide_text(d.n, d.value, d.lo, d.hi, d.low, d.high, unit=unit) if np.isfinite(d.value) else \
            f"no interval at this size (now {d.n:,} {unit}): more items or resamples"
    return Claim(claim, paper, subject, null, test, d.value, d.lo, d.hi,
                 f"{interval_text(d.value, d.lo, d.hi, digits)}; {measured}", d.verdict, decide)
