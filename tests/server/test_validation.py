"""Argument validation and conversion, dialects, the validator cache, output validation."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.server import (
    ArgumentError,
    CallArguments,
    Context,
    OutputError,
    Param,
    SchemaError,
    UnsupportedDialect,
    derive_function_schema,
    derive_output_schema,
    structured_content,
    to_jsonable,
    validate_arguments,
    validate_structured_content,
)
from trimcp.server._validation import compiled_validator, convert_value


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    x: float
    y: float = 0.0


@dataclass
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError("n must be positive")


@dataclass
class Shape:
    name: str
    points: list[Point] = field(default_factory=list)


class Options(TypedDict):
    verbose: bool
    level: NotRequired[int]


class Model(pydantic.BaseModel):
    a: int
    b: str = "x"


class Strict(pydantic.BaseModel):
    n: int

    @pydantic.field_validator("n")
    @classmethod
    def even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value


def everything(
    count: int,
    ratio: float = 1.0,
    *,
    name: str = "",
    flag: bool = False,
    mode: Literal["fast", "slow"] = "fast",
    color: Color = Color.RED,
    when: dt.datetime | None = None,
    day: dt.date | None = None,
    ident: uuid.UUID | None = None,
    path: Path | None = None,
    shape: Shape | None = None,
    options: Options | None = None,
    model: Model | None = None,
    tags: set[str] | None = None,
    pair: tuple[int, str] | None = None,
    scores: dict[str, float] | None = None,
    bounded: Annotated[int, Param(ge=0, le=10)] = 0,
    ctx: Context | None = None,
) -> None:
    """Take every supported kind of argument."""


EVERYTHING = derive_function_schema(everything)


def test_valid_arguments_are_converted() -> None:
    call = validate_arguments(
        EVERYTHING,
        {
            "count": 3,
            "ratio": 2,
            "mode": "slow",
            "color": "green",
            "when": "2025-11-25T10:00:00Z",
            "day": "2025-11-25",
            "ident": "12345678-1234-5678-1234-567812345678",
            "path": "/tmp/a",
            "shape": {"name": "tri", "points": [{"x": 1}, {"x": 2.5, "y": 3}]},
            "options": {"verbose": True},
            "model": {"a": 1},
            "tags": ["a", "b"],
            "pair": [1, "one"],
            "scores": {"a": 1, "b": 0.5},
        },
    )
    kwargs = call.kwargs
    assert call.args == ()
    assert kwargs["count"] == 3
    assert kwargs["ratio"] == 2.0
    assert type(kwargs["ratio"]) is float  # int accepted for float, converted
    assert kwargs["mode"] == "slow"
    assert kwargs["color"] is Color.GREEN
    assert kwargs["when"] == dt.datetime(2025, 11, 25, 10, tzinfo=dt.UTC)
    assert kwargs["day"] == dt.date(2025, 11, 25)
    assert kwargs["ident"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert kwargs["path"] == Path("/tmp/a")
    assert kwargs["shape"] == Shape("tri", [Point(1.0), Point(2.5, 3.0)])
    assert kwargs["options"] == {"verbose": True}
    assert kwargs["model"] == Model(a=1)
    assert kwargs["tags"] == {"a", "b"}
    assert kwargs["pair"] == (1, "one")
    assert kwargs["scores"] == {"a": 1.0, "b": 0.5}
    assert "ctx" not in kwargs
    assert "name" not in kwargs  # absent optional parameters keep the function's default


def test_missing_arguments_count_as_empty() -> None:
    def no_args() -> None:
        pass

    assert validate_arguments(derive_function_schema(no_args), None) == CallArguments((), {})


def _error(arguments: object, fs: Any = EVERYTHING) -> str:
    with pytest.raises(ArgumentError) as info:
        validate_arguments(fs, arguments)
    return str(info.value)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "count: missing (required)"),
        ({"count": "3"}, 'count: expected integer, got "3" (string)'),  # no str -> int
        ({"count": True}, "count: expected integer, got true (boolean)"),
        ({"count": 1, "ratio": "1.5"}, 'ratio: expected number, got "1.5" (string)'),
        ({"count": 1, "extra": 1}, "extra: unexpected, got 1 (integer); known: bounded"),
        ({"count": 1, "mode": "medium"}, 'mode: expected one of "fast", "slow"'),
        ({"count": 1, "color": "blue"}, 'color: expected one of "red", "green"'),
        ({"count": 1, "bounded": 11}, "bounded: expected a number <= 10, got 11"),
        ({"count": 1, "bounded": -1}, "bounded: expected a number >= 0, got -1"),
        ({"count": 1, "day": "2025-13-01"}, "day: expected"),
        (
            {"count": 1, "when": "yesterday"},
            'when: expected an ISO 8601 date-time string, got "yesterday"',
        ),
        ({"count": 1, "ident": "nope"}, "ident: expected"),
        (
            {"count": 1, "shape": {"name": "a", "points": [{"x": "1"}]}},
            "shape.points[0].x: expected number",
        ),
        ({"count": 1, "shape": {"points": []}}, "shape.name: missing (required)"),
        ({"count": 1, "shape": {"name": "a", "z": 1}}, "shape.z: unexpected"),
        ({"count": 1, "options": {"verbose": 1}}, "options.verbose: expected boolean"),
        ({"count": 1, "model": {"a": "x"}}, "model.a: expected integer"),
        ({"count": 1, "tags": [1]}, "tags[0]: expected string"),
        ({"count": 1, "pair": [1]}, "pair:"),
        ({"count": 1, "pair": [1, "a", 2]}, "pair:"),
        ({"count": 1, "shape": 3}, "shape: expected a Shape object or null, got 3 (integer)"),
        ([1, 2], "arguments: expected an object, got [1, 2] (array)"),
        ("x", 'arguments: expected an object, got "x" (string)'),
    ],
)
def test_invalid_arguments_name_path_given_and_expected(arguments: object, message: str) -> None:
    assert message in _error(arguments)


def test_several_problems_are_all_reported() -> None:
    error = _error({"count": "1", "ratio": "x", "bounded": 99})
    assert error.count(";") >= 2
    with pytest.raises(ArgumentError) as info:
        validate_arguments(EVERYTHING, {"count": "1", "ratio": "x"})
    assert [problem.path for problem in info.value.problems] == [("count",), ("ratio",)]


def test_integral_float_is_an_integer_per_json_schema() -> None:
    assert validate_arguments(EVERYTHING, {"count": 3.0}).kwargs["count"] == 3
    assert "count: expected integer" in _error({"count": 3.5})


def test_dataclass_post_init_failure_is_an_argument_error() -> None:
    def tool(p: Positive) -> None:
        pass

    assert "p: expected a valid Positive (n must be positive)" in _error(
        {"p": {"n": -1}}, derive_function_schema(tool)
    )


def test_pydantic_own_validation_runs_after_the_schema() -> None:
    def tool(s: Strict) -> None:
        pass

    assert "s: expected a valid Strict" in _error({"s": {"n": 3}}, derive_function_schema(tool))


def test_positional_only_parameters_go_to_args() -> None:
    def tool(a: int, b: int = 2, c: int = 3, /, d: int = 4) -> None:
        pass

    fs = derive_function_schema(tool)
    assert validate_arguments(fs, {"a": 1}) == CallArguments((1,), {})
    assert validate_arguments(fs, {"a": 1, "c": 5}) == CallArguments((1, 2, 5), {})
    assert validate_arguments(fs, {"a": 1, "d": 0}) == CallArguments((1,), {"d": 0})


@pytest.mark.parametrize(
    ("hint", "value", "expected"),
    [
        (int | float, 3, 3),
        (float | int, 3, 3),
        (str | dt.date, "2025-01-02", "2025-01-02"),
        (dt.date | int, "2025-01-02", dt.date(2025, 1, 2)),
        (Literal[1, True], True, True),
        (Literal[1, True], 1, 1),
        (list[Color], ["red"], [Color.RED]),
        (frozenset[int], [1, 1], frozenset({1})),
        (Any, {"x": [1]}, {"x": [1]}),
        (None, None, None),
    ],
)
def test_convert_value(hint: object, value: object, expected: object) -> None:
    converted = convert_value(hint, value)
    assert converted == expected
    assert type(converted) is type(expected)


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        (int, "1"),
        (float, True),
        (str, 1),
        (bool, 0),
        (None, 0),
        (Literal["a"], "b"),
        (Color, "RED"),
        (int | None, "x"),
        (set[Any], [[1]]),
        (Path, 1),
        (Options, {"level": 1}),
        (dict[str, int], []),
    ],
)
def test_convert_value_refuses(hint: object, value: object) -> None:
    with pytest.raises(ArgumentError):
        convert_value(hint, value)


# --- dialects and the cache ----------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    ],
)
def test_supported_dialects_validate(dialect: str) -> None:
    schema = {"$schema": dialect, "type": "object", "properties": {"n": {"type": "integer"}}}
    validate_structured_content(schema, {"n": 1})
    with pytest.raises(OutputError, match=r"n: expected integer"):
        validate_structured_content(schema, {"n": "1"})


def test_draft_07_keywords_follow_their_dialect() -> None:
    # "items" as an array means tuple validation in draft-07, but not in 2020-12.
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}
    with pytest.raises(OutputError):
        validate_structured_content(draft7, [1])


@pytest.mark.parametrize("dialect", ["https://example.com/my-dialect", 7])
def test_unsupported_dialect_fails_gracefully_naming_it(dialect: object) -> None:
    with pytest.raises(UnsupportedDialect, match="unsupported JSON Schema dialect") as info:
        compiled_validator({"$schema": dialect, "type": "object"})
    assert info.value.dialect == dialect
    assert "2020-12" in str(info.value)


def test_invalid_schema_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="invalid JSON Schema"):
        compiled_validator({"type": "objekt"})


def test_unresolvable_ref_is_a_schema_error() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}
    with pytest.raises(SchemaError, match="unresolvable"):
        validate_structured_content(schema, {"a": 1})


def test_validators_are_cached_per_schema_object() -> None:
    schema: dict[str, object] = {"type": "object"}
    equal_copy = dict(schema)
    assert compiled_validator(schema) is compiled_validator(schema)
    assert compiled_validator(equal_copy) is not compiled_validator(schema)


def test_structured_content_of_a_derived_output_validates() -> None:
    output = derive_output_schema(Shape)
    content = structured_content(output, Shape("a", [Point(1)]))
    validate_structured_content(output.schema, content)
    with pytest.raises(OutputError, match=r"\(root\)|points"):
        validate_structured_content(output.schema, {"name": 1, "points": "no"})


# --- properties ----------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = st.sampled_from([*EVERYTHING.input_schema["properties"], "unknown"])


@settings(max_examples=300, deadline=None)
@given(arguments=st.dictionaries(KEYS, JSON, max_size=6) | JSON)
def test_random_json_gives_arguments_or_an_argument_error(arguments: object) -> None:
    error: ArgumentError | None = None
    try:
        result = validate_arguments(EVERYTHING, arguments)
    except ArgumentError as exc:
        error = exc
    else:
        assert isinstance(result, CallArguments)
    if error is not None:
        assert error.problems
        assert str(error).startswith("invalid arguments: ")


ROUND_TRIP_HINTS = [
    int,
    float,
    str,
    bool,
    list[int],
    tuple[int, str],
    set[int],
    dict[str, float],
    Color,
    Literal["a", "b"],
    dt.datetime,
    dt.date,
    uuid.UUID,
    Point,
    Shape,
    Options,
    int | None,
]


@settings(max_examples=30, deadline=None)
@given(data=st.data(), hint=st.sampled_from(ROUND_TRIP_HINTS))
def test_serialised_values_validate_and_convert_back(data: st.DataObject, hint: Any) -> None:
    value = data.draw(st.from_type(hint).filter(_finite))

    def tool(v: hint) -> None:  # type: ignore[valid-type]
        pass

    tool.__annotations__ = {"v": hint, "return": None}
    fs = derive_function_schema(tool)
    converted = validate_arguments(fs, {"v": to_jsonable(value)}).kwargs["v"]
    assert converted == value


def _finite(value: object) -> bool:
    try:
        to_jsonable(value)
    except OutputError:
        return False
    return True
