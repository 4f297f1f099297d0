"""trimcp over stdio with an ``echo`` tool, through the decorator API (``MCPServer``).

The same tool as ``trimcp_echo.py`` (``echo`` takes ``{"text": string}`` and returns one text
content block with that text), declared with ``@server.tool()``: schema derivation, argument
validation and result conversion are on the hot path here, the hand-written handler skips them.
"""

from __future__ import annotations

import logging
import sys

from trimcp.server import MCPServer

server = MCPServer("trimcp-mcpserver-echo", "1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server.run_stdio()


if __name__ == "__main__":
    main()
