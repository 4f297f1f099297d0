"""``Context``: what a tool, resource or prompt function sees of the request it serves.

Annotate a parameter with ``Context`` and the server passes it by keyword; it is not part
of the input schema. It wraps the session's ``RequestContext`` (progress, cancellation,
logging) and sends the client requests a tool may need: sampling, elicitation, roots.
Each of those checks the client's declared capabilities first and raises
``ClientCapabilityMissing`` without sending anything when they are missing.

The same code serves both protocol eras. In a session (2025-11-25 and before) those are
requests to the client, awaited in place. On a per-request 2026-07-28 ``tools/call``,
``resources/read`` or ``prompts/get`` there is no session to send them on: the call answers
with an ``InputRequiredResult`` and runs again, from its start, when the client retries with
the answers (``_mrtr.py`` says how, and what a handler must be ready to repeat); a missing
capability is then the spec's -32021 error, which names it. A 2026-07-28 call of a
task-supporting tool may go on as a task of the Tasks extension (``continue_as_task``,
``_tasks_ext.py``): its asks then wait for the client's ``tasks/update`` in place, and it
sends no progress or log messages (the request they belonged to has been answered).
"""

from __future__ import annotations

import inspect
import typing
from typing import TYPE_CHECKING, Unpack

from trimcp.errors import ClientCapabilityMissing, LocalProtocolError, MissingClientCapability
from trimcp.protocol import is_modern
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
from trimcp.server._values import to_jsonable
from trimcp.sessions import LOG_LEVELS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from trimcp.auth import Identity
    from trimcp.protocol import ElicitResult, JsonObject, JsonValue, ProgressToken, RequestId, Root
    from trimcp.server._mrtr import Round, TaskHost
    from trimcp.sessions import RequestContext, SessionHandle

    ResourceReader = Callable[[str, "Context"], Awaitable[list[JsonObject]]]

__all__ = ["Context"]


