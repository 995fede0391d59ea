"""The instructor's page: every exercise of the course run on its lesson, unchanged and with its change.

``make instructor`` (``python -m vlmrobust.course --out docs/instructor.md``) runs each notebook with its lesson
variant (``params/NN_slug/lesson.yaml``) once unchanged and once per exercise with the exercise's change
(``params/course.yaml``: parameters set over the lesson, or one line of a cell edited), and writes a page with
what each exercise's check said on both runs: the rule, what the run measured, the verdict. Nothing on the
page is typed: every number is read from the checks' outputs in the executed notebooks.

The runs are headless papermill runs on the project's kernel, with the notebook's ``variant`` parameter set to
``lesson`` (so each check compares with the unchanged lesson), results under ``results/variants/course/``
and executed notebooks under ``executed/course/``; the page is written from every executed run there, so
``--only NB ...`` reruns those notebooks and keeps the others' last runs. A run that fails is recorded as failed
on the page, with its error; the other runs go on.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from . import nbtools, paths

__all__ = ["changes", "check_outputs", "collect", "main", "page", "read_run"]

COURSE_FILE = "course.yaml"
KERNEL = "vlmrobust"


def changes() -> dict[str, dict[int, dict[str, Any]]]:
    """``params/course.yaml``: notebook id → exercise number → its change (parameters, or ``edit``)."""
    data = nbtools.read_params_file(paths.params_dir() / COURSE_FILE)
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for nb_id, exercises in data.items():
        if nb_id not in nbtools.notebook_ids():
            raise ValueError(f"{COURSE_FILE}: no notebook {nb_id!r}")
        known = nbtools.parameters(nb_id)
        out[nb_id] = {}
        for k, change in exercises.items():
            if not isinstance(change, dict) or not change:
                raise ValueError(f"{COURSE_FILE}: {nb_id} exercise {k}: a change is a non-empty mapping")
            unknown = sorted(set(change) - set(known) - {"edit"})
            if unknown:
                raise ValueError(f"{COURSE_FILE}: {nb_id} exercise {k}: unknown parameter(s) {unknown}")
            out[nb_id][int(k)] = change
    return out


def check_outputs(nb: Any, nb_id: str) -> dict[int, dict[str, str]]:
    """Exercise number → the check's ``expected``, ``your run`` and ``verdict`` lines, from an executed notebook."""
    num = nb_id[:2]
    out: dict[int, dict[str, str]] = {}
    for cell in nb.cells:
        m = re.search(rf"\.exercise_{num}_(\d+)\(", cell.source) if cell.cell_type == "code" else None
        if not m:
            continue
        text = "".join(o.get("data", {}).get("text/plain", "") if o.get("output_type") == "execute_result"
                       else o.get("text", "") for o in cell.get("outputs", []))
        fields = dict(re.findall(r"^\s*(expected|your run|verdict):\s*(.*)$", text, re.M))
        out[int(m.group(1))] = fields
    return out


def _notebook(nb_id: str, edit: dict[str, str] | None, path: Path) -> Path:
    import jupytext

    nb = jupytext.read(nbtools.notebook_path(nb_id))
    if edit:
        hits = [c for c in nb.cells if c.cell_type == "code" and edit["find"] in c.source.splitlines()]
        if len(hits) != 1:
            raise ValueError(f"{nb_id}: the edit's line {edit['find']!r} is in {len(hits)} code cells, not one")
        hits[0].source = "\n".join(edit["replace"] if line == edit["find"] else line
                                   for line in hits[0].source.splitlines())
    path.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, path, fmt="ipynb")
    return path


def _run(nb_id: str, change: dict[str, Any], name: str, out_dir: Path) -> None:
    """Execute one lesson run (``change`` over the lesson) into ``out_dir/<nb_id>.<name>.ipynb``."""
    import papermill as pm

    lesson = nbtools.read_params_file(paths.params_dir() / nb_id / "lesson.yaml")
    edit = change.get("edit")
    values = {**lesson, **{k: v for k, v in change.items() if k != "edit"}, "variant": "lesson"}
    src = _notebook(nb_id, edit, paths.REPO_ROOT / "build" / "course" / f"{nb_id}.{name}.ipynb")
    try:
        pm.execute_notebook(str(src), str(out_dir / f"{nb_id}.{name}.ipynb"), parameters=values, kernel_name=KERNEL,
                            cwd=str(paths.notebooks_dir()), progress_bar=False)
    except Exception:  # noqa: BLE001 - the executed notebook records the error; the other runs go on
        pass


