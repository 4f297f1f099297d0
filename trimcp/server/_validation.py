"""Check ``tools/call`` arguments against an inputSchema and convert them to Python values.

Two steps, in this order: JSON Schema validation (``jsonschema``, in the schema's dialect),
then conversion by the parameter's type hint (dataclass, TypedDict, pydantic model, Enum,
datetime, UUID, Path, ... construction). Either step fails with ``ArgumentError``, whose
message names the argument path, what was given and what was expected: MCP 2025-11-25
(Tools > Error Handling) makes input validation failures *tool execution errors*, so the
server reports it as a result with ``isError: true`` the model can read and correct.

Conversion (``_conversion``) never coerces between JSON types: ``"3"`` is not an integer.

Dialects (CHECKLIST 1.5): a schema without ``$schema`` is 2020-12; ``$schema`` may name
2020-12, 2019-09, draft-07, draft-06 or draft-04 (``SUPPORTED_DIALECTS``); any other
dialect fails with ``UnsupportedDialect`` naming it.
"""

from __future__ import annotations

import collections
import json
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING

import jsonschema
import jsonschema.exceptions
import referencing.exceptions

from trimcp.server._conversion import (
    ArgumentError,
    ArgumentProblem,
    convert_value,
    describe_value,
    unexpected_problem,
)
from trimcp.server._hints import SchemaError
from trimcp.server._schema import OutputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jsonschema.protocols import Validator

    from trimcp.server._schema import FunctionSchema

__all__ = [
    "SUPPORTED_DIALECTS",
    "ArgumentError",
    "ArgumentProblem",
    "CallArguments",
    "UnsupportedDialect",
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


class UnsupportedDialect(SchemaError):
    """A schema's ``$schema`` names a dialect trimcp cannot validate (CHECKLIST 1.5)."""

    def __init__(self, dialect: object) -> None:
        supported = ", ".join(f"https://{uri}" for uri in SUPPORTED_DIALECTS)
        super().__init__(
            f"unsupported JSON Schema dialect {dialect!r}; supported dialects: {supported}"
        )
        self.dialect = dialect


@typing.final
@dataclass(frozen=True, slots=True)
class CallArguments:
    """Converted arguments, ready for ``fn(*args, **kwargs)`` (context not included)."""

    args: tuple[object, ...]
    kwargs: dict[str, object]


# --- compiled validators ---------------------------------------------------------------------

_CACHE_SIZE = 512
# id(schema) -> (schema, validator). Holding the schema keeps its id from being reused while
# the entry lives; an entry whose schema is another object with a reused id is recompiled.
_validators: collections.OrderedDict[int, tuple[Mapping[str, object], Validator]] = (
    collections.OrderedDict()
)


def compiled_validator(schema: Mapping[str, object]) -> Validator:
    """Return a validator for ``schema`` in its dialect, compiled once per schema object.

    Schemas must not be mutated after their first use: the cache is keyed by identity.
    Formats are asserted (``date-time``, ``uuid``, ``email``, ... where jsonschema can check
    them), since a bad date is the spec's own example of an input validation error.

    Raises:
        UnsupportedDialect: ``$schema`` names a dialect not in ``SUPPORTED_DIALECTS``.
        SchemaError: the schema is not valid in its dialect (CHECKLIST 1.5: MUST be valid).
    """
    hit = _validators.get(id(schema))
    if hit is not None and hit[0] is schema:
        _validators.move_to_end(id(schema))
        return hit[1]
    validator = _compile(schema)
    _validators[id(schema)] = (schema, validator)
    if len(_validators) > _CACHE_SIZE:
        _validators.popitem(last=False)
    return validator


def _compile(schema: Mapping[str, object]) -> Validator:
    dialect = schema.get("$schema", _DEFAULT_DIALECT)
    key = dialect.split("://", 1)[-1].rstrip("#") if isinstance(dialect, str) else None
    cls = SUPPORTED_DIALECTS.get(key) if key is not None else None
    if cls is None:
        raise UnsupportedDialect(dialect)
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
    problems = _problems(compiled_validator(schema), arguments)
    if problems:
        raise ArgumentError(problems)
    positional: list[tuple[bool, object]] = []  # (given, value) of positional-only params
    kwargs: dict[str, object] = {}
    for spec in function.parameters:
        given = spec.name in arguments
        value = spec.default
        if given:
            value = convert_value(spec.hint, arguments[spec.name], (spec.name,))
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
    problems = _problems(compiled_validator(schema), content)
    if problems:
        listed = "; ".join(problem.describe(root="(root)") for problem in problems[:10])
        raise OutputError(f"structured content does not match the outputSchema: {listed}")
