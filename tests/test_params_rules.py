"""Typed notebook parameters: rules, Params.resolve, the shared sweep rules, and the notebooks that use them."""

from __future__ import annotations

import ast
import re

import jupytext
import pytest

from vlmrobust import corrupt, nbtools, params, sweep
from vlmrobust.analysis import escalation, ras, selection
from vlmrobust.params import ParameterError, many, one


class Toy(params.Params):
    RULES = {
        "n": one(int, lo=1),
        "hi": one(float, lo=lambda p: p["n"]),
        "names": many(str, choices=["a", "b"], min_len=0),
    }


def test_resolve_checks_in_order_and_options_read_earlier_parameters():
    p = Toy.resolve({"n": 2, "hi": 3, "names": ["a"], "unrelated": object()})
    assert (p.n, p.hi, p.names) == (2, 3.0, ["a"]) and isinstance(p.hi, float)
    assert p.as_dict() == {"n": 2, "hi": 3.0, "names": ["a"]}
    assert repr(p) == "Toy(n=2, hi=3.0, names=['a'])"
    with pytest.raises(ParameterError, match=r"parameter 'hi' = 1 is out of range; allowed \[2, inf\]"):
        Toy.resolve({"n": 2, "hi": 1, "names": []})
    with pytest.raises(ParameterError, match=r"parameter 'n' must be int, got '2'"):  # the first bad one
        Toy.resolve({"n": "2", "hi": "x", "names": ["c"]})
    with pytest.raises(ParameterError, match=r"parameter 'names\[0\]' = 'c' is not allowed"):
        Toy.resolve({"n": 2, "hi": 2, "names": ["c"]})


def test_resolved_parameters_are_fixed_and_a_missing_one_is_named():
    p = Toy.resolve({"n": 1, "hi": 1, "names": []})
    with pytest.raises(AttributeError, match="fixed once resolved"):
        p.n = 3
    with pytest.raises(AttributeError, match="no parameter 'm'"):
        _ = p.m
    with pytest.raises(ParameterError, match=r"\['hi', 'names'\] not defined"):
        Toy.resolve({"n": 1})


def test_sweep_rules_are_declared_once_and_check_the_scheduler_after_the_executor():
    assert list(sweep.sweep_rules()) == list(sweep.SWEEP_PARAMETERS)
    assert list(sweep.sweep_rules("seed", "models")) == ["seed", "models"]
    with pytest.raises(ValueError, match="no shared sweep parameter"):
        sweep.sweep_rules("seeds")

    class Sweep(params.Params):
        RULES = sweep.sweep_rules("models", "executor", "dask_scheduler")

    p = Sweep.resolve({"models": [], "executor": "local", "dask_scheduler": ""})
    assert p.models and p.dask_scheduler == ""
    with pytest.raises(ParameterError, match="'executor' = 'slurm' is not allowed"):
        Sweep.resolve({"models": [], "executor": "slurm", "dask_scheduler": ""})
    with pytest.raises(ParameterError, match="'models"):
        Sweep.resolve({"models": ["no-such-organism-here"], "executor": "local", "dask_scheduler": ""})


NB07 = "07_escalation_traversal"


def test_notebook_07_defaults_resolve_to_themselves():
    defaults = nbtools.parameters(NB07)
    p = escalation.Params.resolve(defaults)
    assert list(p.as_dict()) == list(defaults)  # every parameter of the cell, in its order
    for name, value in defaults.items():
        if name != "models":
            assert p.as_dict()[name] == value, name


@pytest.mark.parametrize("override,message", [
    ({"levels": [2, 1]}, "parameter 'levels' must be increasing"),
    ({"rci_weights": [1.0, 0.0]}, "parameter 'rci_weights' needs 4 weights"),
    ({"trci_weights": [0.0] * 5}, "parameter 'trci_weights' needs 5 weights"),
    ({"severe_below": 0.9}, r"parameter 'severe_below' = 0.9 is out of range; allowed \[0.0, 0.8\]"),
    ({"levels": [1, 2], "compare_levels": [3]}, r"parameter 'compare_levels\[0\]' = 3 is not allowed"),
    ({"failure_weights": {"OCR": -1.0}}, r"parameter \"failure_weights\['OCR'\]\" = -1.0 is out of range"),
    ({"ladders": ["fog"]}, r"parameter 'ladders\[0\]' = 'fog' is not allowed"),
    ({"groups": {"g": "count"}}, r"parameter \"groups\['g'\]\" must be a list"),
])
def test_notebook_07_names_the_bad_parameter(override, message):
    with pytest.raises(ParameterError, match=message):
        escalation.Params.resolve(nbtools.parameters(NB07) | override)


