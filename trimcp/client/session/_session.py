"""``ClientSession``: a connected MCP server, as typed methods; ``open_client_session``.

    async with open_server_process(spec) as stream:                  # or any MessageStream
        async with open_client_session(stream, handlers=ClientHandlers(roots=roots)) as s:
            tools = await s.list_tools()                             # every page
            result = await s.call_tool("add", {"a": 1, "b": 2}, on_progress=show)

The session core (``_core``) moves messages, times requests out, and renews an
expired session; this module adds the MCP methods on top. A method whose capability the
server did not declare sends nothing: listings return ``[]``, ``complete`` an empty
``Completion``, ``set_logging_level`` does nothing; methods that need an answer
(``call_tool``, ``read_resource``, ``get_prompt``, subscriptions, tasks) raise
``MethodNotFound`` at once, as the server would have. Task methods live in
``_tasks``, listing page by page in ``_pages``; what the client offers the
server in ``_handlers``.
"""

from __future__ import annotations

import itertools
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, final

import jsonschema
import trio

from trimcp.errors import ToolOutputInvalid, TransportClosed
from trimcp.protocol import ClientConnection, ClientOptions, Fields, Implementation

from ._core import ClientSessionOptions, SessionCore, SessionHooks
from ._errors import CLOSED_BY_CLIENT, require
from ._handlers import ClientHandlers, answer_request, capabilities_for
from ._notify import dispatch_notification
from ._pages import every_page, one_page
from ._results import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Page,
    Prompt,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
)
from ._tasks import TaskMethods, tool_call_params

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from trimcp.protocol import (
        InitializeResult,
        JsonObject,
        JsonValue,
        Notification,
        Request,
        ServerCapabilities,
    )
    from trimcp.transports import MessageStream

    from ._core import ProgressCallback

logger = logging.getLogger(__name__)

#: Who we are, unless the application says otherwise.
DEFAULT_CLIENT_INFO = Implementation(name="trimcp", version="0.1")


def prompt_ref(name: str) -> JsonObject:
    """Return a ``completion/complete`` reference to a prompt."""
    return {"type": "ref/prompt", "name": name}


def resource_ref(uri: str) -> JsonObject:
    """Return a ``completion/complete`` reference to a resource (template)."""
    return {"type": "ref/resource", "uri": uri}


