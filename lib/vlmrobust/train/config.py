"""Training configurations: one YAML file per organism (or shared trunk) under ``train/configs/``.

A config names the organism, its seed, its architecture (:class:`ModelSpec`)
and an ordered list of stages. ``init`` starts from another config's
checkpoint (after a named stage, or its end) so that organisms share the
expensive early stages (one vision-tower pre-training reused by several
organisms); the parent is trained first when its checkpoint is missing, so
``python -m vlmrobust.train <config>`` always reproduces the organism from
configs and seeds alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..paths import REPO_ROOT
from ..schema import ROLES
from .modelcfg import ModelSpec
from .stream import StreamSpec

__all__ = ["Stage", "TrainConfig", "load_config", "config_dir", "config_path", "config_digest", "PARTS", "ROLES",
           "BEHAVIOURS"]

PARTS = ("vision", "projector", "lm", "probe")
#: Behaviours of the ``control`` organisms (``meta.behaviour``).
BEHAVIOURS = ("aware", "talker", "aware-err", "abstainer")
KINDS = ("vision", "lm")


@dataclass(frozen=True)
class Stage:
    """One stage: ``kind`` "vision" trains the tower with :class:`VisionProbe`, "lm" the whole LLaVA.

    ``until`` = {"mode": m, "acc": a, "min_steps": n} ends the stage early once the
    running accuracy on mode ``m`` reaches ``a`` (after at least ``n`` steps).
    ``lr_scale`` scales the learning rate of named parts (e.g. {"vision": 0.1}).
    ``calibration`` = {"items": n, "every": k, "bins": b} sets how a stage with ``talk``
    examples makes its confidence targets: every ``k`` steps the organism answers ``n``
    fresh items, and the target of an answer whose letter probability falls in one of
    ``b`` equal-width bins is the share of that bin's answers that were right
    (:func:`vlmrobust.train.trainer.calibration_table`); {"constant": N} states N
    whatever the answer (a habit, not a calibration: the negative control).
    """

    name: str
    kind: str
    steps: int
    stream: StreamSpec
    train: tuple[str, ...]
    lr: float = 2e-3
    warmup: int = 50
    schedule: str = "cos"
    weight_decay: float = 0.01
    until: dict | None = None
    lr_scale: dict = field(default_factory=dict)
    calibration: dict | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"stage {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        bad = set(self.train) - set(PARTS)
        if bad or not self.train:
            raise ValueError(f"stage {self.name!r}: train must be a non-empty subset of {PARTS}, got {self.train}")
        if self.schedule not in ("cos", "const"):
            raise ValueError(f"stage {self.name!r}: schedule must be 'cos' or 'const', got {self.schedule!r}")
        if not isinstance(self.steps, int) or self.steps < 1:
            raise ValueError(f"stage {self.name!r}: steps must be a positive int, got {self.steps!r}")
        if (self.kind == "vision") != self.stream.probe:
            raise ValueError(f"stage {self.name!r}: vision stages (and only they) use probe batches")
        talks = self.stream.mix.get("talk", 0) > 0
        if talks != (self.calibration is not None):
            raise ValueError(f"stage {self.name!r}: a stream with talk examples needs calibration "
                             "({items, every, bins} or {constant}), and only such a stream takes it")
        if self.calibration is not None:
            cal = self.calibration
            const = cal.get("constant")
            if const is not None:
                ok = set(cal) == {"constant"} and isinstance(const, int) and 0 <= const <= 99
            else:
                ok = set(cal) == {"items", "every", "bins"} and all(
                    isinstance(cal[k], int) and cal[k] > 0 for k in ("items", "every", "bins"))
            if not ok:
                raise ValueError(f"stage {self.name!r}: calibration must be {{items, every, bins}} of positive "
                                 f"ints or {{constant: N}} with N in [0, 99], got {cal}")


@dataclass(frozen=True)
class TrainConfig:
    """One organism's config. ``meta`` holds extra keys for the zoo folder's ``vlmrobust.json``
    (``ladder_rung`` for role ``ladder``, ``behaviour`` for role ``control``); like the name and the
    role it does not change the weights, so it stays out of :func:`config_digest`."""

    name: str
    seed: int
    model: ModelSpec
    stages: tuple[Stage, ...]
    role: str = "evaluated"
    answer_format: str = "letters"
    description: str = ""
    init: dict | None = None
    log_every: int = 20
    ckpt_every: int = 100
    meta: dict = field(default_factory=dict)
    path: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if not isinstance(self.meta, dict):
            raise ValueError(f"meta must be a mapping, got {self.meta!r}")
        rung = self.meta.get("ladder_rung")
        if self.role == "ladder" and (not isinstance(rung, int) or isinstance(rung, bool) or rung < 0):
            raise ValueError(f"a ladder config needs meta.ladder_rung (an int >= 0, small to large), got {rung!r}")
        if self.role == "control" and self.meta.get("behaviour") not in BEHAVIOURS:
            raise ValueError(f"a control config needs meta.behaviour in {BEHAVIOURS}, "
                             f"got {self.meta.get('behaviour')!r}")
        if self.answer_format not in ("letters", "text"):
            raise ValueError(f"answer_format must be 'letters' or 'text', got {self.answer_format!r}")
        if not self.stages and not self.init:
            raise ValueError("a config without stages must start from another one (init.from)")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")


def config_dir() -> Path:
    """The folder of committed training configs."""
    return Path(__file__).resolve().parent / "configs"


def config_path(name_or_path: str | Path) -> Path:
    """A config file from a path or a committed config's name."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    q = config_dir() / f"{name_or_path}.yaml"
    if q.is_file():
        return q
    known = sorted(x.stem for x in config_dir().glob("*.yaml"))
    raise ValueError(f"config {str(name_or_path)!r} is neither a file nor a committed config; known: {known}")