def _resolved_notebooks() -> list[str]:
    return [nb for nb in nbtools.notebook_ids()
            if "Params.resolve(globals())" in nbtools.notebook_path(nb).read_text()]


@pytest.mark.parametrize("nb_id", _resolved_notebooks())
def test_after_its_resolve_cell_a_notebook_reads_parameters_only_through_p(nb_id):
    """A bare parameter name after the resolve cell would read the unchecked value (f-strings included)."""
    nb = jupytext.read(nbtools.notebook_path(nb_id))
    names = set(nbtools.parameters(nb_id))
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    start = next(i for i, src in enumerate(code) if re.search(r"^P = \w+\.Params\.resolve\(globals\(\)\)", src, re.M))
    bare = []
    for src in code[start + 1:]:
        tree = ast.parse(src)
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound |= {a.arg for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)) for a in n.args.args}
        bare += [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names - bound]
    assert bare == []


NB05 = "05_representation_drift"


def test_notebook_05_defaults_resolve_to_themselves():
    from vlmrobust.analysis import drift
    from vlmrobust.models import zoo

    defaults = nbtools.parameters(NB05)
    p = drift.Params.resolve(defaults)
    assert list(p.as_dict()) == list(defaults)  # every parameter of the cell, in its order
    for name, value in defaults.items():
        if name not in ("models", "size_ladder", "gt_changing"):
            assert p.as_dict()[name] == value, name
    assert p.gt_changing == {k: tuple(v) for k, v in defaults["gt_changing"].items()}  # what the tables read
    assert defaults["size_ladder"] == [] and p.size_ladder == zoo.names("ladder")  # empty: the zoo's role ladder
    two = ["ladder-48", "ladder-96"]
    assert drift.Params.resolve(defaults | {"size_ladder": two}).size_ladder == two


@pytest.mark.parametrize("override,message", [
    ({"n_boot": 5}, r"parameter 'n_boot' = 5 is out of range; allowed \[10, 100000\]"),
    ({"cross_sources": [""]}, r"parameter 'cross_sources\[0\]' must be 'synth', a .tsv or .parquet file"),
    ({"cross_sources": "synth"}, r"parameter 'cross_sources' must be a list, got 'synth' \(str\)"),
    ({"pope_source": 3}, r"parameter 'pope_source' must be str, got 3 \(int\)"),
    ({"pope_source": "x.csv"}, r"parameter 'pope_source' = 'x.csv': use 'synth'"),
    ({"pope_template": "nope"}, r"parameter 'pope_template' = 'nope' is not allowed; choose one of \['', "),
    ({"gt_changing": ["translate"]}, r"parameter 'gt_changing' must map perturbations to family lists"),
    ({"gt_changing": {"warp": ["count"]}}, r"parameter \"gt_changing key 'warp'\" = 'warp' is not allowed"),
    ({"drift_regime": "vision_grid"}, r"parameter 'drift_regime' = 'vision_grid' is not allowed"),
    ({"photometric": ["fog_x"]}, r"parameter 'photometric\[0\]' = 'fog_x' is not allowed"),
    ({"size_ladder": ["no-such-organism"]},
     r"parameter 'size_ladder\[0\]' = 'no-such-organism' is neither a zoo organism"),
    ({"dtype": "float64"}, r"parameter 'dtype' = 'float64' is not allowed"),
    ({"progress": 1}, r"parameter 'progress' must be bool, got 1 \(int\)"),
])
def test_notebook_05_names_the_bad_parameter(override, message):
    from vlmrobust.analysis import drift

    with pytest.raises(ParameterError, match=message):
        drift.Params.resolve(nbtools.parameters(NB05) | override)


