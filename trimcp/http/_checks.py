"""The checks every Streamable HTTP request passes before it reaches a session (pure).

MCP 2025-11-25, Transports > Streamable HTTP: what the client must send (``Accept``,
``Content-Type``, ``MCP-Session-Id``, ``MCP-Protocol-Version``), and the status code for each
way of getting it wrong. A refusal is an ``HttpRefusal``: the status, a
JSON-RPC error for the body (the spec allows one on 4xx), and a message that says what to
send instead. Nothing here does I/O, so Hypothesis can throw any header at it.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http
"""

from __future__ import annotations

import secrets
import typing

from trimcp.errors import HttpRefusal
from trimcp.protocol import SUPPORTED_VERSIONS

if typing.TYPE_CHECKING:
    from collections.abc import Iterable


__all__ = [
    "DEFAULT_PROTOCOL_VERSION",
    "Headers",
    "HttpRefusal",
    "check_accept_for_get",
    "check_accept_for_post",
    "check_content_type",
    "check_protocol_version",
    "check_session_id",
    "new_session_id",
]

#: What a request without ``MCP-Protocol-Version`` speaks when nothing else says
#: (MCP 2025-11-25, Transports > Streamable HTTP > Protocol Version Header).
DEFAULT_PROTOCOL_VERSION = "2025-03-26"
_MAX_SESSION_ID = 256


@typing.final
class Headers:
    """An ASGI header list read case-insensitively (names are lower-case in ASGI)."""

    __slots__ = ("_values",)

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        values: dict[bytes, list[bytes]] = {}
        for name, value in raw:
            values.setdefault(name.lower(), []).append(value)
        self._values = values

    def get(self, name: str) -> str | None:
        """Return the header's value (several are joined with ``,``), or None."""
        found = self._values.get(name.encode("latin-1"))
        if not found:
            return None
        return b",".join(found).decode("latin-1")

    def as_text(self) -> dict[str, str]:
        """Return every header as text, by lower-case name (repeats joined with ``,``)."""
        return {
            name.decode("latin-1"): b",".join(values).decode("latin-1")
            for name, values in self._values.items()
        }


def _media_types(value: str | None) -> set[str]:
    if not value:
        return set()
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",")}


def check_accept_for_post(accept: str | None) -> None:
    """A POST must accept both ``application/json`` and ``text/event-stream`` (406 if not).

    ``*/*`` and ``application/*`` + ``text/*`` count: they accept both.
    """
    types = _media_types(accept)
    json_ok = bool(types & {"application/json", "application/*", "*/*"})
    sse_ok = bool(types & {"text/event-stream", "text/*", "*/*"})
    if not (json_ok and sse_ok):
        raise HttpRefusal(
            406,
            "Not Acceptable: the Accept header must list both application/json and "
            f"text/event-stream (got {accept!r})",
        )


def check_accept_for_get(accept: str | None) -> None:
    """A GET (the server's SSE stream) must accept ``text/event-stream`` (406 if not)."""
    types = _media_types(accept)
    if not types & {"text/event-stream", "text/*", "*/*"}:
        raise HttpRefusal(
            406,
            f"Not Acceptable: a GET opens an SSE stream; send Accept: text/event-stream "
            f"(got {accept!r})",
        )


def check_content_type(content_type: str | None) -> None:
    """A POST body must be ``application/json`` (415 if not)."""
    if "application/json" not in _media_types(content_type):
        raise HttpRefusal(
            415,
            "Unsupported Media Type: send the JSON-RPC message with Content-Type: "
            f"application/json (got {content_type!r})",
        )


def check_protocol_version(header: str | None, negotiated: str | None) -> str:
    """Return the version a request speaks: its header, else the session's, else 2025-03-26.

    Any version we support is accepted, not only the negotiated one: clients (and the
    conformance suite) send an older one on some requests, and nothing breaks.

    Raises:
        HttpRefusal: 400, the header names a version we do not speak.
    """
    if header is None:
        return negotiated or DEFAULT_PROTOCOL_VERSION
    version = header.strip()
    if version not in SUPPORTED_VERSIONS:
        raise HttpRefusal(
            400,
            f"Bad Request: unsupported MCP-Protocol-Version {version[:64]!r}; this server "
            f"speaks {', '.join(SUPPORTED_VERSIONS)}",
        )
    return version


def check_session_id(value: str | None) -> str:
    """Return a well-formed ``MCP-Session-Id`` (visible ASCII, bounded length).

    Raises:
        HttpRefusal: 400, missing (only ``initialize`` may come without one), or malformed.
    """
    if value is None:
        raise HttpRefusal(
            400,
            "Bad Request: missing MCP-Session-Id header; send the id from the initialize "
            "response, or initialize a new session",
        )
    if not value or len(value) > _MAX_SESSION_ID or not all("!" <= c <= "~" for c in value):
        raise HttpRefusal(
            400, "Bad Request: malformed MCP-Session-Id (expected visible ASCII characters)"
        )
    return value


def new_session_id() -> str:
    """Return a new session id: 256 random bits, URL-safe base64 (visible ASCII)."""
    return secrets.token_urlsafe(32)
