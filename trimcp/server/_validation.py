"""Check ``tools/call`` arguments against an inputSchema and convert them to Python values.

Two steps, in this order: JSON Schema validation (``jsonschema``, in the schema's dialect),
then conversion by the parameter's type hint (dataclass, TypedDict, pydantic model, Enum,
datetime, UUID, Path, ... construction). Either step fails with ``ArgumentError``, whose
message names the argument path, what was given and what was expected: MCP 2025-11-25
(Tools > Error Handling) makes input validation failures *tool execution errors*, so the
server reports it as a result with ``isError: true`` the model can read and correct.

Conversion (``_conversion``) never coerces between JSON types: ``"3"`` is not an integer.

Most tool schemas are flat: an object of primitive-typed properties with a ``required``
list. For those a quick check compiled next to the validator (``_quick_check``) accepts
valid arguments without running jsonschema, which was a third of a small tool call's time
(bench/RESULTS.md). It only ever says "valid" when jsonschema would too; on any doubt, and
for every invalid call, jsonschema runs and words the problems as before.

Dialects (MCP 2025-11-25, Basic > JSON Schema Usage, https://modelcontextprotocol.io/specification/2025-11-25/basic#json-schema-usage):
a schema without ``$schema`` is 2020-12; ``$schema`` may name
2020-12, 2019-09, draft-07, draft-06 or draft-04 (``SUPPORTED_DIALECTS``); any other
dialect fails with ``UnsupportedDialect`` naming it.
"""

from __future__ import annotations

import collections
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import jsonschema
import jsonschema.exceptions
import referencing.exceptions

from trimcp.errors import (
    ArgumentError,
    ArgumentProblem,
    OutputError,
    SchemaError,
    UnsupportedDialect,
)
from trimcp.server._conversion import convert_value, describe_value, unexpected_problem

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jsonschema.protocols import Validator

    from trimcp.server._schema import FunctionSchema

__all__ = [
    "SUPPORTED_DIALECTS",
    "CallArguments",
    "compiled_validator",
    "convert_value",
    "validate_arguments",
    "validate_structured_content",
]

#: Dialect URIs (scheme-less, without a trailing ``#``) -> validator class.
SUPPORTED_DIALECTS: Mapping[str, type[Validator]] = {
    "json-schema.org/draft/2020-12/schema": jsonschema.Draft202012Validator,
    "json-schema.org/draft/2019-09/schema": jsonschema.Draft201909Validator,
    "json-schema.org/draft-07/schema": jsonschema.Draft7Validator,
    "json-schema.org/draft-06/schema": jsonschema.Draft6Validator,
    "json-schema.org/draft-04/schema": jsonschema.Draft4Validator,
}
_DEFAULT_DIALECT = "json-schema.org/draft/2020-12/schema"


@typing.final
@dataclass(frozen=True, slots=True)
class CallArguments:
    """Converted arguments, ready for ``fn(*args, **kwargs)`` (context not included)."""

    args: tuple[object, ...]
    kwargs: dict[str, object]


# --- compiled validators ---------------------------------------------------------------------

_CACHE_SIZE = 512

#: A quick check of a value: True means the schema certainly accepts it.
_Check = Callable[[object], bool]


@typing.final
@dataclass(frozen=True, slots=True)
class _Compiled:
    """One cached schema: its jsonschema validator and, for a flat schema, a quick check."""

    schema: Mapping[str, object]  # held so that its id is not reused while cached
    validator: Validator
    quick: _Check | None  # None: the schema is not one _quick_check understands


# id(schema) -> compiled. An entry whose schema is another object with a reused id is
# recompiled.
_validators: collections.OrderedDict[int, _Compiled] = collections.OrderedDict()


def compiled_validator(schema: Mapping[str, object]) -> Validator:
    """Return a validator for ``schema`` in its dialect, compiled once per schema object.

    Schemas must not be mutated after their first use: the cache is keyed by identity.
    Formats are asserted (``date-time``, ``uuid``, ``email``, ... where jsonschema can check
    them), since a bad date is the spec's own example of an input validation error.

    Raises:
        UnsupportedDialect: ``$schema`` names a dialect not in ``SUPPORTED_DIALECTS``.
        SchemaError: the schema is not valid in its dialect (the spec: schemas MUST be valid).
    """
    return _compiled(schema).validator


def _compiled(schema: Mapping[str, object]) -> _Compiled:
    hit = _validators.get(id(schema))
    if hit is not None and hit.schema is schema:
        _validators.move_to_end(id(schema))
        return hit
    validator = _compile(schema)
    formats = frozenset(type(validator).FORMAT_CHECKER.checkers)  # the ones _compile asserts
    body = _inline_local_refs({key: value for key, value in schema.items() if key != "$schema"})
    compiled = _Compiled(schema, validator, None if body is None else _quick_check(body, formats))
    _validators[id(schema)] = compiled
    if len(_validators) > _CACHE_SIZE:
        _validators.popitem(last=False)
    return compiled


