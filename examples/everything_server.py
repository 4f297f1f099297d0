"""One MCP server exposing every feature trimcp has, and the official conformance fixtures.

Try it:  python examples/everything_server.py --transport stdio

then type (one JSON object per line) an ``initialize`` request, ``notifications/initialized``
and e.g. ``{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo",
"arguments": {"text": "hi"}}}``; or point any MCP client (the official SDKs, the
conformance suite's server scenarios) at the command. Over HTTP:
``python examples/everything_server.py --transport http --port 8000`` serves
``http://127.0.0.1:8000/mcp`` (and WebSocket at ``ws://127.0.0.1:8000/mcp/ws``);
``--transport ws`` serves only WebSocket, at ``ws://127.0.0.1:8000/mcp/ws``. Protocol
messages go to stdout, logs to stderr.

Besides the conformance fixtures (the ``test_*`` tools and prompts, the ``test://``
resources, described in the block before them) it has: ``echo`` (annotated), ``add``
(structured output), ``sleep`` (progress; cancel it and watch stderr; may run as a task),
``list_roots``
(roots), ``get_resource_links`` (``resource_link`` blocks), ``connect_account`` (URL-mode
elicitation) and ``update_watched_resource`` (sends ``notifications/resources/updated`` to
subscribers of ``test://watched-resource``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import logging
import struct
import sys
import wave
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypedDict

import trio

from trimcp.errors import MissingClientCapability
from trimcp.server import (
    Audio,
    Completion,
    Context,
    ElicitResult,
    EmbeddedResource,
    Image,
    MCPServer,
    Param,
    PromptMessage,
    PromptRef,
    ResourceLink,
    ToolAnnotations,
    ToolError,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trimcp.protocol import (
        JsonObject,
    )
    from trimcp.server import ResourceTemplateRef

logger = logging.getLogger("everything_server")


def red_pixel_png() -> bytes:
    """Return a 1x1 red PNG (8-bit RGB, one unfiltered scanline)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def silent_wav() -> bytes:
    """Return 10 ms of 8 kHz mono 8-bit silence as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(1)
        wav.setframerate(8000)
        wav.writeframes(b"\x80" * 80)
    return buffer.getvalue()


PNG = red_pixel_png()
WAV = silent_wav()

# --- conformance fixtures ------------------------------------------------------------------
# What the official suite's server scenarios (@modelcontextprotocol/conformance) check:
#   tools-list: every tool has name, description, inputSchema.
#   test_simple_text -> one text block "This is a simple text response for testing."
#   test_image_content -> an image block with data and mimeType (PNG here).
#   test_audio_content -> an audio block, mimeType exactly "audio/wav".
#   test_embedded_resource -> a resource block with uri, mimeType and text.
#   test_multiple_content_types -> >= 2 blocks, among them text, image and resource.
#   test_tool_with_logging: after setLevel(debug), >= 3 notifications/message during the
#     call (spec: 3 at info, ~50 ms apart).
#   test_tool_with_progress: with _meta.progressToken, >= 3 non-decreasing progress
#     notifications (spec: 0, 50, 100 of 100, ~50 ms apart).
#   test_error_handling -> isError: true and content[0].text non-empty.
#   test_sampling {prompt} -> sends sampling/createMessage (the prompt as one user text
#     message, maxTokens 100), returns non-empty content ("LLM response: ...").
#   test_elicitation {message} -> sends elicitation/create (username, email; both required),
#     returns non-empty content ("User response: ...").
#   test_elicitation_sep1034_defaults: requestedSchema name/age/score/status/verified with
#     type and default "John Doe"/30/95.5/"active" (enum)/true.
#   test_elicitation_sep1330_enums: untitledSingle (enum), titledSingle (oneOf const/title),
#     legacyEnum (enum + enumNames), untitledMulti (array, items.enum), titledMulti (array,
#     items.anyOf const/title); no mixing of the forms.
#   json_schema_2020_12_tool: tools/list keeps $schema (2020-12 URI), $defs.address and
#     additionalProperties: false in its inputSchema.
#   test_reconnection (HTTP only, SEP-1699): the server closes the SSE stream mid-call and
#     delivers the result after the client reconnects with Last-Event-ID; over stdio it
#     just answers "Reconnection test completed successfully".
#   resources: list entries have uri and name; test://static-text reads as text with a
#     mimeType; test://static-binary as a blob with a mimeType; test://template/123/data
#     has text containing "123"; test://watched-resource accepts subscribe/unsubscribe.
#   prompts: list entries have name and description; test_simple_prompt has messages with
#     role and content; test_prompt_with_arguments {arg1, arg2} mentions both values;
#     test_prompt_with_embedded_resource {resourceUri} has a resource block;
#     test_prompt_with_image has an image block with data and mimeType.
#   completion-complete: ref/prompt test_prompt_with_arguments, argument arg1 -> a
#     completion with a values array. logging-set-level and ping -> {}.

WATCHED_URI = "test://watched-resource"

JSON_SCHEMA_2020_12: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    # SEP-2106: composition and conditional keywords are kept as written.
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

#: A tool argument mirrored into an HTTP header (2026-07-28, SEP-2243): ``Mcp-Param-Region``.
REGION_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region", "description": "Where to look"},
        "query": {"type": "string"},
    },
    "required": ["region"],
}


class Address(TypedDict, total=False):
    street: str
    city: str


class Sum(TypedDict):
    sum: int


def add_content_tools(server: MCPServer) -> None:
    @server.tool()
    def test_simple_text() -> str:
        """Return a simple text response."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> Image:
        """Return a 1x1 red PNG image."""
        return Image(PNG, "image/png")

    @server.tool()
    def test_audio_content() -> Audio:
        """Return a short silent WAV clip."""
        return Audio(WAV, "audio/wav")

    @server.tool()
    def test_embedded_resource() -> EmbeddedResource:
        """Return an embedded text resource."""
        text = "This is an embedded resource content."
        return EmbeddedResource.of("test://embedded-resource", text=text, mime_type="text/plain")

    @server.tool()
    def test_multiple_content_types() -> list[object]:
        """Return text, image and embedded resource content together."""
        data = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))
        resource = EmbeddedResource.of(
            "test://mixed-content-resource", text=data, mime_type="application/json"
        )
        return ["Multiple content types test:", Image(PNG, "image/png"), resource]


