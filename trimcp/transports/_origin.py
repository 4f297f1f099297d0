"""Host and Origin allowlists: the DNS-rebinding check shared by the HTTP-based transports.

Why: a web page the user merely visits can make the browser open connections to a server
listening on localhost. MCP 2025-11-25 (Transports, Streamable HTTP, Security Warning) says
servers MUST validate the ``Origin`` header and answer 403 when it is present and invalid,
and SHOULD bind to localhost only. Two attacks, two headers:

* a cross-origin page: the browser sends ``Origin: https://evil.example``. Checking Origin
  stops it.
* DNS rebinding: ``evil.example`` first resolves to the attacker, then to 127.0.0.1, so the
  page is same-origin with our server as far as the browser knows; the request carries
  ``Host: evil.example:port``. Checking Host stops it, whatever the Origin says.

Clients that are not browsers (every MCP client library) send no Origin header, which is
allowed, and a Host header naming the address they dialled.

Pattern syntax (both lists; matching is ASCII case-insensitive, IPv6 literals compare as
addresses, so ``[::1]`` and ``[0:0::1]`` are the same host):

* ``host`` matches that host without a port; ``host:8080`` that port only; ``host:*`` any
  port or none. ``host`` is a name, an IPv4 address or a bracketed IPv6 address.
* Origins only: ``scheme://host[:port|:*]`` also pins the scheme; without a scheme a pattern
  matches ``http`` and ``https`` origins. ``null`` matches the opaque origin browsers send
  from sandboxed frames and ``file:`` pages.
* ``*`` matches everything and so turns the check off.

The default for both lists is ``LOCALHOST``: localhost, 127.0.0.1 and [::1] on any port.
An empty list allows nothing.

Pure: no trio, no I/O, no exceptions from header values. A ``HeaderProblem`` carries the HTTP
status and a message naming the refused value and the setting that would allow it; the
transports (``_websocket.py``, ``_asgi_websocket.py``, the HTTP transport) send it as the
body of their refusal.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["LOCALHOST", "HeaderProblem", "OriginPolicy", "check_headers"]

#: The default allowlist of hosts and of origins: the loopback names, on any port.
LOCALHOST: Final = ("localhost:*", "127.0.0.1:*", "[::1]:*")

# RFC 3986 reg-name (unreserved / pct-encoded / sub-delims); also matches IPv4 addresses.
_REG_NAME = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=%]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_WEB_SCHEMES: Final = ("http", "https")
# Quote at most this much of a refused header value: a client may send anything.
_QUOTE_LIMIT = 200
#: Accepted (Host, Origin) pairs an ``OriginPolicy`` remembers (see ``OriginPolicy``).
_ACCEPTED_MEMO = 256


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderProblem:
    """Why a request was refused, ready to become an HTTP response.

    Attributes:
        status: 400 (missing, duplicated or malformed header), 403 (Origin not allowed) or
            421 Misdirected Request (Host not allowed, as the official Python SDK answers).
        header: the header at fault, e.g. ``"Origin"``.
        value: what the request sent (``None`` if the header was missing).
        message: one sentence for a person: the refused value and the setting that allows it.
    """

    status: int
    header: str
    value: str | None
    message: str


@final
@dataclass(frozen=True, slots=True)
class _Authority:
    """A parsed ``host[:port]``; ``port`` is ``None`` when absent."""

    host: str
    port: int | None


@final
@dataclass(frozen=True, slots=True)
class _Pattern:
    """One allowlist entry. ``host`` ``None`` matches any host (the ``*`` pattern)."""

    schemes: tuple[str, ...] | None
    host: str | None
    port: int | None
    any_port: bool

    def matches(self, scheme: str | None, authority: _Authority) -> bool:
        if self.host is None:
            return True
        if scheme is not None and self.schemes is not None and scheme not in self.schemes:
            return False
        if authority.host != self.host:
            return False
        return self.any_port or authority.port == self.port


_ANYTHING = _Pattern(schemes=None, host=None, port=None, any_port=True)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OriginPolicy:
    """Which ``Host`` and ``Origin`` header values a server accepts (module docstring).

    Attributes:
        allowed_hosts: patterns for the Host header; default ``LOCALHOST``.
        allowed_origins: patterns for the Origin header; default ``LOCALHOST`` (http and
            https). A request without an Origin header is always allowed.
        hosts_setting: the name of the setting that holds ``allowed_hosts``, for messages
            (the HTTP transport passes its configuration key).
        origins_setting: likewise for ``allowed_origins``.

    Raises:
        ValueError: a pattern is malformed (the message quotes it).
    """

    allowed_hosts: tuple[str, ...] = LOCALHOST
    allowed_origins: tuple[str, ...] = LOCALHOST
    hosts_setting: str = "allowed_hosts"
    origins_setting: str = "allowed_origins"
    # (Host, Origin) raw values already accepted: every request of a client repeats them,
    # and matching patterns costs more than the rest of the checks. Bounded by
    # _ACCEPTED_MEMO, since a client chooses what it sends.
    _accepted: set[tuple[bytes, bytes | None]] = field(
        default_factory=set, init=False, repr=False, compare=False
    )
    _hosts: tuple[_Pattern, ...] = field(init=False, repr=False, compare=False)
    _origins: tuple[_Pattern, ...] = field(init=False, repr=False, compare=False)
    _allows_null: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts = tuple(_parse_pattern(text, origin=False) for text in self.allowed_hosts)
        origins = tuple(
            _parse_pattern(text, origin=True) for text in self.allowed_origins if text != "null"
        )
        # Frozen dataclass: the parsed forms are derived once, here.
        object.__setattr__(self, "_hosts", hosts)
        object.__setattr__(self, "_origins", origins)
        object.__setattr__(
            self, "_allows_null", "null" in self.allowed_origins or _ANYTHING in origins
        )

    def check_host(self, host_header: str | None) -> HeaderProblem | None:
        """Return why ``host_header`` is refused, or ``None`` if it is allowed.

        A missing or malformed Host header is a 400 (RFC 9112 section 3.2 requires one); a
        well-formed one that no pattern matches is a 421.
        """
        if host_header is None:
            return HeaderProblem(
                status=400,
                header="Host",
                value=None,
                message="the request has no Host header (HTTP/1.1 requires one)",
            )
        value = host_header.strip(" \t")
        authority = _parse_authority(value)
        if authority is None:
            return HeaderProblem(
                status=400,
                header="Host",
                value=value,
                message=f"malformed Host header {_quote(value)}",
            )
        if any(pattern.matches(None, authority) for pattern in self._hosts):
            return None
        return HeaderProblem(
            status=421,
            header="Host",
            value=value,
            message=(
                f"Host {_quote(value)} is not allowed (DNS rebinding protection); "
                f"add it to {self.hosts_setting} to accept it "
                f"(now {_listing(self.allowed_hosts)})"
            ),
        )

    def check_origin(self, origin_header: str | None) -> HeaderProblem | None:
        """Return why ``origin_header`` is refused (always a 403), or ``None`` if allowed.

        A missing Origin header is allowed: only browsers send one.
        """
        if origin_header is None:
            return None
        value = origin_header.strip(" \t")
        if value == "null":
            allowed = self._allows_null
        else:
            parsed = _parse_origin(value)
            if parsed is None:
                return HeaderProblem(
                    status=403,
                    header="Origin",
                    value=value,
                    message=f"malformed Origin header {_quote(value)}",
                )
            scheme, authority = parsed
            allowed = any(pattern.matches(scheme, authority) for pattern in self._origins)
        if allowed:
            return None
        return HeaderProblem(
            status=403,
            header="Origin",
            value=value,
            message=(
                f"Origin {_quote(value)} is not allowed; add it to {self.origins_setting} "
                f"to accept it (now {_listing(self.allowed_origins)})"
            ),
        )


def check_headers(
    policy: OriginPolicy, headers: Iterable[tuple[bytes, bytes]]
) -> HeaderProblem | None:
    """Check a request's raw headers: Host first, then Origin.

    Names match case-insensitively; values are decoded as Latin-1, as HTTP allows. A header
    sent twice is a 400: which copy a proxy would honour is anyone's guess.
    """
    raw_host: list[bytes] = []
    raw_origin: list[bytes] = []
    for name, value in headers:
        # ASGI servers lowercase header names; the lower() is for any other caller.
        lowered = name if name in (b"host", b"origin") else name.lower()
        if lowered == b"host":
            raw_host.append(value)
        elif lowered == b"origin":
            raw_origin.append(value)
    if len(raw_host) == 1 and len(raw_origin) <= 1:
        key = (raw_host[0], raw_origin[0] if raw_origin else None)
        if key in policy._accepted:
            return None
    else:
        key = None
    found = {
        "host": [value.decode("latin-1") for value in raw_host],
        "origin": [value.decode("latin-1") for value in raw_origin],
    }
    for header, values in found.items():
        if len(values) > 1:
            title = header.title()
            return HeaderProblem(
                status=400,
                header=title,
                value=values[0],
                message=f"the request has {len(values)} {title} headers; send exactly one",
            )
    host = found["host"][0] if found["host"] else None
    origin = found["origin"][0] if found["origin"] else None
    problem = policy.check_host(host) or policy.check_origin(origin)
    if problem is None and key is not None and len(policy._accepted) < _ACCEPTED_MEMO:
        policy._accepted.add(key)
    return problem


def _quote(value: str) -> str:
    if len(value) > _QUOTE_LIMIT:
        return repr(value[:_QUOTE_LIMIT]) + "..."
    return repr(value)


def _listing(patterns: tuple[str, ...]) -> str:
    return ", ".join(patterns) if patterns else "empty: nothing is allowed"


def _parse_port(text: str) -> int | None:
    """Return the port in ``text`` (ASCII digits, at most 65535), or -1 if malformed."""
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 5 or int(text) > 65535:
        return -1
    return int(text)


def _split_host(text: str) -> tuple[str, str] | None:
    """Split ``text`` into a normalized host and what follows it, or ``None`` if malformed."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        try:
            address = ipaddress.IPv6Address(text[1:end])
        except ValueError:
            return None
        return f"[{address.compressed}]", text[end + 1 :]
    host, colon, port = text.partition(":")
    if not _REG_NAME.fullmatch(host):
        return None
    return host.lower(), colon + port


