"""``FileWatcher``: notices changes to subscribed files and sends ``resources/updated``.

MCP 2025-11-25 (Server > Resources > Subscriptions,
https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions): a
client subscribes to a resource URI and the server sends
``notifications/resources/updated`` when that resource changes. Here a resource is a file
inside the jail; a change is any change of its device, inode, size or modification time,
its deletion, or its creation (a subscription may name a file that does not exist yet).

Polling, not ``watchfiles`` (inotify), after measuring both (``bench/skills_watch.py``,
numbers in ``bench/RESULTS.md``): every ``watch_interval`` (default 1 s) one pass stats each
watched file through the jail's directory descriptors. Idle CPU per second of wall time on
the 2-vCPU test machine: polling 0.5 ms for 10 files, 1.2 ms for 100, 6.3 ms for 1,000 (the
``max_subscriptions`` default; a ``stat`` costs ~3 µs there); ``watchfiles`` 0.8 to 1.4 ms
whatever the count. So polling is the cheaper one for the handful of files clients usually
subscribe to, ``watchfiles`` from about a hundred on, and both stay under 1 % of a core. It
also reports sooner (~80 ms against half an interval on average). What decides:

* inotify watches an inode by path: watching the files misses every change after a save by
  rename (how editors and ``write_file`` save), so it must watch their folders and filter;
  and its path set is fixed per watcher, so subscribes and unsubscribes restart it;
* it resolves and follows paths by name, while every look here goes through the same
  ``O_NOFOLLOW`` descriptor walk as every other jailed access, so a folder swapped for a
  symlink cannot make the watcher report on files outside the jail;
* under trio it holds a worker thread blocked in Rust that a cancellation waits for (up to
  its 5 s ``rust_timeout``: a server would take that long to stop), and it runs on real
  time, while a poll loop runs deterministically under ``trio.testing.MockClock``;
* it would be a compiled dependency more, for a notification that only tells the client to
  read again, where a second of delay is well within what it expects.

A pass over up to ``LOOK_HERE`` files runs in trio's own thread (cheaper than handing it
to a worker); a larger one runs in a worker thread.

The watcher keeps its table outside its task (``watch`` fills it from the server's
``on_subscribe`` hook; each pass drops the URIs nobody is subscribed to any more, after an
unsubscribe or a closed session), so a restarted task goes on where the old one stopped.
At most ``limit`` files are watched: a subscription to one more is refused.
"""

from __future__ import annotations

import logging
import os
import stat
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from trimcp.errors import InvalidRequest, PathRefused

from .jail import Resolved, open_dir

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Sequence
    from pathlib import Path

__all__ = ["LOOK_HERE", "FileState", "FileWatcher", "look"]

logger = logging.getLogger(__name__)

#: Files looked at in trio's own thread: a look at one costs a few µs on a local disk, and
#: handing a pass to a worker thread costs ~0.3 ms of CPU (bench/skills_watch.py), more than
#: a pass over this many; a slow file system stalls the loop no longer than a resolve does.
LOOK_HERE = 32

#: What a look at one file found: (device, inode, size, mtime in ns), or None for "no
#: regular file there" (missing, a folder, a symlink, unreachable).
FileState = tuple[int, int, int, int] | None


def look(files: Sequence[Resolved]) -> list[FileState]:
    """Return the state of each file, in order; blocking (run it in a worker thread).

    Files are grouped by folder: each folder is opened once through ``open_dir`` (component
    by component from its root, ``O_NOFOLLOW``) and its files are ``fstatat``-ed without
    following a symlink.
    """
    states: list[FileState] = [None] * len(files)
    by_folder: dict[tuple[Path, tuple[str, ...]], list[int]] = {}
    for index, resolved in enumerate(files):
        if resolved.parts:
            by_folder.setdefault((resolved.root, resolved.parts[:-1]), []).append(index)
    for (root, parts), indexes in by_folder.items():
        folder = Resolved(root.joinpath(*parts), root, parts, "/".join(parts) or ".")
        try:
            fd = open_dir(folder)
        except (PathRefused, OSError):
            continue  # the folder is gone or changed: no file there
        try:
            for index in indexes:
                states[index] = _state(fd, files[index].parts[-1])
        finally:
            os.close(fd)
    return states


