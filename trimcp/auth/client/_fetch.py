"""The flow's HTTP requests: a JSON GET and a POST, with bounded answers.

Metadata documents and token answers are small; a body over ``MAX_BODY`` is cut and then
fails to parse, so a misbehaving server cannot make the client hold megabytes. Redirects
are not followed (RFC 8414 and RFC 9728 give no reason for one, and a token request must
not be replayed elsewhere). Nothing here logs a body: token answers hold secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

import httpx

from ._errors import FlowError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MAX_BODY", "Answer", "get_json", "new_http_client", "post"]

#: The largest answer read, in bytes. Metadata documents are a few KiB.
MAX_BODY: Final = 256 * 1024

#: Seconds for connecting and for each read of one request of the flow.
DEFAULT_TIMEOUT: Final = 30.0


@final
@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP answer: its status, its headers and its JSON body (None: not JSON)."""

    status: int
    document: object
    headers: httpx.Headers


def new_http_client(timeout: float = DEFAULT_TIMEOUT) -> httpx.AsyncClient:
    """Return the client the flow's requests go through (no redirects, bounded waits)."""
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False)


async def _answer(client: httpx.AsyncClient, request: httpx.Request) -> Answer:
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise FlowError(f"the request to {request.url} failed: {exc!r}") from exc
    body = bytearray()
    try:
        # Read to the end, keeping at most MAX_BODY + 1 bytes: leaving httpx's chain of
        # async generators half-way would leave them to the garbage collector.
        async for chunk in response.aiter_bytes():
            if len(body) <= MAX_BODY:
                body.extend(chunk[: MAX_BODY + 1 - len(body)])
    except httpx.HTTPError as exc:
        raise FlowError(f"the answer from {request.url} broke off: {exc!r}") from exc
    finally:
        await response.aclose()
    try:
        document: object = json.loads(bytes(body))
    except ValueError:
        document = None
    return Answer(response.status_code, document, response.headers)


async def get_json(client: httpx.AsyncClient, url: str) -> Answer:
    """GET ``url`` asking for JSON.

    Raises:
        FlowError: no connection, or the answer broke off.
    """
    request = client.build_request("GET", url, headers={"accept": "application/json"})
    return await _answer(client, request)


async def post(
    client: httpx.AsyncClient,
    url: str,
    *,
    form: Mapping[str, str] | None = None,
    json_body: object = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """POST a form (``application/x-www-form-urlencoded``) or a JSON document to ``url``.

    Raises:
        FlowError: no connection, or the answer broke off.
    """
    sent = {"accept": "application/json", **(headers or {})}
    if form is not None:
        request = client.build_request("POST", url, data=dict(form), headers=sent)
    else:
        request = client.build_request("POST", url, json=json_body, headers=sent)
    return await _answer(client, request)
