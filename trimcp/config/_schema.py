"""Declare settings: the per-field constraints the generic validator reads.

A settings section is a frozen dataclass whose fields carry ``metadata=spec(...)`` (or
``metadata=internal()``). The validator (``_validate.py``) learns everything else from the
field's type hint, so adding a section means adding a dataclass and one field on
``SysConfig``; no validation code changes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# The key under which a field's Spec sits in dataclasses.Field.metadata.
_SPEC_KEY = "trimcp.config"


@dataclass(frozen=True, slots=True)
class Check:
    """A value constraint beyond the type, with the words that explain it.

    Attributes:
        test: returns True when the (already type-converted) value is acceptable.
        rule: how the constraint reads after the type, e.g. ``">= 0"``.
    """

    # Any, not object: a check is written for one field whose type the hint fixes, and
    # `lambda v: v >= 0` does not type-check against object.
    test: Callable[[Any], bool]
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """What the validator needs to know about one field besides its type.

    Attributes:
        meaning: what the setting does, in a few words; shown in error messages.
        check: an extra constraint on the value, or None.
        normalize: applied to a string value before choices and ``check`` are tested,
            e.g. ``str.upper`` for case-insensitive choices.
        example: the value an error message suggests, when the default makes a poor
            example (an empty string, say); None means the default.
        from_file: False for fields the loader fills in itself (such as
            ``SysConfig.sources``); a file that sets one gets an unknown-key error.
    """

    meaning: str = ""
    check: Check | None = None
    normalize: Callable[[str], str] | None = None
    example: object = None
    from_file: bool = True


_NO_SPEC = Spec()


def spec(
    *,
    meaning: str,
    check: Check | None = None,
    normalize: Callable[[str], str] | None = None,
    example: object = None,
) -> Mapping[str, Spec]:
    """Return field metadata declaring what a setting means and how its value is checked.

    Use it as ``field(default=1, metadata=spec(meaning="...", check=at_least(0)))``. The
    default must itself pass the check.

    Args:
        meaning: what the setting does and its unit, e.g. "seconds a call waits for a reply".
        check: an extra constraint, e.g. :func:`at_least`.
        normalize: applied to string input first, e.g. ``str.upper``.
        example: the value error messages suggest instead of the default.
    """
    return {_SPEC_KEY: Spec(meaning=meaning, check=check, normalize=normalize, example=example)}


def internal() -> Mapping[str, Spec]:
    """Return field metadata for a field the loader fills in and files may not set."""
    return {_SPEC_KEY: Spec(from_file=False)}


def spec_of(field: dataclasses.Field[object]) -> Spec:
    """Return the Spec declared for ``field``, or an empty one for a plain field."""
    spec = field.metadata.get(_SPEC_KEY, _NO_SPEC)
    if not isinstance(spec, Spec):
        raise TypeError(f"field {field.name!r} has foreign metadata under {_SPEC_KEY!r}")
    return spec


def at_least(limit: float) -> Check:
    """Require ``value >= limit``. NaN fails, because every comparison with NaN is false."""
    return Check(test=lambda value: value >= limit, rule=f">= {limit:g}")


def above(limit: float) -> Check:
    """Require ``value > limit``. NaN fails, because every comparison with NaN is false."""
    return Check(test=lambda value: value > limit, rule=f"> {limit:g}")


def between(low: int, high: int) -> Check:
    """Require ``low <= value <= high``, both ends included."""
    return Check(test=lambda value: low <= value <= high, rule=f"from {low} to {high}")


def non_empty() -> Check:
    """Require a non-empty string or array, ignoring surrounding whitespace for strings."""
    return Check(
        test=lambda value: bool(value.strip() if isinstance(value, str) else value),
        rule="that is not empty",
    )
