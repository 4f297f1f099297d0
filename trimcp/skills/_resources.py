"""Files inside the jail as MCP resources: read, listed, and subscribable.

MCP 2025-11-25, Server > Resources
(https://modelcontextprotocol.io/specification/2025-11-25/server/resources): one resource
template, ``file:///{+path}`` (RFC 6570 reserved expansion, so the ``/`` of a path stay as
they are), stands for every file the jail allows.

* ``resources/read`` checks the path against the jail of the call (narrowed by the client's
  roots, ``Skills.jail_for``) and opens it through the jail's descriptors. A file that is
  valid UTF-8 without NUL bytes comes back as ``text``, any other as a ``blob``, with the
  MIME type ``mimetypes`` guesses from its name (``text/plain`` or
  ``application/octet-stream`` when it has no guess). A path the jail refuses (outside the
  roots, blocked, a symlink, a device), a missing file or a folder is -32002 Resource not
  found, with the jail's message, which names only the path as asked and the roots; a file
  over ``max_file_size`` is -32602 with its size and the limit.
* ``resources/list`` lists the regular files of the jail after the static resources: the
  same walk as the search tools (``.gitignore`` honoured unless ``gitignore = false``, no
  symlinks, no blocked paths, no ``.git``), the first ``max_listed_resources`` found, each
  with its name below its root, size and the MIME type guessed from its name (none when
  there is no guess: the file is not read to tell text from bytes). A client that goes on
  with a cursor gets pages of the listing its first page came from, so they fit together.
* ``resources/subscribe`` of a file URI inside the jail (an existing file, or one that does
  not exist yet) starts watching it (``_watch.FileWatcher``); a change sends
  ``notifications/resources/updated``. The URI is checked against the jail of the
  subscribing call; the watch lasts until the unsubscribe or the session's end, even if the
  client's roots change meanwhile (it only ever says that a file inside the configured
  roots changed).

A URI is ``file://`` and the absolute path, percent-encoded as ``urllib.parse.quote`` does
(``/`` kept), so names with spaces, ``%``, ``?``, ``#``, newlines or any Unicode round-trip;
names that are not valid UTF-8 have no such URI and are left out of the listing.
"""

from __future__ import annotations

import contextlib
import logging
import mimetypes
import os
import stat
import typing
from collections import OrderedDict
from typing import TYPE_CHECKING
from urllib.parse import quote

import trio

from trimcp.errors import InvalidParams, PathRefused, ResourceNotFound
from trimcp.protocol import ResourceContents
from trimcp.server import Context, UriTemplate  # Context: read at run time, in the hints

from ._runtime import run_blocking
from ._watch import FileWatcher
from .jail import WalkStats, open_parent, open_regular, shown, walk

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping, Sequence

    from trimcp.server import MCPServer
    from trimcp.sessions import SessionHandle

    from ._runtime import Progress, Skills
    from .jail import Entry, Jail, Resolved

__all__ = ["FILE_TEMPLATE", "file_uri", "mime_type_of", "path_of", "register"]

logger = logging.getLogger(__name__)

#: The one resource template: every file inside the jail.
FILE_TEMPLATE = "file:///{+path}"
_TEMPLATE = UriTemplate(FILE_TEMPLATE)
# Sessions whose last listing is kept for the pages after the first; the oldest goes first.
_MAX_KEPT_LISTINGS = 16

Listing = list[dict[str, object]]


def file_uri(path: str | os.PathLike[str]) -> str:
    """Return the ``file://`` URI of an absolute path (percent-encoded, ``/`` kept).

    Raises:
        UnicodeEncodeError: the path holds bytes that are not UTF-8 (surrogate escapes).
    """
    return "file://" + quote(os.fspath(path), safe="/", errors="strict")


def path_of(uri: str) -> str | None:
    """Return the absolute path a ``file:///`` URI names, or None if it is not one."""
    found = _TEMPLATE.match(uri)
    path = None if found is None else found.get("path")
    return "/" + path if isinstance(path, str) else None


def mime_type_of(name: str, *, text: bool) -> str:
    """The MIME type ``mimetypes`` guesses from ``name``, else a plain text or bytes one."""
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or ("text/plain" if text else "application/octet-stream")


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def _read_bytes(resolved: Resolved, limit: int) -> bytes:
    """Read the regular file ``resolved`` (blocking) if it holds at most ``limit`` bytes."""
    with open_parent(resolved) as (dir_fd, name):
        fd, info = open_regular(dir_fd, name, resolved.given)
    with os.fdopen(fd, "rb") as file:
        if info.st_size > limit:
            raise _TooLarge(info.st_size)
        data = file.read(limit + 1)
    if len(data) > limit:
        raise _TooLarge(len(data))
    return data


def _contents(uri: str, name: str, data: bytes) -> ResourceContents:
    if b"\x00" not in data:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return ResourceContents(uri=uri, text=text, mime_type=mime_type_of(name, text=True))
    return ResourceContents(uri=uri, blob=data, mime_type=mime_type_of(name, text=False))


