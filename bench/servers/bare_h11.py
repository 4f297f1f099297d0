"""The raw floor: a trio + h11 keep-alive loop answering every request with a fixed body.

No ASGI, no framework: per connection one task reads with ``receive_some``, feeds h11,
and for each complete request writes one ``200`` with the same JSON body as
``bare_hypercorn.py`` (and ``Content-Length``). It shows what HTTP/1.1 on trio costs
without hypercorn, and how fast ``bench/_http_load.py`` can go (the load generator must
outrun it by a wide margin to measure the servers above it).

``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once the server accepts connections. The server exits when its
stdin closes.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys

import h11
import trio

BODY = b'{"jsonrpc":"2.0","id":10000000,"result":{"content":[{"type":"text","text":"echo-00000000"}],"isError":false}}'  # noqa: E501
RESPONSE = h11.Response(
    status_code=200,
    headers=[("content-type", "application/json"), ("content-length", str(len(BODY)))],
)


async def handle(stream: trio.SocketStream) -> None:
    """Serve one connection until the client closes it."""
    conn = h11.Connection(h11.SERVER)
    gone = (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError)
    async with stream:
        with contextlib.suppress(*gone):
            await serve_connection(conn, stream)


async def serve_connection(conn: h11.Connection, stream: trio.SocketStream) -> None:
    """Answer the requests of one connection; return when the client closes it."""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(data)
            if not data:
                return
            continue
        kind = type(event)
        if kind is h11.EndOfMessage:
            out = conn.send(RESPONSE) + conn.send(h11.Data(data=BODY))
            out += conn.send(h11.EndOfMessage())
            await stream.send_all(out)
            conn.start_next_cycle()
        elif kind is h11.ConnectionClosed or conn.their_state is h11.ERROR:
            return


async def wait_stdin_closed() -> None:
    """Return once stdin reaches end of file (the bench's cue to stop)."""
    await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)


async def main(port: int) -> None:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, handle, port, host="127.0.0.1")
        )
        print(f"PORT {listeners[0].socket.getsockname()[1]}", flush=True)
        await wait_stdin_closed()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    trio.run(main, parser.parse_args().port)
