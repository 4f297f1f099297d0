"""Classify Python type hints into the few shapes that JSON Schema and conversion know.

One classifier feeds two consumers: ``_schema`` (hint -> JSON Schema) and ``_validation``
(JSON value -> Python value). Keeping the classification here means the schema a tool
advertises and the conversion its arguments get can never disagree about a type.

Pydantic is never imported: a model class is recognised by its ``model_json_schema`` and
``model_validate`` class methods (pydantic v2), so trimcp works with or without it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import types
import typing
import uuid
from collections import abc
from dataclasses import dataclass
from pathlib import PurePath
from typing import Annotated, Any, Literal, NotRequired, Required, Union

from trimcp.errors import SchemaError

__all__ = [
    "MISSING",
    "FieldSpec",
    "Hint",
    "HintKind",
    "classify",
    "fields_of",
    "is_pydantic_model",
]


class _Missing(enum.Enum):
    MISSING = "missing"

    def __repr__(self) -> str:
        return "MISSING"


#: No default value (a required field or parameter).
MISSING = _Missing.MISSING


class HintKind(enum.Enum):
    """The shapes a supported hint can take."""

    ANY = "any"
    NONE = "none"
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    STR = "str"
    DATETIME = "datetime"
    DATE = "date"
    TIME = "time"
    UUID = "uuid"
    PATH = "path"
    LITERAL = "literal"
    ENUM = "enum"
    UNION = "union"
    LIST = "list"
    SET = "set"
    TUPLE = "tuple"
    VARTUPLE = "vartuple"
    MAPPING = "mapping"
    TYPEDDICT = "typeddict"
    DATACLASS = "dataclass"
    PYDANTIC = "pydantic"


@typing.final
@dataclass(frozen=True, slots=True)
class Hint:
    """A classified hint.

    ``tp`` is the class for ENUM / TYPEDDICT / DATACLASS / PYDANTIC / PATH and the container
    (``list``, ``set``, ``frozenset``) for LIST / SET. ``args`` holds inner hints (UNION,
    LIST, SET, TUPLE, VARTUPLE, MAPPING) or the allowed values (LITERAL). ``metadata`` is
    what ``Annotated`` attached, outermost last.
    """

    kind: HintKind
    tp: object = None
    args: tuple[object, ...] = ()
    metadata: tuple[object, ...] = ()


@typing.final
@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a dataclass or TypedDict: its name, hint and default."""

    name: str
    hint: object
    required: bool
    default: object = MISSING


# Exact classes first; ``datetime`` is a subclass of ``date``, so exact matching matters.
_ATOMS: dict[object, HintKind] = {
    Any: HintKind.ANY,
    object: HintKind.ANY,
    None: HintKind.NONE,
    type(None): HintKind.NONE,
    bool: HintKind.BOOL,
    int: HintKind.INT,
    float: HintKind.FLOAT,
    str: HintKind.STR,
    dt.datetime: HintKind.DATETIME,
    dt.date: HintKind.DATE,
    dt.time: HintKind.TIME,
    uuid.UUID: HintKind.UUID,
}

_SEQUENCES: dict[object, object] = {
    list: list,
    abc.Sequence: list,
    abc.MutableSequence: list,
    abc.Iterable: list,
    abc.Collection: list,
    set: set,
    abc.Set: frozenset,
    abc.MutableSet: set,
    frozenset: frozenset,
}

_MAPPINGS = {dict, abc.Mapping, abc.MutableMapping}


def is_pydantic_model(tp: object) -> bool:
    """Tell whether ``tp`` is a pydantic v2 model class (duck-typed, pydantic not imported)."""
    return isinstance(tp, type) and all(
        callable(getattr(tp, attr, None)) for attr in ("model_json_schema", "model_validate")
    )


def classify(hint: object) -> Hint:
    """Classify ``hint``, peeling ``Annotated``, ``NewType`` and ``Required``/``NotRequired``.

    Raises:
        SchemaError: the hint is not one trimcp can describe as JSON (``bytes``, a
            ``dict`` with non-``str`` keys, an arbitrary class, ...).
    """
    origin = typing.get_origin(hint)
    if origin is Annotated:
        inner = classify(hint.__origin__)  # type: ignore[attr-defined]  # Annotated alias
        metadata = inner.metadata + tuple(hint.__metadata__)  # type: ignore[attr-defined]
        return dataclasses.replace(inner, metadata=metadata)
    if origin in (Required, NotRequired):
        return classify(typing.get_args(hint)[0])
    if isinstance(hint, typing.NewType):
        return classify(hint.__supertype__)
    try:
        atom = _ATOMS.get(hint)
    except TypeError:  # an unhashable object used as a hint
        atom = None
    if atom is not None:
        return Hint(atom)
    if origin is not None:
        return _classify_generic(hint, origin)
    return _classify_class(hint)


