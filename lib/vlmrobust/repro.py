"""Seeding, derived random generators and the environment snapshot.

Every random draw in the project comes from an explicit
:class:`numpy.random.Generator` made by :func:`rng` from a tuple of keys
(an item id, a perturbation name, a level, a seed, ...). The same keys give the
same stream in every process and on every run; global random state is never
used.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import sys
from collections.abc import Hashable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = ["key_to_int", "rng", "seed_everything", "env_snapshot", "save_env_snapshot", "stable_hash"]


def stable_hash(obj: object, n_hex: int = 16) -> str:
    """A process-independent hash of a JSON-serialisable object (sorted keys)."""
    payload = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":")).encode()
    return hashlib.sha256(payload).hexdigest()[:n_hex]


def key_to_int(*keys: Hashable) -> int:
    """Map a tuple of keys to a 128-bit integer, identically in every process.

    Python's ``hash`` is salted per process, so keys are hashed with SHA-256 of
    their ``repr`` instead (ints, floats, strings and tuples of them have stable
    reprs).
    """
    digest = hashlib.sha256(repr(tuple(keys)).encode()).digest()
    return int.from_bytes(digest[:16], "little")


def rng(*keys: Hashable) -> np.random.Generator:
    """A PCG64 generator derived from ``keys``, e.g. ``rng(item_id, "fog", 3, seed)``.

    Different key tuples give statistically independent streams (through
    :class:`numpy.random.SeedSequence`); equal tuples give identical streams.
    """
    return np.random.default_rng(np.random.SeedSequence(key_to_int(*keys)))


def seed_everything(seed: int, deterministic_torch: bool = True) -> None:
    """Seed the libraries that keep global state (Python, NumPy legacy, torch).

    Project code never draws from global state; this only protects third-party
    code that does (e.g. weight initialisation in ``transformers``).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - third-party code may use it
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    torch.manual_seed(seed)
    if deterministic_torch:
        torch.use_deterministic_algorithms(True, warn_only=True)


_SNAPSHOT_PACKAGES = (
    "vlmrobust", "numpy", "scipy", "pandas", "pyarrow", "torch", "transformers",
    "tokenizers", "pillow", "matplotlib", "imagecorruptions-imaug", "papermill",
)


def env_snapshot() -> dict:
    """What produced a result: Python, platform, package versions, threads."""
    versions = {}
    for name in _SNAPSHOT_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    snap = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "packages": versions,
    }
    try:
        import torch

        snap["torch_threads"] = torch.get_num_threads()
        snap["cuda"] = torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        pass
    return snap


def save_env_snapshot(directory: str | os.PathLike, timestamp: bool = False) -> Path:
    """Write ``environment.json`` beside a notebook's results and return its path.

    The timestamp is off by default so that re-running gives the same bytes.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    snap = env_snapshot()
    if timestamp:
        snap["written_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    path = directory / "environment.json"
    path.write_text(json.dumps(snap, indent=2, sort_keys=True) + "\n")
    return path
