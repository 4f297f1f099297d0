"""Fetching a JSON object from the authorization server: JWKS and introspection (httpx).

Both callers want the same thing: one request, a deadline, a bounded body, a JSON object
back, and every way of failing as one ``FetchFailed`` whose message says what happened
(never the token, which an introspection request carries in its body). Redirects are not
followed: the URLs come from the configuration, and a redirect is more likely a mistake
in it than a move.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Final

import httpx
import orjson

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MAX_BODY", "FetchFailed", "HttpFetcher"]

#: The largest answer read. A JWKS of a dozen RSA keys is ~10 KiB, an introspection answer
#: under 4 KiB; 1 MiB is far past both and bounds what a broken endpoint can make us hold.
MAX_BODY: Final = 1024 * 1024
_ACCEPT: Final = {"accept": "application/json"}


class FetchFailed(Exception):
    """A fetch from the authorization server failed; ``status`` is its HTTP status, if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@typing.final
class HttpFetcher:
    """One lazily opened ``httpx.AsyncClient``; ``aclose`` closes it, and a later fetch
    opens a new one (a listener that restarts keeps its verifier).

    ``transport`` replaces httpx's network transport: a proxy or mTLS setup, or
    ``httpx.MockTransport`` to answer in-process (tests under trio's ``MockClock``).
    """

    __slots__ = ("_client", "timeout", "transport")

    def __init__(self, timeout: float, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout = timeout
        self.transport = transport
        self._client: httpx.AsyncClient | None = None

    async def get_json(self, url: str) -> dict[str, object]:
        """GET ``url`` and return its JSON object.

        Raises:
            FetchFailed: no answer in time, a connection error, a status other than 200,
                a body over ``MAX_BODY``, or a body that is not a JSON object.
        """
        return await self._send(httpx.Request("GET", url, headers=_ACCEPT), None)

    async def post_form(
        self,
        url: str,
        form: Mapping[str, str],
        *,
        auth: tuple[str, str] | None = None,
    ) -> dict[str, object]:
        """POST ``form`` (``application/x-www-form-urlencoded``) and return the JSON object.

        ``auth`` is HTTP Basic credentials (already form-encoded by the caller, as RFC 6749
        section 2.3.1 asks).

        Raises:
            FetchFailed: as for ``get_json``.
        """
        request = httpx.Request("POST", url, data=dict(form), headers=_ACCEPT)
        return await self._send(request, None if auth is None else httpx.BasicAuth(*auth))

    async def aclose(self) -> None:
        """Close the client (its connections); the next fetch opens a new one."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _send(
        self, request: httpx.Request, auth: httpx.BasicAuth | None
    ) -> dict[str, object]:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False, transport=self.transport
            )
        where = f"{request.method} {request.url.copy_with(query=None)}"
        try:
            response = await self._client.send(request, stream=True, auth=auth)
            try:
                if response.status_code != 200:
                    raise FetchFailed(
                        f"{where} answered HTTP {response.status_code}", response.status_code
                    )
                body = bytearray()
                async for part in response.aiter_bytes():
                    body += part
                    if len(body) > MAX_BODY:
                        raise FetchFailed(f"{where} answered more than {MAX_BODY} bytes")
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise FetchFailed(f"{where} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise FetchFailed(f"{where} failed: {type(exc).__name__}: {exc}") from None
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise FetchFailed(f"{where} answered something that is not JSON") from None
        if not isinstance(data, dict):
            raise FetchFailed(f"{where} answered JSON that is not an object")
        return data
