"""How the host commands show things: tables, JSON, results, log lines and progress.

A terminal gets ``rich``: tables with a ruled header, and progress as one line redrawn in
place (a bar when the total is known) with the server's log messages printed above it.
Anything else (a pipe, a file, a test) gets plain text that stays the same from one release
to the next: tables as columns aligned with spaces, one line per log message and per
progress notification. JSON keeps non-ASCII text as it is (``ensure_ascii=False``).

``rich`` is imported only when a terminal is written to, so that a command in a pipe
starts without it. The functions take the stream to write to (default: stdout for what a
command answers, stderr for what happens meanwhile), so ``trimcp shell`` can use them too.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from typing import TYPE_CHECKING, TextIO, final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rich.console import Console
    from rich.progress import Progress as ProgressBar
    from rich.progress import TaskID

    from trimcp.client import Completion, GetPromptResult, LogMessage, Progress, ResourceContents

__all__ = [
    "Activity",
    "block_text",
    "dump_json",
    "is_terminal",
    "log_line",
    "progress_line",
    "write_completion",
    "write_prompt",
    "write_resource",
    "write_table",
    "write_tool_result",
]

#: Log levels shown in colour on a terminal (RFC 5424 names, as MCP logging uses them).
_LEVEL_STYLES = {
    "warning": "yellow",
    "error": "red",
    "critical": "bold red",
    "alert": "bold red",
    "emergency": "bold red",
    "debug": "dim",
}


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _console(stream: TextIO) -> Console:
    from rich.console import Console

    return Console(file=stream, force_terminal=True, highlight=False, soft_wrap=False)


# --- tables and JSON ------------------------------------------------------------------------


def write_table(
    rows: Sequence[Sequence[str]], stream: TextIO | None = None, *, terminal: bool | None = None
) -> None:
    """Write ``rows`` (the first is the header) as a table.

    Not on a terminal: columns padded with spaces and two spaces apart, trailing spaces cut,
    which scripts and tests may read with ``split()``.
    """
    out = sys.stdout if stream is None else stream
    if terminal if terminal is not None else is_terminal(out):
        _rich_table(rows, out)
        return
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        out.write("  ".join(cells).rstrip() + "\n")


def _rich_table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for heading in rows[0]:
        table.add_column(heading, overflow="fold")
    for row in rows[1:]:
        # Text, not str: a cell such as "[info]" is data, not rich markup.
        table.add_row(*(Text(cell) for cell in row))
    _console(out).print(table)


def dump_json(value: object, stream: TextIO | None = None) -> None:
    """Write ``value`` as indented JSON, non-ASCII characters as they are (no ``\\u2713``)."""
    out = sys.stdout if stream is None else stream
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


# --- what a server answered ---------------------------------------------------------------------


def block_text(block: object) -> str:
    """One content block (of a tool result or a prompt message) as text for a person.

    Text is itself; binary content is a note of its type and size, never the base64.
    """
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType', '?')}, {_size(block.get('data'))}]"
    if kind == "resource_link":
        name = f" ({block['name']})" if block.get("name") else ""
        return f"[resource link: {block.get('uri', '')}{name}]"
    resource = block.get("resource")
    if kind == "resource" and isinstance(resource, dict):
        return _embedded(resource)
    shown = {key: value for key, value in block.items() if key not in ("data", "blob")}
    return f"[{kind}] {json.dumps(shown, ensure_ascii=False)}"


def _embedded(resource: dict[str, object]) -> str:
    """An embedded resource: its URI, then its text (or the size of its blob)."""
    uri = resource.get("uri", "")
    if "text" in resource:
        return f"[resource: {uri}]\n{resource['text']}"
    return f"[resource: {uri}, {_size(resource.get('blob'))}]"


def _size(data: object) -> str:
    """The decoded size of base64 ``data``, in words."""
    if not isinstance(data, str):
        return "no data"
    try:
        count = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "data that is not base64"
    return f"{count} bytes"


def write_tool_result(result: Mapping[str, object], stream: TextIO | None = None) -> None:
    """Write a ``CallToolResult``: each content block, then ``structuredContent`` as JSON.

    The structured content is left out when a text block already holds it: MCP asks tools
    that return it to send it serialised as text too (2025-11-25, Tools > Structured
    Content), and printing it twice helps no one.
    """
    out = sys.stdout if stream is None else stream
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    for block in blocks:
        out.write(block_text(block) + "\n")
    structured = result.get("structuredContent")
    if structured is not None and not any(_holds(block, structured) for block in blocks):
        dump_json(structured, out)


def _holds(block: object, value: object) -> bool:
    if not (isinstance(block, dict) and block.get("type") == "text"):
        return False
    try:
        return bool(json.loads(str(block.get("text", ""))) == value)
    except ValueError:
        return False


def write_resource(
    contents: Sequence[ResourceContents], stream: TextIO | None = None, *, raw: bool = False
) -> None:
    """Write what ``resources/read`` returned: text as it is, binary as a note of its size.

    ``raw``: one binary item is written as its bytes (to ``stream.buffer``), so that
    ``trimcp read TARGET URI > file.png`` saves it; the caller decides when that is wanted.
    """
    out = sys.stdout if stream is None else stream
    if raw and len(contents) == 1 and contents[0].blob is not None:
        out.flush()
        out.buffer.write(contents[0].blob)
        return
    for item in contents:
        if len(contents) > 1:
            out.write(f"--- {item.uri}" + (f" ({item.mime_type})" if item.mime_type else "") + "\n")
        if item.text is not None:
            out.write(item.text if item.text.endswith("\n") else item.text + "\n")
        else:
            size = len(item.blob or b"")
            mime = item.mime_type or "binary"
            out.write(f"[{mime}, {size} bytes: redirect stdout to a file to save it]\n")


def write_prompt(result: GetPromptResult, stream: TextIO | None = None) -> None:
    """Write a prompt's messages, each under its role (``user:`` / ``assistant:``)."""
    out = sys.stdout if stream is None else stream
    if result.description:
        out.write(f"# {result.description}\n")
    for message in result.messages:
        out.write(f"{message.role}:\n")
        for line in block_text(message.content).splitlines() or [""]:
            out.write(f"  {line}\n")


