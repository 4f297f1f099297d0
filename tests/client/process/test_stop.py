"""Stopping a real server process: stdin EOF, SIGTERM, SIGKILL, and its whole process group.

Grace periods are 0.2 s, so the escalations take real but small time; bounds are asserted
loosely (a loaded machine is slower, never faster).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.client.process._launch import ProcessSpec
from trimcp.client.process._process import open_server_process
from trimcp.errors import ServerExited

if TYPE_CHECKING:
    from trimcp.client.process._process import ServerProcess

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="process groups and POSIX signals"),
]

GRACE = 0.2

# The grandchild: ``sleep 30`` (or Python's, where there is no sleep program).
_SLEEP = shutil.which("sleep")
SLEEPER = repr([_SLEEP, "30"] if _SLEEP else [sys.executable, "-c", "import time; time.sleep(30)"])


def _spec(script: str) -> ProcessSpec:
    return ProcessSpec(
        name="stubborn",
        command=sys.executable,
        args=("-c", script),
        close_grace=GRACE,
        term_grace=GRACE,
    )


def _dead(pid: int) -> bool:
    """Whether ``pid`` has exited: gone, or a zombie waiting for init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:  # pragma: no cover  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


async def _wait_dead(pid: int) -> bool:
    """Wait up to a second for ``pid`` to die (a signal is delivered asynchronously)."""
    with trio.move_on_after(1):
        while not _dead(pid):  # noqa: ASYNC110  # not our child: nothing to wait on
            await trio.sleep(0.01)
    return _dead(pid)


async def _ready(server: ServerProcess) -> bytes:
    """Return the child's first line, which it prints once its signal handlers are set."""
    return await server.receive_message()


async def test_a_server_that_leaves_on_eof_gets_no_signal() -> None:
    script = "import sys; sys.stdin.read(); sys.exit(7)"
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            pass
        assert server.returncode == 7


async def test_sigterm_when_stdin_eof_is_ignored() -> None:
    script = "import time; print('{}', flush=True); time.sleep(30)"
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            await _ready(server)
            start = trio.current_time()
        assert server.returncode == -signal.SIGTERM
        assert trio.current_time() - start >= GRACE


async def test_sigkill_when_sigterm_is_ignored_too() -> None:
    script = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print('{}', flush=True)
time.sleep(30)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            await _ready(server)
            start = trio.current_time()
        elapsed = trio.current_time() - start
    assert server.returncode == -signal.SIGKILL
    assert 2 * GRACE <= elapsed < 2 * GRACE + 1.5


async def test_grandchildren_die_with_the_server() -> None:
    script = f"""
import subprocess, time
child = subprocess.Popen({SLEEPER})
print(child.pid, flush=True)
time.sleep(30)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            grandchild = int(await _ready(server))
            assert not _dead(grandchild)
        assert await _wait_dead(grandchild)


async def test_grandchild_ignoring_sigterm_after_the_server_left() -> None:
    # The server exits on EOF at once; what it started ignores SIGTERM and holds the pipes.
    script = f"""
import signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
child = subprocess.Popen({SLEEPER})
print(child.pid, flush=True)
sys.stdin.read()
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            grandchild = int(await _ready(server))
        assert server.returncode == 0
        assert await _wait_dead(grandchild)


async def test_cancellation_cannot_leave_the_server_running() -> None:
    script = f"""
import signal, subprocess, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen({SLEEPER})
print(child.pid, flush=True)
time.sleep(30)
"""
    with trio.fail_after(5):
        with trio.CancelScope() as scope:
            async with open_server_process(_spec(script)) as server:
                grandchild = int(await _ready(server))
                scope.cancel()
                await trio.sleep_forever()
        assert scope.cancelled_caught
        assert server.returncode == -signal.SIGKILL
        assert await _wait_dead(grandchild)


async def test_concurrent_closes_all_wait_for_the_end() -> None:
    script = "import time; print('{}', flush=True); time.sleep(30)"
    returncodes: list[int | None] = []

    async def close(server: ServerProcess) -> None:
        await server.aclose()
        returncodes.append(server.returncode)

    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            await _ready(server)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(close, server)
                nursery.start_soon(close, server)
    assert returncodes == [-signal.SIGTERM, -signal.SIGTERM]


async def test_server_whose_child_holds_stdout_is_still_reported() -> None:
    # The server dies; the grandchild keeps stdout open. The reader must not hang: the
    # grandchild is sent SIGTERM and the reader gets ServerExited.
    script = f"""
import subprocess, sys
child = subprocess.Popen({SLEEPER})
print(child.pid, flush=True)
print("giving up", file=sys.stderr, flush=True)
sys.exit(5)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            grandchild = int(await _ready(server))
            with pytest.raises(ServerExited) as caught:
                await server.receive_message()
            assert await _wait_dead(grandchild)
    assert caught.value.returncode == 5
    assert caught.value.stderr_tail == ("giving up",)


async def test_reader_is_freed_when_a_leftover_ignores_sigterm_and_holds_stdout() -> None:
    # Nothing ends stdout here until the group is killed at close: after a moment the
    # stream is closed under the reader, which then gets ServerExited, not a hang.
    script = f"""
import signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
child = subprocess.Popen({SLEEPER})
print(child.pid, flush=True)
sys.exit(5)
"""
    with trio.fail_after(5):
        async with open_server_process(_spec(script)) as server:
            grandchild = int(await _ready(server))
            with pytest.raises(ServerExited) as caught:
                await server.receive_message()
            assert not _dead(grandchild)
        assert await _wait_dead(grandchild)
    assert caught.value.returncode == 5