def add_behaviour_tools(server: MCPServer) -> None:
    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Send three info log messages, 50 ms apart."""
        await ctx.info("Tool execution started")
        await trio.sleep(0.05)
        await ctx.info("Tool processing data")
        await trio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Report progress 0, 50 and 100 of 100, 50 ms apart."""
        await ctx.report_progress(0, 100)
        await trio.sleep(0.05)
        await ctx.report_progress(50, 100)
        await trio.sleep(0.05)
        await ctx.report_progress(100, 100)
        return f"Tool with progress executed successfully (token {ctx.progress_token!r})"

    @server.tool()
    def test_error_handling() -> str:
        """Always fail, as a tool execution error (isError: true)."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Over HTTP, close the SSE stream mid-call (SEP-1699); over stdio, just answer.

        The client resumes with ``Last-Event-ID`` after the ``retry`` delay and gets this
        result from the event store.
        """
        if ctx.close_sse_stream():
            await trio.sleep(0.1)  # answer after the client has seen the connection close
        return "Reconnection test completed successfully"

    @server.tool(
        description="Tool with JSON Schema 2020-12 features", input_schema=JSON_SCHEMA_2020_12
    )
    def json_schema_2020_12_tool(
        name: str | None = None,
        address: Address | None = None,
        contactMethod: str | None = None,
        phone: str | None = None,
        email: str | None = None,
    ) -> str:
        given = {"name": name, "address": address, "contactMethod": contactMethod}
        return json.dumps({**given, "phone": phone, "email": email})

    @server.tool(description="Look something up in a region", input_schema=REGION_SCHEMA)
    def test_region_lookup(region: str, query: str = "") -> str:
        return f"{query or 'everything'} in {region}"


