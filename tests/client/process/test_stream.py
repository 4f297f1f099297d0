"""A real server process behind ``open_server_process``: messages, stderr, crashes, launch errors.

Every child is ``sys.executable -c SCRIPT``; every test runs under ``trio.fail_after`` so a
hang fails instead of blocking the suite, and leaving ``open_server_process`` stops the child.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.client.process._launch import ProcessSpec
from trimcp.client.process._process import ServerProcess, open_server_process
from trimcp.errors import (
    CommandNotFound,
    MessageTooLarge,
    ServerExited,
    TransportBroken,
    TransportClosed,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from trimcp.transports import MessageStream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="the scripts use POSIX signals"),
]

# Echo stdin lines to stdout until EOF, then exit 0.
ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


def _spec(script: str, **options: object) -> ProcessSpec:
    return ProcessSpec(
        name="test-server",
        command=sys.executable,
        args=("-c", script),
        source="/proj/.mcp.json (project config)",
        close_grace=0.2,
        term_grace=0.2,
        **options,  # type: ignore[arg-type]  # the ProcessSpec fields a test sets
    )


async def _until(predicate: Callable[[], bool]) -> None:
    """Wait until ``predicate()`` holds: real pipes are read whenever the kernel says so."""
    while not predicate():  # noqa: ASYNC110  # nothing to wait on: the reads are the helper's
        await trio.sleep(0.01)


async def _request(server: ServerProcess, message: bytes) -> bytes:
    """Send ``message``, return the next line (the child may be gone before either)."""
    await server.send_message(message)
    return await server.receive_message()


async def test_echo_round_trip() -> None:
    with trio.fail_after(5):
        async with open_server_process(_spec(ECHO)) as server:
            stream: MessageStream = server  # what a session reads and writes
            assert stream is server
            assert server.argv[0] == sys.executable
            await server.send_messages([b'{"id":1}', b'{"id":2}'])
            await server.send_message(b'{"id":3}')
            assert server.send_messages_now([b'{"id":4}'])
            received = [await server.receive_message() for _ in range(4)]
            assert received == [b'{"id":1}', b'{"id":2}', b'{"id":3}', b'{"id":4}']
            assert server.receive_ready() == []
            stats = server.statistics()
            assert (stats.pid, stats.returncode, stats.phase) == (server.pid, None, "start")
        assert server.returncode == 0  # it left on stdin EOF, before any signal


async def test_crlf_and_blank_lines_from_the_server() -> None:
    script = r"""
import sys
sys.stdout.buffer.write(b'{"a":1}\r\n\r\n\n{"b":2}\r\n')
sys.stdout.buffer.flush()
sys.stdin.read()
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            assert await server.receive_message() == b'{"a":1}'
            assert await server.receive_message() == b'{"b":2}'


async def test_oversized_line_is_refused_and_the_stream_goes_on() -> None:
    script = """
import sys
sys.stdout.write("x" * 5000 + "\\n" + '{"after":1}\\n')
sys.stdout.flush()
sys.stdin.read()
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script, max_message_size=100)) as server:
            with pytest.raises(MessageTooLarge):
                await server.receive_message()
            assert await server.receive_message() == b'{"after":1}'


async def test_stderr_tail_keeps_the_last_lines() -> None:
    script = """
import sys
for n in range(80):
    print(f"log line {n}", file=sys.stderr)
sys.stderr.flush()
print('{"ready":true}', flush=True)
sys.stdin.read()
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script, stderr_lines=10)) as server:
            assert await server.receive_message() == b'{"ready":true}'
            await _until(lambda: server.statistics().stderr_lines == 80)
            assert server.stderr_tail() == tuple(f"log line {n}" for n in range(70, 80))


async def test_noisy_stderr_never_blocks_the_server() -> None:
    # 4 MiB of stderr: a parent that did not drain it would leave this child blocked after
    # the first 64 KiB, and the stdout line would never come.
    script = """
import sys
line = "y" * 1023 + "\\n"
for _ in range(4096):
    sys.stderr.write(line)
sys.stderr.flush()
print('{"done":true}', flush=True)
sys.stdin.read()
"""
    with trio.fail_after(10):
        async with open_server_process(_spec(script)) as server:
            assert await server.receive_message() == b'{"done":true}'


