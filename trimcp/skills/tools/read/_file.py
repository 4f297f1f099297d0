"""``read_file``: a text file's lines (numbered like ``cat -n``), or an image or audio block.

A file up to ``max_file_size`` is read whole and sliced; a larger one only in part — from a
line on (``offset``/``limit``, ``head``) by scanning forward, its ``tail`` by reading blocks
backwards from the end — and never whole. The lines shown stop at ``max_result_bytes``; the
note under them says which line to continue with, so a cut result is never mistaken for a
whole one. A line too long to fit at all is shown cut (its start, or its end for a tail), so
continuing always makes progress.

Binary files are told apart by ``_text`` and named by ``_media``: images and audio up to
``max_media_size`` come back as ``image``/``audio`` content blocks (MCP 2025-11-25, Server >
Tools > Tool Result, https://modelcontextprotocol.io/specification/2025-11-25/server/tools),
anything else is an error that says what the file seems to be.
"""

from __future__ import annotations

import os
from collections import deque
from typing import TYPE_CHECKING

from trimcp.errors import PathRefused, ToolError
from trimcp.server import Audio, Image
from trimcp.skills.jail import open_parent, open_regular, shown
from trimcp.skills.tools._media import sniff
from trimcp.skills.tools._text import SAMPLE_SIZE, Encoding, decode_whole, detect, split_lines

from ._common import display, human_size
from ._lines import (
    LineRequest,
    assemble,
    backward,
    forward,
    forward_footer,
    header_room,
    span,
)
from ._stream import Forward, tail_bytes

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.config import SkillsSettings
    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail, Resolved

__all__ = ["read_bytes", "read_file_work", "refuse_binary"]


def _encoding_note(encoding: Encoding, text_sample: str) -> str:
    notes = []
    if not encoding.plain_utf8:
        notes.append(f"encoding: {encoding.label}")
    if "\r\n" in text_sample:
        notes.append("line ends: CRLF (shown without the CR)")
    return f" [{'; '.join(notes)}]" if notes else ""


