"""No import cycles among the session modules, counting imports under ``TYPE_CHECKING``.

A cycle "only for types" still means two modules must be read together. The graph is built
with ``ast`` from every ``import`` and ``from ... import`` at any depth (inside functions and
``if TYPE_CHECKING:`` blocks too), with relative imports resolved. Checked for the server's
``trimcp.sessions`` and the client's ``trimcp.client._session*`` modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = ROOT / "trimcp"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Return the trimcp modules that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                # ``from . import x`` may name a submodule; otherwise the module itself.
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in known else module)
    found.discard(name)
    return found & known


def import_graph(selected: set[str]) -> dict[str, set[str]]:
    """Return the import arrows among the ``selected`` modules."""
    modules = _all_modules()
    known = set(modules)
    return {name: _imports(name, modules[name], known) & selected for name in selected}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one cycle of ``graph`` as a path that ends where it starts, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(graph[node]):
            cycle = visit(target, [*path, node])
            if cycle is not None:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle is not None:
            return cycle
    return None


def _selected(prefix: str) -> set[str]:
    return {name for name in _all_modules() if name.startswith(prefix)}


@pytest.mark.parametrize("prefix", ["trimcp.sessions", "trimcp.client._session"])
def test_no_import_cycle(prefix: str) -> None:
    cycle = find_cycle(import_graph(_selected(prefix)))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checker_sees_cycles_under_type_checking(tmp_path: Path) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    # The graph builder counts a relative import made only for type checking.
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._other import X\n"
    module = tmp_path / "mod.py"
    module.write_text(source, encoding="utf-8")
    assert _imports("pkg.mod", module, {"pkg.mod", "pkg._other"}) == {"pkg._other"}
