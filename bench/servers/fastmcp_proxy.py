"""FastMCP's proxy (``fastmcp.server.create_proxy``) serving an ``mcpServers`` file over HTTP.

Usage (``bench/gateway.py`` runs it)::

    python bench/servers/fastmcp_proxy.py /tmp/x/mcp.json

The documented way to put FastMCP in front of the servers of an ``mcpServers`` configuration
(https://gofastmcp.com/servers/proxy, "Configuration-Based Proxies"): ``create_proxy(config)``
(``FastMCP.as_proxy`` in FastMCP 2) with the parsed file, served by ``run_http_async`` on
Streamable HTTP (uvicorn, SSE answers: FastMCP's defaults). The listening socket is bound
here, on 127.0.0.1 and a free port, and handed to uvicorn (``sockets=``), so the port is
known before the server runs: ``PORT <n>`` is printed on stdout at once (the bench then waits
for the first ``initialize`` to succeed). uvicorn's access log is off (``log_level
"warning"``): FastMCP is measured without per-request log lines, which only favours it.

The process exits when its stdin closes (the bench's cue): the task group is cancelled, the
proxy's lifespan closes its backend clients, which stops the stdio upstream.

``fastmcp`` is not a dependency of trimcp: ``pip install 'trimcp[bench]'`` (or ``fastmcp``).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import anyio
from fastmcp.server import create_proxy


async def main(config: dict[str, object]) -> None:
    proxy = create_proxy(config, name="fastmcp-bench-proxy")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.set_inheritable(True)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    async with anyio.create_task_group() as group:

        async def serve() -> None:
            await proxy.run_http_async(
                show_banner=False,
                transport="http",
                host="127.0.0.1",
                port=sock.getsockname()[1],
                log_level="warning",
                sockets=[sock],
            )
            group.cancel_scope.cancel()

        group.start_soon(serve)
        await anyio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
        group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main, json.loads(Path(sys.argv[1]).read_text()))
