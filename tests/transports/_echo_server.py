"""A stdio echo server for the smoke tests: every message back, until EOF (exit 0)."""

from __future__ import annotations

import trio

from trimcp.errors import TransportClosed
from trimcp.transports import open_stdio_stream


async def main() -> None:
    async with open_stdio_stream(max_message_size=2 * 1024 * 1024) as stream:
        # fd 1 now points at stderr: this must not reach the protocol stream.
        print("stray output", flush=True)  # noqa: T201
        while True:
            try:
                message = await stream.receive_message()
            except TransportClosed:
                return
            await stream.send_message(message)


if __name__ == "__main__":
    trio.run(main)
