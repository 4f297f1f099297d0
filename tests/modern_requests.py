"""Serving 2026-07-28 requests in process, as a transport serves them, for tests.

``ModernClient`` sends each request as a ``ModernRequest`` over a checked ``_meta`` (what
the HTTP endpoint and the stdio lane do once they have read a body), numbering the ids as a
client would; ``Sink`` is the transport's end of a request's own messages (its progress and
log notifications, kept in order); ``Probe`` is what a tool held open reports. Used by the
server's MRTR and Tasks-extension tests, the gateway's 2026-07-28 tests, and the HTTP
endpoint's and the stdio lane's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import trio

from trimcp.auth import Identity
from trimcp.protocol import Request, read_request_meta
from trimcp.sessions import ModernRequest

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject
    from trimcp.sessions import RequestHandler

__all__ = ["ModernClient", "Probe", "Sink", "accept", "identity"]


@dataclass
class Probe:
    """What a ``hold`` tool reports: it started, and its ``finally`` ran (it was released or
    cancelled); ``release`` lets it return."""

    started: trio.Event = field(default_factory=trio.Event)
    ended: trio.Event = field(default_factory=trio.Event)
    release: trio.Event = field(default_factory=trio.Event)


class Sink:
    """A transport's end of a request's own messages: kept in order, ``arrived`` on each."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.arrived = trio.Event()

    def send_nowait(self, data: bytes) -> bool:
        self.messages.append(orjson.loads(data))
        self.arrived.set()
        return True

    async def send(self, data: bytes) -> None:
        self.send_nowait(data)


class ModernClient:
    """Sends modern requests to ``server`` in process, numbering them.

    ``send`` returns the JSON-RPC response as the transport would write it (``result`` or
    ``error``, with ``id``). ``identity`` is whom the requests' token speaks for.
    """

    def __init__(self, server: RequestHandler, capabilities: JsonObject) -> None:
        self.server = server
        self.capabilities = capabilities
        self.next_id = 1
        self.identity: Identity | None = None
        self.sink = Sink()

    async def send(self, method: str, params: JsonObject | None = None) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        body: JsonObject = {**(params or {}), "_meta": meta}
        request = Request(id=self.next_id, method=method, params=body)
        self.next_id += 1
        modern = ModernRequest(
            self.server, request, read_request_meta(body), self.sink, identity=self.identity
        )
        return orjson.loads(await modern.run())

    async def call(self, name: str, arguments: JsonObject | None = None, **extra: Any) -> Any:
        return await self.send("tools/call", {"name": name, "arguments": arguments or {}, **extra})


def identity(subject: str) -> Identity:
    """A token's principal, as a verifier would make it."""
    return Identity(
        subject=subject,
        client_id="app",
        scopes=frozenset(),
        expires_at=math.inf,
        issuer="https://issuer.example",
    )


def accept(**content: object) -> JsonObject:
    """An elicitation answer accepting ``content``."""
    return {"action": "accept", "content": dict(content)}
