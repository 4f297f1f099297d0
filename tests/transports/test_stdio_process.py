"""Real file descriptors: a child process served through ``open_stdio_stream``, and TTYs."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from trimcp.errors import TransportClosed
from trimcp.transports import StdioStream
from trimcp.transports._stdio import _private_fd

ECHO_SERVER = Path(__file__).with_name("_echo_server.py")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _child_env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


async def test_echo_over_pipes_then_clean_exit() -> None:
    big = b'{"data":"' + b"x" * (1024 * 1024) + b'"}'
    messages = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', big, b"\xff\xfe"]
    async with trio.open_nursery() as nursery:
        process: trio.Process = await nursery.start(
            functools.partial(
                trio.run_process,
                [sys.executable, str(ECHO_SERVER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_child_env(),
                check=False,
            )
        )
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        client = StdioStream(process.stdout, process.stdin, max_message_size=2 * 1024 * 1024)
        with trio.fail_after(20):
            await client.send_messages(messages)
            await process.stdin.send_all(b"crlf\r\n\n")
            echoed = [await client.receive_message() for _ in range(4)]
            assert echoed == [*messages, b"crlf"]
            await process.stdin.aclose()  # EOF: the server returns and exits
            with pytest.raises(TransportClosed):
                await client.receive_message()
            stderr = await _read_all(process.stderr)
            await process.wait()
        await client.aclose()
    assert process.returncode == 0, stderr
    assert b"stray output" in stderr


async def _read_all(stream: trio.abc.ReceiveStream) -> bytes:
    chunks = []
    while chunk := await stream.receive_some():
        chunks.append(chunk)
    return b"".join(chunks)


async def test_regular_files_on_stdin_and_stdout(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    replies = tmp_path / "replies.jsonl"
    requests.write_bytes(b'{"id":1}\n{"id":2}\r\n\n{"id":3}')
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        result = await trio.run_process(
            [sys.executable, str(ECHO_SERVER)],
            stdin=stdin,
            stdout=stdout,
            capture_stderr=True,
            env=_child_env(),
            check=False,
        )
    assert result.returncode == 0, result.stderr
    assert replies.read_bytes() == b'{"id":1}\n{"id":2}\n{"id":3}\n'


async def test_a_tty_is_reopened_so_its_blocking_mode_is_not_shared() -> None:
    controller, terminal = os.openpty()
    try:
        stream = trio.lowlevel.FdStream(_private_fd(terminal, os.O_RDWR))
        async with stream:
            assert os.get_blocking(terminal)  # a dup would have made this False
            os.write(controller, b"typed\n")
            with trio.fail_after(5):
                assert await stream.receive_some() == b"typed\n"
    finally:
        os.close(controller)
        os.close(terminal)
