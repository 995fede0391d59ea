"""Typed notebook parameters: rules, Params.resolve, the shared sweep rules, and the notebooks that use them."""

from __future__ import annotations

import ast
import re

import jupytext
import pytest

from vlmrobust import nbtools, params, sweep
from vlmrobust.analysis import escalation
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
