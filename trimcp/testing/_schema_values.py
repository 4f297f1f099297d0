"""Hypothesis strategies for JSON values that satisfy, or violate, a tool's input schema.

``tool_arguments(schema)`` compiles a JSON Schema subset into a strategy: ``type`` (one or a
list of ``object``/``string``/``integer``/``number``/``boolean``/``array``/``null``),
``properties``/``required``/``additionalProperties``, ``enum``/``const``,
``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``,
``minLength``/``maxLength``/``pattern``, ``items``/``minItems``/``maxItems``,
``anyOf``/``oneOf`` (one branch is picked), ``$ref`` into ``$defs`` (or ``definitions``) and
``default``. Every value is finally checked with ``jsonschema`` (the schema's ``$schema``
dialect, 2020-12 by default, as MCP 2025-11-25 says), so keywords outside the subset
(``multipleOf``, ``allOf``, ``uniqueItems``...) only make generation slower, never wrong.

``invalid_tool_arguments(schema)`` mutates valid values (wrong types, a missing required
property, an unexpected property where ``additionalProperties`` is false, numbers and lengths
out of range, values outside an ``enum``) and keeps only what ``jsonschema`` rejects. Each
kind of violation a schema allows comes up about equally often, however many types or
properties it spans, so a few hundred values cover every kind (``_any_kind``).

Not here: MCP messages built from these values (``_strategies``).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Final

import hypothesis.strategies as st
import jsonschema
import jsonschema.validators
import orjson

if TYPE_CHECKING:
    from collections.abc import Callable

    from hypothesis.strategies import SearchStrategy
    from jsonschema.protocols import Validator

    from trimcp.protocol import JsonObject, JsonValue

#: Integers stay within what every JSON peer reads exactly (IEEE doubles: 2**53).
_MAX_SAFE_INT: Final = 2**53 - 1
#: Extra length allowed above a lower bound when the schema sets no upper bound.
_SLACK: Final = 8
# Checking a schema against its meta-schema costs milliseconds; tests build strategies often.
_VALIDATORS: dict[bytes, Validator] = {}
_TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")


@functools.cache
def json_values(*, max_leaves: int = 12) -> SearchStrategy[JsonValue]:
    """Generate any JSON value: finite floats, safe integers, no lone surrogates."""
    scalars: SearchStrategy[JsonValue] = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_MAX_SAFE_INT, max_value=_MAX_SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=_SLACK),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=_SLACK), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def schema_validator(schema: JsonObject) -> Validator:
    """Return a ``jsonschema`` validator for ``schema`` (2020-12 unless ``$schema`` says).

    Raises:
        jsonschema.SchemaError: ``schema`` is not a valid JSON Schema.
    """
    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    validator = _VALIDATORS.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = _VALIDATORS[key] = cls(schema)
    return validator


def tool_arguments(input_schema: JsonObject) -> SearchStrategy[JsonValue]:
    """Generate values that validate against ``input_schema`` (see the module docstring).

    Raises:
        jsonschema.SchemaError: the schema is not a valid JSON Schema.
        ValueError: a ``$ref`` points outside the document.
    """
    validator = schema_validator(input_schema)
    return _Compiler(input_schema).compile(input_schema).filter(validator.is_valid)


def invalid_tool_arguments(input_schema: JsonObject) -> SearchStrategy[JsonValue]:
    """Generate values that ``input_schema`` rejects (see the module docstring).

    Raises:
        jsonschema.SchemaError: the schema is not a valid JSON Schema.
        ValueError: the schema declares nothing a value could violate (no ``type``, no
            ``enum``, ``const`` or bounds), so no invalid value can be built on purpose.
    """
    validator = schema_validator(input_schema)
    compiler = _Compiler(input_schema)
    candidates = _violations(compiler, compiler.resolve(input_schema))
    if not candidates:
        raise ValueError("the schema constrains nothing that a value could violate")
    return _any_kind(candidates).filter(lambda value: not validator.is_valid(value))


# --- valid values -----------------------------------------------------------------------------


class _Compiler:
    """Turns one schema document into strategies; ``$ref`` targets are compiled once."""

    def __init__(self, root: JsonObject) -> None:
        self._root = root
        self._refs: dict[str, SearchStrategy[JsonValue]] = {}

    def resolve(self, schema: JsonValue) -> JsonValue:
        """Follow ``$ref`` chains; sibling keywords override the target's."""
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = str(schema["$ref"])
            if ref in seen:
                break
            seen.add(ref)
            target = self._target(ref)
            siblings = {key: value for key, value in schema.items() if key != "$ref"}
            schema = {**target, **siblings} if isinstance(target, dict) else target
        return schema

    def _target(self, ref: str) -> JsonValue:
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref targets are supported, not {ref!r}")
        node: JsonValue = self._root
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"$ref {ref!r} points nowhere")
            node = node[key]
        return node

    def compile(self, schema: JsonValue) -> SearchStrategy[JsonValue]:
        """Return a strategy for ``schema`` (a subschema of the root)."""
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = str(schema["$ref"])
            if len(schema) == 1:
                if ref not in self._refs:
                    # Deferred, so recursive definitions (trees) compile lazily.
                    self._refs[ref] = st.deferred(lambda: self._compile(self.resolve(schema)))
                return self._refs[ref]
        return self._compile(self.resolve(schema))

    def _compile(self, schema: JsonValue) -> SearchStrategy[JsonValue]:
        if schema is True or schema == {}:
            return json_values()
        if not isinstance(schema, dict):
            return st.nothing()
        strategy = self._choose(schema)
        if "default" in schema:
            strategy = st.one_of(st.just(schema["default"]), strategy)
        return strategy

    def _choose(self, schema: JsonObject) -> SearchStrategy[JsonValue]:
        if "const" in schema:
            return st.just(schema["const"])
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return st.sampled_from(enum)
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                rest = {key: value for key, value in schema.items() if key != keyword}
                return st.one_of([self._branch(rest, branch) for branch in branches])
        return st.one_of([self._typed(kind, schema) for kind in declared_types(schema)])

    def _branch(self, rest: JsonObject, branch: JsonValue) -> SearchStrategy[JsonValue]:
        branch = self.resolve(branch)
        if not isinstance(branch, dict):
            return self._compile(branch)
        return self._compile({**rest, **branch})

    def _typed(self, kind: str, schema: JsonObject) -> SearchStrategy[JsonValue]:
        builders: dict[str, Callable[[JsonObject], SearchStrategy[JsonValue]]] = {
            "null": lambda _: st.none(),
            "boolean": lambda _: st.booleans(),
            "integer": _integers,
            "number": _numbers,
            "string": _strings,
            "array": self._array,
            "object": self._object,
        }
        builder = builders.get(kind)
        return json_values() if builder is None else builder(schema)

    def _array(self, schema: JsonObject) -> SearchStrategy[JsonValue]:
        low, high = _size_bounds(schema, "minItems", "maxItems", cap=4)
        items = self.compile(schema.get("items", True))
        return st.lists(items, min_size=low, max_size=high).map(_as_json)

    def _object(self, schema: JsonObject) -> SearchStrategy[JsonValue]:
        properties = _object_of(schema.get("properties"))
        required = _strings_of(schema.get("required"))
        extra = schema.get("additionalProperties", True)
        unlisted: JsonValue = extra if extra is not False else True
        fixed = {key: self.compile(properties.get(key, unlisted)) for key in required}
        optional = {
            key: self.compile(value) for key, value in properties.items() if key not in fixed
        }
        base = st.fixed_dictionaries(fixed, optional=optional)
        if not isinstance(extra, dict):
            return base
        names = st.text(min_size=1, max_size=_SLACK).filter(lambda key: key not in properties)
        extras = st.dictionaries(names, self.compile(extra), max_size=2)
        return st.tuples(base, extras).map(lambda pair: {**pair[1], **pair[0]})


