"""Reruns of notebooks give the same bytes: each is compared with its own smoke run (``make smoke``).

``make smoke`` executes every notebook once under ``params/smoke.yaml`` into
``$VLMROBUST_SMOKE_DIR`` and then runs this file, which executes the same prepared
notebooks once more in a fresh results folder and compares every result table
and figure byte for byte, so no notebook is executed twice only for this check.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from vlmrobust import nbtools

SMOKE = os.environ.get("VLMROBUST_SMOKE_DIR")
if not SMOKE:
    pytest.skip("run through `make smoke`, which sets VLMROBUST_SMOKE_DIR to its smoke run", allow_module_level=True)
SMOKE_DIR = Path(SMOKE)

# Notebooks whose smoke run is cheap enough to execute a second time.
NOTEBOOKS = [nb for nb in ["00_embedded_default", "02_corruption_sweeps"] if nb in nbtools.notebook_ids()]


def _digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in {".png", ".pdf", ".parquet", ".csv", ".json"}
    }


def _outputs(results: Path, figures: Path, nb_id: str) -> dict[str, str]:
    return _digest_tree(results / nb_id) | {f"fig/{k}": v for k, v in _digest_tree(figures / nb_id).items()}


@pytest.mark.parametrize("nb_id", NOTEBOOKS)
def test_rerun_reproduces_the_smoke_run_bytes(nb_id, tmp_path, monkeypatch):
    import papermill as pm

    first = _outputs(SMOKE_DIR / "results", SMOKE_DIR / "figures", nb_id)
    assert any(k.startswith("fig/") for k in first), "the smoke run wrote no figures"
    assert any(not k.startswith("fig/") for k in first), "the smoke run wrote no result tables"
    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path / "results"))
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(tmp_path / "figures"))
    pm.execute_notebook(str(SMOKE_DIR / f"{nb_id}.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3",
                        progress_bar=False, cwd=str(tmp_path))
    second = _outputs(tmp_path / "results", tmp_path / "figures", nb_id)
    assert first == second


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_every_result_folder_carries_its_environment_snapshot(nb_id):
    import json

    from vlmrobust import repro

    snap = json.loads((SMOKE_DIR / "results" / nb_id / "environment.json").read_text())
    assert snap["lock"]["sha256"] == repro.lock_digest()
    drift = {name: {"locked": lo, "installed": inst} for name, (lo, inst) in repro.lock_drift().items()}
    assert snap["lock"]["drift"] == drift
