"""``trimcp status``, ``reload`` and ``restart`` against a stand-in admin app on a real socket.

The stand-in (``admin_stub.AdminStub``) serves the contract's documents from a trio task in
the test's own run; the commands' coroutines (``show_status``, ``reload_daemon``, ...) are
driven directly, writing to ``io.StringIO``. Finding the app (``locate``) reads real
sys_config.toml files in ``tmp_path``; the token rules read real files with real modes.
"""

from __future__ import annotations

import copy
import io
import json
import socket
from typing import TYPE_CHECKING

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.cli.admin_stub import STATUS, AdminStub, Answer, serving
from trimcp.cli._admin_client import (
    MAX_TOKEN_FILE_BYTES,
    AdminTarget,
    AdminToken,
    ask,
    locate,
    plain_http_warning,
    resolve_token,
)
from trimcp.cli._admin_commands import (
    Streams,
    reload_daemon,
    restart_upstream,
    show_status,
    watch_status,
)
from trimcp.cli._status_view import MAX_TREE_CHILDREN, MAX_TREE_DEPTH, duration, render_status
from trimcp.errors import ConfigError, ConnectFailed

if TYPE_CHECKING:
    from pathlib import Path

    from trio.testing import MockClock

TOKEN = "s3cret-token-value"


class _Written(io.StringIO):
    """A StringIO that wakes whoever waits on ``changed`` at each write."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = trio.Event()

    def write(self, text: str) -> int:
        self.changed.set()
        self.changed = trio.Event()
        return super().write(text)


def _streams() -> Streams:
    return Streams(out=io.StringIO(), err=io.StringIO(), terminal=False)


def _out(streams: Streams) -> str:
    assert isinstance(streams.out, io.StringIO)
    return streams.out.getvalue()


def _err(streams: Streams) -> str:
    assert isinstance(streams.err, io.StringIO)
    return streams.err.getvalue()


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _rendered(document: dict[str, object], *, terminal: bool = False) -> str:
    out = io.StringIO()
    Console(file=out, force_terminal=terminal, no_color=not terminal, width=200).print(
        render_status(document)
    )
    return out.getvalue()


def _failed_status() -> dict[str, object]:
    document = copy.deepcopy(STATUS)
    reason = "upstream github: failed: restarted 3 times in 10 s; last error: exit code 1"
    document["health"] = {"healthy": True, "ready": False, "not_ready": [reason]}
    document["upstreams"] = [
        {
            "name": "github",
            "state": "failed",
            "pid": None,
            "restarts": 3,
            "attempt": 4,
            "tools": 0,
            "resources": 0,
            "prompts": 0,
            "connected_for": None,
            "next_attempt_in": None,
            "next_attempt_at": None,
            "failure": "restarted 3 times in 10 s",
            "last_error": "the server exited\nTraceback ...",
            "exit_code": 1,
            "exit_signal": None,
            "stderr_tail": ["starting", "boom: no GITHUB_TOKEN"],
        },
        {
            "name": "files",
            "state": "reconnecting",
            "pid": None,
            "restarts": 1,
            "attempt": 2,
            "tools": 0,
            "resources": 0,
            "prompts": 0,
            "connected_for": None,
            "next_attempt_in": 1.5,
            "next_attempt_at": "2026-11-27T18:00:14+00:00",
            "failure": None,
            "last_error": "connection lost",
            "exit_code": None,
            "exit_signal": "SIGKILL",
            "stderr_tail": [],
        },
    ]
    tree = document["tree"]
    assert isinstance(tree, dict)
    tree["children"] = [
        {
            "id": "gateway",
            "kind": "worker",
            "state": "restarting",
            "restart": "permanent",
            "restarts": 2,
            "last_exit": {
                "reason": "crashed: ValueError: bad frame",
                "at": "2026-11-27T18:00:09+00:00",
            },
            "mailbox": {"length": 3, "capacity": 64, "peak": 64},
            "children": [],
            "children_total": 0,
        }
    ]
    return document


# --- rendering ------------------------------------------------------------------------------


def test_the_contract_document_is_drawn_whole() -> None:
    lines = _lines(_rendered(STATUS))
    assert lines[0] == "trimcp 0.1.0 pid 4242 up 12.5 s healthy, ready"
    assert lines[1] == "trimcp supervisor running restarts 0 mailbox 0/256 (peak 1)"
    assert lines[2] == "└── http supervisor running restarts 0"
    text = "\n".join(lines)
    assert "http http http://127.0.0.1:8000/mcp yes 2 0 5 1 0 0 2" in text, "the listener's row"
    assert "3f2a9c1b http claude-code 1.2.0 2025-11-25 40.2 s 3.0 s 0/64 (peak 3) 0 1 2" in text
    assert "github connected 5151 0 12 -" in lines
    assert lines[-1] == (
        "event store: 1.2 KiB of 32.0 MiB (1 stream, 4 events); tasks: 0 stored, 0 running,"
        " limit 1000"
    )


def test_a_failed_upstream_and_a_crashed_child_say_why() -> None:
    lines = _lines(_rendered(_failed_status()))
    assert lines[0] == (
        "trimcp 0.1.0 pid 4242 up 12.5 s healthy, not ready: upstream github: failed:"
        " restarted 3 times in 10 s; last error: exit code 1"
    )
    assert (
        "└── gateway worker restarting restarts 2 mailbox 3/64 (peak 64) last exit at 18:00:09:"
        " crashed: ValueError: bad frame"
    ) in lines
    assert (
        "github failed - 3 0 - restarted 3 times in 10 s; exit code 1, stderr: boom: no"
        " GITHUB_TOKEN; the server exited"
    ) in lines
    assert "files reconnecting - 1 0 in 1.5 s (at 18:00:14) killed by SIGKILL; connection lost" in (
        lines
    )


def test_a_supervisor_that_did_not_answer_is_said_so() -> None:
    document = copy.deepcopy(STATUS)
    tree = document["tree"]
    assert isinstance(tree, dict)
    tree["children"][0]["unanswered"] = "did not answer within 1 s"
    assert (
        "└── http supervisor running restarts 0 children not shown: did not answer within 1 s"
        in _lines(_rendered(document))
    )


def test_more_sessions_than_listed_are_counted() -> None:
    document = copy.deepcopy(STATUS)
    document["sessions_total"] = 250
    assert "Sessions (1 of 250 listed, the most recently active)" in _lines(_rendered(document))


def test_empty_parts_are_said_in_words() -> None:
    document = copy.deepcopy(STATUS)
    document.update(listeners=[], sessions=[], sessions_total=0, upstreams=[])
    lines = _lines(_rendered(document))
    assert "no listener is enabled" in lines
    assert "no session is open" in lines
    assert "no upstream MCP server is configured" in lines


def test_nulls_are_dashes() -> None:
    document: dict[str, object] = {
        "application": {"name": None, "version": None, "pid": None, "uptime": None},
        "health": {"healthy": None, "ready": None, "not_ready": None},
        "tree": {"id": None, "kind": None, "state": None, "restarts": None, "children": None},
        "listeners": [{"name": None, "bound": None}],
        "sessions": [{"id": None, "age": None, "mailbox": None}],
        "upstreams": [{"name": None, "state": None}],
        "event_store": None,
        "tasks": None,
    }
    lines = _lines(_rendered(document))
    assert lines[0] == "- - pid - up - not healthy, not ready"
    assert lines[1] == "- - - restarts -"
    assert lines[-1] == "event store: -; tasks: -"
    document["event_store"] = {"bytes": None, "limit": None, "streams": None, "events": None}
    document["tasks"] = {"stored": None}
    assert _lines(_rendered(document))[-1] == (
        "event store: - of - (- streams, - events); tasks: - stored, - running, limit -"
    )


HOSTILE = "[red]evil[/red] [link=http://x]y[/link] \x1b[2J\x07"


@pytest.mark.parametrize("terminal", [False, True])
def test_hostile_strings_are_printed_as_typed(terminal: bool) -> None:
    document = copy.deepcopy(_failed_status())
    sessions = document["sessions"]
    upstreams = document["upstreams"]
    tree = document["tree"]
    assert isinstance(sessions, list)
    assert isinstance(upstreams, list)
    assert isinstance(tree, dict)
    sessions[0]["client"] = HOSTILE
    upstreams[0]["name"] = HOSTILE
    upstreams[0]["stderr_tail"] = [HOSTILE]
    tree["id"] = HOSTILE
    text = _rendered(document, terminal=terminal)
    shown = "[red]evil[/red] [link=http://x]y[/link] \\x1b[2J\\x07"
    # Each place that shows a string shows it literally (a table may fold a long cell).
    assert text.count("[red]evil[/red]") >= 4
    assert shown in text
    assert "\x1b[2J" not in text
    assert "\x07" not in text


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(STATUS)), st.data())
def test_any_value_anywhere_is_drawn_without_an_error(key: str, data: st.DataObject) -> None:
    document = copy.deepcopy(STATUS)
    part = document[key]
    if isinstance(part, dict) and part:
        inner = data.draw(st.sampled_from(sorted(part)))
        part[inner] = data.draw(JSON)
    elif isinstance(part, list) and part and isinstance(part[0], dict):
        inner = data.draw(st.sampled_from(sorted(part[0])))
        part[0][inner] = data.draw(JSON)
    else:
        document[key] = data.draw(JSON)
    assert _rendered(document).strip()


def _chain(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"id": f"n{depth}", "kind": "supervisor", "state": "running"}
    for level in range(depth - 1, -1, -1):
        node = {"id": f"n{level}", "kind": "supervisor", "state": "running", "children": [node]}
    return node


def test_the_tree_is_drawn_to_a_bounded_depth() -> None:
    document = copy.deepcopy(STATUS)
    document["tree"] = _chain(MAX_TREE_DEPTH + 5)
    text = _rendered(document)
    assert f"n{MAX_TREE_DEPTH - 1} supervisor" in text
    assert f"n{MAX_TREE_DEPTH} supervisor" not in text
    assert "... 1 more levels below, not drawn" in text


def test_the_tree_is_drawn_to_a_bounded_width() -> None:
    document = copy.deepcopy(STATUS)
    children = [{"id": f"s{i}", "kind": "worker", "state": "running"} for i in range(300)]
    document["tree"] = {
        "id": "sessions",
        "kind": "supervisor",
        "state": "running",
        "children": children,
        "children_total": 1000,
    }
    text = _rendered(document)
    assert f"s{MAX_TREE_CHILDREN - 1} worker" in text
    assert f"s{MAX_TREE_CHILDREN} worker" not in text
    assert f"... and {1000 - MAX_TREE_CHILDREN} more (of 1000)" in text


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0.0 s"),
        (59.94, "59.9 s"),
        (61, "1 m 01 s"),
        (7322, "2 h 02 m"),
        (93600, "1 d 2 h"),
        (-1, "-"),
        (None, "-"),
        (True, "-"),
    ],
)
def test_durations(seconds: object, shown: str) -> None:
    assert duration(seconds) == shown


# --- trimcp status ----------------------------------------------------------------------------


async def test_status_prints_the_picture_and_exits_0_when_healthy() -> None:
    async with serving({"GET /status": Answer(body=STATUS)}) as stub:
        streams = _streams()
        assert await show_status(AdminTarget(stub.url), streams=streams) == 0
        assert _lines(_out(streams))[0] == "trimcp 0.1.0 pid 4242 up 12.5 s healthy, ready"
        assert _err(streams) == ""
        assert "authorization" not in stub.seen[0].headers


async def test_status_exits_1_when_not_ready() -> None:
    async with serving({"GET /status": Answer(body=_failed_status())}) as stub:
        streams = _streams()
        assert await show_status(AdminTarget(stub.url), streams=streams) == 1
        assert "not ready: upstream github" in _out(streams)


@pytest.mark.parametrize(("document", "status"), [(STATUS, 0), (_failed_status(), 1)])
async def test_status_json_prints_the_document_as_is(
    document: dict[str, object], status: int
) -> None:
    async with serving({"GET /status": Answer(body=document)}) as stub:
        streams = _streams()
        assert await show_status(AdminTarget(stub.url), as_json=True, streams=streams) == status
        assert json.loads(_out(streams)) == document


async def test_status_sends_the_token_only_when_given() -> None:
    async with serving({"GET /status": Answer(body=STATUS)}) as stub:
        token = AdminToken(TOKEN, "--token-file t")
        assert await show_status(AdminTarget(stub.url), token=token, streams=_streams()) == 0
        assert stub.seen[0].headers["authorization"] == f"Bearer {TOKEN}"


async def test_something_else_than_the_admin_app_is_named() -> None:
    async with serving({"GET /status": Answer(body=b"<html>hello</html>")}) as stub:
        streams = _streams()
        assert await show_status(AdminTarget(stub.url), streams=streams) == 1
        assert _err(streams) == (
            f"{stub.url} answered GET /status with something other than trimcp's status document"
            " (<html>hello</html>); is that address the admin app of trimcp serve?\n"
        )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_no_admin_app_is_said_in_words_with_the_fix(tmp_path: Path) -> None:
    port = _closed_port()
    config = tmp_path / "sys_config.toml"
    config.write_text(f"[admin]\nenabled = true\nport = {port}\n")
    target = locate(str(config), None)
    assert target.url == f"http://127.0.0.1:{port}"
    streams = _streams()
    assert await show_status(target, streams=streams) == 1
    assert _err(streams) == (
        f"no admin app answers at http://127.0.0.1:{port} — is `trimcp serve` running with"
        f" `[admin] enabled = true` in {config}?\n"
    )
    assert _out(streams) == ""


async def test_an_admin_app_that_does_not_answer_times_out(autojump_clock: MockClock) -> None:
    async with serving({"GET /status": Answer(hang=True)}) as stub:
        streams = _streams()
        start = trio.current_time()
        assert await show_status(AdminTarget(stub.url), streams=streams) == 1
        assert trio.current_time() - start == pytest.approx(5.0)
        assert _err(streams) == (
            f"the admin app at {stub.url} did not answer GET /status within 5 s; the daemon may be"
            " overloaded or stuck (its log may say why)\n"
        )


async def test_an_answer_past_the_bound_is_refused() -> None:
    async with serving({"GET /status": Answer(body=b"x" * 2000)}) as stub:
        target = AdminTarget(stub.url)
        assert (await ask(target, "GET /status", max_bytes=2000)).text == "x" * 500
        with pytest.raises(ConnectFailed, match="larger than 1999 bytes"):
            await ask(target, "GET /status", max_bytes=1999)


async def test_watch_survives_the_daemon_going_away_and_coming_back() -> None:
    out = _Written()
    streams = Streams(out=out, err=io.StringIO(), terminal=False)

    async def wait_for(text: str, after: int) -> int:
        with trio.fail_after(20):
            while (found := out.getvalue().find(text, after)) < 0:
                await out.changed.wait()
        return found

    stub = AdminStub({"GET /status": Answer(body=STATUS)})
    first = trio.CancelScope()

    async def serve_first(*, task_status: trio.TaskStatus[int]) -> None:
        with first:
            await stub.serve(task_status=task_status)

    async with trio.open_nursery() as nursery:
        await nursery.start(serve_first)
        nursery.start_soon(lambda: watch_status(AdminTarget(stub.url), 0.1, streams=streams))
        seen = await wait_for("healthy, ready", 0)
        first.cancel()  # the daemon goes away ...
        seen = await wait_for(f"no admin app answers at {stub.url}", seen)
        seen = await wait_for("trying again in 0.1 s", seen)
        again = AdminStub({"GET /status": Answer(body=_failed_status())}, port=stub.port)
        await nursery.start(again.serve)  # ... and comes back, not ready
        await wait_for("not ready: upstream github", seen)
        nursery.cancel_scope.cancel()


# --- locating the admin app ---------------------------------------------------------------------


def test_the_url_comes_from_the_admin_table(tmp_path: Path) -> None:
    config = tmp_path / "sys_config.toml"
    config.write_text('[admin]\nhost = "0.0.0.0"\nport = 9100\n')
    assert locate(str(config), None).url == "http://127.0.0.1:9100"
    config.write_text('[admin]\nhost = "::1"\nport = 9100\n')
    assert locate(str(config), None).url == "http://[::1]:9100"
    environ = {"TRIMCP_CONFIG": str(config)}
    assert locate(None, None, environ=environ).config_file == str(config)


def test_url_wins_and_is_checked(tmp_path: Path) -> None:
    config = tmp_path / "sys_config.toml"
    config.write_text("[admin]\nport = 9100\n")
    target = locate(str(config), "http://127.0.0.1:9999/")
    assert (target.url, target.config_file) == ("http://127.0.0.1:9999", str(config))
    with pytest.raises(ConfigError, match="is not the admin app's address: write http://HOST:PORT"):
        locate(str(config), "127.0.0.1:9999")


def test_port_0_needs_the_logged_url(tmp_path: Path) -> None:
    config = tmp_path / "sys_config.toml"
    config.write_text("[admin]\nenabled = true\nport = 0\n")
    with pytest.raises(ConfigError, match=r"port = 0 in .*pass that URL with --url"):
        locate(str(config), None)


def test_plain_http_off_this_machine_is_warned_about() -> None:
    assert plain_http_warning("http://127.0.0.1:8002") == ""
    assert plain_http_warning("http://localhost:8002") == ""
    assert plain_http_warning("http://[::1]:8002") == ""
    assert plain_http_warning("https://admin.example.com") == ""
    warning = plain_http_warning("http://10.0.0.5:8002")
    assert warning.startswith("warning: http://10.0.0.5:8002 is plain http to another machine")


# --- the token --------------------------------------------------------------------------------


def _token_file(path: Path, text: str = TOKEN + "\n", mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def _target(tmp_path: Path, admin: str = "") -> AdminTarget:
    config = tmp_path / "sys_config.toml"
    config.write_text(f"[admin]\n{admin}")
    return locate(str(config), None)


def test_the_token_comes_from_the_first_place_that_has_one(tmp_path: Path) -> None:
    given_file = _token_file(tmp_path / "given.token", "from-option\n")
    _token_file(tmp_path / "admin.token", "from-table-file\n")
    both = _target(tmp_path, 'token_file = "admin.token"\ntoken = "from-table"\n')
    env = {"TRIMCP_ADMIN_TOKEN": "from-env"}
    assert resolve_token(str(given_file), both, environ=env).value == "from-option"
    assert resolve_token(None, both, environ=env).value == "from-env"
    found = resolve_token(None, both, environ={})
    assert found.value == "from-table-file"
    assert found.source == f"[admin] token_file in {tmp_path / 'sys_config.toml'}"
    only_token = _target(tmp_path, 'token = "from-table"\n')
    assert resolve_token(None, only_token, environ={"TRIMCP_ADMIN_TOKEN": " "}).value == (
        "from-table"
    )


def test_no_token_says_where_it_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_token(None, _target(tmp_path), environ={})
    assert str(caught.value) == (
        "no admin token: POST /reload and /upstreams/NAME/restart need the daemon's admin"
        " token. Pass --token-file PATH (a file only you can read), set $TRIMCP_ADMIN_TOKEN,"
        f" or set [admin] token_file in {tmp_path / 'sys_config.toml'}"
    )


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
def test_a_token_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = _token_file(tmp_path / "admin.token", mode=mode)
    with pytest.raises(ConfigError) as caught:
        resolve_token(str(path), _target(tmp_path), environ={})
    message = str(caught.value)
    assert f"(mode {mode:04o})" in message
    assert message.endswith(f"run  chmod 600 {path}")
    assert TOKEN not in message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("\n", "is empty"),
        ("x" * (MAX_TOKEN_FILE_BYTES + 1), f"is larger than {MAX_TOKEN_FILE_BYTES} bytes"),
    ],
)
def test_a_token_file_must_hold_a_token(tmp_path: Path, text: str, problem: str) -> None:
    path = _token_file(tmp_path / "admin.token", text)
    with pytest.raises(ConfigError, match=problem):
        resolve_token(str(path), _target(tmp_path), environ={})


def test_a_token_file_at_the_bound_is_read_and_stripped(tmp_path: Path) -> None:
    path = _token_file(tmp_path / "admin.token", "x" * (MAX_TOKEN_FILE_BYTES - 1) + "\n")
    token = resolve_token(str(path), _target(tmp_path), environ={})
    assert token.value == "x" * (MAX_TOKEN_FILE_BYTES - 1)
    # The first line, as the admin app reads its own file.
    _token_file(path, "\n  abc \r\nsecond line\n")
    assert resolve_token(str(path), _target(tmp_path), environ={}).value == "abc"
    assert TOKEN not in repr(AdminToken(TOKEN, "x"))


def test_a_missing_token_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.token"
    with pytest.raises(ConfigError, match=f"cannot read the admin token file {missing}"):
        resolve_token(str(missing), _target(tmp_path), environ={})


# --- trimcp reload and restart ------------------------------------------------------------------

RELOADED = {
    "reloaded": True,
    "sources": ["/etc/trimcp/sys_config.toml"],
    "restart_needed": ["[http]"],
    "upstreams": {"added": ["files"], "removed": [], "restarted": ["github"], "kept": ["notes"]},
}


async def test_reload_sends_the_token_and_prints_what_changed() -> None:
    async with serving({"POST /reload": Answer(body=RELOADED)}) as stub:
        streams = _streams()
        token = AdminToken(TOKEN, "--token-file admin.token")
        assert await reload_daemon(AdminTarget(stub.url), token, streams=streams) == 0
        assert stub.seen[0].headers["authorization"] == f"Bearer {TOKEN}"
        assert _out(streams) == (
            "reloaded /etc/trimcp/sys_config.toml\n"
            "upstreams added: files\n"
            "upstreams restarted: github\n"
            "upstreams kept: notes\n"
            "changes to [http] take effect only when trimcp serve restarts\n"
        )


UNAUTHORIZED = Answer(
    401,
    {"error": "missing or wrong admin token"},
    (("www-authenticate", 'Bearer realm="trimcp-admin"'),),
)
NO_TOKEN = Answer(403, {"error": "no admin token is configured: set [admin] token_file ..."})


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            UNAUTHORIZED,
            "the admin app at {url} refused POST /reload with the token from --token-file"
            " admin.token (HTTP 401: missing or wrong admin token); use the token trimcp serve"
            " reads from [admin] token_file (or token) of its sys_config.toml: pass"
            " --token-file PATH, or set $TRIMCP_ADMIN_TOKEN",
        ),
        (
            NO_TOKEN,
            "the admin app at {url} refused POST /reload (HTTP 403: no admin token is"
            " configured: set [admin] token_file ...); it accepts POST requests only once it has"
            " an admin token: set [admin] token_file in /etc/trimcp/sys_config.toml to a file"
            " only you can read (chmod 600), restart trimcp serve, and pass the same file with"
            " --token-file",
        ),
        (
            Answer(
                400, {"error": "/etc/trimcp/sys_config.toml: [http] port: 'x' is not an integer"}
            ),
            "the reload failed and nothing changed (HTTP 400): /etc/trimcp/sys_config.toml:"
            " [http] port: 'x' is not an integer",
        ),
        (
            Answer(421, {"error": "Host not allowed"}),
            "the admin app at {url} refused the Host header (HTTP 421: Host not allowed); use"
            " the address it listens on, or add this host to [admin] allowed_hosts in"
            " /etc/trimcp/sys_config.toml",
        ),
        (
            Answer(502, b"Bad Gateway"),
            "the admin app at {url} answered POST /reload with HTTP 502: Bad Gateway",
        ),
    ],
)
async def test_reload_refusals_are_explained(answer: Answer, expected: str) -> None:
    async with serving({"POST /reload": answer}) as stub:
        streams = _streams()
        target = AdminTarget(stub.url, "/etc/trimcp/sys_config.toml")
        token = AdminToken(TOKEN, "--token-file admin.token")
        assert await reload_daemon(target, token, streams=streams) == 1
        assert _err(streams) == expected.format(url=stub.url) + "\n"
        assert TOKEN not in _err(streams)
        assert _out(streams) == ""


async def test_restart_prints_the_new_state() -> None:
    upstreams = STATUS["upstreams"]
    assert isinstance(upstreams, list)
    status = {**upstreams[0], "state": "connecting", "pid": 5152}
    answer = Answer(body={"restarted": "github", "status": status})
    async with serving({"POST /upstreams/github/restart": answer}) as stub:
        streams = _streams()
        token = AdminToken(TOKEN, "$TRIMCP_ADMIN_TOKEN")
        assert await restart_upstream(AdminTarget(stub.url), "github", token, streams=streams) == 0
    assert _out(streams) == "restarted github: connecting, pid 5152\n"
    assert stub.seen[0].headers["authorization"] == f"Bearer {TOKEN}"


async def test_a_restart_that_ends_failed_is_exit_1_with_why() -> None:
    upstreams = _failed_status()["upstreams"]
    assert isinstance(upstreams, list)
    answer = Answer(body={"restarted": "github", "status": upstreams[0]})
    async with serving({"POST /upstreams/github/restart": answer}) as stub:
        streams = _streams()
        token = AdminToken(TOKEN, "$TRIMCP_ADMIN_TOKEN")
        assert await restart_upstream(AdminTarget(stub.url), "github", token, streams=streams) == 1
    assert _out(streams) == (
        "restarted github: failed; restarted 3 times in 10 s; exit code 1, stderr: boom: no"
        " GITHUB_TOKEN; the server exited\n"
    )


async def test_restart_of_an_unknown_upstream_lists_the_configured() -> None:
    unknown = Answer(404, {"error": "no upstream named 'a/b'; configured: github, notes"})
    async with serving({"POST /upstreams/a%2Fb/restart": unknown}) as stub:
        streams = _streams()
        token = AdminToken(TOKEN, "$TRIMCP_ADMIN_TOKEN")
        assert await restart_upstream(AdminTarget(stub.url), "a/b", token, streams=streams) == 1
    assert _err(streams) == "no upstream named 'a/b'; configured: github, notes\n"


async def test_a_404_without_words_asks_whether_it_is_the_admin_app() -> None:
    async with serving({"POST /reload": Answer(404, b"Not Found")}) as stub:
        streams = _streams()
        assert (
            await reload_daemon(AdminTarget(stub.url), AdminToken(TOKEN, "x"), streams=streams) == 1
        )
        assert _err(streams) == (
            f"{stub.url} has no POST /reload (HTTP 404): is that address the admin app of a trimcp"
            " serve as recent as this trimcp?\n"
        )
