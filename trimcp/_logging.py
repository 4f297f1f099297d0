"""Install the process's log handler from ``LoggingSettings``.

This is the only place trimcp configures logging handlers, and only the ``trimcp serve``
entry point calls it: library code just logs to ``logging.getLogger(__name__)``, with fixed
fields in ``extra`` (``supervisor``, ``child_id``, ...). Both formats keep those fields: the
text format appends them as ``key=value``, the JSON format makes them keys of the object.

A record written while a request is handled also gets the request's fields (``method``,
``id``, ``session``, ``tool`` or ``prompt``): ``configure_logging`` installs the request log
observer (``trimcp.telemetry.RequestLog``), which keeps them in a context variable of the
handler's context, and a filter on its handler that copies them onto each record. With
``[logging] requests = true`` the observer also logs one line per request served
(``trimcp.requests``, INFO, with ``outcome`` and ``duration_ms``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import TYPE_CHECKING, TextIO

from trimcp import telemetry

if TYPE_CHECKING:
    from trimcp.config import LoggingSettings

# Everything a LogRecord carries by itself; any other attribute came from `extra`. Taken from
# a live record so that version-specific attributes (taskName, 3.12) are counted too.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
}

_TEXT_FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"


def configure_logging(settings: LoggingSettings) -> None:
    """Send log records at ``settings.level`` and above to stderr, as text or JSON lines.

    Configures the root logger, so that the libraries' records (hypercorn's, say) are
    written the same way. Calling it again, e.g. after a reload, replaces the handler it
    installed before instead of adding a second one; other handlers are left alone.
    """
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    handler = _StderrHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if settings.format == "json" else TextFormatter())
    handler.addFilter(RequestFieldsFilter())
    root.addHandler(handler)
    root.setLevel(settings.level)
    for observer in telemetry.installed():
        if isinstance(observer, telemetry.RequestLog):
            telemetry.uninstall(observer)
    telemetry.install(telemetry.RequestLog(lines=settings.requests))


class RequestFieldsFilter(logging.Filter):
    """Add the fields of the request being handled (if any) to each record passing by.

    A field the logging call passed in ``extra`` is kept as given.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Copy the request's fields onto ``record``; never drops it."""
        fields = telemetry.request_fields()
        if fields is not None:
            attributes = record.__dict__
            for key, value in fields.items():
                attributes.setdefault(key, value)
        return True


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Marks the handler configure_logging installed, so that a second call can replace it."""


def extra_fields(record: logging.LogRecord) -> dict[str, object]:
    """Return the fields that were passed to the logging call as ``extra``."""
    return {k: v for k, v in vars(record).items() if k not in _RECORD_ATTRIBUTES}


class TextFormatter(logging.Formatter):
    """Format ``time LEVEL logger: message key=value ...``, one record per line."""

    def __init__(self) -> None:
        """Use the house text format with ISO-like local timestamps."""
        super().__init__(_TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        """Return the record's line, with its extra fields appended as ``key=value``."""
        text = super().format(record)
        fields = " ".join(f"{key}={value!r}" for key, value in extra_fields(record).items())
        if not fields:
            return text
        # An exception's traceback follows the first line; keep the fields on that line.
        first, newline, rest = text.partition("\n")
        return f"{first} {fields}{newline}{rest}"


class JsonFormatter(logging.Formatter):
    """Format one JSON object per record: time, level, logger, message, then extra fields.

    The fixed keys win over extra fields of the same name. Values JSON cannot hold are
    written as their ``repr``. ``exception`` holds a formatted traceback when there is one.
    """

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as one line of JSON."""
        entry: dict[str, object] = extra_fields(record)
        entry.update(
            time=dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            level=record.levelname,
            logger=record.name,
            message=record.getMessage(),
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=repr, ensure_ascii=False)
