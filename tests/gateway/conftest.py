"""The two MCP eras on both sides of the gateway, as fixtures.

``backend_era``: which era the gateway's client session speaks to its in-memory backends
(``Gateway(local_options=...)``: a handshake version forces ``initialize``, the default
speaks 2026-07-28 to a trimcp server). ``client_era``: which era the downstream client
speaks to the gateway (``open_client_pair(options=...)``, the same way).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import pytest

from trimcp.client import ClientSessionOptions

Era: TypeAlias = Literal["legacy", "modern"]

#: What forces the handshake era on a client session.
LEGACY = ClientSessionOptions(protocol_version="2025-11-25")


def session_options(era: Era) -> ClientSessionOptions | None:
    """The client session options of ``era`` (None: the default, 2026-07-28 first)."""
    return LEGACY if era == "legacy" else None


def backend_options(era: Era, *backends: str) -> dict[str, ClientSessionOptions]:
    """``Gateway(local_options=...)`` making ``backends`` speak ``era``."""
    return dict.fromkeys(backends, LEGACY) if era == "legacy" else {}


@pytest.fixture(params=["legacy", "modern"])
def backend_era(request: pytest.FixtureRequest) -> Era:
    """The era the gateway speaks to its backends."""
    era: Era = request.param
    return era


@pytest.fixture(params=["legacy", "modern"])
def client_era(request: pytest.FixtureRequest) -> Era:
    """The era the downstream client speaks to the gateway."""
    era: Era = request.param
    return era