NB01 = "01_dataset_selection"
NB04 = "04_ras_attribution"
ANALYSIS = {NB01: selection, NB04: ras}
# rules that read a parameter the cell lists below them come after it (and 04's items_source after models, as before)
MOVED = {NB01: {"items_source": "pool_sources", "levels": "eval_perturbations"},
         NB04: {"models": "sim_items", "items_source": "models"}}


def _imagenet_c_defaults() -> tuple[list[str], list[str]]:
    imagenet_c = list(corrupt.manifest("imagenet_c"))
    return imagenet_c, [p for p in corrupt.default_sweep() if p in imagenet_c]


@pytest.mark.parametrize("nb_id", [NB01, NB04])
def test_notebooks_01_and_04_defaults_resolve_to_themselves(nb_id):
    defaults = nbtools.parameters(nb_id)
    p = ANALYSIS[nb_id].Params.resolve(defaults)
    order = list(p.as_dict())
    assert sorted(order) == sorted(defaults)  # every parameter of the cell
    moved = MOVED[nb_id]
    assert [n for n in order if n not in moved] == [n for n in defaults if n not in moved]  # in its order
    for name, after in moved.items():
        assert order.index(name) == order.index(after) + 1, name
    imagenet_c, default_sweep = _imagenet_c_defaults()
    filled = {"models": sweep.resolve_models([])}  # an empty parameter read as its default
    if nb_id == NB01:
        filled |= {"selectors": sweep.resolve_models([], default="selector"), "perturbations": imagenet_c,
                   "eval_perturbations": default_sweep}
        filled["image_encoder"] = filled["selectors"][0]
    else:
        filled["perturbations"] = default_sweep
    for name, value in defaults.items():
        assert p.as_dict()[name] == filled.get(name, value), name


def test_notebook_01_checks_items_source_only_without_pool_sources_and_may_have_no_evaluated_model(monkeypatch):
    defaults = nbtools.parameters(NB01)
    p = selection.Params.resolve(defaults | {"pool_sources": ["synth"], "items_source": "x.csv"})
    assert p.pool_sources == ["synth"] and p.items_source == "x.csv"  # not the pool: not read, not checked
    from vlmrobust.models import zoo

    names = zoo.names
    monkeypatch.setattr(zoo, "names", lambda role=None: [] if role == "evaluated" else names(role))
    assert selection.Params.resolve(defaults).models == []  # the evaluated-model Gini is skipped
    assert selection.Params.resolve(defaults | {"models": ["tiny-base"]}).models == ["tiny-base"]


def test_notebook_04_simulates_its_models_and_leaves_the_item_source_unread():
    p = ras.Params.resolve(nbtools.parameters(NB04) | {"predictions_from": "simulate", "sim_models": 3,
                                                        "models": ["no-such-organism-here"], "items_source": "x.csv"})
    assert p.models == ["sim-a", "sim-b", "sim-c"] and p.items_source == "x.csv"


SOURCE_KINDS = ("use 'synth', a .tsv (VLMEvalKit) or .parquet (item table) file, 'split:<name>' or "
                "'hf:<dataset>[:<split>]'")
METHODS = "choose one of ['default', 'letter', 'loglik', 'loglik_norm']"


