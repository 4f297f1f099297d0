"""The host's pure parts: qualified tool names, permissions, tool export, restart backoff."""

from __future__ import annotations

import dataclasses
import random
import re

import jsonschema
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from trimcp.client._backoff import Backoff, BackoffPolicy
from trimcp.client._naming import MAX_NAME_LENGTH, ToolNames, qualify, split_qualified
from trimcp.client._permissions import CallRequest, PermissionPolicy, PermissionRule
from trimcp.client._tool_export import EXPORT_FORMATS, HostTool, export_tools

VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
servers = st.from_regex(r"[A-Za-z0-9-]{1,20}(_[A-Za-z0-9-]{1,10})?", fullmatch=True)
tools = st.text(min_size=1, max_size=90)


# --- naming -----------------------------------------------------------------------------------


def test_plain_names_are_kept_readable() -> None:
    assert qualify("github", "create_issue") == "mcp__github__create_issue"
    assert split_qualified("mcp__github__create_issue") == ("github", "create_issue")
    assert split_qualified("create_issue") is None
    assert split_qualified("mcp__github") is None


@given(servers, tools)
def test_every_qualified_name_is_valid_for_llm_apis_and_routes_back(server: str, tool: str) -> None:
    names = ToolNames()
    entry = names.add(server, tool)
    assert VALID_NAME.match(entry.qualified)
    assert len(entry.qualified) <= MAX_NAME_LENGTH
    assert names.resolve(entry.qualified) == entry
    assert entry.qualified.startswith(f"mcp__{server}__"[: MAX_NAME_LENGTH - 9])


@given(servers, tools, tools)
def test_distinct_tools_get_distinct_names(server: str, first: str, second: str) -> None:
    if first != second:
        assert qualify(server, first) != qualify(server, second)


def test_forgetting_a_server_drops_only_its_names() -> None:
    names = ToolNames()
    kept = names.add("a", "t")
    gone = names.add("b", "t")
    names.forget_server("b")
    assert names.resolve(kept.qualified) == kept
    assert names.resolve(gone.qualified) is None


# --- permissions ------------------------------------------------------------------------------


def request(name: str, annotations: dict[str, object] | None = None) -> CallRequest:
    server, tool = split_qualified(name) or ("", name)
    return CallRequest(
        qualified_name=name, server=server, tool=tool, arguments={}, annotations=annotations
    )


def test_first_matching_rule_decides() -> None:
    policy = PermissionPolicy(
        rules=[
            PermissionRule(pattern="mcp__fs__read_*", action="allow"),
            PermissionRule(pattern="mcp__fs__*", action="deny"),
        ]
    )
    assert policy.decide("mcp__fs__read_file").action == "allow"
    assert policy.decide("mcp__fs__write_file").action == "deny"
    assert policy.decide("mcp__other__x").action == "allow"


async def test_dangerous_tools_are_denied_unless_someone_is_asked() -> None:
    rules = [PermissionRule(pattern="*delete*", dangerous=True)]
    policy = PermissionPolicy(rules=rules)
    denied = await policy.check(request("mcp__db__delete_rows"))
    assert denied.action == "deny"
    assert "no one to ask" in denied.reason
    asked: list[str] = []

    async def ask(call: CallRequest) -> bool:
        asked.append(call.qualified_name)
        await trio.lowlevel.checkpoint()
        return call.tool.endswith("rows")

    asking = PermissionPolicy(rules=rules, ask=ask)
    assert (await asking.check(request("mcp__db__delete_rows"))).action == "allow"
    assert (await asking.check(request("mcp__db__delete_all"))).action == "deny"
    assert asked == ["mcp__db__delete_rows", "mcp__db__delete_all"]
    # An explicit allow after the marking lets it through without asking.
    allowed = PermissionPolicy(rules=[*rules, PermissionRule(pattern="mcp__db__*", action="allow")])
    assert (await allowed.check(request("mcp__db__delete_rows"))).action == "allow"


async def test_destructive_hints_only_ever_restrict() -> None:
    policy = PermissionPolicy()
    assert (await policy.check(request("mcp__s__t", {"destructiveHint": True}))).action == "deny"
    hint = {"destructiveHint": True, "readOnlyHint": True}
    assert (await policy.check(request("mcp__s__t", hint))).action == "allow"


