"""The OAuth 2.1 client side of MCP: getting, keeping and renewing tokens for HTTP servers.

MCP 2025-11-25, Basic > Authorization: a protected MCP server answers 401 with a bearer
challenge; the client finds its authorization server (RFC 9728 Protected Resource Metadata,
then RFC 8414 or OpenID Connect discovery), registers if it must (pre-registered, Client ID
Metadata Document, RFC 7591), signs the user in with the authorization code flow and PKCE,
and sends ``Authorization: Bearer`` on every request, refreshing before expiry and stepping
up when a 403 asks for more scope.

* ``OAuth``: that flow for one server; ``ClientCredentials``: the machine-to-machine grant,
  with a secret or a signed assertion (``PrivateKeyJwt``). Either one is the ``auth`` of
  ``trimcp.transports.http_client.open_http_client_stream``.
* ``BrowserStep``: the seam for sending the user to the authorization server;
  ``LoopbackBrowser`` (default) opens the system browser (``open_system_browser``) and
  receives the redirect on ``127.0.0.1``; ``follow_redirects`` replaces the browser for
  servers that approve without a person.
* ``TokenStore``: where tokens live between runs; ``FileTokenStore`` (0600 files under
  ``$XDG_CONFIG_HOME/trimcp/tokens``) and ``MemoryTokenStore``.
* ``auth_for`` / ``login`` / ``logout``: the same for a configured server (an
  ``mcpServers`` entry's ``"auth"``).

Not here: the resource-server side (``trimcp.auth``), and any authorization server.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from ._assertion import PrivateKeyJwt as PrivateKeyJwt
from ._browser import BrowserStep as BrowserStep
from ._browser import LoopbackBrowser as LoopbackBrowser
from ._browser import follow_redirects as follow_redirects
from ._browser import open_system_browser as open_system_browser
from ._configured import auth_for as auth_for
from ._configured import login as login
from ._configured import logout as logout
from ._machine import ClientCredentials as ClientCredentials
from ._oauth import OAuth as OAuth
from ._registration import ClientRegistration as ClientRegistration
from ._store import FileTokenStore as FileTokenStore
from ._store import MemoryTokenStore as MemoryTokenStore
from ._store import StoredAuth as StoredAuth
from ._store import TokenStore as TokenStore
from ._store import default_token_directory as default_token_directory
from ._tokens import TokenSet as TokenSet

__all__ = [
    "BrowserStep",
    "ClientCredentials",
    "ClientRegistration",
    "FileTokenStore",
    "LoopbackBrowser",
    "MemoryTokenStore",
    "OAuth",
    "PrivateKeyJwt",
    "StoredAuth",
    "TokenSet",
    "TokenStore",
    "auth_for",
    "default_token_directory",
    "follow_redirects",
    "login",
    "logout",
    "open_system_browser",
]
