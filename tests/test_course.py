"""The course's instructor page: ``params/course.yaml`` matches the notebooks' exercises, the page is read off
the checks' outputs."""

from __future__ import annotations

import re

import jupytext
import nbformat
import pytest

from vlmrobust import course, exercises, nbtools

COURSE = course.changes()


def _exercise_cells(nb_id):
    """Exercise number → the markdown text of its "Change:" paragraph."""
    nb = jupytext.read(nbtools.notebook_path(nb_id))
    out = {}
    for c in nb.cells:
        m = re.match(r"### Exercise (\d+)", c.source) if c.cell_type == "markdown" else None
        if m:
            out[int(m.group(1))] = c.source.split("**Change:**", 1)[1].split("**Predict", 1)[0]
    return out


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_every_exercise_has_its_change_and_the_change_is_the_notebooks(nb_id):
    cells = _exercise_cells(nb_id)
    assert sorted(COURSE[nb_id]) == sorted(cells), "params/course.yaml lists every exercise of the notebook"
    for k, change in COURSE[nb_id].items():
        text = " ".join(cells[k].split())
        if "edit" in change:
            assert change["edit"]["replace"] in text
            src = jupytext.read(nbtools.notebook_path(nb_id))
            hits = [c for c in src.cells if c.cell_type == "code" and change["edit"]["find"] in c.source.splitlines()]
            assert len(hits) == 1, "the edited line is in one code cell"
            continue
        for name, value in change.items():
            assert f"`{name}" in text or f"`\"{value}\"` to `{name}`" in text or f"to `{name}`" in text, (k, name)
            if not isinstance(value, list):
                assert str(value) in text, (k, name, value)


def test_check_outputs_are_read_from_an_executed_notebook():
    r = exercises.result("03.1", "sampling at a low temperature", True, True, "the rule", "gap 0.31", "set it")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("score.exercise_03_1(acc, agreement, temperature)"),
                nbformat.v4.new_code_cell("score.exercise_03_2(agreement, agree_pred, n_samples)")]
    nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": repr(r)}, execution_count=1)]
    got = course.check_outputs(nb, "03_scoring")
    assert got[1] == {"expected": "the rule", "your run": "gap 0.31", "verdict": "PASSED: your run shows it."}
    assert got[2] == {}  # a cell without output (a failed run stopped before it)
    text = course.page({"03_scoring": {"lesson": {"checks": {1: {"your run": "gap 0.02", "verdict": "NOT TRIED"}},
                                                  "seconds": 30.0, "error": ""},
                                       "exercises": {1: {"change": {"temperature": 0.2}, "checks": got,
                                                         "seconds": 31.0, "error": ""},
                                                     2: {"change": {"n_samples": 40}, "checks": {}, "seconds": 2.0,
                                                         "error": "PapermillExecutionError: boom"}}}})
    assert "`temperature: 0.2`" in text and "gap 0.02 — NOT TRIED" in text and "**PASSED: your run shows it.**" in text
    assert "changed run **failed**: PapermillExecutionError: boom" in text


def test_a_change_naming_an_unknown_parameter_is_refused(tmp_path, monkeypatch):
    (tmp_path / "course.yaml").write_text("03_scoring:\n  1: {temprature: 0.2}\n")
    monkeypatch.setattr(course.paths, "params_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match=r"exercise 1: unknown parameter\(s\) \['temprature'\]"):
        course.changes()


def test_runs_are_read_back_from_the_executed_notebooks(tmp_path):
    r = exercises.result("03.1", "sampling", True, True, "the rule", "gap 0.31", "set it")
    ok = nbformat.v4.new_notebook(metadata={"papermill": {"duration": 12.5}})
    ok.cells = [nbformat.v4.new_code_cell("score.exercise_03_1(acc, agreement, temperature)")]
    ok.cells[0].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": repr(r)}, execution_count=1)]
    nbformat.write(ok, str(tmp_path / "03_scoring.exercise1.ipynb"))
    bad = nbformat.v4.new_notebook(metadata={"papermill": {"duration": None, "exception": True}})
    bad.cells = [nbformat.v4.new_code_cell("1/0")]
    bad.cells[0].outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                   traceback=[])]
    nbformat.write(bad, str(tmp_path / "03_scoring.lesson.ipynb"))
    runs = course.collect({"03_scoring": {1: {"temperature": 0.2}, 2: {"n_samples": 40}}}, tmp_path)
    lesson, ex = runs["03_scoring"]["lesson"], runs["03_scoring"]["exercises"]
    assert lesson["error"] == "ZeroDivisionError: division by zero" and lesson["seconds"] != lesson["seconds"]
    assert ex[1]["seconds"] == 12.5 and ex[1]["checks"][1]["verdict"] == "PASSED: your run shows it."
    assert ex[2]["error"] == "not run"
    text = course.page(runs)
    assert "time not recorded — **failed**: ZeroDivisionError" in text and "changed run **failed**: not run" in text