@final
class ClientSession:
    """One initialized MCP session with a server. Get one from ``open_client_session``.

    Every request method takes ``timeout`` (seconds; None: the session's
    ``request_timeout``, ``math.inf``: none) where it may run long, and raises:

    Raises:
        JsonRpcError: the server answered with an error (``MethodNotFound``,
            ``InvalidParams``, ``ResourceNotFound``, ...).
        RequestTimeout: no answer in time; ``notifications/cancelled`` was sent.
        ConnectionLost: the transport ended (``__cause__`` says how: ``ServerExited``...).
        SessionExpired: the server forgot the session and the retry on a new one failed.
        RemoteProtocolError: the server's answer is malformed.

    Cancelling the calling task sends ``notifications/cancelled`` for the request.
    """

    def __init__(
        self, stream: MessageStream, client_info: Implementation, handlers: ClientHandlers,
        options: ClientSessionOptions,
    ) -> None:  # fmt: skip
        self._handlers = handlers
        capabilities = capabilities_for(handlers)
        protocol = ClientOptions(
            protocol_version=options.protocol_version, max_message_size=options.max_message_size
        )
        self._core = SessionCore(
            stream,
            lambda: ClientConnection(client_info, capabilities, protocol),
            options,
            SessionHooks(answer=self._answer, notify=self._notify),
        )
        self._tokens = itertools.count(1)
        self._output_schemas: dict[str, JsonObject | None] = {}
        self.tasks = TaskMethods(self._core, self.new_progress_token)

    # --- what the server said at initialize ------------------------------------------------

    @property
    def initialize_result(self) -> InitializeResult:
        """The server's ``initialize`` answer (the latest one, after a renewal)."""
        return self._core.initialize_result

    @property
    def server_info(self) -> Implementation:
        """The server's name, version, title, ..."""
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared."""
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's ``instructions`` (a hint for the model), if any."""
        return self.initialize_result.instructions

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version."""
        return self.initialize_result.protocol_version

    @property
    def options(self) -> ClientSessionOptions:
        """The session's options."""
        return self._core.options

    async def wait_closed(self) -> BaseException | None:
        """Wait until the connection ends; return why (None: this side closed it)."""
        reason = await self._core.wait_ended()
        closed_by_us = isinstance(reason, TransportClosed) and str(reason) == CLOSED_BY_CLIENT
        return None if closed_by_us else reason

    # --- raw requests ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Send any request and return its raw result.

        With ``on_progress``, a fresh ``_meta.progressToken`` is added and the callback
        (plain or async) gets each ``Progress``, in the calling task.

        Raises:
            LocalProtocolError: the server did not declare the capability ``method`` needs.
        """
        if on_progress is not None:
            params = dict(params or {})
            meta = params.get("_meta")
            params["_meta"] = {
                **(meta if isinstance(meta, dict) else {}),
                "progressToken": next(self._tokens),
            }
        return await self._core.request(method, params, timeout=timeout, on_progress=on_progress)

    def new_progress_token(self) -> int:
        """Return a progress token no other request of this session uses."""
        return next(self._tokens)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers."""
        await self._core.request("ping", timeout=timeout)

    # --- tools -----------------------------------------------------------------------------

    def _remember(self, tool: Tool) -> Tool:
        self._output_schemas[tool.name] = tool.output_schema
        return tool

    def _parse_tool(self, fields: Fields) -> Tool:
        return self._remember(Tool.from_wire(fields))

    async def list_tools(self) -> list[Tool]:
        """Return every tool, following ``nextCursor`` to the end ([] without ``tools``)."""
        if not self.server_capabilities.tools:
            return []
        return await every_page(self._core, "tools/list", "tools", self._parse_tool)

    async def list_tools_page(self, cursor: str | None = None) -> Page[Tool]:
        """Return one page of tools."""
        if not self.server_capabilities.tools:
            return Page(())
        return await one_page(self._core, "tools/list", "tools", self._parse_tool, cursor)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        meta: JsonObject | None = None,
    ) -> CallToolResult:
        """Call a tool and return its result (``is_error``: the tool ran and failed).

        ``structured_content`` is checked against the tool's ``outputSchema`` when
        ``list_tools`` has shown it (unless ``validate_structured_content`` is off).

        Raises:
            ToolOutputInvalid: the structured result does not match the schema, or is
                missing although the tool declares one.
        """
        require(self.server_capabilities.tools, "tools/call")
        params = tool_call_params(name, arguments, meta)
        result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        parsed = CallToolResult.from_wire(Fields(result, "tools/call"))
        self.check_output(name, parsed)
        return parsed

    def check_output(self, name: str, result: CallToolResult) -> None:
        """Validate ``result`` against the known ``outputSchema`` of tool ``name``."""
        schema = self._output_schemas.get(name)
        if schema is None or result.is_error or not self.options.validate_structured_content:
            return
        if result.structured_content is None:
            raise ToolOutputInvalid(
                name, "no structuredContent, though the tool declares an outputSchema", result
            )
        try:
            validator_class = jsonschema.validators.validator_for(
                schema, default=jsonschema.Draft202012Validator
            )
            error = jsonschema.exceptions.best_match(
                validator_class(schema).iter_errors(result.structured_content)
            )
        except jsonschema.SchemaError as exc:
            raise ToolOutputInvalid(
                name, f"its outputSchema is invalid: {exc.message}", result
            ) from exc
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            raise ToolOutputInvalid(name, f"at {where}: {error.message}", result)

    # --- resources -------------------------------------------------------------------------

    async def list_resources(self) -> list[Resource]:
        """Return every resource, all pages ([] without ``resources``)."""
        if not self.server_capabilities.resources:
            return []
        return await every_page(self._core, "resources/list", "resources", Resource.from_wire)

    async def list_resources_page(self, cursor: str | None = None) -> Page[Resource]:
        """Return one page of resources."""
        if not self.server_capabilities.resources:
            return Page(())
        return await one_page(self._core, "resources/list", "resources", Resource.from_wire, cursor)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Return every resource template, all pages."""
        if not self.server_capabilities.resources:
            return []
        return await every_page(
            self._core, "resources/templates/list", "resourceTemplates", ResourceTemplate.from_wire
        )

    async def read_resource(
        self, uri: str, *, timeout: float | None = None
    ) -> list[ResourceContents]:
        """Read a resource; a read may return several items (sub-resources)."""
        require(self.server_capabilities.resources, "resources/read")
        result = await self._core.request("resources/read", {"uri": uri}, timeout=timeout)
        fields = Fields(result, "resources/read")
        return [
            ResourceContents.from_wire(item) for item in fields.obj_list("contents", required=True)
        ]

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``
        (``ClientHandlers.on_resource_updated`` receives them)."""
        require(self.server_capabilities.resources_subscribe, "resources/subscribe")
        await self._core.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the updates about ``uri``."""
        require(self.server_capabilities.resources_subscribe, "resources/unsubscribe")
        await self._core.request("resources/unsubscribe", {"uri": uri})

    # --- prompts, completion, logging ------------------------------------------------------

    async def list_prompts(self) -> list[Prompt]:
        """Return every prompt, all pages ([] without ``prompts``)."""
        if not self.server_capabilities.prompts:
            return []
        return await every_page(self._core, "prompts/list", "prompts", Prompt.from_wire)

    async def list_prompts_page(self, cursor: str | None = None) -> Page[Prompt]:
        """Return one page of prompts."""
        if not self.server_capabilities.prompts:
            return Page(())
        return await one_page(self._core, "prompts/list", "prompts", Prompt.from_wire, cursor)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prompt's messages for ``arguments`` (strings)."""
        require(self.server_capabilities.prompts, "prompts/get")
        params: JsonObject = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result = await self._core.request("prompts/get", params)
        return GetPromptResult.from_wire(Fields(result, "prompts/get"))

    async def complete(
        self,
        ref: JsonObject,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
    ) -> Completion:
        """Ask for completions of ``argument`` (so far ``value``) of a prompt or template.

        ``ref`` is ``prompt_ref(name)`` or ``resource_ref(uri_template)``; ``context`` holds
        arguments already chosen. Without ``completions`` the answer is empty.
        """
        features = self._core.connection.features
        gated = features is not None and features.completions_capability
        if gated and not self.server_capabilities.completions:
            return Completion()
        params: JsonObject = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        result = await self._core.request("completion/complete", params)
        completion = Fields(result, "completion/complete").opt_obj("completion") or {}
        return Completion.from_wire(Fields(completion, "completion/complete: completion"))

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at ``level`` and above (nothing sent without ``logging``)."""
        if self.server_capabilities.logging:
            await self._core.request("logging/setLevel", {"level": level})

    async def send_roots_list_changed(self) -> None:
        """Tell the server the roots changed (needs ``ClientHandlers.roots``)."""
        self._core.notify("notifications/roots/list_changed")
        await trio.lowlevel.checkpoint()

    # --- hooks for the core ----------------------------------------------------------------

    async def _answer(self, request: Request) -> JsonObject:
        return await answer_request(self._handlers, request)

    async def _notify(self, notification: Notification) -> None:
        if notification.method == "notifications/tools/list_changed":
            self._output_schemas.clear()
        if notification.method == "notifications/tasks/status":
            self.tasks.status_changed(notification.params)
        if notification.method == "notifications/progress":
            await self.tasks.progress_arrived(notification.params)
            return
        await dispatch_notification(self._handlers, notification)


@asynccontextmanager
async def open_client_session(
    stream: MessageStream,
    *,
    client_info: Implementation | None = None,
    handlers: ClientHandlers | None = None,
    options: ClientSessionOptions | None = None,
) -> AsyncIterator[ClientSession]:
    """Initialize an MCP session over ``stream`` and yield it; stop its tasks on the way out.

    The handshake declares only the capabilities ``handlers`` provide. The stream stays
    the caller's: it is not closed here. Leaving the block fails requests still pending
    (``TransportClosed``) and gives queued messages ``close_timeout`` to be written.

    Raises:
        RequestTimeout: the server did not answer ``initialize`` in ``request_timeout``.
        JsonRpcError / RemoteProtocolError: it refused, or spoke a version we do not.
        TransportBroken / TransportClosed / ServerExited: the transport ended first.
    """
    session = ClientSession(
        stream,
        client_info or DEFAULT_CLIENT_INFO,
        handlers or ClientHandlers(),
        options or ClientSessionOptions(),
    )
    try:
        async with trio.open_nursery() as nursery:
            session._core.start(nursery)
            try:
                await session._core.handshake()
                yield session
            finally:
                with trio.CancelScope(shield=True):
                    await session._core.close()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The nursery wraps the block's own exception: hand it back unwrapped.
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
