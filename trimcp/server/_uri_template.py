"""RFC 6570 URI templates: expansion (levels 1-4) and matching a URI back to variables.

MCP 2025-11-25 (Resources > Resource Templates) advertises ``uriTemplate`` values in RFC
6570 syntax; ``resources/read`` then names a concrete URI, and the server must find the
template it came from and the variable values. ``UriTemplate.expand`` follows RFC 6570
Appendix A exactly; ``UriTemplate.match`` inverts it where the syntax allows.

Limits of matching (the RFC itself says templates are not a pattern language, section 1.4):

* Non-exploded variables come back as strings. A list expanded without ``*`` comes back as
  its comma-joined text (``{list}`` -> ``"red,green,blue"``).
* In unnamed expressions (``{x,y}``, ``{+x,y}``, ``{#x,y}``, ``{.x,y}``, ``{/x,y}``),
  variables bind left to right: a missing earlier variable cannot be told from a missing
  later one (``{x,y}`` matching ``768`` gives ``x``). Where values may hold the separator
  unencoded (``,`` in ``+``/``#`` expansions, ``.`` in label expansions), only the last
  variable may contain it.
* An exploded variable in an unnamed expression comes back as a list of strings, split on
  the separator; an exploded associative array comes back as ``"name=value"`` items.
  In named expressions (``;``, ``?``, ``&``) an exploded variable comes back as a list when
  every key is its own name, else as a dict.
* ``+`` and ``#`` pass ``%XX`` triplets through unencoded, so a value holding ``%41`` comes
  back decoded (``A``).
* A prefix (``{var:3}``) yields only the prefix.
* Adjacent expressions with nothing between them (``{x}{y}``) are split greedily.
* An empty value and an undefined one expand alike where the operator has no prefix
  character (``{x}``); matching reports the empty string.
* Literal text must match exactly (no case folding, no percent-encoding normalisation,
  RFC 3986 section 6.2.2), and named expressions accept no members beyond the template's.
"""

from __future__ import annotations

import re
import typing
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trimcp.errors import TemplateError

__all__ = ["MatchValue", "TemplateValue", "UriTemplate", "VarSpec"]

TemplateValue: typing.TypeAlias = (
    "str | int | float | Sequence[str] | Mapping[str, str] | Sequence[tuple[str, str]] | None"
)
MatchValue: typing.TypeAlias = "str | list[str] | dict[str, str]"


# RFC 3986 section 2.2 / 2.3.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_HEX = frozenset("0123456789ABCDEFabcdef")
_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*")
# RFC 6570 section 2.4.1: max-length = %x31-39 0*3DIGIT (1..9999).
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")


@typing.final
@dataclass(frozen=True, slots=True)
class _Operator:
    """One row of the table in RFC 6570 Appendix A."""

    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


_OPERATORS = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
    "#": _Operator("#", ",", False, "", True),
}
# RFC 6570 section 2.2: reserved for future extensions.
_FUTURE_OPERATORS = frozenset("=,!@|")


@typing.final
@dataclass(frozen=True, slots=True)
class VarSpec:
    """A variable in an expression: its name, ``:n`` prefix length and ``*`` explode flag."""

    name: str
    prefix: int | None = None
    explode: bool = False


@typing.final
@dataclass(frozen=True, slots=True)
class _Expression:
    operator: str
    variables: tuple[VarSpec, ...]


def _is_hex_pair(text: str) -> bool:
    return len(text) == 2 and set(text) <= _HEX


