"""Loading the server a ``trimcp run`` TARGET names.

::

    demo.py          the one MCPServer demo.py defines, else its one function returning one
    demo.py:name     demo.py's ``name``: an MCPServer, or a function of no arguments returning one
    pkg.mod:name     the same, from a module

A file is imported as the module named after it, with its folder first on ``sys.path``, so
that its sibling imports work as they do under ``python demo.py``. A module is imported with
the working directory first on ``sys.path``, as ``python -m`` does. Importing runs the user's
code; what it raises is reported, not re-raised.

The steps, and their checks and messages, are the daemon's ``[server] object`` loading
(``trimcp.daemon.import_server_module``, ``server_attribute``, ``as_server``), worded here
for a TARGET: every failure is a ``ConfigError`` that reads::

    cannot serve demo.py:srv
      'demo.py' has no attribute 'srv'
      expected: the name of an attribute of the module
      fix:      did you mean "demo.py:server"?

and whose ``__cause__`` is the user's exception, if there was one (``--debug`` prints it).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.daemon import ServerReference, as_server, import_server_module, server_attribute
from trimcp.errors import ConfigError
from trimcp.server import MCPServer

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

    from trimcp.cli._target import Target

__all__ = ["load_target"]

_LABEL_WIDTH = len("expected: ")


def load_target(target: Target) -> MCPServer:
    """Import the server ``target`` (a ``file`` or ``module`` TARGET) names, and return it.

    Changes ``sys.path`` for the whole process (module docstring).

    Raises:
        ConfigError: the module cannot be imported or raised, names nothing that is (or
            returns) an MCPServer, or the file names several and the TARGET none of them.
    """
    if target.kind == "file" and target.path is not None:
        return _load_file(target, target.path)
    if target.kind == "module" and target.attribute:
        module_name = target.text.partition(":")[0]
        reference = _reference(
            target.text,
            module_name,
            lambda top: (
                f"run trimcp in the folder that holds {top}/ or {top}.py (the working"
                " directory comes first on sys.path), or add that folder to PYTHONPATH"
            ),
        )
        _put_first_on_sys_path(Path.cwd())
        module = import_server_module(reference, module_name)
        return _mcp_server(reference, server_attribute(reference, module, target.attribute))
    raise ValueError(f"{target.text!r} is not a Python target")


def _load_file(target: Target, path: Path) -> MCPServer:
    file = target.text.rpartition(":")[0] if target.attribute else target.text
    reference = _reference(
        target.text,
        file,
        lambda top: f"if {top} is your own code, put {top}.py or {top}/ beside {file}",
    )
    if "." in path.stem:
        raise reference.error(
            "a file name that is a module name",
            f"rename {file} without the dots (Python would read them as packages)",
            (),
        )
    _put_first_on_sys_path(path.parent)
    module = import_server_module(reference, path.stem)
    loaded = getattr(module, "__file__", None)
    if loaded is None or Path(loaded).resolve() != path:
        raise reference.error(
            "a file whose name no loaded module has",
            f"rename {file}",
            (f"a module named {path.stem!r} is already loaded, from {loaded or 'built-ins'}",),
        )
    if target.attribute:
        return _mcp_server(reference, server_attribute(reference, module, target.attribute))
    name = _the_one_server(reference, module, file)
    # From here on, messages name what was chosen: "calling demo.py:make() raised ...".
    chosen = dataclasses.replace(reference, text=f"{file}:{name}")
    return _mcp_server(chosen, getattr(module, name))


def _reference(text: str, owner: str, search_fix: Callable[[str], str]) -> ServerReference:
    def error(expected: str, fix: str, detail: Sequence[str]) -> ConfigError:
        lines = [f"cannot serve {text}", *(f"  {line}" for line in detail)]
        lines += [f"  {'expected:':<{_LABEL_WIDTH}}{expected}", f"  {'fix:':<{_LABEL_WIDTH}}{fix}"]
        return ConfigError("\n".join(lines), given=text, expected=expected)

    return ServerReference(
        text=text,
        owner=owner,
        search_fix=search_fix,
        point_fix=f"name the MCPServer, or a function returning one, after the colon: {owner}:name",
        error=error,
    )


def _put_first_on_sys_path(folder: Path) -> None:
    entry = str(folder)
    if entry in sys.path:
        sys.path.remove(entry)
    sys.path.insert(0, entry)
    # A folder's listing may be cached from before its module was written.
    importlib.invalidate_caches()


def _the_one_server(reference: ServerReference, module: ModuleType, file: str) -> str:
    """Name the file's one MCPServer; else its one function that returns one."""
    servers: dict[int, str] = {}
    for name, value in vars(module).items():
        if isinstance(value, MCPServer) and not name.startswith("__"):
            servers.setdefault(id(value), name)
    factories = [name for name, value in vars(module).items() if _is_factory(value, module)]
    kinds = ((list(servers.values()), "MCPServer objects"), (factories, "functions returning one"))
    for names, what in kinds:
        if len(names) == 1:
            return names[0]
        if names:
            listed = ", ".join(f"{file}:{name}" for name in names)
            raise reference.error(
                "one MCPServer in the file, or the name of the one to serve",
                f"name the one to serve: {listed}",
                (f"{file} defines {len(names)} {what}: {', '.join(names)}",),
            )
    raise reference.error(
        "a file that defines an MCPServer",
        'create one at the top level of the file, e.g.  server = MCPServer("demo"); or name a'
        f" function that returns one: {file}:make_server",
        (f"{file} defines no MCPServer, and no function annotated to return one",),
    )


def _is_factory(value: object, module: ModuleType) -> bool:
    """A function of ``module``'s own, callable without arguments, annotated ``-> MCPServer``."""
    if not inspect.isfunction(value) or value.__module__ != module.__name__:
        return False
    signature = inspect.signature(value)
    returned = signature.return_annotation
    # With `from __future__ import annotations` the annotation is the text as written.
    named = returned is MCPServer or (
        isinstance(returned, str) and returned.rpartition(".")[2] == "MCPServer"
    )
    required = [
        p
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    return named and not required


def _mcp_server(reference: ServerReference, chosen: object) -> MCPServer:
    server = as_server(reference, chosen)
    if isinstance(server, MCPServer):
        return server
    raise reference.error(
        "an MCPServer",
        "serve other request handlers with trimcp serve ([server] object in sys_config.toml)",
        (f"{reference.text} is a {type(server).__qualname__}, not an MCPServer",),
    )
