"""configure_logging: the one place handlers are installed, in text or JSON lines."""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

import pytest

from trimcp import telemetry
from trimcp._logging import JsonFormatter, TextFormatter, configure_logging
from trimcp.client import ClientSessionOptions
from trimcp.config import LoggingSettings
from trimcp.errors import JsonRpcError
from trimcp.server import MCPServer
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger("trimcp.tests.logging")


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """Undo configure_logging, which changes the process-wide root logger."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    observers = telemetry.installed()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for observer in telemetry.installed():
        telemetry.uninstall(observer)
    for observer in observers:
        telemetry.install(observer)


def test_json_lines_carry_the_extra_fields(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LoggingSettings(level="INFO", format="json"))
    logger.error("child %s crashed", "db", extra={"supervisor": "root", "child_id": "db"})
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["message"] == "child db crashed"
    assert (entry["level"], entry["logger"]) == ("ERROR", "trimcp.tests.logging")
    assert (entry["supervisor"], entry["child_id"]) == ("root", "db")
    assert entry["time"].endswith("+00:00")


def test_json_keeps_tracebacks_and_odd_values_on_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(LoggingSettings(format="json"))
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed", extra={"thing": object(), "level": "not the level"})
    (line,) = capsys.readouterr().err.splitlines()
    entry = json.loads(line)
    assert "ValueError: boom" in entry["exception"]
    assert entry["thing"].startswith("<object object")
    assert entry["level"] == "ERROR"


def test_text_lines_append_extra_fields(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LoggingSettings(format="text"))
    logger.warning("restarting %s", "db", extra={"child_id": "db"})
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith("WARNING  trimcp.tests.logging: restarting db child_id='db'")


def test_level_filters_records(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LoggingSettings(level="WARNING"))
    logger.info("hidden")
    logger.warning("shown")
    assert capsys.readouterr().err.count("\n") == 1


def test_configuring_twice_replaces_the_handler(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LoggingSettings(format="text"))
    configure_logging(LoggingSettings(format="json"))
    logger.warning("once")
    (line,) = capsys.readouterr().err.splitlines()
    assert json.loads(line)["message"] == "once"


def test_text_formatter_keeps_fields_on_the_first_line_of_a_traceback() -> None:
    try:
        raise KeyError("k")
    except KeyError:
        record = logger.makeRecord(
            logger.name, logging.ERROR, __file__, 1, "oops", (), None, extra={"a": 1}
        )
        record.exc_info = sys.exc_info()
    first, *rest = TextFormatter().format(record).splitlines()
    assert first.endswith("oops a=1")
    assert rest[0].startswith("Traceback")
    assert "stack" not in json.loads(JsonFormatter().format(record))


def _logging_server() -> MCPServer:
    server = MCPServer("logging")
    handler_logger = logging.getLogger("myapp.tools")

    @server.tool()
    def shout(text: str) -> str:
        """Log, then answer."""
        handler_logger.info("shouting %s", text)
        return text.upper()

    @server.prompt()
    def greet(name: str) -> str:
        """Greet."""
        return f"Hello, {name}"

    @server.tool()
    def broken() -> str:
        """Fail unexpectedly (-32603)."""
        raise RuntimeError("unexpected")

    return server


def _entries(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().err.splitlines()]


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_records_written_while_a_request_runs_carry_its_fields(
    capsys: pytest.CaptureFixture[str], era: str
) -> None:
    configure_logging(LoggingSettings(level="INFO", format="json"))
    async with open_client_pair(
        _logging_server(), options=ClientSessionOptions(protocol_version=era)
    ) as client:
        await client.call_tool("shout", {"text": "hi"})
        logger.info("outside any request")
    entries = _entries(capsys)
    [inside] = [e for e in entries if e["message"] == "shouting hi"]
    assert (inside["method"], inside["tool"], inside["logger"]) == (
        "tools/call",
        "shout",
        "myapp.tools",
    )
    assert isinstance(inside["id"], int)
    if era == "2025-11-25":
        assert str(inside["session"]).startswith("Session-")  # its short name, whole
    else:
        assert "session" not in inside  # a 2026-07-28 request is in no session
    [outside] = [e for e in entries if e["message"] == "outside any request"]
    assert "method" not in outside
    # No request lines unless [logging] requests is on.
    assert not [e for e in entries if e["logger"] == telemetry.REQUEST_LOGGER]


async def test_the_request_line_says_how_each_request_ended(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(LoggingSettings(level="INFO", format="json", requests=True))
    async with open_client_pair(
        _logging_server(), options=ClientSessionOptions(protocol_version="2025-11-25")
    ) as client:
        await client.call_tool("shout", {"text": "hi"})
        assert (await client.call_tool("broken", {})).is_error
        with pytest.raises(JsonRpcError):
            await client.request("prompts/get", {"name": "nothing"})
    entries = _entries(capsys)
    lines = [e for e in entries if e["logger"] == telemetry.REQUEST_LOGGER]
    by_tool = {e.get("tool"): e for e in lines if e["method"] == "tools/call"}
    ok, failed = by_tool["shout"], by_tool["broken"]
    assert (ok["outcome"], ok["level"]) == ("ok", "INFO")
    assert isinstance(ok["duration_ms"], float)
    assert ok["duration_ms"] >= 0
    assert isinstance(ok["session"], str)
    assert failed["outcome"] == "tool_error"
    [refused] = [e for e in lines if e["method"] == "prompts/get"]
    assert (refused["outcome"], refused["code"], refused["prompt"]) == ("error", -32602, "nothing")
    assert {e["method"] for e in lines} >= {"initialize", "tools/call"}
    # The tool's failure is logged with the request's fields as well.
    [crash] = [e for e in entries if "exception" in e and "unexpected" in str(e["exception"])]
    assert (crash["method"], crash["tool"]) == ("tools/call", "broken")


def test_configuring_again_replaces_the_request_log() -> None:
    configure_logging(LoggingSettings(requests=True))
    configure_logging(LoggingSettings(requests=False))
    logs = [o for o in telemetry.installed() if isinstance(o, telemetry.RequestLog)]
    assert [log.lines for log in logs] == [False]
