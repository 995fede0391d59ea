"""The repository's shape: files, dependency lists, notebooks and parameter files."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest
import yaml

from vlmrobust import nbtools, paths

ROOT = paths.REPO_ROOT
REQUIRED_DEPS = {"jupyterlab", "papermill", "torch", "transformers", "numpy", "pandas", "seaborn", "matplotlib",
                 "jupytext", "nbval", "pyarrow", "tqdm", "pillow", "scipy", "pyyaml"}


def _dep_names(specs):
    return {re.split(r"[\s<>=!~\[;]", s, maxsplit=1)[0].lower() for s in specs}


def test_required_files_exist():
    for rel in ["README.md", "environment.yml", "pyproject.toml", "Makefile", "jupytext.toml", ".gitignore",
                ".ci/run", "params/smoke.yaml", "lib/vlmrobust/__init__.py"]:
        assert (ROOT / rel).is_file(), rel
    for rel in ["notebooks", "params", "lib/vlmrobust", "tests", "bench", "figures"]:
        assert (ROOT / rel).is_dir(), rel


def test_dependencies_declared_once_with_ranges_and_environment_wraps_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"]
    assert REQUIRED_DEPS <= _dep_names(deps)
    for spec in deps:
        assert re.search(r"[<>=~]", spec), f"dependency without a version range: {spec}"
    assert {"pytest", "ruff"} <= _dep_names(project["optional-dependencies"]["dev"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda and "pip" in conda
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    # the conda file adds nothing of its own: it installs this package and its dev extra under the lock
    assert pip == ["-c requirements-lock.txt", "-e .[dev]"]
    assert project["requires-python"].startswith(">=3.11")


def test_gitignore_covers_generated_outputs():
    ignored = (ROOT / ".gitignore").read_text().split()
    for pattern in ["results/", ".venv/", "build/", "notebooks/*.ipynb", "runs/", "executed/"]:
        assert pattern in ignored, pattern


def test_no_tracked_notebook_json():
    tracked = subprocess.run(["git", "ls-files", "notebooks/*.ipynb"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    assert tracked == []


def test_makefile_targets_and_ci_entry_point():
    text = (ROOT / "Makefile").read_text()
    assert ".DEFAULT_GOAL := help" in text
    for target in ["help", "install", "sync", "lab", "run", "test", "smoke", "report", "bench", "clean"]:
        assert re.search(rf"^{target}:.*## ", text, re.M), f"target {target} missing or undocumented"
    assert "wildcard notebooks/" in text  # notebook lists come from globs
    assert "make test" in (ROOT / ".ci/run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_notebook_shape(nb_id):
    import jupytext

    nb = jupytext.read(nbtools.notebook_path(nb_id))
    first = nb.cells[0]
    assert first.cell_type == "markdown" and len(re.findall(r"^# ", first.source, re.M)) == 1, "one H1 title"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert f'NB_ID = "{nb_id}"' in code
    assert "sys.path" not in code and "os.chdir" not in code and "pip install" not in code
    params = nbtools.parameters(nb_id)
    assert params, "the parameters cell defines at least one parameter"
    src = nbtools._parameters_source(nb_id)
    for line in src.splitlines():
        if re.match(r"^\w+\s*[:=]", line):
            assert re.match(r"^\w+: [\w\[\], |]+ = .+#", line), f"parameter line needs a type and a comment: {line}"
            # papermill cannot parse a parameter line whose comment holds '=' (it then drops the type)
            assert "=" not in line.split("#", 1)[1], f"no '=' in a parameter's comment: {line}"


def _param_files():
    out = []
    for path in sorted((ROOT / "params").glob("*/*.yaml")):
        out.append(pytest.param(path, id=f"{path.parent.name}/{path.name}"))
    return out


@pytest.mark.parametrize("path", _param_files())
def test_parameter_file_keys_exist_in_notebook(path):
    nb_id = path.parent.name
    assert nb_id in nbtools.notebook_ids(), f"params/{nb_id}/ has no notebook"
    known = nbtools.parameters(nb_id)
    overrides = nbtools.read_params_file(path)
    unknown = sorted(set(overrides) - set(known))
    assert not unknown, f"{path.name}: unknown parameter(s) {unknown}"
    for key, value in overrides.items():  # same type as the default (ints allowed for floats)
        default = known[key]
        if isinstance(default, float):
            assert isinstance(value, (int, float)) and not isinstance(value, bool), key
        elif default is not None:
            assert isinstance(value, type(default)), f"{key}: {value!r} vs default {default!r}"


def test_smoke_sections_target_existing_notebooks_and_parameters():
    data = nbtools.read_params_file(ROOT / "params" / "smoke.yaml")
    ids = nbtools.notebook_ids()
    for nb_id, overrides in data.items():
        assert nb_id in ids, f"smoke.yaml section {nb_id!r} has no notebook"
        unknown = sorted(set(overrides or {}) - set(nbtools.parameters(nb_id)))
        assert not unknown, f"smoke.yaml [{nb_id}]: unknown parameter(s) {unknown}"