async def test_crash_during_start_reports_code_and_stderr() -> None:
    script = """
import sys
print("Traceback (most recent call last):", file=sys.stderr)
print("KeyError: 'GITHUB_TOKEN'", file=sys.stderr)
sys.exit(3)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            with pytest.raises(ServerExited) as caught:
                await _request(server, b'{"jsonrpc":"2.0","id":1,"method":"initialize"}')
    error = caught.value
    assert (error.returncode, error.signal, error.during) == (3, None, "start")
    assert error.server == "test-server"
    assert error.stderr_tail == ("Traceback (most recent call last):", "KeyError: 'GITHUB_TOKEN'")
    assert isinstance(error.__cause__, TransportBroken | TransportClosed)
    text = str(error)
    assert text.startswith('MCP server "test-server" exited while starting with exit code 3\n')
    assert "  config:   /proj/.mcp.json (project config)" in text
    assert "  exit:     code 3" in text
    assert "    | KeyError: 'GITHUB_TOKEN'" in text
    assert '"env_passthrough"' in text


async def test_crash_while_in_use_fails_receive_and_send() -> None:
    script = """
import sys
sys.stdout.write(sys.stdin.readline())
sys.stdout.flush()
sys.stdin.readline()
print("RuntimeError: database is locked", file=sys.stderr)
sys.exit(1)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            await server.send_message(b'{"id":1}')
            assert await server.receive_message() == b'{"id":1}'
            server.mark_ready()
            await server.send_message(b'{"id":2}')
            with pytest.raises(ServerExited) as caught:
                await server.receive_message()
            # Writing to the dead server: kept back now, reported by the next send.
            assert not server.send_messages_now([b'{"id":3}'])
            with pytest.raises(ServerExited):
                await server.send_messages([])
    error = caught.value
    assert (error.returncode, error.during) == (1, "operation")
    text = str(error)
    assert text.startswith('MCP server "test-server" exited while in use with exit code 1\n')
    assert "    | RuntimeError: database is locked" in text
    assert "it crashed while in use" in text


async def test_killed_by_a_signal() -> None:
    script = """
import os, signal, sys
print("about to die", file=sys.stderr, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            with pytest.raises(ServerExited) as caught:
                await server.receive_message()
    assert caught.value.signal == "SIGKILL"
    assert caught.value.returncode == -9
    assert "was stopped by SIGKILL while starting" in str(caught.value)
    assert "    | about to die" in str(caught.value)


async def test_environment_is_sanitised_and_cwd_applied(tmp_path: Path) -> None:
    script = """
import json, os
print(json.dumps({"cwd": os.getcwd(), "keys": sorted(os.environ)}), flush=True)
input()
"""
    parent = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nowhere", "SECRET": "s"}
    spec = _spec(script, cwd=str(tmp_path), env={"GIVEN": "1"}, env_passthrough=("MISSING",))
    with trio.fail_after(5):
        async with open_server_process(spec, environ=parent) as server:
            line = await server.receive_message()
    report = __import__("json").loads(line)
    assert report["cwd"] == str(tmp_path)
    assert {"PATH", "HOME", "GIVEN"} <= set(report["keys"])
    assert "SECRET" not in report["keys"]


async def test_missing_shebang_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "server"
    script.write_text("#!/nonexistent/bin/mcp-runtime\n")
    script.chmod(0o755)
    with pytest.raises(CommandNotFound) as caught:
        async with open_server_process(ProcessSpec(name="s", command=str(script))):
            pytest.fail("started")
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert '"/nonexistent/bin/mcp-runtime", which runs its script, was not found' in str(
        caught.value
    )


async def test_not_found_before_anything_starts() -> None:
    spec = ProcessSpec(name="s", command="no-such-mcp-server-x1")
    with pytest.raises(CommandNotFound, match="no-such-mcp-server-x1"):
        async with open_server_process(spec, environ={"PATH": "/nonexistent"}):
            pytest.fail("started")


async def test_a_closed_stream_says_closed_not_exited() -> None:
    with trio.fail_after(5):
        async with open_server_process(_spec(ECHO)) as server:
            await server.aclose()
            assert server.closing
            with pytest.raises(TransportClosed):
                await server.receive_message()
            with pytest.raises(TransportClosed):
                await server.send_message(b"{}")


async def test_a_blocked_reader_is_woken_by_close() -> None:
    async def read(server: ServerProcess) -> None:
        with pytest.raises(TransportClosed):
            await server.receive_message()

    with trio.fail_after(5):
        async with open_server_process(_spec(ECHO)) as server, trio.open_nursery() as nursery:
            nursery.start_soon(read, server)
            await trio.testing.wait_all_tasks_blocked()
            await server.aclose()