def _encode(text: str, *, allow_reserved: bool) -> str:
    """Percent-encode ``text`` as UTF-8, keeping U (or U+R) characters (RFC 6570 3.2.1)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _UNRESERVED or (allow_reserved and char in _RESERVED):
            out.append(char)
        elif allow_reserved and char == "%" and _is_hex_pair(text[i + 1 : i + 3]):
            out.append(text[i : i + 3])
            i += 2
        else:
            try:
                data = char.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise TemplateError(f"cannot encode {char!r}: not valid Unicode text") from exc
            out.extend(f"%{byte:02X}" for byte in data)
        i += 1
    return "".join(out)


def _parse_expression(body: str, template: str) -> _Expression:
    operator = body[:1] if body[:1] in _OPERATORS or body[:1] in _FUTURE_OPERATORS else ""
    if operator in _FUTURE_OPERATORS:
        raise TemplateError(f"{template!r}: operator {operator!r} is reserved (RFC 6570 2.2)")
    specs = []
    for raw in body[len(operator) :].split(","):
        name, explode, prefix = raw, False, None
        if raw.endswith("*"):
            name, explode = raw[:-1], True
        elif ":" in raw:
            name, _, length = raw.partition(":")
            if not _PREFIX.fullmatch(length):
                raise TemplateError(f"{template!r}: bad prefix length in {raw!r}")
            prefix = int(length)
        if not _VARNAME.fullmatch(name):
            raise TemplateError(f"{template!r}: bad variable name {name!r}")
        specs.append(VarSpec(name, prefix, explode))
    return _Expression(operator, tuple(specs))


def _parse(template: str) -> tuple[str | _Expression, ...]:
    parts: list[str | _Expression] = []
    pos = 0
    for match in re.finditer(r"\{([^{}]*)\}", template):
        literal = template[pos : match.start()]
        if "{" in literal or "}" in literal:
            raise TemplateError(f"{template!r}: unbalanced brace near offset {pos}")
        if literal:
            parts.append(literal)
        parts.append(_parse_expression(match.group(1), template))
        pos = match.end()
    rest = template[pos:]
    if "{" in rest or "}" in rest:
        raise TemplateError(f"{template!r}: unbalanced brace near offset {pos}")
    if rest:
        parts.append(rest)
    return tuple(parts)


# --- expansion (RFC 6570 Appendix A) --------------------------------------------------------


def _pairs(value: object) -> list[tuple[str, str]] | None:
    """Return an associative array's defined (name, value) pairs, or None if not one."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, Sequence) and value and all(isinstance(i, tuple) for i in value):
        items = list(value)
    else:
        return None
    return [(str(k), str(v)) for k, v in items if v is not None]


