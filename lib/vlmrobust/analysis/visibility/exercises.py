"""The exercises of notebook 06 (seeing in fog): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``visibility.exercise_06_<k>(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...exercises import Result, changed, result

__all__ = ["exercise_06_1", "exercise_06_2", "exercise_06_3"]


def _signal(tables: pd.DataFrame, model: str, task: str, signal: str) -> pd.DataFrame:
    rows = tables[(tables["model"] == model) & (tables["task"] == task) & (tables["signal"] == signal)]
    return rows.drop(columns=["model", "task", "signal"]).set_index("arm")

def exercise_06_1(tables_9_10: pd.DataFrame, models_param: Sequence[str] | None = None,
                  unchanged: Mapping[str, Any] | None = None) -> Result:
    """Break the abstain blind spot on purpose with the organism built to abstain.

    Done when ``aware`` is among the run's models and the ``models`` parameter differs from the unchanged
    run's (the default run already holds every control: there the check says "not tried yet").
    """
    models = list(dict.fromkeys(tables_9_10["model"]))
    last = tables_9_10.columns[-1]
    murky = {m: float(_signal(tables_9_10, m, "t2", "abstain")[last].min()) for m in models}
    others = [m for m in models if m != "aware"]
    shown = "aware" in murky and murky["aware"] >= 0.5 and all(murky[m] <= 0.1 for m in others)
    done = "aware" in models and changed(unchanged, "models", models_param)
    return result("06.1", "an organism that knows when it cannot see", done, shown,
                   f"at V = {last} m aware abstains on t2 in both arms (>= 0.5) while the others do not (<= 0.1)",
                   "t2 abstain rate at the murkiest level (smaller arm): "
                   + ", ".join(f"{m} {v:.2f}" for m, v in murky.items()),
                   "add aware to models (on the lesson variant, which leaves it out)")

def exercise_06_2(tables_9_10: pd.DataFrame, models_param: Sequence[str] | None = None,
                  unchanged: Mapping[str, Any] | None = None) -> Result:
    """The negative control: a stated confidence that never moves cannot follow visibility.

    Done when ``talker-90`` is among the run's models and the ``models`` parameter differs from the unchanged
    run's.
    """
    models = list(dict.fromkeys(tables_9_10["model"]))
    spans = {m: float(np.nanmax(v) - np.nanmin(v)) for m in models
             if np.isfinite(v := _signal(tables_9_10, m, "t2", "verbal").to_numpy(dtype=float)).any()}
    shown = "talker-90" in spans and spans["talker-90"] < 0.02 and any(s >= 0.05 for s in spans.values())
    done = "talker-90" in models and changed(unchanged, "models", models_param)
    return result("06.2", "the constant talker", done, shown,
                   "talker-90's verbalized confidence spans < 0.02 over every level while another model's moves "
                   "(>= 0.05)", "range of the t2 verbalized confidence over the levels: "
                   + (", ".join(f"{m} {s:.2f}" for m, s in spans.items()) or "no parseable verbal confidence"),
                   "add talker-90 to models (on the lesson variant, which leaves it out)")

def exercise_06_3(spots: pd.DataFrame, visibility_range: str, unchanged: Mapping[str, Any] | None = None) -> Result:
    """The extended visibility range finds where accuracy starts to fall, above the paper's 250 m.

    Done when ``visibility_range`` is ``"extended"`` and the unchanged run's was not (the default run's is).
    """
    acc = spots.drop_duplicates(["model", "task", "arm"])
    located = acc[acc["v_acc_kind"] == "="]
    above = int((located["v_acc"] > 250).sum())
    done = visibility_range == "extended" and changed(unchanged, "visibility_range", visibility_range)
    return result("06.3", "a visibility range that starts high enough", done, above >= 1,
                   "at least one accuracy crossing V_acc is located (not a bound) above 250 m",
                   f"visibility_range {visibility_range}: {len(located)} of {len(acc)} V_acc located, "
                   f"{above} above 250 m; "
                   f"{int((acc['v_acc_kind'] == '≥').sum())} only bounded (already below half-way at the first "
                   "level)", 'set visibility_range: "extended" (on the lesson variant, whose range is the paper\'s)')