def _parse_authority(text: str) -> _Authority | None:
    split = _split_host(text)
    if split is None:
        return None
    host, rest = split
    if not rest:
        return _Authority(host, None)
    if not rest.startswith(":"):
        return None
    port = _parse_port(rest[1:])
    if port == -1:
        return None
    return _Authority(host, port)


def _parse_origin(text: str) -> tuple[str, _Authority] | None:
    scheme, separator, rest = text.partition("://")
    if not separator or not _SCHEME.fullmatch(scheme):
        return None
    authority = _parse_authority(rest)
    if authority is None:
        return None
    return scheme.lower(), authority


def _parse_pattern(text: str, *, origin: bool) -> _Pattern:
    if text == "*":
        return _ANYTHING
    schemes: tuple[str, ...] | None = _WEB_SCHEMES if origin else None
    rest = text
    if origin and "://" in text:
        scheme, _, rest = text.partition("://")
        if not _SCHEME.fullmatch(scheme):
            raise ValueError(f"malformed origin pattern {text!r}: bad scheme")
        schemes = (scheme.lower(),)
    any_port = rest.endswith(":*")
    authority = _parse_authority(rest.removesuffix(":*") if any_port else rest)
    if authority is None or (any_port and authority.port is not None):
        kind = "origin" if origin else "host"
        raise ValueError(
            f"malformed {kind} pattern {text!r}: expected host, host:port or host:* "
            "(IPv6 in brackets)" + (", optionally after scheme://" if origin else "")
        )
    return _Pattern(schemes=schemes, host=authority.host, port=authority.port, any_port=any_port)
