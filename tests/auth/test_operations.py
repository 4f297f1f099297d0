"""What a POST body asks for, as the endpoint reads it for per-name scopes (``PostBody``)."""

from __future__ import annotations

import orjson

from trimcp.http._body import read_post_body


def outline(body: object) -> tuple[tuple[str, str], ...]:
    return read_post_body(orjson.dumps(body)).operations


def request(method: str, params: object, request_id: int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_each_targeted_request_names_its_target() -> None:
    assert outline(request("tools/call", {"name": "delete_x", "arguments": {}})) == (
        ("tool", "delete_x"),
    )
    assert outline(request("prompts/get", {"name": "admin"})) == (("prompt", "admin"),)
    assert outline(request("resources/read", {"uri": "file:///a"})) == (("resource", "file:///a"),)
    assert outline(request("resources/subscribe", {"uri": "file:///b"})) == (
        ("resource", "file:///b"),
    )


def test_a_batch_names_every_target() -> None:
    batch = [
        request("tools/call", {"name": "a"}, 1),
        request("tools/list", {}, 2),
        request("prompts/get", {"name": "p"}, 3),
    ]
    assert outline(batch) == (("tool", "a"), ("prompt", "p"))


def test_requests_without_a_usable_target_name_none() -> None:
    assert outline(request("tools/list", {})) == ()
    assert outline(request("tools/call", {"name": 3})) == ()  # the session answers it
    assert outline(request("tools/call", ["not", "an", "object"])) == ()
    assert outline({"jsonrpc": "2.0", "method": "notifications/initialized"}) == ()
