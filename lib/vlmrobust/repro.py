"""Seeding, derived random generators, the environment snapshot and the lock check.

Every random draw in the project comes from an explicit
:class:`numpy.random.Generator` made by :func:`rng` from a tuple of keys
(an item id, a perturbation name, a level, a seed, ...). The same keys give the
same stream in every process and on every run; global random state is never
used.

The environment is pinned by the repository's lock (:data:`LOCK_FILE`, pip
constraints written by ``make lock``). :func:`lock_drift` compares what is
installed with it, and every result folder's ``environment.json`` names the
lock's digest and any drift; ``python -m vlmrobust.repro`` prints the comparison
and exits non-zero on drift (``make lock-check``, the first step of ``make test``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import re
import sys
import warnings
from collections.abc import Hashable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np

from vlmrobust import paths

__all__ = ["key_to_int", "rng", "seed_everything", "env_snapshot", "save_env_snapshot", "stable_hash",
           "LOCK_FILE", "read_lock", "lock_digest", "lock_comparison", "lock_drift", "lock_status", "main"]

#: The lock: the exact version of every package the default install resolves (pip constraints).
LOCK_FILE: Path = paths.REPO_ROOT / "requirements-lock.txt"


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


def _normalise(name: str) -> str:
    """A distribution name as pip compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: str | os.PathLike | None = None) -> dict[str, str]:
    """The lock's pins, ``{normalised name: version}``.

    The lock is a pip constraints file of ``name==version`` lines (``#`` starts a
    comment). Any other line is an error that names it: the file is written by
    ``make lock``, and a hand edit that pip would read differently must not pass.
    """
    path = Path(path) if path is not None else LOCK_FILE
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if match is None:
            raise ValueError(f"{path}, line {number}: expected 'name==version', got {raw!r}")
        pins[_normalise(match[1])] = match[2]
    return pins


def lock_digest(path: str | os.PathLike | None = None) -> str:
    """SHA-256 of the lock file's bytes: names the environment a result was made in."""
    path = Path(path) if path is not None else LOCK_FILE
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _same_version(locked: str, installed: str) -> bool:
    """Equal versions; a local label (``+cpu``) is ignored where the pin has none, as in PEP 440's ``==``."""
    return installed == locked or ("+" not in locked and installed.split("+", 1)[0] == locked)


def lock_comparison(path: str | os.PathLike | None = None) -> list[tuple[str, str, str | None]]:
    """Every pin with what is installed: ``(name, locked, installed or None)``, by name."""
    return [(name, locked, _installed_version(name)) for name, locked in sorted(read_lock(path).items())]


def lock_drift(path: str | os.PathLike | None = None) -> dict[str, tuple[str, str]]:
    """Pinned packages installed at another version than the lock's: ``{name: (locked, installed)}``.

    A pin whose package is not installed is not drift: the lock also pins the
    pure-Python packages of the ``paper`` extra, which the default install leaves out.
    """
    return {name: (locked, installed) for name, locked, installed in lock_comparison(path)
            if installed is not None and not _same_version(locked, installed)}


def lock_status(path: str | os.PathLike | None = None) -> dict | None:
    """The lock a result was made under: file, digest, and drift (``None`` without a lock file)."""
    path = Path(path) if path is not None else LOCK_FILE
    if not path.is_file():
        return None
    drift = lock_drift(path)
    return {"file": path.name, "sha256": lock_digest(path),
            "drift": {name: {"locked": lo, "installed": inst} for name, (lo, inst) in drift.items()}}


def env_snapshot() -> dict:
    """What produced a result: Python, platform, package versions, threads, and the lock.

    ``lock`` names the lock file's digest and lists every pinned package
    installed at another version (``drift``; empty when the environment is the
    locked one).
    """
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
        "lock": lock_status(),
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
    drift = (snap["lock"] or {}).get("drift")
    if drift:
        warnings.warn(f"the environment differs from {LOCK_FILE.name}: " + _drift_text(drift)
                      + "; `make install` restores the locked versions", stacklevel=2)
    if timestamp:
        snap["written_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    path = directory / "environment.json"
    path.write_text(json.dumps(snap, indent=2, sort_keys=True) + "\n")
    return path


def _drift_text(drift: dict) -> str:
    return ", ".join(f"{name} {d['locked']} locked, {d['installed']} installed" for name, d in drift.items())


def main(argv: list[str] | None = None) -> int:
    """``python -m vlmrobust.repro [--all] [--lock FILE]``: compare the installed packages with the lock.

    Prints one line a differing package (``--all``: every pin) and a summary;
    exits 1 when any pinned package is installed at another version.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m vlmrobust.repro", description=main.__doc__)
    parser.add_argument("--lock", default=str(LOCK_FILE), help="the lock file (default: %(default)s)")
    parser.add_argument("--all", action="store_true", help="print every pin, not only those that differ")
    args = parser.parse_args(argv)
    lock = Path(args.lock)
    if not lock.is_file():
        print(f"no lock file at {lock}: `make lock` writes it")
        return 2
    try:
        rows = lock_comparison(lock)
    except ValueError as exc:
        print(f"the lock cannot be read: {exc}")
        return 2
    width = max(len(name) for name, _, _ in rows)
    counts = {"same": 0, "differs": 0, "not installed": 0}
    for name, locked, installed in rows:
        state = ("not installed" if installed is None
                 else "same" if _same_version(locked, installed) else "differs")
        counts[state] += 1
        if args.all or state == "differs":
            print(f"{name:<{width}}  locked {locked:<14} installed {installed or '-':<14} {state}")
    print(f"{lock.name} ({lock_digest(lock)[:12]}): {len(rows)} pins, {counts['same']} installed at the locked "
          f"version, {counts['differs']} at another, {counts['not installed']} not installed")
    if counts["differs"]:
        print("the environment has drifted from the lock: `make install` reinstalls the locked versions "
              "(or `make lock` records new ones, for a maintainer)")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
