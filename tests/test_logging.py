"""configure_logging: the one place handlers are installed, in text or JSON lines."""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

import pytest

from trimcp._logging import JsonFormatter, TextFormatter, configure_logging
from trimcp.config import LoggingSettings

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger("trimcp.tests.logging")


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """Undo configure_logging, which changes the process-wide root logger."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


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
