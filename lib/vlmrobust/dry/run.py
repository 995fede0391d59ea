"""Run the paper variants offline: merge each ``paper.yaml`` with ``params/paper_dry.yaml`` and execute it.

:func:`plan` reads the mapping and returns, per notebook, the merged parameters
(the variant's values with hub ids replaced by twin folders and data paths by
fabricated files, then the mapping's ``common`` and ``scale`` values) and the
twins it needs; :func:`fabricate` writes the data and :func:`build_twins` the twins; :func:`execute`
runs the notebooks with papermill, each to ``<out>/executed/<id>.ipynb`` with
results and figures under ``<out>/results``, and reports the architectures each
one ran. ``python -m vlmrobust.dry`` is the command line (``make paper-dry``).

Choices: ``common`` keys are applied only where the notebook has the parameter;
``scale`` keys must exist in their notebook (a typo is an error, not a no-op);
a hub id that the mapping does not name is an error before anything runs, so
the dry run never reaches for the hub.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .. import nbtools, paths

__all__ = ["MappingError", "NotebookPlan", "read_mapping", "fabricate", "plan", "build_twins", "execute",
           "twin_folder_name"]


class MappingError(ValueError):
    """``params/paper_dry.yaml`` is malformed or does not cover a variant."""


@dataclass
class NotebookPlan:
    """One notebook's dry run: merged parameters, the twins (hub id -> spec) and data paths it uses."""

    nb_id: str
    params: dict[str, Any]
    twins: dict[str, dict] = field(default_factory=dict)
    data: list[str] = field(default_factory=list)


def mapping_path() -> Path:
    return paths.params_dir() / "paper_dry.yaml"


