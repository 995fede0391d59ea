"""Hidden-state probes riding on the forwards that scoring already runs (seed 002 §3.3, App. A.8).

* :mod:`~vlmrobust.probes.layout` - vision-token positions and grid shape from the processor's image
  tokens, for the organisms (LLaVA) and Qwen2-VL, Idefics3, LLaVA-OneVision, Gemma 3;
* :mod:`~vlmrobust.probes.capture` - forward hooks on every decoder layer (pre-norm residual stream,
  layers ``0..L``) and the final norm (post-norm, the paper's read-out), reduced inside the hooks;
* :mod:`~vlmrobust.probes.regimes` - the five regimes ``ctx_open``, ``ctx_mcq``, ``ans_open``,
  ``ans_mcq``, ``ans_mcq_free`` plus the vision-token mean and grid, for one condition;
* :mod:`~vlmrobust.probes.shard` - probe shards of the sweep engine: clean states, per-layer distances
  to the clean state, the control pairs and the noise floor (:data:`PROBE_COLUMNS`).

Scoring reads ``ctx_mcq``, ``ans_mcq`` and the vision probes off its own forward when asked
(``vlmrobust.score.predict(..., hidden=True)``); plain scoring registers no hook.
"""

from .capture import Recorder, feed, probed_prompt
from .layout import ProbeError, VisionLayout, decoder_parts, image_token_id, vision_layout
from .regimes import (
           PROBE_TEMPLATES,
           REGIMES,
           SCORING_REGIMES,
           VISION_PROBES,
           ProbeSpec,
           greedy_states,
           probe_condition,
)

__all__ = ["PROBE_TEMPLATES", "REGIMES", "SCORING_REGIMES", "VISION_PROBES", "ProbeError", "ProbeSpec", "Recorder",
           "VisionLayout", "decoder_parts", "feed", "greedy_states", "image_token_id", "probe_condition",
           "probed_prompt", "vision_layout"]