def _classify_generic(hint: object, origin: object) -> Hint:
    args = typing.get_args(hint)
    if origin is Literal:
        return Hint(HintKind.LITERAL, args=args)
    if origin is Union or origin is types.UnionType:
        return Hint(HintKind.UNION, args=args)
    if origin in _SEQUENCES:
        container = _SEQUENCES[origin]
        kind = HintKind.LIST if container is list else HintKind.SET
        return Hint(kind, tp=container, args=args[:1] or (Any,))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return Hint(HintKind.VARTUPLE, tp=tuple, args=args[:1])
        return Hint(HintKind.TUPLE, tp=tuple, args=() if args == ((),) else args)
    if origin in _MAPPINGS:
        key = args[0] if args else str
        if classify(key).kind is not HintKind.STR:
            raise SchemaError(f"{hint!r}: JSON object keys are strings, use dict[str, ...]")
        return Hint(HintKind.MAPPING, tp=dict, args=args[1:2] or (Any,))
    raise SchemaError(f"{hint!r} cannot be described as JSON Schema")


_CLASS_KINDS: tuple[tuple[typing.Callable[[type], bool], HintKind], ...] = (
    (lambda tp: issubclass(tp, enum.Enum), HintKind.ENUM),
    (lambda tp: issubclass(tp, PurePath), HintKind.PATH),
    (typing.is_typeddict, HintKind.TYPEDDICT),
    (dataclasses.is_dataclass, HintKind.DATACLASS),
    (is_pydantic_model, HintKind.PYDANTIC),
)
_BARE_CONTAINERS = {
    list: HintKind.LIST,
    set: HintKind.SET,
    frozenset: HintKind.SET,
    tuple: HintKind.VARTUPLE,
    dict: HintKind.MAPPING,
}


def _classify_class(hint: object) -> Hint:
    if not isinstance(hint, type):
        raise SchemaError(f"{hint!r} is not a type trimcp can describe as JSON Schema")
    for predicate, kind in _CLASS_KINDS:
        if predicate(hint):
            return Hint(kind, tp=hint)
    if hint in _BARE_CONTAINERS:
        return Hint(_BARE_CONTAINERS[hint], tp=hint, args=(Any,))
    raise SchemaError(f"{hint.__qualname__} is not a type trimcp can describe as JSON Schema")


def _resolved_hints(tp: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except (NameError, TypeError) as exc:
        raise SchemaError(f"cannot resolve the type hints of {tp.__qualname__}: {exc}") from exc


def _is_required(name: str, hint: object, required_keys: frozenset[str]) -> bool:
    # Under ``from __future__ import annotations`` Python 3.11 computes ``__required_keys__``
    # from unevaluated strings and misses ``NotRequired["..."]``; the resolved hint knows.
    origin = typing.get_origin(hint)
    if origin is NotRequired:
        return False
    return origin is Required or name in required_keys


def fields_of(hint: Hint) -> tuple[FieldSpec, ...]:
    """Return the fields of a TYPEDDICT or DATACLASS hint, in declaration order.

    TypedDict requiredness comes from ``__required_keys__``, which already accounts for
    ``total=False``, ``Required`` and ``NotRequired``. Dataclass fields with ``init=False``
    are left out: the constructor does not take them.
    """
    tp = hint.tp
    assert isinstance(tp, type)
    hints = _resolved_hints(tp)
    if hint.kind is HintKind.TYPEDDICT:
        required: frozenset[str] = tp.__required_keys__  # type: ignore[attr-defined]
        return tuple(
            FieldSpec(name, h, _is_required(name, h, required)) for name, h in hints.items()
        )
    specs = []
    for field in dataclasses.fields(tp):
        if not field.init:
            continue
        default: object = MISSING
        if field.default is not dataclasses.MISSING:
            default = field.default
        has_default = default is not MISSING or field.default_factory is not dataclasses.MISSING
        specs.append(FieldSpec(field.name, hints.get(field.name, Any), not has_default, default))
    return tuple(specs)
