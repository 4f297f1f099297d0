"""StdioStream on real file descriptors, where it calls ``os.read``/``os.write`` itself.

The whole ``MessageStream`` conformance suite runs again over pipes (the imported tests use
this module's ``stream_pair``), then the fd-only behaviour: the wait-then-read intake, the
write that never waits (``send_messages_now``) and what it keeps back, busy and closed
ends, and regular files, which cannot be waited on.
"""

from __future__ import annotations

import errno
import fcntl
import os
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trimcp.errors import LocalProtocolError, TransportBroken, TransportClosed
from trimcp.transports import StdioStream
from trimcp.transports._stdio import _fd_error

from .test_conformance import (
    test_after_own_close_everything_raises_closed,
    test_async_with_closes,
    test_batch_arrives_in_order_then_close,
    test_cancelled_receive_loses_nothing,
    test_close_wakes_a_blocked_receiver,
    test_message_at_the_limit_passes,
    test_oversized_message_is_dropped_and_stream_continues,
    test_peer_close_drains_then_transport_closed_for_good,
    test_receive_ready_hands_over_what_arrived_without_waiting,
    test_round_trip_both_directions,
    test_send_to_closed_peer_is_broken,
    test_sending_and_receiving_run_concurrently,
    test_too_large_carries_size_and_limit,
)

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.transports import MessageStream

    from .conftest import PairFactory

__all__ = [  # the conformance suite, collected again here over pipes
    "test_after_own_close_everything_raises_closed",
    "test_async_with_closes",
    "test_batch_arrives_in_order_then_close",
    "test_cancelled_receive_loses_nothing",
    "test_close_wakes_a_blocked_receiver",
    "test_message_at_the_limit_passes",
    "test_oversized_message_is_dropped_and_stream_continues",
    "test_peer_close_drains_then_transport_closed_for_good",
    "test_receive_ready_hands_over_what_arrived_without_waiting",
    "test_round_trip_both_directions",
    "test_send_to_closed_peer_is_broken",
    "test_sending_and_receiving_run_concurrently",
    "test_too_large_carries_size_and_limit",
]

# Linux: fcntl.F_SETPIPE_SZ; a page is the smallest pipe buffer.
PIPE_SIZE = 4096


def fd_pair(max_message_size: int) -> tuple[MessageStream, MessageStream]:
    """Two StdioStreams connected by two pipes, each end reading and writing real fds."""
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    left = StdioStream(
        trio.lowlevel.FdStream(a_read),
        trio.lowlevel.FdStream(a_write),
        max_message_size=max_message_size,
    )
    right = StdioStream(
        trio.lowlevel.FdStream(b_read),
        trio.lowlevel.FdStream(b_write),
        max_message_size=max_message_size,
    )
    return left, right


@pytest.fixture
def stream_pair() -> PairFactory:
    """Run the imported conformance tests over pipes."""
    return fd_pair


def small_pipe() -> tuple[int, int]:
    """Return (read fd, write fd) of a pipe holding at most ``PIPE_SIZE`` bytes."""
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    return read_fd, write_fd


def writer_on(write_fd: int) -> StdioStream:
    """A StdioStream that only writes, to ``write_fd``."""
    return StdioStream(trio.testing.MemoryReceiveStream(), trio.lowlevel.FdStream(write_fd))


async def read_exactly(read_fd: int, size: int) -> bytes:
    data = b""
    async with trio.lowlevel.FdStream(read_fd) as reader:
        while len(data) < size:
            data += await reader.receive_some()
    return data


async def test_send_messages_now_writes_at_once_without_a_schedule_point() -> None:
    read_fd, write_fd = os.pipe()
    stream = writer_on(write_fd)
    with trio.testing.assert_no_checkpoints():
        assert stream.send_messages_now([b"one", b"two"])
    assert os.read(read_fd, 100) == b"one\ntwo\n"
    os.close(read_fd)
    await stream.aclose()


async def test_what_a_full_pipe_does_not_take_is_kept_and_sent_next() -> None:
    read_fd, write_fd = small_pipe()
    stream = writer_on(write_fd)
    messages = [bytes([65 + i % 26]) * 999 for i in range(10)]  # ~10 KiB: more than fits
    expected = b"".join(message + b"\n" for message in messages) + b"last\n"
    assert not stream.send_messages_now(messages)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream.send_messages, [b"last"])  # the kept bytes go first
        data = await read_exactly(read_fd, len(expected))
    assert data == expected
    await stream.aclose()


