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

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Final, TypeAlias

from trimcp.errors import HeaderMismatch

from ._json import ABSENT

#: Header names in lower case, as the server's HTTP layer hands them over. Header names
#: are case-insensitive (2026-07-28, Streamable HTTP > Case Sensitivity; RFC 9110 §5.1).
MCP_METHOD: Final = "mcp-method"
MCP_NAME: Final = "mcp-name"
PARAM_PREFIX: Final = "mcp-param-"

#: A tool's mirrored parameters: the chain of ``properties`` keys that leads to each
#: annotated parameter (``("region",)``, or ``("target", "region")`` when nested) mapped to
#: the ``{Name}`` of its ``Mcp-Param-{Name}`` header. ``header_parameters`` builds it.
HeaderParams: TypeAlias = "Mapping[tuple[str, ...], str]"

_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
#: RFC 9110 §5.5: optional whitespace around a field value is SP and HTAB, and "a field
#: parsing implementation MUST exclude such whitespace prior to evaluating the field value".
_OWS: Final = " \t"
#: RFC 9110 §5.6.2 ``tchar``, the only characters of a field name (``x-mcp-header`` values).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
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
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
#: Keywords whose value is one subschema or a list of them (JSON Schema 2020-12 and the
#: draft-07 spellings). An annotation below any of them is not statically reachable.
_SUBSCHEMAS: Final = (
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contentSchema",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
)
#: Keywords whose value maps names to subschemas, other than ``properties``.
_SUBSCHEMA_MAPS: Final = (
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
)
#: Deeper than this, a schema is refused rather than walked: no tool needs it, and a
#: schema built in Python may contain a cycle.
_MAX_DEPTH: Final = 200
_SHOWN_CHARS: Final = 80

#: A body value as it goes into a header: None when nothing is mirrored.
_Mirrored: TypeAlias = "str | int | bool | None"


# --- value encoding --------------------------------------------------------------------------


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
    if _is_plain(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_SENTINEL_PREFIX}{encoded}{_SENTINEL_SUFFIX}"


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
    value = _plain_value(raw)
    if not _is_sentinel(value):
        return value
    payload = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(
            f"the base64 in {_shown(value)} is invalid ({exc}); encode the UTF-8 bytes with "
            "the standard base64 alphabet and '=' padding"
        ) from exc
    if base64.b64encode(data).decode("ascii") != payload:
        # RFC 4648 §3.5 lets a decoder refuse non-zero pad bits; refusing them keeps one
        # header form per value, so nobody on the path can read it differently.
        raise ValueError(
            f"the base64 in {_shown(value)} is not canonical (non-zero bits before the "
            "padding); encode the UTF-8 bytes with a standard base64 encoder"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the base64 in {_shown(value)} decodes to bytes that are not UTF-8 ({exc.reason} "
            f"at byte {exc.start}); encode the value's UTF-8 bytes"
        ) from exc


def _is_plain(value: str) -> bool:
    """Tell whether a string may travel unencoded: printable ASCII, no edge spaces."""
    return (
        value.isascii()
        and value.isprintable()
        and value == value.strip(" ")
        # Textual test, looser than _is_sentinel ("=?base64?=" counts): encoding more
        # than needed is harmless, decoding a literal is not.
        and not (value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX))
    )


def _is_sentinel(value: str) -> bool:
    return (
        len(value) >= len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
        and value.startswith(_SENTINEL_PREFIX)
        and value.endswith(_SENTINEL_SUFFIX)
    )


def _plain_value(raw: str) -> str:
    """Strip OWS from a header value and refuse characters a plain value may not hold.

    MCP's encoding rule sends control characters (tab included) and non-ASCII only inside
    the sentinel, so either in a plain value is an "invalid character" (Server Validation).
    """
    value = raw.strip(_OWS)
    for position, char in enumerate(value):
        if not (" " <= char <= "~"):
            kind = "a control character" if char.isascii() else "a non-ASCII character"
            raise ValueError(
                f"{_shown(value)} contains {kind} (U+{ord(char):04X}) at position {position}; "
                f"send such values as {_SENTINEL_PREFIX}<base64 of the UTF-8>{_SENTINEL_SUFFIX}"
            )
    return value


# --- tool definitions ------------------------------------------------------------------------


