"""README's quickstart server runs as written, over real stdio, and answers a tool call.

The serving guide's configuration example validates, and its curl requests are JSON-RPC.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from trimcp.config import validate_config

README = Path(__file__).resolve().parent.parent / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _quickstart() -> str:
    match = re.search(r"```python\n(.*?)```", _section("An MCP server in 15 lines"), re.DOTALL)
    assert match is not None, "the quickstart code block is missing"
    return match.group(1)


def test_the_serving_example_is_a_valid_configuration() -> None:
    section = _section("Serving over HTTP and WebSocket")
    match = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the serving configuration example is missing"
    config = validate_config(tomllib.loads(match.group(1)))
    assert config.server.object == "myapp.server:server"
    assert config.server.path == (".",)
    assert config.http.enabled


def test_the_curl_session_sends_json_rpc_with_the_headers_it_needs() -> None:
    section = _section("Debugging a client by hand with curl")
    bodies = [json.loads(body) for body in re.findall(r"-d '(.*?)'", section)]
    methods = [body.get("method") for body in bodies]
    assert methods[:4] == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert all(body["jsonrpc"] == "2.0" for body in bodies)
    assert "-X DELETE" in section
    for header in (
        "Accept: application/json, text/event-stream",
        "Content-Type: application/json",
        'MCP-Session-Id: $SESSION"',
        "MCP-Protocol-Version: 2025-11-25",
    ):
        assert header in section


def test_the_quickstart_is_short() -> None:
    assert len(_quickstart().strip().splitlines()) < 20


@pytest.mark.slow
def test_the_quickstart_serves_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "demo.py"
    script.write_text(_quickstart(), encoding="utf-8")
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "readme", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "prompts/get",
            "params": {"name": "greet", "arguments": {"name": "Ada"}},
        },
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    result = subprocess.run(
        [sys.executable, str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    received = [json.loads(line) for line in result.stdout.splitlines()]
    replies = {message["id"]: message for message in received if "id" in message}
    logged = [m["params"]["data"] for m in received if m.get("method") == "notifications/message"]
    assert logged == ["adding 2 and 3"]
    assert replies[1]["result"]["serverInfo"]["name"] == "demo"
    assert replies[2]["result"]["content"] == [{"type": "text", "text": "5"}]
    assert "Ada" in json.dumps(replies[3]["result"])