async def _look(here: int, files: list[Resolved]) -> list[FileState]:
    """``look`` at a few files in trio's thread, at more in a worker thread."""
    if len(files) <= here:
        await trio.lowlevel.checkpoint()
        return look(files)
    return await trio.to_thread.run_sync(look, files)


def _state(dir_fd: int, name: str) -> FileState:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@typing.final
@dataclass(slots=True)
class _Watched:
    resolved: Resolved
    state: FileState


@typing.final
class FileWatcher:
    """Polls the subscribed files and notifies their subscribers of changes.

    Args:
        notify: sends ``notifications/resources/updated`` for a URI
            (``MCPServer.notify_resource_updated``).
        subscribed: the URIs some session is subscribed to now
            (``MCPServer.subscribed_uris``).
        limit: files watched at once (``max_subscriptions``).
        interval: seconds between two looks (``watch_interval``).
        look_here: up to this many files a pass runs in trio's thread, not a worker's.
    """

    __slots__ = (
        "_interval",
        "_limit",
        "_look_here",
        "_notify",
        "_running",
        "_subscribed",
        "_watched",
    )

    def __init__(
        self,
        notify: Callable[[str], Awaitable[object]],
        subscribed: Callable[[], Collection[str]],
        *,
        limit: int,
        interval: float,
        look_here: int = LOOK_HERE,
    ) -> None:
        self._notify = notify
        self._look_here = look_here
        self._subscribed = subscribed
        self._limit = limit
        self._interval = interval
        self._watched: dict[str, _Watched] = {}
        # One polling task at a time, should two runners start the same server's tree.
        self._running = trio.Lock()

    @property
    def watched(self) -> list[str]:
        """The URIs watched now."""
        return list(self._watched)

    async def watch(self, uri: str, resolved: Resolved) -> None:
        """Start watching ``resolved`` for ``uri``, from its state now.

        Called by the ``on_subscribe`` hook before the server records the subscription;
        nothing after the last ``await`` here yields to another task, so no pass can see the
        new entry before its subscription exists. A URI watched already keeps its state.

        Raises:
            InvalidRequest: ``limit`` files are watched already.
        """
        [state] = await _look(self._look_here, [resolved])
        self._forget_unsubscribed()
        if uri in self._watched:
            return
        if len(self._watched) >= self._limit:
            raise InvalidRequest(
                f"Too many files watched ({self._limit}, the [skills] max_subscriptions "
                "limit); unsubscribe from some with resources/unsubscribe first",
                {"limit": self._limit},
            )
        self._watched[uri] = _Watched(resolved, state)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Look at the watched files every ``interval`` seconds until cancelled."""
        task_status.started()
        async with self._running:
            while True:
                await trio.sleep(self._interval)
                await self.poll()

    async def poll(self) -> list[str]:
        """Look once; notify and return the URIs whose file changed since the last look."""
        self._forget_unsubscribed()
        entries = list(self._watched.items())
        if not entries:
            return []
        states = await _look(self._look_here, [watched.resolved for _, watched in entries])
        changed: list[str] = []
        for (uri, watched), state in zip(entries, states, strict=True):
            # Dropped (unsubscribed) while the thread looked: nobody to tell.
            if self._watched.get(uri) is watched and state != watched.state:
                watched.state = state
                changed.append(uri)
        for uri in changed:
            try:
                await self._notify(uri)
            except Exception:
                logger.exception("resources/updated for %s was not sent", uri)
        return changed

    def _forget_unsubscribed(self) -> None:
        subscribed = self._subscribed()
        for uri in [uri for uri in self._watched if uri not in subscribed]:
            del self._watched[uri]
