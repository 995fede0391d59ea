"""Training of the model organisms: small LLaVA VLMs trained on the synthetic world.

Pieces, in the order a reader meets them:

* :mod:`~vlmrobust.train.tokenizer` - word-level tokenizer (letters and digits single tokens) and chat template;
* :mod:`~vlmrobust.train.processor` - CLIP image processor and ``LlavaProcessor``;
* :mod:`~vlmrobust.train.modelcfg` - the LLaVA architecture from a small spec;
* :mod:`~vlmrobust.train.degrade` - the boxed object under fog and water (shared by streams and behaviours);
* :mod:`~vlmrobust.train.dense` - per-cell labels from the renderer's ground truth, for the vision tower;
* :mod:`~vlmrobust.train.stream` - training batches from ``vlmrobust.synth`` (example modes of the curriculum),
  built in a background process by :mod:`~vlmrobust.train.workers`, their texts as token ids by
  :mod:`~vlmrobust.train.encoding`;
* :mod:`~vlmrobust.train.probe` - the head that pre-trains the vision tower alone;
* :mod:`~vlmrobust.train.losses` - the answer-token loss, letter probabilities, the talker's calibration;
* :mod:`~vlmrobust.train.checkpoints` - checkpoints and the states a stage starts from;
* :mod:`~vlmrobust.train.trainer` - staged, resumable training;
* :mod:`~vlmrobust.train.evaluate` - held-out accuracy through the processor path;
* :mod:`~vlmrobust.train.card` - export to ``vlmrobust/zoo/<name>`` with the model card;
* :mod:`~vlmrobust.train.behaviours` - the behaviour checks of the control organisms and the ladder on the cards.

``python -m vlmrobust.train <config>`` reproduces an organism from its committed config.
A config that starts from another one (``init.from``) trains that parent first,
unless its run folder holds the checkpoint or an exported folder in the zoo holds
its final weights (recognised by :func:`~vlmrobust.train.config.config_digest`):
so a new organism built on a shipped one trains only its own stages.
"""

from __future__ import annotations

from .config import Stage, TrainConfig, config_dir, load_config
from .modelcfg import ModelSpec, build_model, count_parameters
from .processor import build_image_processor, build_processor, num_image_tokens, pixel_values
from .tokenizer import CHAT_TEMPLATE, SPECIAL_TOKENS, build_tokenizer, build_vocabulary

__all__ = [
    "CHAT_TEMPLATE", "SPECIAL_TOKENS", "ModelSpec", "Stage", "TrainConfig",
    "build_image_processor", "build_model", "build_processor", "build_tokenizer", "build_vocabulary",
    "config_dir", "count_parameters", "load_config", "num_image_tokens", "pixel_values", "train",
]


def train(*args, **kwargs):  # noqa: D103 - thin lazy wrapper
    """See :func:`vlmrobust.train.trainer.train`."""
    from .trainer import train as _train

    return _train(*args, **kwargs)