@typing.final
class Context(ContextMarker):
    """The request being served, and the session it came from.

    Built by the server for each call; not constructed by users.
    """

    __slots__ = ("_read", "_request", "_round")

    def __init__(
        self,
        request: RequestContext | TaskRequest,
        read_resource: ResourceReader,
        round_: Round | None = None,
    ) -> None:
        self._request = request
        self._read = read_resource
        # The multi round-trip pass this call runs in (a 2026-07-28 request), if any.
        self._round = round_

    def for_task(self, request: TaskRequest) -> Context:
        """Return the context a task started from this request runs with."""
        return Context(request, self._read)

    @property
    def modern(self) -> bool:
        """True when serving a per-request (2026-07-28) request rather than a session's."""
        return is_modern(self._request.session.protocol_version)

    @property
    def trace_context(self) -> Mapping[str, str]:
        """The W3C ``traceparent``, ``tracestate`` and ``baggage`` the request's ``_meta``
        carried (2026-07-28, SEP-414); empty when it carried none, and in a session."""
        meta = self._request.session.request_meta
        return {} if meta is None else meta.trace

    async def once(self, key: str, fn: Callable[[], Awaitable[JsonValue] | JsonValue]) -> JsonValue:
        """Run ``fn`` once per request, even when a 2026-07-28 request runs several rounds.

        A call that asks the client for input (``elicit``, ``sample``, ``list_roots``) over
        2026-07-28 runs again from its start when the client answers. Put what must not
        happen twice (an order placed, a mail sent, an id minted) in ``fn``: its JSON result
        is sealed into the request's state and returned on the later rounds without running
        ``fn`` again. In a session, ``fn`` simply runs. ``key`` names the step; use a
        different one per step.

        Raises:
            TypeError: ``fn`` returned something that is not JSON (on a 2026-07-28 request).
        """
        carried = None if self._round is None else self._round.carried
        if carried is not None and key in carried:
            return carried[key]
        value = fn()
        if inspect.isawaitable(value):
            value = await value
        if carried is not None:
            carried[key] = to_jsonable(value)
        return value

    @property
    def task_id(self) -> str | None:
        """The task this call runs as (a task-augmented ``tools/call``, or a 2026-07-28 call
        that went on as a task of the Tasks extension), else None."""
        request = self._request
        if isinstance(request, TaskRequest):
            return request.record.task_id
        host = None if self._round is None else self._round.host
        return None if host is None else host.task_id

    def continue_as_task(self) -> bool:
        """Answer this call's request with a task now, and go on running as that task.

        For a 2026-07-28 ``tools/call`` of a tool with ``task_support`` ``"optional"`` or
        ``"required"`` whose client declared the Tasks extension (SEP-2663): the client gets
        a ``CreateTaskResult`` and polls ``tasks/get`` for the result. Call it where the
        part worth waiting for ends, e.g. after gathering input with ``elicit`` (asked
        before, that input is a multi round-trip exchange of the call itself; asked after,
        it is the task's, answered through ``tasks/update`` without running the tool
        again). Without it, such a call becomes a task once it has run for
        ``TasksExtensionPolicy.detach_after`` seconds. Returns True once the call is a
        task; False where it cannot become one (a session, another tool or client, a server
        with no task runner, or a full task store): the call then simply goes on.
        """
        host = None if self._round is None else self._round.host
        return host is not None and host.continue_as_task()

    def _task_host(self) -> TaskHost | None:
        """The Tasks extension's task this call now runs as, if it became one."""
        host = None if self._round is None else self._round.host
        return host if host is not None and host.task_id is not None else None

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
        """True once the client cancelled this request or task (the call is being cancelled)."""
        host = self._task_host()
        return self._request.cancelled if host is None else host.cancelled

    def close_sse_stream(self) -> bool:
        """Over Streamable HTTP, close this call's SSE connection but not its stream.

        The client reconnects after the ``retry`` delay with ``Last-Event-ID`` and gets the
        rest, the result included (2025-11-25 polling, for long calls). False elsewhere.
        """
        request = self._request
        if isinstance(request, TaskRequest) or self._task_host() is not None:
            return False
        return request.close_sse_stream()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` if the client asked for it; return whether sent.

        A task of the Tasks extension sends none (SEP-2663: not supported on tasks).

        Raises:
            LocalProtocolError: ``progress`` did not increase (Utilities > Progress: MUST).
        """
        if self._task_host() is not None:
            return False
        return await self._request.report_progress(progress, total, message)

    # --- logging (notifications/message) ------------------------------------------------

    async def log(self, level: str, data: JsonValue, logger: str | None = None) -> bool:
        """Send ``notifications/message`` unless ``level`` is below the client's filter.

        A task of the Tasks extension sends none (SEP-2663: not supported on tasks).

        Raises:
            ValueError: ``level`` is not an RFC 5424 level name.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; expected one of {LOG_LEVELS}")
        if self._task_host() is not None:
            return False
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
        self._require("sampling", "sampling/createMessage")
        if "tools" in options or "tool_choice" in options:
            self._require("sampling_tools", "sampling with tools")
        params = sampling_params(messages, max_tokens, options)
        timeout = options.get("timeout")
        result = await self._ask_client(
            "sampling/createMessage", params, timeout=timeout, key=options.get("key")
        )
        return read_sample_result(result)

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, object] | type,
        *,
        timeout: float | None = None,
        key: str | None = None,
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
        self._require("elicitation_form", "form elicitation")
        requested = elicitation_schema(schema)
        params: JsonObject = {"message": message, "requestedSchema": requested}
        if self._supports_modes():
            params = {"mode": "form", **params}
        result = await self._ask_client("elicitation/create", params, timeout=timeout, key=key)
        return read_elicit_result(result, requested, schema)

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str,
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the user to open ``url`` out of band (URL mode, 2025-11-25).

        ``accept`` only means the user agreed to open it; in a session, send
        ``notifications/elicitation/complete`` when the flow finishes. 2026-07-28 has no
        ``elicitationId`` nor that notification: the client retries when the user is done,
        and the call finds out then whether the flow finished.

        Raises:
            ClientCapabilityMissing: the client did not declare ``elicitation.url``.
            RequestTimeout / JsonRpcError: as for ``sample``.
        """
        self._require("elicitation_url", "URL elicitation")
        params: JsonObject = {"mode": "url", "message": message, "url": url}
        if not self.modern:
            params["elicitationId"] = elicitation_id
        result = await self._ask_client("elicitation/create", params, timeout=timeout, key=key)
        return read_elicit_result(result, {}, None)

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> list[Root]:
        """Ask the client for its roots (``roots/list``).

        Raises:
            ClientCapabilityMissing: the client did not declare ``roots``.
            RequestTimeout / JsonRpcError: as for ``sample``.
        """
        self._require("roots", "roots/list")
        return read_roots(await self._ask_client("roots/list", None, timeout=timeout, key=key))

    async def read_resource(self, uri: str) -> list[JsonObject]:
        """Read one of this server's resources, as ``resources/read`` would (wire contents).

        Raises:
            ResourceNotFound: no resource or template matches ``uri``.
        """
        return await self._read(uri, self)

    def _require(self, flag: str, what: str) -> None:
        """Check that the client declared ``flag`` (see ``require_capability``).

        Raises:
            ClientCapabilityMissing: in a session.
            MissingClientCapability: on a 2026-07-28 request (-32021, naming it).
        """
        try:
            require_capability(self.session.client_capabilities, flag, what)
        except ClientCapabilityMissing as exc:
            if not self.modern:
                raise
            path = flag.split("_")
            required: dict[str, object] = {}
            node = required
            for part in path:
                node[part] = node = {}
            raise MissingClientCapability(
                required,
                f"{exc}: this request needs the client capability {'.'.join(path)}; declare "
                "it in _meta clientCapabilities to use this tool",
            ) from None

    async def _ask_client(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        key: str | None = None,
    ) -> JsonObject:
        """Ask the client: a request in a session; on 2026-07-28 a multi round-trip ask.

        Inside a task (2025-11-25), mark the task input_required while waiting.
        """
        round_ = self._round
        if round_ is not None:
            return await round_.ask(key or round_.key_for(method), method, params)
        if self.modern:
            raise LocalProtocolError(
                f"{method}: a 2026-07-28 client can be asked for input only during "
                "tools/call, resources/read and prompts/get"
            )
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
