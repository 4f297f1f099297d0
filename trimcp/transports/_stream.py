"""``MessageStream`` and its optional capabilities: the seam between a transport and a session.

A transport turns bytes into one whole JSON-RPC message at a time (a stdio line, an HTTP
body, a WebSocket text frame) and back; it never looks inside the message. Sessions (the
server's ``Session`` actor, the client's ``ClientSession``) are written against these
protocols only, so every transport serves the same session.

``MessageStream`` is what every stream offers. A stream may offer more, and a session uses
it when it is there; each optional capability is a ``runtime_checkable`` protocol of its own,
which the consuming side asks about with ``isinstance`` (once per session, not per message):

* ``PushedInput`` (``attach_input``): the stream hands its input to an ``InputSink`` instead
  of waiting to be read, so an idle session has no task parked on it (Streamable HTTP).
* ``RoutedOutput`` (``send_routed_now``, ``send_routed``, ``send_one_now``): the stream takes
  each message with the client request it belongs to (``Routed``), to deliver it per request
  (Streamable HTTP puts a request's progress and response on the SSE stream of its POST).
* ``ImmediateOutput`` (``send_messages_now``): the stream can write without waiting, so a
  reply often costs no schedule point (stdio, a launched server's stdin).
* ``RequestStreamControl`` (``close_request_stream``): the stream can close the connection
  a request's answer streams on while keeping the stream resumable (Streamable HTTP).
* ``ReadyMarker`` (``mark_ready``): the stream wants to know that the client's handshake
  finished (a launched server process: an exit after that is an exit "in operation").
* ``WrappingStream`` (``wrapped``): the stream passes another one's messages on (a session
  manager's ``ConnectionBound``, an authorized WebSocket), so what that one is can be told.

Declared here, by the side that offers them, so that a new transport sees in one place what
it may implement, and no session probes for method names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import RequestId

__all__ = [
    "ImmediateOutput",
    "InputSink",
    "MessageStream",
    "PushedInput",
    "ReadyMarker",
    "RequestStreamControl",
    "Routed",
    "RoutedOutput",
    "WrappingStream",
]

#: One outgoing message as a session produces it: its bytes, the client request it belongs to
#: (None: no request), and whether it is that request's response, the last message for it.
#: ``b""`` with ``final`` says that no response will come (the client cancelled the request);
#: only a ``RoutedOutput`` stream is given those.
Routed: TypeAlias = "tuple[bytes, RequestId | None, bool]"


class MessageStream(Protocol):
    """A bidirectional stream of framed messages.

    Implementations guarantee:

    * ``receive_message`` returns exactly one message's bytes, without the framing (no
      trailing newline; a CRLF line ending is tolerated and stripped). At a clean end of input
      (EOF, peer closed) it raises ``TransportClosed``; on a broken connection,
      ``TransportBroken``. A message over the size limit raises ``MessageTooLarge`` *after*
      the stream has discarded it, and the next call returns the following message: an
      oversized message never costs more memory than the limit and never ends the stream.
      (WebSocket is the exception: RFC 6455 ends the connection with 1009, so there the
      error is raised once and the stream is then broken.)
    * ``send_message`` writes one message with its framing; ``send_messages`` writes several
      in order, in as few writes as the transport allows (the session batches replies that
      are ready together). Only one task sends at a time (the session's writer); receiving
      and sending may run concurrently in two tasks.
    * ``aclose`` is idempotent; afterwards both directions raise ``TransportClosed``.

    The optional capabilities are listed in the module docstring.
    """

    async def receive_message(self) -> bytes:
        """Return the next whole message (see the class docstring for the errors)."""
        ...

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages already received and framed, without waiting (maybe none).

        An oversized message in that run appears as its ``MessageTooLarge`` error, in order.
        Lets a reader hand a whole read's worth of messages on at once instead of one per
        scheduling round.
        """
        ...

    async def send_message(self, data: bytes) -> None:
        """Write one message and its framing."""
        ...

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Write several messages, in order, with as few writes as possible."""
        ...

    async def aclose(self) -> None:
        """Close both directions; idempotent."""
        ...


class InputSink(Protocol):
    """What takes the input of a ``PushedInput`` stream (the server's ``Session`` does).

    Implementers guarantee: ``push_input`` acts on messages in the order pushed, waits only
    to bound the messages waiting, and raises ``TransportClosed`` once it takes no more;
    ``input_ended`` (no more messages will come) never waits.
    """

    async def push_input(self, body: bytes) -> None:
        """Take one message."""
        ...

    def input_ended(self) -> None:
        """No more messages will come."""
        ...


@runtime_checkable
class PushedInput(Protocol):
    """A stream that pushes its input to a sink instead of being read.

    Implementers guarantee: after ``attach_input``, every message goes to ``sink.push_input``
    and the end of input to ``sink.input_ended`` (at once if the stream is already closed);
    ``receive_message`` is then never called.
    """

    def attach_input(self, sink: InputSink) -> None:
        """Push every message to ``sink`` from now on."""
        ...


@runtime_checkable
class RoutedOutput(Protocol):
    """A stream that takes routed messages (``Routed``) instead of bare bytes.

    Implementers guarantee what ``MessageStream.send_messages`` does, per message, and: a
    ``b""`` message with ``final`` ends the request's traffic without sending anything.
    """

    def send_routed_now(self, messages: Sequence[Routed]) -> bool:
        """Deliver messages without waiting; True if all went.

        What could not go now is kept, in order, and goes first in the next
        ``send_routed`` (with no messages, or more). Never a schedule point.
        """
        ...

    async def send_routed(self, messages: Sequence[Routed]) -> None:
        """Deliver what was kept back, then ``messages``, waiting where a reader is slow."""
        ...

    def send_one_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        """Deliver one message if nothing is kept back and it can go now; False: not sent."""
        ...


@runtime_checkable
class ImmediateOutput(Protocol):
    """A stream that can write messages without waiting."""

    def send_messages_now(self, messages: Sequence[bytes]) -> bool:
        """Write ``messages`` as far as the output takes them now; True if all were written.

        The rest is kept, in order, and the next ``send_messages`` (with no messages, or
        more) writes it first. Never a schedule point. Raises what ``send_messages`` raises.
        """
        ...


@runtime_checkable
class RequestStreamControl(Protocol):
    """A stream that delivers each request's answer on a connection of its own."""

    def close_request_stream(self, request_id: RequestId) -> bool:
        """Close the connection ``request_id``'s answer streams on, keeping what follows.

        The client resumes the stream later and gets what was sent meanwhile. False if there
        is no such connection now.
        """
        ...


@runtime_checkable
class ReadyMarker(Protocol):
    """A stream that wants to know when the client's handshake has finished."""

    def mark_ready(self) -> None:
        """The ``initialize`` handshake finished; the session is in operation."""
        ...


@runtime_checkable
class WrappingStream(Protocol):
    """A stream that passes another stream's messages on (and maybe checks or counts them)."""

    @property
    def wrapped(self) -> MessageStream:
        """The stream underneath, which carries the messages."""
        ...
