"""`make mutants`: its mutmut configuration points at real files and tests, and its score is counted right."""

from __future__ import annotations

import ast
import fnmatch
import tomllib

import mutation_score

from vlmrobust import paths

ROOT = paths.REPO_ROOT


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_mutmut_paths_name_the_library_and_existing_tests():
    cfg = _config()["tool"]["mutmut"]
    assert cfg["source_paths"] == ["src"]  # the staging copy lays lib/ out as src/
    lib_files = [str(p.relative_to(ROOT)).replace("lib/", "src/", 1) for p in (ROOT / "lib").rglob("*.py")]
    for pattern in cfg["only_mutate"]:
        assert any(fnmatch.fnmatch(f, pattern) for f in lib_files), pattern
    for want in ("analysis/ras/components.py", "analysis/ras/pairs.py", "analysis/ras/attribution.py",
                 "corrupt/physical.py", "corrupt/escalation.py", "corrupt/natural.py", "score/parsing.py"):
        assert any(fnmatch.fnmatch(f"src/vlmrobust/{want}", p) for p in cfg["only_mutate"]), want
    for sel in cfg["pytest_add_cli_args_test_selection"]:
        file, _, func = sel.partition("::")
        assert (ROOT / file).is_file(), sel
        if func:
            tree = ast.parse((ROOT / file).read_text())
            assert func in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, sel


def test_mutants_extra_target_and_ignored_work_folder():
    project = _config()["project"]
    assert any(d.startswith("mutmut") for d in project["optional-dependencies"]["mutants"])
    make = (ROOT / "Makefile").read_text()
    assert "\nmutants:" in make and "build/mutants" in make
    assert "build/" in (ROOT / ".gitignore").read_text().split()


RESULTS = """\
    vlmrobust.analysis.ras.components.x_ras__mutmut_1: killed
    vlmrobust.analysis.ras.components.x_ras__mutmut_2: survived
    vlmrobust.analysis.ras.components.x_top1__mutmut_1: timeout
    vlmrobust.score.parsing.x_parse_confidence__mutmut_1: killed
    vlmrobust.score.parsing.x_parse_answer__mutmut_3: no tests
    vlmrobust.corrupt.physical.xǁThingǁmethod__mutmut_2: killed
"""


def test_mutation_score_counts_every_mutant():
    res = mutation_score.summary(mutation_score.parse(RESULTS.splitlines()))
    assert res["total"] == 6 and res["killed"] == 4
    assert res["score"] == 4 / 6
    assert res["counts"] == {"killed": 3, "survived": 1, "timeout": 1, "no tests": 1}
    assert res["per_module"]["vlmrobust.analysis.ras.components"] == (2, 3)
    assert res["not_killed"] == [("vlmrobust.analysis.ras.components.x_ras__mutmut_2", "survived"),
                                 ("vlmrobust.score.parsing.x_parse_answer__mutmut_3", "no tests")]