def read_bytes(fd: int, most: int) -> bytes:
    """Read from the start of ``fd`` until its end or ``most + 1`` bytes."""
    chunks: list[bytes] = []
    got = 0
    while got <= most:
        chunk = os.pread(fd, min(1024 * 1024, most + 1 - got), got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def refuse_binary(path: str, head: bytes, size: int, settings: SkillsSettings) -> ToolError:
    """The error for a binary file ``read_file`` cannot show (or a too large image/audio)."""
    kind = sniff(head, path)
    what = f"{kind.description}, {kind.mime_type}"
    if kind.media is not None:
        return ToolError(
            f"{shown(path)} is {human_size(size)} of {kind.media} ({what}); images and audio are "
            f"returned only up to {settings.max_media_size} bytes (max_media_size) — "
            "file_info describes it"
        )
    return ToolError(
        f"{shown(path)} is a binary file ({what}), {human_size(size)} ({size} bytes); "
        "read_file shows text, images and audio only — file_info describes it"
    )


def _media(  # noqa: PLR0913
    fd: int,
    path: str,
    head: bytes,
    *,
    size: int,
    settings: SkillsSettings,
    request: LineRequest,
) -> list[object]:
    kind = sniff(head, path)
    if kind.media is None or size > settings.max_media_size:
        raise refuse_binary(path, head, size, settings)
    data = read_bytes(fd, settings.max_media_size)
    if len(data) > settings.max_media_size:
        raise ToolError(f"{shown(path)} grew past max_media_size while being read")
    note = " (offset/limit/head/tail apply to text only)" if request.partial else ""
    block = Image(data, kind.mime_type) if kind.media == "image" else Audio(data, kind.mime_type)
    text = f"{shown(path)}: {kind.description} ({kind.mime_type}), {human_size(size)}{note}"
    return [text, block]


def read_file_work(  # noqa: PLR0913
    jail: Jail,
    settings: SkillsSettings,
    resolved: Resolved,
    progress: Progress,
    *,
    request: LineRequest,
    numbers: bool,
) -> str | list[object]:
    """Read ``resolved`` as ``read_file`` does (in a worker thread).

    Raises:
        ToolError: a folder, a binary file, a too large file read whole, or refused.
    """
    path = display(jail, resolved)
    if os.path.isdir(resolved.real):
        raise PathRefused(
            f"{shown(resolved.given)} is a folder; list it with list_directory or directory_tree"
        )
    with open_parent(resolved) as (dir_fd, name):
        fd, info = open_regular(dir_fd, name, resolved.given)
    try:
        if info.st_size <= settings.max_file_size:
            data = read_bytes(fd, settings.max_file_size)
            if len(data) <= settings.max_file_size:
                decoded = decode_whole(data)
                if decoded is None:
                    return _media(
                        fd,
                        path,
                        data[:SAMPLE_SIZE],
                        size=len(data),
                        settings=settings,
                        request=request,
                    )
                lines = split_lines(decoded.text)
                note = _encoding_note(decoded.encoding, decoded.text[:SAMPLE_SIZE])
                return _small(settings, path, lines, note=note, request=request, numbers=numbers)
        size = max(info.st_size, settings.max_file_size + 1)
        head = os.pread(fd, SAMPLE_SIZE, 0)
        encoding = detect(head, whole=False)
        if encoding is None:
            return _media(fd, path, head, size=size, settings=settings, request=request)
        if not request.partial:
            raise ToolError(
                f"{shown(path)} is {human_size(size)} ({size} bytes), more than the "
                f"{settings.max_file_size} bytes read whole (max_file_size); read part of it "
                "with head=N or tail=N, or offset (first line) and limit (line count)"
            )
        note = _encoding_note(encoding, head.decode(encoding.codec, "replace"))
        return _large(
            fd,
            settings,
            path,
            size=size,
            encoding=encoding,
            note=note,
            request=request,
            numbers=numbers,
            progress=progress,
        )
    finally:
        os.close(fd)


def _small(  # noqa: PLR0913
    settings: SkillsSettings,
    path: str,
    lines: list[str],
    *,
    note: str,
    request: LineRequest,
    numbers: bool,
) -> str:
    total = len(lines)
    limit = settings.max_result_bytes
    room = header_room(limit, path)
    if total == 0:
        return f"{shown(path)}: empty file (0 lines){note}"
    if request.tail is not None:
        start = max(1, total - request.tail + 1)
        shown_ = backward(room, [(n, lines[n - 1]) for n in range(start, total + 1)], numbers)
        footer = ""
        if shown_.stopped and shown_.first is not None:
            skipped = shown_.first - start
            footer = (
                f"[output cut at {limit} bytes (max_result_bytes): lines {start}-"
                f"{shown_.first - 1} of the requested tail not shown; read them with "
                f"offset={start}, limit={skipped}]"
            )
            if shown_.cut:
                footer = (
                    f"[line {shown_.first} is too long for max_result_bytes ({limit} bytes): "
                    "only its end is shown]"
                )
        header = f"{shown(path)}: {span(shown_)} of {total}{note}"
        return assemble(limit, header, shown_, footer)
    start, count = request.start, request.count
    if start > total:
        return (
            f"{shown(path)}: no lines shown: offset {start} is past the last line "
            f"(the file has {total} line{'s' if total != 1 else ''}){note}"
        )
    stop = total if count is None else min(total, start + count - 1)
    shown_ = forward(room, ((n, lines[n - 1]) for n in range(start, stop + 1)), numbers)
    assert shown_.first is not None
    assert shown_.last is not None
    footer = forward_footer(shown_, limit, more=shown_.last < total)
    header = f"{shown(path)}: {span(shown_)} of {total}{note}"
    return assemble(limit, header, shown_, footer)


def _large(  # noqa: PLR0913
    fd: int,
    settings: SkillsSettings,
    path: str,
    *,
    size: int,
    encoding: Encoding,
    note: str,
    request: LineRequest,
    numbers: bool,
    progress: Progress,
) -> str:
    limit = settings.max_result_bytes
    room = header_room(limit, path)
    uncounted = (
        f"a {human_size(size)} file, larger than max_file_size, so its lines are not counted"
    )
    stream = Forward(fd, encoding, limit + 1, progress)
    if request.tail is not None:
        if encoding.bytewise_newlines:
            raw, _ = tail_bytes(
                fd, size, encoding.bom, count=request.tail, most=limit, progress=progress
            )
            texts = [line.decode(encoding.codec, "replace") for line in raw]
            items = [(index - len(texts), text) for index, text in enumerate(texts)]
            shown_ = backward(room, items, numbers)
            header = (
                f"{shown(path)}: the last {len(shown_.lines)} lines, numbered back from the end "
                f"(-1 is the last line; {uncounted}){note}"
            )
        else:
            # Not byte-aligned newlines (UTF-16/32): scan forward keeping the last lines.
            window = deque(stream.lines(1), maxlen=request.tail)
            shown_ = backward(room, list(window), numbers)
            header = f"{shown(path)}: {span(shown_)} of {stream.total}{note}"
        footer = ""
        if shown_.cut:
            footer = (
                f"[the last line is too long for max_result_bytes ({limit} bytes): only its "
                "end is shown]"
            )
        elif shown_.stopped:
            footer = (
                f"[output cut at {limit} bytes (max_result_bytes): only the last "
                f"{len(shown_.lines)} of the requested lines fit; ask for a smaller tail]"
            )
        return assemble(limit, header, shown_, footer)
    lines = stream.lines(request.start)
    count = request.count
    taken: Iterable[tuple[int, str]] = lines
    if count is not None:
        taken = (item for _, item in zip(range(count), lines, strict=False))
    shown_ = forward(room, taken, numbers)
    if shown_.first is None:
        return (
            f"{shown(path)}: no lines shown: offset {request.start} is past the last line "
            f"(the file has {stream.total} lines){note}"
        )
    # A line that did not fit was taken from the stream unshown; else look one line ahead.
    more = (shown_.stopped and not shown_.cut) or next(lines, None) is not None
    assert shown_.last is not None
    of_total = f" of {stream.total}" if stream.eof else f" ({uncounted})"
    header = f"{shown(path)}: {span(shown_)}{of_total}{note}"
    return assemble(limit, header, shown_, forward_footer(shown_, limit, more=more))
