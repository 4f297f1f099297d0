"""Public helpers for testing code built on trimcp's actor runtime, deterministically.

* ``ScriptedActor`` / ``Script``: a real actor whose behaviour is written down (answer calls
  with these values, crash on this message, after N messages or after a delay, fail ``init``,
  overrun ``terminate``) and which records every message it handled and its ``terminate``
  reason. ``ScriptedFactory`` builds a fresh one per (re)start for supervision tests, counts
  them, and can be told to fail the next start.
* ``spawn_unlinked``: start an actor whose crash the test inspects (``exit_reason``,
  ``Down``) instead of letting it cancel the test's nursery.
* ``open_client_pair``: a real ``trimcp.client`` session connected to a server in memory.
* ``open_in_memory_client``: run an MCP server (any ``RequestHandler``, e.g. an
  ``MCPServer``) in a real session over an in-memory stream and drive it as a scripted
  client: ``await client.request(method, params)``, recorded ``notifications``, and
  ``handlers`` answering the server's sampling/elicitation/roots requests.
* Property-based protocol tests (need hypothesis, loaded on first use): strategies
  ``json_values``, ``request_ids``, ``tool_arguments(schema)`` / ``invalid_tool_arguments``,
  ``tool_calls(tools)``, ``mcp_requests(...)``, ``mcp_notifications()``,
  ``malformed_messages()``; and ``ProtocolStateMachine``, a Hypothesis rule-based state
  machine over a real session whose invariants check the wire after every step (one
  response per request, ids echoed, no answers to notifications, nothing but errors before
  ``initialize``, server requests only for declared client capabilities). ``check_wire``
  runs the same checks over any recorded ``WireRecord`` log.
* ``assert_no_leaked_tasks``: walk trio's task tree and fail if anything the test started is
  still running; ``live_actors`` lists the actors that are.

Meant for trio tests under ``MockClock(autojump_threshold=0)`` (pytest-trio's
``autojump_clock``): every delay in a script is trio time, so tests assert exact times.

Not here: pytest plugins or fixtures. This package does not import pytest; the project's
``tests/conftest.py`` shows how to run the leak check after every trio test.
"""

import importlib
from typing import TYPE_CHECKING

from trimcp.errors import ScriptedCrash as ScriptedCrash

from ._client import ClientRequestHandler as ClientRequestHandler
from ._client import InMemoryClient as InMemoryClient
from ._client import open_in_memory_client as open_in_memory_client
from ._client_pair import open_client_pair as open_client_pair
from ._factory import ScriptedFactory as ScriptedFactory
from ._scripted import CrashTrigger as CrashTrigger
from ._scripted import Handled as Handled
from ._scripted import HandledKind as HandledKind
from ._scripted import MessageMatch as MessageMatch
from ._scripted import Script as Script
from ._scripted import ScriptedActor as ScriptedActor
from ._tasks import assert_no_leaked_tasks as assert_no_leaked_tasks
from ._tasks import describe_task as describe_task
from ._tasks import leaked_tasks as leaked_tasks
from ._tasks import live_actors as live_actors
from ._unlinked import spawn_unlinked as spawn_unlinked
from ._wire_log import WireRecord as WireRecord
from ._wire_log import check_wire as check_wire

if TYPE_CHECKING:  # hypothesis is a test extra: these load on first use (__getattr__)
    from ._protocol_machine import ProtocolStateMachine as ProtocolStateMachine
    from ._schema_values import invalid_tool_arguments as invalid_tool_arguments
    from ._schema_values import json_values as json_values
    from ._schema_values import tool_arguments as tool_arguments
    from ._strategies import OversizedMessage as OversizedMessage
    from ._strategies import malformed_messages as malformed_messages
    from ._strategies import mcp_notifications as mcp_notifications
    from ._strategies import mcp_requests as mcp_requests
    from ._strategies import request_ids as request_ids
    from ._strategies import tool_calls as tool_calls

_NEEDS_HYPOTHESIS = {
    "ProtocolStateMachine": "._protocol_machine",
    "invalid_tool_arguments": "._schema_values",
    "json_values": "._schema_values",
    "tool_arguments": "._schema_values",
    "OversizedMessage": "._strategies",
    "malformed_messages": "._strategies",
    "mcp_notifications": "._strategies",
    "mcp_requests": "._strategies",
    "request_ids": "._strategies",
    "tool_calls": "._strategies",
}


def __getattr__(name: str) -> object:
    """Import the Hypothesis helpers on first use, so ``trimcp.testing`` works without it."""
    module = _NEEDS_HYPOTHESIS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ClientRequestHandler",
    "CrashTrigger",
    "Handled",
    "HandledKind",
    "InMemoryClient",
    "MessageMatch",
    "OversizedMessage",
    "ProtocolStateMachine",
    "Script",
    "ScriptedActor",
    "ScriptedCrash",
    "ScriptedFactory",
    "WireRecord",
    "assert_no_leaked_tasks",
    "check_wire",
    "describe_task",
    "invalid_tool_arguments",
    "json_values",
    "leaked_tasks",
    "live_actors",
    "malformed_messages",
    "mcp_notifications",
    "mcp_requests",
    "open_client_pair",
    "open_in_memory_client",
    "request_ids",
    "spawn_unlinked",
    "tool_arguments",
    "tool_calls",
]
