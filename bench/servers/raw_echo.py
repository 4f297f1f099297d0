"""The floor: a plain blocking loop over stdin lines, orjson in and out, no MCP machinery.

It answers ``initialize`` (echoing the client's protocol version), ignores notifications,
answers ``tools/list`` with the ``echo`` tool and every other request with the ``tools/call``
result an ``echo`` tool would give: one text content block holding ``arguments.text``.
Replies are written with one ``os.write`` per line (no buffering beyond the pipe).
"""

from __future__ import annotations

import os
import sys

import orjson

ECHO_TOOL = {
    "name": "echo",
    "description": "Return the text it is given.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(message: dict[str, object]) -> bytes | None:
    """Return the reply line for one message, or ``None`` for a notification."""
    if "id" not in message:
        return None
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    result: dict[str, object]
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-echo", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [ECHO_TOOL]}
    else:
        arguments = params.get("arguments")
        text = arguments.get("text", "") if isinstance(arguments, dict) else ""
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return orjson.dumps(reply) + b"\n"


def main() -> None:
    out = sys.stdout.fileno()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = answer(orjson.loads(line))
        if reply is not None:
            view = memoryview(reply)
            while view:
                view = view[os.write(out, view) :]


if __name__ == "__main__":
    main()
