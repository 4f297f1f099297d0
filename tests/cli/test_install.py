"""``trimcp install``: the hosts' files and entries, the merge, and the command on real files.

The host files live in the test's folder: HOME, XDG_CONFIG_HOME and APPDATA point there, so
no real configuration is read or touched. Most tests run the command in this process
(``trimcp.cli.main``); the last ones run ``python -m trimcp install`` as a user does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trimcp
from trimcp.cli import main
from trimcp.cli._config_file import (
    backup_path,
    parse_document,
    place_entry,
    read_document,
    render,
    write_document,
)
from trimcp.cli._hosts import HOSTS, config_file, host_entry
from trimcp.client import load_client_config
from trimcp.config.mcp_servers import ServerConfig
from trimcp.errors import ConfigError

ROOT = Path(trimcp.__file__).resolve().parents[1]

# What each host's file holds before the install: another server and other settings.
OTHER = {"command": "/usr/bin/other", "args": ["--x"], "env": {"K": "v"}}
EXISTING: dict[str, object] = {
    "theme": "sombre",
    "mcpServers": {"other": OTHER},
    "ünïcode": ["é", {"nested": [1, 2.5, None, True]}],
    "last": {},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user whose home, XDG and APPDATA folders are in tmp_path; the cwd is tmp_path/project."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "appdata"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(project)
    (project / "demo.py").write_text(
        "from trimcp.server import MCPServer\nserver = MCPServer('d')\n"
    )
    return tmp_path


def install(*argv: str) -> int:
    return main(["install", *argv])


# --- where each host keeps its servers ----------------------------------------------------------

ENVIRON = {"HOME": "/h", "XDG_CONFIG_HOME": "/x", "APPDATA": "C:/Users/u/AppData/Roaming"}


@pytest.mark.parametrize(
    ("host", "scope", "platform", "expected"),
    [
        ("claude-desktop", None, "linux", "/x/Claude/claude_desktop_config.json"),
        (
            "claude-desktop",
            None,
            "darwin",
            "/h/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        (
            "claude-desktop",
            None,
            "win32",
            "C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json",
        ),
        ("claude-code", None, "linux", "/h/.claude.json"),
        ("claude-code", "project", "linux", "/p/.mcp.json"),
        ("cursor", None, "darwin", "/h/.cursor/mcp.json"),
        ("cursor", "project", "linux", "/p/.cursor/mcp.json"),
        ("vscode", None, "linux", "/p/.vscode/mcp.json"),
        ("vscode", "user", "linux", "/x/Code/User/mcp.json"),
        ("vscode", "user", "darwin", "/h/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "user", "win32", "C:/Users/u/AppData/Roaming/Code/User/mcp.json"),
        ("gemini-cli", None, "linux", "/h/.gemini/settings.json"),
        ("gemini-cli", "project", "linux", "/p/.gemini/settings.json"),
        ("mcp-json", None, "linux", "/p/.mcp.json"),
    ],
)
def test_each_host_file_in_each_scope(
    host: str, scope: str | None, platform: str, expected: str
) -> None:
    path = config_file(
        HOSTS[host],  # type: ignore[index]  # the names are the table's keys
        scope,  # type: ignore[arg-type]  # "user" / "project" / None
        environ=ENVIRON,
        platform=platform,
        cwd=Path("/p"),
    )
    assert path == Path(expected)


def test_xdg_default_claude_config_dir_and_missing_appdata() -> None:
    linux = config_file(HOSTS["claude-desktop"], environ={"HOME": "/h"}, platform="linux")
    assert linux == Path("/h/.config/Claude/claude_desktop_config.json")
    moved = config_file(HOSTS["claude-code"], environ={"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"})
    assert moved == Path("/c/.claude.json")
    with pytest.raises(ConfigError, match=r"APPDATA is not set.*--file"):
        config_file(HOSTS["claude-desktop"], environ={"HOME": "/h"}, platform="win32")


def test_a_scope_the_host_lacks_is_refused() -> None:
    with pytest.raises(ConfigError, match="Claude Desktop has no project configuration file"):
        config_file(HOSTS["claude-desktop"], "project")
    with pytest.raises(ConfigError, match="--scope project"):
        config_file(HOSTS["mcp-json"], "user")


# --- the entry each host reads ------------------------------------------------------------------

STDIO = ServerConfig(
    name="s", transport="stdio", command="/bin/srv", args=("a",), env={"K": "v"}, cwd="/w"
)


def test_stdio_entries_follow_each_hosts_shape() -> None:
    entries = {name: host_entry(host, STDIO) for name, host in HOSTS.items()}
    base = {"command": "/bin/srv", "args": ["a"], "env": {"K": "v"}}
    assert entries["claude-desktop"] == base
    assert entries["cursor"] == base
    assert entries["claude-code"] == {"type": "stdio", **base}
    assert next(iter(entries["claude-code"])) == "type"
    assert entries["vscode"] == {"type": "stdio", **base, "cwd": "/w"}
    assert entries["gemini-cli"] == {**base, "cwd": "/w"}
    assert entries["mcp-json"] == {**base, "cwd": "/w"}
    bare = ServerConfig(name="s", transport="stdio", command="/bin/srv")
    assert host_entry(HOSTS["cursor"], bare) == {"command": "/bin/srv", "args": []}


def test_url_entries_follow_each_hosts_shape() -> None:
    http = ServerConfig(
        name="u", transport="http", url="https://x.test/mcp", headers={"Authorization": "t"}
    )
    headers = {"headers": {"Authorization": "t"}}
    assert host_entry(HOSTS["claude-code"], http) == {
        "type": "http",
        "url": "https://x.test/mcp",
        **headers,
    }
    assert host_entry(HOSTS["vscode"], http)["type"] == "http"
    assert host_entry(HOSTS["cursor"], http) == {"url": "https://x.test/mcp", **headers}
    assert host_entry(HOSTS["gemini-cli"], http) == {"httpUrl": "https://x.test/mcp", **headers}
    assert host_entry(HOSTS["mcp-json"], http)["url"] == "https://x.test/mcp"
    with pytest.raises(ConfigError, match="Settings > Connectors"):
        host_entry(HOSTS["claude-desktop"], http)
    ws = ServerConfig(name="w", transport="websocket", url="ws://127.0.0.1:1/ws")
    assert host_entry(HOSTS["mcp-json"], ws) == {"url": "ws://127.0.0.1:1/ws"}
    with pytest.raises(ConfigError, match="Cursor does not connect to WebSocket servers"):
        host_entry(HOSTS["cursor"], ws)


# --- the merge: nothing in the file is lost ---------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
documents = st.dictionaries(st.text(max_size=8), json_values, max_size=6)


@given(
    documents,
    st.none() | st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    st.text(max_size=6),
    st.dictionaries(st.text(max_size=6), json_values, max_size=3),
)
def test_placing_an_entry_never_loses_a_key(
    document: dict[str, object],
    servers: dict[str, object] | None,
    name: str,
    entry: dict[str, object],
) -> None:
    if servers is not None:
        document = {**document, "mcpServers": servers}
    else:
        document.pop("mcpServers", None)
    placed = place_entry(document, "mcpServers", name, entry, "f.json")
    new = placed.document
    # Every top-level key is there, in its order; the table comes last when it is new.
    assert list(new)[: len(document)] == list(document)
    assert all(new[key] == value for key, value in document.items() if key != "mcpServers")
    table = new["mcpServers"]
    assert isinstance(table, dict)
    old_table = servers or {}
    assert list(table)[: len(old_table)] == list(old_table)
    assert all(table[key] == value for key, value in old_table.items() if key != name)
    assert table[name] == entry
    assert placed.change == (
        "added"
        if name not in old_table
        else "unchanged"
        if old_table[name] == entry
        else "replaced"
    )
    # The file's text reads back as the same document, order included.
    back = parse_document(render(new), "f.json")
    assert back == new
    assert json.dumps(back) == json.dumps(new)


@given(st.text(max_size=60))
def test_any_file_text_is_read_or_refused_in_words(text: str) -> None:
    try:
        document: object = parse_document(text, "f.json")
    except ConfigError as exc:
        document = str(exc)
    # Either an object, or a message that names the file; never another exception.
    assert isinstance(document, dict) or "f.json" in str(document)


def test_what_json_cannot_keep_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"line 3, column 3.*--print shows it"):
        parse_document('{\n  "a": 1\n  "b": 2\n}', "f.json")
    with pytest.raises(ConfigError, match="has a comment at line 2, column 3"):
        parse_document('{\n  // a comment\n  "a": 1\n}', "f.json")
    with pytest.raises(ConfigError, match="has the key 'a' twice"):
        parse_document('{"x": {"a": 1, "a": 2}}', "f.json")
    with pytest.raises(ConfigError, match="holds a JSON array, not an object"):
        parse_document("[1]", "f.json")
    with pytest.raises(ConfigError, match=r'"mcpServers" in f\.json is a JSON string'):
        place_entry({"mcpServers": "x"}, "mcpServers", "n", {}, "f.json")
    assert parse_document(" \n", "f.json") == {}


def test_a_missing_or_bom_file_reads(tmp_path: Path) -> None:
    assert read_document(tmp_path / "absent.json") is None
    (tmp_path / "bom.json").write_text('\ufeff{"a": 1}', encoding="utf-8")
    assert read_document(tmp_path / "bom.json") == {"a": 1}


def test_backups_never_overwrite_one_another(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{}")
    assert backup_path(path) == tmp_path / "mcp.json.bak"
    (tmp_path / "mcp.json.bak").write_text("older")
    stamped = backup_path(path, now=0.0)
    assert stamped.name.startswith("mcp.json.19") or stamped.name.startswith("mcp.json.20")
    assert stamped.name.endswith(".bak")
    stamped.write_text("old")
    again = backup_path(path, now=0.0)
    assert again.name == stamped.name.replace(".bak", "-2.bak")


def test_a_symlinked_file_is_written_through_its_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"keep": 1}')
    real.chmod(0o600)
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    backup = write_document(link, {"keep": 1, "new": 2})
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"keep": 1, "new": 2}
    assert backup == tmp_path / "dotfiles" / "mcp.json.bak"
    assert (real.stat().st_mode & 0o777) == 0o600


# --- the command on real files ------------------------------------------------------------------

HOST_FILES = {
    "claude-desktop": "xdg/Claude/claude_desktop_config.json",
    "claude-code": "home/.claude.json",
    "cursor": "home/.cursor/mcp.json",
    "vscode": "project/.vscode/mcp.json",
    "gemini-cli": "home/.gemini/settings.json",
    "mcp-json": "project/.mcp.json",
}


@pytest.mark.parametrize("host", list(HOST_FILES))
def test_install_merges_into_the_hosts_file(
    host: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / HOST_FILES[host]
    table = HOSTS[host].table  # type: ignore[index]  # the names are the table's keys
    existing = {**EXISTING, table: EXISTING["mcpServers"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    before = json.dumps(existing, indent=4, ensure_ascii=False)
    path.write_text(before, encoding="utf-8")

    assert install(host, "demo.py") == 0

    after = json.loads(path.read_text(encoding="utf-8"))
    assert list(after) == list(existing)
    for key, value in existing.items():
        if key != table:
            assert after[key] == value
    assert list(after[table]) == ["other", "demo"]
    assert after[table]["other"] == OTHER
    entry = after[table]["demo"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "trimcp", "run", str(home / "project" / "demo.py"), "--stdio"]
    assert ("cwd" in entry) == HOSTS[host].honours_cwd  # type: ignore[index]
    assert path.read_text(encoding="utf-8").startswith('{\n  "theme"')  # 2-space indent
    assert "ünïcode" in path.read_text(encoding="utf-8")  # written as is, not \u-escaped
    backup = path.with_name(path.name + ".bak")
    assert backup.read_text(encoding="utf-8") == before
    out = capsys.readouterr().out
    assert f'Added "demo" in {path}' in out
    assert f"backup of the previous file: {backup}" in out
    assert HOSTS[host].next_step in out  # type: ignore[index]


def test_a_missing_file_is_created(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert install("cursor", "demo.py", "--name", "fresh") == 0
    path = home / "home" / ".cursor" / "mcp.json"
    assert list(json.loads(path.read_text())) == ["mcpServers"]
    assert not path.with_name("mcp.json.bak").exists()
    assert f'Created {path} with "fresh"' in capsys.readouterr().out


def test_print_shows_the_entry_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / HOST_FILES["vscode"]
    path.parent.mkdir(parents=True)
    path.write_text("not even json")
    assert install("vscode", "demo.py", "--env", "TOKEN=abc", "--print") == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert list(printed) == ["servers"]
    assert printed["servers"]["demo"]["type"] == "stdio"
    assert printed["servers"]["demo"]["env"] == {"TOKEN": "abc"}
    assert f'not written: this goes into {path}, under "servers"' in captured.err
    assert path.read_text() == "not even json"
    assert list(path.parent.iterdir()) == [path]


def test_a_file_that_is_not_json_is_never_overwritten(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / HOST_FILES["gemini-cli"]
    path.parent.mkdir(parents=True)
    text = '{\n  "mcpServers": {\n    "a": {"command": "x"},\n  }\n}\n'  # a trailing comma
    path.write_text(text)
    assert install("gemini-cli", "demo.py") == 1
    err = capsys.readouterr().err
    assert f"{path} is not valid JSON" in err
    assert "line 4, column 3" in err
    assert "--print" in err
    assert path.read_text() == text
    assert list(path.parent.iterdir()) == [path]


def test_an_existing_name_is_replaced_only_with_force(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / HOST_FILES["claude-code"]
    path.parent.mkdir(parents=True)
    servers = {"demo": {"command": "old", "env": {"SECRET": "hidden-value"}}, "after": {}}
    path.write_text(json.dumps({"mcpServers": servers}))

    assert install("claude-code", "demo.py") == 1
    err = capsys.readouterr().err
    assert f'{path} already has a server named "demo"' in err
    assert '"SECRET": "***"' in err
    assert "hidden-value" not in err
    assert "--force" in err
    assert json.loads(path.read_text())["mcpServers"] == servers

    assert install("claude-code", "demo.py", "--force") == 0
    assert 'Replaced "demo"' in capsys.readouterr().out
    replaced = json.loads(path.read_text())["mcpServers"]
    assert list(replaced) == ["demo", "after"]  # in its old place
    assert replaced["demo"]["args"][-2:] == [str(home / "project" / "demo.py"), "--stdio"]

    # The same definition again: nothing to do, no second backup.
    assert install("claude-code", "demo.py") == 0
    assert "nothing written" in capsys.readouterr().out
    assert sorted(p.name for p in path.parent.iterdir()) == [".claude.json", ".claude.json.bak"]


def test_env_values_are_written_but_never_echoed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install("cursor", "demo.py", "--env", "API_KEY=s3cret-value", "--env", "MODE=a=b") == 0
    captured = capsys.readouterr()
    assert "s3cret-value" not in captured.out + captured.err
    assert "env: API_KEY, MODE (values not shown)" in captured.out
    entry = json.loads((home / HOST_FILES["cursor"]).read_text())["mcpServers"]["demo"]
    assert entry["env"] == {"API_KEY": "s3cret-value", "MODE": "a=b"}


def test_a_command_gets_absolute_paths(home: Path) -> None:
    project = home / "project"
    (project / "srv").mkdir()
    (project / "srv" / "main.js").write_text("")
    assert install("claude-desktop", "--name", "node-ish", "--", "python", "demo.py", "-v") == 0
    assert install("mcp-json", "--", "python", "srv/main.js", "srv", "run") == 0
    desktop = json.loads((home / HOST_FILES["claude-desktop"]).read_text())
    entry = desktop["mcpServers"]["node-ish"]
    assert entry["command"] == shutil.which("python")
    assert entry["args"] == [str(project / "demo.py"), "-v"]
    generic = json.loads((project / ".mcp.json").read_text())["mcpServers"]["main"]
    # A path with a separator is a path; a bare word is a path only when it is a file.
    assert generic["args"] == [str(project / "srv" / "main.js"), "srv", "run"]
    assert generic["cwd"] == str(project)


def test_a_module_imports_from_anywhere(home: Path) -> None:
    assert install("cursor", "mypkg.server:app") == 0
    assert install("vscode", "mypkg.server:app") == 0
    cursor = json.loads((home / HOST_FILES["cursor"]).read_text())["mcpServers"]["server"]
    assert cursor["args"] == ["-m", "trimcp", "run", "mypkg.server:app", "--stdio"]
    assert cursor["env"] == {"PYTHONPATH": str(home / "project")}
    vscode = json.loads((home / HOST_FILES["vscode"]).read_text())["servers"]["server"]
    assert vscode["cwd"] == str(home / "project")
    assert "env" not in vscode


def test_a_configured_server_is_copied(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    servers = {
        "notes": {"command": "python", "args": ["demo.py"], "env": {"TOKEN": "${TOKEN}"}},
        "remote": {"url": "https://x.test/mcp", "headers": {"Authorization": "Bearer t"}},
    }
    config = home / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    assert install("gemini-cli", "notes", "--config", str(config)) == 0
    assert install("gemini-cli", "remote", "--config", str(config)) == 0
    written = json.loads((home / HOST_FILES["gemini-cli"]).read_text())["mcpServers"]
    assert written["notes"]["command"] == shutil.which("python")
    assert written["notes"]["args"] == [str(home / "project" / "demo.py")]
    assert written["notes"]["env"] == {"TOKEN": "${TOKEN}"}  # as configured, unexpanded
    assert written["remote"] == {
        "httpUrl": "https://x.test/mcp",
        "headers": {"Authorization": "Bearer t"},
    }
    out = capsys.readouterr().out
    assert "headers: Authorization (values not shown)" in out
    assert "Bearer" not in out

    assert install("gemini-cli", "nots", "--config", str(config)) == 1
    assert 'no MCP server named "nots" is configured' in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("claude-code", {"type": "http", "url": "http://127.0.0.1:8000/mcp"}),
        ("cursor", {"url": "http://127.0.0.1:8000/mcp"}),
        ("vscode", {"type": "http", "url": "http://127.0.0.1:8000/mcp"}),
        ("gemini-cli", {"httpUrl": "http://127.0.0.1:8000/mcp"}),
        ("mcp-json", {"type": "http", "url": "http://127.0.0.1:8000/mcp"}),
    ],
)
def test_a_url_becomes_the_hosts_url_entry(host: str, expected: dict[str, str], home: Path) -> None:
    assert install(host, "http://127.0.0.1:8000/mcp", "--name", "web") == 0
    table = HOSTS[host].table  # type: ignore[index]  # the names are the table's keys
    assert json.loads((home / HOST_FILES[host]).read_text())[table]["web"] == expected


def test_what_cannot_be_installed_is_explained(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install("claude-desktop", "https://x.test/mcp") == 1
    assert "Settings > Connectors" in capsys.readouterr().err
    assert install("cursor", "https://x.test/mcp", "--env", "A=1") == 1
    assert "--env sets variables for a server the host starts" in capsys.readouterr().err
    assert install("cursor", "demo.py", "--name", "my server") == 1
    assert "e.g. --name my-server" in capsys.readouterr().err
    assert install("cursor", "demo.py", "--env", "1BAD=x") == 1
    assert "expected NAME=VALUE" in capsys.readouterr().err
    assert install("cursor", "--", "no-such-program-anywhere") == 1
    assert '"no-such-program-anywhere" was not found on PATH' in capsys.readouterr().err
    assert install("claude-desktop", "demo.py", "--scope", "project") == 1
    assert "Claude Desktop has no project configuration file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        install("notepad", "demo.py")
    assert usage.value.code == 2
    assert not (home / "home").exists()
    assert not (home / "xdg").exists()


def test_an_installed_entry_loads_in_trimcp(home: Path) -> None:
    assert install("mcp-json", "demo.py", "--env", "A=1") == 0
    [server] = load_client_config([str(home / "project" / ".mcp.json")]).servers.values()
    assert server.name == "demo"
    assert server.command == sys.executable
    assert server.args == ("-m", "trimcp", "run", str(home / "project" / "demo.py"), "--stdio")
    assert server.cwd == str(home / "project")
    assert dict(server.env) == {"A": "1"}


# --- as a user runs it --------------------------------------------------------------------------


def trimcp_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "trimcp", "install", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_the_command_as_a_user_runs_it(tmp_path: Path) -> None:
    (tmp_path / "demo.py").write_text("")
    path = tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"globalShortcut": "Ctrl+Space", "mcpServers": {"x": {"command": "y"}}}')
    done = trimcp_cli(tmp_path, "claude-desktop", "demo.py", "--env", "K=secret")
    assert done.returncode == 0, done.stderr
    assert f'Added "demo" in {path} (Claude Desktop).' in done.stdout
    assert "Quit Claude Desktop completely" in done.stdout
    assert "secret" not in done.stdout + done.stderr
    written = json.loads(path.read_text())
    assert written["globalShortcut"] == "Ctrl+Space"
    assert list(written["mcpServers"]) == ["x", "demo"]
    assert path.with_name(path.name + ".bak").exists()

    helped = trimcp_cli(tmp_path, "--help")
    assert helped.returncode == 0
    assert f"claude-desktop  user: {path}\n" in helped.stdout
    home, here = tmp_path / "home", tmp_path
    cursor = f"user: {home}/.cursor/mcp.json  project: {here}/.cursor/mcp.json\n"
    assert f"cursor          {cursor}" in helped.stdout


@pytest.mark.slow
def test_an_installed_entry_starts_from_any_folder(tmp_path: Path) -> None:
    """Cursor ignores cwd: its entry must start the server whatever folder it starts in."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "demo.py").write_text(
        "from trimcp.server import MCPServer\n"
        "server = MCPServer('from-project')\n\n"
        "@server.tool()\nasync def ping() -> str:\n    return 'pong'\n"
    )
    (project / "serve.py").write_text("from demo import server\nserver.run_stdio()\n")
    file = tmp_path / "cursor.json"
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "home"),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin",
    }
    command = [
        "install",
        "cursor",
        "--file",
        str(file),
        "--name",
        "demo",
        "--",
        "python",
        "serve.py",
    ]
    installed = subprocess.run(
        [sys.executable, "-m", "trimcp", *command],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert "cwd" not in json.loads(file.read_text())["mcpServers"]["demo"]
    process = subprocess.Popen(
        [sys.executable, "-m", "trimcp", "inspect", "demo", "--config", str(file), "--json"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert process.returncode == 0, err
    report = json.loads(out)
    assert report["server"]["name"] == "from-project"
    assert [tool["name"] for tool in report["tools"]] == ["ping"]