def write_completion(completion: Completion, stream: TextIO | None = None) -> None:
    """Write the completion values, one per line; how many more there are goes to stderr."""
    out = sys.stdout if stream is None else stream
    for value in completion.values:
        out.write(f"{value}\n")
    shown = len(completion.values)
    if completion.total is not None and completion.total > shown:
        sys.stderr.write(f"({shown} of {completion.total} values shown)\n")
    elif completion.has_more:
        sys.stderr.write(f"({shown} values shown; the server has more)\n")


# --- what happens while a request runs ----------------------------------------------------------


def log_line(server: str, message: LogMessage) -> str:
    """A ``notifications/message`` as one line: ``[server] level (logger): data``.

    String data is shown as it is, anything else as compact JSON.
    """
    data = message.data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    source = f" ({message.logger})" if message.logger else ""
    return f"[{server}] {message.level}{source}: {text}"


def progress_line(update: Progress) -> str:
    """A ``notifications/progress`` as one line: ``progress 50/100 message``."""
    message = f" {update.message}" if update.message else ""
    return f"progress {_amount(update)}{message}"


def _amount(update: Progress) -> str:
    total = f"/{update.total:g}" if update.total is not None else ""
    return f"{update.progress:g}{total}"


@final
class Activity:
    """Shows on stderr what a server says while a command waits on it.

    Log messages (``notifications/message``) and the progress of the request
    (``notifications/progress``). On a terminal, progress is one line redrawn in place,
    a ``rich`` bar when the total is known, and log lines are printed above it; elsewhere
    each is one plain line (``log_line``, ``progress_line``). Callbacks run in the session's
    tasks and return at once: nothing here waits.

    Call ``close`` (or leave the ``with`` block) before writing the answer, so that the
    progress line is gone from the terminal first.
    """

    def __init__(
        self, stream: TextIO | None = None, *, terminal: bool | None = None, logs: bool = True
    ) -> None:
        """``logs``: show the servers' log messages (the listings leave them out)."""
        self.stream = sys.stderr if stream is None else stream
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.logs = logs
        self._console: Console | None = None
        self._bar: ProgressBar | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Activity:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def log(self, server: str, message: LogMessage) -> None:
        """Show one log message of ``server`` (if ``logs``)."""
        if not self.logs:
            return
        line = log_line(server, message)
        if not self.terminal:
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        from rich.text import Text

        style = _LEVEL_STYLES.get(message.level, "")
        console = self._bar.console if self._bar is not None else self._terminal_console()
        console.print(Text(line, style=style))

    def progress(self, update: Progress) -> None:
        """Show the request's progress: redraw the line, or write one more."""
        if not self.terminal:
            self.stream.write(progress_line(update) + "\n")
            self.stream.flush()
            return
        bar, task = self._progress_bar()
        bar.update(
            task,
            completed=update.progress,
            total=update.total,
            description=update.message or "",
            amount=_amount(update),
        )
        bar.refresh()

    def close(self) -> None:
        """Take the progress line off the terminal (the log lines stay)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self._task = None

    def _terminal_console(self) -> Console:
        if self._console is None:
            self._console = _console(self.stream)
        return self._console

    def _progress_bar(self) -> tuple[ProgressBar, TaskID]:
        if self._bar is not None and self._task is not None:
            return self._bar, self._task
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as ProgressBar

        bar = ProgressBar(
            BarColumn(),
            TextColumn("{task.fields[amount]}"),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=self._terminal_console(),
            transient=True,
            # Redrawn on each notification, from the caller's task: no refresh thread.
            auto_refresh=False,
            # What the command writes to stdout meanwhile must stay on stdout.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        bar.start()
        self._bar = bar
        # No total until a notification gives one: the bar pulses meanwhile.
        self._task = bar.add_task("", total=None, amount="")
        return bar, self._task