def _families(value: Any) -> tuple[str, ...]:
    if value in (None, "all"):
        from ..synth import FAMILIES

        return tuple(FAMILIES)
    if isinstance(value, str):
        value = [value]
    return tuple(value)


def _stage(d: dict, defaults: dict) -> Stage:
    d = {**d}
    stream = {**defaults.get("stream", {}), **d.pop("stream", {})}
    stream["families"] = _families(stream.get("families"))
    stream["probe"] = d.get("kind") == "vision"
    for key in ("hint_prob", "describe_prob", "k_probs", "corruptions", "distance", "visibility_range",
                "visibility_arms", "abstain_kinds"):
        if key in stream:
            stream[key] = tuple(stream[key])
    d["train"] = tuple(d.get("train", ()))
    for key in ("lr", "weight_decay"):
        if key in d:
            d[key] = float(d[key])
    return Stage(stream=StreamSpec(**stream), **d)


def load_config(source: str | Path | dict) -> TrainConfig:
    """Parse a YAML config (path, committed name, or an already-loaded dict)."""
    import yaml

    path = ""
    if isinstance(source, dict):
        raw = dict(source)
    else:
        p = config_path(source)
        path = str(p)
        raw = yaml.safe_load(p.read_text())
    if not isinstance(raw, dict):
        raise ValueError("config must be a mapping")
    allowed = set(TrainConfig.__dataclass_fields__) | {"defaults"}
    unknown = set(raw) - allowed
    if unknown:
        raise ValueError(f"unknown config keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    defaults = raw.pop("defaults", {}) or {}
    stages = tuple(_stage(s, defaults) for s in (raw.pop("stages", None) or []))
    model = ModelSpec.from_dict(raw.pop("model", {}) or {})
    return TrainConfig(stages=stages, model=model, path=path, **raw)


def config_digest(config: str | Path | dict | TrainConfig) -> str:
    """A hash of everything that determines the organism's weights: its stages, model, seed and
    ``init``, and recursively the digests of the configs it starts from.

    Names (its own and its parents'), role, ``meta``, description, answer format and file path are left out (they do
    not change the weights), and so are settings left at their defaults (a new
    option whose default keeps the old behaviour keeps every digest);
    :func:`vlmrobust.train.trainer.train` uses the digest to take a parent's
    final weights from the zoo when its run folder is absent.
    """
    import hashlib
    import json
    from dataclasses import MISSING, fields

    def set_fields(obj: Any) -> dict:
        out = {}
        for f in fields(obj):
            v = getattr(obj, f.name)
            default = f.default if f.default is not MISSING else (
                f.default_factory() if f.default_factory is not MISSING else MISSING)
            if default is MISSING or v != default:
                out[f.name] = set_fields(v) if hasattr(v, "__dataclass_fields__") else v
        return out

    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    d = set_fields(cfg)
    d["stages"] = [set_fields(st) for st in cfg.stages]
    for key in ("name", "role", "meta", "description", "answer_format", "path", "log_every", "ckpt_every"):
        d.pop(key, None)
    if cfg.init:  # the parents by content, not by name
        d["init"] = {k: (config_digest(v) if k in ("from", "vision_from") else v) for k, v in cfg.init.items()}
    text = json.dumps(d, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def runs_root() -> Path:
    """Where training runs write checkpoints and logs (``<repo>/runs``, git-ignored)."""
    return REPO_ROOT / "runs"
