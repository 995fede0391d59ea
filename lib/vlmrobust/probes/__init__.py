"""Hidden-state probes riding on the forwards that scoring already runs (seed 002 §3.3, App. A.8).

* :mod:`~vlmrobust.probes.regimes` - the five regimes ``ctx_open``, ``ctx_mcq``, ``ans_open``,
  ``ans_mcq``, ``ans_mcq_free`` plus the vision-token mean and grid, for one condition;
* :mod:`~vlmrobust.probes.shard` - probe shards of the sweep engine: clean states, per-layer distances
  to the clean state, the control pairs and the noise floor (:data:`PROBE_COLUMNS`).

The hooks that read states off a forward, and the vision-token layout, are :mod:`vlmrobust.forward`
(below scoring and this package). Scoring reads ``ctx_mcq``, ``ans_mcq`` and the vision probes off its own forward
when asked (``vlmrobust.score.predict(..., hidden=True)``); plain scoring registers no hook.
"""

from .regimes import (
           PROBE_TEMPLATES,
           REGIMES,
           SCORING_REGIMES,
           VISION_PROBES,
           ProbeSpec,
           greedy_states,
           probe_condition,
)

__all__ = ["PROBE_TEMPLATES", "REGIMES", "SCORING_REGIMES", "VISION_PROBES", "ProbeSpec", "greedy_states",
           "probe_condition"]
