"""The few method-specific payloads the lifecycle itself must understand.

Everything else (tools, resources, prompts, sampling, ...) stays a JSON object at this layer.
The codec converts these records to and from their camelCase wire form.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from ._capabilities import ClientCapabilities, ServerCapabilities
    from ._json import JsonObject, ProgressToken, RequestId
    from ._versions import VersionFeatures


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Implementation:
    """``clientInfo`` / ``serverInfo``: who is on the other end.

    ``icons`` are wire ``Icon`` objects, kept as JSON (2025-11-25 only; older peers ignore
    them). ``extra`` keeps members we do not model.
    """

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: tuple[JsonObject, ...] = ()
    extra: JsonObject = field(default_factory=dict)

    def for_version(self, version: VersionFeatures) -> Implementation:
        """Return this record without the members ``version`` does not define.

        ``title`` arrived in 2025-06-18; ``description``, ``websiteUrl`` and ``icons`` in
        2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25/changelog).
        Peers must tolerate unknown keys, but we send only what the negotiated schema knows.
        """
        if version.icons:
            return self
        return dataclasses.replace(
            self,
            title=self.title if version.titles else None,
            description=None,
            website_url=None,
            icons=(),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InitializeParams:
    """The params of ``initialize`` (client to server).

    ``protocol_version`` is whatever the client asked for, possibly a version we have never
    heard of; negotiation happens when the server answers.
    """

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InitializeResult:
    """The result of ``initialize`` (server to client)."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CancelledParams:
    """The params of ``notifications/cancelled``.

    ``request_id`` is ``None`` only for task-related cancellations, which 2025-11-25 allows
    (Utilities > Cancellation); such notifications cancel nothing at this layer.
    """

    request_id: RequestId | None
    reason: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressParams:
    """The params of ``notifications/progress`` (MCP 2025-11-25, Utilities > Progress)."""

    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None
