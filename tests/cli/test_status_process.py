"""``trimcp status``, ``reload`` and ``restart`` as commands: ``main``, and real processes.

``main`` is run in-process where no admin app needs to answer (what it prints when nothing
listens, the token rules, usage errors); ``--watch`` runs in a pseudo-terminal (pexpect), as
a person watches it, and Ctrl-C must end it with status 130 and no traceback.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest

import trimcp
from trimcp.cli import main

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(trimcp.__file__).resolve().parents[1]
#: Seconds one expectation of a process may take (a busy machine starts Python slowly).
TIMEOUT = 30.0


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder with no TRIMCP_* variables: no sys_config.toml is found."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.delenv("TRIMCP_ADMIN_TOKEN", raising=False)
    return tmp_path


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_nothing_listening_is_exit_1_with_the_fix(
    folder: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    port = _closed_port()
    (folder / "sys_config.toml").write_text(f"[admin]\nenabled = true\nport = {port}\n")
    assert main(["status", *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"no admin app answers at http://127.0.0.1:{port} — is `trimcp serve` running with"
        f" `[admin] enabled = true` in {folder / 'sys_config.toml'}?\n"
    )


def test_no_file_is_said_too(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    assert main(["status", "--url", f"http://127.0.0.1:{port}/"]) == 1
    assert capsys.readouterr().err == (
        f"no admin app answers at http://127.0.0.1:{port} — is `trimcp serve` running with"
        " `[admin] enabled = true` in its sys_config.toml (none was found here; name it with"
        " --config)?\n"
    )


def test_a_broken_config_file_is_reported(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "sys_config.toml").write_text("[admin]\nport = 'x'\n")
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert "port" in err
    assert "Traceback" not in err


def test_plain_http_to_another_machine_is_warned_about(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): nothing answers; a second is enough to say so.
    main(["status", "--url", "http://192.0.2.1:1"])
    err = capsys.readouterr().err
    assert err.startswith("warning: http://192.0.2.1:1 is plain http to another machine")


def test_reload_refuses_a_token_file_others_can_read(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = folder / "admin.token"
    token.write_text("secret-value\n")
    token.chmod(0o644)
    port = _closed_port()
    argv = ["--url", f"http://127.0.0.1:{port}", "--token-file", str(token)]
    assert main(["reload", *argv]) == 1
    assert main(["restart", "github", *argv]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert all(line.endswith(f"run  chmod 600 {token}") for line in lines)
    assert "secret-value" not in err


def test_reload_without_a_token_says_where_to_put_one(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "sys_config.toml").write_text("[admin]\nenabled = true\n")
    assert main(["reload"]) == 1
    assert capsys.readouterr().err.startswith("no admin token: POST /reload")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["status", "--json", "--watch"], "argument --watch: not allowed with argument --json"),
        (["status", "--watch", "0"], "argument --watch: 0 is not between 0.1 and 3600 seconds"),
        (["status", "--watch", "soon"], "argument --watch: 'soon' is not a number of seconds"),
        (["restart"], "the following arguments are required: UPSTREAM"),
    ],
)
def test_usage_errors_are_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(message)


def test_the_commands_are_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("status", "reload", "restart"):
        assert f"    {command} " in out


# --- --watch in a terminal ----------------------------------------------------------------------


@pytest.fixture
def watched(folder: Path) -> Iterator[tuple[pexpect.spawn, io.StringIO, int]]:
    """``trimcp status --watch 0.2`` in a pseudo-terminal, at a port nothing listens on."""
    port = _closed_port()
    transcript = io.StringIO()
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(folder),
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "TERM": "xterm",
    }
    child = pexpect.spawn(
        sys.executable,
        ["-m", "trimcp", "status", "--watch", "0.2", "--url", f"http://127.0.0.1:{port}"],
        cwd=str(folder),
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 200),
    )
    child.logfile_read = transcript
    try:
        yield child, transcript, port
    finally:
        if child.isalive():
            os.kill(child.pid, signal.SIGKILL)
            child.wait()


@pytest.mark.slow
def test_watch_keeps_trying_and_ctrl_c_ends_it_with_130(
    watched: tuple[pexpect.spawn, io.StringIO, int],
) -> None:
    child, transcript, port = watched
    child.expect_exact(f"no admin app answers at http://127.0.0.1:{port}")
    child.expect_exact("trying again in 0.2 s")
    # Redrawn in place: the next attempt's clock, with the error still shown.
    child.expect_exact(f"no admin app answers at http://127.0.0.1:{port}")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, (child.signalstatus, transcript.getvalue())
    assert "Traceback" not in transcript.getvalue()
    assert "KeyboardInterrupt" not in transcript.getvalue()
