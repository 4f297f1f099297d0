"""The loopback redirect listener and the browser step around it (real sockets)."""

from __future__ import annotations

import httpx
import pytest
import trio
import trio.testing

from trimcp.auth.client import BrowserStep, LoopbackBrowser
from trimcp.auth.client._errors import FlowError
from trimcp.auth.client._loopback import open_redirect_receiver

pytestmark = pytest.mark.slow


async def test_the_redirect_is_received_once_and_other_paths_get_404() -> None:
    async with (
        open_redirect_receiver() as receiver,
        httpx.AsyncClient(timeout=5) as client,
    ):
        assert receiver.redirect_uri.startswith("http://127.0.0.1:")
        base = receiver.redirect_uri.removesuffix("/callback")
        missing = await client.get(base + "/favicon.ico")
        assert missing.status_code == 404
        page = await client.get(receiver.redirect_uri + "?code=c1&state=s1&code=c2")
        assert page.status_code == 200
        assert "close this tab" in page.text
        assert page.headers["cache-control"] == "no-store"
        again = await client.get(receiver.redirect_uri + "?code=other")
        assert again.status_code == 200
        assert await receiver.wait() == {"code": "c1", "state": "s1"}


async def test_an_error_redirect_is_shown_escaped() -> None:
    async with (
        open_redirect_receiver() as receiver,
        httpx.AsyncClient(timeout=5) as client,
    ):
        page = await client.get(receiver.redirect_uri + "?error=%3Cscript%3E")
        assert "&lt;script&gt;" in page.text
        assert "<script>" not in page.text
        assert (await receiver.wait())["error"] == "<script>"


async def test_garbage_on_the_port_does_not_stop_the_listener() -> None:
    async with open_redirect_receiver() as receiver:
        port = int(receiver.redirect_uri.split(":")[2].split("/")[0])
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(b"\x00\x01 not http\r\n\r\n")
        await stream.aclose()
        async with httpx.AsyncClient(timeout=5) as client:
            await client.get(receiver.redirect_uri + "?code=c")
        assert await receiver.wait() == {"code": "c"}


async def test_the_browser_step_opens_the_url_it_was_given_and_returns_the_redirect() -> None:
    opened: list[str] = []

    async def opener(url: str) -> None:
        opened.append(url)
        async with httpx.AsyncClient(timeout=5) as client:
            await client.get(url)

    async def start(redirect_uri: str) -> str:
        return redirect_uri + "?code=xyz&state=st"

    step = LoopbackBrowser(opener=opener, timeout=5)
    assert isinstance(step, BrowserStep)
    with trio.fail_after(10):
        assert await step.authorize(start) == {"code": "xyz", "state": "st"}
    assert opened[0].startswith("http://127.0.0.1:")


async def test_no_redirect_in_time_is_an_error(mock_clock: trio.testing.MockClock) -> None:
    async def opener(url: str) -> None:
        return None  # a browser that never comes back

    async def start(redirect_uri: str) -> str:
        return "https://as.example/authorize"

    step = LoopbackBrowser(opener=opener, timeout=120)
    async with trio.open_nursery() as nursery:
        failures: list[FlowError] = []

        async def run() -> None:
            with pytest.raises(FlowError, match="within 120 s") as caught:
                await step.authorize(start)
            failures.append(caught.value)

        nursery.start_soon(run)
        await trio.testing.wait_all_tasks_blocked()
        mock_clock.jump(119)
        await trio.testing.wait_all_tasks_blocked()
        assert not failures
        mock_clock.jump(2)
    assert failures


async def test_an_opener_that_fails_ends_the_wait() -> None:
    async def opener(url: str) -> None:
        raise FlowError("the authorization endpoint answered HTTP 400")

    async def start(redirect_uri: str) -> str:
        return "https://as.example/authorize"

    with trio.fail_after(5), pytest.raises(FlowError, match="HTTP 400"):
        await LoopbackBrowser(opener=opener, timeout=60).authorize(start)
