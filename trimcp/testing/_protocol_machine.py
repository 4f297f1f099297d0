"""``ProtocolStateMachine``: a Hypothesis rule-based state machine around a real MCP session.

Subclass it, return your server from ``make_handler`` and write ``@rule``s that call your
tools; after every step the machine checks the protocol invariants over the whole wire log
(``_wire_log.check_wire``) and that the session is still alive::

    from hypothesis import settings, strategies as st
    from hypothesis.stateful import rule

    class EchoHandler:  # any RequestHandler, e.g. your server object
        server_info = Implementation(name="echo", version="1.0")
        capabilities = ServerCapabilities(tools=True)
        instructions = None

        async def handle_request(self, request, context):
            if request.method == "tools/list":
                return {"tools": [ECHO_TOOL]}
            if request.method == "tools/call":
                text = request.params["arguments"]["text"]
                return {"content": [{"type": "text", "text": text}]}
            raise MethodNotFound(request.method)

        async def handle_notification(self, notification, session): ...
        def session_opened(self, session): ...
        def session_closed(self, session): ...

    class EchoMachine(ProtocolStateMachine):
        builtin_rules = frozenset({"ping", "malformed", "notifications"})

        def make_handler(self):
            return EchoHandler()

        @rule(text=st.text())
        def echo(self, text):
            response = self.call_tool("echo", {"text": text})
            assert response.result["content"][0]["text"] == text

    TestEcho = EchoMachine.TestCase
    TestEcho.settings = settings(max_examples=20, stateful_step_count=15, deadline=None)

How the synchronous machine drives async code: each machine owns a ``TrioHost``, one trio run
in a helper thread, started in ``__init__`` and ended in ``teardown``. The ``Session`` actor,
the user's handler and the client's reader task (a ``SessionPeer``) all live in that run, for
the machine's whole life; each helper (``request``, ``call_tool``, ``notify``, ``send_raw``)
enters the run with ``trio.from_thread.run``, sends, and blocks until its response arrived
(or ``response_timeout`` real seconds passed, which fails the step). ``notify`` and
``send_raw`` then *settle*: wait until the run is idle and a ``ping`` came back, so answers a
notification should never have had are in the log before the invariants look. Run machines
from synchronous tests, never from inside a trio test.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, TypeVar, TypeVarTuple

import hypothesis.strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trimcp.protocol import (
    ClientCapabilities,
    ClientConnection,
    Implementation,
    Result,
    ServerCapabilities,
)
from trimcp.sessions import SessionOptions

from ._session_peer import SessionPeer, default_answer
from ._strategies import malformed_messages, mcp_notifications, mcp_requests
from ._trio_host import TrioHost
from ._wire_log import check_wire

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from hypothesis.strategies import SearchStrategy

    from trimcp.protocol import JsonObject, JsonValue, Response
    from trimcp.sessions import RequestHandler
    from trimcp.transports import MessageStream

    from ._strategies import MethodCall
    from ._wire_log import WireRecord

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

#: Pages a listing helper follows before it stops (a server that never ends its cursor).
_MAX_PAGES = 20


class ProtocolStateMachine(RuleBasedStateMachine):
    """A state machine whose steps talk MCP to one real session (see the module docstring).

    Class attributes to override:
        client_capabilities: what the machine's client declares (default: nothing).
        client_info: its ``clientInfo``.
        session_options: the session's options; the default turns the initialization
            timeout off, since steps may take real time.
        response_timeout: real seconds each helper waits for its response.
        initialize_first: run the handshake in ``__init__`` (default). If false, the session
            starts uninitialized and the built-in ``builtin_initialize`` rule may run it at
            any step, so rules also exercise the server before ``initialize``.
        builtin_rules: built-in rules to enable, any of ``"ping"``, ``"malformed"`` (a
            ``malformed_messages`` value), ``"list_tools"``, ``"requests"`` (an
            ``mcp_requests`` value for what the server declared) and ``"notifications"``
            (an ``mcp_notifications`` value).

    Methods to override: ``make_handler`` (required), ``answer_server_request`` and
    ``wrap_server_stream``.
    """

    client_capabilities: ClassVar[ClientCapabilities] = ClientCapabilities()
    client_info: ClassVar[Implementation] = Implementation(
        name="trimcp-protocol-machine", version="1.0"
    )
    session_options: ClassVar[SessionOptions] = SessionOptions(initialization_timeout=math.inf)
    response_timeout: ClassVar[float] = 5.0
    initialize_first: ClassVar[bool] = True
    builtin_rules: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self._host = TrioHost(name=f"{type(self).__name__}-trio")
        self._closed = False
        self._requests: SearchStrategy[MethodCall] | None = None
        self._malformed: SearchStrategy[bytes] | None = None
        connection = ClientConnection(self.client_info, self.client_capabilities)
        self._peer = SessionPeer(
            connection, self.answer_server_request, timeout=self.response_timeout
        )
        try:
            self._host.run(
                self._peer.start,
                self._host.nursery,
                self.make_handler(),
                self.session_options,
                self.wrap_server_stream,
            )
            if self.initialize_first:
                response = self.initialize()
                if not isinstance(response, Result):
                    raise AssertionError(f"initialize failed: {response}")
        except BaseException:
            self._shutdown()
            raise

    # --- hooks --------------------------------------------------------------------------

    def make_handler(self) -> RequestHandler:
        """Return the server under test; called once per machine, before the session starts."""
        raise NotImplementedError("ProtocolStateMachine subclasses implement make_handler()")

    def answer_server_request(self, method: str, params: JsonObject | None) -> JsonObject:
        """Answer a request the server sent (``roots/list``...); raise ``JsonRpcError`` to refuse.

        Called inside the trio run, synchronously: do not block. Requests for capabilities
        the client did not declare never get here (the client core refuses them, and the
        invariant reports them). Default: no roots, elicitation declined, -32601 otherwise.
        """
        return default_answer(method, params)

    def wrap_server_stream(self, stream: MessageStream) -> MessageStream:
        """Return the stream the session uses (default: ``stream`` itself).

        Wrap it to put a transport adapter or a fault injector between the session and the
        wire; the invariants then judge what comes out of the wrapper. A wrapper implements
        all of ``MessageStream``; its ``receive_ready`` may always return ``[]``.
        """
        return stream

    # --- helpers for rules ----------------------------------------------------------------

    def _begin(self, label: str) -> None:
        self._host.run_sync(self._peer.begin, label)

    def _step(self, afn: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
        """Run one helper in the trio run; a failure also lists the violations seen so far."""
        try:
            return self._host.run(afn, *args)
        except AssertionError as exc:
            problems = self._problems(complete=False)
            if not problems:
                raise
            raise AssertionError(_report(f"{exc}; protocol violations", problems)) from exc

    def _problems(self, *, complete: bool) -> list[str]:
        log, notes = self._host.run_sync(self._peer.snapshot)
        problems = check_wire(
            log,
            client_capabilities=self.client_capabilities,
            max_message_size=self.session_options.max_message_size,
            complete=complete,
        )
        problems.extend(notes)
        return problems

    def initialize(self) -> Response:
        """Run the MCP handshake; ``notifications/initialized`` follows a successful result."""
        self._begin("initialize")
        return self._step(self._peer.initialize)

    def request(self, method: str, params: JsonObject | None = None) -> Response:
        """Send one request (nothing is refused client-side) and return its response.

        Raises:
            AssertionError: no response within ``response_timeout`` seconds.
        """
        self._begin(f"request {method}")
        _, response = self._step(self._peer.request, method, params)
        return response

    def call_tool(self, name: str, arguments: JsonValue = None) -> Response:
        """Send ``tools/call`` for ``name`` (``arguments`` omitted when ``None``)."""
        params: JsonObject = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        self._begin(f"call_tool {name}")
        _, response = self._step(self._peer.request, "tools/call", params)
        return response

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification, then settle (see the module docstring)."""
        self._begin(f"notify {method}")
        self._step(self._peer.notify, method, params)

    def send_raw(self, data: bytes) -> Response | None:
        """Send any bytes as one message; return the response a readable request id is owed.

        Waits for that response if the bytes are a request (or an invalid message whose id
        can be read), then settles, so id-less errors are in the log too.
        """
        self._begin(f"send_raw {len(data)} bytes")
        limit = self.session_options.max_message_size
        return self._step(self._peer.send_raw, data, limit)

    def list_tools(self) -> list[JsonObject]:
        """Return every tool of the server, following ``nextCursor``."""
        return self._list_all("tools/list", "tools")

    def _list_all(self, method: str, key: str) -> list[JsonObject]:
        found: list[JsonObject] = []
        params: JsonObject | None = None
        for _ in range(_MAX_PAGES):
            response = self.request(method, params)
            if not isinstance(response, Result):
                raise AssertionError(f"{method} failed: {response.error}")
            page = response.result.get(key)
            if not isinstance(page, list):
                raise AssertionError(f"{method} result has no {key} list: {response.result}")
            found.extend(item for item in page if isinstance(item, dict))
            cursor = response.result.get("nextCursor")
            if not isinstance(cursor, str):
                break
            params = {"cursor": cursor}
        return found

    @property
    def initialized(self) -> bool:
        """Tell whether the handshake completed."""
        return self._host.run_sync(lambda: self._peer.initialized)

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared at ``initialize`` (nothing before)."""
        return self._host.run_sync(lambda: self._peer.connection.server_capabilities)

    @property
    def wire_log(self) -> tuple[WireRecord, ...]:
        """Every message so far, in order (a snapshot)."""
        log, _ = self._host.run_sync(self._peer.snapshot)
        return log

    # --- invariants ---------------------------------------------------------------------

    @invariant()
    def server_follows_the_protocol(self) -> None:
        """Check the wire invariants (``check_wire``) over the whole log."""
        problems = self._problems(complete=True)
        if problems:
            raise AssertionError(_report("protocol violations", problems))

    @invariant()
    def session_is_alive(self) -> None:
        """Fail if the session stopped: a server must survive whatever a client sends."""
        reason = self._host.run_sync(self._peer.exit_reason)
        if reason is not None:
            raise AssertionError(f"the session stopped: {reason}") from reason.error

    # --- built-in rules -----------------------------------------------------------------

    @precondition(lambda self: not self.initialized)
    @rule()
    def builtin_initialize(self) -> None:
        """Run the handshake (only when ``initialize_first`` is false and it has not run)."""
        self.initialize()

    @precondition(lambda self: "ping" in self.builtin_rules)
    @rule()
    def builtin_ping(self) -> None:
        """``ping`` is answered with an empty result in every phase."""
        response = self.request("ping")
        assert isinstance(response, Result), f"ping failed: {response}"
        assert response.result == {}, f"ping result is not empty: {response.result}"

    @precondition(lambda self: "malformed" in self.builtin_rules)
    @rule(data=st.data())
    def builtin_malformed(self, data: st.DataObject) -> None:
        """Send one malformed message; the invariants judge the answer."""
        if self._malformed is None:
            limit = self.session_options.max_message_size
            self._malformed = malformed_messages(max_message_size=limit)
        self.send_raw(data.draw(self._malformed, label="malformed"))

    @precondition(lambda self: "list_tools" in self.builtin_rules and self.initialized)
    @rule()
    def builtin_list_tools(self) -> None:
        """List the tools (every page) if the server declared them."""
        if self.server_capabilities.tools:
            self.list_tools()

    @precondition(lambda self: "requests" in self.builtin_rules and self.initialized)
    @rule(data=st.data())
    def builtin_request(self, data: st.DataObject) -> None:
        """Send one valid request for what the server declared (``mcp_requests``)."""
        if self._requests is None:
            self._requests = self._declared_requests()
        method, params = data.draw(self._requests, label="request")
        self.request(method, params)

    def _declared_requests(self) -> SearchStrategy[MethodCall]:
        caps = self.server_capabilities
        resources = self._list_all("resources/list", "resources") if caps.resources else None
        templates = (
            self._list_all("resources/templates/list", "resourceTemplates")
            if caps.resources
            else None
        )
        return mcp_requests(
            tools=self.list_tools() if caps.tools else None,
            resources=resources,
            templates=templates,
            prompts=self._list_all("prompts/list", "prompts") if caps.prompts else None,
            capabilities=caps,
        )

    @precondition(lambda self: "notifications" in self.builtin_rules and self.initialized)
    @rule(data=st.data())
    def builtin_notification(self, data: st.DataObject) -> None:
        """Send one notification (``mcp_notifications``); nothing may answer it."""
        strategy = mcp_notifications(roots_list_changed=self.client_capabilities.roots_list_changed)
        method, params = data.draw(strategy, label="notification")
        self.notify(method, params)

    # --- teardown -----------------------------------------------------------------------

    def teardown(self) -> None:
        """Stop the session and end the trio run. Idempotent."""
        self._shutdown()

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._host.running:
                self._host.run(self._peer.stop)
        finally:
            self._host.close()


def _report(title: str, problems: list[str]) -> str:
    return f"{title}:\n- " + "\n- ".join(problems)
