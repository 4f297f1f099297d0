"""The Hypothesis strategies of trimcp.testing: schema values, MCP traffic, malformed bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonschema
import orjson
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.actors import spawn
from trimcp.errors import MethodNotFound
from trimcp.protocol import (
    ClientConnection,
    Implementation,
    JsonObject,
    Notification,
    Request,
    ServerCapabilities,
    decode_json,
)
from trimcp.sessions import LOG_LEVELS, RequestContext, Session, SessionHandle, SessionOptions
from trimcp.testing._schema_values import (
    _Compiler,
    invalid_tool_arguments,
    json_values,
    tool_arguments,
)
from trimcp.testing._strategies import (
    malformed_messages,
    mcp_notifications,
    mcp_requests,
    request_ids,
    tool_calls,
)
from trimcp.testing._wire_log import expected_reply
from trimcp.transports import MemoryMessageStream, memory_stream_pair

if TYPE_CHECKING:
    from trimcp.protocol import JsonValue

FAST = settings(max_examples=40, deadline=None, database=None)

ECHO_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}

# Schemas made only of the supported subset: the compiler alone must get them right.
SUBSET_SCHEMAS: list[JsonObject] = [
    ECHO_SCHEMA,
    {"type": "object", "additionalProperties": False},
    {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "mode": {"enum": ["fast", "slow"]},
            "kind": {"const": "fixed"},
            "flag": {"type": "boolean", "default": False},
            "nothing": {"type": "null"},
        },
        "required": ["count", "mode"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "[A-Z]{3}-[0-9]{2}"},
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        },
        "required": ["code", "tags"],
        "additionalProperties": {"type": "integer"},
    },
    {
        "type": "object",
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {
            "at": {"$ref": "#/$defs/point"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["at", "either"],
    },
]


@pytest.mark.parametrize("schema", SUBSET_SCHEMAS, ids=range(len(SUBSET_SCHEMAS)))
@FAST
@given(data=st.data())
def test_compiled_values_satisfy_their_schema_without_the_safety_filter(
    schema: JsonObject, data: st.DataObject
) -> None:
    value = data.draw(_Compiler(schema).compile(schema))
    jsonschema.validate(value, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("schema", SUBSET_SCHEMAS, ids=range(len(SUBSET_SCHEMAS)))
@FAST
@given(data=st.data())
def test_tool_arguments_validate_and_invalid_ones_do_not(
    schema: JsonObject, data: st.DataObject
) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(data.draw(tool_arguments(schema), label="valid"))
    assert not validator.is_valid(data.draw(invalid_tool_arguments(schema), label="invalid"))


@FAST
@given(data=st.data())
def test_one_of_with_overlapping_branches_still_yields_valid_values(data: st.DataObject) -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {"n": {"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 5}]}},
        "required": ["n"],
    }
    jsonschema.validate(data.draw(tool_arguments(schema)), schema)


def test_invalid_arguments_cover_each_kind_of_violation() -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 3}},
        "required": ["n"],
        "additionalProperties": False,
    }
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(invalid_tool_arguments(schema))
    def collect(value: JsonValue) -> None:
        if not isinstance(value, dict):
            seen.add("type")
        elif "n" not in value:
            seen.add("missing")
        elif len(value) > 1:
            seen.add("extra")
        elif isinstance(value["n"], int) and value["n"] > 3:
            seen.add("range")

    collect()
    assert seen == {"type", "missing", "extra", "range"}


def test_a_schema_that_accepts_everything_has_no_invalid_values() -> None:
    with pytest.raises(ValueError, match="constrains nothing"):
        invalid_tool_arguments({})
    with pytest.raises(jsonschema.SchemaError):
        tool_arguments({"type": 5})


@FAST
@given(json_values(), request_ids())
def test_json_values_round_trip_and_ids_are_never_bool_or_null(
    value: JsonValue, request_id: object
) -> None:
    assert orjson.loads(orjson.dumps(value)) == value
    assert isinstance(request_id, int | str)
    assert not isinstance(request_id, bool)


TOOLS: list[JsonObject] = [
    {"name": "echo", "inputSchema": ECHO_SCHEMA},
    {"name": "noargs", "inputSchema": {"type": "object", "additionalProperties": False}},
]


@FAST
@given(tool_calls(TOOLS))
def test_tool_calls_name_a_tool_and_carry_valid_arguments(params: JsonObject) -> None:
    tool = next(tool for tool in TOOLS if tool["name"] == params["name"])
    schema = tool["inputSchema"]
    assert isinstance(schema, dict)
    jsonschema.validate(params["arguments"], schema)


def test_tool_calls_needs_a_tool() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        tool_calls([])


@FAST
@given(data=st.data())
def test_requests_stay_within_what_the_server_declared(data: st.DataObject) -> None:
    prompts: list[JsonObject] = [
        {"name": "greet", "arguments": [{"name": "who", "required": True}, {"name": "tone"}]}
    ]
    caps = ServerCapabilities(prompts=True, logging=True, completions=True)
    method, params = data.draw(mcp_requests(prompts=prompts, capabilities=caps))
    assert method in {"ping", "prompts/list", "prompts/get", "logging/setLevel"} | {
        "completion/complete"
    }
    if method == "prompts/get":
        assert params is not None
        arguments = params["arguments"]
        assert isinstance(arguments, dict)
        assert "who" in arguments
    if method == "logging/setLevel":
        assert params is not None
        assert params["level"] in LOG_LEVELS
    method, _ = data.draw(mcp_requests(tools=[], resources=[{"uri": "file:///a", "name": "a"}]))
    assert not method.startswith(("prompts/", "logging/", "completion/"))
    assert method != "tools/call"  # no tool to call


@FAST
@given(mcp_notifications(roots_list_changed=False))
def test_notifications_target_nothing_in_flight(call: tuple[str, JsonObject | None]) -> None:
    method, params = call
    assert method != "notifications/roots/list_changed"
    if method == "notifications/cancelled":
        assert params is not None
        assert str(params["requestId"]).startswith("unknown-")


# --- malformed messages against a real session --------------------------------------------

LIMIT = 2048


class PingOnly:
    """A RequestHandler that knows no methods; the core answers ping itself."""

    server_info = Implementation(name="ping-only", version="1.0")
    capabilities = ServerCapabilities()
    instructions = None

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        raise MethodNotFound(request.method)

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        pass

    def session_opened(self, session: SessionHandle) -> None:
        pass

    def session_closed(self, session: SessionHandle) -> None:
        pass


async def _until_ping_answer(stream: MemoryMessageStream, ping_id: str) -> list[Any]:
    replies: list[Any] = []
    with trio.fail_after(5):
        while True:
            reply = decode_json(await stream.receive_message(), max_size=LIMIT * 4)
            if isinstance(reply, dict) and reply.get("id") == ping_id:
                assert reply["result"] == {}
                return replies
            replies.append(reply)


async def _handshake(stream: MemoryMessageStream) -> None:
    client = ClientConnection(Implementation(name="t", version="1"))
    _, data = client.send_initialize()
    await stream.send_message(data)
    client.receive(await stream.receive_message())
    await stream.send_message(client.send_initialized())


@settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    messages=st.lists(malformed_messages(max_message_size=LIMIT), min_size=1, max_size=4),
    initialized=st.booleans(),
)
async def test_malformed_messages_get_one_error_or_silence_and_the_session_survives(
    messages: list[bytes], initialized: bool
) -> None:
    server_end, client_end = memory_stream_pair(max_message_size=LIMIT)
    options = SessionOptions(max_message_size=LIMIT)
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_end, PingOnly(), options))
        if initialized:
            await _handshake(client_end)
        for index, message in enumerate(messages):
            expected = expected_reply(message, max_message_size=LIMIT)
            await client_end.send_message(message)
            ping_id = f"ping-{index}"
            await client_end.send_message(
                orjson.dumps({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
            )
            replies = await _until_ping_answer(client_end, ping_id)
            if expected.kind == "none":
                assert replies == []
            else:
                assert len(replies) == 1, replies
                (reply,) = replies
                assert isinstance(reply["error"]["code"], int)
                assert isinstance(reply["error"]["message"], str)
                assert reply.get("id") == expected.request_id
        assert ref.alive
        await ref.stop()
