"""Files inside the jail as resources: listing, reading, refusals, subscriptions.

Against a real tree in ``tmp_path``; listings are compared with what ``os``, ``mimetypes``
and ``urllib.parse`` say. Subscriptions run the server's notifications (where its file
watcher runs) under trio's ``MockClock`` with autojump, so "after two intervals" is exact.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import mimetypes
import os
import subprocess
import sys
import tempfile
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.errors import JsonRpcError
from trimcp.skills import build_server
from trimcp.skills._resources import file_uri, path_of
from trimcp.skills._watch import FileWatcher
from trimcp.skills.jail import Jail
from trimcp.testing import open_in_memory_client

from .conftest import skills_settings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from trimcp.server import MCPServer
    from trimcp.testing import InMemoryClient

SECRET = "TOP-SECRET-OUTSIDE-MARKER"
UPDATED = "notifications/resources/updated"
INTERVAL = 1.0  # the default watch_interval


@asynccontextmanager
async def served(
    root: Path, *, sessions: int = 1, watching: bool = False, **changes: Any
) -> AsyncIterator[tuple[MCPServer, list[InMemoryClient]]]:
    """A skills server over ``root`` and ``sessions`` clients; with its watcher if asked."""
    server = build_server(skills_settings(root, **changes))
    async with AsyncExitStack() as stack:
        if watching:
            await stack.enter_async_context(server.open_notifications())
        clients = [
            await stack.enter_async_context(open_in_memory_client(server)) for _ in range(sessions)
        ]
        yield server, clients


async def list_all(client: InMemoryClient) -> list[dict[str, Any]]:
    """Every resource of every page of resources/list."""
    found: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        result: dict[str, Any] = await client.request("resources/list", params)
        found.extend(result["resources"])
        if "nextCursor" not in result:
            return found
        params = {"cursor": result["nextCursor"]}


async def read(client: InMemoryClient, uri: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request("resources/read", {"uri": uri})
    [contents] = result["contents"]
    assert isinstance(contents, dict)
    return contents


async def refused(client: InMemoryClient, method: str, uri: str) -> JsonRpcError:
    with pytest.raises(JsonRpcError) as caught:
        await client.request(method, {"uri": uri})
    return caught.value


def expected_entry(root: Path, relative: str) -> dict[str, Any]:
    path = root / relative
    entry: dict[str, Any] = {
        "uri": "file://" + quote(str(path)),
        "name": relative,
        "size": path.stat().st_size,
    }
    guessed, _ = mimetypes.guess_type(path.name, strict=False)
    if guessed:
        entry["mimeType"] = guessed
    return entry


def replace_by_rename(path: Path, text: str) -> None:
    """Save ``path`` as editors do: write a new file beside it and rename it over."""
    spare = path.with_name(path.name + ".new")
    spare.write_text(text)
    spare.replace(path)


@pytest.fixture
def tree(jail_root: Path) -> Path:
    """A jail with text, code, a secret, ignored files, .git, symlinks and a FIFO."""
    outside = jail_root.parent / "outside"
    (outside / "secret.txt").write_text(SECRET)
    (jail_root / "a.txt").write_text("alpha\n")
    (jail_root / "sp ace.md").write_text("# title\n")
    (jail_root / "sub").mkdir()
    (jail_root / "sub" / "b.py").write_text("print('b')\n")
    (jail_root / ".env").write_text("TOKEN=1\n")
    (jail_root / ".gitignore").write_text("*.log\n")
    (jail_root / "build.log").write_text("ignored\n")
    (jail_root / ".git").mkdir()
    (jail_root / ".git" / "config").write_text("[core]\n")
    (jail_root / "link-out").symlink_to(outside / "secret.txt")
    (jail_root / "dir-out").symlink_to(outside)
    (jail_root / "link-in").symlink_to(jail_root / "a.txt")
    os.mkfifo(jail_root / "fifo")
    return jail_root


# --- listing ---------------------------------------------------------------------------------


async def test_the_template_and_capabilities(tree: Path) -> None:
    async with served(tree) as (_, [client]):
        templates: dict[str, Any] = await client.request("resources/templates/list")
        caps = client.initialize_result.capabilities
    [template] = templates["resourceTemplates"]
    assert template["uriTemplate"] == "file:///{+path}"
    assert str(tree) in template["description"]
    assert (caps.resources, caps.resources_subscribe) == (True, True)


async def test_lists_the_regular_files_the_jail_allows(tree: Path) -> None:
    async with served(tree) as (_, [client]):
        listed = await list_all(client)
    names = [".gitignore", "a.txt", "sp ace.md", "sub/b.py"]  # no secret, log, .git, links
    assert listed == [expected_entry(tree, name) for name in names]


async def test_gitignore_false_lists_ignored_files_too(tree: Path) -> None:
    async with served(tree, gitignore=False) as (_, [client]):
        listed = await list_all(client)
    assert "build.log" in [item["name"] for item in listed]
    assert ".env" not in [item["name"] for item in listed]


async def test_at_most_max_listed_resources(tree: Path) -> None:
    async with served(tree, max_listed_resources=2) as (_, [client]):
        listed = await list_all(client)
    assert [item["name"] for item in listed] == [".gitignore", "a.txt"]


async def test_pages_fit_together_while_files_come_and_go(jail_root: Path) -> None:
    names = [f"f{index:03d}.txt" for index in range(120)]
    for name in names:
        (jail_root / name).write_text(name)
    async with served(jail_root) as (_, [client]):
        first: dict[str, Any] = await client.request("resources/list")
        (jail_root / "a-new.txt").write_text("new")  # sorts first: would shift every page
        (jail_root / "f000.txt").unlink()
        rest: list[dict[str, Any]] = []
        params: dict[str, Any] = {"cursor": first["nextCursor"]}
        while True:
            page: dict[str, Any] = await client.request("resources/list", params)
            rest.extend(page["resources"])
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
        again = await list_all(client)
    pages = [*first["resources"], *rest]
    assert [item["name"] for item in pages] == names
    assert [item["name"] for item in again] == ["a-new.txt", *names[1:]]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="/\x00")
            | st.sampled_from(" %?#\n\t[]{}+&;=~é日"),
            min_size=1,
            max_size=10,
        ).filter(lambda name: name not in (".", "..")),
        min_size=1,
        max_size=6,
        unique=True,
    )
)
def test_any_name_round_trips_through_its_uri(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(os.path.realpath(scratch))
        written: dict[str, bytes] = {}
        for index, name in enumerate(names):
            with contextlib.suppress(OSError):  # a name too long in bytes
                (root / name).write_bytes(f"{index}:{name}".encode())
                written[name] = f"{index}:{name}".encode()
        jail = Jail([root], blocked=skills_settings(root).blocked_paths)
        allowed = {name for name in written if not jail.is_blocked((name,), "read")}

        async def check() -> None:
            async with served(root, gitignore=False) as (_, [client]):
                listed = await list_all(client)
                assert {item["name"] for item in listed} == allowed
                for item in listed:
                    uri = item["uri"]
                    assert path_of(uri) == str(root / item["name"])
                    assert uri == file_uri(root / item["name"])
                    contents = await read(client, uri)
                    assert contents["uri"] == uri
                    assert contents["text"].encode() == written[item["name"]]

        trio.run(check)


# --- reading ---------------------------------------------------------------------------------


async def test_reads_text_and_blobs_with_their_mime_types(jail_root: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    files = {
        "notes.md": "# notes — é\n".encode(),
        "empty.txt": b"",
        "image.png": png,
        "latin.txt": "caf\xe9".encode("latin-1"),
        "data.unknownext": b"\x00\x01\x02",
        "plain": b"no extension\n",
    }
    for name, data in files.items():
        (jail_root / name).write_bytes(data)
    async with served(jail_root) as (_, [client]):
        got = {name: await read(client, file_uri(jail_root / name)) for name in files}
    assert got["notes.md"]["text"] == files["notes.md"].decode()
    assert got["notes.md"]["mimeType"] == mimetypes.guess_type("notes.md", strict=False)[0]
    assert got["empty.txt"]["text"] == ""
    assert base64.b64decode(got["image.png"]["blob"]) == png
    assert got["image.png"]["mimeType"] == "image/png"
    assert base64.b64decode(got["latin.txt"]["blob"]) == files["latin.txt"]  # not UTF-8
    assert got["latin.txt"]["mimeType"] == "text/plain"
    assert got["data.unknownext"]["mimeType"] == "application/octet-stream"
    assert (got["plain"]["text"], got["plain"]["mimeType"]) == ("no extension\n", "text/plain")


def refusal_uris(tree: Path) -> dict[str, str]:
    outside = tree.parent / "outside"
    sibling = tree.parent / (tree.name + "-x")
    sibling.mkdir()
    (sibling / "s.txt").write_text(SECRET)
    return {
        "outside": file_uri(outside / "secret.txt"),
        "symlinked file out": file_uri(tree / "link-out"),
        "through a symlinked folder": file_uri(tree / "dir-out" / "secret.txt"),
        "dot-dot": file_uri(tree) + "/%2e%2e/outside/secret.txt",
        "prefix sibling": file_uri(sibling / "s.txt"),
        "proc root": file_uri(f"/proc/self/root{outside}/secret.txt"),
        "blocked": file_uri(tree / ".env"),
        "folder": file_uri(tree / "sub"),
        "missing": file_uri(tree / "nope.txt"),
        "fifo": file_uri(tree / "fifo"),
        "filesystem root": "file:///",
        "another host": "file://example.com" + str(tree / "a.txt"),
        "not a file uri": "https://example.com/a.txt",
    }


async def test_refused_reads_are_not_found_and_leak_nothing(tree: Path) -> None:
    uris = refusal_uris(tree)
    async with served(tree) as (_, [client]):
        errors = {case: await refused(client, "resources/read", uri) for case, uri in uris.items()}
    outside = str(tree.parent / "outside")
    for case, error in errors.items():
        assert error.code == -32002, case
        assert error.data == {"uri": uris[case]}, case
        assert SECRET not in error.message, case
        if outside not in (path_of(uris[case]) or ""):  # only the path as asked is named
            assert outside not in error.message, (case, error.message)
    assert "outside the allowed folders" in errors["symlinked file out"].message
    assert "blocked_paths" in errors["blocked"].message
    assert "folder" in errors["folder"].message
    assert "does not exist" in errors["missing"].message


async def test_a_file_over_max_file_size_is_refused_with_the_limit(jail_root: Path) -> None:
    (jail_root / "big.txt").write_bytes(b"x" * 11)
    (jail_root / "fits.txt").write_bytes(b"x" * 10)
    async with served(jail_root, max_file_size=10) as (_, [client]):
        error = await refused(client, "resources/read", file_uri(jail_root / "big.txt"))
        fits = await read(client, file_uri(jail_root / "fits.txt"))
    assert error.code == -32602
    assert "11 bytes" in error.message
    assert "max_file_size" in error.message
    assert error.data == {"uri": file_uri(jail_root / "big.txt"), "size": 11, "limit": 10}
    assert fits["text"] == "x" * 10


async def test_no_read_category_no_resources(jail_root: Path) -> None:
    async with served(jail_root, enable=("search",)) as (_, [client]):
        caps = client.initialize_result.capabilities
    assert not caps.resources


# --- subscriptions ---------------------------------------------------------------------------


async def test_changes_deletion_creation_and_replacement_are_notified(
    jail_root: Path, autojump_clock: trio.testing.MockClock
) -> None:
    target = jail_root / "watched.txt"
    later = jail_root / "later.txt"
    target.write_text("one\n")
    uri, later_uri = file_uri(target), file_uri(later)
    async with served(jail_root, watching=True) as (_, [client]):
        await client.request("resources/subscribe", {"uri": uri})
        await client.request("resources/subscribe", {"uri": later_uri})  # not there yet
        steps: list[tuple[Path, Callable[[], object]]] = [
            (target, lambda: target.write_text("one\ntwo\n")),  # size and mtime
            (target, lambda: os.utime(target, ns=(1, 1))),  # mtime only
            (target, target.unlink),
            (target, lambda: target.write_text("back\n")),
            (later, lambda: later.write_text("created\n")),
            (target, functools.partial(replace_by_rename, target, "replaced\n")),
        ]
        for count, (path, change) in enumerate(steps, start=1):
            change()
            with trio.fail_after(3 * INTERVAL):
                note = await client.wait_notification(UPDATED, count)
            assert note.params == {"uri": file_uri(path)}
        await trio.sleep(5 * INTERVAL)  # nothing changes: nothing more is sent
    assert len(client.received(UPDATED)) == len(steps)


async def test_each_subscriber_hears_once_and_unsubscribing_stops_it(
    jail_root: Path, autojump_clock: trio.testing.MockClock
) -> None:
    target = jail_root / "shared.txt"
    target.write_text("x")
    uri = file_uri(target)
    async with served(jail_root, sessions=2, watching=True) as (server, [one, two]):
        await one.request("resources/subscribe", {"uri": uri})
        await two.request("resources/subscribe", {"uri": uri})
        target.write_text("xy")
        with trio.fail_after(3 * INTERVAL):
            await one.wait_notification(UPDATED)
            await two.wait_notification(UPDATED)
        await one.request("resources/unsubscribe", {"uri": uri})
        target.write_text("xyz")
        with trio.fail_after(3 * INTERVAL):
            await two.wait_notification(UPDATED, 2)
        await two.request("resources/unsubscribe", {"uri": uri})
        target.write_text("xyzw")
        await trio.sleep(3 * INTERVAL)
        assert list(server.subscribed_uris()) == []
    assert (len(one.received(UPDATED)), len(two.received(UPDATED))) == (1, 2)


async def test_at_most_max_subscriptions_files_are_watched(
    jail_root: Path, autojump_clock: trio.testing.MockClock
) -> None:
    for name in "abc":
        (jail_root / name).write_text(name)
    a, b, c = (file_uri(jail_root / name) for name in "abc")
    async with served(jail_root, watching=True, max_subscriptions=2) as (server, [client]):
        await client.request("resources/subscribe", {"uri": a})
        await client.request("resources/subscribe", {"uri": b})
        await client.request("resources/subscribe", {"uri": a})  # the same file: no new slot
        error = await refused(client, "resources/subscribe", c)
        await client.request("resources/unsubscribe", {"uri": a})
        await client.request("resources/subscribe", {"uri": c})  # a's slot is free again
        assert sorted(server.subscribed_uris()) == sorted([b, c])
        async with open_in_memory_client(server) as other:
            await refused(other, "resources/subscribe", a)
        (jail_root / "c").write_text("cc")
        with trio.fail_after(3 * INTERVAL):
            note = await client.wait_notification(UPDATED)
    assert note.params == {"uri": c}
    assert error.code == -32600
    assert "max_subscriptions" in error.message


async def test_a_closed_session_frees_its_watched_files(
    jail_root: Path, autojump_clock: trio.testing.MockClock
) -> None:
    (jail_root / "a").write_text("a")
    (jail_root / "b").write_text("b")
    async with served(jail_root, watching=True, max_subscriptions=1) as (server, [client]):
        async with open_in_memory_client(server) as first:
            await first.request("resources/subscribe", {"uri": file_uri(jail_root / "a")})
        await client.request("resources/subscribe", {"uri": file_uri(jail_root / "b")})
        assert list(server.subscribed_uris()) == [file_uri(jail_root / "b")]


async def test_refused_subscriptions_watch_nothing(
    tree: Path, autojump_clock: trio.testing.MockClock
) -> None:
    uris = refusal_uris(tree)
    del uris["missing"]  # a file that may appear later is watched
    async with served(tree, watching=True) as (server, [client]):
        errors = {case: await refused(client, "resources/subscribe", u) for case, u in uris.items()}
        assert list(server.subscribed_uris()) == []
    for case, error in errors.items():
        assert error.code == -32002, case
        assert SECRET not in error.message, case
    assert "only files are resources" in errors["folder"].message


async def test_a_folder_swapped_for_a_symlink_reports_the_file_gone_and_no_more(
    jail_root: Path, autojump_clock: trio.testing.MockClock
) -> None:
    outside = jail_root.parent / "outside"
    (outside / "f.txt").write_text(SECRET)
    (jail_root / "dir").mkdir()
    (jail_root / "dir" / "f.txt").write_text("inside")
    async with served(jail_root, watching=True) as (_, [client]):
        await client.request("resources/subscribe", {"uri": file_uri(jail_root / "dir/f.txt")})
        (jail_root / "dir").rename(jail_root / "old")
        (jail_root / "dir").symlink_to(outside)
        with trio.fail_after(3 * INTERVAL):
            await client.wait_notification(UPDATED)  # the file inside is gone
        (outside / "f.txt").write_text(SECRET + " changed")  # not followed: not seen
        await trio.sleep(5 * INTERVAL)
    assert len(client.received(UPDATED)) == 1


async def test_a_large_pass_looks_in_a_worker_thread(tmp_path: Path) -> None:
    files = []
    for index in range(5):
        (tmp_path / f"d{index}").mkdir()
        files.append(tmp_path / f"d{index}" / "f.txt")
        files[-1].write_text("x")
    jail = Jail([tmp_path])
    uris = {str(path): jail.resolve(str(path)) for path in files}
    sent: list[str] = []

    async def notify(uri: str) -> None:
        sent.append(uri)

    watcher = FileWatcher(notify, uris.keys, limit=10, interval=INTERVAL, look_here=0)
    for uri, resolved in uris.items():
        await watcher.watch(uri, resolved)
    assert await watcher.poll() == []
    files[1].write_text("xx")
    files[3].unlink()
    assert await watcher.poll() == [str(files[1]), str(files[3])]
    assert sent == [str(files[1]), str(files[3])]
    assert await watcher.poll() == []
    del uris[str(files[1])]  # unsubscribed: forgotten at the next pass
    files[1].write_text("xxx")
    assert await watcher.poll() == []
    assert watcher.watched == [str(files[0]), str(files[2]), str(files[3]), str(files[4])]


@pytest.mark.slow
async def test_trimcp_skills_over_stdio_notifies_a_subscriber(jail_root: Path) -> None:
    """The real command: its runner starts the watcher beside the notifications."""
    target = jail_root / "f.txt"
    target.write_text("one\n")
    uri = file_uri(target)
    env = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}
    command = [sys.executable, "-m", "trimcp", "skills", "--root", str(jail_root)]
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=jail_root.parent, env=env
    )
    assert process.stdin is not None
    assert process.stdout is not None
    lines = LineReader(process.stdout)

    async def send(message: dict[str, Any]) -> None:
        await process.stdin.send_all(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")  # type: ignore[union-attr]

    try:
        with trio.fail_after(30):
            await send({"id": 1, "method": "initialize", "params": INITIALIZE})
            assert (await lines.next())["result"]["capabilities"]["resources"]["subscribe"]
            await send({"method": "notifications/initialized"})
            await send({"id": 2, "method": "resources/list"})
            listed = (await lines.next())["result"]["resources"]
            assert listed == [expected_entry(jail_root, "f.txt")]
            await send({"id": 3, "method": "resources/subscribe", "params": {"uri": uri}})
            assert await lines.next() == {"jsonrpc": "2.0", "id": 3, "result": {}}
            target.write_text("one\ntwo\n")
            note = await lines.next()
            assert note == {
                "jsonrpc": "2.0",
                "method": UPDATED,
                "params": {"uri": uri},
            }
            await process.stdin.aclose()
            assert await process.wait() == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}


class LineReader:
    """JSON messages, one per line, from a process's stdout."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = await self._stream.receive_some()
            assert chunk, "the server closed its stdout"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message
