"""The import arrows between trimcp's packages, checked with ``ast``.

Each subpackage may import only the trimcp packages listed for it. A new subpackage must be
added here, which is the point: the layering is decided, not discovered.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trimcp"

# subpackage (or top-level module) -> trimcp packages it may import
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "config": {"errors"},
    "actors": {"errors"},
    "protocol": {"errors"},
    "transports": {"errors", "protocol", "actors"},
    "supervision": {"errors", "actors", "config"},
    # The server side of OAuth (verifiers, metadata, challenges) and the client side: below
    # every transport, so that http (and the client's HTTP transport) can use it.
    "auth": {"errors", "config"},
    # What happens per request, for whoever observes it (Prometheus counters, OpenTelemetry
    # spans and histograms, request log fields): below the sessions and the client, which
    # call its hooks.
    "telemetry": {"errors", "config", "protocol"},
    # auth: the type of a session's identity (RequestContext.identity).
    "sessions": {"errors", "protocol", "actors", "supervision", "transports", "auth", "telemetry"},
    "testing": {
        "errors",
        "actors",
        "supervision",
        "protocol",
        "transports",
        "sessions",
        "server",
        "http",
        "client",
        "auth",
    },
    "notify": {"errors", "actors", "supervision"},
    "http": {
        "errors",
        "protocol",
        "actors",
        "supervision",
        "sessions",
        "transports",
        "config",
        "auth",
    },
    "server": {
        "errors",
        "protocol",
        "actors",
        "supervision",
        "sessions",
        "transports",
        "config",
        "http",
        "notify",
        "auth",
    },
    "client": {
        "errors",
        "config",
        "protocol",
        "actors",
        "supervision",
        "transports",
        "auth",
        "telemetry",
    },
    "skills": {
        "errors",
        "config",
        "protocol",
        "sessions",
        "server",
        "transports",
        "actors",
        # run_command reuses the stdio launcher's environment sanitiser (client.process).
        "client",
        "_logging",
        # trimcp skills --http --auth ...
        "auth",
        "_auth_options",
        "http",
    },
    "_logging": {"errors", "config", "telemetry"},
    "_auth_options": {"errors", "config", "auth"},
    "cli": {
        "errors",
        "config",
        "actors",
        "supervision",
        "_logging",
        "daemon",
        "skills",
        "client",
        "protocol",
        "server",
        "http",
        "transports",
        "auth",
        "_auth_options",
        "admin",
        "telemetry",
    },
    "daemon": {
        "errors",
        "config",
        "actors",
        "supervision",
        "sessions",
        "transports",
        "http",
        "server",
        "notify",
        "_logging",
        "skills",
        "client",
        "gateway",
        "auth",
        "admin",
        "telemetry",
    },
    # Products built on the public API: the gateway fronting many servers as one.
    "gateway": {
        "errors",
        "config",
        "protocol",
        "sessions",
        "server",
        "client",
        "skills",
        "actors",
        "supervision",
        "transports",
        "notify",
        "telemetry",
    },
    # The daemon's admin app: it looks at every running part, and is started by the daemon.
    "admin": {
        "errors",
        "config",
        "actors",
        "supervision",
        "sessions",
        "transports",
        "http",
        "server",
        "notify",
        "client",
        "gateway",
        "auth",
        "telemetry",
        "protocol",
    },
    "__init__": {"errors", "actors", "supervision", "config"},
    "__main__": {"cli"},
}

# Packages that must not import trio (sans-IO or plain data).
NO_TRIO = {"errors", "config", "protocol"}


def _owner(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _private_imports_of_others(tree: ast.Module, owner: str) -> list[str]:
    """Return imports of another subpackage's private modules (``trimcp.x._y``)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if (
                parts[0] == "trimcp"
                and len(parts) > 2
                and parts[1] != owner
                and parts[2].startswith("_")
            ):
                found.append(node.module)
    return found


def _imported_trimcp_packages(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "trimcp" and len(parts) > 1:
                found.add(parts[1])
            elif parts[0] == "trio":
                found.add("<trio>")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_only_lower_layers(path: Path) -> None:
    owner = _owner(path)
    assert owner in ALLOWED, f"{owner} is not in the layering table of tests/test_layering.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    escaping = [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level >= 2
    ]
    assert not escaping, f"{path}: import other packages absolutely (trimcp.x), not {escaping}"
    private = _private_imports_of_others(tree, owner)
    assert not private, f"{path} imports private modules of other packages: {private}"
    imported = _imported_trimcp_packages(tree)
    if owner in NO_TRIO:
        assert "<trio>" not in imported, f"{path} imports trio but {owner} must not"
    imported.discard("<trio>")
    imported.discard(owner)
    forbidden = imported - ALLOWED[owner]
    assert not forbidden, f"{path} ({owner}) imports {sorted(forbidden)}"


# --- no import cycles between modules ------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


NAMES = {_module_name(path): path for path in MODULES}


def _module_imports(name: str, path: Path) -> set[str]:
    """The trimcp modules ``name`` imports, anywhere in it (``TYPE_CHECKING`` blocks too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets.add(module)
            # ``from package import module`` imports the submodule too.
            targets.update(f"{module}.{alias.name}" for alias in node.names)
    return {target for target in targets if target in NAMES and target != name}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others."""
    reach = {node: _reachable(graph, node) for node in graph}
    groups = {
        tuple(sorted(other for other in reach[node] if node in reach[other]))
        for node in graph
        if node in reach[node]
    }
    return sorted(list(group) for group in groups)


def test_no_module_imports_itself_through_others() -> None:
    graph = {name: _module_imports(name, path) for name, path in NAMES.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
