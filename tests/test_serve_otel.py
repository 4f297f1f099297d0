"""``trimcp serve`` with ``[otel]``: the exporters start with the daemon and are flushed at its end.

A real ``python -m trimcp serve`` serves the built-in tools over HTTP on 127.0.0.1 (port 0)
with the console exporter, which writes to stderr (stdout carries MCP under ``--stdio``); a
real ``trimcp call`` makes one call through it, and the daemon, stopped by SIGTERM, must have
exported that call's SERVER span before it exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.daemon_process import DaemonProcess

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

CONFIG = """\
[http]
enabled = true
port = 0

[skills]
enabled = true
roots = ["{root}"]

[otel]
enabled = true
exporter = "console"
metrics = false
"""


def _config(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "hello.txt").write_text("hello\n")
    path = tmp_path / "sys_config.toml"
    path.write_text(CONFIG.format(root=root))
    return path


def test_serve_exports_the_spans_of_its_calls_and_flushes_them_at_exit(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path, _config(tmp_path), env={"OTEL_SERVICE_NAME": "otel-test"})
    try:
        url = daemon.wait_for(r"MCP over Streamable HTTP at (http://\S+)").group(1)
        call = subprocess.run(
            [sys.executable, "-m", "trimcp", "call", url, "skills__read_file", "path=hello.txt"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert call.returncode == 0, call.stderr
        assert "hello" in call.stdout
        daemon.stop()
        assert daemon.process.returncode == 0
    finally:
        daemon.cleanup()
    spans = _spans(daemon.log())
    served = [span for span in spans if span["name"] == "tools/call skills__read_file"]
    assert [span["kind"] for span in served] == ["SpanKind.SERVER"]
    (span,) = served
    assert span["attributes"]["mcp.method.name"] == "tools/call"
    assert span["attributes"]["gen_ai.tool.name"] == "skills__read_file"
    assert span["resource"]["attributes"]["service.name"] == "otel-test"
    # The gateway's own call to its in-process backend is a CLIENT span of the same trace.
    forwarded = [s for s in spans if s["kind"] == "SpanKind.CLIENT" and "read_file" in s["name"]]
    assert forwarded
    assert {s["context"]["trace_id"] for s in forwarded} == {span["context"]["trace_id"]}


def test_serve_refuses_an_otel_variable_it_cannot_use(tmp_path: Path) -> None:
    daemon = DaemonProcess(
        tmp_path, _config(tmp_path), env={"OTEL_TRACES_SAMPLER_ARG": "half of them"}
    )
    try:
        daemon.process.wait(timeout=30)
        assert daemon.process.returncode == 1
        assert "OTEL_TRACES_SAMPLER_ARG" in daemon.log()
    finally:
        daemon.cleanup()


def _spans(log: str) -> list[dict[str, object]]:
    """The console exporter's spans: JSON objects written across lines, among log lines."""
    decoder = json.JSONDecoder()
    spans: list[dict[str, object]] = []
    index = 0
    while (start := log.find("{\n", index)) != -1:
        try:
            value, index = decoder.raw_decode(log, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        if isinstance(value, dict) and "context" in value and "kind" in value:
            spans.append(value)
    return spans


def test_config_check_names_an_otel_variable_it_cannot_use(tmp_path: Path) -> None:
    path = _config(tmp_path)
    env = {"OTEL_TRACES_SAMPLER_ARG": "half of them", "HOME": str(tmp_path)}
    checked = subprocess.run(
        [sys.executable, "-m", "trimcp", "config", "check", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **env},
    )
    assert checked.returncode == 1
    assert "OTEL_TRACES_SAMPLER_ARG" in checked.stderr
