"""``Skills``: what every tool shares — the settings, the jail of each session, blocking work.

The jail of a call is the configured one, narrowed by the client's MCP roots when the client
declares the ``roots`` capability (MCP 2025-11-25, Client Features > Roots,
https://modelcontextprotocol.io/specification/2025-11-25/client/roots): each client root
inside a configured root becomes a root, each configured root inside a client root stays,
and nothing is ever widened. A client that declares roots but lists none narrows nothing
(it has named no folders); one whose roots overlap none of the configured roots gets every
path refused, with a message naming both. The narrowed jail is kept per session until the
client sends ``notifications/roots/list_changed`` (an answer that was on its way then serves
its call but is not kept); a client that declares roots without ``listChanged`` (trimcp's
gateway, which asks the client behind each call) is asked on every call instead.

File system work runs in a worker thread (``run_blocking``) so one large search never stalls
the other sessions; the thread checks ``Progress.cancelled`` between files, which a
cancelled request sets at once, and its counters feed progress notifications.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import unquote, urlsplit

import trio

from trimcp.errors import JsonRpcError, PathRefused, RequestTimeout, TrimcpError

from .jail import Jail, describe_roots

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.config import SkillsSettings
    from trimcp.server import Context
    from trimcp.sessions import SessionHandle

__all__ = ["Cancelled", "Progress", "Skills", "run_blocking"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Sessions whose narrowed jail is remembered; the oldest is forgotten first.
_MAX_SESSION_JAILS = 4096
# Seconds a roots/list request may take before the call is refused.
_ROOTS_TIMEOUT = 10.0
# Seconds between two progress notifications of one long call.
_PROGRESS_INTERVAL = 0.5


class Cancelled(Exception):
    """Raised inside a worker thread when its request was cancelled."""


@dataclass(slots=True)
class Progress:
    """Shared between a worker thread and the request: counters out, cancellation in.

    The thread updates ``done`` (and ``total`` when it knows it) and calls ``check()``
    between units of work; the request sets ``cancelled``.
    """

    done: int = 0
    total: int | None = None
    unit: str = "files"
    cancelled: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self) -> None:
        """Raise ``Cancelled`` if the request was cancelled."""
        if self.cancelled:
            raise Cancelled


async def run_blocking(
    ctx: Context | None, work: Callable[[Progress], T], *, unit: str = "files"
) -> T:
    """Run ``work(progress)`` in a worker thread; report its progress; stop it on cancel.

    When the request has a progress token, ``notifications/progress`` goes out every half
    second while the work runs. When the request is cancelled, ``progress.cancelled`` is set
    at once and the thread stops at its next ``check()``; this coroutine then raises
    ``trio.Cancelled`` as usual.
    """
    progress = Progress(unit=unit)
    done = trio.Event()

    async def report() -> None:
        try:
            if ctx is None or ctx.progress_token is None:
                await done.wait()
                return
            sent = -1
            while not done.is_set():
                with trio.move_on_after(_PROGRESS_INTERVAL):
                    await done.wait()
                if progress.done != sent and not done.is_set():
                    sent = progress.done
                    await ctx.report_progress(
                        progress.done, progress.total, f"{progress.done} {progress.unit}"
                    )
        finally:
            # Reached at once when the request is cancelled: tell the thread.
            if not done.is_set():
                progress.cancelled = True

    failure: Exception | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(report)
        try:
            result = await trio.to_thread.run_sync(work, progress)
        except Exception as exc:  # noqa: BLE001 - re-raised below, as it is
            # Raised here, inside the nursery, it would reach the caller wrapped in an
            # ExceptionGroup, and a tool's ToolError would no longer be one.
            failure = exc
        finally:
            done.set()
    if failure is not None:
        raise failure
    return result


class Skills:
    """The settings and jail every skills tool works with.

    Args:
        settings: the ``[skills]`` table (``trimcp.config.SkillsSettings``).
        roots: the resolved root folders (see ``trimcp.skills.resolve_roots``).
    """

    def __init__(self, settings: SkillsSettings, roots: list[Path]) -> None:
        self.settings = settings
        self.jail = Jail(
            roots, blocked=settings.blocked_paths, write_blocked=settings.write_blocked_paths
        )
        self._session_jails: OrderedDict[str, tuple[SessionHandle, Jail]] = OrderedDict()
        # Counts roots changes (``forget``): an answer to a roots/list sent before one may
        # predate it, so it serves its own call but is not kept.
        self._roots_changes = 0

    async def jail_for(self, ctx: Context) -> Jail:
        """Return the jail of this call: the configured one, narrowed by the client's roots
        (in a session; a 2026-07-28 call gets the configured one).

        Raises:
            PathRefused: the client's roots overlap none of the configured roots, or the
                client did not answer ``roots/list``.
        """
        session = ctx.session
        capabilities = session.client_capabilities
        if not capabilities.roots or ctx.modern:
            # 2026-07-28 deprecates roots (SEP-2577: "migrate to tool parameters or server
            # configuration") and could ask for them only by a round trip per call: a
            # client of that era gets the configured folders.
            return self.jail
        # An answer is kept only from a client that promises to say when its roots change
        # (roots.listChanged); a gateway relaying each roots/list to a different caller
        # does not, and is asked again on every call.
        keep = capabilities.roots_list_changed
        kept = self._session_jails.get(session.session_id) if keep else None
        if kept is not None and kept[0] == session:
            self._session_jails.move_to_end(session.session_id)
            return kept[1]
        changes = self._roots_changes
        try:
            roots = await ctx.list_roots(timeout=_ROOTS_TIMEOUT)
        except (RequestTimeout, JsonRpcError) as exc:
            raise PathRefused(
                f"the client declares roots but did not list them ({exc}); the tools need "
                "the client's roots to know which folders they may use"
            ) from None
        except TrimcpError as exc:
            raise PathRefused(f"the client's roots could not be read: {exc}") from None
        folders = [path for path in (_root_path(root.uri) for root in roots) if path]
        jail = self.jail if not folders else self.jail.narrowed(folders)
        if jail is None:
            raise PathRefused(
                "the client's roots ("
                + describe_roots(folders)
                + ") overlap none of the folders this server may use ("
                + describe_roots(self.jail.roots)
                + "); add one of those folders as a root in the client"
            )
        if keep and changes == self._roots_changes:
            self._remember(session, jail)
        return jail

    def forget(self, session: SessionHandle) -> None:
        """Drop a session's narrowed jail (its roots changed)."""
        self._roots_changes += 1
        self._session_jails.pop(session.session_id, None)

    def _remember(self, session: SessionHandle, jail: Jail) -> None:
        jails = self._session_jails
        for session_id in [key for key, (held, _) in jails.items() if not held.open]:
            del jails[session_id]
        jails[session.session_id] = (session, jail)
        while len(jails) > _MAX_SESSION_JAILS:
            jails.popitem(last=False)


def _root_path(uri: str) -> Path | None:
    """Return the folder of a ``file://`` root URI, or None for another scheme or host."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        if parts.scheme == "file":
            logger.info("ignoring root %r: only local file:// roots are used", uri)
        return None
    path = unquote(parts.path)
    return Path(path) if path.startswith("/") else None
