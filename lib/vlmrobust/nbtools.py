"""The notebook harness: find notebooks, read their parameters, prepare runs.

Used by the Makefile (``make smoke``) and by the tests; a notebook itself never
imports it. Notebooks are ``notebooks/NN_slug.py`` in jupytext percent format;
their parameters are the typed literals of the cell tagged ``parameters``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any

import yaml

from . import paths

__all__ = ["notebook_ids", "notebook_path", "parameters", "read_params_file", "smoke_overrides", "prepare",
           "resolve_cell_index", "execute_until_resolved"]


def notebook_ids() -> list[str]:
    """Ids of every notebook, in number order."""
    return sorted(p.stem for p in paths.notebooks_dir().glob("[0-9][0-9]_*.py"))


def notebook_path(nb_id: str) -> Path:
    path = paths.notebooks_dir() / f"{nb_id}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no notebook {path}; notebooks are {notebook_ids()}")
    return path


def _parameters_source(nb_id: str) -> str:
    import jupytext

    nb = jupytext.read(notebook_path(nb_id))
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"notebook {nb_id} must have exactly one cell tagged 'parameters', found {len(cells)}")
    return cells[0].source


def parameters(nb_id: str) -> dict[str, Any]:
    """Name → default value of every parameter of ``nb_id`` (literals only)."""
    tree = ast.parse(_parameters_source(nb_id))
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        else:
            raise ValueError(f"notebook {nb_id}: the parameters cell may hold typed literal assignments only")
    return out


def read_params_file(path: str | Path) -> dict[str, Any]:
    """A parameter file's overrides (an empty file means no overrides)."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a parameter file must hold a mapping of parameter names to values")
    return data


def smoke_overrides(nb_id: str) -> dict[str, Any]:
    """The overrides of ``params/smoke.yaml`` for ``nb_id`` (its section keyed by the notebook id)."""
    data = read_params_file(paths.params_dir() / "smoke.yaml")
    return dict(data.get(nb_id) or {})


def prepare(nb_id: str, out: str | Path, params: dict[str, Any]) -> Path:
    """Write ``out``: the notebook as .ipynb with ``params`` injected (papermill ``--prepare-only``)."""
    import jupytext
    import papermill as pm

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = out.with_suffix(".src.ipynb")
    nb = jupytext.read(notebook_path(nb_id))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    jupytext.write(nb, raw, fmt="ipynb")
    unknown = sorted(set(params) - set(parameters(nb_id)))
    if unknown:
        raise ValueError(f"{nb_id}: unknown parameter(s) {unknown}; known: {sorted(parameters(nb_id))}")
    pm.execute_notebook(str(raw), str(out), parameters=params, prepare_only=True, kernel_name="python3",
                        language="python", progress_bar=False)
    raw.unlink()
    return out


def resolve_cell_index(nb: Any) -> int:
    """Index of a notebook's resolve cell: the first code cell after its parameters (and injected) cells."""
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    marks = [i for i, tg in enumerate(tags) if "parameters" in tg or "injected-parameters" in tg]
    if not marks:
        raise ValueError("the notebook has no cell tagged 'parameters'")
    for i in range(marks[-1] + 1, len(nb.cells)):
        if nb.cells[i].cell_type == "code":
            return i
    raise ValueError("the notebook has no code cell after its parameters")


def execute_until_resolved(src: str | Path, out: str | Path, kernel_name: str = "python3",
                           cwd: str | Path | None = None) -> None:
    """Execute a (papermill-prepared) notebook up to and including its resolve cell; write the result to ``out``.

    This is ``make run ... UNTIL=resolve``: a parameter variant is checked the way a
    full run would check it (the same injected parameters, the same resolve
    cell) without doing the work. A failing cell raises ``nbclient``'s
    ``CellExecutionError`` after ``out`` is written.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(src), as_version=4)
    nb.cells = nb.cells[: resolve_cell_index(nb) + 1]
    client = NotebookClient(nb, kernel_name=kernel_name, timeout=900,
                            resources={"metadata": {"path": str(cwd or paths.notebooks_dir())}})
    try:
        client.execute()
    finally:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(out))


def _until_resolved(args: argparse.Namespace) -> int:
    from nbclient.exceptions import CellExecutionError

    try:
        execute_until_resolved(args.src, args.out, args.kernel)
    except CellExecutionError as exc:
        print(f"stopped before the work began: {exc.ename}: {exc.evalue}", file=sys.stderr)
        return 1
    print(f"parameters resolved; the notebook up to its resolve cell is in {args.out}")
    return 0


def _compare_figures(args: argparse.Namespace) -> int:
    from .figures import compare_folders

    rows = compare_folders(args.actual, args.committed, args.only)
    bad = [r for r in rows if not r["match"]]
    for r in bad:
        why = ("not written by this run" if r["missing"] else "new (not committed)" if r["new"]
               else "size changed" if not r["same_size"]
               else f"{r['share']:.2%} of pixels differ (max {r['max_diff']})")
        print(f"  {r['figure']}: {why}")
    if bad:
        print(f"{len(bad)} of {len(rows)} figures differ from the committed ones in {args.committed}/; "
              "`make figures` rewrites the committed figures")
    else:
        print(f"all {len(rows)} figures match the committed ones in {args.committed}/ (pixel tolerance)")
    return 1 if bad and args.strict else 0


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.nbtools")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare-smoke", help="write every notebook with its smoke overrides into DIR")
    p.add_argument("dir")
    p.add_argument("--only", nargs="*", default=None, help="notebook ids (default: all)")
    c = sub.add_parser("compare-figures", help="compare a run's figures with the committed ones (pixel tolerance)")
    c.add_argument("actual")
    c.add_argument("committed")
    c.add_argument("--only", nargs="*", default=None, help="notebook ids (default: every committed folder)")
    c.add_argument("--strict", action="store_true", help="exit 1 when a figure differs")
    u = sub.add_parser("until-resolved", help="execute a prepared notebook up to and including its resolve cell")
    u.add_argument("src")
    u.add_argument("out")
    u.add_argument("--kernel", default="python3")
    args = ap.parse_args(argv)
    if args.cmd == "until-resolved":
        return _until_resolved(args)
    if args.cmd == "compare-figures":
        return _compare_figures(args)
    if args.cmd == "prepare-smoke":
        for nb_id in args.only or notebook_ids():
            out = prepare(nb_id, Path(args.dir) / f"{nb_id}.ipynb", smoke_overrides(nb_id))
            print(f"prepared {out}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
