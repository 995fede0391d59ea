"""The notebooks' exercises: the :class:`Result` every check returns, and the helpers several checks share.

An exercise's check reads a student's own run and says whether it shows the point.

Every notebook ends with a section ``## Exercises``: three to five exercises, each naming a parameter to
change (or a cell to edit), asking for a prediction first, and closed by a code cell that calls one function
the notebook's package, ``<package>.exercise_<NN>_<k>(...)`` for exercise ``k`` of notebook ``NN``.

The contract of every check:

* its arguments are the tables and parameter values the notebook has just computed (never a stored answer
  and never a new model run), so the verdict is computed from the student's own run;
* it returns a :class:`Result`: ``done`` says whether the run contains the exercise's change (a parameter
  set to the value the exercise asks for, a cell edited), ``shown`` whether the run shows what the exercise
  is about, and ``passed`` is both; ``expected`` states the rule, ``measured`` what this run gives;
* it never raises on a run without the change: the unchanged notebook reports "not tried yet" together with
  what the unchanged run shows, so the default, smoke, lesson and paper runs all execute every check cell;
* where the exercise's value may already be the notebook's own (the default run holds every organism and
  the extended visibility range, for instance), ``done`` also asks that the parameter differs from the
  *unchanged run* (:func:`vlmrobust.params.use_variant`'s ``UNCHANGED``: the defaults with the variant in
  force over them), through :func:`changed`, so that a run nobody changed never says PASSED. A parameter the
  notebook resolves (``models: []`` reads as the zoo's default organisms) is compared resolved:
  ``<package>.Params.resolve(UNCHANGED)``.

Its text (the cell's output) names the exercise, the rule, what the run measured and the verdict. Intervals
are 95 % normal-approximation intervals over questions unless a check says otherwise.

Each check lives beside its analysis, in the ``exercises`` module of the package its notebook imports (notebook
04's in :mod:`vlmrobust.analysis.ras.exercises`, notebook 00's in :mod:`vlmrobust.synth.exercises`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Result:
    """A check's verdict on one run: ``passed`` when the change was made and the run shows the point."""

    exercise: str
    title: str
    done: bool
    shown: bool
    expected: str
    measured: str
    todo: str

    @property
    def passed(self) -> bool:
        return bool(self.done and self.shown)

    @property
    def message(self) -> str:
        if self.passed:
            return "PASSED: your run shows it."
        if not self.done:
            return f"NOT TRIED YET: {self.todo}. (This run: {'it shows the point' if self.shown else 'not shown'}.)"
        return "NOT SHOWN: the change is made, but this run does not show the point (see the numbers above)."

    def __repr__(self) -> str:
        return (f"Exercise {self.exercise}: {self.title}\n  expected: {self.expected}\n"
                f"  your run: {self.measured}\n  verdict:  {self.message}")


def result(code: str, title: str, done, shown, expected: str, measured: str, todo: str) -> Result:
    return Result(code, title, bool(done), bool(shown), expected, measured, todo)


def changed(unchanged: Mapping[str, Any] | None, name: str, value: Any) -> bool:
    """Whether parameter ``name`` holds ``value`` where the unchanged run held another value.

    ``unchanged`` is the notebook's ``UNCHANGED`` (:func:`vlmrobust.params.use_variant`); ``None`` means the
    caller knows no unchanged run, and every value counts as a change. Lists compare as sets (the order of
    ``models`` changes no result the checks read).
    """
    if unchanged is None:
        return True
    if name not in unchanged:
        raise KeyError(f"the unchanged run has no parameter {name!r}")
    before = unchanged[name]
    if isinstance(value, (list, tuple)) and isinstance(before, (list, tuple)):
        return set(map(repr, value)) != set(map(repr, before))
    return value != before


def mean_ci(x) -> tuple[float, float, float]:
    """Mean of ``x`` with its 95 % normal interval (NaN bounds for fewer than two values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    m = float(x.mean()) if len(x) else np.nan
    half = Z95 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return m, m - half, m + half


def is_letter_model(name: str) -> bool:
    from .models import zoo

    return name not in zoo.names() or zoo.answer_format(name) == "letters"
