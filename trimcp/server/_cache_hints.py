"""``ttlMs`` and ``cacheScope`` on cacheable 2026-07-28 results.

MCP 2026-07-28 requires both on the results of ``server/discover``, the four list methods and
``resources/read`` (``CacheableResult``, SEP-2549,
https://modelcontextprotocol.io/specification/2026-07-28/schema#cacheableresult). They are
hints to the client, like HTTP ``Cache-Control``: how long a result may be reused, and
whether a cache may share it across authorization contexts (``public``) or only within one
(``private``).

Defaults: lists and ``server/discover`` 60 s, ``resources/read`` 0 (a resource can change at
any moment; ``notifications/resources/updated`` on a listen stream is the way to learn it
did). The scope is ``private`` whenever the request was authorized (what a token may see
can depend on its scopes), else ``public``. ``MCPServer(cache_hints={...})`` overrides any
method's hint.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.protocol import JsonObject

__all__ = ["CACHEABLE_METHODS", "CacheHint", "CachePolicy"]

CacheScope = Literal["public", "private"]

#: Methods whose 2026-07-28 results are ``CacheableResult``s (the Skills extension's two
#: read methods are cacheable as well).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
    }
)


@typing.final
@dataclass(frozen=True, slots=True)
class CacheHint:
    """How long a result may be cached (ms), and by whom (None: decided per request).

    Raises:
        ValueError: a negative ``ttl_ms``, or a scope other than public/private.
    """

    ttl_ms: int
    scope: CacheScope | None = None

    def __post_init__(self) -> None:
        ttl: object = self.ttl_ms
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
            raise ValueError(f"ttl_ms must be an integer >= 0 (milliseconds), not {self.ttl_ms!r}")
        if self.scope not in (None, "public", "private"):
            raise ValueError(f"scope must be 'public', 'private' or None, not {self.scope!r}")


_DEFAULTS: Final = {
    method: CacheHint(0 if method == "resources/read" else 60_000) for method in CACHEABLE_METHODS
}


@typing.final
class CachePolicy:
    """The hints of one server: the defaults, with its own overrides."""

    __slots__ = ("_hints",)

    def __init__(self, overrides: Mapping[str, CacheHint] | None = None) -> None:
        unknown = set(overrides or ()) - CACHEABLE_METHODS
        if unknown:
            raise ValueError(
                f"no cache hints for {', '.join(sorted(unknown))}: only "
                f"{', '.join(sorted(CACHEABLE_METHODS))} return cacheable results"
            )
        self._hints = {**_DEFAULTS, **(overrides or {})}

    def apply(self, method: str, result: JsonObject, *, authorized: bool) -> None:
        """Add ``ttlMs`` and ``cacheScope`` to ``result`` if ``method`` is cacheable.

        A handler's own values (a resource that set them) are kept.
        """
        hint = self._hints.get(method)
        if hint is None:
            return
        result.setdefault("ttlMs", hint.ttl_ms)
        scope = hint.scope or ("private" if authorized else "public")
        result.setdefault("cacheScope", scope)