def add_client_request_fixtures(server: MCPServer) -> None:
    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Ask the client's LLM to answer the prompt (sampling/createMessage).

        Args:
            prompt: The prompt to send to the LLM.
        """
        result = await ctx.sample(prompt, max_tokens=100)
        return f"LLM response: {result.text}"

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Ask the user for a username and an email (elicitation/create).

        Args:
            message: The message to show the user.
        """
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        answer = await ctx.elicit(message, schema)
        return f"User response: {described(answer)}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Elicit one field of each primitive type, each with a default (SEP-1034)."""
        properties = {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        }
        message = "Test client default value handling - please accept with defaults"
        answer = await ctx.elicit(message, {"type": "object", "properties": properties})
        return f"Elicitation completed: {described(answer)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Elicit the five enum forms of SEP-1330 (single/multi, titled/untitled, legacy)."""
        options = ["option1", "option2", "option3"]
        properties = {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {"type": "string", "oneOf": titled("value", "Option")},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled("value", "Choice")}},
        }
        answer = await ctx.elicit("Pick some options", {"type": "object", "properties": properties})
        return f"Elicitation completed: {described(answer)}"


def described(answer: ElicitResult) -> str:
    """Return ``action=..., content={...}`` for an elicitation answer."""
    return f"action={answer.action}, content={json.dumps(answer.content)}"


def titled(prefix: str, noun: str) -> list[object]:
    """Return ``[{"const": "value1", "title": "First Option"}, ...]`` (three entries)."""
    ordinals = ("First", "Second", "Third")
    return [{"const": f"{prefix}{n}", "title": f"{o} {noun}"} for n, o in enumerate(ordinals, 1)]


@dataclass
class Watched:
    """The mutable state behind ``test://watched-resource``."""

    version: int = 0


def add_resources(server: MCPServer, watched: Watched) -> None:
    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource (a 1x1 red PNG)."""
        return PNG

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def template_data(id: str) -> dict[str, object]:  # noqa: A002 - the template's variable
        """JSON data for any ID."""
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @server.resource(WATCHED_URI, mime_type="text/plain")
    def watched_resource() -> str:
        """A resource to subscribe to; update_watched_resource changes it."""
        return f"Watched resource content, version {watched.version}"

    @server.tool(annotations=ToolAnnotations(idempotent_hint=False, open_world_hint=False))
    async def update_watched_resource() -> str:
        """Change test://watched-resource and notify its subscribers."""
        watched.version += 1
        sent = await server.notify_resource_updated(WATCHED_URI)
        return f"{WATCHED_URI} is now version {watched.version}; {sent} subscriber(s) notified"