def read_run(path: Path, nb_id: str) -> dict[str, Any]:
    """What one executed lesson run shows: the checks' outputs, papermill's seconds, the error (if it failed)."""
    import nbformat

    if not path.is_file():
        return {"checks": {}, "seconds": float("nan"), "error": "not run"}
    nb = nbformat.read(str(path), as_version=4)
    meta = nb.metadata.get("papermill", {})
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    error = f"{errors[0]['ename']}: {errors[0]['evalue']}".splitlines()[0] if errors else ""
    return {"checks": check_outputs(nb, nb_id), "seconds": float(meta.get("duration") or float("nan")),
            "error": error}


def collect(course: dict[str, dict[int, dict[str, Any]]], out_dir: Path) -> dict[str, dict[str, Any]]:
    """Every run of ``course`` as :func:`page` reads them, from the executed notebooks in ``out_dir``."""
    return {nb_id: {"lesson": read_run(out_dir / f"{nb_id}.lesson.ipynb", nb_id),
                    "exercises": {k: {"change": change, **read_run(out_dir / f"{nb_id}.exercise{k}.ipynb", nb_id)}
                                  for k, change in exercises.items()}}
            for nb_id, exercises in course.items()}


def _secs(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds == seconds else "time not recorded"


def _change_text(change: dict[str, Any]) -> str:
    if "edit" in change:
        return f"edit `{change['edit']['find']}` to `{change['edit']['replace']}`"
    return ", ".join(f"`{k}: {v!r}`" for k, v in change.items())


def page(runs: dict[str, dict[str, Any]]) -> str:
    """The instructor's page from the runs: per notebook, the lesson's time and each exercise's two verdicts."""
    lines = ["# Instructor's page: what each exercise shows on its lesson", "",
             "Written by `make instructor` (`python -m vlmrobust.course`): every lesson was run unchanged and once per",
             "exercise with the change of `params/course.yaml`, and each line below is the output of the exercise's",
             "check in those runs (nothing here is typed). *Unchanged* is the lesson as it ships, where every check",
             "says NOT TRIED YET; *changed* is the run a student makes. Seconds are whole papermill runs on the",
             "machine that wrote the page, one after the other.", ""]
    for nb_id, run in runs.items():
        lesson = run["lesson"]
        lines += [f"## {nb_id}", "",
                  f"Lesson run: {_secs(lesson['seconds'])}" + (f" — **failed**: {lesson['error']}" if lesson["error"]
                                                             else "."), ""]
        for k, ex in run["exercises"].items():
            before = lesson["checks"].get(k, {})
            after = ex["checks"].get(k, {})
            lines += [f"### Exercise {nb_id[:2]}.{k}", "",
                      f"* change: {_change_text(ex['change'])} ({_secs(ex['seconds'])})",
                      f"* rule: {after.get('expected') or before.get('expected', 'no output')}",
                      f"* unchanged lesson: {before.get('your run', 'no output')} — "
                      f"{before.get('verdict', 'no output')}"]
            if ex["error"]:
                lines.append(f"* changed run **failed**: {ex['error']}")
            else:
                lines.append(f"* with the change: {after.get('your run', 'no output')} — "
                             f"**{after.get('verdict', 'no output')}**")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.course", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(paths.REPO_ROOT / "docs" / "instructor.md"), help="the page to write")
    ap.add_argument("--only", nargs="*", default=None, help="notebook ids (default: every notebook of the course)")
    args = ap.parse_args(argv)
    os.environ.setdefault("VLMROBUST_RESULTS_ROOT", str(paths.REPO_ROOT / "results" / "variants" / "course"))
    os.environ.setdefault("VLMROBUST_PROGRESS", "line")
    out_dir = paths.REPO_ROOT / "executed" / "course"
    out_dir.mkdir(parents=True, exist_ok=True)
    course = changes()
    for nb_id in args.only or list(course):
        print(f"== {nb_id}: the lesson, then {len(course[nb_id])} exercises", flush=True)
        _run(nb_id, {}, "lesson", out_dir)
        for k, change in course[nb_id].items():
            _run(nb_id, change, f"exercise{k}", out_dir)
            run = read_run(out_dir / f"{nb_id}.exercise{k}.ipynb", nb_id)
            print(f"   exercise {k}: {run['checks'].get(k, {}).get('verdict', run['error'] or 'no output')} "
                  f"({_secs(run['seconds'])})", flush=True)
    Path(args.out).write_text(page(collect(course, out_dir)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
