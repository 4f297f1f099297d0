"""Which scopes a request needs: the server's own, and per tool, resource or prompt (pure).

Scope strings are RFC 6749 section 3.3 lists: scope tokens separated by spaces. A token's
grant comes as the ``scope`` claim (one such string) or, from some authorization servers,
``scp`` (an array, or a string too); ``granted_scopes`` reads either.

``ScopeRules`` maps glob patterns of names (``fnmatch``: ``*``, ``?``, ``[...]``) to the
scopes a call needs: ``tools/call`` of a matching tool, ``resources/read`` (or subscribe)
of a matching URI, ``prompts/get`` of a matching prompt. Every matching rule applies, so a
call needs the union of their scopes: adding a rule can only make the server stricter.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from ._challenge import scope_token_ok

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "Operation",
    "OperationKind",
    "ScopeRule",
    "ScopeRules",
    "granted_scopes",
    "parse_scope_rule",
    "split_scopes",
]

#: What a per-name rule is about: a tool (by name), a resource (by URI), a prompt (by name).
OperationKind = Literal["tool", "resource", "prompt"]
#: One operation a request body asks for, e.g. ("tool", "delete_file").
Operation = tuple[OperationKind, str]


def split_scopes(value: str) -> tuple[str, ...]:
    """Split a space-separated scope string; runs of spaces and empty entries are ignored."""
    return tuple(dict.fromkeys(part for part in value.split(" ") if part))


def granted_scopes(claims: dict[str, object] | object) -> frozenset[str]:
    """Return the scopes a token's claims grant: ``scope`` (a string), else ``scp``.

    Entries that are not strings are ignored; a claims object that is not a mapping grants
    nothing.
    """
    if not isinstance(claims, dict):
        return frozenset()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(split_scopes(value))
        if isinstance(value, list):
            return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


@final
@dataclass(frozen=True, slots=True)
class ScopeRule:
    """Calls of names matching ``pattern`` need every scope in ``scopes``."""

    kind: OperationKind
    pattern: str
    scopes: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.pattern:
            raise ValueError("a scope rule needs a name pattern, e.g. 'delete_*'")
        if not self.scopes:
            raise ValueError(f"the scope rule for {self.pattern!r} names no scope")
        bad = [scope for scope in self.scopes if not scope_token_ok(scope)]
        if bad:
            raise ValueError(
                f"the scope rule for {self.pattern!r} has invalid scopes {bad}: a scope is "
                'visible ASCII without spaces, " or \\'
            )


def parse_scope_rule(kind: OperationKind, text: str) -> ScopeRule:
    """Read ``"pattern=scope1 scope2"`` (the ``[auth]`` table's form) as a rule.

    The pattern is everything before the last ``=``, so a resource URI pattern may hold
    ``=`` (``file:///data?x=*=admin``).

    Raises:
        ValueError: no ``=``, an empty pattern, no scope, or an invalid scope token.
    """
    pattern, equals, scopes = text.rpartition("=")
    if not equals:
        raise ValueError(f"{text!r} is not of the form 'pattern=scope1 scope2'")
    return ScopeRule(kind, pattern.strip(), split_scopes(scopes.strip()))


@final
@dataclass(frozen=True, slots=True)
class ScopeRules:
    """The scopes every request needs (``required``) and those of named operations."""

    required: tuple[str, ...] = ()
    rules: tuple[ScopeRule, ...] = ()

    def __post_init__(self) -> None:
        bad = [scope for scope in self.required if not scope_token_ok(scope)]
        if bad:
            raise ValueError(f"invalid required scopes {bad}: no spaces, quotes or backslashes")

    def for_operation(self, kind: OperationKind, name: str) -> tuple[str, ...]:
        """Return every scope a call of ``name`` needs, the server's own first, no repeats."""
        needed = dict.fromkeys(self.required)
        for rule in self.rules:
            if rule.kind == kind and fnmatch.fnmatchcase(name, rule.pattern):
                needed.update(dict.fromkeys(rule.scopes))
        return tuple(needed)

    def for_operations(self, operations: Iterable[Operation]) -> tuple[str, ...]:
        """Return every scope a body of ``operations`` needs (a batch needs them all)."""
        needed = dict.fromkeys(self.required)
        for kind, name in operations:
            needed.update(dict.fromkeys(self.for_operation(kind, name)))
        return tuple(needed)

    def mentioned(self) -> tuple[str, ...]:
        """Every scope named anywhere, for ``scopes_supported`` when none is configured."""
        named = dict.fromkeys(self.required)
        for rule in self.rules:
            named.update(dict.fromkeys(rule.scopes))
        return tuple(named)
