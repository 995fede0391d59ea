"""Notebooks through the real command lines: papermill with -f and -p, and `make run` for every variant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from vlmrobust import nbtools, paths

ROOT = paths.REPO_ROOT
BIN = Path(sys.executable).parent
NB = "02_corruption_sweeps"  # cheap under small parameters, writes a table whose size follows them


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "VLMROBUST_RESULTS_ROOT": str(tmp_path / "results"),
            "VLMROBUST_FIG_ROOT": str(tmp_path / "figures"), "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """The .ipynb twin exactly as `jupytext --to ipynb` writes it (what users hand to papermill)."""
    out = tmp_path_factory.mktemp("nb") / f"{NB}.ipynb"
    subprocess.run([str(BIN / "jupytext"), "-q", "--to", "ipynb", "-o", str(out), str(nbtools.notebook_path(NB))],
                   check=True)
    meta = json.loads(out.read_text())["metadata"]
    assert meta["kernelspec"]["name"] == "vlmrobust" and meta["kernelspec"]["language"] == "python"
    return out


def _papermill(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "papermill"), "--cwd", str(ROOT / "notebooks"), *args],
                          env=env, capture_output=True, text=True, timeout=900)


def _parameters_of(executed: Path) -> dict:
    return json.loads(executed.read_text())["metadata"]["papermill"]["parameters"]


def test_papermill_cli_with_a_parameter_file_and_a_value(generated, tmp_path):
    pfile = tmp_path / "small.yaml"
    pfile.write_text(yaml.safe_dump({**nbtools.smoke_overrides(NB), "n_fog_scenes": 3}))
    out = tmp_path / "out.ipynb"
    run = _papermill(["-f", str(pfile), "-p", "n_fog_scenes", "4", str(generated), str(out)], _env(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    got = _parameters_of(out)
    assert got["n_fog_scenes"] == 4 and got["image_size"] == nbtools.smoke_overrides(NB)["image_size"]
    table = pd.read_parquet(tmp_path / "results" / NB / "fog_equivalent_visibility.parquet")
    assert table.groupby("severity").size().eq(4).all()  # -p overrides -f: four scenes per severity


def test_papermill_cli_bad_value_stops_in_the_resolve_cell(generated, tmp_path):
    out = tmp_path / "bad.ipynb"
    run = _papermill(["-p", "n_fog_scenes", "-3", str(generated), str(out)], _env(tmp_path))
    assert run.returncode != 0
    assert "parameter 'n_fog_scenes' = -3 is out of range" in run.stderr
    assert "No language found" not in run.stderr
    nb = json.loads(out.read_text())
    failed = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    import nbformat

    assert failed == [nbtools.resolve_cell_index(nbformat.reads(out.read_text(), as_version=4))]


def _variants():
    return [pytest.param(p.parent.name, p.stem, id=f"{p.parent.name}/{p.stem}")
            for p in sorted((ROOT / "params").glob("*/*.yaml"))]


# one variant that resolves and one that stops for the hub go through `make run ... UNTIL=resolve` itself
MAKE_VARIANTS = [("01_dataset_selection", "large"), ("03_scoring", "paper")]
# the resolve cell stops a variant that needs the hub, real data, or a hub repository's own code (naming a native model)
HUB_MESSAGES = ("Hugging Face cache", "no file", "'datasets' package", "which transformers implements natively")


@pytest.mark.parametrize("nb_id,variant", MAKE_VARIANTS, ids=[f"{n}/{v}" for n, v in MAKE_VARIANTS])
def test_make_run_until_resolve_checks_a_variant(nb_id, variant, tmp_path):
    """`make run NB=<id> P=<variant> UNTIL=resolve` checks the variant's parameters; those that need the hub stop
    there."""
    run = subprocess.run(["make", "-s", "run", f"NB={nb_id}", f"P={variant}", "UNTIL=resolve",
                          f"RESULTS={tmp_path / 'results'}", f"EXEC_DIR={tmp_path / 'executed'}"],
                         cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=900)
    assert "No language found" not in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
    if run.returncode != 0:  # a variant for real models and data: a clear message from the resolve cell
        assert "stopped before the work began: ParameterError: parameter '" in run.stderr, run.stderr[-2000:]
        assert any(k in run.stderr for k in HUB_MESSAGES), run.stderr
    executed = tmp_path / "executed" / f"{nb_id}.{variant}.ipynb"
    assert executed.is_file()
    overrides = nbtools.read_params_file(ROOT / "params" / nb_id / f"{variant}.yaml")
    injected = next(c for c in json.loads(executed.read_text())["cells"]
                    if "injected-parameters" in c["metadata"].get("tags", []))
    for key in overrides:
        assert f"{key} = " in "".join(injected["source"]), key


# Every variant, the way papermill injects it, executed up to its resolve cell in one fresh Python process
# (a namespace per variant, the notebooks folder as working directory): what `make run ... UNTIL=resolve`
# runs, without a kernel start per variant.
_RESOLVE_ALL = r"""
import json, os, sys
import jupytext
from IPython.display import display
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook
from vlmrobust import nbtools, paths

os.chdir(paths.notebooks_dir())
out = {}
for nb_id, variant in json.loads(sys.argv[1]):
    overrides = nbtools.read_params_file(paths.REPO_ROOT / "params" / nb_id / f"{variant}.yaml")
    twin = os.path.join(sys.argv[2], f"{nb_id}.ipynb")
    jupytext.write(jupytext.read(nbtools.notebook_path(nb_id)), twin)
    nb = parameterize_notebook(load_notebook_node(twin), overrides)  # papermill's reader and injection
    injected = next(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    ns = {"__name__": "__main__", "display": display}
    res = {"injected": injected, "error": None}
    try:
        for i, cell in enumerate(nb.cells[: nbtools.resolve_cell_index(nb) + 1]):
            if cell.cell_type == "code":
                exec(compile(cell.source, f"{nb_id}[{i}]", "exec"), ns)
    except Exception as exc:
        res["error"] = [type(exc).__name__, str(exc)]
    out[f"{nb_id}/{variant}"] = res
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def resolved(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("resolve")
    pairs = [list(p.values) for p in _variants()]
    run = subprocess.run([sys.executable, "-c", _RESOLVE_ALL, json.dumps(pairs), str(tmp)], env=_env(tmp),
                         capture_output=True, text=True, timeout=900)
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert run.returncode == 0 and line, run.stderr[-3000:]
    return json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("nb_id,variant", _variants())
def test_every_variant_reaches_its_resolve_cell(nb_id, variant, resolved):
    """Each parameter file is valid for its notebook: it resolves, or it stops in the resolve cell because it
    needs the hub or real data, with the parameter named."""
    res = resolved[f"{nb_id}/{variant}"]
    for key in nbtools.read_params_file(ROOT / "params" / nb_id / f"{variant}.yaml"):
        assert f"{key} = " in res["injected"], key
    if res["error"] is not None:
        ename, msg = res["error"]
        assert ename == "ParameterError" and msg.startswith("parameter '"), res["error"]
        assert any(k in msg for k in HUB_MESSAGES), res["error"]