def header_parameters(input_schema: Mapping[str, object]) -> dict[tuple[str, ...], str]:
    """Return where each ``x-mcp-header`` parameter sits and its header's ``{Name}``.

    Keys are the chains of ``properties`` keys from the schema root: ``("region",)`` for a
    top-level parameter, longer for one nested in object parameters, which the spec allows
    (2026-07-28, Streamable HTTP > Custom Headers from Tool Parameters > Schema Extension,
    https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension).
    Names keep the server's spelling; compare them case-insensitively.

    Raises:
        ValueError: the annotations are invalid (``header_annotation_problems`` lists why).
            A client drops such a tool; a server should refuse to register it.
    """
    found, problems = _scan(input_schema)
    if problems:
        raise ValueError("invalid x-mcp-header annotations: " + "; ".join(problems))
    return found


def header_annotation_problems(input_schema: Mapping[str, object]) -> list[str]:
    """List what makes a tool's ``x-mcp-header`` annotations invalid (empty: none).

    The rules (2026-07-28, Tools > x-mcp-header,
    https://modelcontextprotocol.io/specification/2026-07-28/server/tools#x-mcp-header): the
    value is a non-empty string of RFC 9110 ``tchar``; values are unique ignoring case; the
    parameter's ``type`` is string, integer or boolean (a list of those, optionally with
    ``"null"``, is accepted: a null argument just sends no header); and the parameter is
    reached from the root through ``properties`` alone, never through ``items``, ``oneOf``,
    ``$defs``, ``$ref`` and the like. A client over Streamable HTTP MUST leave a tool with
    any problem out of ``tools/list``, and SHOULD log its name and these reasons.

    Never raises, whatever JSON it is given. Each problem names its place in the schema as a
    JSON Pointer-like path from ``inputSchema``.
    """
    return _scan(input_schema)[1]


def _scan(schema: object) -> tuple[dict[tuple[str, ...], str], list[str]]:
    found: dict[tuple[str, ...], str] = {}
    problems: list[str] = []
    names: dict[str, str] = {}  # lower-cased name -> where it was first seen
    for node, path, where in _schema_nodes(schema, problems):
        if "x-mcp-header" not in node:
            continue
        name = node["x-mcp-header"]
        found_problems = _annotation_problems(node, name, path, where)
        if not found_problems and isinstance(name, str) and path:
            first = names.setdefault(name.lower(), where)
            if first != where:
                found_problems.append(
                    f"{where}: x-mcp-header {_shown(name)} repeats the header of {first} "
                    "(header names ignore case); give each parameter its own name"
                )
            else:
                found[path] = name
        problems.extend(found_problems)
    return found, problems


#: A schema node met on the walk, the ``properties`` chain to it (None once the walk went
#: through any other keyword) and where it is, for messages.
_Node: TypeAlias = "tuple[Mapping[str, object], tuple[str, ...] | None, str]"


def _schema_nodes(schema: object, problems: list[str]) -> Iterator[_Node]:
    """Yield every subschema, depth first in document order; record cycles and depth."""
    stack: list[tuple[object, tuple[str, ...] | None, str, tuple[int, ...]]] = [
        (schema, (), "inputSchema", ())
    ]
    while stack:
        node, path, where, ancestors = stack.pop()
        if not isinstance(node, Mapping):
            continue  # true/false schemas, and junk in a keyword's place
        if id(node) in ancestors:
            problems.append(f"{where}: the schema contains itself; a schema must be a tree")
            continue
        if len(ancestors) >= _MAX_DEPTH:
            problems.append(f"{where}: the schema nests deeper than {_MAX_DEPTH} levels")
            continue
        yield node, path, where
        inner = (*ancestors, id(node))
        children = [
            (sub, sub_path, at, inner) for sub, sub_path, at in _children(node, path, where)
        ]
        stack.extend(reversed(children))


def _children(
    node: Mapping[str, object], path: tuple[str, ...] | None, where: str
) -> Iterator[tuple[object, tuple[str, ...] | None, str]]:
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            sub_path = None if path is None else (*path, str(key))
            yield sub, sub_path, f"{where}/properties/{_escape(key)}"
    for keyword in _SUBSCHEMA_MAPS:
        entries = node.get(keyword)
        if isinstance(entries, Mapping):
            for key, sub in entries.items():
                yield sub, None, f"{where}/{keyword}/{_escape(key)}"
    for keyword in _SUBSCHEMAS:
        sub = node.get(keyword)
        if isinstance(sub, list):
            for index, item in enumerate(sub):
                yield item, None, f"{where}/{keyword}/{index}"
        else:
            yield sub, None, f"{where}/{keyword}"