def _compile(schema: Mapping[str, object]) -> Validator:
    dialect = schema.get("$schema", _DEFAULT_DIALECT)
    key = dialect.split("://", 1)[-1].rstrip("#") if isinstance(dialect, str) else None
    cls = SUPPORTED_DIALECTS.get(key) if key is not None else None
    if cls is None:
        raise UnsupportedDialect(dialect, tuple(SUPPORTED_DIALECTS))
    document = typing.cast("dict[str, typing.Any]", schema)
    try:
        cls.check_schema(document)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        raise SchemaError(f"invalid JSON Schema at {where}: {exc.message}") from exc
    return cls(document, format_checker=cls.FORMAT_CHECKER)


def _problems(validator: Validator, instance: object) -> list[ArgumentProblem]:
    try:
        found = validator.iter_errors(typing.cast("typing.Any", instance))
        errors = sorted(found, key=lambda error: list(map(str, error.path)))
    except referencing.exceptions.Unresolvable as exc:
        raise SchemaError(f"the schema has an unresolvable $ref: {exc}") from exc
    problems: list[ArgumentProblem] = []
    for error in errors:
        problems.extend(_describe(error))
    return problems


# --- the quick check for flat schemas ---------------------------------------------------------


class _NotInlined(Exception):
    """A ``$ref`` the quick check does not follow: recursive, not local, or with siblings."""


_REF_PREFIX = "#/$defs/"
_MAX_INLINED_NODES = 10_000


def _inline_local_refs(schema: dict[str, object]) -> object | None:
    """Return ``schema`` with each ``{"$ref": "#/$defs/Name"}`` replaced by that definition.

    Derived schemas name nested TypedDicts and dataclasses in ``$defs``; inlined, a list of
    them gets the quick check too (jsonschema took ~0.4 ms per item of a 10,000-item list
    of results). None (no quick check) when a reference is recursive, points elsewhere, or
    has keywords beside it other than annotations, or when the copies would be too large.
    """
    defs = schema.get("$defs", {})
    if not isinstance(defs, dict):
        return None
    # Definitions used many times over are copied each time: a schema (perhaps another
    # party's) whose copies would grow past this many nodes keeps jsonschema only.
    budget = [_MAX_INLINED_NODES]

    def inline(node: object, seen: frozenset[str]) -> object:
        budget[0] -= 1
        if budget[0] < 0:
            raise _NotInlined
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix(_REF_PREFIX)
            if (
                not ref.startswith(_REF_PREFIX)
                or name in seen
                or name not in defs
                or not node.keys() - {"$ref"} <= _ANNOTATIONS
            ):
                raise _NotInlined
            return inline(defs[name], seen | {name})
        return {key: inline(value, seen) for key, value in node.items()}

    try:
        return inline({key: value for key, value in schema.items() if key != "$defs"}, frozenset())
    except _NotInlined:
        return None


# Keywords that never make a value invalid (2020-12 Meta-Data, section 9, and $comment).
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
    | {"$comment"}
)
_KEYWORDS = _ANNOTATIONS | {
    "anyOf",
    "type",
    "enum",
    "format",
    "items",
    "properties",
    "required",
    "additionalProperties",
}


def _is_integer(value: object) -> bool:
    # Stricter than draft 6+ (which accepts 3.0): a float goes to jsonschema to decide.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The same tests as jsonschema's type checkers, or stricter ones.
_TYPES: dict[str, _Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}
_SCALARS = (str, int, float, bool, type(None))
# The Python types of each JSON type (bool, an int subclass, is refused separately).
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties"})

#: How an object check tests one member without a call when it can: the value passes if
#: it is an instance of the types, is no bool when refused, and passes the check (if any).
_Member = tuple[tuple[type, ...], bool, _Check | None]
_ANY_MEMBER: _Member = ((object,), False, None)


def _anything(value: object) -> bool:
    return True


def _quick_check(schema: object, formats: frozenset[str]) -> _Check | None:
    """Compile ``schema`` to a quick check, or return None if it uses more than it knows.

    It knows ``type``, scalar ``enum``, ``items`` (one schema), ``anyOf``, the object
    keywords ``properties``, ``required`` and ``additionalProperties``, formats that are not
    asserted (not in ``formats``) and annotations: what schemas derived from primitive
    parameters (``list[str] | None`` too) use. Its verdicts are jsonschema's or stricter,
    in every supported dialect.
    """
    if schema is True:
        return _anything
    if not isinstance(schema, dict) or not schema.keys() <= _KEYWORDS:
        return None
    if schema.get("format") in formats:
        return None
    kind = schema.get("type")
    object_check = _object_check(schema, formats)
    checks = [
        # An object check with "type": "object" tests the type itself.
        _anything if kind == "object" and object_check is not _anything else _type_check(kind),
        _enum_check(schema["enum"]) if "enum" in schema else _anything,
        _items_check(schema["items"], formats) if "items" in schema else _anything,
        _any_of_check(schema["anyOf"], formats) if "anyOf" in schema else _anything,
        object_check,
    ]
    if any(check is None for check in checks):
        return None
    return _all_of([check for check in checks if check is not None and check is not _anything])


