"""A notebook run twice gives the same result tables and the same figure bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vlmrobust import nbtools

# Notebooks whose smoke run is cheap enough to execute twice here.
NOTEBOOKS = [nb for nb in ["00_embedded_default", "02_corruption_sweeps"] if nb in nbtools.notebook_ids()]


def _digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in {".png", ".pdf", ".parquet", ".csv", ".json"}
    }


def _run(nb_id: str, base: Path, monkeypatch) -> dict[str, str]:
    import papermill as pm

    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(base / "results"))
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(base / "figures"))
    prepared = nbtools.prepare(nb_id, base / f"{nb_id}.ipynb", nbtools.smoke_overrides(nb_id))
    pm.execute_notebook(str(prepared), str(base / "out.ipynb"), kernel_name="python3", progress_bar=False,
                        cwd=str(base))
    return _digest_tree(base / "results") | {f"fig/{k}": v for k, v in _digest_tree(base / "figures").items()}


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", NOTEBOOKS)
def test_notebook_runs_reproduce_bytes(nb_id, tmp_path, monkeypatch):
    first = _run(nb_id, tmp_path / "a", monkeypatch)
    second = _run(nb_id, tmp_path / "b", monkeypatch)
    assert any(k.startswith("fig/") for k in first), "the run wrote no figures"
    assert any(not k.startswith("fig/") for k in first), "the run wrote no result tables"
    assert first == second
