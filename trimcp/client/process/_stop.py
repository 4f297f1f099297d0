"""Stop a server process and everything it started: stdin EOF, grace, SIGTERM, grace, SIGKILL.

The escalation of the official SDKs and of OTP's ``shutdown`` (supervisor.erl: a timeout,
then ``brutal_kill``), applied to the server's whole *process group*: the server runs in a
session of its own (``start_new_session``), so its group id is its pid and one ``killpg``
reaches the ``node`` that ``npx`` started, or the helper a Python server spawned. Stopping
only the direct child would leave those running, holding our pipes open.

1. The caller has closed the server's stdin: MCP 2025-11-25 (Lifecycle, Shutdown, stdio)
   says a server should exit on EOF. Wait up to ``close_grace`` for the server to exit.
2. SIGTERM to the group (also when the server exited but left members behind), then wait up
   to ``term_grace`` for the server to exit and the group to empty.
3. SIGKILL to the group, then wait for the kernel to let us reap the server.

On Windows there are no process groups to signal: step 2 sends CTRL_BREAK_EVENT to the
server's console process group and step 3 is TerminateProcess on the server alone; its
children survive it (that needs a job object, which trio does not make).

A group is "empty" once ``killpg(pgid, 0)`` fails. Exited grandchildren are reaped by init
(or a subreaper), not by us, and count as members until then; so does a process of the group
we may not signal, which we then cannot stop anyway and treat as gone. Signalling by group
id after the server itself was reaped is safe: a pid is not reused while a process group of
that id exists.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys

import trio

logger = logging.getLogger(__name__)

DEFAULT_CLOSE_GRACE = 2.0
"""Seconds a server gets to exit by itself after its stdin closed."""

DEFAULT_TERM_GRACE = 2.0
"""Seconds a server's process group gets to exit after SIGTERM."""

# After SIGKILL only a process stuck in uninterruptible I/O (a dead NFS mount) is not gone at
# once; past this we give up waiting and log it, rather than hang the host's shutdown.
_KILL_WAIT = 5.0

# How often the group is checked for members once the server itself has exited.
_GROUP_POLL = 0.02


async def stop_process_tree(
    process: trio.Process, *, close_grace: float, term_grace: float
) -> None:
    """Stop ``process`` and its process group; return once the process is reaped.

    The caller must have closed the process's stdin already, and should shield this call:
    cancelling it mid-way leaves the process running. Never raises for the process's sake.
    """
    if await _wait_tree(process, close_grace, group=False) and not _group_alive(process):
        return
    _signal_group(process, hard=False)
    if await _wait_tree(process, term_grace, group=True):
        return
    _signal_group(process, hard=True)
    with trio.move_on_after(_KILL_WAIT):
        await process.wait()
    if process.returncode is None:
        logger.error(
            "process %d did not exit %.1f s after SIGKILL; giving up on it", process.pid, _KILL_WAIT
        )


async def _wait_tree(process: trio.Process, timeout: float, *, group: bool) -> bool:
    """Wait up to ``timeout`` for ``process`` to exit and, with ``group``, its group to empty.

    Returns True when that happened in time.
    """
    with trio.move_on_after(timeout):
        await process.wait()
        # Polling: nothing signals "group empty", and grandchildren are not ours to wait for.
        while group and _group_alive(process):  # noqa: ASYNC110
            await trio.sleep(_GROUP_POLL)
        return True
    return False


def signal_leftovers(process: trio.Process) -> None:
    """Send SIGTERM to what remains of an exited server's group (no-op elsewhere)."""
    if sys.platform != "win32" and _group_alive(process):
        _signal_group(process, hard=False)


def _group_alive(process: trio.Process) -> bool:
    """Whether any process of ``process``'s group (pgid = its pid) may still be signalled."""
    if sys.platform == "win32":  # pragma: no cover
        return process.returncode is None
    try:
        os.killpg(process.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(process: trio.Process, *, hard: bool) -> None:
    """Send SIGTERM (``hard``: SIGKILL) to the group of ``process``; ignore a group gone."""
    if sys.platform == "win32":  # pragma: no cover
        _signal_windows(process, hard=hard)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL if hard else signal.SIGTERM)


def _signal_windows(process: trio.Process, *, hard: bool) -> None:  # pragma: no cover
    if sys.platform == "win32" and process.returncode is None:
        with contextlib.suppress(OSError):
            if hard:
                process.kill()
            else:
                os.kill(process.pid, signal.CTRL_BREAK_EVENT)
