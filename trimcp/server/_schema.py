"""Derive a tool's ``inputSchema`` / ``outputSchema`` from a function's signature.

Pure and I/O-free: ``derive_function_schema(fn)`` reads type hints and the Google-style
docstring once, at decoration time, and returns a ``FunctionSchema`` that the decorator API
(later, in this package) advertises in ``tools/list`` and that ``_validation`` uses to check
and convert ``tools/call`` arguments.

Schemas are JSON Schema draft 2020-12, the MCP 2025-11-25 default dialect, so they carry no
``$schema`` (Basic > JSON Schema Usage,
https://modelcontextprotocol.io/specification/2025-11-25/basic#json-schema-usage).
Both roots are ``"type": "object"`` (Tools,
https://modelcontextprotocol.io/specification/2025-11-25/server/tools). Named structured
types (dataclasses, TypedDicts, pydantic models) go to ``$defs`` and are reached
by ``$ref``, which also describes recursive types; objects derived from Python classes are
closed (``additionalProperties: false``) because the class could not accept more keys.

Not here: validation (``_validation``), content blocks, and the decorators themselves.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trimcp.errors import OutputError, SchemaError
from trimcp.server._docstrings import parse_docstring
from trimcp.server._hints import MISSING, Hint, HintKind, classify, fields_of
from trimcp.server._result import unwrap_tool_result
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    import enum
    from collections.abc import Callable

    from trimcp.protocol import JsonObject, JsonValue

__all__ = [
    "ContextMarker",
    "FunctionSchema",
    "OutputSpec",
    "Param",
    "ParameterSpec",
    "derive_function_schema",
    "derive_output_schema",
    "schema_for_type",
    "structured_content",
    "to_jsonable",
]


class ContextMarker:
    """Base of the request context the server injects (``trimcp.server.Context``).

    A parameter annotated with a subclass of this is not part of the input schema; the
    server passes it by keyword. Kept here, apart from ``Context`` itself, so that schema
    derivation needs nothing from the runtime side of the package.
    """

    __slots__ = ()


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """Describe a parameter inside ``Annotated[T, Param(...)]``.

    Each set field becomes the JSON Schema keyword of the same meaning (2020-12 Validation,
    sections 6.2 and 6.3): ``ge`` -> ``minimum``, ``gt`` -> ``exclusiveMinimum``, ``le`` ->
    ``maximum``, ``lt`` -> ``exclusiveMaximum``, ``min_length``/``max_length`` ->
    ``minLength``/``maxLength`` on strings and ``minItems``/``maxItems`` on arrays,
    ``pattern`` (ECMA-262 regex, unanchored), ``examples``, ``title``, ``description``.
    """

    description: str | None = None
    title: str | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    examples: tuple[object, ...] | None = None

    def keywords(self, schema_type: object) -> dict[str, object]:
        """Return the JSON Schema keywords this marker adds to a schema of ``schema_type``."""
        is_array = schema_type == "array"
        names = {
            "description": "description",
            "title": "title",
            "ge": "minimum",
            "gt": "exclusiveMinimum",
            "le": "maximum",
            "lt": "exclusiveMaximum",
            "min_length": "minItems" if is_array else "minLength",
            "max_length": "maxItems" if is_array else "maxLength",
            "pattern": "pattern",
        }
        out: dict[str, object] = {
            keyword: getattr(self, attr)
            for attr, keyword in names.items()
            if getattr(self, attr) is not None
        }
        if self.examples is not None:
            out["examples"] = [to_jsonable(example) for example in self.examples]
        return out


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class ParameterSpec:
    """One schema-visible parameter: how to check it and how to pass it."""

    name: str
    hint: object
    required: bool
    default: object = MISSING
    positional_only: bool = False


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSpec:
    """The outputSchema of a function and whether its value is wrapped as ``{"result": v}``."""

    schema: JsonObject
    hint: object
    wrapped: bool


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FunctionSchema:
    """Everything derived from one function's signature and docstring.

    ``input_schema`` and ``output.schema`` are built once and must not be mutated: the
    validators compiled for them are cached per schema object (``_validation``).
    """

    name: str
    description: str | None
    input_schema: JsonObject
    parameters: tuple[ParameterSpec, ...]
    context_parameters: tuple[str, ...]
    output: OutputSpec | None


_ATOM_SCHEMAS: dict[HintKind, dict[str, str]] = {
    HintKind.ANY: {},
    HintKind.NONE: {"type": "null"},
    HintKind.BOOL: {"type": "boolean"},
    HintKind.INT: {"type": "integer"},
    HintKind.FLOAT: {"type": "number"},
    HintKind.STR: {"type": "string"},
    # Formats from 2020-12 Validation section 7.3; "path" is not a registered format, so
    # validators treat it as an annotation (pydantic uses the same word).
    HintKind.DATETIME: {"type": "string", "format": "date-time"},
    HintKind.DATE: {"type": "string", "format": "date"},
    HintKind.TIME: {"type": "string", "format": "time"},
    HintKind.UUID: {"type": "string", "format": "uuid"},
    HintKind.PATH: {"type": "string", "format": "path"},
}

_JSON_TYPE_OF: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


class _Builder:
    """Build schemas for hints, collecting named types in ``defs`` (keyed by def name)."""

    def __init__(self, *, mode: str) -> None:
        self.mode = mode  # pydantic's "validation" (inputs) or "serialization" (outputs)
        self.defs: dict[str, JsonObject] = {}
        self._names: dict[object, str] = {}

    def schema(self, hint: object) -> JsonObject:
        shape = classify(hint)
        schema = self._shape(shape)
        for meta in shape.metadata:
            schema = _apply_metadata(schema, meta)
        return schema

    def _shape(self, shape: Hint) -> JsonObject:
        if shape.kind in _ATOM_SCHEMAS:
            return dict(_ATOM_SCHEMAS[shape.kind])
        if shape.kind is HintKind.LITERAL:
            return _enum_schema([to_jsonable(value) for value in shape.args])
        if shape.kind is HintKind.ENUM:
            return self._enum(shape)
        if shape.kind is HintKind.UNION:
            return _union([self.schema(arg) for arg in shape.args])
        if shape.kind in (HintKind.TYPEDDICT, HintKind.DATACLASS, HintKind.PYDANTIC):
            return self._named(shape)
        return self._container(shape)

    def _enum(self, shape: Hint) -> JsonObject:
        assert isinstance(shape.tp, type)
        members = list(typing.cast("type[enum.Enum]", shape.tp))
        schema = _enum_schema([to_jsonable(member.value) for member in members])
        schema["title"] = shape.tp.__name__
        return schema

    def _container(self, shape: Hint) -> JsonObject:
        if shape.kind is HintKind.MAPPING:
            return {"type": "object", "additionalProperties": self.schema(shape.args[0])}
        if shape.kind is HintKind.TUPLE:
            items: list[JsonValue] = [self.schema(arg) for arg in shape.args]
            n = len(items)
            # 2020-12 Core 10.3.1.1: prefixItems, and "items": false forbids extra members.
            return {
                "type": "array",
                "prefixItems": items,
                "items": False,
                "minItems": n,
                "maxItems": n,
            }
        schema: JsonObject = {"type": "array", "items": self.schema(shape.args[0])}
        if shape.kind is HintKind.SET:
            schema["uniqueItems"] = True
        return schema

    def _named(self, shape: Hint) -> JsonObject:
        assert isinstance(shape.tp, type)
        tp = shape.tp
        if tp in self._names:
            return {"$ref": f"#/$defs/{self._names[tp]}"}
        if shape.kind is HintKind.PYDANTIC:
            return self._pydantic(tp)
        name = self._def_name(tp)
        self._names[tp] = name
        self.defs[name] = {}  # placeholder: a recursive reference sees the name already
        self.defs[name] = self._object(shape, title=tp.__name__)
        return {"$ref": f"#/$defs/{name}"}

    def _object(self, shape: Hint, *, title: str) -> JsonObject:
        properties: JsonObject = {}
        required: list[JsonValue] = []
        for spec in fields_of(shape):
            prop = self.schema(spec.hint)
            if spec.default is not MISSING:
                _set_default(prop, spec.default)
            properties[spec.name] = prop
            if spec.required:
                required.append(spec.name)
        schema: JsonObject = {"type": "object", "title": title, "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema

    def _pydantic(self, tp: type) -> JsonObject:
        raw = self._pydantic_raw(tp, prefix="")
        if raw is None:  # pydantic named a nested type like one of ours: namespace its defs
            raw = self._pydantic_raw(tp, prefix=f"{self._def_name(tp)}.")
            if raw is None:
                raise SchemaError(f"pydantic model {tp.__qualname__} clashes with $defs names")
        if set(raw) == {"$ref"}:  # a recursive model: pydantic put itself in $defs already
            return raw
        name = self._def_name(tp)
        self._names[tp] = name
        self.defs[name] = raw
        return {"$ref": f"#/$defs/{name}"}

    def _pydantic_raw(self, tp: type, *, prefix: str) -> JsonObject | None:
        """Ask pydantic for ``tp``'s schema and merge its ``$defs``; None on a name clash."""
        method = tp.model_json_schema  # type: ignore[attr-defined]  # duck-typed pydantic
        raw: JsonObject = dict(method(ref_template=f"#/$defs/{prefix}{{model}}", mode=self.mode))
        nested = raw.pop("$defs", {})
        assert isinstance(nested, dict)
        defs = {f"{prefix}{key}": value for key, value in nested.items()}
        if any(key in self.defs and self.defs[key] != value for key, value in defs.items()):
            return None
        for key, value in defs.items():
            assert isinstance(value, dict)
            self.defs[key] = value
        return raw

    def _def_name(self, tp: type) -> str:
        name = tp.__name__
        if name in self.defs:
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{tp.__module__}.{tp.__qualname__}")
        base, n = name, 2
        while name in self.defs:
            name, n = f"{base}_{n}", n + 1
        return name


