"""The public surface: each package's ``__all__`` is what it exports, and nothing else.

Modelled on trio's ``src/trio/_tests/test_exports.py``. Every package under ``trimcp`` is
found with ``pkgutil``, so a new one is checked without being listed here. ``trimcp.errors``
is checked too: it is the one home of public exceptions, and its docstring draws their tree.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import pkgutil
import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest

import trimcp
import trimcp.client
import trimcp.errors
import trimcp.protocol
import trimcp.server

if TYPE_CHECKING:
    from types import ModuleType


def _packages() -> list[ModuleType]:
    found = pkgutil.walk_packages(trimcp.__path__, "trimcp.")
    return [trimcp, *(importlib.import_module(info.name) for info in found if info.ispkg)]


PACKAGES = _packages()
PUBLIC = [*PACKAGES, trimcp.errors]


def _ids(module: ModuleType) -> str:
    return module.__name__


def _all(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    assert isinstance(names, list), f"{module.__name__} has no __all__ list"
    return names


def test_every_package_was_found() -> None:
    names = {package.__name__ for package in PACKAGES}
    assert {"trimcp", "trimcp.actors", "trimcp.client", "trimcp.protocol"} <= names
    assert "trimcp.server" in names


@pytest.mark.parametrize("module", PUBLIC, ids=_ids)
def test_all_names_are_defined(module: ModuleType) -> None:
    missing = [name for name in _all(module) if getattr(module, name, None) is None]
    assert not missing, f"{module.__name__}.__all__ names what it does not define: {missing}"


@pytest.mark.parametrize("module", PUBLIC, ids=_ids)
def test_no_name_is_listed_twice(module: ModuleType) -> None:
    twice = sorted(name for name, count in Counter(_all(module)).items() if count > 1)
    assert not twice, f"{module.__name__}.__all__ lists {twice} more than once"


def _plumbing(name: str, value: object) -> bool:
    """Tell whether a public-looking attribute is import machinery, not API."""
    return (
        inspect.ismodule(value)  # submodules, and modules imported to be used
        or value is __future__.annotations
        or name == "TYPE_CHECKING"
    )


@pytest.mark.parametrize("module", PACKAGES, ids=_ids)
def test_no_silent_exports(module: ModuleType) -> None:
    """Whatever a package's __init__ binds under a public name (its imports) is in __all__."""
    listed = set(_all(module))
    silent = sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and name not in listed and not _plumbing(name, value)
    )
    assert not silent, f"{module.__name__} exports {silent} without listing them in __all__"


def _exceptions(module: ModuleType) -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _all(module):
        value = getattr(module, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            found[name] = value
    return found


@pytest.mark.parametrize("package", PACKAGES, ids=_ids)
def test_public_exceptions_come_from_trimcp_errors(package: ModuleType) -> None:
    elsewhere = {
        name: cls.__module__
        for name, cls in _exceptions(package).items()
        if cls.__module__ != "trimcp.errors"
    }
    assert not elsewhere, f"{package.__name__} exports exceptions defined outside errors.py"


def test_trimcp_errors_lists_every_exception_it_defines() -> None:
    defined = {
        name
        for name, value in vars(trimcp.errors).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == "trimcp.errors"
    }
    assert defined <= set(_all(trimcp.errors))


def _drawn_tree() -> dict[str, str]:
    """Read the tree in errors.py's docstring: each class name -> the name it hangs from."""
    doc = trimcp.errors.__doc__ or ""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for line in doc[doc.index("    Exception\n") :].splitlines():
        match = re.match(r"    ([│├└─ ]*)(\w+)", line)
        if match is None:
            break
        depth = len(match.group(1)) // 4  # each level is drawn four characters wide
        del stack[depth:]
        if stack:
            parents[match.group(2)] = stack[-1]
        stack.append(match.group(2))
    return parents


def test_the_docstring_draws_every_exception_under_its_parent() -> None:
    drawn = _drawn_tree()
    actual = {name: cls.__bases__[0].__name__ for name, cls in _exceptions(trimcp.errors).items()}
    assert drawn == actual


def test_a_name_several_packages_export_is_one_object() -> None:
    """``trimcp.client.Root`` and ``trimcp.server.Root`` are the protocol's ``Root``, and so on.

    ``HOMONYMS`` are the exceptions, each a different thing under the same name; the test
    fails when one appears or goes, so that the list stays true.
    """
    homonyms = {
        "DEFAULT_MAX_MESSAGE_SIZE",  # trimcp.transports keeps its own copy of the protocol's
        "Phase",  # an actor's lifecycle phase vs an MCP session's
        "Request",  # an actor's call message vs a JSON-RPC request
        "main",  # the trimcp command vs the trimcp skills command
    }
    exporters: dict[str, list[object]] = {}
    for module in PUBLIC:
        for name in _all(module):
            exporters.setdefault(name, []).append(getattr(module, name))
    differing = {
        name
        for name, values in exporters.items()
        if any(value is not values[0] for value in values[1:])
    }
    assert differing == homonyms


@pytest.mark.parametrize(
    "name",
    [
        "Completion",
        "ElicitResult",
        "Page",
        "PromptMessage",
        "ResourceContents",
        "Root",
        "ToolAnnotations",
    ],
)
def test_client_and_server_share_the_protocol_payloads(name: str) -> None:
    shared = getattr(trimcp.protocol, name)
    assert getattr(trimcp.client, name) is shared
    assert getattr(trimcp.server, name) is shared
    assert shared.__module__.startswith("trimcp.protocol.")
