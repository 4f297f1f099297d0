"""No import cycles among the ``trimcp.http`` modules, counting imports under ``TYPE_CHECKING``.

A cycle "only for types" still means two modules must be read together. The graph is built
with ``ast`` from every ``import`` and ``from ... import`` at any depth (inside functions and
``if TYPE_CHECKING:`` blocks too), relative imports resolved; ``from pkg import name`` also
counts as importing ``pkg.name`` when that is a module. A cycle is a strongly connected
component of more than one module (Tarjan's algorithm).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = ROOT / "trimcp" / "http"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Return the ``known`` modules that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    found.discard(name)
    return found & known


def import_graph(paths: list[Path]) -> dict[str, set[str]]:
    """Return the import arrows among the modules at ``paths``."""
    modules = {_module_name(path): path for path in paths}
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of ``graph`` with more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_in_trimcp_http() -> None:
    graph = import_graph(sorted(PACKAGE.glob("*.py")))
    assert "trimcp.http._app" in graph  # the graph found the package
    assert cycles(graph) == []


def test_the_checker_sees_cycles_under_type_checking(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    # A relative import made only for type checking counts, and so does a submodule
    # named in ``from . import``.
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import _third\n"
        "if TYPE_CHECKING:\n"
        "    from ._other import X\n"
    )
    module = tmp_path / "mod.py"
    module.write_text(source, encoding="utf-8")
    known = {"pkg", "pkg.mod", "pkg._other", "pkg._third"}
    assert _imports("pkg.mod", module, known) == {"pkg", "pkg._other", "pkg._third"}