def _apply_metadata(schema: JsonObject, meta: object) -> JsonObject:
    """Fold one ``Annotated`` metadata item into ``schema``; unknown items are ignored."""
    if isinstance(meta, str):
        return {**schema, "description": meta}
    if isinstance(meta, Param):
        if "$ref" in schema:  # siblings of $ref are allowed in 2020-12, but keep it readable
            schema = {"allOf": [schema]}
        return {**schema, **typing.cast("JsonObject", meta.keywords(schema.get("type")))}
    description = getattr(meta, "description", None)  # pydantic FieldInfo and the like
    if isinstance(description, str):
        return {**schema, "description": description}
    return schema


def _enum_schema(values: list[JsonValue]) -> JsonObject:
    schema: JsonObject = {"enum": values}
    kinds = {_JSON_TYPE_OF.get(type(value), "") for value in values}
    if len(kinds) == 1 and "" not in kinds:
        schema = {"type": kinds.pop(), "enum": values}
    return schema


def _union(members: list[JsonObject]) -> JsonObject:
    """Combine member schemas: a ``type`` list when all are bare types, else ``anyOf``."""
    if all(set(member) == {"type"} and isinstance(member["type"], str) for member in members):
        names: list[JsonValue] = []
        for member in members:
            if member["type"] not in names:
                names.append(member["type"])
        return {"type": names[0] if len(names) == 1 else names}
    return {"anyOf": typing.cast("list[JsonValue]", members)}


