"""The exercises of notebook 02 (corruptions as physics): checks that read the student's own run and say whether it
shows the point. The contract every check keeps is in :mod:`vlmrobust.exercises`; the notebook calls them
through its face, ``corrupt.exercise_02_<k>(...)``.
"""

from __future__ import annotations

import pandas as pd

from ..exercises import Result, result

__all__ = ["exercise_02_1", "exercise_02_2", "exercise_02_3"]


def exercise_02_1(water_fog: pd.DataFrame, convention: str) -> Result:
    """The contrast threshold rescales fog and water alike: water stays the harsher arm."""
    r = water_fog["water_over_fog"]
    return result("02.1", "the 5 % convention", convention == "5%", bool((r < 1).all()),
                   "water transmits less luminance than fog at every visibility (water_over_fog < 1)",
                   f"convention {convention}: water_over_fog from {r.max():.3f} to {r.min():.3f}",
                   'set convention: "5%"')

def exercise_02_2(table7: pd.DataFrame, fog_items) -> Result:
    """Break 'an ImageNet-C fog severity is tens of metres' with scenes whose depth is 2 m."""
    fams = sorted({it.family for it in fog_items})
    v1 = float(table7.loc[table7["severity"] == 1, "median_v_m"].iloc[0])
    return result("02.2", "an ImageNet-C severity has no fixed visibility", fams == ["chart"], v1 < 10,
                   "on chart boards 2 m away severity 1 is worth under 10 m (tens of metres on ground scenes)",
                   f"Table VII scenes: {', '.join(fams)}; severity 1: median V_eq {v1:.1f} m",
                   'edit the Table VII cell: fog_families = ["chart"]')

def exercise_02_3(table7: pd.DataFrame) -> Result:
    """Few scenes, same camera: the spread of V_eq stays small."""
    n = int(table7["n_images"].max())
    spread = float(table7["p90_over_p10"].max())
    return result("02.3", "the camera, not the scene, sets V_eq", n <= 10, spread < 1.5,
                   "P90/P10 of V_eq below 1.5 at every severity (seed 003 found 6-8 on COCO)",
                   f"{n} scenes; largest P90/P10 {spread:.3f}", "set n_fog_scenes: 10")