def declared_types(schema: JsonObject) -> list[str]:
    """Return the JSON types ``schema`` allows, inferred from its keywords if untyped."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [item for item in kind if isinstance(item, str)]
    hints = {
        "object": ("properties", "required", "additionalProperties"),
        "array": ("items", "minItems", "maxItems"),
        "string": ("pattern", "minLength", "maxLength"),
        "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
    }
    inferred = [name for name, keys in hints.items() if any(key in schema for key in keys)]
    return inferred or ["any"]


def _as_json(value: list[JsonValue]) -> JsonValue:
    return value


def _object_of(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _strings_of(value: JsonValue) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _number(schema: JsonObject, key: str) -> float | None:
    value = schema.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def _size_bounds(schema: JsonObject, low_key: str, high_key: str, *, cap: int) -> tuple[int, int]:
    low = _number(schema, low_key)
    high = _number(schema, high_key)
    floor = max(0, math.ceil(low)) if low is not None else 0
    ceiling = math.floor(high) if high is not None else floor + cap
    return floor, max(floor, ceiling)


def _bounds(schema: JsonObject) -> tuple[float | None, float | None, bool, bool]:
    """Return (low, high, low exclusive, high exclusive) from the 2019+ keywords."""
    low, high = _number(schema, "minimum"), _number(schema, "maximum")
    exclusive_low, exclusive_high = (
        _number(schema, "exclusiveMinimum"),
        _number(schema, "exclusiveMaximum"),
    )
    low_open = high_open = False
    if exclusive_low is not None and (low is None or exclusive_low >= low):
        low, low_open = exclusive_low, True
    if exclusive_high is not None and (high is None or exclusive_high <= high):
        high, high_open = exclusive_high, True
    return low, high, low_open, high_open


def _integer_range(schema: JsonObject) -> tuple[int, int]:
    low, high, low_open, high_open = _bounds(schema)
    first = -_MAX_SAFE_INT if low is None else math.floor(low) + 1 if low_open else math.ceil(low)
    last = _MAX_SAFE_INT if high is None else math.ceil(high) - 1 if high_open else math.floor(high)
    return first, last


def _integers(schema: JsonObject) -> SearchStrategy[JsonValue]:
    first, last = _integer_range(schema)
    return st.integers(min_value=first, max_value=last) if first <= last else st.nothing()


def _numbers(schema: JsonObject) -> SearchStrategy[JsonValue]:
    low, high, low_open, high_open = _bounds(schema)
    floats = st.floats(
        min_value=low,
        max_value=high,
        exclude_min=low_open and low is not None,
        exclude_max=high_open and high is not None,
        allow_nan=False,
        allow_infinity=False,
    )
    return st.one_of(_integers(schema), floats)


def _strings(schema: JsonObject) -> SearchStrategy[JsonValue]:
    low, high = _size_bounds(schema, "minLength", "maxLength", cap=_SLACK * 2)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        return st.from_regex(pattern, fullmatch=True).filter(lambda text: low <= len(text) <= high)
    return st.text(min_size=low, max_size=high)


# --- invalid values ---------------------------------------------------------------------------
#
# The strategies below are grouped by *kind* of violation (wrong type, missing property, out of
# range, ...), and ``_any_kind`` picks a kind first, each equally likely. Plain ``st.one_of``
# would not do: it flattens the branches of nested one_ofs, maps and flatmaps into one list and
# picks among those, so the six wrong types of a schema would outweigh its single bound six to
# one, and a bound nested in a property would come up about once in a hundred values.


def _any_kind(kinds: list[SearchStrategy[JsonValue]]) -> SearchStrategy[JsonValue]:
    """Draw from one of ``kinds``, each equally likely however many branches it has."""
    if len(kinds) == 1:
        return kinds[0]
    # An index drawn first keeps every kind one branch: ``flatmap`` of a single strategy is
    # not split up the way ``one_of`` splits its arguments.
    return st.sampled_from(range(len(kinds))).flatmap(kinds.__getitem__)


def _violations(compiler: _Compiler, schema: JsonValue) -> list[SearchStrategy[JsonValue]]:
    """Return one strategy per kind of violation ``schema`` allows (none: it accepts all)."""
    if not isinstance(schema, dict):
        return []
    found = _wrong_values(schema)
    if "object" in declared_types(schema) and isinstance(schema.get("properties", {}), dict):
        found.extend(_object_violations(compiler, schema))
    return found


def _wrong_values(schema: JsonObject) -> list[SearchStrategy[JsonValue]]:
    """Values of another type, outside an ``enum``/``const``, or of the right type out of range."""
    found: list[SearchStrategy[JsonValue]] = []
    if "enum" in schema or "const" in schema:
        found.append(json_values())
    kinds = declared_types(schema)
    if kinds != ["any"]:
        others = [kind for kind in _TYPES if kind not in kinds]
        if "number" in kinds:
            others.remove("integer")
        if others:
            found.append(st.one_of([_sample_of(kind) for kind in others]))
    found.extend(_out_of_range(schema, kinds))
    return found


@functools.cache
def _sample_of(kind: str) -> SearchStrategy[JsonValue]:
    samples: dict[str, Callable[[], SearchStrategy[JsonValue]]] = {
        "null": st.none,
        "boolean": st.booleans,
        "integer": lambda: st.integers(min_value=-_MAX_SAFE_INT, max_value=_MAX_SAFE_INT),
        "number": lambda: st.floats(allow_nan=False, allow_infinity=False).filter(
            lambda number: not number.is_integer()
        ),
        "string": lambda: st.text(max_size=_SLACK),
        "array": lambda: st.lists(json_values(max_leaves=3), max_size=3).map(_as_json),
        "object": lambda: st.dictionaries(
            st.text(max_size=_SLACK), json_values(max_leaves=3), max_size=3
        ),
    }
    return samples[kind]()


def _out_of_range(schema: JsonObject, kinds: list[str]) -> list[SearchStrategy[JsonValue]]:
    found: list[SearchStrategy[JsonValue]] = []
    low, high, low_open, high_open = _bounds(schema)
    as_float = "integer" not in kinds
    if low is not None:
        # Below ``low``, or ``low`` itself when it is excluded; never a value inside the range.
        below = st.integers(max_value=math.ceil(low) - 1)
        found.append(_beyond(below, low if low_open else None, as_float=as_float))
    if high is not None:
        above = st.integers(min_value=math.floor(high) + 1)
        found.append(_beyond(above, high if high_open else None, as_float=as_float))
    found.extend(_length_violations(schema, "minLength", "maxLength", st.text))
    found.extend(_length_violations(schema, "minItems", "maxItems", _short_lists))
    if isinstance(schema.get("pattern"), str):
        found.append(st.text(max_size=_SLACK))
    return found


def _beyond(
    integers: SearchStrategy[int], bound: float | None, *, as_float: bool
) -> SearchStrategy[JsonValue]:
    """Whole numbers past a bound (floats for a ``number``), plus an excluded ``bound`` itself."""
    numbers: SearchStrategy[JsonValue] = integers.map(float) if as_float else integers
    if bound is None:
        return numbers
    return st.one_of(numbers, st.just(_integral(bound)))


def _integral(value: float) -> JsonValue:
    # A bound of 3.0 excluded from an integer schema is violated by 3, which is an integer.
    return int(value) if value == math.floor(value) else value


def _short_lists(*, min_size: int, max_size: int) -> SearchStrategy[JsonValue]:
    nulls: SearchStrategy[JsonValue] = st.none()
    return st.lists(nulls, min_size=min_size, max_size=max_size).map(_as_json)


def _length_violations(
    schema: JsonObject,
    low_key: str,
    high_key: str,
    make: Callable[..., SearchStrategy[JsonValue]],
) -> list[SearchStrategy[JsonValue]]:
    found: list[SearchStrategy[JsonValue]] = []
    low, high = _number(schema, low_key), _number(schema, high_key)
    if low is not None and low >= 1:
        found.append(make(min_size=0, max_size=math.ceil(low) - 1))
    if high is not None:
        size = math.floor(high) + 1
        found.append(make(min_size=size, max_size=size + _SLACK))
    return found


def _object_violations(compiler: _Compiler, schema: JsonObject) -> list[SearchStrategy[JsonValue]]:
    """A required property left out, an unexpected one added, one property's value invalid."""
    valid = compiler.compile(schema).filter(lambda value: isinstance(value, dict))
    properties = _object_of(schema.get("properties"))
    found: list[SearchStrategy[JsonValue]] = []
    required = _strings_of(schema.get("required"))
    if required:
        found.append(st.tuples(valid, st.sampled_from(required)).map(_without))
    if schema.get("additionalProperties") is False:
        names = st.text(min_size=1, max_size=_SLACK).filter(lambda key: key not in properties)
        found.append(st.tuples(valid, names, json_values(max_leaves=3)).map(_with))
    # Every property's violations are one kind: a schema with many properties does not drown
    # the object's own kinds (above) in them.
    broken = [
        st.tuples(valid, st.just(key), _any_kind(bad)).map(_with)
        for key, subschema in properties.items()
        if (bad := _violations(compiler, compiler.resolve(subschema)))
    ]
    if broken:
        found.append(_any_kind(broken))
    return found


def _without(pair: tuple[JsonValue, str]) -> JsonValue:
    value, key = pair
    assert isinstance(value, dict)
    return {name: item for name, item in value.items() if name != key}


def _with(triple: tuple[JsonValue, str, JsonValue]) -> JsonValue:
    value, key, item = triple
    assert isinstance(value, dict)
    return {**value, key: item}
