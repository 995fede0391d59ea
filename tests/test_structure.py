"""The library's structure: an import graph without circles, small modules, one folder per analysis, short notebooks.

The import graph is read from the source with :mod:`ast`, function-level imports included, at two
granularities: module → module, and package → package (``vlmrobust.score``, ``vlmrobust.analysis.ras``, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

from vlmrobust import nbtools, paths

LIB = paths.REPO_ROOT / "lib"
PKG = LIB / "vlmrobust"
MAX_MODULE_LINES = 400
MAX_NOTEBOOK_CODE_LINES = 300
ANALYSES = ("selection", "ras", "drift", "visibility", "escalation", "card")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py")) if "zoo" not in p.relative_to(PKG).parts}


def _resolve(importer: str, is_pkg: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".") if is_pkg else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_edges(modules: dict[str, Path]) -> set[tuple[str, str]]:
    """``(importer, imported)`` pairs between the library's modules, function-level imports included.

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of ``pkg``.
    """
    edges = set()
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_pkg, node.level, node.module)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in modules else base)
            for t in targets:
                while t and t not in modules:  # `import vlmrobust.x.y` of a name inside a module
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("vlmrobust"):
                    edges.add((name, t))
    return edges


def package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module belongs to: itself when it is a package, else its parent."""
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def find_cycle(edges: set[tuple[str, str]]) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree():
    assert find_cycle({("a", "b"), ("b", "c"), ("c", "a")}) == ["a", "b", "c", "a"]
    assert find_cycle({("a", "b"), ("a", "c"), ("b", "c")}) is None


def test_function_level_imports_are_edges(tmp_path):
    mods = {"vlmrobust.p": tmp_path / "p" / "__init__.py", "vlmrobust.p.a": tmp_path / "p" / "a.py",
            "vlmrobust.p.b": tmp_path / "p" / "b.py"}
    for p in mods.values():
        p.parent.mkdir(exist_ok=True)
    mods["vlmrobust.p"].write_text("")
    mods["vlmrobust.p.a"].write_text("def f():\n    from . import b\n")
    mods["vlmrobust.p.b"].write_text("from .a import f\n")
    assert import_edges(mods) == {("vlmrobust.p.a", "vlmrobust.p.b"), ("vlmrobust.p.b", "vlmrobust.p.a")}


def test_no_circle_between_modules():
    cycle = find_cycle(import_edges(_modules()))
    assert cycle is None, " -> ".join(cycle)


def test_no_circle_between_packages():
    modules = _modules()
    edges = set()
    for a, b in import_edges(modules):
        pa, pb = package_of(a, modules), package_of(b, modules)
        # a package's own __init__ importing its submodules, or a submodule its parents, is not a package arrow
        if pa != pb and not pa.startswith(pb + ".") and not pb.startswith(pa + "."):
            edges.add((pa, pb))
    cycle = find_cycle(edges)
    assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_over_400_lines(name):
    n = len(_modules()[name].read_text().splitlines())
    assert n <= MAX_MODULE_LINES, f"{name}: {n} lines (split it)"


def test_every_analysis_is_one_folder_with_its_claims():
    import importlib

    for name in ANALYSES:
        folder = PKG / "analysis" / name
        assert (folder / "__init__.py").is_file(), name
        assert (folder / "claims.py").is_file(), f"{name}: its paper's claims table is built in claims.py"
        face = importlib.import_module(f"vlmrobust.analysis.{name}")
        assert face.claims_table is importlib.import_module(f"vlmrobust.analysis.{name}.claims").claims_table
        rows = {p.stem for p in folder.glob("*.py")} & {"observations", "checks", "findings", "verdicts"}
        assert not rows, f"{name}: claim rows live in claims*.py modules, not {sorted(rows)}"
    assert not (PKG / "metrics").exists() and not (PKG / "select").exists()


def notebook_code_lines(nb_id: str) -> int:
    """Non-blank lines of a notebook's code cells."""
    nb = jupytext.read(nbtools.notebook_path(nb_id))
    return sum(1 for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines() if line.strip())


@pytest.mark.parametrize("nb_id", nbtools.notebook_ids())
def test_no_notebook_over_300_lines_of_code(nb_id):
    n = notebook_code_lines(nb_id)
    assert n <= MAX_NOTEBOOK_CODE_LINES, f"{nb_id}: {n} lines of code"


def test_every_import_inside_the_library_names_something_that_exists():
    """Function-level imports run only when called: check each one's module and names now."""
    import importlib

    modules = _modules()
    missing = []
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _resolve(name, is_pkg, node.level, node.module)
            if not base.startswith("vlmrobust"):
                continue
            try:
                mod = importlib.import_module(base)
            except ImportError as exc:
                missing.append(f"{name}:{node.lineno}: {base} ({exc})")
                continue
            for a in node.names:
                if not hasattr(mod, a.name) and f"{base}.{a.name}" not in modules:
                    missing.append(f"{name}:{node.lineno}: {base}.{a.name}")
    assert not missing, "\n".join(missing)
