"""The notebooks' exercises: checks that read a student's own run and say whether it shows the point.

Every notebook ends with a section ``## Exercises``: three to five exercises, each naming a parameter to
change (or a cell to edit), asking for a prediction first, and closed by a code cell that calls one function
of this package, ``teaching.exercise_<NN>_<k>(...)`` for exercise ``k`` of notebook ``NN``.

The contract of every check:

* its arguments are the tables and parameter values the notebook has just computed (never a stored answer
  and never a new model run), so the verdict is computed from the student's own run;
* it returns a :class:`Result`: ``done`` says whether the run contains the exercise's change (a parameter
  set to the value the exercise asks for, a cell edited), ``shown`` whether the run shows what the exercise
  is about, and ``passed`` is both; ``expected`` states the rule, ``measured`` what this run gives;
* it never raises on a run without the change: the unchanged notebook reports "not tried yet" together with
  what the unchanged run shows, so the default, smoke, lesson and paper runs all execute every check cell.

Its text (the cell's output) names the exercise, the rule, what the run measured and the verdict. Intervals
are 95 % normal-approximation intervals over questions unless a check says otherwise.

The package, by notebook: :mod:`._core` holds the :class:`Result` type and the helpers several checks share,
:mod:`.groundwork` the checks of notebooks 00-03 (the testbed, the question selection, the corruptions,
scoring), :mod:`.findings` those of notebooks 04-07 (RAS, drift, visibility, escalation) and :mod:`.card` those
of notebook 08 (the reliability card). A new notebook's checks go into a module of their own and are re-exported
here.
"""

from __future__ import annotations

from ._core import Result
from .card import exercise_08_1, exercise_08_2, exercise_08_3
from .findings import (
    exercise_04_1,
    exercise_04_2,
    exercise_04_3,
    exercise_05_1,
    exercise_05_2,
    exercise_05_3,
    exercise_06_1,
    exercise_06_2,
    exercise_06_3,
    exercise_07_1,
    exercise_07_2,
    exercise_07_3,
)
from .groundwork import (
    exercise_00_1,
    exercise_00_2,
    exercise_00_3,
    exercise_01_1,
    exercise_01_2,
    exercise_01_3,
    exercise_02_1,
    exercise_02_2,
    exercise_02_3,
    exercise_03_1,
    exercise_03_2,
    exercise_03_3,
    exercise_03_4,
)

__all__ = [
    "Result",
    "exercise_00_1", "exercise_00_2", "exercise_00_3",
    "exercise_01_1", "exercise_01_2", "exercise_01_3",
    "exercise_02_1", "exercise_02_2", "exercise_02_3",
    "exercise_03_1", "exercise_03_2", "exercise_03_3", "exercise_03_4",
    "exercise_04_1", "exercise_04_2", "exercise_04_3",
    "exercise_05_1", "exercise_05_2", "exercise_05_3",
    "exercise_06_1", "exercise_06_2", "exercise_06_3",
    "exercise_07_1", "exercise_07_2", "exercise_07_3",
    "exercise_08_1", "exercise_08_2", "exercise_08_3",
]
