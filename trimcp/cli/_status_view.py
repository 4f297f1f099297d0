"""The ``/status`` document of the admin app, drawn for a person: what ``trimcp status`` prints.

One header line (the application, its version, pid and uptime, health and readiness with
the reasons when not ready), the supervision tree as a ``rich`` tree, then tables of the
listeners, the sessions and the upstream MCP servers, and one line for the event store and
the tasks. Upstreams are described as ``trimcp servers`` describes a connection
(``ConnectionStatus.summary``: why it gave up, how the process exited, the last error).

The document comes from another process, maybe another version, maybe not trimcp at all: a
field that is missing, null or of the wrong type is shown as ``-``, never a traceback. Every
string from it is data, never ``rich`` markup (a session whose client calls itself
``[red]x`` is shown as typed), and control characters are shown escaped, so that a name
cannot move the cursor or recolour the terminal. The tree is drawn at most
``MAX_TREE_DEPTH`` levels deep and ``MAX_TREE_CHILDREN`` children wide per supervisor; the
admin app bounds what it lists too (``children_total`` and ``sessions_total`` say how many
there are).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text
    from rich.tree import Tree

    from trimcp.client import ConnectionState

__all__ = [
    "MAX_TREE_CHILDREN",
    "MAX_TREE_DEPTH",
    "cell",
    "duration",
    "is_healthy",
    "render_status",
    "upstream_problem",
]

#: Levels of the supervision tree drawn; trimcp's own is three or four deep.
MAX_TREE_DEPTH = 12
#: Children drawn under one supervisor; the rest are counted on one line.
MAX_TREE_CHILDREN = 200
_CONNECTION_STATES = ("connecting", "connected", "reconnecting", "failed", "stopped")
#: What a missing, null or mistyped field shows.
ABSENT = "-"

_STATE_STYLES = {
    "running": "green",
    "connected": "green",
    "restarting": "yellow",
    "connecting": "yellow",
    "reconnecting": "yellow",
    "stopping": "yellow",
    "failed": "bold red",
    "down": "bold red",
    "stopped": "dim",
}


def is_healthy(document: Mapping[str, object]) -> bool:
    """Whether the document says healthy and ready (``trimcp status``'s exit status 0)."""
    health = _object(document.get("health"))
    return health.get("healthy") is True and health.get("ready") is True


def render_status(document: Mapping[str, object]) -> RenderableType:
    """Everything ``trimcp status`` shows, as one renderable."""
    from rich.console import Group
    from rich.text import Text

    parts: list[RenderableType] = [_header(document)]
    tree = document.get("tree")
    if isinstance(tree, Mapping):
        parts += [Text(""), _tree(cast("Mapping[str, object]", tree))]
    parts += [Text(""), _titled("Listeners", _listeners(_objects(document.get("listeners"))))]
    parts += [Text(""), *_sessions_part(document)]
    parts += [Text(""), *_upstreams_part(_objects(document.get("upstreams")))]
    parts += [Text(""), _stores_line(document)]
    return Group(*parts)


# --- values ---------------------------------------------------------------------------------


def cell(value: object) -> str:
    """A value as one line of a table: ``-`` for null, control characters escaped."""
    if value is None or isinstance(value, (Mapping, list)):
        return ABSENT
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def duration(value: object) -> str:
    """Seconds for a person: ``12.5 s``, ``3 m 12 s``, ``2 h 03 m``, ``4 d 2 h``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return ABSENT
    seconds = float(value)
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} m {whole % 60:02d} s"
    if whole < 86400:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} m"
    return f"{whole // 86400} d {whole % 86400 // 3600} h"


def _size(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return ABSENT
    amount = float(value)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{value} bytes" if unit == "bytes" else f"{amount:.1f} {unit}"
        amount /= 1024
    return ABSENT  # pragma: no cover - the loop returns at GiB


def _object(value: object) -> Mapping[str, object]:
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else {}


def _objects(value: object) -> list[Mapping[str, object]]:
    items = value if isinstance(value, list) else []
    return [cast("Mapping[str, object]", item) for item in items if isinstance(item, Mapping)]


def _mailbox(value: object) -> str:
    box = _object(value)
    if not box:
        return ABSENT
    peak = f" (peak {cell(box.get('peak'))})" if box.get("peak") is not None else ""
    return f"{cell(box.get('length'))}/{cell(box.get('capacity'))}{peak}"


def _state(value: object) -> Text:
    from rich.text import Text

    shown = cell(value)
    return Text(shown, style=_STATE_STYLES.get(shown, ""))


# --- the header -----------------------------------------------------------------------------


def _header(document: Mapping[str, object]) -> Text:
    from rich.text import Text

    app = _object(document.get("application"))
    health = _object(document.get("health"))
    line = Text()
    line.append(cell(app.get("name")), style="bold")
    line.append(f" {cell(app.get('version'))}  pid {cell(app.get('pid'))}")
    line.append(f"  up {duration(app.get('uptime'))}")
    if app.get("state") not in (None, "running"):
        line.append("  ")
        line.append_text(_state(app.get("state")))
    line.append("  ")
    if health.get("healthy") is True:
        line.append("healthy", style="green")
    else:
        line.append("not healthy", style="bold red")
    line.append(", ")
    if health.get("ready") is True:
        line.append("ready", style="green")
        return line
    line.append("not ready", style="bold red")
    reasons = [cell(reason) for reason in _list(health.get("not_ready"))]
    if reasons:
        line.append(": " + "; ".join(reasons), style="red")
    return line


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


# --- the supervision tree --------------------------------------------------------------------


def _tree(root: Mapping[str, object]) -> Tree:
    from rich.tree import Tree

    tree = Tree(_node_label(root), guide_style="dim")
    _add_children(tree, root, depth=1)
    return tree


def _add_children(branch: Tree, node: Mapping[str, object], depth: int) -> None:
    from rich.text import Text

    children = _objects(node.get("children"))
    if children and depth >= MAX_TREE_DEPTH:
        branch.add(Text(f"... {len(children)} more levels below, not drawn", style="dim"))
        return
    for child in children[:MAX_TREE_CHILDREN]:
        _add_children(branch.add(_node_label(child)), child, depth + 1)
    total = node.get("children_total")
    drawn = min(len(children), MAX_TREE_CHILDREN)
    count = total if isinstance(total, int) and not isinstance(total, bool) else len(children)
    if count > drawn:
        branch.add(Text(f"... and {count - drawn} more (of {count})", style="dim"))


def _node_label(node: Mapping[str, object]) -> Text:
    from rich.text import Text

    label = Text()
    label.append(cell(node.get("id")), style="bold")
    label.append(f" {cell(node.get('kind'))} ")
    label.append_text(_state(node.get("state")))
    label.append(f"  restarts {cell(node.get('restarts'))}")
    if node.get("mailbox") is not None:
        label.append(f"  mailbox {_mailbox(node.get('mailbox'))}")
    last = _object(node.get("last_exit"))
    if last:
        at = cell(last.get("at"))
        when = f" at {at[11:19]}" if len(at) >= 19 else ""
        label.append(f"  last exit{when}: {cell(last.get('reason'))}", style="red")
    if node.get("unanswered") is not None:
        # A supervisor too busy (or too deep) to describe its children: say so, not "none".
        label.append(f"  children not shown: {cell(node.get('unanswered'))}", style="yellow")
    return label


# --- the tables -----------------------------------------------------------------------------


def _table(headings: tuple[str, ...], rows: list[tuple[str | Text, ...]]) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for heading in headings:
        table.add_column(heading, overflow="fold")
    for row in rows:
        # Text, not str: a cell such as "[red]" is data, not rich markup.
        table.add_row(*(item if isinstance(item, Text) else Text(item) for item in row))
    return table


def _titled(title: str, body: RenderableType) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    return Group(Text(title, style="bold underline"), body)


def _listeners(listeners: list[Mapping[str, object]]) -> RenderableType:
    from rich.text import Text

    if not listeners:
        return Text("no listener is enabled", style="dim")
    headings: tuple[str, ...] = ("NAME", "TRANSPORT", "ADDRESS", "BOUND", "SESSIONS")
    headings += ("IN FLIGHT",)
    headings += ("CREATED", "EXPIRED", "EVICTED", "REFUSED", "TERMINATED")
    rows: list[tuple[str | Text, ...]] = []
    for item in listeners:
        bound = item.get("bound")
        rows.append(
            (
                cell(item.get("name")),
                cell(item.get("transport")),
                cell(item.get("address")),
                Text(cell(bound), style="" if bound is not False else "bold red"),
                *(
                    cell(item.get(key))
                    for key in ("sessions", "in_flight", "created", "expired", "evicted")
                ),
                cell(item.get("refused")),
                cell(item.get("terminated")),
            )
        )
    return _table(headings, rows)


def _sessions_part(document: Mapping[str, object]) -> list[RenderableType]:
    from rich.text import Text

    sessions = _objects(document.get("sessions"))
    total = document.get("sessions_total")
    title = "Sessions"
    if isinstance(total, int) and not isinstance(total, bool) and total > len(sessions):
        title += f" ({len(sessions)} of {total} listed, the most recently active)"
    if not sessions:
        return [_titled(title, Text("no session is open", style="dim"))]
    headings: tuple[str, ...] = ("SESSION", "LISTENER", "CLIENT", "PROTOCOL", "AGE", "IDLE")
    headings += ("MAILBOX",)
    headings += ("DROPPED", "STREAMS", "SUBSCRIPTIONS")
    rows: list[tuple[str | Text, ...]] = [
        (
            cell(item.get("id"))[:8],
            cell(item.get("listener")),
            cell(item.get("client")),
            cell(item.get("protocol_version")),
            duration(item.get("age")),
            duration(item.get("idle")),
            _mailbox(item.get("mailbox")),
            cell(item.get("dropped_notifications")),
            cell(item.get("streams")),
            cell(item.get("subscriptions")),
        )
        for item in sessions
    ]
    return [_titled(title, _table(headings, rows))]


def _upstreams_part(upstreams: list[Mapping[str, object]]) -> list[RenderableType]:
    from rich.text import Text

    if not upstreams:
        return [_titled("Upstreams", Text("no upstream MCP server is configured", style="dim"))]
    headings = ("NAME", "STATE", "PID", "RESTARTS", "TOOLS", "NEXT RETRY", "LAST ERROR")
    rows: list[tuple[str | Text, ...]] = [
        (
            cell(item.get("name")),
            _state(item.get("state")),
            cell(item.get("pid")),
            cell(item.get("restarts")),
            cell(item.get("tools")),
            _next_retry(item),
            Text(upstream_problem(item), style="red" if item.get("state") == "failed" else ""),
        )
        for item in upstreams
    ]
    return [_titled("Upstreams", _table(headings, rows))]


def _next_retry(item: Mapping[str, object]) -> str:
    after = item.get("next_attempt_in")
    if after is None:
        return ABSENT
    at = cell(item.get("next_attempt_at"))
    clock = f" (at {at[11:19]})" if len(at) >= 19 else ""
    return f"in {duration(after)}{clock}"


def upstream_problem(item: Mapping[str, object]) -> str:
    """One line on what went wrong with an upstream, as ``trimcp servers`` words it."""
    from trimcp.client import ConnectionStatus

    state = item.get("state")
    if state == "connected":
        return ""
    tail = tuple(cell(line) for line in _list(item.get("stderr_tail")))
    # No next_attempt_in: the NEXT RETRY column says when, the summary says why.
    status = ConnectionStatus(
        name=cell(item.get("name")),
        state=cast("ConnectionState", state) if state in _CONNECTION_STATES else "stopped",
        failure=_optional(item.get("failure")),
        last_error=_optional(item.get("last_error")),
        exit_code=_integer(item.get("exit_code")),
        exit_signal=_optional(item.get("exit_signal")),
        stderr_tail=tail,
    )
    return cell(status.summary())


def _optional(value: object) -> str | None:
    return None if value is None or isinstance(value, (Mapping, list)) else str(value)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _stores_line(document: Mapping[str, object]) -> Text:
    from rich.text import Text

    store = _object(document.get("event_store"))
    tasks = _object(document.get("tasks"))
    stored = (
        f"{_size(store.get('bytes'))} of {_size(store.get('limit'))}"
        f" ({_count(store.get('streams'), 'stream')}, {_count(store.get('events'), 'event')})"
        if store
        else ABSENT
    )
    kept = (
        f"{cell(tasks.get('stored'))} stored, {cell(tasks.get('running'))} running,"
        f" limit {cell(tasks.get('limit'))}"
        if tasks
        else ABSENT
    )
    return Text(f"event store: {stored}; tasks: {kept}")


def _count(value: object, noun: str) -> str:
    return f"{cell(value)} {noun}" if value == 1 else f"{cell(value)} {noun}s"
