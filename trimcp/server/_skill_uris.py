"""``skill://`` URIs of the Skills extension (SEP-2640): how they are built and checked.

A skill's file is the resource ``skill://<skill-path>/<file-path>`` (SEP-2640 > Resource
Mapping, https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2640); the first
segment sits in the authority and SHOULD be a valid reg-name (RFC 3986 section 3.2.2). A URI
from a client is refused with a reason (``InvalidParams``) before it is looked up: ``..``,
percent-encoded dots, backslashes, NUL, absolute forms and over-long URIs never name
anything (``trimcp.server._agent_skills``).
"""

from __future__ import annotations

import re
import string
import typing
import urllib.parse

from trimcp.errors import InvalidParams

if typing.TYPE_CHECKING:
    from collections.abc import Sequence


__all__ = ["check_uri", "shown", "uri_of"]

_SCHEME = "skill://"


_MAX_URI_LENGTH = 4096


# RFC 3986 section 3.3 pchar minus "%", and section 3.2.2 reg-name for the first segment,
# which sits in the authority (SEP-2640 > Resource Mapping: it SHOULD be a valid reg-name).
_PCHAR_SAFE = "-._~!$&'()*+,;=:@"


_REG_NAME_SAFE = "-._~!$&'()*+,;="


_URI_CHARS = frozenset(string.ascii_letters + string.digits + _PCHAR_SAFE + "/%")


_PERCENT_OK = re.compile(r"(?:[^%]|%[0-9A-Fa-f]{2})*")


def _quote(segment: str, *, first: bool) -> str:
    return urllib.parse.quote(segment, safe=_REG_NAME_SAFE if first else _PCHAR_SAFE)


def uri_of(parts: Sequence[str]) -> str:
    return _SCHEME + "/".join(_quote(part, first=i == 0) for i, part in enumerate(parts))


def shown(uri: str) -> str:
    return repr(uri if len(uri) <= 120 else uri[:117] + "...")


def _refused(uri: str, why: str) -> InvalidParams:
    return InvalidParams(f"{shown(uri)} refused: {why}")


def _check_segment(uri: str, segment: str, *, first: bool) -> None:
    if segment in {".", ".."}:
        raise _refused(uri, "a '.' or '..' segment; skill URIs name files below a skill only")
    if not _PERCENT_OK.fullmatch(segment):
        raise _refused(uri, "a '%' not followed by two hex digits (RFC 3986 section 2.1)")
    try:
        text = urllib.parse.unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise _refused(uri, "percent-encoded bytes that are not UTF-8") from None
    if text in {".", ".."}:
        raise _refused(uri, "a percent-encoded '.' or '..' segment (path traversal)")
    if "/" in text or "\\" in text:
        raise _refused(uri, "a percent-encoded '/' or '\\' (a separator inside a segment)")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise _refused(uri, "a percent-encoded control character such as NUL")
    canonical = _quote(text, first=first)
    if canonical != segment:
        raise _refused(
            uri, f"not in canonical form: write the segment {segment!r} as {canonical!r}"
        )


# Characters refused before the general check, each with its own reason.
_REFUSED_CHARS = {
    "\x00": "a NUL character",
    "\\": "a backslash; segments are separated by '/' only",
    "?": "a query, which skill URIs do not have",
    "#": "a fragment, which skill URIs do not have",
}


def check_uri(uri: object, what: str) -> str:
    """Return ``uri`` if it is a well-formed, canonical skill URI; say what is wrong if not.

    Passing says nothing about whether the URI is served: that is an exact lookup after.
    """
    if not isinstance(uri, str):
        raise InvalidParams(f"{what} must be a string, a skill:// URI; got {type(uri).__name__}")
    if len(uri) > _MAX_URI_LENGTH:
        raise _refused(uri, f"longer than {_MAX_URI_LENGTH} characters")
    if not uri.startswith(_SCHEME):
        raise _refused(uri, "not a skill:// URI; skill files are skill://<skill-path>/<file>")
    body = uri[len(_SCHEME) :]
    for char, why in _REFUSED_CHARS.items():
        if char in body:
            raise _refused(uri, why)
    bad = next((char for char in body if char not in _URI_CHARS), None)
    if bad is not None:
        raise _refused(uri, f"the character {bad!r}, which must be percent-encoded (RFC 3986)")
    segments = body.split("/")
    if not segments[0]:
        raise _refused(uri, "no skill path after skill:// (an absolute path or an empty name)")
    if "" in segments:
        raise _refused(uri, "an empty segment ('//' or a trailing '/'); directories have none")
    for i, segment in enumerate(segments):
        _check_segment(uri, segment, first=i == 0)
    return uri