def read_mapping(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The mapping file, checked: ``models`` (hub id -> {twin, seed?, remote_code?}), ``data``, ``common``,
    ``scale``."""
    path = Path(path) if path else mapping_path()
    raw = yaml.safe_load(path.read_text()) or {}
    if not isinstance(raw, dict):
        raise MappingError(f"{path}: must hold a mapping")
    unknown = set(raw) - {"models", "data", "common", "scale"}
    if unknown:
        raise MappingError(f"{path}: unknown section(s) {sorted(unknown)}")
    out = {k: dict(raw.get(k) or {}) for k in ("models", "data", "common", "scale")}
    for hub_id, spec in out["models"].items():
        if not isinstance(spec, dict) or not isinstance(spec.get("twin"), str):
            raise MappingError(f"{path}: models[{hub_id!r}] must be {{twin: <name>, seed: <int>}}, got {spec!r}")
        if set(spec) - {"twin", "seed", "remote_code"}:
            raise MappingError(f"{path}: models[{hub_id!r}] has unknown key(s) "
                               f"{sorted(set(spec) - {'twin', 'seed', 'remote_code'})}")
    for nb_id, section in out["scale"].items():
        if nb_id not in nbtools.notebook_ids():
            raise MappingError(f"{path}: scale section {nb_id!r} names no notebook")
        if not isinstance(section, dict):
            raise MappingError(f"{path}: scale[{nb_id!r}] must be a mapping")
    return out


def twin_folder_name(hub_id: str) -> str:
    """The twin folder of a hub id (``Qwen/Qwen3-VL-2B-Instruct`` -> ``twin-Qwen3-VL-2B-Instruct``): its model id."""
    return "twin-" + hub_id.rsplit("/", 1)[-1]


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_FILE_SUFFIXES = (".tsv", ".json", ".parquet", ".yaml", ".csv", ".jpg", ".png")


def _looks_like_hub_id(value: str) -> bool:
    """``owner/name`` with no file suffix and not under ``data/`` (how the variants write data paths)."""
    return bool(_HUB_ID.match(value)) and not value.startswith("data/") and not value.lower().endswith(_FILE_SUFFIXES)


def _substitute(value: Any, table: dict[str, str], seen: set[str]) -> Any:
    if isinstance(value, str):
        if value in table:
            seen.add(value)
            return table[value]
        return value
    if isinstance(value, list):
        return [_substitute(v, table, seen) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, table, seen) for k, v in value.items()}
    return value


def _hub_ids_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if _looks_like_hub_id(value) else []
    if isinstance(value, list):
        return [h for v in value for h in _hub_ids_in(v)]
    if isinstance(value, dict):
        return [h for v in value.values() for h in _hub_ids_in(v)]
    return []


def fabricate(out: str | os.PathLike) -> dict[str, str]:
    """Write the fabricated data under ``<out>/data``: fabricated name -> path."""
    from . import fabricate as fab

    return {k: str(v) for k, v in fab.fabricate_all(Path(out).resolve() / "data").items()}


def plan(out: str | os.PathLike, data_files: dict[str, str], only: list[str] | None = None,
         mapping: dict | None = None) -> list[NotebookPlan]:
    """The dry run of every notebook that has a ``paper.yaml`` (or of ``only``); ``data_files`` from
    :func:`fabricate`."""
    out = Path(out).resolve()
    mapping = mapping or read_mapping()
    table = {h: str(out / "twins" / twin_folder_name(h)) for h in mapping["models"]}
    for path, name in mapping["data"].items():
        if name not in data_files:
            raise MappingError(f"{mapping_path().name}: data[{path!r}] = {name!r} is not a fabricated file; "
                               f"fabricated: {sorted(data_files)}")
        table[path] = data_files[name]
    ids = [n for n in nbtools.notebook_ids() if (paths.params_dir() / n / "paper.yaml").is_file()]
    if only:
        bad = sorted(set(only) - set(ids))
        if bad:
            raise MappingError(f"no paper variant for {bad}; notebooks with one: {ids}")
        ids = [n for n in ids if n in only]
    plans = []
    for nb_id in ids:
        variant = nbtools.read_params_file(paths.params_dir() / nb_id / "paper.yaml")
        known = nbtools.parameters(nb_id)
        missing = sorted({h for h in _hub_ids_in(variant) if h not in table})
        if missing:
            raise MappingError(f"{nb_id}: paper.yaml names {missing}, which {mapping_path().name} does not map")
        seen: set[str] = set()
        merged = _substitute(variant, table, seen)
        merged.update({k: v for k, v in mapping["common"].items() if k in known})
        scale = mapping["scale"].get(nb_id, {})
        typos = sorted(set(scale) - set(known))
        if typos:
            raise MappingError(f"{mapping_path().name}: scale[{nb_id!r}] names unknown parameter(s) {typos}")
        merged.update(scale)
        plans.append(NotebookPlan(nb_id, merged, twins={h: mapping["models"][h] for h in sorted(seen)
                                                        if h in mapping["models"]},
                                  data=sorted(h for h in seen if h in mapping["data"])))
    return plans


def build_twins(out: str | os.PathLike, plans: list[NotebookPlan], *, progress: bool = True) -> dict[str, str]:
    """Build the twins the plans use (a folder already there is kept); hub id -> architecture."""
    out = Path(out).resolve()
    archs: dict[str, str] = {}
    for hub_id, spec in sorted({h: s for p in plans for h, s in p.twins.items()}.items()):
        folder = out / "twins" / twin_folder_name(hub_id)
        if not (folder / "config.json").is_file():
            if progress:
                print(f"building twin {spec['twin']} for {hub_id} -> {folder}", flush=True)
            from .twins import build

            build(spec["twin"], folder, seed=int(spec.get("seed", 0)))
        archs[hub_id] = architecture(folder)
    return archs


def architecture(folder: str | os.PathLike) -> str:
    """The model class a saved folder declares (``architectures`` of its config.json)."""
    cfg = json.loads((Path(folder) / "config.json").read_text())
    return ", ".join(cfg.get("architectures") or [cfg.get("model_type", "?")])


def execute(out: str | os.PathLike, plans: list[NotebookPlan], archs: dict[str, str], *,
            kernel: str = "vlmrobust") -> list[dict]:
    """Run each plan's notebook with papermill; a row per notebook (seconds, status, architectures)."""
    out = Path(out).resolve()
    rows = []
    for p in plans:
        params_file = out / "params" / f"{p.nb_id}.yaml"
        params_file.parent.mkdir(parents=True, exist_ok=True)
        params_file.write_text(yaml.safe_dump(p.params, sort_keys=True))
        src = out / "nb" / f"{p.nb_id}.ipynb"
        src.parent.mkdir(parents=True, exist_ok=True)
        import jupytext

        jupytext.write(jupytext.read(nbtools.notebook_path(p.nb_id)), src, fmt="ipynb")
        dest = out / "executed" / f"{p.nb_id}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "VLMROBUST_RESULTS_ROOT": str(out / "results"),
               "VLMROBUST_FIG_ROOT": str(out / "results" / "figures"), "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        names = sorted({archs[h] for h in p.twins if h in archs})
        print(f"== {p.nb_id} [paper, dry]: {', '.join(names) or 'no models'}", flush=True)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "papermill", "-k", kernel, "--cwd", str(nbtools.notebook_path(p.nb_id).parent),
               "-f", str(params_file), str(src), str(dest)]
        proc = subprocess.run(cmd, env=env)
        secs = time.perf_counter() - t0
        rows.append({"notebook": p.nb_id, "ok": proc.returncode == 0, "seconds": round(secs, 1),
                     "architectures": names, "executed": str(dest)})
        print(f"   {'done' if proc.returncode == 0 else 'FAILED'} in {secs:.0f} s -> {dest}", flush=True)
    return rows
