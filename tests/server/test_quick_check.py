"""The quick check of flat schemas (``_validation._quick_check``): fast, and never wrong.

It may only say "valid" when jsonschema agrees, in every supported dialect; whatever it
doubts goes to jsonschema, so invalid arguments get the same detailed messages as before.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from trimcp.server import (
    ArgumentError,
    CallArguments,
    OutputError,
    Param,
    SchemaError,
    derive_function_schema,
    validate_arguments,
    validate_structured_content,
)
from trimcp.server._validation import SUPPORTED_DIALECTS, _compiled, compiled_validator

NAMES = ["a", "b", "c"]
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 2.5])
SCALARS |= st.sampled_from(["", "a", "2025-01-02", "x y"])

annotations = st.fixed_dictionaries(
    {}, optional={"description": st.just("d"), "default": SCALARS, "title": st.just("t")}
)
types = st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3)
leaves = st.one_of(
    st.builds(lambda t, extra: {"type": t, **extra}, types, annotations),
    st.builds(lambda values: {"enum": values}, st.lists(SCALARS, min_size=1, max_size=4)),
    st.sampled_from(
        [
            {},
            {"type": "string", "format": "date"},  # asserted: not for the quick check
            {"type": "string", "format": "path"},  # not a known format: an annotation
            {"type": "integer", "minimum": 0},  # a keyword it does not know
            {"anyOf": [{"type": "string"}, {"type": "null"}]},
        ]
    ),
)


def objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda props, required, extra: {
            "type": "object",
            "properties": props,
            **({"required": sorted(required)} if required else {}),
            **({} if extra is None else {"additionalProperties": extra}),
        },
        st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
        st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
        st.none() | st.booleans() | leaves,
    )


schemas = st.recursive(
    leaves,
    lambda inner: (
        objects(inner)
        | st.builds(lambda item: {"type": "array", "items": item}, inner)
        | st.builds(lambda branches: {"anyOf": branches}, st.lists(inner, min_size=1, max_size=3))
    ),
    max_leaves=6,
)
instances = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES), inner),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(
    schema=objects(schemas) | schemas,
    instance=instances,
    dialect=st.sampled_from(sorted(SUPPORTED_DIALECTS)),
)
def test_the_quick_check_never_accepts_what_jsonschema_refuses(
    schema: dict[str, Any], instance: object, dialect: str
) -> None:
    document = {"$schema": f"https://{dialect}", **schema}
    try:
        compiled = _compiled(document)
    except SchemaError:  # not valid in this dialect: never reaches a call
        reject()
    if compiled.quick is not None and compiled.quick(instance):
        assert list(compiled.validator.iter_errors(typing.cast("Any", instance))) == []


def echo(text: str) -> str:
    """Return the text it is given."""
    return text


def flat(
    text: str,
    *,
    count: int = 1,
    ratio: float = 0.5,
    flag: bool = False,
    mode: Literal["a", "b"] = "a",
    note: str | None = None,
    tags: list[str] | None = None,
    raw: Any = None,
    size: Annotated[int, Param(description="how many")] = 3,
) -> None:
    """Take only primitive arguments."""


ECHO = derive_function_schema(echo)
FLAT = derive_function_schema(flat)


@pytest.mark.parametrize("function", [ECHO, FLAT])
def test_schemas_derived_from_primitive_parameters_get_a_quick_check(function: Any) -> None:
    assert _compiled(function.input_schema).quick is not None


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        {
            "type": "object",
            "$defs": {"n": {"$ref": "#/$defs/n"}},
            "properties": {"a": {"$ref": "#/$defs/n"}},
        },
        {"type": "object", "properties": {"a": {"$ref": "#/properties/b"}, "b": {}}},
        {
            "type": "object",
            "$defs": {"n": {}},
            "properties": {"a": {"$ref": "#/$defs/n", "minimum": 1}},
        },
        {"type": "object", "additionalProperties": {"type": "integer", "maximum": 3}},
        {"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}},
        {"type": "object", "properties": {"e": {"enum": [[1], [2]]}}},
        {"type": "object", "properties": {"x": False}},
        {"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}},
        {"type": "object", "properties": {"x": {"anyOf": [{"type": "string", "pattern": "a"}]}}},
    ],
)
def test_anything_more_goes_to_jsonschema(schema: dict[str, Any]) -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", **schema}
    assert _compiled(schema).quick is None


def test_valid_arguments_pass_and_convert() -> None:
    arguments = {"text": "hi", "count": 2, "ratio": 1, "mode": "b", "note": None, "tags": ["x"]}
    call = validate_arguments(FLAT, arguments)
    assert call == CallArguments(
        (), {"text": "hi", "count": 2, "ratio": 1.0, "mode": "b", "note": None, "tags": ["x"]}
    )
    assert isinstance(call.kwargs["ratio"], float)  # converted, not passed through
    assert validate_arguments(ECHO, {"text": "hi"}) == CallArguments((), {"text": "hi"})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "invalid arguments: text: missing (required)"),
        ({"text": 1}, "invalid arguments: text: expected string, got 1 (integer)"),
        (
            {"text": "a", "count": True},
            "invalid arguments: count: expected integer, got true (boolean)",
        ),
        ({"text": "a", "mode": "c"}, 'invalid arguments: mode: expected one of "a", "b", got'),
        ({"text": "a", "tags": [1]}, "invalid arguments: tags[0]: expected string, got 1"),
        ({"text": "a", "zzz": 1}, "invalid arguments: zzz: unexpected, got 1 (integer); known: "),
    ],
)
def test_invalid_arguments_keep_their_detailed_messages(arguments: object, message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        validate_arguments(FLAT, arguments)
    assert str(info.value).startswith(message)


def test_an_integral_float_still_counts_as_an_integer() -> None:
    # Stricter than jsonschema, the quick check refuses 2.0; jsonschema then accepts it.
    assert validate_arguments(FLAT, {"text": "a", "count": 2.0}).kwargs["count"] == 2


def test_the_cache_keeps_one_validator_and_check_per_schema_object() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert _compiled(schema) is _compiled(schema)
    assert compiled_validator(schema) is _compiled(schema).validator


def test_structured_content_uses_the_quick_check_too() -> None:
    schema = {"type": "object", "properties": {"result": {"type": "string"}}}
    schema["required"] = ["result"]
    validate_structured_content(schema, {"result": "ok"})
    with pytest.raises(OutputError, match="result: expected string"):
        validate_structured_content(schema, {"result": 1})


def test_local_refs_to_defs_are_followed_by_the_quick_check() -> None:
    # How derived schemas name nested TypedDicts: a list of them gets the quick check too.
    item = {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]}
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "$defs": {"Item": item},
    }
    assert _compiled(schema).quick is not None
    validate_structured_content(schema, {"items": [{"p": "a"}, {"p": "b"}]})
    with pytest.raises(OutputError, match=r"items\[1\]\.p: expected string"):
        validate_structured_content(schema, {"items": [{"p": "a"}, {"p": 2}]})


def test_refs_that_would_copy_too_much_go_to_jsonschema() -> None:
    # Each definition uses the next one twice: inlining would copy 2**30 leaves.
    defs: dict[str, Any] = {"d30": {"type": "string"}}
    for level in range(30):
        child = {"$ref": f"#/$defs/d{level + 1}"}
        defs[f"d{level}"] = {"type": "array", "items": {"anyOf": [child, child]}}
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    assert _compiled(schema).quick is None