def _set_default(schema: JsonObject, default: object) -> None:
    """Record ``default`` as the ``default`` keyword when it is JSON-able; else say nothing."""
    try:
        schema["default"] = to_jsonable(default)
    except OutputError:
        return


def schema_for_type(hint: object, *, mode: str = "validation") -> JsonObject:
    """Return a self-contained JSON Schema for ``hint`` (with ``$defs`` if it needs them).

    Raises:
        SchemaError: the hint cannot be described.
    """
    builder = _Builder(mode=mode)
    schema = builder.schema(hint)
    if builder.defs:
        schema = {**schema, "$defs": dict[str, "JsonValue"](builder.defs)}
    return schema


# --- functions -------------------------------------------------------------------------------


def _is_context(hint: object) -> bool:
    hint = _context_target(hint)
    return isinstance(hint, type) and ContextMarker in hint.__mro__


def _context_target(hint: object) -> object:
    """Return the class behind ``hint``, looking through ``Annotated`` and ``Optional``."""
    if typing.get_origin(hint) is typing.Annotated:
        return _context_target(typing.get_args(hint)[0])
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and args:
        return _context_target(args[0])
    return hint


def _resolve_hints(fn: Callable[..., object]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError) as exc:
        raise SchemaError(f"cannot resolve the type hints of {fn!r}: {exc}") from exc


def derive_function_schema(
    fn: Callable[..., object],
    *,
    name: str | None = None,
    description: str | None = None,
    exclude: frozenset[str] = frozenset(),
    structured_output: bool | None = None,
) -> FunctionSchema:
    """Describe ``fn``'s parameters (inputSchema) and return value (outputSchema).

    A parameter without a default is required; a default becomes ``default`` (when it is
    JSON-able) and makes the parameter optional. A parameter without an annotation accepts
    any JSON value. Parameters named in ``exclude`` or annotated with ``Context`` are left
    out of the schema and listed in ``context_parameters``. Descriptions come from
    ``Annotated`` metadata first, then from the docstring's ``Args:`` section; the tool
    description is ``description`` or the docstring text before its first section.

    ``structured_output``: ``None`` derives an outputSchema when the return annotation can
    be described and omits it otherwise; ``True`` requires one; ``False`` never derives one.

    Raises:
        SchemaError: ``*args``/``**kwargs``, a positional-only context parameter, or a hint
            that cannot be described.
    """
    hints = _resolve_hints(fn)
    doc = parse_docstring(inspect.getdoc(fn))
    builder = _Builder(mode="validation")
    properties: JsonObject = {}
    required: list[JsonValue] = []
    specs: list[ParameterSpec] = []
    context: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name, Any)
        if _is_excluded(param, hint, exclude):
            context.append(param.name)
            continue
        spec = _parameter_spec(param, hint)
        properties[param.name] = _property(builder, spec, doc.params.get(param.name))
        if spec.required:
            required.append(param.name)
        specs.append(spec)
    input_schema = _object_root(properties, required, builder.defs)
    return FunctionSchema(
        name=name or str(getattr(fn, "__name__", "tool")),
        description=description or doc.description,
        input_schema=input_schema,
        parameters=tuple(specs),
        context_parameters=tuple(context),
        output=_output_for(hints, structured_output, doc.returns),
    )


