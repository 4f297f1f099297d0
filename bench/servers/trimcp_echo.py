"""trimcp over stdio with an ``echo`` tool, using a minimal hand-written ``RequestHandler``.

This is the session layer without the decorator API: ``trio.run(serve_stdio, handler)``,
where the handler answers ``tools/list`` and ``tools/call`` (``echo`` takes
``{"text": string}`` and returns one text content block with that text). The decorator-API
variant is ``trimcp_mcpserver.py`` (when ``trimcp.server.MCPServer`` exists); both serve the
same tool so ``bench/stdio.py`` drives them with the same client.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from trimcp.errors import InvalidParams, MethodNotFound
from trimcp.protocol import Implementation, JsonObject, ServerCapabilities
from trimcp.sessions import serve_stdio

if TYPE_CHECKING:
    from trimcp.protocol import Notification, Request
    from trimcp.sessions import RequestContext, SessionHandle

ECHO_TOOL: JsonObject = {
    "name": "echo",
    "description": "Return the text it is given.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


@dataclass
class EchoHandler:
    """A ``RequestHandler`` serving one tool, ``echo``."""

    server_info: Implementation = field(
        default_factory=lambda: Implementation(name="trimcp-echo", version="1.0")
    )
    capabilities: ServerCapabilities = field(default_factory=lambda: ServerCapabilities(tools=True))
    instructions: str | None = None

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        if request.method == "tools/call":
            params = request.params or {}
            arguments = params.get("arguments")
            if params.get("name") != "echo" or not isinstance(arguments, dict):
                raise InvalidParams(f"unknown tool or bad arguments: {params.get('name')!r}")
            text = arguments.get("text")
            if not isinstance(text, str):
                raise InvalidParams("echo needs a string 'text'")
            return {"content": [{"type": "text", "text": text}], "isError": False}
        if request.method == "tools/list":
            return {"tools": [ECHO_TOOL]}
        raise MethodNotFound(request.method)

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        return None

    def session_opened(self, session: SessionHandle) -> None:
        return None

    def session_closed(self, session: SessionHandle) -> None:
        return None


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(serve_stdio, EchoHandler())


if __name__ == "__main__":
    main()
