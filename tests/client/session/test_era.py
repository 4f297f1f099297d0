"""Finding out a server's era: the ``server/discover`` probe, the fallback, the cache.

``judge_probe`` is a pure decision, tested on its own (and on any JSON with Hypothesis);
``open_client_session`` is run against a server played by the test over memory streams,
under ``MockClock`` so that the probe's timeout is exact.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trimcp.client.session import ClientSessionOptions, EraCache, open_client_session
from trimcp.client.session._era import Failed, Legacy, Modern, Retry, judge_probe
from trimcp.client.session._eracache import EraMemo
from trimcp.errors import (
    InvalidRequest,
    JsonRpcError,
    MissingClientCapability,
    RemoteProtocolError,
)
from trimcp.protocol import Era, ErrorObject, Result
from trimcp.transports import memory_stream_pair

from ._fakes import MODERN, FakeServer, discover_result

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from trimcp.client.session import ClientSession
    from trimcp.transports import MemoryMessageStream

# --- the verdict on one probe ------------------------------------------------------------


def error(code: int, data: object = None) -> ErrorObject:
    return ErrorObject(code=code, message="no") if data is None else ErrorObject(
        code=code, message="no", data=data
    )  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (None, Legacy),
        (Result(id=1, result=discover_result()), Modern),
        (Result(id=1, result={}), Legacy),  # an empty result to an unknown method
        (Result(id=1, result={**discover_result(), "resultType": "later"}), Legacy),
        (error(-32601), Legacy),
        (error(-32602), Legacy),
        (error(-32600), Legacy),
        (error(-32000), Legacy),
        (error(-32603, {"httpStatus": 400}), Legacy),
        (error(-32603, {"httpStatus": 404}), Legacy),
        (error(-32603, {"httpStatus": 405}), Legacy),
        (error(-32603, {"httpStatus": 503}), Failed),
        (error(-32020), Failed),
        (error(-32021, {"requiredCapabilities": {}}), Failed),
        (error(-32022, {"supported": ["1999-01-01"]}), Failed),
        (error(-32022, {"supported": [MODERN]}), Retry),
        (error(-32022, {"supported": ["2025-06-18", "2024-11-05"]}), Retry),
    ],
)
def test_each_answer_has_one_verdict(answer: Result | ErrorObject | None, verdict: type) -> None:
    assert isinstance(judge_probe(answer, 5.0), verdict)


def test_a_retry_names_a_version_both_speak() -> None:
    retry = judge_probe(error(-32022, {"supported": ["1.0", "2025-06-18", "2025-03-26"]}), 1)
    assert retry == Retry("2025-06-18")
    timed_out = judge_probe(None, 2.5)
    assert isinstance(timed_out, Legacy)
    assert timed_out.timed_out
    assert "2.5 s" in timed_out.reason


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
wire_keys = st.sampled_from(
    ["supportedVersions", "capabilities", "resultType", "supported", "httpStatus", "x"]
)
objects = st.dictionaries(wire_keys | st.text(max_size=6), json_values, max_size=5)


@given(result=objects)
def test_any_result_gets_a_verdict(result: dict[str, Any]) -> None:
    assert isinstance(judge_probe(Result(id=1, result=result), 1.0), Modern | Legacy)


@given(code=st.integers(-33000, 1000) | st.sampled_from([-32020, -32021, -32022]), data=objects)
def test_any_error_gets_a_verdict(code: int, data: dict[str, Any]) -> None:
    verdict = judge_probe(ErrorObject(code=code, message="m", data=data), 1.0)
    assert isinstance(verdict, Legacy | Retry | Failed)


# --- the cache ------------------------------------------------------------------------------


def test_the_cache_forgets_the_least_recently_used() -> None:
    cache = EraCache(max_servers=2)
    for key in ("a", "b"):
        cache.put(key, EraMemo(modern=False, version="2025-11-25"))
    assert cache.get("a") is not None  # now "b" is the oldest
    cache.put("c", EraMemo(modern=True, version=MODERN))
    assert (len(cache), cache.get("b")) == (2, None)
    cache.forget("a")
    assert cache.get("a") is None
    with pytest.raises(ValueError, match="at least one"):
        EraCache(0)


# --- opening sessions -----------------------------------------------------------------------


class KnownServer:
    """A memory stream that says which server it reaches (``ServerIdentity``)."""

    def __init__(self, inner: MemoryMessageStream, key: str, context: str | None) -> None:
        self.inner = inner
        self.server_key = key
        self.authorization_context = context

    async def receive_message(self) -> bytes:
        return await self.inner.receive_message()

    def receive_ready(self) -> list[Any]:
        return self.inner.receive_ready()

    async def send_message(self, data: bytes) -> None:
        await self.inner.send_message(data)

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        await self.inner.send_messages(messages)

    async def aclose(self) -> None:
        await self.inner.aclose()


Script: TypeAlias = "Callable[[FakeServer], Awaitable[object]]"


@asynccontextmanager
async def session_with(
    script: Script,
    options: ClientSessionOptions | None = None,
    *,
    key: str | None = None,
    context: str | None = None,
) -> AsyncIterator[tuple[ClientSession, FakeServer]]:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    stream = client_end if key is None else KnownServer(client_end, key, context)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server)
        async with open_client_session(stream, options=options) as session:  # type: ignore[arg-type]
            yield session, server
        await server_end.aclose()


async def open_fails(script: Script, options: ClientSessionOptions) -> BaseException:
    """Open a session against ``script``; return what the opening raised."""
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server)
        try:
            async with open_client_session(client_end, options=options):
                pass
        except Exception as exc:  # noqa: BLE001  # the test asserts on it
            raised: BaseException = exc
        else:
            raise AssertionError("the session opened")
        await server_end.aclose()
    return raised


def quiet(cache: EraCache | None = None, **changes: Any) -> ClientSessionOptions:
    """Options for these tests: no listen stream, a fresh era cache."""
    return ClientSessionOptions(
        listen=False, era_cache=EraCache() if cache is None else cache, **changes
    )


async def test_a_modern_server_is_spoken_to_per_request() -> None:
    async with session_with(FakeServer.discover, quiet()) as (session, server):
        assert session.era is Era.MODERN
        assert session.protocol_version == MODERN
        assert session.server_info.name == "modern"
        assert session.instructions == "be modern"

        async def answer() -> None:
            listing = await server.expect("tools/list")
            meta = listing["params"]["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
            assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
            assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "trimcp"
            await server.answer(listing, {"tools": [], "resultType": "complete"})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            assert await session.list_tools() == []


async def test_a_silent_legacy_server_is_given_up_on_after_the_probe_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sent_at: list[float] = []

    async def silent_then_initialize(server: FakeServer) -> None:
        await server.expect("server/discover")  # and no answer at all
        sent_at.append(trio.current_time())
        await server.handshake(probed=False)

    options = quiet(discover_timeout=2.5)
    async with session_with(silent_then_initialize, options) as (session, _):
        assert session.era is Era.HANDSHAKE
        assert trio.current_time() == sent_at[0] + 2.5


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32603, -1, 42])
async def test_any_other_error_means_legacy_at_once(
    code: int, autojump_clock: trio.testing.MockClock
) -> None:
    async def refuse(server: FakeServer) -> None:
        probe = await server.expect("server/discover")
        await server.fail(probe, code, "not before initialize")
        await server.handshake(probed=False)

    async with session_with(refuse, quiet()) as (session, _):
        assert session.era is Era.HANDSHAKE
        assert trio.current_time() == 0.0


async def test_an_unsupported_version_is_retried_once_with_a_new_id() -> None:
    async def picky(server: FakeServer) -> None:
        first = await server.expect("server/discover")
        await server.fail(first, -32022, "unsupported", {"supported": [MODERN], "requested": "x"})
        second = await server.discover()
        assert second["id"] != first["id"]

    async with session_with(picky, quiet()) as (session, _):
        assert session.era is Era.MODERN


async def test_only_handshake_versions_in_common_means_initialize_with_one() -> None:
    async def old(server: FakeServer) -> None:
        probe = await server.expect("server/discover")
        await server.fail(probe, -32022, "no", {"supported": ["2025-06-18"], "requested": MODERN})
        init = await server.handshake(probed=False)
        assert init["params"]["protocolVersion"] == "2025-06-18"

    async with session_with(old, quiet()) as (session, _):
        assert session.protocol_version == "2025-06-18"


async def test_a_modern_refusal_is_raised_not_fallen_back_from() -> None:
    async def refuse(server: FakeServer) -> None:
        probe = await server.expect("server/discover")
        await server.fail(probe, -32021, "declare it", {"requiredCapabilities": {"roots": {}}})

    assert isinstance(await open_fails(refuse, quiet()), MissingClientCapability)


async def test_forcing_the_modern_era_refuses_a_legacy_server() -> None:
    async def legacy(server: FakeServer) -> None:
        probe = await server.expect("server/discover")
        await server.fail(probe, -32601, "Method not found")

    raised = await open_fails(legacy, quiet(protocol_version=MODERN))
    assert isinstance(raised, RemoteProtocolError)
    assert "only the initialize handshake" in str(raised)


async def test_forcing_a_handshake_version_sends_no_probe() -> None:
    async def legacy(server: FakeServer) -> None:
        init = await server.handshake(probed=False)
        assert init["params"]["protocolVersion"] == "2025-06-18"

    async with session_with(legacy, quiet(protocol_version="2025-06-18")) as (session, _):
        assert session.era is Era.HANDSHAKE


async def test_a_legacy_server_is_not_probed_again() -> None:
    cache = EraCache()
    async with session_with(FakeServer.handshake, quiet(cache), key="s") as (session, _):
        assert session.era is Era.HANDSHAKE

    async def straight_to_initialize(server: FakeServer) -> None:
        await server.handshake(probed=False)

    async with session_with(straight_to_initialize, quiet(cache), key="s") as (session, _):
        assert session.era is Era.HANDSHAKE


async def test_a_cached_legacy_era_that_fails_is_probed_again() -> None:
    cache = EraCache()
    cache.put("s", EraMemo(modern=False, version="2025-11-25"))

    async def now_modern(server: FakeServer) -> None:
        init = await server.expect("initialize")
        await server.fail(init, -32601, "initialize is gone; speak 2026-07-28")
        await server.discover()

    async with session_with(now_modern, quiet(cache), key="s") as (session, _):
        assert session.era is Era.MODERN
    memo = cache.get("s")
    assert memo is not None
    assert memo.modern


async def test_a_fresh_discover_result_is_reused(autojump_clock: trio.testing.MockClock) -> None:
    cache = EraCache()

    async def cacheable(server: FakeServer) -> None:
        await server.discover(discover_result(ttl_ms=60_000))

    async with session_with(cacheable, quiet(cache), key="s") as (session, _):
        assert session.era is Era.MODERN

    async def nothing_asked(server: FakeServer) -> None:
        listing = await server.expect("tools/list")  # the first thing that arrives
        await server.answer(listing, {"tools": []})

    async with session_with(nothing_asked, quiet(cache), key="s") as (session, _):
        assert session.server_info.name == "modern"
        assert await session.list_tools() == []
    await trio.sleep(61)
    async with session_with(cacheable, quiet(cache), key="s") as (session, _):
        assert session.era is Era.MODERN  # stale: discovered again


async def test_a_private_discover_result_needs_the_same_credentials() -> None:
    cache = EraCache()

    async def private(server: FakeServer) -> None:
        await server.discover(discover_result(ttl_ms=60_000, scope="private"))

    async with session_with(private, quiet(cache), key="s", context="alice"):
        pass
    async with session_with(private, quiet(cache), key="s", context="bob") as (session, _):
        assert session.era is Era.MODERN  # bob's session asked again


async def test_a_slow_modern_server_is_probed_again_after_initialize_is_refused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(server: FakeServer) -> None:
        late = await server.expect("server/discover")
        init = await server.expect("initialize")
        await server.answer(late, discover_result())  # too late: ignored
        await server.fail(init, InvalidRequest.CODE, "this server speaks 2026-07-28 only")
        await server.discover()

    async with session_with(slow, quiet(discover_timeout=1.0)) as (session, _):
        assert session.era is Era.MODERN


async def test_a_refused_initialize_after_an_error_is_raised() -> None:
    async def broken(server: FakeServer) -> None:
        probe = await server.expect("server/discover")
        await server.fail(probe, -32601, "no")
        init = await server.expect("initialize")
        await server.fail(init, -32600, "no either")

    raised = await open_fails(broken, quiet())
    assert isinstance(raised, JsonRpcError)
    assert raised.message == "no either"
