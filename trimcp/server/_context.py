"""``Context``: what a tool, resource or prompt function sees of the request it serves.

Annotate a parameter with ``Context`` and the server passes it by keyword; it is not part
of the input schema. It wraps the session's ``RequestContext`` (progress, cancellation,
logging) and sends the client requests a tool may need: sampling, elicitation, roots.
Each of those checks the client's declared capabilities first and raises
``ClientCapabilityMissing`` without sending anything when they are missing.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Unpack

from trimcp.server._client_features import (
    SampleResult,
    SamplingOptions,
    elicitation_schema,
    read_elicit_result,
    read_roots,
    read_sample_result,
    require_capability,
    sampling_params,
)
from trimcp.server._schema import ContextMarker
from trimcp.server._tasks import TaskRequest, announce, related_meta
from trimcp.sessions import LOG_LEVELS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from trimcp.auth import Identity
    from trimcp.protocol import ElicitResult, JsonObject, JsonValue, ProgressToken, RequestId, Root
    from trimcp.sessions import RequestContext, SessionHandle

    ResourceReader = Callable[[str, "Context"], Awaitable[list[JsonObject]]]

__all__ = ["Context"]


@typing.final
class Context(ContextMarker):
    """The request being served, and the session it came from.

    Built by the server for each call; not constructed by users.
    """

    __slots__ = ("_read", "_request")

    def __init__(
        self, request: RequestContext | TaskRequest, read_resource: ResourceReader
    ) -> None:
        self._request = request
        self._read = read_resource

    def for_task(self, request: TaskRequest) -> Context:
        """Return the context a task started from this request runs with."""
        return Context(request, self._read)

    @property
    def task_id(self) -> str | None:
        """The task this call runs as (a task-augmented ``tools/call``), else None."""
        request = self._request
        return request.record.task_id if isinstance(request, TaskRequest) else None

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the request being served."""
        return self._request.request_id

    @property
    def progress_token(self) -> ProgressToken | None:
        """The client's ``_meta.progressToken``, if it asked for progress."""
        return self._request.progress_token

    @property
    def session(self) -> SessionHandle:
        """The client session (capabilities, client info, raw ``request``/``notify``)."""
        return self._request.session

    @property
    def identity(self) -> Identity | None:
        """Whom the request's access token speaks for; None without authorization.

        Set over HTTP when the listener checks bearer tokens (``HttpOptions.auth``, the
        ``[auth]`` table): the subject, client id, scopes, expiry, issuer and every claim of
        the token, never the token itself. A task's calls see the identity of the session.
        """
        return self._request.session.identity

    @property
    def is_cancelled(self) -> bool:
        """True once the client cancelled this request (the call is being cancelled)."""
        return self._request.cancelled

    def close_sse_stream(self) -> bool:
        """Over Streamable HTTP, close this call's SSE connection but not its stream.

        The client reconnects after the ``retry`` delay with ``Last-Event-ID`` and gets the
        rest, the result included (2025-11-25 polling, for long calls). False elsewhere.
        """
        request = self._request
        return False if isinstance(request, TaskRequest) else request.close_sse_stream()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` if the client asked for it; return whether sent.

        Raises:
            LocalProtocolError: ``progress`` did not increase (Utilities > Progress: MUST).
        """
        return await self._request.report_progress(progress, total, message)

    # --- logging (notifications/message) ------------------------------------------------

    async def log(self, level: str, data: JsonValue, logger: str | None = None) -> bool:
        """Send ``notifications/message`` unless ``level`` is below the client's filter.

        Raises:
            ValueError: ``level`` is not an RFC 5424 level name.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; expected one of {LOG_LEVELS}")
        request = self._request
        if not isinstance(request, TaskRequest):
            return await request.log(level, data, logger)
        task_id = request.record.task_id
        # A task's messages carry its related-task _meta (Tasks: MUST).
        threshold = self.session.log_level
        if threshold is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return False
        params: JsonObject = {"level": level, "data": data, "_meta": related_meta(task_id)}
        if logger is not None:
            params["logger"] = logger
        await self.session.notify("notifications/message", params)
        return True

    async def debug(self, data: JsonValue, logger: str | None = None) -> bool:
        """Log at ``debug`` (see ``log``)."""
        return await self.log("debug", data, logger)

    async def info(self, data: JsonValue, logger: str | None = None) -> bool:
        """Log at ``info`` (see ``log``)."""
        return await self.log("info", data, logger)

    async def notice(self, data: JsonValue, logger: str | None = None) -> bool:
        """Log at ``notice`` (see ``log``)."""
        return await self.log("notice", data, logger)

    async def warning(self, data: JsonValue, logger: str | None = None) -> bool:
        """Log at ``warning`` (see ``log``)."""
        return await self.log("warning", data, logger)

    async def error(self, data: JsonValue, logger: str | None = None) -> bool:
        """Log at ``error`` (see ``log``)."""
        return await self.log("error", data, logger)

    # --- requests to the client ---------------------------------------------------------

    async def sample(
        self,
        messages: str | Sequence[object],
        *,
        max_tokens: int,
        **options: Unpack[SamplingOptions],
    ) -> SampleResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``messages`` is a string (one user message) or wire ``SamplingMessage`` dicts or
        ``PromptMessage`` objects. Waits for the client (and its human review), up to
        ``timeout`` seconds; cancelling the call cancels the request at the client.

        Raises:
            ClientCapabilityMissing: no ``sampling`` (or ``sampling.tools`` with ``tools``).
            RequestTimeout: no answer in time.
            JsonRpcError: the client refused (``-1`` is a user rejection).
        """
        capabilities = self.session.client_capabilities
        require_capability(capabilities, "sampling", "sampling/createMessage")
        if "tools" in options or "tool_choice" in options:
            require_capability(capabilities, "sampling_tools", "sampling with tools")
        params = sampling_params(messages, max_tokens, options)
        timeout = options.get("timeout")
        result = await self._ask_client("sampling/createMessage", params, timeout=timeout)
        return read_sample_result(result)

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, object] | type,
        *,
        timeout: float | None = None,
    ) -> ElicitResult:
        """Ask the user to fill a form (``elicitation/create``, form mode).

        ``schema`` is a flat JSON Schema object or a class (dataclass, TypedDict, pydantic
        model) of primitive fields. Accepted content is validated against it, and converted
        to the class when one was given. Never ask for secrets this way (use ``elicit_url``).

        Raises:
            ClientCapabilityMissing: the client did not declare form elicitation.
            ElicitationError: the answer breaks the schema.
            RequestTimeout / JsonRpcError: as for ``sample``.
        """
        require_capability(self.session.client_capabilities, "elicitation_form", "form elicitation")
        requested = elicitation_schema(schema)
        params: JsonObject = {"message": message, "requestedSchema": requested}
        if self._supports_modes():
            params = {"mode": "form", **params}
        result = await self._ask_client("elicitation/create", params, timeout=timeout)
        return read_elicit_result(result, requested, schema)

    async def elicit_url(
        self, message: str, url: str, elicitation_id: str, *, timeout: float | None = None
    ) -> ElicitResult:
        """Ask the user to open ``url`` out of band (URL mode, 2025-11-25).

        ``accept`` only means the user agreed to open it; send
        ``notifications/elicitation/complete`` when the flow finishes.

        Raises:
            ClientCapabilityMissing: the client did not declare ``elicitation.url``.
            RequestTimeout / JsonRpcError: as for ``sample``.
        """
        require_capability(self.session.client_capabilities, "elicitation_url", "URL elicitation")
        params: JsonObject = {
            "mode": "url",
            "message": message,
            "url": url,
            "elicitationId": elicitation_id,
        }
        result = await self._ask_client("elicitation/create", params, timeout=timeout)
        return read_elicit_result(result, {}, None)

    async def list_roots(self, *, timeout: float | None = None) -> list[Root]:
        """Ask the client for its roots (``roots/list``).

        Raises:
            ClientCapabilityMissing: the client did not declare ``roots``.
            RequestTimeout / JsonRpcError: as for ``sample``.
        """
        require_capability(self.session.client_capabilities, "roots", "roots/list")
        return read_roots(await self._ask_client("roots/list", None, timeout=timeout))

    async def read_resource(self, uri: str) -> list[JsonObject]:
        """Read one of this server's resources, as ``resources/read`` would (wire contents).

        Raises:
            ResourceNotFound: no resource or template matches ``uri``.
        """
        return await self._read(uri, self)

    async def _ask_client(
        self, method: str, params: JsonObject | None, *, timeout: float | None
    ) -> JsonObject:
        """Send a request to the client; inside a task, mark it and wait as input_required."""
        if not isinstance(self._request, TaskRequest):
            return await self.session.request(method, params, timeout=timeout)
        task = self._request.record
        task_id = task.task_id
        params = dict(params or {})
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **related_meta(task_id)}
        moved = task.move("input_required", f"waiting for the client to answer {method}")
        if moved:
            announce(self.session, task)
        try:
            return await self.session.request(method, params, timeout=timeout)
        finally:
            if moved and task.move("working"):
                announce(self.session, task)

    def _supports_modes(self) -> bool:
        # ``mode`` arrived in 2025-11-25; older clients know only the form shape.
        version = self.session.protocol_version
        return version is None or version >= "2025-11-25"
