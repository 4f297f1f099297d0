"""What a client session may ask of a ``MessageStream`` beyond moving messages.

Two optional capabilities, as ``runtime_checkable`` Protocols (STYLE §13: declared by the
side that offers them; the Streamable HTTP stream offers both, a launched stdio server
``ServerIdentity``):

* ``ServerIdentity``: which server the stream reaches, so that what a session learnt about
  it (its protocol era, its ``server/discover`` answer) can be reused by the next session
  to the same server (MCP 2026-07-28, Basic > Versioning: clients SHOULD cache the era
  "for the lifetime of the server process (stdio) or origin (HTTP)"), and a digest of the
  credentials in use, so that a ``"private"`` cached result is never handed to other
  credentials (schema ``CacheableResult``).
* ``ToolHeaderSink``: the ``x-mcp-header`` parameters of each tool, which the stream mirrors
  into ``Mcp-Param-{Name}`` headers of ``tools/call`` (2026-07-28, Streamable HTTP > Custom
  Headers from Tool Parameters). Only the session knows the tools (from ``tools/list``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from trimcp.protocol import HeaderParams

__all__ = ["ServerIdentity", "ToolHeaderSink"]


@runtime_checkable
class ServerIdentity(Protocol):
    """A stream that knows which server it reaches."""

    @property
    def server_key(self) -> str:
        """A key naming the server: equal for two streams to the same server, else not.

        Streamable HTTP: the endpoint's origin and path. A launched stdio server: that
        process (a new process is a new key).
        """
        ...

    @property
    def authorization_context(self) -> str | None:
        """A digest of the credentials the stream sends, None when it sends none.

        Never the credentials themselves; it changes whenever they do (a refreshed or
        stepped-up token), which only ever makes a cache miss.
        """
        ...


@runtime_checkable
class ToolHeaderSink(Protocol):
    """A stream that mirrors tool parameters into request headers."""

    def set_tool_headers(self, tool: str, params: HeaderParams) -> None:
        """Mirror ``params`` (``trimcp.protocol.header_parameters`` of the tool's
        ``inputSchema``) on later calls of ``tool``; an empty mapping mirrors nothing."""
        ...

    def forget_tool_headers(self) -> None:
        """Forget every tool's parameters (the tool list changed)."""
        ...
