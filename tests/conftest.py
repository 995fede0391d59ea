"""Shared test settings: one torch thread, outputs redirected away from the repository."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

try:  # keep timings steady on a shared two-core machine
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture
def out_roots(tmp_path, monkeypatch):
    """Point results and figures at a temporary folder for one test."""
    res, fig = tmp_path / "results", tmp_path / "figures"
    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(res))
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(fig))
    return res, fig
