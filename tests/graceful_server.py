"""A server for ``tests/test_graceful_stop.py``: one tool that naps, and says when it starts.

Run by ``trimcp serve`` as ``[server] object = "graceful_server:server"`` with this folder on
``[server] path``. ``nap`` creates ``$GRACEFUL_MARKER_DIR/started-<n>`` when it begins, so the
test knows the call is in flight without guessing at timings.
"""

from __future__ import annotations

import os
from pathlib import Path

import trio

from trimcp.server import MCPServer

server = MCPServer("graceful-test")


@server.tool()
async def nap(seconds: float, tag: str = "call") -> str:
    """Sleep ``seconds``, then say so."""
    marker_dir = os.environ.get("GRACEFUL_MARKER_DIR")
    if marker_dir:
        (Path(marker_dir) / f"started-{tag}").touch()
    await trio.sleep(seconds)
    return f"slept {seconds:g} s"
