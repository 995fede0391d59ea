"""Repository-anchored paths.

Everything is found from the repository root (the folder holding
``pyproject.toml`` above this package), never from the working directory, so a
notebook runs the same from JupyterLab, papermill or pytest. Two environment
variables move outputs without changing anything else:

* ``VLMROBUST_RESULTS_ROOT`` — where result tables and sweep shards go
  (default ``<repo>/results``);
* ``VLMROBUST_FIG_ROOT`` — where figures go (default ``<repo>/figures``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO_ROOT", "results_root", "fig_root", "results_dir", "fig_dir", "params_dir", "notebooks_dir"]


def _find_repo_root() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "lib" / "vlmrobust").is_dir():
            return parent
    # Installed non-editable: fall back to the working directory.
    return Path.cwd()


REPO_ROOT: Path = _find_repo_root()


def results_root() -> Path:
    """Root of result tables (``VLMROBUST_RESULTS_ROOT`` overrides the location)."""
    return Path(os.environ.get("VLMROBUST_RESULTS_ROOT", REPO_ROOT / "results"))


def fig_root() -> Path:
    """Root of figures (``VLMROBUST_FIG_ROOT`` overrides the location)."""
    return Path(os.environ.get("VLMROBUST_FIG_ROOT", REPO_ROOT / "figures"))


def results_dir(nb_id: str, create: bool = True) -> Path:
    """``results/<nb_id>/``, created on demand."""
    path = results_root() / nb_id
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def fig_dir(nb_id: str, create: bool = True) -> Path:
    """``figures/<nb_id>/``, created on demand."""
    path = fig_root() / nb_id
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def params_dir() -> Path:
    return REPO_ROOT / "params"


def notebooks_dir() -> Path:
    return REPO_ROOT / "notebooks"
