"""The ``[admin]`` table: the daemon's admin app (``trimcp.admin``) on a port of its own.

Off as shipped. When on, ``trimcp serve`` serves ``/healthz``, ``/readyz``, ``/status``,
``/metrics`` and a dashboard at ``/`` on ``host:port``, and ``POST /reload`` and
``POST /upstreams/<name>/restart``, which need the admin bearer token: ``token`` or, better,
``token_file`` (a file only its owner may read, mode 0600). A token is required whenever
``host`` is not loopback (``trimcp.admin`` checks it when the daemon starts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._schema import above, at_least, between, non_empty, spec

# The loopback allowlist of trimcp.transports (repeated, as in _settings.py).
_LOCALHOST = ("localhost:*", "127.0.0.1:*", "[::1]:*")


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminSettings:
    """The ``[admin]`` table.

    Attributes:
        enabled: serve the admin app.
        host: the address to bind; the loopback address by default.
        port: the TCP port; 0 picks a free one (the log says which).
        token: the admin bearer token itself ("" for none); ``token_file`` is better.
        token_file: a file holding the token (mode 0600), relative to the config file's
            folder; "" for none.
        allowed_hosts: ``Host`` header patterns accepted (DNS-rebinding protection).
        allowed_origins: ``Origin`` header patterns accepted.
        metrics: count requests by method and outcome and time them, for ``/metrics``.
        max_listed_sessions: sessions ``/status`` lists per listener at most (the most
            recently active first; the counts cover all of them).
        refresh_interval: seconds between two refreshes of the dashboard.
    """

    enabled: bool = field(default=False, metadata=spec(meaning="serve the admin app"))
    host: str = field(
        default="127.0.0.1", metadata=spec(meaning="the address to bind", check=non_empty())
    )
    port: int = field(
        default=8002,
        metadata=spec(meaning="the TCP port; 0 picks a free one", check=between(0, 65535)),
    )
    token: str = field(default="", metadata=spec(meaning="the admin bearer token"))
    token_file: str = field(
        default="", metadata=spec(meaning="a file (mode 0600) holding the admin bearer token")
    )
    allowed_hosts: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Host header patterns accepted")
    )
    allowed_origins: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Origin header patterns accepted")
    )
    metrics: bool = field(
        default=True, metadata=spec(meaning="count and time requests for /metrics")
    )
    max_listed_sessions: int = field(
        default=200,
        metadata=spec(meaning="sessions /status lists per listener at most", check=at_least(0)),
    )
    refresh_interval: float = field(
        default=2.0,
        metadata=spec(meaning="seconds between two refreshes of the dashboard", check=above(0)),
    )
