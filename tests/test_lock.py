"""The lock: its file, the drift check against what is installed, and its place in the environment snapshot."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from importlib import metadata

import numpy as np
import pytest

from vlmrobust import paths, repro

LOCK = paths.REPO_ROOT / "requirements-lock.txt"


def _write(tmp_path, *lines):
    path = tmp_path / "lock.txt"
    path.write_text("\n".join(["# a comment", *lines, ""]))
    return path


def test_the_lock_pins_every_declared_dependency_and_the_build_tools():
    pins = repro.read_lock(LOCK)
    project = tomllib.loads((paths.REPO_ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    names = {re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~\[;]", spec, maxsplit=1)[0]).lower() for spec in declared}
    assert names - set(pins) == set(), "declared but not locked: run `make lock`"
    assert {"pip", "setuptools", "wheel", "torch"} <= set(pins)
    assert "+" not in pins["torch"]  # any build of the locked version matches (cpu, cu128, ...)
    assert "vlmrobust" not in pins and "torchvision" not in pins


def test_read_lock_normalises_names_and_names_a_bad_line(tmp_path):
    pins = repro.read_lock(_write(tmp_path, "Foo_Bar.baz==1.2.3  # trailing comment", "", "torch==2.13.0"))
    assert pins == {"foo-bar-baz": "1.2.3", "torch": "2.13.0"}
    with pytest.raises(ValueError, match=r"line 3: expected 'name==version', got 'numpy>=2'"):
        repro.read_lock(_write(tmp_path, "scipy==1.0", "numpy>=2"))


def test_drift_names_the_package_and_both_versions(tmp_path):
    same = _write(tmp_path, f"numpy=={np.__version__}", "no-such-package-here==1.0")
    assert repro.lock_drift(same) == {}  # a pin of a package that is not installed is not drift
    other = _write(tmp_path, "numpy==0.0.1", "no-such-package-here==1.0")
    assert repro.lock_drift(other) == {"numpy": ("0.0.1", np.__version__)}


def test_a_local_build_label_matches_a_pin_without_one_and_only_then():
    assert repro._same_version("2.13.0", "2.13.0+cpu")
    assert not repro._same_version("2.13.0+cu128", "2.13.0+cpu")
    assert not repro._same_version("2.13.0", "2.13.1+cpu")
    assert not repro._same_version("2.13", "2.13.0")


def test_the_command_prints_the_comparison_and_fails_on_drift(tmp_path, capsys):
    assert repro.main(["--lock", str(_write(tmp_path, f"numpy=={np.__version__}")), "--all"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"numpy\s+locked {re.escape(np.__version__)}\s+installed {re.escape(np.__version__)}\s+same", out)
    assert "1 pins, 1 installed at the locked version, 0 at another, 0 not installed" in out
    assert repro.main(["--lock", str(_write(tmp_path, "numpy==0.0.1"))]) == 1
    out = capsys.readouterr().out
    assert "locked 0.0.1" in out and f"installed {np.__version__}" in out and "drifted" in out
    assert repro.main(["--lock", str(_write(tmp_path, "numpy>=1"))]) == 2
    assert "cannot be read" in capsys.readouterr().out
    assert repro.main(["--lock", str(tmp_path / "absent.txt")]) == 2


def test_the_snapshot_names_the_lock_digest_and_warns_on_drift(tmp_path, monkeypatch):
    snap = json.loads(repro.save_env_snapshot(tmp_path / "a").read_text())
    assert snap["lock"]["sha256"] == hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert snap["lock"]["file"] == "requirements-lock.txt"
    fake = _write(tmp_path, "numpy==0.0.1")
    monkeypatch.setattr(repro, "LOCK_FILE", fake)
    with pytest.warns(UserWarning, match=r"numpy 0\.0\.1 locked, .* installed"):
        snap = json.loads(repro.save_env_snapshot(tmp_path / "b").read_text())
    assert snap["lock"]["drift"] == {"numpy": {"locked": "0.0.1", "installed": metadata.version("numpy")}}
    monkeypatch.setattr(repro, "LOCK_FILE", tmp_path / "absent.txt")
    assert json.loads(repro.save_env_snapshot(tmp_path / "c").read_text())["lock"] is None
