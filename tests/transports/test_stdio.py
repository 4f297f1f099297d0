"""StdioStream's framing, memory bound and error mapping, over scripted byte streams."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.errors import LocalProtocolError, TransportBroken, TransportClosed
from trimcp.transports import StdioStream, open_stdio_stream
from trimcp.transports._line_framer import LineFramer

from ._support import TooLarge, receive_all, stdio_from_chunks


async def outcomes_of(chunks: list[bytes], *, limit: int = 1024, size: int = 64) -> list[object]:
    stream, _, _ = stdio_from_chunks(chunks, max_message_size=limit, receive_size=size)
    return list(await receive_all(stream))


async def test_crlf_is_stripped_once() -> None:
    assert await outcomes_of([b"a\r\nb\nc\r\r\n"]) == [b"a", b"b", b"c\r"]


async def test_empty_lines_are_skipped() -> None:
    assert await outcomes_of([b"\n\r\n\na\n\n", b"\r\n", b"b\n\n"]) == [b"a", b"b"]


async def test_many_lines_in_one_chunk_take_one_read() -> None:
    lines = [f"message {i}".encode() for i in range(100)]
    data = b"\n".join(lines) + b"\n"
    stream, receive, _ = stdio_from_chunks([data], receive_size=len(data))
    assert [await stream.receive_message() for _ in lines] == lines
    assert receive.reads == 1
    assert stream.statistics().buffered_bytes == 0


async def test_one_line_byte_by_byte() -> None:
    data = b'{"id": 1}\r\n{"id": 2}\n'
    chunks = [data[i : i + 1] for i in range(len(data))]
    assert await outcomes_of(chunks, size=1) == [b'{"id": 1}', b'{"id": 2}']


async def test_partial_line_is_kept_across_reads() -> None:
    stream, _, _ = stdio_from_chunks([b"par", b"tial\nnext", b"\n"])
    assert await stream.receive_message() == b"partial"
    assert stream.statistics().buffered_bytes == len(b"next")
    assert await stream.receive_message() == b"next"


async def test_over_long_line_then_a_normal_one() -> None:
    assert await outcomes_of([b"x" * 40 + b"\nok\n"], limit=10) == [TooLarge(40), b"ok"]
    chunks = [b"y" * 64] * 5 + [b"y\r\nok\n"]
    assert await outcomes_of(chunks, limit=10) == [TooLarge(64 * 5 + 2), b"ok"]


async def test_over_long_line_at_eof() -> None:
    assert await outcomes_of([b"ok\n", b"z" * 64, b"z" * 7], limit=10) == [b"ok", TooLarge(71)]
    assert await outcomes_of([b"ok\n12345678901"], limit=10) == [b"ok", TooLarge(11)]


async def test_limit_excludes_the_line_ending() -> None:
    chunks = [b"1234567890\r", b"\n12345678901\r\n"]
    assert await outcomes_of(chunks, limit=10, size=16) == [b"1234567890", TooLarge(12)]


async def test_unterminated_last_line_then_closed() -> None:
    stream, _, _ = stdio_from_chunks([b"one\ntw", b"o"])
    assert await stream.receive_message() == b"one"
    assert await stream.receive_message() == b"two"
    for _ in range(2):
        with pytest.raises(TransportClosed):
            await stream.receive_message()
    assert stream.statistics().buffered_bytes == 0


async def test_binary_garbage_passes_through_as_bytes() -> None:
    garbage = bytes(b for b in range(256) if b != 0x0A)
    assert await outcomes_of([garbage + b"\n"], limit=300, size=512) == [garbage]


async def test_memory_stays_bounded_while_discarding() -> None:
    limit, size = 1000, 64
    chunks = [b"x" * size] * 1600 + [b"\nafter\n"]  # a 100 KiB line
    stream, _, _ = stdio_from_chunks(chunks, max_message_size=limit, receive_size=size)
    assert await receive_all(stream) == [TooLarge(size * 1600), b"after"]
    stats = stream.statistics()
    assert limit < stats.peak_buffered_bytes <= limit + 1 + size
    assert (stats.buffered_bytes, stats.discarding_bytes) == (0, 0)


async def test_read_failure_is_broken() -> None:
    stream, _, _ = stdio_from_chunks([b"ok\n", trio.BrokenResourceError("EIO")])
    assert await stream.receive_message() == b"ok"
    with pytest.raises(TransportBroken):
        await stream.receive_message()


async def test_batch_is_one_write() -> None:
    stream, _, sent = stdio_from_chunks([])
    writes = 0

    async def count_write() -> None:
        nonlocal writes
        writes += 1

    sent.send_all_hook = count_write
    await stream.send_messages([b"a", b"bb", b"ccc"])
    await stream.send_message(b"d")
    assert sent.get_data_nowait() == b"a\nbb\nccc\nd\n"
    assert writes == 2


@pytest.mark.parametrize("batch", [[b"ok", b"two\nlines"], [b"ok", b""], [b"\n"]])
async def test_unframeable_message_is_refused_and_nothing_written(batch: list[bytes]) -> None:
    stream, _, sent = stdio_from_chunks([])
    with pytest.raises(LocalProtocolError):
        await stream.send_messages(batch)
    with pytest.raises(trio.WouldBlock):  # nothing was written
        sent.get_data_nowait()


async def test_empty_batch_writes_nothing() -> None:
    stream, _, sent = stdio_from_chunks([])
    await stream.send_messages([])
    with pytest.raises(trio.WouldBlock):
        sent.get_data_nowait()


async def test_write_failure_is_broken() -> None:
    stream, _, sent = stdio_from_chunks([])

    async def fail() -> None:
        raise trio.BrokenResourceError("EPIPE")

    sent.send_all_hook = fail
    with pytest.raises(TransportBroken):
        await stream.send_message(b"x")


async def test_close_closes_both_byte_streams() -> None:
    stream, receive, sent = stdio_from_chunks([])
    await stream.aclose()
    assert receive.closed
    with pytest.raises(trio.ClosedResourceError):
        await sent.send_all(b"x")
    assert stream.statistics().closed


@pytest.mark.parametrize(("limit", "size"), [(0, 64), (10, 0)])
def test_bad_sizes_are_refused(limit: int, size: int) -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        StdioStream(
            trio.testing.MemoryReceiveStream(),
            trio.testing.MemorySendStream(),
            max_message_size=limit,
            receive_size=size,
        )


async def test_open_with_given_streams_touches_no_fd() -> None:
    receive = trio.testing.MemoryReceiveStream()
    send = trio.testing.MemorySendStream()
    receive.put_data(b"hi\n")
    receive.put_eof()
    async with open_stdio_stream(max_message_size=2, stdin=receive, stdout=send) as stream:
        assert stream.statistics().max_message_size == 2
        assert await stream.receive_message() == b"hi"
        await stream.send_message(b"ho")
    assert send.get_data_nowait() == b"ho\n"


async def test_long_line_within_the_limit_arrives_whole() -> None:
    line = bytes(range(14, 256)) * 100  # ~24 KiB without \n or \r: the memoryview copy path
    chunks = [line[i : i + 4096] for i in range(0, len(line), 4096)] + [b"\r\n"]
    assert await outcomes_of(chunks, limit=len(line), size=4096) == [line]


def test_framer_refuses_input_after_eof() -> None:
    framer = LineFramer(10)
    framer.feed_eof()
    with pytest.raises(RuntimeError, match="after feed_eof"):
        framer.feed(b"late\n")
