"""One package per paper's analysis, each mirroring one notebook.

| package | notebook | seed |
|---|---|---|
| :mod:`.selection` | 01_dataset_selection | 000 §IV (κ, novelty, the split) |
| :mod:`.ras` | 04_ras_attribution | 000 §V–VII (RAS, attribution, trajectories) |
| :mod:`.drift` | 05_representation_drift | 002 (flips, drift, Dirichlet energy, frequency) |
| :mod:`.visibility` | 06_visibility_blind_spots | 003 (blind-spot width W) |
| :mod:`.escalation` | 07_escalation_traversal | 001 (RCI, T-RCI, fragility, taxonomy) |
| :mod:`.card` | (the reliability card) | ImageNet-C's mCE, the answer-order control |

Each holds the paper's quantities in plainly named modules, ``claims.py`` (the paper's
claims checked on a run: ``claims_table``, with further rows in ``claims_*.py`` where they are many),
``exercises.py`` (the notebook's exercises, on :mod:`vlmrobust.exercises`) and, where a notebook's figures
are more than a few lines, ``figures.py``. Statistics they share live one floor below, in :mod:`vlmrobust.stats`.
"""
