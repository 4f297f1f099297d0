"""``FlowError``: why a step of the OAuth flow could not go on, in words for a person.

The flow's modules raise ``FlowError`` (or a subclass) with a message that says what
happened and, where it helps, what to do. The public entry points (``OAuth``,
``ClientCredentials``, ``login``) turn it into ``trimcp.errors.HttpAuthRequired`` for the
MCP server concerned, the error the HTTP transport already reports for 401 and 403.
"""

from __future__ import annotations

__all__ = ["FlowError", "NoBrowser", "TokenEndpointError"]


class FlowError(Exception):
    """A step of the flow failed; the message is meant to be shown as is."""


class NoBrowser(FlowError):
    """A sign-in in a browser is needed and this flow has no browser step (a host, a daemon):
    the user must sign in elsewhere first (``trimcp login NAME``)."""


class TokenEndpointError(FlowError):
    """The token endpoint refused a request (RFC 6749 section 5.2).

    ``error`` is the OAuth error code (``invalid_grant``, ``invalid_client``, ...; empty
    when the answer had none) and ``status`` the HTTP status.
    """

    def __init__(self, message: str, *, error: str, status: int) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