async def test_a_tool_the_entry_always_allows_is_not_asked_about() -> None:
    asked: list[str] = []

    async def ask(call: CallRequest) -> bool:
        asked.append(call.tool)
        await trio.lowlevel.checkpoint()
        return False

    hint = {"destructiveHint": True}
    listed = dataclasses.replace(request("mcp__s__wipe", hint), always_allowed=True)
    decision = await PermissionPolicy(ask=ask).check(listed)
    assert (decision.action, decision.dangerous) == ("allow", True)
    assert "always_allow" in decision.reason
    assert asked == []
    unlisted = request("mcp__s__wipe", hint)
    assert (await PermissionPolicy(ask=ask).check(unlisted)).action == "deny"
    assert asked == ["wipe"]
    # An explicit deny is not a question: the list does not overrule it.
    deny = PermissionPolicy(rules=[PermissionRule(pattern="*wipe", action="deny")])
    assert (await deny.check(listed)).action == "deny"


async def test_a_failing_ask_callback_denies() -> None:
    async def broken(call: CallRequest) -> bool:
        raise RuntimeError("no terminal")

    policy = PermissionPolicy(rules=[PermissionRule(pattern="*", action="ask")], ask=broken)
    assert (await policy.check(request("mcp__s__t"))).action == "deny"


def test_a_rule_that_decides_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="decides nothing"):
        PermissionRule(pattern="*")


# --- export -----------------------------------------------------------------------------------

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": ["integer", "null"], "default": 10},
        "filter": {"$ref": "#/$defs/filter"},
    },
    "required": ["path"],
    "additionalProperties": False,
    "$defs": {"filter": {"type": "object", "properties": {"glob": {"type": "string"}}}},
}
TOOL = HostTool(
    qualified_name="mcp__fs__list",
    server="fs",
    name="list",
    description="List files.",
    input_schema=SCHEMA,
)


@pytest.mark.parametrize("shape", EXPORT_FORMATS)
def test_every_shape_names_and_describes_the_tool(shape: str) -> None:
    (exported,) = export_tools([TOOL], shape)  # type: ignore[arg-type]
    flat = exported.get("function", exported)
    assert flat["name"] == "mcp__fs__list"
    assert "List files." in flat["description"]
    assert "'fs'" in flat["description"]
    schema = flat.get("parameters") or flat["input_schema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["path"]


def test_gemini_gets_the_subset_it_accepts() -> None:
    (exported,) = export_tools([TOOL], "gemini")
    schema = exported["parameters"]
    text = repr(schema)
    for dropped in ("$schema", "$defs", "$ref", "additionalProperties", "default"):
        assert dropped not in text
    assert schema["properties"]["limit"] == {"type": "integer", "nullable": True}
    assert schema["properties"]["filter"]["properties"]["glob"] == {"type": "string"}


def test_openai_and_anthropic_keep_the_schema_whole() -> None:
    (openai,) = export_tools([TOOL], "openai")
    assert openai["type"] == "function"
    assert openai["function"]["parameters"] == SCHEMA
    (anthropic,) = export_tools([TOOL], "anthropic")
    assert anthropic["input_schema"] == SCHEMA


def test_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="choose one of"):
        export_tools([TOOL], "cohere")  # type: ignore[arg-type]


# --- backoff ----------------------------------------------------------------------------------


def test_delays_grow_with_jitter_then_give_up_at_the_intensity() -> None:
    policy = BackoffPolicy(initial=1.0, maximum=5.0, jitter=0.5, intensity=4, period=60.0)
    backoff = Backoff(policy, random.Random(7))
    delays = [backoff.next_delay(float(t)) for t in range(4)]
    for delay, full in zip(delays, [1.0, 2.0, 4.0, 5.0], strict=True):
        assert delay is not None
        assert full * 0.5 <= delay <= full
    assert backoff.next_delay(4.0) is None
    # After the period, old restarts no longer count.
    assert backoff.next_delay(70.0) is not None


def test_a_connection_that_stayed_up_starts_afresh() -> None:
    backoff = Backoff(BackoffPolicy(initial=1.0, jitter=0.0), random.Random(1))
    assert backoff.next_delay(0.0) == 1.0
    assert backoff.next_delay(1.0) == 2.0
    backoff.stayed_up(since=2.0, now=100.0)
    assert backoff.next_delay(100.0) == 1.0
    assert backoff.restarts == 1


def test_policies_are_checked() -> None:
    with pytest.raises(ValueError, match="initial"):
        BackoffPolicy(initial=0)
    with pytest.raises(ValueError, match="jitter"):
        BackoffPolicy(jitter=1.5)
