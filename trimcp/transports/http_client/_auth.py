"""``HttpAuth``: how the HTTP client transports authorize their requests.

The seam between the transports and whatever supplies credentials (``trimcp.auth.client``'s
``OAuth`` and ``ClientCredentials``, or a host's own). For each request the transport asks
``authorization()`` for the ``Authorization`` header; a 401 or 403 answer is handed to
``refused()``, and when it returns True the request is sent again, with a fresh header, at
most ``AUTH_RETRIES`` times (a token refreshed and then a step-up is two). Everything else
about a request stays as without authorization; an answer that is not retried is handled
as any 401 or 403 is.

``send_authorized`` is that loop, shared by the POSTs, the GET stream and the legacy
transport. The transport never logs the header and never puts a token in a URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import httpx

from ._wire import close_response, read_limited

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

__all__ = ["AUTH_RETRIES", "HttpAuth", "send_authorized"]

#: Times one request is sent again after ``refused`` said so.
AUTH_RETRIES: Final = 2

# How much of a refusal's body is kept for the error that explains it.
_REFUSAL_BODY_LIMIT = 64 * 1024


@runtime_checkable
class HttpAuth(Protocol):
    """Supplies the ``Authorization`` header and deals with 401 and 403 answers.

    Implementations serialise their own renewals (several requests may be refused at once)
    and must not send a token to any host but the one it was issued for.
    """

    async def authorization(self) -> str | None:
        """Return the ``Authorization`` header value for the next request, or None.

        May renew an expiring token first.
        """
        ...

    async def refused(self, *, status: int, challenges: Sequence[str], sent: str | None) -> bool:
        """Deal with a 401 or 403 answer; return True to have the request sent again.

        ``challenges`` are the answer's ``WWW-Authenticate`` values, ``sent`` the
        ``Authorization`` value the request carried (None: none). May take as long as a
        user needs to sign in.

        Raises:
            trimcp.errors.TransportBroken: a subclass (``HttpAuthRequired``) saying in plain
                words why no credentials could be had.
        """
        ...


async def _authorize(headers: dict[str, str], auth: HttpAuth) -> str | None:
    value = await auth.authorization()
    if value is not None:
        headers["authorization"] = value
    return headers.get("authorization")


def _replayed(response: httpx.Response, body: bytes) -> httpx.Response:
    """A closed response again, its body in memory (already decoded, so no framing)."""
    kept = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    return httpx.Response(
        response.status_code, headers=kept, content=body, request=response.request
    )


async def send_authorized(
    send: Callable[[dict[str, str]], Awaitable[httpx.Response]],
    headers: dict[str, str],
    auth: HttpAuth | None,
) -> httpx.Response:
    """Send with ``send(headers)`` and ``auth``'s header; retry after a refusal it fixes.

    A 401 or 403 that is not sent again comes back as a response with its body read (so
    the caller can quote it) and its connection released.

    Raises:
        httpx.HTTPError: from ``send``.
        TransportBroken: from ``auth.refused``.
    """
    if auth is None:
        return await send(headers)
    attempt = 0
    while True:
        sent = await _authorize(headers, auth)
        response = await send(headers)
        if response.status_code not in (401, 403):
            return response
        try:
            body = await read_limited(response, _REFUSAL_BODY_LIMIT)
        except httpx.HTTPError:
            body = b""
        finally:
            await close_response(response)
        challenges = response.headers.get_list("www-authenticate")
        if attempt == AUTH_RETRIES or not await auth.refused(
            status=response.status_code, challenges=challenges, sent=sent
        ):
            return _replayed(response, body)
        attempt += 1
