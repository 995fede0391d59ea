"""Claims tables: each claim of a paper, the subject it was tried on, its null, its test, the verdict.

Every notebook with claims closes with one table of :class:`Claim` rows
(:func:`claims_frame`, columns :data:`CLAIM_COLUMNS`), written as ``claims.csv``.
A row says

* **claim** and **paper**: the claim in a few words, and the paper's words and numbers;
* **subject**: which organisms it was tried on. Paper claims use the run's
  *evaluated* models only; controls, built to behave a given way, appear only in
  rows of section ``"construction"`` (checks that the controls do what they were
  built to do), never pooled into a paper claim;
* **null**: what the claim being false looks like, in one line (a statement a
  simulation can draw from: "RAS of still-correct pairs centred at 0",
  "rankings unrelated", "a model that cannot see", never just "zero" where
  noise alone clears zero);
* **test**: the rule, e.g. "95 % interval of the paired difference wholly above 0.05";
* **value**, **lo**, **hi**: the measured statistic and its 95 % interval; **measured**:
  the same in words, with the context a reader needs;
* **verdict**: one of :data:`VERDICTS`;
* **decide**: for an undecided row, the size that would decide it (:func:`size_to_decide`).

**Verdicts.** ``reproduced``: the interval lies inside the acceptance region (the
claim's side of its null). ``not reproduced``: it lies wholly outside. ``undecided``:
it straddles the edge. ``by construction``: the row holds because of how the
synthetic world or an organism was built (stated, never counted as a
reproduction). ``no subject``: the run has no model with the property the claim is
about (or no data of the kind the claim needs); ``measured`` says which. A claim
made of several parts combines them with :func:`combine`.

Every rule is calibrated by simulation (:mod:`vlmrobust.stats.nullsim`): at the
notebook's default size it says ``reproduced`` on at most 5 % of draws from its null.

Each analysis package's ``claims.py`` builds its notebook's table (``claims_table``), with
further rows in ``claims_*.py`` modules where they are many.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["CLAIM_COLUMNS", "VERDICTS", "SECTIONS", "REPRODUCED", "NOT_REPRODUCED", "UNDECIDED",
           "BY_CONSTRUCTION", "NO_SUBJECT", "Claim", "claims_frame", "verdict", "combine", "interval_text",
           "size_to_decide", "decide_text", "no_subject"]

REPRODUCED, NOT_REPRODUCED, UNDECIDED = "reproduced", "not reproduced", "undecided"
BY_CONSTRUCTION, NO_SUBJECT = "by construction", "no subject"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, UNDECIDED, BY_CONSTRUCTION, NO_SUBJECT)
SECTIONS = ("paper", "construction")

CLAIM_COLUMNS = ("section", "claim", "paper", "subject", "null", "test", "value", "lo", "hi", "measured",
                 "verdict", "decide")


@dataclass(frozen=True)
class Claim:
    """One row of a claims table (see the module text for each field).

    Checked when built: the verdict is one of :data:`VERDICTS`; a ``reproduced``
    row has a finite interval, a stated null and a subject; an ``undecided`` row
    says what would decide it.
    """

    claim: str
    paper: str
    subject: str
    null: str
    test: str
    value: float
    lo: float
    hi: float
    measured: str
    verdict: str
    decide: str = ""
    section: str = "paper"

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.claim!r}: verdict {self.verdict!r} is not one of {VERDICTS}")
        if self.section not in SECTIONS:
            raise ValueError(f"claim {self.claim!r}: section {self.section!r} is not one of {SECTIONS}")
        if self.verdict == REPRODUCED:
            missing = [k for k in ("null", "test", "subject") if not str(getattr(self, k)).strip()]
            if missing:
                raise ValueError(f"claim {self.claim!r} is 'reproduced' without a stated {', '.join(missing)}")
            if not (np.isfinite(self.lo) and np.isfinite(self.hi)):
                raise ValueError(f"claim {self.claim!r} is 'reproduced' without a finite interval")
        if self.verdict == UNDECIDED and not self.decide.strip():
            raise ValueError(f"claim {self.claim!r} is 'undecided' without saying what would decide it")


def no_subject(claim: str, paper: str, null: str, test: str, why: str, *, section: str = "paper") -> Claim:
    """A row whose claim has no subject in this run; ``why`` names the missing property or data."""
    nan = float("nan")
    return Claim(claim, paper, "", null, test, nan, nan, nan, why, NO_SUBJECT, section=section)


def claims_frame(rows: Sequence[Claim]) -> pd.DataFrame:
    """The claims table, one row per :class:`Claim` (columns :data:`CLAIM_COLUMNS`)."""
    df = pd.DataFrame([{c: getattr(k, c) for c in CLAIM_COLUMNS} for k in rows], columns=list(CLAIM_COLUMNS))
    for c in ("value", "lo", "hi"):
        df[c] = df[c].astype(float)
    return df


def verdict(lo: float, hi: float, low: float = -np.inf, high: float = np.inf) -> str:
    """``reproduced`` when ``[lo, hi]`` lies inside the acceptance region ``[low, high]``, ``not reproduced``
    when wholly outside, ``undecided`` otherwise (and for a NaN bound)."""
    if np.isnan(lo) or np.isnan(hi):
        return UNDECIDED
    if lo >= low and hi <= high:
        return REPRODUCED
    if hi < low or lo > high:
        return NOT_REPRODUCED
    return UNDECIDED


def combine(parts: Iterable[str]) -> str:
    """A claim of several parts: any part not reproduced → ``not reproduced``; all reproduced → ``reproduced``;
    all without subject (or no parts) → ``no subject``; all by construction → ``by construction``; otherwise
    ``undecided``. Parts without a subject are left out when others have one."""
    parts = [p for p in parts]
    for p in parts:
        if p not in VERDICTS:
            raise ValueError(f"not a verdict: {p!r}")
    real = [p for p in parts if p != NO_SUBJECT]
    if not real:
        return NO_SUBJECT
    if NOT_REPRODUCED in real:
        return NOT_REPRODUCED
    if all(p == REPRODUCED for p in real):
        return REPRODUCED
    if all(p == BY_CONSTRUCTION for p in real):
        return BY_CONSTRUCTION
    return UNDECIDED


def size_to_decide(n: int, x: float, lo: float, hi: float, low: float = -np.inf, high: float = np.inf) -> float:
    """The sample size at which an interval like ``[lo, hi]`` around ``x`` would clear the nearer edge of
    ``[low, high]``: half-widths shrink as 1/√n, so ``n · (half-width / distance)²``. ``inf`` when ``x`` sits
    on an edge (or is NaN); ``n`` itself when the row is already decided."""
    if not all(np.isfinite(v) for v in (x, lo, hi)) or n <= 0:
        return math.inf
    edges = [e for e in (low, high) if np.isfinite(e)]
    if not edges:
        return math.inf
    dist = min(abs(x - e) for e in edges)
    half = max(x - lo, hi - x)
    if dist == 0:
        return math.inf
    return float(max(n, math.ceil(n * (half / dist) ** 2)))


def decide_text(n: int, x: float, lo: float, hi: float, low: float = -np.inf, high: float = np.inf, *,
                unit: str = "items") -> str:
    """``about 2,400 items (now 600)``: :func:`size_to_decide` in words for the ``decide`` column."""
    need = size_to_decide(n, x, lo, hi, low, high)
    if not np.isfinite(need) or need > 1000 * max(n, 1):
        return (f"the estimate sits on the edge of the acceptance region: no practical size decides it "
                f"(now {n:,} {unit})")
    return f"about {int(need):,} {unit} (now {n:,}) if the estimate stays where it is"


def interval_text(x: float, lo: float, hi: float, digits: int = 2) -> str:
    """``0.42 [0.30, 0.55]``; ``n/a`` for NaN."""
    if not np.isfinite(x):
        return "n/a"
    body = f"{x:.{digits}f}"
    return body + (f" [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(lo) and np.isfinite(hi) else "")
