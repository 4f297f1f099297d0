"""``MCPServer.run_http`` stops on SIGTERM the way ``trimcp serve`` does: drained, status 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent(
    """
    from trimcp.server import MCPServer

    server = MCPServer("signals")

    @server.tool()
    def ping() -> str:
        \"\"\"Answer pong.\"\"\"
        return "pong"

    server.run_http(port=0)
    """
)


@pytest.mark.slow
def test_run_http_drains_and_exits_0_on_sigterm() -> None:
    command = [sys.executable, "-c", _SCRIPT]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        try:
            for line in process.stderr:
                if "MCP over Streamable HTTP at" in line:
                    break
            else:
                pytest.fail("the server never said where it listens")
            os.kill(process.pid, signal.SIGTERM)
            rest = process.stderr.read()
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0, rest
    assert "Traceback" not in rest