def _all_of(checks: list[_Check]) -> _Check:
    if not checks:
        return _anything
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


def _type_check(kind: object) -> _Check | None:
    if kind is None:
        return _anything
    if isinstance(kind, str):
        return _TYPES.get(kind)
    if not isinstance(kind, list) or not kind or not all(name in _TYPES for name in kind):
        return None
    tests = [_TYPES[name] for name in kind]
    return lambda value: any(test(value) for test in tests)


def _enum_check(options: object) -> _Check | None:
    if not isinstance(options, list) or not all(isinstance(o, _SCALARS) for o in options):
        return None
    # Same type and equal: jsonschema finds those equal too (it tells True from 1).
    return lambda value: any(type(value) is type(o) and value == o for o in options)


def _items_check(items: object, formats: frozenset[str]) -> _Check | None:
    item = _quick_check(items, formats)
    if item is None or isinstance(items, list):  # the array form means another thing per draft
        return None
    return lambda value: not isinstance(value, list) or all(item(entry) for entry in value)


def _any_of_check(branches: object, formats: frozenset[str]) -> _Check | None:
    if not isinstance(branches, list) or not branches:
        return None
    checks = [_quick_check(branch, formats) for branch in branches]
    if None in checks:
        return None
    known = typing.cast("list[_Check]", checks)
    return lambda value: any(check(value) for check in known)


def _object_check(schema: dict[str, object], formats: frozenset[str]) -> _Check | None:
    if not schema.keys() & _OBJECT_KEYWORDS:
        return _anything
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    members = {name: _member(sub, formats) for name, sub in properties.items()}
    extra = schema.get("additionalProperties", True)
    other = None if extra is False else _member(extra, formats)
    names = tuple(name for name in required if isinstance(name, str))
    if None in members.values() or (extra is not False and other is None):
        return None
    if len(names) != len(required):
        return None
    known = typing.cast("dict[str, _Member]", members)
    return _members_check(known, other, names, only_objects=schema.get("type") == "object")


def _members_check(
    known: dict[str, _Member], other: _Member | None, names: tuple[str, ...], *, only_objects: bool
) -> _Check:
    """Check an object's members; ``other`` is for unlisted ones (None: refused)."""

    def check(value: object) -> bool:
        if not isinstance(value, dict):
            return not only_objects
        for key, member in value.items():
            spec = known.get(key, other)
            if spec is None:
                return False
            types, no_bool, test = spec
            if not isinstance(member, types) or (no_bool and isinstance(member, bool)):
                return False
            if test is not None and not test(member):
                return False
        for name in names:  # noqa: SIM110  (a loop is cheaper than all() and a generator)
            if name not in value:
                return False
        return True

    return check


def _member(schema: object, formats: frozenset[str]) -> _Member | None:
    """Compile a member's schema; a bare type (plus annotations) needs no call to test."""
    check = _quick_check(schema, formats)
    if check is None:
        return None
    if check is _anything:
        return _ANY_MEMBER
    assert isinstance(schema, dict)  # True compiles to _anything
    kind = schema.get("type")
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not schema.keys() <= _ANNOTATIONS | {"type", "format"}:
        return ((object,), False, check)
    types = tuple(py for name in names for py in _PY_TYPES[name])
    no_bool = "boolean" not in names and bool({"integer", "number"} & set(names))
    return (types, no_bool, None)


# --- turning jsonschema errors into problems -------------------------------------------------


def _describe(error: jsonschema.exceptions.ValidationError) -> list[ArgumentProblem]:
    path = tuple(error.absolute_path)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword == "required" and isinstance(instance, dict) and isinstance(value, list):
        missing = [name for name in value if name not in instance]
        return [ArgumentProblem((*path, name), "nothing", "a value", "missing") for name in missing]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [name for name in instance if name not in known]
        return [unexpected_problem((*path, name), instance[name], known) for name in extra]
    if keyword in ("anyOf", "oneOf") and error.context:
        deeper = _inside_branches(error.context)
        if deeper:
            return [problem for inner in deeper for problem in _describe(inner)]
    return [ArgumentProblem(path, describe_value(instance), _expected(str(keyword), value, error))]


