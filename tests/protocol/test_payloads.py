"""The payload records client and server share: wire form, schema validity, strict reading."""

from __future__ import annotations

import pytest

from trimcp.errors import RemoteProtocolError
from trimcp.protocol import (
    Completion,
    ElicitResult,
    Fields,
    JsonObject,
    JsonValue,
    Page,
    PromptMessage,
    ResourceContents,
    Root,
    ToolAnnotations,
)

from ._support import assert_valid


def fields(value: JsonValue) -> Fields:
    return Fields(value, "test")


# --- ToolAnnotations -------------------------------------------------------------------------


def test_tool_annotations_leave_unset_hints_off_the_wire() -> None:
    wire = ToolAnnotations(title="Adder", read_only_hint=True).to_wire()
    assert wire == {"title": "Adder", "readOnlyHint": True}
    assert_valid(wire, "ToolAnnotations")
    assert ToolAnnotations().to_wire() == {}


def test_tool_annotations_round_trip() -> None:
    hints = ToolAnnotations(
        title="t",
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=False,
        open_world_hint=True,
    )
    assert_valid(hints.to_wire(), "ToolAnnotations")
    assert ToolAnnotations.from_wire(fields(hints.to_wire())) == hints


def test_tool_annotations_refuse_a_hint_that_is_not_a_boolean() -> None:
    with pytest.raises(RemoteProtocolError, match="readOnlyHint"):
        ToolAnnotations.from_wire(fields({"readOnlyHint": "yes"}))


# --- ResourceContents ------------------------------------------------------------------------


def test_text_contents_round_trip() -> None:
    item = ResourceContents(uri="file:///a", text="hi", mime_type="text/plain", meta={"k": 1})
    wire = item.to_wire()
    assert wire == {"uri": "file:///a", "mimeType": "text/plain", "text": "hi", "_meta": {"k": 1}}
    assert_valid(wire, "TextResourceContents")
    assert ResourceContents.from_wire(fields(wire)) == item


def test_blob_contents_are_bytes_here_and_base64_on_the_wire() -> None:
    item = ResourceContents(uri="file:///b", blob=b"\x00\xff")
    wire = item.to_wire()
    assert wire == {"uri": "file:///b", "blob": "AP8="}
    assert_valid(wire, "BlobResourceContents")
    assert ResourceContents.from_wire(fields(wire)) == item


def test_line_broken_base64_is_read() -> None:
    read = ResourceContents.from_wire(fields({"uri": "u:", "blob": "AAEC\r\nAw=="}))
    assert read.blob == b"\x00\x01\x02\x03"


def test_an_empty_meta_is_left_off_the_wire() -> None:
    assert "_meta" not in ResourceContents(uri="u:", text="", meta={}).to_wire()


def test_contents_need_exactly_one_of_text_and_blob() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ResourceContents(uri="u:")
    with pytest.raises(ValueError, match="exactly one"):
        ResourceContents(uri="u:", text="a", blob=b"a")


@pytest.mark.parametrize("members", [{}, {"text": "a", "blob": "AA=="}])
def test_wire_contents_need_exactly_one_of_text_and_blob(members: JsonObject) -> None:
    with pytest.raises(RemoteProtocolError, match="exactly one"):
        ResourceContents.from_wire(fields({"uri": "u:", **members}))


def test_a_blob_that_is_not_base64_is_refused() -> None:
    with pytest.raises(RemoteProtocolError, match="'blob' must be base64"):
        ResourceContents.from_wire(fields({"uri": "u:", "blob": "not*base64"}))


# --- PromptMessage ---------------------------------------------------------------------------


def test_prompt_message_round_trip() -> None:
    message = PromptMessage("assistant", {"type": "text", "text": "hello"})
    wire = message.to_wire()
    assert_valid(wire, "PromptMessage")
    assert PromptMessage.from_wire(fields(wire)) == message


def test_prompt_message_content_must_be_a_block_to_be_sent() -> None:
    with pytest.raises(TypeError, match="content block"):
        PromptMessage("user", "plain text").to_wire()


def test_prompt_message_refuses_an_unknown_role() -> None:
    with pytest.raises(RemoteProtocolError, match="'role' must be"):
        PromptMessage.from_wire(fields({"role": "system", "content": {}}))


def test_prompt_message_without_content_reads_as_an_empty_object() -> None:
    assert PromptMessage.from_wire(fields({"role": "user"})) == PromptMessage("user", {})


# --- Completion ------------------------------------------------------------------------------


def test_completion_leaves_unsaid_hints_off_the_wire() -> None:
    assert Completion(values=["a"]).to_wire() == {"values": ["a"]}
    wire = Completion(values=("a", "b"), total=9, has_more=False).to_wire()
    assert wire == {"values": ["a", "b"], "total": 9, "hasMore": False}
    assert_valid({"completion": wire}, "CompleteResult")


def test_completion_reads_an_absent_has_more_as_false() -> None:
    read = Completion.from_wire(fields({"values": ["x"], "total": 3}))
    assert read == Completion(values=("x",), total=3, has_more=False)


# --- Root ------------------------------------------------------------------------------------


def test_root_round_trip() -> None:
    root = Root(uri="file:///work", name="work", meta={"k": "v"})
    wire = root.to_wire()
    assert wire == {"uri": "file:///work", "name": "work", "_meta": {"k": "v"}}
    assert_valid(wire, "Root")
    assert Root.from_wire(fields(wire)) == root
    assert Root(uri="file:///x").to_wire() == {"uri": "file:///x"}


def test_root_needs_a_uri() -> None:
    with pytest.raises(RemoteProtocolError, match="'uri' must be a string"):
        Root.from_wire(fields({"name": "nameless"}))


# --- ElicitResult ----------------------------------------------------------------------------


def test_elicit_result_wire_form() -> None:
    accepted = ElicitResult(action="accept", content={"name": "Ada"}, meta={"k": 1})
    assert accepted.accepted
    wire = accepted.to_wire()
    assert wire == {"action": "accept", "content": {"name": "Ada"}, "_meta": {"k": 1}}
    assert_valid(wire, "ElicitResult")
    assert ElicitResult(action="decline").to_wire() == {"action": "decline"}
    assert not ElicitResult(action="cancel").accepted


def test_elicit_result_content_is_sent_only_as_an_object() -> None:
    with pytest.raises(TypeError, match="JSON object"):
        ElicitResult(action="accept", content=["not", "an", "object"]).to_wire()


# --- Page ------------------------------------------------------------------------------------


def test_page_defaults_to_the_last_page() -> None:
    assert Page((1, 2)).next_cursor is None
    assert Page((), "c").next_cursor == "c"
