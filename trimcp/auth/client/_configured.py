"""Authorization for a configured server: an ``mcpServers`` entry's ``auth``, made real.

``auth_for`` turns the entry's settings (``trimcp.config.mcp_servers.OAuthSettings`` or
``ClientCredentialsSettings``) into the ``OAuth`` or ``ClientCredentials`` its transport
uses. Tokens of a user's sign-in are kept in the ``FileTokenStore`` under the server's name;
those of client credentials only in memory (they are fetched again in one request, and a
file would only be one more copy of a secret).

``login`` and ``logout`` are what ``trimcp login NAME`` and ``trimcp logout NAME`` call:
``login`` signs in now, in the browser, and keeps the tokens; ``logout`` forgets everything
stored for the server (tokens and registrations), so the next sign-in starts afresh.

The entry must already be expanded (``expand_server``): secrets often come from
``${VAR}`` references.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.config.mcp_servers import ClientCredentialsSettings, OAuthSettings
from trimcp.errors import ConfigError

from ._assertion import PrivateKeyJwt
from ._browser import LoopbackBrowser
from ._machine import ClientCredentials
from ._oauth import OAuth
from ._store import FileTokenStore

if TYPE_CHECKING:
    from trimcp.config.mcp_servers import ServerConfig

    from ._browser import BrowserStep
    from ._store import TokenStore
    from ._tokens import TokenSet

__all__ = ["auth_for", "login", "logout"]


def auth_for(
    config: ServerConfig,
    *,
    browser: BrowserStep | None = None,
    store: TokenStore | None = None,
) -> OAuth | ClientCredentials | None:
    """Return the authorization of ``config``'s server, or None when its entry has none.

    ``browser`` is the browser step for a sign-in (None: a sign-in that needs the user
    fails, saying to run ``trimcp login NAME``); ``store`` defaults to the
    ``FileTokenStore`` in the user's config folder.

    Raises:
        ConfigError: the private key file cannot be read.
    """
    settings = config.auth
    if settings is None or config.url is None or config.transport != "http":
        return None
    if isinstance(settings, ClientCredentialsSettings):
        return ClientCredentials(
            config.url,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            private_key=_private_key(config, settings),
            scopes=settings.scopes,
            store_key=config.name,
        )
    return _oauth(config, settings, browser, store)


def _oauth(
    config: ServerConfig,
    settings: OAuthSettings,
    browser: BrowserStep | None,
    store: TokenStore | None,
) -> OAuth:
    assert config.url is not None
    return OAuth(
        config.url,
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        client_metadata_url=settings.client_metadata_url,
        scopes=settings.scopes,
        client_name=f"trimcp ({config.name})",
        browser=browser,
        store=store or FileTokenStore(),
        store_key=config.name,
        sign_in_hint=f"sign in first: trimcp login {config.name}",
    )


def _private_key(config: ServerConfig, settings: ClientCredentialsSettings) -> PrivateKeyJwt | None:
    pem = settings.private_key
    if settings.private_key_file is not None:
        path = Path(settings.private_key_file).expanduser()
        try:
            pem = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"MCP server {config.name!r}: cannot read auth.private_key_file {str(path)!r} "
                f"({exc.strerror or exc}); check the path and that this user may read it",
                key="auth.private_key_file",
            ) from exc
    if pem is None:
        return None
    return PrivateKeyJwt(pem, settings.signing_algorithm)


async def login(
    config: ServerConfig,
    *,
    browser: BrowserStep | None = None,
    store: TokenStore | None = None,
) -> TokenSet:
    """Sign in to ``config``'s server now, in the browser; keep and return the tokens.

    ``browser`` defaults to ``LoopbackBrowser()`` (the system browser, the redirect on
    127.0.0.1).

    Raises:
        ConfigError: the entry has no ``"auth": "oauth"``.
        HttpAuthRequired: the sign-in failed, in plain words.
    """
    auth = auth_for(config, browser=browser or LoopbackBrowser(), store=store)
    if not isinstance(auth, OAuth):
        raise ConfigError(
            f"MCP server {config.name!r} has no sign-in to do: its entry has no "
            '"auth": "oauth"' + (" (it uses client credentials)" if auth is not None else ""),
            key="auth",
        )
    return await auth.login()


async def logout(config: ServerConfig, *, store: TokenStore | None = None) -> None:
    """Forget everything stored for ``config``'s server (tokens and registrations)."""
    await (store or FileTokenStore()).delete(config.name)
