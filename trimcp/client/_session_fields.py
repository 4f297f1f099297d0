"""The client's strict reader of a server's wire objects: ``trimcp.protocol.Fields``.

It lives in the protocol core because the payload records client and server share
(``ToolAnnotations``, ``ResourceContents``, ...) read themselves with it; the session
modules import it from here.
"""

from __future__ import annotations

from trimcp.protocol import Fields

__all__ = ["Fields"]
