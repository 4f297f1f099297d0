"""Capability records: parsing tolerance, the helpers' answers, wire round trips."""

from __future__ import annotations

import json

import pytest

from trimcp.protocol import ClientCapabilities, ServerCapabilities
from trimcp.protocol._codec_payloads import (
    client_capabilities_from_wire,
    client_capabilities_to_wire,
    server_capabilities_from_wire,
    server_capabilities_to_wire,
)

from ._support import ALL_SERVER, FULL_CLIENT, assert_valid, examples


def _example_capabilities(defs: str) -> dict[str, object]:
    [example] = [e for e in examples() if e.defs[0] == defs][:1]
    value = example.value
    params = value.get("params") or value.get("result")
    assert isinstance(params, dict)
    caps = params["capabilities"]
    assert isinstance(caps, dict)
    return caps


def test_client_example_declares_everything() -> None:
    caps = client_capabilities_from_wire(_example_capabilities("InitializeRequest"))  # type: ignore[arg-type]
    assert caps.roots
    assert caps.roots_list_changed
    assert caps.sampling
    assert caps.sampling_tools
    assert not caps.sampling_context
    assert caps.elicitation_form
    assert caps.elicitation_url
    assert caps.tasks_list
    assert caps.tasks_cancel
    assert caps.tasks_sampling_create_message
    assert caps.tasks_elicitation_create


@pytest.mark.parametrize(
    ("wire", "form", "url"),
    [
        ({"elicitation": {}}, True, False),  # bare {} means form only (2025-11-25)
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
        ({"elicitation": True}, False, False),  # not an object: not declared
        ({}, False, False),
    ],
)
def test_elicitation_modes(wire: dict[str, object], form: bool, url: bool) -> None:
    caps = client_capabilities_from_wire(wire)  # type: ignore[arg-type]
    assert (caps.elicitation_form, caps.elicitation_url) == (form, url)
    assert caps.elicitation == (form or url)


def test_unknown_keys_are_tolerated_and_kept() -> None:
    wire = {
        "roots": {"listChanged": "yes", "x": 1},
        "io.example/thing": {"a": 1},
        "experimental": {"e": {}},
    }
    caps = client_capabilities_from_wire(wire)  # type: ignore[arg-type]
    assert caps.roots
    assert not caps.roots_list_changed  # only true counts
    assert caps.extra == {"io.example/thing": {"a": 1}}
    out = client_capabilities_to_wire(caps)
    assert out["io.example/thing"] == {"a": 1}
    assert out["experimental"] == {"e": {}}
    assert client_capabilities_from_wire("garbage") == ClientCapabilities()


def test_server_example_round_trips() -> None:
    wire = _example_capabilities("JSONRPCResultResponse")
    caps = server_capabilities_from_wire(wire)  # type: ignore[arg-type]
    assert caps.logging
    assert caps.completions
    assert caps.prompts_list_changed
    assert caps.resources_subscribe
    assert caps.resources_list_changed
    assert caps.tools_list_changed
    assert caps.tasks_tools_call
    assert server_capabilities_to_wire(caps) == wire


@pytest.mark.parametrize(
    "caps", [ALL_SERVER, ServerCapabilities(), ServerCapabilities(tools_list_changed=True)]
)
def test_server_capabilities_to_wire_is_schema_valid(caps: ServerCapabilities) -> None:
    wire = server_capabilities_to_wire(caps)
    assert_valid(wire, "ServerCapabilities")
    assert server_capabilities_from_wire(json.loads(json.dumps(wire))) == _normalised(caps)


def _normalised(caps: ServerCapabilities) -> ServerCapabilities:
    # sub-flags switch their parent on when written out
    import dataclasses

    return dataclasses.replace(caps, tools=caps.tools or caps.tools_list_changed)


@pytest.mark.parametrize(
    "caps", [FULL_CLIENT, ClientCapabilities(), ClientCapabilities(elicitation_form=True)]
)
def test_client_capabilities_round_trip(caps: ClientCapabilities) -> None:
    wire = client_capabilities_to_wire(caps)
    assert_valid(wire, "ClientCapabilities")
    assert client_capabilities_from_wire(wire) == caps