def _expand_var(op: _Operator, spec: VarSpec, value: object) -> str | None:
    """Expand one variable; None when it is undefined (RFC 6570 section 2.3)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TemplateError(f"variable {spec.name!r}: booleans have no URI form")
    if isinstance(value, str | int | float):
        return _expand_string(op, spec, str(value))
    if spec.prefix is not None:  # RFC 6570 2.4.1: not applicable to composite values
        raise TemplateError(f"variable {spec.name!r}: a prefix needs a string value")
    pairs = _pairs(value)
    if pairs is not None:
        return _expand_pairs(op, spec, pairs) if pairs else None
    if not isinstance(value, Sequence):
        raise TemplateError(f"variable {spec.name!r}: unsupported value {value!r}")
    items = [str(item) for item in value if item is not None]
    return _expand_list(op, spec, items) if items else None


def _expand_string(op: _Operator, spec: VarSpec, value: str) -> str:
    if spec.prefix is not None:
        value = value[: spec.prefix]
    encoded = _encode(value, allow_reserved=op.allow_reserved)
    if not op.named:
        return encoded
    return spec.name + (f"={encoded}" if value else op.ifemp)


def _expand_list(op: _Operator, spec: VarSpec, items: list[str]) -> str:
    encoded = [_encode(item, allow_reserved=op.allow_reserved) for item in items]
    if not spec.explode:
        joined = ",".join(encoded)
        return f"{spec.name}={joined}" if op.named else joined
    if not op.named:
        return op.sep.join(encoded)
    return op.sep.join(
        spec.name + (f"={text}" if item else op.ifemp)
        for item, text in zip(items, encoded, strict=True)
    )


def _expand_pairs(op: _Operator, spec: VarSpec, pairs: list[tuple[str, str]]) -> str:
    def enc(text: str) -> str:
        return _encode(text, allow_reserved=op.allow_reserved)

    if not spec.explode:
        joined = ",".join(f"{enc(k)},{enc(v)}" for k, v in pairs)
        return f"{spec.name}={joined}" if op.named else joined
    if not op.named:
        return op.sep.join(f"{enc(k)}={enc(v)}" for k, v in pairs)
    return op.sep.join(enc(k) + (f"={enc(v)}" if v else op.ifemp) for k, v in pairs)


# --- matching --------------------------------------------------------------------------------

_PCT = "%[0-9A-Fa-f]{2}"


class _NoMatch(Exception):
    """Internal: the regex matched but the variables are inconsistent."""


def _chars(chars: frozenset[str], *, at_least_one: bool = False) -> str:
    klass = "[" + "".join(re.escape(char) for char in sorted(chars)) + "]"
    return f"(?:{klass}|{_PCT}){'+' if at_least_one else '*'}"


def _value_chars(op: _Operator) -> frozenset[str]:
    # "," joins the members of a non-exploded list (RFC 6570 3.2.1) and is reserved, so an
    # operator without U+R never produces it inside a value.
    return _UNRESERVED | {","} | (_RESERVED if op.allow_reserved else frozenset())


def _unnamed_pattern(index: int, expr: _Expression) -> str:
    op = _OPERATORS[expr.operator]
    base = _value_chars(op)
    sep = re.escape(op.sep)
    groups = []
    for k, spec in enumerate(expr.variables):
        last = k == len(expr.variables) - 1
        if spec.explode:
            item = _chars((base | {"="}) - {op.sep})
            body = f"{item}(?:{sep}{item})*?"
        else:
            body = _chars(base if last else base - {op.sep})
        groups.append(f"(?P<e{index}_{k}>{body})")
    nested = ""
    for group in reversed(groups[1:]):
        nested = f"(?:{sep}{group}{nested})?"
    return f"(?:{re.escape(op.first)}{groups[0]}{nested})?"


def _named_pattern(index: int, expr: _Expression) -> str:
    op = _OPERATORS[expr.operator]
    value = _chars(_value_chars(op))
    pieces = [re.escape(spec.name) for spec in expr.variables if not spec.explode]
    if any(spec.explode for spec in expr.variables):
        pieces.append(_chars(_UNRESERVED, at_least_one=True))
    piece = f"(?:{'|'.join(pieces)})(?:={value})?"
    sep = re.escape(op.sep)
    return f"(?P<e{index}>{re.escape(op.first)}{piece}(?:{sep}{piece})*)?"


def _decode(text: str) -> str:
    return urllib.parse.unquote(text, errors="strict")


def _read_unnamed(
    index: int, expr: _Expression, match: re.Match[str]
) -> list[tuple[VarSpec, MatchValue]]:
    op = _OPERATORS[expr.operator]
    found: list[tuple[VarSpec, MatchValue]] = []
    for k, spec in enumerate(expr.variables):
        text = match.group(f"e{index}_{k}")
        if text is None:
            continue
        if spec.explode:
            found.append((spec, [_decode(item) for item in text.split(op.sep)]))
        else:
            found.append((spec, _decode(text)))
    return found


def _read_named(
    index: int, expr: _Expression, match: re.Match[str]
) -> list[tuple[VarSpec, MatchValue]]:
    text = match.group(f"e{index}")
    if text is None:
        return []
    op = _OPERATORS[expr.operator]
    plain = {spec.name: spec for spec in expr.variables if not spec.explode}
    exploded = [spec for spec in expr.variables if spec.explode]
    values: dict[str, str] = {}
    pairs: dict[str, list[tuple[str, str]]] = {spec.name: [] for spec in exploded}
    for piece in text[len(op.first) :].split(op.sep):
        key, _, raw = piece.partition("=")
        if key in plain:
            if key in values:
                raise _NoMatch
            values[key] = _decode(raw)
            continue
        owner = next((spec for spec in exploded if spec.name == key), exploded[-1])
        pairs[owner.name].append((_decode(key), _decode(raw)))
    found: list[tuple[VarSpec, MatchValue]] = [(plain[k], v) for k, v in values.items()]
    for spec in exploded:
        items = pairs[spec.name]
        if items and all(key == spec.name for key, _ in items):
            found.append((spec, [item for _, item in items]))
        elif items:
            found.append((spec, dict(items)))
    return found


def _merge(found: list[tuple[VarSpec, MatchValue]]) -> dict[str, MatchValue]:
    """Combine repeated variables: full values must agree, prefixes must be prefixes."""
    result: dict[str, MatchValue] = {}
    for spec, value in found:
        if spec.prefix is None and result.setdefault(spec.name, value) != value:
            raise _NoMatch
    for spec, value in found:
        if spec.prefix is None:
            continue
        assert isinstance(value, str)
        if len(value) > spec.prefix:
            raise _NoMatch
        full = result.setdefault(spec.name, value)
        if not (isinstance(full, str) and full.startswith(value)):
            raise _NoMatch
        if len(full) > len(value) and len(value) < spec.prefix:
            raise _NoMatch  # the prefix was cut short, so it must be the whole value
    return result


@typing.final
class UriTemplate:
    """A parsed RFC 6570 template (levels 1-4).

    ``str(template)`` is the template text. Parsing checks the syntax of section 2:
    balanced braces, variable names, ``:n`` lengths (1-9999), no reserved operators.

    Raises:
        TemplateError: the template is malformed.
    """

    __slots__ = ("_parts", "_regex", "template")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = _parse(template)
        self._regex: re.Pattern[str] | None = None

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    @property
    def variable_names(self) -> tuple[str, ...]:
        """The variable names in order of first appearance."""
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, _Expression):
                names.update(dict.fromkeys(spec.name for spec in part.variables))
        return tuple(names)

    @property
    def is_template(self) -> bool:
        """Whether the template has any expression (else it is a plain URI)."""
        return any(isinstance(part, _Expression) for part in self._parts)

    def expand(self, variables: Mapping[str, TemplateValue]) -> str:
        """Expand the template; missing or ``None`` variables are undefined (RFC 6570 2.3).

        Strings, numbers, sequences of strings (lists) and mappings or sequences of
        ``(name, value)`` pairs (associative arrays) are accepted.

        Raises:
            TemplateError: a value cannot be expanded (a prefix on a list, a boolean, a
                lone surrogate, ...).
        """
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(_encode(part, allow_reserved=True))  # RFC 6570 3.1
                continue
            op = _OPERATORS[part.operator]
            texts = [_expand_var(op, spec, variables.get(spec.name)) for spec in part.variables]
            defined = [text for text in texts if text is not None]
            if defined:
                out.append(op.first + op.sep.join(defined))
        return "".join(out)

    def match(self, uri: str) -> dict[str, MatchValue] | None:
        """Return the variables that expand to ``uri``, or None if it does not fit.

        Undefined variables are absent from the result. See the module docstring for what
        matching cannot recover. Never raises for any ``uri`` string.
        """
        if self._regex is None:
            self._regex = re.compile(self._pattern())
        match = self._regex.fullmatch(uri)
        if match is None:
            return None
        found: list[tuple[VarSpec, MatchValue]] = []
        try:
            for index, part in enumerate(self._parts):
                if isinstance(part, _Expression):
                    found.extend(_read(index, part, match))
            return _merge(found)
        except (_NoMatch, UnicodeDecodeError):
            return None

    def _pattern(self) -> str:
        pieces = []
        for index, part in enumerate(self._parts):
            if isinstance(part, str):
                pieces.append(re.escape(_encode(part, allow_reserved=True)))
            elif _OPERATORS[part.operator].named:
                pieces.append(_named_pattern(index, part))
            else:
                pieces.append(_unnamed_pattern(index, part))
        return "".join(pieces)


def _read(index: int, expr: _Expression, match: re.Match[str]) -> list[tuple[VarSpec, MatchValue]]:
    if _OPERATORS[expr.operator].named:
        return _read_named(index, expr, match)
    return _read_unnamed(index, expr, match)
