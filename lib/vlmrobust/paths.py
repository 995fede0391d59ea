"""Repository-anchored paths.

Everything is found from the repository root (the folder holding
``pyproject.toml`` above this package), never from the working directory, so a
notebook runs the same from JupyterLab, papermill or pytest. Runs write only to
ignored folders; two environment variables move them without changing anything
else:

* ``VLMROBUST_RESULTS_ROOT`` — where result tables, the shared shard cache and
  (by default) figures go (default ``<repo>/results``);
* ``VLMROBUST_FIG_ROOT`` — where figures go (default ``<results root>/figures``).

The committed figures of the default runs live in :data:`COMMITTED_FIGURES`
(``<repo>/figures``); only ``make figures`` writes there, by pointing
``VLMROBUST_FIG_ROOT`` at it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO_ROOT", "COMMITTED_FIGURES", "results_root", "fig_root", "results_dir", "fig_dir", "shards_dir",
           "assets_dir", "params_dir", "notebooks_dir"]


def _find_repo_root() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "lib" / "vlmrobust").is_dir():
            return parent
    # Installed non-editable: fall back to the working directory.
    return Path.cwd()


REPO_ROOT: Path = _find_repo_root()
#: The committed figures of the default runs (rewritten only by ``make figures``).
COMMITTED_FIGURES: Path = REPO_ROOT / "figures"


def results_root() -> Path:
    """Root of result tables (``VLMROBUST_RESULTS_ROOT`` overrides the location)."""
    return Path(os.environ.get("VLMROBUST_RESULTS_ROOT") or REPO_ROOT / "results")


def fig_root() -> Path:
    """Root of figures (``VLMROBUST_FIG_ROOT`` overrides the default ``<results root>/figures``)."""
    return Path(os.environ.get("VLMROBUST_FIG_ROOT") or results_root() / "figures")


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


def shards_dir(create: bool = True) -> Path:
    """The sweep shard cache shared by every notebook (``<results root>/shards``), created on demand.

    Shards are content-keyed (:mod:`vlmrobust.sweep`), so notebooks that ask for the
    same model, items and condition read the same file.
    """
    path = results_root() / "shards"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def assets_dir(create: bool = True) -> Path:
    """Derived images and depth maps that items point to (``<results root>/assets``), created on demand.

    Files there are named by the hash of their content (:mod:`vlmrobust.assets`), so
    an item's reference changes whenever its pixels do, and sweep shard keys with it.
    """
    path = results_root() / "assets"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def params_dir() -> Path:
    return REPO_ROOT / "params"


def notebooks_dir() -> Path:
    return REPO_ROOT / "notebooks"
