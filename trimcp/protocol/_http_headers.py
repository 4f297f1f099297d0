"""The request headers that mirror a Streamable HTTP POST's JSON-RPC body (MCP 2026-07-28).

MCP 2026-07-28 copies parts of every POST body into headers so that load balancers,
gateways and WAFs can route on them without parsing JSON: ``Mcp-Method``, ``Mcp-Name``
and one ``Mcp-Param-{Name}`` per tool parameter annotated ``x-mcp-header``
(https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#request-metadata).
A server that reads the body must then refuse any disagreement, or an intermediary and the
server could act on two different requests.

Pure functions, both sides: a client builds the headers with ``request_headers`` and checks
a tool's annotations with ``header_annotation_problems``; a server checks what arrived with
``check_request_headers``. ``MCP-Protocol-Version`` against ``_meta`` is checked by the
version negotiation, not here. The HTTP transport (``trimcp.http``) does the I/O and turns
``HeaderMismatch`` into 400 with JSON-RPC error -32020.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Final, TypeAlias

from trimcp.errors import HeaderMismatch

from ._header_values import (
    OWS,
    SENTINEL_PREFIX,
    SENTINEL_SUFFIX,
    decode_header_value,
    encode_header_value,
    is_plain,
    plain_value,
    shown,
)
from ._json import ABSENT

if TYPE_CHECKING:
    from ._header_annotations import HeaderParams

__all__ = ["MCP_METHOD", "MCP_NAME", "PARAM_PREFIX", "check_request_headers", "request_headers"]

#: Header names in lower case, as the server's HTTP layer hands them over. Header names
#: are case-insensitive (2026-07-28, Streamable HTTP > Case Sensitivity; RFC 9110 §5.1).
MCP_METHOD: Final = "mcp-method"
MCP_NAME: Final = "mcp-name"
PARAM_PREFIX: Final = "mcp-param-"
#: What "compared numerically" accepts in a header for an integer argument: a JSON-style
#: decimal number, so ``42``, ``42.0`` and ``4.2e1`` all equal the integer 42.
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: Which ``params`` member ``Mcp-Name`` mirrors, per method (Standard Request Headers).
_NAME_SOURCES: Final[Mapping[str, tuple[str, str]]] = {
    "tools/call": ("name", "tool's name"),
    "prompts/get": ("name", "prompt's name"),
    "resources/read": ("uri", "resource's URI"),
    # The Tasks extension (SEP-2663): a task's id, so a balancer can route to its holder.
    "tasks/get": ("taskId", "task's id"),
    "tasks/update": ("taskId", "task's id"),
    "tasks/cancel": ("taskId", "task's id"),
}

#: A body value as it goes into a header: None when nothing is mirrored.
_Mirrored: TypeAlias = "str | int | bool | None"


def request_headers(
    method: str, params: Mapping[str, object] | None, header_params: HeaderParams | None = None
) -> dict[str, str]:
    """Return the ``Mcp-*`` headers a client sends with this request.

    ``Mcp-Method`` always; ``Mcp-Name`` on ``tools/call`` and ``prompts/get``
    (``params.name``) and ``resources/read`` (``params.uri``); on ``tools/call``, one
    ``Mcp-Param-{Name}`` per entry of ``header_params`` (from ``header_parameters`` of the
    tool's ``inputSchema``) whose argument is present, not null, and a string, integer or
    boolean (2026-07-28, Streamable HTTP > Client Behavior). An integral float counts as
    the integer. Names are spelt ``Mcp-Method``, ``Mcp-Param-Region``: case does not matter
    on the wire, but these read well in logs.

    A body the server will refuse anyway (a missing ``params.name``, an object where the
    schema wants a string) gets no header for that part, so the server answers with the
    body's real problem rather than a header mismatch.

    Raises:
        ValueError: ``method`` is not printable ASCII, so no header can carry it; or a
            mirrored string holds a lone surrogate (never the case for decoded JSON).
    """
    if not is_plain(method):
        raise ValueError(f"method {shown(method)} cannot be sent in the Mcp-Method header")
    headers = {"Mcp-Method": method}
    source = _NAME_SOURCES.get(method)
    if source is not None and params is not None:
        name = params.get(source[0])
        if isinstance(name, str):
            headers["Mcp-Name"] = encode_header_value(name)
    if header_params and method == "tools/call" and params is not None:
        arguments = params.get("arguments")
        for path, name in header_params.items():
            value = _mirrored(_lookup(arguments, path))
            if value is not None:
                headers[f"Mcp-Param-{name}"] = encode_header_value(value)
    return headers


def check_request_headers(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, object] | None,
    header_params: HeaderParams | None = None,
) -> None:
    """Check that a POST's ``Mcp-*`` headers mirror its body (server side).

    ``headers`` are the request's headers; names are matched ignoring case. Values lose
    surrounding whitespace first (RFC 9110 §5.5); ``Mcp-Name`` and ``Mcp-Param-*`` are
    base64-decoded when in sentinel form. Strings compare exactly, booleans as
    ``true``/``false``, integers numerically (``42.0`` equals 42). ``header_params`` are the
    called tool's (``header_parameters``); ``Mcp-Param-*`` headers outside them are not
    ours to judge and pass, as the spec has intermediaries forward them.

    An ``Mcp-Param-*`` header sent for an absent or null argument is refused: an
    intermediary may have acted on a value the server will not see (Server Validation).
    When the body itself lacks what a header mirrors (no ``params.name``, an object
    argument) and the header is absent too, nothing is refused here: the body's own
    validation reports the real problem.

    Raises:
        HeaderMismatch: the first disagreement, missing header or invalid character;
            ``header`` names the header, the message what was expected and how to fix it.
            Rules: 2026-07-28, Streamable HTTP > Server Validation,
            https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation
    """
    lowered = _lowercase(headers)
    _check_method(lowered, method)
    source = _NAME_SOURCES.get(method)
    if source is not None:
        _check_name(lowered, method, params, source)
    if header_params and method == "tools/call":
        arguments = None if params is None else params.get("arguments")
        for path, name in header_params.items():
            _check_param(lowered, arguments, path, name)


def _lowercase(headers: Mapping[str, str]) -> dict[str, str]:
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        if key.startswith("mcp-") and lowered.get(key, value) != value:
            raise HeaderMismatch(
                f"{name} header is sent twice with different values; send it once",
                header=name,
            )
        lowered[key] = value
    return lowered


def _check_method(headers: Mapping[str, str], method: str) -> None:
    raw = headers.get(MCP_METHOD)
    if raw is None:
        raise HeaderMismatch(
            f"Mcp-Method header is missing; send the request's method ({shown(method)}) in it",
            header="Mcp-Method",
        )
    value = _valid_plain(raw, "Mcp-Method")
    if value != method:
        raise HeaderMismatch(
            f"Mcp-Method header is {shown(value)} but the body's method is {shown(method)}; "
            "send the body's method exactly (values are case-sensitive)",
            header="Mcp-Method",
        )


def _check_name(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, object] | None,
    source: tuple[str, str],
) -> None:
    member, what = source
    expected = None if params is None else params.get(member)
    raw = headers.get(MCP_NAME)
    if not isinstance(expected, str):
        if raw is None:
            return
        raise HeaderMismatch(
            f"Mcp-Name header is {shown(raw.strip(OWS))} but the body has no string "
            f"params.{member}; put the {what} in params.{member}",
            header="Mcp-Name",
        )
    if raw is None:
        raise HeaderMismatch(
            f"Mcp-Name header is missing; {method} requires it: send params.{member} "
            f"({shown(expected)}) in Mcp-Name",
            header="Mcp-Name",
        )
    value = _valid_decoded(raw, "Mcp-Name")
    if value != expected:
        raise HeaderMismatch(
            f"Mcp-Name header is {shown(value)} but params.{member} is {shown(expected)}; "
            f"send the {what} in Mcp-Name ({SENTINEL_PREFIX}<base64>{SENTINEL_SUFFIX} if it "
            "is not plain ASCII)",
            header="Mcp-Name",
        )


def _check_param(
    headers: Mapping[str, str], arguments: object, path: tuple[str, ...], name: str
) -> None:
    header = f"Mcp-Param-{name}"
    raw = headers.get(PARAM_PREFIX + name.lower())
    body = _lookup(arguments, path)
    where = "arguments." + ".".join(path)
    mirrored = _mirrored(body)
    if mirrored is None:
        if raw is None:
            return
        if body is ABSENT or body is None:
            state = "absent" if body is ABSENT else "null"
        else:
            state = f"{shown(body)}, which no header can carry"
        raise HeaderMismatch(
            f"{header} header is sent but {where} is {state}; send the header only when the "
            "argument is a string, integer or boolean, and omit it when absent or null",
            header=header,
        )
    if raw is None:
        raise HeaderMismatch(
            f"{header} header is missing but {where} is {shown(body)}; the tool's inputSchema "
            f"marks it x-mcp-header {shown(name)} (call tools/list again if that is news)",
            header=header,
        )
    value = _valid_decoded(raw, header)
    if not _matches(value, mirrored):
        raise HeaderMismatch(
            f"{header} header is {shown(value)} but {where} is {shown(body)}; send "
            "the argument's value (true/false for booleans, decimal digits for integers)",
            header=header,
        )


def _valid_plain(raw: str, header: str) -> str:
    try:
        return plain_value(raw)
    except ValueError as exc:
        raise HeaderMismatch(f"{header} header is invalid: {exc}", header=header) from exc


def _valid_decoded(raw: str, header: str) -> str:
    try:
        return decode_header_value(raw)
    except ValueError as exc:
        raise HeaderMismatch(f"{header} header is invalid: {exc}", header=header) from exc


def _lookup(arguments: object, path: tuple[str, ...]) -> object:
    """Return the instance value at a ``properties`` chain, or ABSENT if there is none."""
    value = arguments
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return ABSENT
        value = value[key]
    return value


def _mirrored(value: object) -> _Mirrored:
    """Return what a header carries for a body value: None when nothing is sent."""
    if isinstance(value, str | int):  # bool is an int
        return value
    if isinstance(value, float) and value.is_integer():
        # JSON Schema counts 42.0 as an integer; the header says 42.
        return int(value)
    return None


def _matches(value: str, mirrored: str | int | bool) -> bool:
    if isinstance(mirrored, bool):
        return value == ("true" if mirrored else "false")
    if isinstance(mirrored, int):
        if not _NUMBER.fullmatch(value):
            return False
        try:
            return Decimal(value) == mirrored
        except ArithmeticError:  # an exponent beyond what Decimal can hold
            return False
    return value == mirrored
