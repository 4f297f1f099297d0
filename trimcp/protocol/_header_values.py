"""How a value travels in an MCP 2026-07-28 request header: plain, or base64 in a sentinel.

A header value mirrored from a JSON-RPC body (``Mcp-Name``, ``Mcp-Param-{Name}``) is sent as
it is when it is printable ASCII without leading or trailing whitespace, and otherwise as
``=?base64?<base64 of the UTF-8>?=``
(https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#request-metadata).
The request checks (``_http_headers``) and the tool annotations (``_header_annotations``)
share these, and ``shown``, which words a value in their messages.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

__all__ = [
    "OWS",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "decode_header_value",
    "encode_header_value",
    "is_plain",
    "plain_value",
    "shown",
]

SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="
#: RFC 9110 §5.5: optional whitespace around a field value is SP and HTAB, and "a field
#: parsing implementation MUST exclude such whitespace prior to evaluating the field value".
OWS: Final = " \t"
_SHOWN_CHARS: Final = 80


def encode_header_value(value: str | int | bool) -> str:
    """Return the header form of a body value (client side).

    Booleans become ``true``/``false`` and integers their decimal digits. A string stays
    as it is when it is visible ASCII with inner spaces only; anything else (non-ASCII,
    control characters, leading or trailing space, or a value that itself looks like the
    sentinel) becomes ``=?base64?{base64 of its UTF-8}?=`` (2026-07-28, Streamable HTTP >
    Value Encoding).

    Raises:
        ValueError: the string holds a lone surrogate, which has no UTF-8 form.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if is_plain(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


def decode_header_value(raw: str) -> str:
    """Return the value a ``Mcp-Name`` or ``Mcp-Param-*`` header carries (server side).

    Surrounding spaces and tabs are dropped first (RFC 9110 §5.5). A value wrapped in
    ``=?base64?...?=`` is decoded; anything else is taken literally, including a value that
    only starts with the prefix or only ends with the suffix.

    Raises:
        ValueError: a control or non-ASCII character outside the sentinel, base64 that is not
            canonical RFC 4648 (bad padding, foreign characters), or bytes that are not UTF-8.
            The message says which and how to fix it.
    """
    value = plain_value(raw)
    if not _is_sentinel(value):
        return value
    payload = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(
            f"the base64 in {shown(value)} is invalid ({exc}); encode the UTF-8 bytes with "
            "the standard base64 alphabet and '=' padding"
        ) from exc
    if base64.b64encode(data).decode("ascii") != payload:
        # RFC 4648 §3.5 lets a decoder refuse non-zero pad bits; refusing them keeps one
        # header form per value, so nobody on the path can read it differently.
        raise ValueError(
            f"the base64 in {shown(value)} is not canonical (non-zero bits before the "
            "padding); encode the UTF-8 bytes with a standard base64 encoder"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the base64 in {shown(value)} decodes to bytes that are not UTF-8 ({exc.reason} "
            f"at byte {exc.start}); encode the value's UTF-8 bytes"
        ) from exc


def is_plain(value: str) -> bool:
    """Tell whether a string may travel unencoded: printable ASCII, no edge spaces."""
    return (
        value.isascii()
        and value.isprintable()
        and value == value.strip(" ")
        # Textual test, looser than _is_sentinel ("=?base64?=" counts): encoding more
        # than needed is harmless, decoding a literal is not.
        and not (value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX))
    )


def _is_sentinel(value: str) -> bool:
    return (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    )


def plain_value(raw: str) -> str:
    """Strip OWS from a header value and refuse characters a plain value may not hold.

    MCP's encoding rule sends control characters (tab included) and non-ASCII only inside
    the sentinel, so either in a plain value is an "invalid character" (Server Validation).
    """
    value = raw.strip(OWS)
    for position, char in enumerate(value):
        if not (" " <= char <= "~"):
            kind = "a control character" if char.isascii() else "a non-ASCII character"
            raise ValueError(
                f"{shown(value)} contains {kind} (U+{ord(char):04X}) at position {position}; "
                f"send such values as {SENTINEL_PREFIX}<base64 of the UTF-8>{SENTINEL_SUFFIX}"
            )
    return value


def shown(value: object) -> str:
    """Show a body or header value in a message: JSON spelling, cut to a readable length."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