async def test_kept_bytes_go_before_the_next_immediate_write() -> None:
    read_fd, write_fd = small_pipe()
    stream = writer_on(write_fd)
    first = [b"x" * (PIPE_SIZE + 100)]
    assert not stream.send_messages_now(first)
    assert os.read(read_fd, 2 * PIPE_SIZE) == b"x" * PIPE_SIZE  # drain what the pipe took
    assert stream.send_messages_now([b"then"])
    assert os.read(read_fd, 2 * PIPE_SIZE) == b"x" * 100 + b"\nthen\n"
    os.close(read_fd)
    await stream.aclose()


async def test_send_messages_now_keeps_everything_for_a_stream_without_an_fd() -> None:
    send = trio.testing.MemorySendStream()
    stream = StdioStream(trio.testing.MemoryReceiveStream(), send)
    assert not stream.send_messages_now([b"a", b"b"])
    with pytest.raises(trio.WouldBlock):
        send.get_data_nowait()  # nothing written yet
    await stream.send_messages([])
    assert send.get_data_nowait() == b"a\nb\n"
    await stream.aclose()


async def test_send_messages_now_refuses_what_send_messages_refuses() -> None:
    read_fd, write_fd = os.pipe()
    stream = writer_on(write_fd)
    with pytest.raises(LocalProtocolError):
        stream.send_messages_now([b"two\nlines"])
    assert stream.send_messages_now([])
    os.close(read_fd)
    with pytest.raises(TransportBroken):
        stream.send_messages_now([b"nobody reads this"])
    await stream.aclose()
    with pytest.raises(TransportClosed):
        stream.send_messages_now([b"closed"])


async def test_no_immediate_write_while_a_send_waits_for_the_pipe() -> None:
    read_fd, write_fd = small_pipe()
    stream = writer_on(write_fd)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream.send_messages, [b"y" * (2 * PIPE_SIZE)])
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            stream.send_messages_now([b"would interleave"])
        await read_exactly(read_fd, 2 * PIPE_SIZE + 1)
    await stream.aclose()


async def test_waiting_for_a_lone_message_is_a_checkpoint() -> None:
    left, right = fd_pair(1000)
    assert isinstance(left, StdioStream)
    async with trio.open_nursery() as nursery:

        async def answer_later() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await right.send_message(b"ping")

        nursery.start_soon(answer_later)
        with trio.testing.assert_checkpoints():
            assert await left.receive_message() == b"ping"
    assert left.receive_ready() == []
    await left.aclose()
    await right.aclose()


async def test_two_receivers_at_once_are_refused() -> None:
    left, right = fd_pair(1000)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.receive_message)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError):
            await left.receive_message()
        await right.send_message(b"for the first")
    await left.aclose()
    await right.aclose()


async def test_a_regular_file_is_read_without_waiting_on_it(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b'{"id":1}\n\n{"id":2}\r\n{"id":3}')
    fd = os.open(path, os.O_RDONLY)
    stream = StdioStream(trio.lowlevel.FdStream(fd), trio.testing.MemorySendStream())
    received = [await stream.receive_message() for _ in range(3)]
    with pytest.raises(TransportClosed):
        await stream.receive_message()
    await stream.aclose()
    assert received == [b'{"id":1}', b'{"id":2}', b'{"id":3}']


async def test_closing_while_waiting_for_input_ends_the_wait() -> None:
    read_fd, write_fd = os.pipe()
    stream = StdioStream(trio.lowlevel.FdStream(read_fd), trio.testing.MemorySendStream())
    async with trio.open_nursery() as nursery:

        async def receive() -> None:
            with pytest.raises(TransportClosed):
                await stream.receive_message()

        nursery.start_soon(receive)
        await trio.testing.wait_all_tasks_blocked()
        await stream.aclose()
    os.close(write_fd)


def test_fd_errors_map_like_fdstream() -> None:
    assert isinstance(_fd_error(OSError(errno.EBADF, "bad")), trio.ClosedResourceError)
    assert isinstance(_fd_error(OSError(errno.EIO, "io")), trio.BrokenResourceError)
