"""Shared test helpers: the bundled schema, the EXAMPLES.md messages, a handshake."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from trimcp.protocol import (
    ClientCapabilities,
    Event,
    Implementation,
    InitializeReceived,
    JsonObject,
    JsonValue,
    ReplyToSend,
    ServerCapabilities,
    ServerConnection,
    ServerConnectionOptions,
)

SPEC = Path("/work/shared/spec")
_EXAMPLE = re.compile(r"<!-- validate: ([^>]*?) -->\s*```json\n(.*?)```", re.DOTALL)


@functools.cache
def schema_defs() -> dict[str, object]:
    """The ``$defs`` of the 2025-11-25 schema."""
    schema = json.loads((SPEC / "schema/2025-11-25/schema.json").read_text(encoding="utf-8"))
    defs: dict[str, object] = schema["$defs"]
    return defs


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator for one ``$defs`` entry."""
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema_defs()})


def assert_valid(value: object, name: str) -> None:
    """Fail with the schema's complaint if ``value`` does not match ``$defs[name]``."""
    errors = [e.message for e in validator(name).iter_errors(value)]
    assert not errors, f"{name}: {errors}"


@dataclass(frozen=True)
class Example:
    """One JSON-RPC message from EXAMPLES.md and the schema names it must satisfy."""

    defs: tuple[str, ...]
    text: str

    @property
    def value(self) -> JsonObject:
        loaded: JsonObject = json.loads(self.text)
        return loaded


def examples() -> list[Example]:
    """Every JSON-RPC message in EXAMPLES.md (data-only examples are left out)."""
    text = (SPEC / "EXAMPLES.md").read_text(encoding="utf-8")
    found = [Example(tuple(m[1].split()), m[2]) for m in _EXAMPLE.finditer(text)]
    return [e for e in found if '"jsonrpc"' in e.text]


SERVER_INFO = Implementation(name="test-server", version="1.0")
CLIENT_INFO = Implementation(name="test-client", version="0.1")
ALL_SERVER = ServerCapabilities(
    prompts=True,
    resources=True,
    resources_subscribe=True,
    tools=True,
    tools_list_changed=True,
    logging=True,
    completions=True,
    tasks=True,
    tasks_list=True,
    tasks_cancel=True,
    tasks_tools_call=True,
)


def msg(**members: JsonValue) -> bytes:
    """Encode a JSON-RPC message with ``"jsonrpc": "2.0"`` added."""
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


def initialize_request(
    request_id: int | str = 0,
    version: str = "2025-11-25",
    capabilities: JsonObject | None = None,
) -> bytes:
    """An ``initialize`` request as a client would send it."""
    params: JsonObject = {
        "protocolVersion": version,
        "capabilities": capabilities if capabilities is not None else {},
        "clientInfo": {"name": "test-client", "version": "0.1"},
    }
    return msg(id=request_id, method="initialize", params=params)


def operating_server(
    capabilities: ServerCapabilities = ALL_SERVER,
    *,
    client: JsonObject | None = None,
    version: str = "2025-11-25",
    options: ServerConnectionOptions | None = None,
) -> ServerConnection:
    """A server connection that has completed the handshake."""
    conn = ServerConnection(SERVER_INFO, capabilities, options)
    [event] = conn.receive(initialize_request(0, version, client))
    assert isinstance(event, InitializeReceived)
    conn.respond_to_initialize()
    conn.receive(msg(method="notifications/initialized"))
    return conn


def reply_of(events: list[Event]) -> JsonObject:
    """The decoded wire message of the single ``ReplyToSend`` in ``events``."""
    [event] = events
    assert isinstance(event, ReplyToSend), event
    return decoded(event.data)


def decoded(data: bytes) -> JsonObject:
    """Parse bytes the connection produced."""
    value: JsonObject = json.loads(data)
    return value


FULL_CLIENT = ClientCapabilities(
    roots=True,
    roots_list_changed=True,
    sampling=True,
    sampling_tools=True,
    sampling_context=True,
    elicitation_form=True,
    elicitation_url=True,
    tasks=True,
    tasks_sampling_create_message=True,
    tasks_elicitation_create=True,
)
