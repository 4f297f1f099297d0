"""``ClientSession``: a connected MCP server, as typed methods, whichever era it speaks.

    async with open_server_process(spec) as stream:                  # or any MessageStream
        async with open_client_session(stream, handlers=ClientHandlers(roots=roots)) as s:
            tools = await s.list_tools()                             # every page
            result = await s.call_tool("add", {"a": 1, "b": 2}, on_progress=show)

The session core (``_core``) moves messages, times requests out, and renews an expired
session; ``_era`` opens it in the era the server speaks (2026-07-28 per-request ``_meta``,
or the ``initialize`` handshake); this module adds the MCP methods on top, the same for
both eras. A method whose capability the server did not declare sends nothing: listings
return ``[]``, ``complete`` an empty ``Completion``, ``set_logging_level`` does nothing;
methods that need an answer (``call_tool``, ``read_resource``, ``get_prompt``,
subscriptions, tasks) raise ``MethodNotFound`` at once, as the server would have.

Towards a 2026-07-28 server: ``call_tool``, ``read_resource`` and ``get_prompt`` answer
its ``InputRequiredResult`` rounds with the same ``ClientHandlers`` that answer a
2025-11-25 server's requests (``_mrtr``); list pages are reused while their ``ttlMs``
lasts (``_listcache``); list changes and resource updates come over a
``subscriptions/listen`` stream (``_listen``); ``set_logging_level`` sets the level every
request then asks for; ``ping`` is a ``server/discover``. Task methods live in ``_tasks``,
listing page by page in ``_pages``, what the client offers the server in ``_handlers``.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import HeaderMismatch, InvalidParams, TransportClosed
from trimcp.protocol import (
    LATEST_VERSION,
    ClientConnection,
    ClientOptions,
    Era,
    Fields,
    Page,
)

from ._core import SessionCore, SessionHooks
from ._errors import CLOSED_BY_CLIENT, require, resource_not_found
from ._handlers import answer_request, capabilities_for
from ._listcache import CachedLister, ListCache, invalidated_by
from ._listen import subscription_id
from ._mrtr import answer_input, rounds
from ._notify import dispatch_notification
from ._pages import every_page, one_page
from ._results import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Prompt,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
)
from ._tasks import TaskMethods, tool_call_params
from ._tools import ToolBook

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.protocol import (
        Implementation,
        InitializeResult,
        JsonObject,
        JsonValue,
        Notification,
        Request,
        ServerCapabilities,
    )
    from trimcp.transports import MessageStream

    from ._core import ProgressCallback
    from ._handlers import ClientHandlers
    from ._listen import Listener
    from ._mrtr import InputRequest
    from ._options import ClientSessionOptions

__all__ = ["ClientSession", "prompt_ref", "resource_ref"]

logger = logging.getLogger(__name__)


def prompt_ref(name: str) -> JsonObject:
    """Return a ``completion/complete`` reference to a prompt."""
    return {"type": "ref/prompt", "name": name}


def resource_ref(uri: str) -> JsonObject:
    """Return a ``completion/complete`` reference to a resource (template)."""
    return {"type": "ref/resource", "uri": uri}


@final
class ClientSession:
    """One MCP session with a server, in either era. Get one from ``open_client_session``.

    Every request method takes ``timeout`` (seconds; None: the session's
    ``request_timeout``, ``math.inf``: none) where it may run long, and raises:

    Raises:
        JsonRpcError: the server answered with an error (``MethodNotFound``,
            ``InvalidParams``, ``ResourceNotFound``, ``HeaderMismatch``, ...).
        RequestTimeout: no answer in time; the request was cancelled.
        ConnectionLost: the transport ended (``__cause__`` says how: ``ServerExited``...).
        SessionExpired: the server forgot the session and the retry on a new one failed.
        RemoteProtocolError: the server's answer is malformed, or it asked for input
            beyond ``max_input_rounds`` or for a capability the client did not declare.

    Cancelling the calling task cancels the request (``notifications/cancelled``; over
    HTTP towards a 2026-07-28 server, its response stream is closed).
    """

    def __init__(
        self, stream: MessageStream, client_info: Implementation, handlers: ClientHandlers,
        options: ClientSessionOptions,
    ) -> None:  # fmt: skip
        self._handlers = handlers
        self._client_info = client_info
        self._capabilities = capabilities_for(handlers)
        # 2026-07-28 sends logs only for requests that ask for a level: ask for "info" and
        # above when the application listens, as a 2025-11-25 server sends by default.
        self._log_level: str | None = "info" if handlers.on_log is not None else None
        self._max_message_size = options.max_message_size
        self._core = SessionCore(
            stream,
            lambda: self.connect(options.protocol_version or LATEST_VERSION),
            options,
            SessionHooks(answer=self._answer, notify=self._notify),
        )
        self._tokens = itertools.count(1)
        self._tools = ToolBook()
        self._lists = ListCache()
        self._lister = CachedLister(self._core, self._lists, stream)
        self.listener: Listener | None = None
        self.tasks = TaskMethods(self._core, self.new_progress_token)

    def connect(self, version: str) -> ClientConnection:
        """Return a fresh protocol core speaking ``version`` (the era opening's factory)."""
        protocol = ClientOptions(protocol_version=version, max_message_size=self._max_message_size)
        conn = ClientConnection(self._client_info, self._capabilities, protocol)
        conn.log_level = self._log_level
        return conn

    # --- what the server said when the session opened --------------------------------------

    @property
    def initialize_result(self) -> InitializeResult:
        """The server's ``initialize`` answer (the latest, after a renewal); towards a
        2026-07-28 server, what ``server/discover`` said, in the same shape."""
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
        """The protocol version in use (negotiated, or declared on every request)."""
        return self.initialize_result.protocol_version

    @property
    def era(self) -> Era:
        """``Era.MODERN`` towards a 2026-07-28 server, else ``Era.HANDSHAKE``."""
        return Era.MODERN if self._core.connection.modern else Era.HANDSHAKE

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
        """Send any request and return its raw result (an ``InputRequiredResult`` too).

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

    async def _complete(
        self,
        method: str,
        params: JsonObject,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Send a request that may ask for input; answer every round; return the result."""
        if not self._core.connection.modern:
            return await self.request(method, params, timeout=timeout, on_progress=on_progress)

        async def send(round_params: JsonObject | None) -> JsonObject:
            return await self.request(
                method, round_params, timeout=timeout, on_progress=on_progress
            )

        async def answer(request: InputRequest) -> JsonObject:
            return await answer_input(self._handlers, self._core.connection, request)

        return await rounds(send, method, params, answer, self.options.max_input_rounds)

    def new_progress_token(self) -> int:
        """Return a progress token no other request of this session uses."""
        return next(self._tokens)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers (``server/discover`` towards a 2026-07-28 server,
        which has no ``ping``)."""
        method = "server/discover" if self._core.connection.modern else "ping"
        await self._core.request(method, timeout=timeout)

    # --- tools -----------------------------------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        """Return every tool, following ``nextCursor`` to the end ([] without ``tools``).

        Towards a 2026-07-28 server over Streamable HTTP, a tool whose ``x-mcp-header``
        annotations are invalid is left out (and a warning logged once).
        """
        if not self.server_capabilities.tools:
            return []
        tools = await every_page(self._lister, "tools/list", "tools", Tool.from_wire)
        return [tool for tool in tools if self._tools.admit(tool)]

    async def list_tools_page(self, cursor: str | None = None) -> Page[Tool]:
        """Return one page of tools (invalid ones left out, as ``list_tools`` does)."""
        if not self.server_capabilities.tools:
            return Page(())
        page = await one_page(self._lister, "tools/list", "tools", Tool.from_wire, cursor)
        return Page(tuple(t for t in page.items if self._tools.admit(t)), page.next_cursor)

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
        ``list_tools`` has shown it (unless ``validate_structured_content`` is off). A
        2026-07-28 server that refuses the call with ``HeaderMismatch`` before the tools
        were listed gets it once more after a listing (its ``x-mcp-header`` parameters
        are known then).

        Raises:
            ToolOutputInvalid: the structured result does not match the schema, or is
                missing although the tool declares one.
        """
        require(self.server_capabilities.tools, "tools/call")
        params = tool_call_params(name, arguments, meta)
        send = self._complete
        try:
            result = await send("tools/call", params, timeout=timeout, on_progress=on_progress)
        except HeaderMismatch:
            if self._tools.headers is None or self._tools.knows(name):
                raise
            await self.list_tools()
            result = await send("tools/call", params, timeout=timeout, on_progress=on_progress)
        parsed = CallToolResult.from_wire(Fields(result, "tools/call"))
        self.check_output(name, parsed)
        return parsed

    def check_output(self, name: str, result: CallToolResult) -> None:
        """Validate ``result`` against the known ``outputSchema`` of tool ``name``."""
        if self.options.validate_structured_content:
            self._tools.check_output(name, result)

    # --- resources -------------------------------------------------------------------------

    async def list_resources(self) -> list[Resource]:
        """Return every resource, all pages ([] without ``resources``)."""
        if not self.server_capabilities.resources:
            return []
        return await every_page(self._lister, "resources/list", "resources", Resource.from_wire)

    async def list_resources_page(self, cursor: str | None = None) -> Page[Resource]:
        """Return one page of resources."""
        if not self.server_capabilities.resources:
            return Page(())
        return await one_page(
            self._lister, "resources/list", "resources", Resource.from_wire, cursor
        )

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Return every resource template, all pages."""
        if not self.server_capabilities.resources:
            return []
        return await every_page(
            self._lister,
            "resources/templates/list",
            "resourceTemplates",
            ResourceTemplate.from_wire,
        )

    async def read_resource(
        self, uri: str, *, timeout: float | None = None
    ) -> list[ResourceContents]:
        """Read a resource; a read may return several items (sub-resources).

        Raises:
            ResourceNotFound: no such resource. A 2026-07-28 server says so with -32602 and
                ``data.uri`` (Resources > Error Handling), an older one with -32002; the
                exception is the same, its ``code`` the one the server sent.
        """
        require(self.server_capabilities.resources, "resources/read")
        try:
            result = await self._complete("resources/read", {"uri": uri}, timeout=timeout)
        except InvalidParams as exc:
            raise resource_not_found(exc, uri) from exc
        fields = Fields(result, "resources/read")
        return [
            ResourceContents.from_wire(item) for item in fields.obj_list("contents", required=True)
        ]

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``
        (``ClientHandlers.on_resource_updated`` receives them).

        Towards a 2026-07-28 server the session's ``subscriptions/listen`` stream is opened
        again with ``uri`` added; this returns once the server acknowledged it.
        """
        require(self.server_capabilities.resources_subscribe, "resources/subscribe")
        if self.listener is not None:
            await self.listener.subscribe(uri, self.options.request_timeout)
            return
        await self._core.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the updates about ``uri``."""
        require(self.server_capabilities.resources_subscribe, "resources/unsubscribe")
        if self.listener is not None:
            await self.listener.unsubscribe(uri, self.options.request_timeout)
            return
        await self._core.request("resources/unsubscribe", {"uri": uri})

    # --- prompts, completion, logging ------------------------------------------------------

    async def list_prompts(self) -> list[Prompt]:
        """Return every prompt, all pages ([] without ``prompts``)."""
        if not self.server_capabilities.prompts:
            return []
        return await every_page(self._lister, "prompts/list", "prompts", Prompt.from_wire)

    async def list_prompts_page(self, cursor: str | None = None) -> Page[Prompt]:
        """Return one page of prompts."""
        if not self.server_capabilities.prompts:
            return Page(())
        return await one_page(self._lister, "prompts/list", "prompts", Prompt.from_wire, cursor)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prompt's messages for ``arguments`` (strings)."""
        require(self.server_capabilities.prompts, "prompts/get")
        params: JsonObject = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result = await self._complete("prompts/get", params)
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
        """Ask for log messages at ``level`` and above (nothing sent without ``logging``).

        Towards a 2026-07-28 server, which has no ``logging/setLevel``, every later request
        asks for ``level`` in its ``_meta``.
        """
        if not self.server_capabilities.logging:
            return
        if self._core.connection.modern:
            self._log_level = self._core.connection.log_level = level
            await trio.lowlevel.checkpoint()
            return
        await self._core.request("logging/setLevel", {"level": level})

    async def send_roots_list_changed(self) -> None:
        """Tell the server the roots changed (needs ``ClientHandlers.roots``). A 2026-07-28
        server asks for the roots whenever it needs them: nothing is sent to one."""
        if not self._core.connection.modern:
            self._core.notify("notifications/roots/list_changed")
        await trio.lowlevel.checkpoint()

    def forget_lists(self) -> None:
        """Drop every cached list page and what was learnt of the tools (a listen stream
        dropped: changes may have gone unnoticed, as across a server's restart)."""
        self._lists.clear()
        self._tools.forget()

    # --- hooks for the core ----------------------------------------------------------------

    async def _answer(self, request: Request) -> JsonObject:
        return await answer_request(self._handlers, request)

    async def _notify(self, notification: Notification) -> None:
        sid = subscription_id(notification)
        if sid is not None and (
            self.listener is None or not self.listener.accept(notification, sid)
        ):
            return  # an acknowledgement, or a stream that is no longer ours
        stale = invalidated_by(notification.method)
        if stale:
            self._lists.invalidate(stale)
        if notification.method == "notifications/tools/list_changed":
            self._tools.forget()
        if notification.method == "notifications/tasks/status":
            self.tasks.status_changed(notification.params)
        if notification.method == "notifications/progress":
            await self.tasks.progress_arrived(notification.params)
            return
        await dispatch_notification(self._handlers, notification)
