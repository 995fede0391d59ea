"""Observations tables: each claim of a paper, what it reports, what a run measured, reproduced or not.

Every notebook closes with such a table. A check is a function of the run's
tables that returns a :class:`Check`; :func:`observations_table` stacks them
into a DataFrame with columns :data:`OBSERVATION_COLUMNS`. ``reproduced`` is
``True``/``False``, or ``None`` when the run holds no data to decide (a model
group absent, no trajectory of a class, ...): the ``measured`` text then says why.

Each analysis package's ``observations.py`` holds its paper's checks
(e.g. :mod:`vlmrobust.analysis.ras.observations` for seed 000's four).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["OBSERVATION_COLUMNS", "Check", "observations_table"]

OBSERVATION_COLUMNS = ("claim", "paper", "check", "measured", "reproduced")


@dataclass(frozen=True)
class Check:
    """One observation: the paper's claim and numbers, the rule applied here, what was measured."""

    claim: str
    paper: str
    check: str
    measured: str
    reproduced: bool | None


def observations_table(checks: Sequence[Check]) -> pd.DataFrame:
    """The observations table, one row per :class:`Check` (columns :data:`OBSERVATION_COLUMNS`)."""
    rows = [{c: getattr(k, c) for c in OBSERVATION_COLUMNS} for k in checks]
    df = pd.DataFrame(rows, columns=list(OBSERVATION_COLUMNS))
    df["reproduced"] = df["reproduced"].astype(object)
    return df
