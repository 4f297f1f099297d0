"""The authorization code grant with PKCE, from a chosen registration to the tokens.

Given what discovery found and how the client is registered: a fresh PKCE verifier and
``state``; the browser step picks the redirect URI, and only then is the client registered
dynamically if that is the way (the registration names the redirect URI) and the
authorization URL built (``_redirect``); the redirect is checked (``state``, ``iss``,
``error``) and its code exchanged at the token endpoint with the verifier, the same
redirect URI and the same ``resource``.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-flow-steps
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from ._endpoints import register, request_token
from ._errors import FlowError
from ._pkce import Pkce, new_state
from ._redirect import authorization_url, code_from_redirect
from ._registration import ClientRegistration

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    import httpx

    from ._browser import BrowserStep
    from ._discovery import Discovery
    from ._tokens import TokenSet

__all__ = ["run_code_flow"]

#: What a client registered for the code flow may do: sign in, and refresh.
CODE_GRANTS: Final = ("authorization_code", "refresh_token")


async def run_code_flow(  # noqa: PLR0913  # the flow's inputs, each named
    client: httpx.AsyncClient,
    discovery: Discovery,
    *,
    choice: ClientRegistration | Literal["register"],
    scopes: Sequence[str],
    browser: BrowserStep,
    client_name: str,
    now: Callable[[], float],
    on_registered: Callable[[ClientRegistration], Awaitable[None]],
) -> tuple[TokenSet, ClientRegistration]:
    """Run the flow (module docstring); return the tokens and the registration used.

    ``on_registered`` is awaited with a new dynamic registration as soon as it exists, so
    that it is kept even if the user never finishes signing in.

    Raises:
        FlowError: a step failed; the message says which and why.
    """
    metadata = discovery.server
    assert metadata.authorization_endpoint is not None  # require_pkce checked it
    endpoint = metadata.authorization_endpoint
    pkce, state = Pkce(), new_state()
    used: list[tuple[ClientRegistration, str]] = []

    async def start(redirect_uri: str) -> str:
        if isinstance(choice, ClientRegistration):
            registration = choice
        else:
            registration = await register(
                client,
                metadata,
                client_name=client_name,
                redirect_uri=redirect_uri,
                grant_types=CODE_GRANTS,
            )
            await on_registered(registration)
        used.append((registration, redirect_uri))
        return authorization_url(
            endpoint,
            client_id=registration.client_id,
            redirect_uri=redirect_uri,
            pkce=pkce,
            state=state,
            scopes=scopes,
            resource=discovery.resource,
        )

    params = await browser.authorize(start)
    if not used:
        raise FlowError("the browser step returned without asking for the authorization URL")
    registration, redirect_uri = used[-1]
    code = code_from_redirect(params, state=state, metadata=metadata)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    }
    tokens = await request_token(
        client,
        metadata,
        registration,
        form,
        resource=discovery.resource,
        requested=scopes,
        now=now(),
    )
    return tokens, registration