def add_prompts(server: MCPServer) -> None:
    @server.prompt()
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two required arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
        """A prompt embedding a resource.

        Args:
            resourceUri: URI of the resource to embed
        """
        text = "Embedded resource content for testing."
        resource = EmbeddedResource.of(resourceUri, text=text, mime_type="text/plain")
        return [
            PromptMessage("user", resource),
            PromptMessage("user", "Please process the embedded resource above."),
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[PromptMessage]:
        """A prompt with an image."""
        return [
            PromptMessage("user", Image(PNG, "image/png")),
            PromptMessage("user", "Please analyze the image above."),
        ]

    @server.completion()
    async def complete(
        ref: PromptRef | ResourceTemplateRef,
        argument: str,
        value: str,
        context_arguments: Mapping[str, str],
    ) -> Completion:
        if isinstance(ref, PromptRef):
            candidates = {"arg1": ["paris", "park", "party"], "arg2": ["hello", "world"]}
        else:  # test://template/{id}/data
            candidates = {"id": ["1", "2", "3", "123"]}
        found = [c for c in candidates.get(argument, []) if c.startswith(value)]
        return Completion(values=found, total=len(found), has_more=False)


# --- features beyond the conformance suite ----------------------------------------------------


def add_feature_tools(server: MCPServer) -> None:
    @server.tool(title="Echo", annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: Annotated[str, Param(description="The text to echo back")]) -> str:
        """Return the text, as one text block."""
        return text

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers (structured output)."""
        return {"sum": a + b}

    @server.tool(task_support="optional")
    async def sleep(seconds: Annotated[float, Param(ge=0, le=60)], ctx: Context) -> str:
        """Sleep, reporting progress every 0.1 s; a cancelled sleep is logged to stderr.

        May run as a task (2025-11-25): call it with ``params.task`` and poll ``tasks/get``.
        """
        steps = max(1, round(seconds * 10))
        done = 0
        try:
            for done in range(1, steps + 1):
                await trio.sleep(seconds / steps)
                await ctx.report_progress(done, steps, f"slept {done / 10:.1f} s")
        finally:
            if done < steps:
                logger.info("sleep cancelled after %d of %d steps", done, steps)
        return f"slept {seconds} s"

    @server.tool()
    async def list_roots(ctx: Context) -> str:
        """Ask the client for its roots (roots/list) and return them as JSON."""
        roots = await ctx.list_roots()
        return json.dumps([{"uri": root.uri, "name": root.name} for root in roots])

    @server.tool()
    def get_resource_links() -> list[ResourceLink]:
        """Return links to the static resources (resource_link blocks)."""
        return [
            ResourceLink(uri="test://static-text", name="static-text", mime_type="text/plain"),
            ResourceLink(uri="test://static-binary", name="static-binary", mime_type="image/png"),
        ]

    @server.tool()
    async def connect_account(ctx: Context) -> str:
        """Ask the user to open a URL out of band (URL-mode elicitation)."""
        url = "https://example.org/connect?elicitationId=everything-1"
        answer = await ctx.elicit_url("Connect your example.org account.", url, "everything-1")
        return f"URL elicitation: action={answer.action}"


# --- the server -----------------------------------------------------------------------------


# --- MCP 2026-07-28 conformance fixtures -----------------------------------------------------
# Multi round-trip calls (SEP-2322): each asks with ``ctx.elicit``/``sample``/``list_roots``
# under the key the suite expects; over 2026-07-28 the first call answers with an
# InputRequiredResult and the retry with the answers completes it. In a session (2025-11-25)
# the same code sends those as requests to the client.

_NAME_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def add_mrtr_fixtures(server: MCPServer) -> None:
    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Ask the user's name (an elicitation under the key user_name)."""
        answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
        return f"Hello, {described(answer)}"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Ask the client's model a question (sampling under the key capital_question)."""
        answer = await ctx.sample(
            "What is the capital of France?", max_tokens=50, key="capital_question"
        )
        return f"The model said: {answer.text}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Ask the client for its roots (roots/list under the key client_roots)."""
        roots = await ctx.list_roots(key="client_roots")
        return f"Roots: {', '.join(root.uri for root in roots) or 'none'}"

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Mint a ticket once, ask for confirmation, and find the same ticket on the retry."""
        ticket = await ctx.once("ticket", lambda: "ticket-42")
        schema: JsonObject = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        answer = await ctx.elicit("Confirm?", schema, key="confirm")
        return f"state-ok: {ticket} confirmed ({described(answer)})"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Two rounds: a name first, then a favourite colour."""
        name = await ctx.elicit("Step 1: What is your name?", _NAME_SCHEMA, key="step1")
        colour_schema: JsonObject = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        colour = await ctx.elicit(
            "Step 2: What is your favorite color?", colour_schema, key="step2"
        )
        return f"Multi-round complete for {described(name)} who likes {described(colour)}"

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that first asks the user who it is for."""
        schema: JsonObject = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Who is this prompt for?", schema, key="user_name")
        return f"Write a short poem for {described(answer)}."


def add_batched_asks(server: MCPServer) -> None:
    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask for a name, a greeting and the roots at once: one InputRequiredResult."""
        found: dict[str, str] = {}

        async def name() -> None:
            answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
            found["name"] = described(answer)

        async def greeting() -> None:
            answer = await ctx.sample("Generate a greeting", max_tokens=50, key="greeting")
            found["greeting"] = answer.text

        async def roots() -> None:
            found["roots"] = str(len(await ctx.list_roots(key="client_roots")))

        async with trio.open_nursery() as nursery:
            for ask in (name, greeting, roots):
                nursery.start_soon(ask)
        return f"Name: {found['name']}; Greeting: {found['greeting']}; Roots: {found['roots']}"


def add_mrtr_checks(server: MCPServer) -> None:
    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Ask for confirmation; a retry whose requestState was altered is refused."""
        schema: JsonObject = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        await ctx.elicit("Please confirm", schema, key="confirm")
        return "integrity-ok: state verified"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Ask only for what the client declared (elicitation, sampling, or nothing)."""
        declared = ctx.session.client_capabilities
        received: list[str] = []
        if declared.elicitation_form:
            schema: JsonObject = {"type": "object", "properties": {"value": {"type": "string"}}}
            await ctx.elicit("Elicitation input", schema, key="elicit_input")
            received.append("elicit_input")
        if declared.sampling:
            await ctx.sample("Sample request", max_tokens=50, key="sample_input")
            received.append("sample_input")
        if not received:
            return "No supported capabilities declared"
        return f"capabilities-ok: received {','.join(received)}"


def add_stateless_fixtures(server: MCPServer) -> None:
    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling: without it declared, the call is refused with -32021."""
        answer = await ctx.sample("Say hello", max_tokens=20)
        return f"Success: {answer.text}"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Report progress, then answer: the request's stream carries no requests."""
        await ctx.report_progress(50, 100)
        return "Streaming complete"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Log one line: sent only when the request's _meta asked for a log level."""
        await ctx.info("Diagnostic trace logging activated")
        return "Logging evaluated"

    def passing() -> str:
        """Here for a moment, so that the list changes."""
        return "gone"

    @server.tool()
    async def test_trigger_tool_change() -> str:
        """Add and remove a tool: listeners get notifications/tools/list_changed."""
        server.add_tool(passing, "test_passing_tool")
        server.remove_tool("test_passing_tool")
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_prompt_change() -> str:
        """Add and remove a prompt: listeners get notifications/prompts/list_changed."""
        server.add_prompt(passing, "test_passing_prompt")
        server.remove_prompt("test_passing_prompt")
        return "Mutation triggered"


#: Fixtures of the Tasks extension's scenarios (SEP-2663, io.modelcontextprotocol/tasks): a
#: client that declares the extension in its 2026-07-28 _meta gets a task from the
#: task-supporting ones (polled with tasks/get, answered with tasks/update, stopped with
#: tasks/cancel); one that does not gets their result, or -32021 from a "required" one.
CONFIRM: JsonObject = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Really go ahead?"}},
    "required": ["confirm"],
}
USER_NAME: JsonObject = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