def _escape(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _annotation_problems(
    node: Mapping[str, object], name: object, path: tuple[str, ...] | None, where: str
) -> list[str]:
    if not path:
        place = (
            "on the schema root, not on a parameter"
            if path is not None
            else "not reachable from the root through 'properties' alone"
        )
        return [
            f"{where}: x-mcp-header {_shown(name)} is {place}; annotate only parameters "
            "reached through a chain of 'properties' (never items, oneOf, $defs, $ref, ...)"
        ]
    problems: list[str] = []
    if not isinstance(name, str):
        problems.append(f"{where}: x-mcp-header is {_shown(name)}, not a string")
    elif not name:
        problems.append(f"{where}: x-mcp-header is empty; give the header a name")
    elif not _TOKEN.fullmatch(name):
        bad = sorted({char for char in name if not _TOKEN.fullmatch(char)})
        listed = ", ".join(repr(char) for char in bad[:5]) + (", ..." if len(bad) > 5 else "")
        problems.append(
            f"{where}: x-mcp-header {_shown(name)} has characters a header name may not hold "
            f"({listed}); use letters, digits and !#$%&'*+-.^_`|~"
        )
    declared = node.get("type")
    kinds = [declared] if isinstance(declared, str) else declared
    if not isinstance(kinds, list) or not _primitive(kinds):
        declares = "no type" if declared is None else f"type {_shown(declared)}"
        problems.append(
            f"{where}: x-mcp-header {_shown(name)} is on a parameter that declares {declares}; "
            "only string, integer and boolean parameters can be mirrored into a header"
        )
    return problems


def _primitive(kinds: list[object]) -> bool:
    concrete = [kind for kind in kinds if kind != "null"]
    return bool(concrete) and all(
        isinstance(kind, str) and kind in _PRIMITIVES for kind in concrete
    )


# --- requests --------------------------------------------------------------------------------


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
    if not _is_plain(method):
        raise ValueError(f"method {_shown(method)} cannot be sent in the Mcp-Method header")
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
            f"Mcp-Method header is missing; send the request's method ({_shown(method)}) in it",
            header="Mcp-Method",
        )
    value = _valid_plain(raw, "Mcp-Method")
    if value != method:
        raise HeaderMismatch(
            f"Mcp-Method header is {_shown(value)} but the body's method is {_shown(method)}; "
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
            f"Mcp-Name header is {_shown(raw.strip(_OWS))} but the body has no string "
            f"params.{member}; put the {what} in params.{member}",
            header="Mcp-Name",
        )
    if raw is None:
        raise HeaderMismatch(
            f"Mcp-Name header is missing; {method} requires it: send params.{member} "
            f"({_shown(expected)}) in Mcp-Name",
            header="Mcp-Name",
        )
    value = _valid_decoded(raw, "Mcp-Name")
    if value != expected:
        raise HeaderMismatch(
            f"Mcp-Name header is {_shown(value)} but params.{member} is {_shown(expected)}; "
            f"send the {what} in Mcp-Name ({_SENTINEL_PREFIX}<base64>{_SENTINEL_SUFFIX} if it "
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
            state = f"{_shown(body)}, which no header can carry"
        raise HeaderMismatch(
            f"{header} header is sent but {where} is {state}; send the header only when the "
            "argument is a string, integer or boolean, and omit it when absent or null",
            header=header,
        )
    if raw is None:
        raise HeaderMismatch(
            f"{header} header is missing but {where} is {_shown(body)}; the tool's inputSchema "
            f"marks it x-mcp-header {_shown(name)} (call tools/list again if that is news)",
            header=header,
        )
    value = _valid_decoded(raw, header)
    if not _matches(value, mirrored):
        raise HeaderMismatch(
            f"{header} header is {_shown(value)} but {where} is {_shown(body)}; send "
            "the argument's value (true/false for booleans, decimal digits for integers)",
            header=header,
        )


def _valid_plain(raw: str, header: str) -> str:
    try:
        return _plain_value(raw)
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


def _shown(value: object) -> str:
    """Show a body or header value in a message: JSON spelling, cut to a readable length."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
