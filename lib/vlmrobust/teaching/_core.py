"""The exercises' shared pieces: the :class:`Result` every check returns and the helpers several checks use.

``Result`` is re-exported as ``vlmrobust.teaching.Result``; the helpers are private to the package.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _result(code: str, title: str, done, shown, expected: str, measured: str, todo: str) -> Result:
    return Result(code, title, bool(done), bool(shown), expected, measured, todo)


def _mean_ci(x) -> tuple[float, float, float]:
    """Mean of ``x`` with its 95 % normal interval (NaN bounds for fewer than two values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    m = float(x.mean()) if len(x) else np.nan
    half = Z95 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return m, m - half, m + half


def _is_letter_model(name: str) -> bool:
    from ..models import zoo

    return name not in zoo.names() or zoo.answer_format(name) == "letters"
