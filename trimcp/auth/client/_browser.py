"""The browser step: sending the user to the authorization server and getting the redirect.

``BrowserStep`` is the seam a host implements to do this its own way (an embedded web view,
a URL shown in a GUI, a device with no browser). ``LoopbackBrowser`` is the default: it
listens on the loopback interface for the redirect (``_loopback``), opens the authorization
URL with an *opener*, and waits a bounded time. Two openers come with it:

* ``open_system_browser``: the system's browser through ``webbrowser`` (in a thread, since
  it may block); when there is none, the URL is written to stderr for the user to open.
* ``follow_redirects``: no browser at all; an HTTP GET that follows the authorization
  server's redirects to the listener. Only for servers that approve without a person
  (tests, CI, the conformance suite).

The authorization URL is built only once the redirect URI is known (a listener's port is
picked when it binds), hence the shape of ``BrowserStep.authorize``: the step picks its
redirect URI and asks the flow for the URL that goes with it.
"""

from __future__ import annotations

import sys
import webbrowser
from typing import TYPE_CHECKING, Final, Protocol, final, runtime_checkable

import httpx
import trio

from ._errors import FlowError
from ._loopback import open_redirect_receiver

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

__all__ = [
    "DEFAULT_BROWSER_TIMEOUT",
    "BrowserStep",
    "LoopbackBrowser",
    "follow_redirects",
    "open_system_browser",
]

#: Seconds the user has to sign in before the flow gives up.
DEFAULT_BROWSER_TIMEOUT: Final = 300.0


@runtime_checkable
class BrowserStep(Protocol):
    """Sends the user to the authorization server and brings back its redirect."""

    async def authorize(self, start: Callable[[str], Awaitable[str]]) -> Mapping[str, str]:
        """Pick a redirect URI, ``await start(redirect_uri)`` for the authorization URL,
        send the user there, and return the query parameters of the redirect back.

        The redirect URI is a ``http://127.0.0.1:<port>/...`` loopback URI or one the
        host handles itself. Implementations must return the parameters unchanged (the
        flow checks ``state``, ``iss`` and ``error``), must not log the URL's ``code``, and
        should give up after a bounded time by raising.
        """
        ...


async def open_system_browser(url: str) -> None:
    """Open ``url`` in the system's browser; write it to stderr if there is none."""
    opened = await trio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)
    if not opened:
        sys.stderr.write(f"Open this URL in a browser to sign in:\n  {url}\n")
        sys.stderr.flush()


async def follow_redirects(url: str) -> None:
    """GET ``url`` and follow its redirects, without a browser (module docstring).

    Raises:
        FlowError: the server answered without redirecting (it wants a person), or the
            request failed.
    """
    async with httpx.AsyncClient(follow_redirects=True, timeout=30.0) as client:
        try:
            response = await client.get(url)
        except httpx.HTTPError as exc:
            raise FlowError(f"the authorization request failed: {exc!r}") from exc
    if not response.history:
        raise FlowError(
            f"the authorization endpoint answered HTTP {response.status_code} instead of "
            "redirecting back; it needs a person to sign in, in a real browser"
        )


@final
class LoopbackBrowser:
    """The default ``BrowserStep``: a loopback listener and an opener (module docstring).

    ``port`` 0 picks a free port each time; ``timeout`` bounds the wait for the redirect.
    """

    def __init__(
        self,
        *,
        opener: Callable[[str], Awaitable[None]] = open_system_browser,
        timeout: float = DEFAULT_BROWSER_TIMEOUT,
        port: int = 0,
    ) -> None:
        self._opener = opener
        self._timeout = timeout
        self._port = port

    async def authorize(self, start: Callable[[str], Awaitable[str]]) -> Mapping[str, str]:
        """Listen, open the authorization URL, return the redirect's parameters.

        Raises:
            FlowError: no redirect within ``timeout`` seconds, or the opener failed.
        """
        failures: list[FlowError] = []
        params: Mapping[str, str] | None = None
        async with open_redirect_receiver(port=self._port) as receiver:
            url = await start(receiver.redirect_uri)
            with trio.move_on_after(self._timeout):
                async with trio.open_nursery() as nursery:
                    # A browser may redirect before the opener returns: the wait does not
                    # depend on it; an opener that fails ends the wait.
                    nursery.start_soon(self._open, url, nursery.cancel_scope, failures)
                    params = await receiver.wait()
        if params is not None:
            return params
        if failures:
            raise failures[0]
        raise FlowError(
            f"no answer from the browser within {self._timeout:g} s; the sign-in was not "
            "finished (try again)"
        )

    async def _open(self, url: str, scope: trio.CancelScope, failures: list[FlowError]) -> None:
        try:
            await self._opener(url)
        except FlowError as exc:
            failures.append(exc)
            scope.cancel()