def _is_excluded(param: inspect.Parameter, hint: object, exclude: frozenset[str]) -> bool:
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
        raise SchemaError(
            f"parameter {param} cannot be described: tools take named JSON arguments, "
            "so *args and **kwargs are not supported; name each parameter"
        )
    excluded = param.name in exclude or _is_context(hint)
    if excluded and param.kind is param.POSITIONAL_ONLY:
        raise SchemaError(f"context parameter {param.name!r} must not be positional-only")
    return excluded


def _parameter_spec(param: inspect.Parameter, hint: object) -> ParameterSpec:
    has_default = param.default is not inspect.Parameter.empty
    return ParameterSpec(
        name=param.name,
        hint=hint,
        required=not has_default,
        default=param.default if has_default else MISSING,
        positional_only=param.kind is param.POSITIONAL_ONLY,
    )


def _property(builder: _Builder, spec: ParameterSpec, doc_text: str | None) -> JsonObject:
    try:
        prop = builder.schema(spec.hint)
    except SchemaError as exc:
        raise SchemaError(f"parameter {spec.name!r}: {exc}") from exc
    if doc_text and "description" not in prop:
        prop["description"] = doc_text
    if spec.default is not MISSING:
        _set_default(prop, spec.default)
    return prop


def _object_root(
    properties: JsonObject, required: list[JsonValue], defs: dict[str, JsonObject]
) -> JsonObject:
    # MCP 2025-11-25 Tools: inputSchema root is "type": "object"; a no-argument tool is
    # advertised as {"type": "object", "additionalProperties": false}.
    schema: JsonObject = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if defs:
        schema["$defs"] = dict[str, "JsonValue"](defs)
    return schema


# --- outputs ---------------------------------------------------------------------------------

_STRUCTURED = {HintKind.TYPEDDICT, HintKind.DATACLASS, HintKind.PYDANTIC, HintKind.MAPPING}


def _output_for(
    hints: dict[str, Any], structured_output: bool | None, returns_doc: str | None
) -> OutputSpec | None:
    if structured_output is False:
        return None
    if "return" not in hints or hints["return"] in (None, type(None)):
        if structured_output:
            raise SchemaError("structured output needs a return annotation other than None")
        return None
    try:
        return derive_output_schema(unwrap_tool_result(hints["return"]), description=returns_doc)
    except SchemaError:
        if structured_output:
            raise
        return None


def derive_output_schema(hint: object, *, description: str | None = None) -> OutputSpec:
    """Describe a return annotation as an outputSchema (root ``"type": "object"``).

    Objects (TypedDict, dataclass, pydantic model, ``dict[str, X]``) are the schema
    themselves; anything else is wrapped as ``{"result": ...}`` and ``wrapped`` is set so
    that ``structured_content`` wraps the value the same way.

    Raises:
        SchemaError: the annotation cannot be described.
    """
    builder = _Builder(mode="serialization")
    inner = builder.schema(hint)
    wrapped = classify(hint).kind not in _STRUCTURED
    if wrapped:
        if description:
            inner = {**inner, "description": description}
        schema: JsonObject = {"type": "object", "properties": {"result": inner}}
        schema["required"] = ["result"]
    else:
        schema = _inline_root(inner, builder.defs)
        _drop_unreferenced(schema, builder.defs)
    if builder.defs:
        schema["$defs"] = dict[str, "JsonValue"](builder.defs)
    return OutputSpec(schema=schema, hint=hint, wrapped=wrapped)


def _inline_root(schema: JsonObject, defs: dict[str, JsonObject]) -> JsonObject:
    """Copy a root ``$ref`` target in place, so the root itself says ``"type": "object"``."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs[ref.removeprefix("#/$defs/")]
        return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return dict(schema)


def _drop_unreferenced(root: JsonObject, defs: dict[str, JsonObject]) -> None:
    """Remove definitions that nothing refers to any more (the one inlined at the root)."""
    text = json.dumps([root, defs])
    for name in list(defs):
        if f'"#/$defs/{name}"' not in text:
            del defs[name]


def structured_content(output: OutputSpec, value: object) -> JsonObject:
    """Turn a tool's return value into ``structuredContent`` for ``output``.

    Raises:
        OutputError: the value is not JSON-able, or (unwrapped) not an object.
    """
    data = to_jsonable(value)
    if output.wrapped:
        return {"result": data}
    if not isinstance(data, dict):
        kind = type(value).__name__
        raise OutputError(f"the tool returned {kind}, but its outputSchema is an object")
    return data