def _list_files(jail: Jail, settings_limits: tuple[int, int, bool], progress: Progress) -> Listing:
    """Walk every root of ``jail`` (blocking) and return the listed files, in walk order."""
    max_listed, max_visited, gitignore = settings_limits
    listing: Listing = []
    seen: set[str] = set()
    unencodable = 0
    for root in jail.roots:
        stats = WalkStats()
        start = jail.resolve(str(root))
        found = walk(jail, start, stats=stats, max_visited=max_visited, gitignore=gitignore)
        # A generator: closing it at once releases the folders it holds open.
        with contextlib.closing(typing.cast("Generator[Entry, None, None]", found)) as entries:
            for entry in entries:
                progress.check()
                if not entry.is_file:
                    continue
                progress.done += 1
                try:
                    uri = file_uri(root.joinpath(*entry.parts))
                    entry.relative.encode("utf-8")
                except UnicodeEncodeError:
                    unencodable += 1
                    continue
                if uri in seen:
                    continue
                if len(listing) >= max_listed:
                    return listing
                seen.add(uri)
                item: dict[str, object] = {"uri": uri, "name": entry.relative}
                guessed, _ = mimetypes.guess_type(entry.name, strict=False)
                if guessed is not None:  # unread, so text or bytes is not known yet
                    item["mimeType"] = guessed
                with contextlib.suppress(OSError):
                    item["size"] = entry.stat().st_size
                listing.append(item)
    if unencodable:
        logger.info("resources/list left out %d files whose names are not UTF-8", unencodable)
    return listing


class _FileResources:
    """The template's read function and hooks, over one ``Skills``."""

    def __init__(self, skills: Skills, watcher: FileWatcher) -> None:
        self.skills = skills
        self.watcher = watcher
        self._listings: OrderedDict[str, tuple[SessionHandle, Listing]] = OrderedDict()

    async def _jail(self, ctx: Context, uri: str) -> Jail:
        try:
            return await self.skills.jail_for(ctx)
        except PathRefused as exc:
            raise ResourceNotFound(uri, str(exc)) from None

    async def read(self, path: str, ctx: Context) -> ResourceContents:
        """A file inside the allowed folders: text if it is UTF-8, else a blob."""
        given = "/" + path
        uri = file_uri(given)
        jail = await self._jail(ctx, uri)
        limit = self.skills.settings.max_file_size
        try:
            resolved = jail.resolve(given)
            data = await trio.to_thread.run_sync(_read_bytes, resolved, limit)
        except PathRefused as exc:
            raise ResourceNotFound(uri, str(exc)) from None
        except _TooLarge as exc:
            raise InvalidParams(
                f"{shown(given)} is {exc.size} bytes, more than the {limit} a resource may "
                "hold (the [skills] max_file_size); read part of it with the read_file tool",
                {"uri": uri, "size": exc.size, "limit": limit},
            ) from None
        return _contents(uri, resolved.name, data)

    async def list_files(self, ctx: Context, fresh: bool) -> Sequence[Mapping[str, object]]:
        """The files of the jail of this session (module docstring)."""
        session = ctx.session
        kept = self._listings.get(session.session_id)
        if not fresh and kept is not None and kept[0] == session:
            return kept[1]
        try:
            jail = await self.skills.jail_for(ctx)
        except PathRefused as exc:
            logger.info("resources/list of session %s: %s", session.session_id, exc)
            return []
        settings = self.skills.settings
        limits = (settings.max_listed_resources, settings.max_files_visited, settings.gitignore)
        listing = await run_blocking(ctx, lambda progress: _list_files(jail, limits, progress))
        self._keep(session, listing)
        return listing

    def _keep(self, session: SessionHandle, listing: Listing) -> None:
        kept = self._listings
        for session_id in [key for key, (held, _) in kept.items() if not held.open]:
            del kept[session_id]
        kept[session.session_id] = (session, listing)
        kept.move_to_end(session.session_id)
        while len(kept) > _MAX_KEPT_LISTINGS:
            kept.popitem(last=False)

    async def subscribe(self, uri: str, ctx: Context) -> None:
        """Check ``uri`` against the jail of this call, then watch its file."""
        given = path_of(uri)
        if given is None:
            raise ResourceNotFound(uri)
        jail = await self._jail(ctx, uri)
        try:
            resolved = jail.resolve(given)
        except PathRefused as exc:
            raise ResourceNotFound(uri, str(exc)) from None
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(resolved.real).st_mode):
                raise ResourceNotFound(uri, f"{shown(given)} is a folder; only files are resources")
        await self.watcher.watch(uri, resolved)


def register(server: MCPServer, skills: Skills) -> None:
    """Register the ``file:///{+path}`` template, its listing and its watcher on ``server``."""
    settings = skills.settings
    watcher = FileWatcher(
        server.notify_resource_updated,
        server.subscribed_uris,
        limit=settings.max_subscriptions,
        interval=settings.watch_interval,
    )
    files = _FileResources(skills, watcher)

    async def read(path: str, ctx: Context) -> ResourceContents:
        return await files.read(path, ctx)

    roots = ", ".join(str(root) for root in skills.jail.roots)
    server.add_resource(
        read,
        FILE_TEMPLATE,
        name="file",
        title="Files inside the allowed folders",
        description=(
            f"A file inside the allowed folders ({roots}): its text if it is UTF-8, else its "
            f"bytes, up to {settings.max_file_size} bytes. The URI is file:// and the "
            "absolute path, percent-encoded. Subscribe to hear when it changes."
        ),
        list_with=files.list_files,
        on_subscribe=files.subscribe,
    )
    server.add_background("skills-file-watcher", watcher.run)
