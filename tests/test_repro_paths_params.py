import json
import math
import subprocess
import sys

import numpy as np
import pytest

from vlmrobust import params, paths, repro


def test_rng_same_keys_same_stream_and_different_keys_differ():
    a = repro.rng("item-1", "fog", 3, 0).random(5)
    b = repro.rng("item-1", "fog", 3, 0).random(5)
    c = repro.rng("item-1", "fog", 3, 1).random(5)
    d = repro.rng("item-1", "fog", 4, 0).random(5)
    assert np.array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, d)


def test_rng_is_identical_in_another_process():
    code = "from vlmrobust import repro; print(repro.rng('x', 'gaussian_noise', 2, 7).integers(0, 10**9, 4).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""}).stdout
    assert json.loads(out) == repro.rng("x", "gaussian_noise", 2, 7).integers(0, 10**9, 4).tolist()


def test_stable_hash_ignores_key_order_and_sees_values():
    assert repro.stable_hash({"a": 1, "b": [1, 2]}) == repro.stable_hash({"b": [1, 2], "a": 1})
    assert repro.stable_hash({"a": 1}) != repro.stable_hash({"a": 2})


def test_env_snapshot_written(tmp_path):
    path = repro.save_env_snapshot(tmp_path)
    snap = json.loads(path.read_text())
    assert snap["packages"]["numpy"] == np.__version__
    assert "written_at" not in snap  # stable bytes by default
    assert path.read_bytes() == repro.save_env_snapshot(tmp_path).read_bytes()


def test_seed_everything_rejects_non_int():
    with pytest.raises(TypeError, match="seed"):
        repro.seed_everything("3")


def test_paths_are_repo_anchored_and_overridable(monkeypatch, tmp_path):
    assert (paths.REPO_ROOT / "pyproject.toml").is_file()
    assert paths.results_root() == paths.REPO_ROOT / "results"
    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path / "r"))
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(tmp_path / "f"))
    assert paths.results_dir("00_x") == tmp_path / "r" / "00_x"
    assert paths.fig_dir("00_x").is_dir() and paths.fig_dir("00_x") == tmp_path / "f" / "00_x"


@pytest.mark.parametrize(
    "value,type_,kw,match",
    [
        ("3", int, {}, "must be int"),
        (True, int, {}, "must be int"),
        (3.5, int, {}, "must be int"),
        (0, int, {"lo": 1}, r"out of range; allowed \[1, inf\]"),
        (1.0, float, {"hi": 1.0, "hi_open": True}, r"allowed \[-inf, 1.0\)"),
        (math.nan, float, {}, "NaN"),
        ("cubic", str, {"choices": ["linear", "nearest"]}, "choose one of"),
    ],
)
def test_check_rejects_with_named_parameter(value, type_, kw, match):
    with pytest.raises(params.ParameterError, match=match) as exc:
        params.check("n_items", value, type_, **kw)
    assert "'n_items'" in str(exc.value)


def test_check_accepts_and_converts():
    assert params.check("x", 3, float) == 3.0 and isinstance(params.check("x", 3, float), float)
    assert params.check("k", 5, int, lo=1, hi=5) == 5
    assert params.check("m", "a", str, choices="ab") == "a"


def test_check_list():
    assert params.check_list("levels", [1, 2], int, lo=0, hi=5) == [1, 2]
    with pytest.raises(params.ParameterError, match="at least 1"):
        params.check_list("levels", [], int)
    with pytest.raises(params.ParameterError, match=r"levels\[1\]"):
        params.check_list("levels", [1, 9], int, hi=5)
    with pytest.raises(params.ParameterError, match="must be a list"):
        params.check_list("levels", "12", int)
    with pytest.raises(params.ParameterError, match="repeated"):
        params.check_list("levels", [1, 1], int)


def test_use_variant_loads_a_lesson_in_one_step(monkeypatch):
    """``variant = "lesson"`` in the parameters cell: the file's values, except where the notebook was edited."""
    from vlmrobust import nbtools, params

    monkeypatch.delenv("VLMROBUST_RESULTS_ROOT", raising=False)
    nb = "06_visibility_blind_spots"
    lesson = nbtools.read_params_file(paths.params_dir() / nb / "lesson.yaml")
    ns = nbtools.parameters(nb) | {"variant": "lesson", "n_boot": 7}  # the student set n_boot by hand
    unchanged = params.use_variant(nb, ns)
    assert ns["n_boot"] == 7 and unchanged["n_boot"] == lesson["n_boot"]
    assert all(ns[k] == v for k, v in lesson.items() if k != "n_boot")
    assert paths.results_root() == paths.REPO_ROOT / "results" / "variants" / "lesson"  # kept apart, as make does
    ns["variant"] = ""
    assert params.use_variant(nb, ns) == nbtools.parameters(nb)
    assert paths.results_root() == paths.REPO_ROOT / "results"  # back to the default run's folder
    with pytest.raises(params.ParameterError, match=r"no params/06_visibility_blind_spots/lessons\.yaml.*'lesson'"):
        params.use_variant(nb, ns | {"variant": "lessons"})
    with pytest.raises(params.ParameterError, match="'variant' must be str"):
        params.use_variant(nb, ns | {"variant": 3})


def test_use_variant_leaves_a_results_root_set_by_make(monkeypatch, tmp_path):
    from vlmrobust import nbtools, params

    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path))
    ns = nbtools.parameters("03_scoring") | {"variant": "lesson"}
    params.use_variant("03_scoring", ns)
    assert paths.results_root() == tmp_path


def test_use_variant_keeps_a_headless_run_that_already_holds_the_variant(monkeypatch, tmp_path):
    """papermill -f lesson.yaml -p visibility_range extended: the change back to the default stays."""
    from vlmrobust import nbtools, params

    monkeypatch.setenv("VLMROBUST_RESULTS_ROOT", str(tmp_path))
    nb = "06_visibility_blind_spots"
    lesson = nbtools.read_params_file(paths.params_dir() / nb / "lesson.yaml")
    ns = nbtools.parameters(nb) | lesson | {"variant": "lesson", "visibility_range": "extended"}
    unchanged = params.use_variant(nb, ns)
    assert ns["visibility_range"] == "extended" and unchanged["visibility_range"] == "paper"
    assert ns["models"] == lesson["models"]