def answered(answer: ElicitResult, field: str) -> object:
    """Return an accepted form's ``field`` (None if declined or absent)."""
    content = answer.content if answer.accepted else None
    return content.get(field) if isinstance(content, dict) else None


def add_task_extension_fixtures(server: MCPServer) -> None:
    @server.tool()
    def greet(name: str) -> str:
        """Greet someone; never a task."""
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def slow_compute(seconds: Annotated[float, Param(ge=0, le=3600)], label: str = "") -> str:
        """Wait ``seconds``, then answer: a task if it takes longer than a moment."""
        await trio.sleep(seconds)
        return f"Computed {label or 'result'} after {seconds} s"

    @server.tool(task_support="required")
    async def failing_job() -> str:
        """Run for a second, then fail with a tool error (a completed task, isError)."""
        await trio.sleep(1)
        raise ToolError("the job failed: its input was rejected")

    @server.tool(task_support="optional")
    async def protocol_error_job(ctx: Context) -> str:
        """Run as a task that ends with a JSON-RPC error (a failed task).

        Only a JSON-RPC error fails a task; whatever else a tool raises is a tool error, so
        this job raises the one a tool may raise on purpose: it needs an extension no
        client declares (-32021).
        """
        ctx.continue_as_task()
        await trio.sleep(0.2)
        raise MissingClientCapability(
            {"extensions": {"example.com/never-declared": {}}},
            "protocol_error_job needs the example.com/never-declared extension",
        )

    @server.tool(task_support="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Become a task at once, then ask the user to confirm (the task's input)."""
        ctx.continue_as_task()
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM)
        confirmed = answered(answer, "confirm") is True
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @server.tool(task_support="optional")
    async def multi_input(ctx: Context) -> str:
        """Become a task, then ask two questions at once (two inputRequests pending)."""
        ctx.continue_as_task()
        names: dict[str, str] = {}

        async def ask(key: str) -> None:
            answer = await ctx.elicit(f"Name for {key}?", USER_NAME, key=key)
            names[key] = str(answered(answer, "name"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "first")
            nursery.start_soon(ask, "second")
        return f"Got {names['first']} and {names['second']}"

    @server.tool(task_support="required")
    async def test_tool_with_task(ctx: Context) -> str:
        """Ask for a name in the call itself (multi round-trip), then go on as a task."""
        answer = await ctx.elicit("What is your name?", USER_NAME, key="user_name")
        name = str(answered(answer, "name") or "stranger")
        ctx.continue_as_task()
        await trio.sleep(0.5)
        return f"Hello, {name}! (greeted by a task)"


#: Two Agent Skills served by the Skills extension (SEP-2640): skills/list, skills/get,
#: resources/directory/read and skill:// resources.
SKILLS_DIR = Path(__file__).resolve().parent / "skills"


def add_skill_fixtures(server: MCPServer) -> None:
    try:
        server.add_skills(SKILLS_DIR)
    except ValueError as exc:  # no PyYAML: everything else still works
        logger.warning("not serving the example skills: %s", exc)


def build_server() -> MCPServer:
    """Return a fresh everything server (its own watched-resource state)."""
    server = MCPServer(
        "trimcp-everything",
        "1.0.0",
        title="trimcp everything server",
        instructions="A test server: every MCP feature and the conformance fixtures.",
    )
    add_content_tools(server)
    add_behaviour_tools(server)
    add_client_request_fixtures(server)
    add_resources(server, Watched())
    add_prompts(server)
    add_feature_tools(server)
    add_mrtr_fixtures(server)
    add_batched_asks(server)
    add_mrtr_checks(server)
    add_stateless_fixtures(server)
    add_task_extension_fixtures(server)
    add_skill_fixtures(server)
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http", "ws"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP/WebSocket address")
    parser.add_argument("--port", type=int, default=8000, help="HTTP/WebSocket port")
    parser.add_argument(
        "--engine", choices=["trimcp", "hypercorn"], default="trimcp", help="the HTTP server"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    handler = build_server()
    if args.transport == "http":
        serve = functools.partial(handler.serve_http, engine=args.engine)
    elif args.transport == "ws":
        serve = handler.serve_websocket
    else:
        # With the server's notifications and task runner, as over HTTP.
        trio.run(handler.serve_stdio)
        return
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(functools.partial(serve, host=args.host, port=args.port))


if __name__ == "__main__":
    main()