def _inside_branches(
    context: typing.Iterable[jsonschema.exceptions.ValidationError],
) -> list[jsonschema.exceptions.ValidationError]:
    """Keep the anyOf/oneOf branch errors that are about the value's insides.

    A branch that failed only because the value has another JSON type says nothing useful;
    a branch of the right type that failed deeper (a bad member of an object) does.
    """
    return [
        error
        for error in context
        if error.relative_path or error.validator not in ("type", "enum", "const")
    ]


_BOUNDS = {
    "minimum": "a number >= {}",
    "maximum": "a number <= {}",
    "exclusiveMinimum": "a number > {}",
    "exclusiveMaximum": "a number < {}",
    "minLength": "a string of at least {} characters",
    "maxLength": "a string of at most {} characters",
    "minItems": "an array of at least {} items",
    "maxItems": "an array of at most {} items",
    "pattern": "a string matching the pattern {!r}",
    "format": "a valid {} string",
    "multipleOf": "a multiple of {}",
}


def _expected(keyword: str, value: object, error: jsonschema.exceptions.ValidationError) -> str:
    if keyword == "type":
        return " or ".join(value) if isinstance(value, list) else str(value)
    if keyword == "enum" and isinstance(value, list):
        return "one of " + ", ".join(json.dumps(item) for item in value)
    if keyword == "const":
        return json.dumps(value)
    if keyword in _BOUNDS:
        return _BOUNDS[keyword].format(value)
    if keyword in ("anyOf", "oneOf") and isinstance(value, list):
        return " or ".join(_summary(sub) for sub in value)
    return error.message


def _summary(schema: object) -> str:
    if not isinstance(schema, dict):
        return "any value" if schema is True else "nothing"
    if "$ref" in schema:
        return f"a {str(schema['$ref']).rsplit('/', 1)[-1]} object"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(item) for item in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(map(str, kind))
    if "format" in schema:
        return f"a {schema['format']} {kind}"
    return str(kind) if kind is not None else "a matching value"


# --- entry points ----------------------------------------------------------------------------


def validate_arguments(
    function: FunctionSchema,
    arguments: object,
    *,
    input_schema: Mapping[str, object] | None = None,
) -> CallArguments:
    """Validate ``tools/call`` ``arguments`` and convert them for ``function``'s parameters.

    ``input_schema`` (a tool's hand-written schema) replaces the derived one for
    validation; conversion still follows the function's type hints, so a value the schema
    allows but the hints cannot take is an ``ArgumentError`` too.

    ``None`` (the ``arguments`` member absent) counts as ``{}``. Missing optional parameters
    are left out of ``kwargs`` so the function's own defaults apply; positional-only
    parameters go to ``args``, with defaults filled in where a later one is given.

    Raises:
        ArgumentError: the arguments break the input schema or do not convert.
        UnsupportedDialect: the input schema's ``$schema`` is not supported.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError([ArgumentProblem((), describe_value(arguments), "an object")])
    schema = function.input_schema if input_schema is None else input_schema
    compiled = _compiled(schema)
    if compiled.quick is None or not compiled.quick(arguments):
        problems = _problems(compiled.validator, arguments)
        if problems:
            raise ArgumentError(problems)
    return _converted(function, arguments)


def _converted(function: FunctionSchema, arguments: dict[str, object]) -> CallArguments:
    positional: list[tuple[bool, object]] = []  # (given, value) of positional-only params
    kwargs: dict[str, object] = {}
    for spec in function.parameters:
        given = spec.name in arguments
        value = spec.default
        if given:
            value = arguments[spec.name]
            # A JSON scalar already of its hint's exact type converts to itself.
            if not (type(value) is spec.hint and spec.hint in _SCALARS):
                value = convert_value(spec.hint, value, (spec.name,))
        if spec.positional_only:
            positional.append((given, value))
        elif given:
            kwargs[spec.name] = value
    while positional and not positional[-1][0]:  # trailing defaults: let the function apply them
        positional.pop()
    args = [value for _, value in positional]
    return CallArguments(tuple(args), kwargs)


def validate_structured_content(schema: Mapping[str, object], content: object) -> None:
    """Check ``structuredContent`` against an ``outputSchema``.

    MCP 2025-11-25 (Tools > Output Schema): a server MUST return conforming structured
    results and a client SHOULD validate them; both sides can use this.

    Raises:
        OutputError: the content does not conform; the message lists what is wrong.
        UnsupportedDialect: the schema's ``$schema`` is not supported.
    """
    compiled = _compiled(schema)
    if compiled.quick is not None and compiled.quick(content):
        return
    problems = _problems(compiled.validator, content)
    if problems:
        listed = "; ".join(problem.describe(root="(root)") for problem in problems[:10])
        raise OutputError(f"structured content does not match the outputSchema: {listed}")