@pytest.mark.parametrize("nb_id,override,message", [
    (NB01, {"levels": [2, 1]}, "parameter 'levels' must be increasing, got [2, 1]"),
    (NB01, {"levels": [1]}, "parameter 'levels' needs at least 2 element(s), got 1"),
    (NB01, {"perturbations": ["bruce_blur"]},
     "parameter 'levels' = [1, 2, 3, 4, 5]: 'bruce_blur' has levels [1, 2, 3, 4]"),
    (NB01, {"eval_perturbations": ["rotate"], "levels": [1, 2, 3]},
     "parameter 'levels' = [1, 2, 3]: 'rotate' has levels [1, 2]"),
    (NB01, {"items_source": "x.csv"}, f"parameter 'items_source' = 'x.csv': {SOURCE_KINDS}"),
    (NB01, {"pool_sources": ["synth", "x.csv"]}, f"parameter 'pool_sources[1]' = 'x.csv': {SOURCE_KINDS}"),
    (NB01, {"pool_sources": ["synth", "synth"]}, "parameter 'pool_sources' has repeated elements: ['synth', 'synth']"),
    (NB01, {"split_name": "../x"}, "parameter 'split_name': split name must match"),
    (NB01, {"selectors": ["nope"]}, "parameter 'selectors[0]' = 'nope' is neither a zoo organism"),
    (NB01, {"image_pooling": "cls"},
     "parameter 'image_pooling' = 'cls' is not allowed; choose one of ['patches', 'all']"),
    (NB01, {"method": "vote"}, f"parameter 'method' = 'vote' is not allowed; {METHODS}"),
    (NB01, {"batch_size": 5000}, "parameter 'batch_size' = 5000 is out of range; allowed [1, 4096]"),
    (NB01, {"ci": 1.0}, "parameter 'ci' = 1.0 is out of range; allowed (0.0, 1.0)"),
    (NB01, {"difficulty_rho_max": 1.5}, "parameter 'difficulty_rho_max' = 1.5 is out of range; allowed [-1.0, 1.0]"),
    (NB01, {"scaling_sizes": [5]}, "parameter 'scaling_sizes[0]' = 5 is out of range; allowed [10, 1000000]"),
    (NB04, {"predictions_from": "file"},
     "parameter 'predictions_from' = 'file' is not allowed; choose one of ['sweep', 'simulate']"),
    (NB04, {"perturbations": ["bruce_blur"]}, "parameter 'perturbations[0]' = 'bruce_blur' is not allowed"),
    (NB04, {"levels": [3, 1]}, "parameter 'levels' must be increasing, got [3, 1]"),
    (NB04, {"method": "vote"}, f"parameter 'method' = 'vote' is not allowed; {METHODS}"),
    (NB04, {"n_per_family": 100_001}, "parameter 'n_per_family' = 100001 is out of range; allowed [1, 100000]"),
    (NB04, {"boundary_tol": 0.6}, "parameter 'boundary_tol' = 0.6 is out of range; allowed [0.0, 0.5]"),
    (NB04, {"sim_models": 27}, "parameter 'sim_models' = 27 is out of range; allowed [1, 26]"),
    (NB04, {"models": ["no-such-organism-here"]}, "parameter 'models[0]' = 'no-such-organism-here' is neither"),
    (NB04, {"items_source": "x.csv"}, f"parameter 'items_source' = 'x.csv': {SOURCE_KINDS}"),
])
def test_notebooks_01_and_04_name_the_bad_parameter(nb_id, override, message):
    with pytest.raises(ParameterError, match=re.escape(message)):
        ANALYSIS[nb_id].Params.resolve(nbtools.parameters(nb_id) | override)


NB06 = "06_visibility_blind_spots"
NB08 = "08_reliability_card"


def test_notebook_06_defaults_resolve_to_themselves():
    from vlmrobust.analysis import visibility

    defaults = nbtools.parameters(NB06)
    p = visibility.Params.resolve(defaults)
    assert list(p.as_dict()) == list(defaults)  # every parameter of the cell, in its order
    for name, value in defaults.items():
        if name != "models":
            assert p.as_dict()[name] == value, name
    assert p.models == sweep.resolve_models([], default=("evaluated", "control"))


