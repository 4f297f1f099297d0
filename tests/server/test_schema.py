"""Schema derivation from signatures, docstrings, return annotations; value serialisation."""

from __future__ import annotations

import datetime as dt
import enum
import math
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NewType, NotRequired, Optional, TypedDict

import jsonschema
import pydantic
import pytest

from trimcp.server import (
    Context,
    OutputError,
    Param,
    SchemaError,
    derive_function_schema,
    derive_output_schema,
    schema_for_type,
    structured_content,
    to_jsonable,
)
from trimcp.server._docstrings import parse_docstring


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)


@dataclass
class Tree:
    value: int
    children: list[Tree] = field(default_factory=list)


class Options(TypedDict):
    verbose: bool
    level: NotRequired[int]


class Model(pydantic.BaseModel):
    a: int
    point: Point | None = None


UserId = NewType("UserId", int)


def _check_valid(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (UserId, {"type": "integer"}),
        (Optional[int], {"type": ["integer", "null"]}),  # noqa: UP045  # the old spelling
        (int | str, {"type": ["integer", "string"]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array", "items": {}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object", "additionalProperties": {}}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Color, {"type": "string", "enum": ["red", "green"], "title": "Color"}),
        (Level, {"type": "integer", "enum": [1, 2], "title": "Level"}),
        (dt.datetime, {"type": "string", "format": "date-time"}),
        (dt.date, {"type": "string", "format": "date"}),
        (dt.time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Path, {"type": "string", "format": "path"}),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
        (
            Annotated[str, Param(min_length=1, max_length=5, pattern="^a", examples=("ab",))],
            {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a", "examples": ["ab"]},
        ),
        (
            Annotated[list[int], Param(min_length=1, title="T")],
            {"type": "array", "items": {"type": "integer"}, "minItems": 1, "title": "T"},
        ),
        (
            Annotated[float, Param(gt=0, lt=1)],
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        (Annotated[int, pydantic.Field(description="d")], {"type": "integer", "description": "d"}),
        (Annotated[int, 42], {"type": "integer"}),  # unknown metadata is ignored
    ],
)
def test_schema_for_simple_types(hint: object, expected: dict[str, Any]) -> None:
    schema = schema_for_type(hint)
    assert schema == expected
    jsonschema.Draft202012Validator.check_schema(schema)


def test_union_with_structured_member_uses_any_of() -> None:
    schema = schema_for_type(Point | None)
    assert schema["anyOf"] == [{"$ref": "#/$defs/Point"}, {"type": "null"}]
    assert schema["$defs"]["Point"]["required"] == ["x"]


def test_dataclass_schema_is_closed_with_defaults() -> None:
    schema = schema_for_type(Point)
    assert schema["$defs"]["Point"] == {
        "type": "object",
        "title": "Point",
        "properties": {
            "x": {"type": "number"},
            "y": {"type": "number", "default": 0.0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
        "additionalProperties": False,
    }


def test_recursive_dataclass_uses_a_ref_to_itself() -> None:
    schema = schema_for_type(Tree)
    tree = schema["$defs"]["Tree"]
    assert tree["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"value": 1, "children": [{"value": 2, "children": []}]})
    assert not validator.is_valid({"value": 1, "children": [{"value": "x"}]})


def test_typeddict_required_and_not_required() -> None:
    options = schema_for_type(Options)["$defs"]["Options"]
    assert options["required"] == ["verbose"]
    assert set(options["properties"]) == {"verbose", "level"}


def test_pydantic_model_defs_are_hoisted_and_namespaced_on_clash() -> None:
    def tool(p: Point, m: Model) -> None:
        """Use both."""

    schema = derive_function_schema(tool).input_schema
    _check_valid(schema)
    assert schema["properties"]["m"] == {"$ref": "#/$defs/Model"}
    # pydantic describes Point its own way; it must not overwrite ours
    assert "Model.Point" in schema["$defs"]
    assert schema["$defs"]["Point"]["additionalProperties"] is False
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"p": {"x": 1}, "m": {"a": 1, "point": {"x": 2}}})


@pytest.mark.parametrize(
    "hint", [bytes, dict[int, str], object.__new__, type, complex, list[bytes]]
)
def test_undescribable_hints_raise_schema_error(hint: object) -> None:
    with pytest.raises(SchemaError):
        schema_for_type(hint)


def search(
    query: str,
    limit: Annotated[int, Param(ge=1, le=100)] = 10,
    *,
    color: Color = Color.RED,
    since: dt.date | None = None,
    ctx: Context | None = None,
) -> list[str]:
    """Search the index.

    Matches are ranked by relevance.

    Args:
        query: What to look for,
            in plain words.
        limit: At most this many results.
        color (Color): Which color.

    Returns:
        The matching names.

    Raises:
        ValueError: never.
    """
    return []


def test_function_schema_from_signature_and_docstring() -> None:
    fs = derive_function_schema(search)
    assert fs.name == "search"
    assert fs.description == "Search the index.\n\nMatches are ranked by relevance."
    assert fs.context_parameters == ("ctx",)
    assert fs.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in plain words."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "At most this many results.",
                "default": 10,
            },
            "color": {
                "type": "string",
                "enum": ["red", "green"],
                "title": "Color",
                "description": "Which color.",
                "default": "red",
            },
            "since": {
                "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    _check_valid(fs.input_schema)
    assert [p.name for p in fs.parameters] == ["query", "limit", "color", "since"]
    assert fs.output is not None
    assert fs.output.wrapped
    assert fs.output.schema == {
        "type": "object",
        "properties": {
            "result": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The matching names.",
            }
        },
        "required": ["result"],
    }


def test_annotated_description_wins_over_docstring() -> None:
    def tool(a: Annotated[int, "from Annotated"]) -> None:
        """Do it.

        Args:
            a: from the docstring
        """

    assert derive_function_schema(tool).input_schema["properties"]["a"]["description"] == (
        "from Annotated"
    )


def test_no_argument_tool_is_a_closed_empty_object() -> None:
    def ping() -> None:
        pass

    fs = derive_function_schema(ping, name="ping-tool", description="Ping.")
    assert fs.input_schema == {"type": "object", "additionalProperties": False}
    assert (fs.name, fs.description, fs.output) == ("ping-tool", "Ping.", None)


def test_exclude_names_and_unannotated_parameters() -> None:
    def tool(request, x, y: int = 2):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        return x

    fs = derive_function_schema(tool, exclude=frozenset({"request"}))
    assert fs.context_parameters == ("request",)
    assert fs.input_schema["properties"] == {"x": {}, "y": {"type": "integer", "default": 2}}
    assert fs.output is None


def test_non_json_default_is_omitted_but_still_optional() -> None:
    sentinel = object()

    def tool(x: Any = sentinel) -> None:
        pass

    fs = derive_function_schema(tool)
    assert fs.input_schema["properties"]["x"] == {}
    assert "required" not in fs.input_schema


@pytest.mark.parametrize("bad", ["args", "kwargs"])
def test_star_parameters_are_refused(bad: str) -> None:
    def with_args(*args: int) -> None:
        pass

    def with_kwargs(**kwargs: int) -> None:
        pass

    fn = with_args if bad == "args" else with_kwargs
    with pytest.raises(SchemaError, match=r"\*args and \*\*kwargs"):
        derive_function_schema(fn)


def test_positional_only_context_and_bad_hints_are_refused() -> None:
    def positional_context(ctx: Context, /) -> None:
        pass

    def bad_hint(data: bytes) -> None:
        pass

    with pytest.raises(SchemaError, match="positional-only"):
        derive_function_schema(positional_context)
    with pytest.raises(SchemaError, match="parameter 'data'"):
        derive_function_schema(bad_hint)


def test_unresolvable_hints_are_schema_errors() -> None:
    def tool(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(SchemaError, match="cannot resolve"):
        derive_function_schema(tool)


# --- outputs -------------------------------------------------------------------------------


@pytest.mark.parametrize("hint", [Point, Options, Model, dict[str, int]])
def test_structured_returns_are_the_output_schema(hint: object) -> None:
    output = derive_output_schema(hint)
    assert not output.wrapped
    _check_valid(output.schema)


def test_dataclass_output_is_inlined_at_the_root() -> None:
    output = derive_output_schema(Point)
    assert output.schema["title"] == "Point"
    assert "$defs" not in output.schema
    recursive = derive_output_schema(Tree)
    assert recursive.schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert "Tree" in recursive.schema["$defs"]


@pytest.mark.parametrize("hint", [int, str, list[Point], Point | None, Color])
def test_other_returns_are_wrapped(hint: object) -> None:
    output = derive_output_schema(hint)
    assert output.wrapped
    assert output.schema["required"] == ["result"]
    _check_valid(output.schema)


def test_structured_output_flag() -> None:
    def raw() -> bytes:
        return b""

    def nothing() -> None:
        pass

    assert derive_function_schema(raw).output is None  # auto: undescribable -> none
    with pytest.raises(SchemaError):
        derive_function_schema(raw, structured_output=True)
    with pytest.raises(SchemaError):
        derive_function_schema(nothing, structured_output=True)
    assert derive_function_schema(search, structured_output=False).output is None


def test_structured_content_wraps_and_serialises() -> None:
    assert structured_content(derive_output_schema(int), 3) == {"result": 3}
    point = structured_content(derive_output_schema(Point), Point(1.5, tags=["a"]))
    assert point == {"x": 1.5, "y": 0.0, "tags": ["a"]}
    with pytest.raises(OutputError, match="object"):
        structured_content(derive_output_schema(Point), [1])


def test_to_jsonable() -> None:
    value = {
        "when": dt.datetime(2025, 11, 25, 12, 0, tzinfo=dt.UTC),
        "day": dt.date(2025, 11, 25),
        "at": dt.time(8, 30),
        "id": uuid.UUID(int=1),
        "path": Path("/tmp/x"),
        "color": Color.GREEN,
        "level": Level.HIGH,
        "set": frozenset({1}),
        "tuple": (1, "a"),
        "model": Model(a=1, point=Point(2)),
        "none": None,
    }
    assert to_jsonable(value) == {
        "when": "2025-11-25T12:00:00+00:00",
        "day": "2025-11-25",
        "at": "08:30:00",
        "id": "00000000-0000-0000-0000-000000000001",
        "path": "/tmp/x",
        "color": "green",
        "level": 2,
        "set": [1],
        "tuple": [1, "a"],
        "model": {"a": 1, "point": {"x": 2.0, "y": 0.0, "tags": []}},
        "none": None,
    }
    assert type(to_jsonable(Level.HIGH)) is int


@pytest.mark.parametrize("bad", [b"x", math.nan, math.inf, {1: "a"}, object()])
def test_to_jsonable_refuses_non_json(bad: object) -> None:
    with pytest.raises(OutputError):
        to_jsonable(bad)


def test_to_jsonable_refuses_deep_nesting() -> None:
    deep: list[object] = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(OutputError, match="deeply"):
        to_jsonable(deep)


# --- docstrings ----------------------------------------------------------------------------


def test_docstring_parsing() -> None:
    doc = parse_docstring(
        """Summary line.

        Body.

        Arguments:
            a (int): First
                and more.
            *rest: Ignored spelling.

        Examples:
            >>> f()

        Return:
            Something.
        """
    )
    assert doc.description == "Summary line.\n\nBody."
    assert doc.params == {"a": "First and more.", "rest": "Ignored spelling."}
    assert doc.returns == "Something."
    assert parse_docstring(None).description is None
    assert parse_docstring("   ").params == {}
    assert parse_docstring("Just text.").description == "Just text."