@pytest.mark.parametrize("override,message", [
    ({"items_source": "split:x"},
     "parameter 'items_source' = 'split:x' is not allowed; choose one of ['synth', 'coco']"),
    ({"items_source": "coco", "coco_annotations": "a.json"},
     "items_source 'coco' needs parameters 'coco_annotations' (instances JSON) and 'coco_images' (the image folder)"),
    ({"items_source": "coco", "coco_annotations": "a.json", "coco_images": "images"},
     "real images have no exact depth: set depth_provider to 'pipeline' or 'plane'"),
    ({"depth_provider": "pipeline"}, "depth_provider 'pipeline' needs parameter 'depth_model' (a metric depth model)"),
    ({"n_scenes": 1}, "parameter 'n_scenes' = 1 is out of range; allowed [2, 100000]"),
    ({"t2_question": "size"}, "parameter 't2_question' = 'size' is not allowed; choose one of ['name', 'colour']"),
    ({"wording": "seed000"}, "parameter 'wording' = 'seed000' is not allowed; choose one of ['organisms', 'seed003']"),
    ({"plane_m": 0}, "parameter 'plane_m' = 0 is out of range; allowed (0.0, inf]"),
    ({"sky_only": 1}, "parameter 'sky_only' must be bool, got 1 (int)"),
    ({"batch_size": 5000}, "parameter 'batch_size' = 5000 is out of range; allowed [1, 4096]"),
    ({"executor": "local", "dask_scheduler": "tcp://h:1"},
     "parameter 'dask_scheduler' = 'tcp://h:1' names a Dask scheduler, but executor is 'local'"),
])
def test_notebook_06_names_the_bad_parameter(override, message):
    from vlmrobust.analysis import visibility

    with pytest.raises(ParameterError, match=re.escape(message)):
        visibility.Params.resolve(nbtools.parameters(NB06) | override)


def test_notebook_08_defaults_resolve_to_themselves():
    from vlmrobust import corrupt
    from vlmrobust.analysis import card

    defaults = nbtools.parameters(NB08)
    p = card.Params.resolve(defaults)
    assert list(p.as_dict()) == list(defaults)  # every parameter of the cell, in its order
    for name, value in defaults.items():
        if name not in ("models", "imagenet_c"):
            assert p.as_dict()[name] == value, name
    assert p.models == sweep.resolve_models([], default=("evaluated", "control"))
    imagenet_c = list(corrupt.manifest("imagenet_c"))
    five = [c for c in corrupt.default_sweep() if c in imagenet_c]
    assert defaults["imagenet_c"] == [*five, "pixelate"] and p.imagenet_c == defaults["imagenet_c"]
    assert card.Params.resolve(defaults | {"imagenet_c": []}).imagenet_c == five  # empty: the default sweep's
    assert card.Params.resolve(defaults | {"imagenet_c": ["fog"]}).imagenet_c == ["fog"]


@pytest.mark.parametrize("override,message", [
    ({"models": ["tiny-base"], "reference": "tiny-long"},
     "parameter 'reference' = 'tiny-long' is not allowed; choose one of ['tiny-base']"),
    ({"imagenet_c": ["bruce_blur"]}, "parameter 'imagenet_c[0]' = 'bruce_blur' is not allowed"),
    ({"severities": [6]}, "parameter 'severities[0]' = 6 is out of range; allowed [1, 5]"),
    ({"visibility_levels": [1]}, "parameter 'visibility_levels' needs at least 2 element(s), got 1"),
    ({"depth_provider": "pipeline"}, "parameter 'depth_model' must name a metric depth model (hub id or folder) when "
     "depth_provider is 'pipeline', e.g. depth-anything/Depth-Anything-V2-Metric-Outdoor-Large-hf"),
    ({"n_orders": 24}, "parameter 'n_orders' = 24 is out of range; allowed [0, 23]"),
    ({"method": "loglik_norm"}, "parameter 'method' = 'loglik_norm' is not allowed; "
     "choose one of ['default', 'letter', 'loglik']"),
    ({"ci": 1.0}, "parameter 'ci' = 1.0 is out of range; allowed (0.0, 1.0)"),
    ({"n_per_family": 100_001}, "parameter 'n_per_family' = 100001 is out of range; allowed [1, 100000]"),
    ({"dtype": "float64"}, "parameter 'dtype' = 'float64' is not allowed"),
    ({"items_source": "x.csv"}, "parameter 'items_source' = 'x.csv': use 'synth'"),
])
def test_notebook_08_names_the_bad_parameter(override, message):
    from vlmrobust.analysis import card

    with pytest.raises(ParameterError, match=re.escape(message)):
        card.Params.resolve(nbtools.parameters(NB08) | override)
