"""Running the admin app: a child of the daemon's root supervisor, on hypercorn's trio worker.

``admin_spec`` returns the child: it reads the token (``_token.py``: the rules are checked
when the daemon is built, and again at every start), makes a ``CollectorRegistry`` of its
own, installs ``trimcp.telemetry.RequestMetrics`` in it while it runs (``[admin] metrics``),
binds ``[admin] host:port`` (port 0: a free one) and logs "admin app listening at
http://HOST:PORT/". The admin app shares nothing with the MCP listeners: its own socket, its
own routes, its own token.
"""

from __future__ import annotations

import contextlib
import logging
import typing
from typing import TYPE_CHECKING

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from trimcp.supervision import ChildSpec
from trimcp.telemetry import RequestMetrics
from trimcp.transports import OriginPolicy

from ._metrics import admin_registry
from ._token import load_admin_token

if TYPE_CHECKING:
    from collections.abc import Iterator

    from trimcp.config import SysConfig

    from ._targets import AdminTargets

__all__ = ["admin_policy", "admin_spec", "serve_admin"]

logger = logging.getLogger(__name__)


def admin_policy(config: SysConfig) -> OriginPolicy:
    """The Host/Origin policy of ``[admin]`` (its messages name the ``admin.*`` keys)."""
    admin = config.admin
    return OriginPolicy(
        allowed_hosts=admin.allowed_hosts,
        allowed_origins=admin.allowed_origins,
        hosts_setting="admin.allowed_hosts",
        origins_setting="admin.allowed_origins",
    )


def admin_spec(config: SysConfig, targets: AdminTargets) -> ChildSpec:
    """The admin app as a child of the root supervisor (module docstring).

    Raises:
        ConfigError: the token rules (``load_admin_token``), checked now so that ``trimcp
            serve`` refuses to start instead of a child failing later.
    """
    load_admin_token(config)
    admin_policy(config)
    return ChildSpec("admin", serve_admin, args=(config, targets))


async def serve_admin(
    config: SysConfig,
    targets: AdminTargets,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the admin app until cancelled; ``task_status`` gets the bound base URLs."""
    # Here, not at the top: quart costs half a second to import, and only a served app needs it.
    from ._app import create_app

    settings = config.admin
    token = load_admin_token(config)
    registry, collector = admin_registry()
    requests = RequestMetrics(registry) if settings.metrics else None
    app = create_app(
        targets=targets,
        settings=settings,
        token=token,
        policy=admin_policy(config),
        registry=registry,
        collector=collector,
    )
    with _installed(requests):
        async with trio.open_nursery() as nursery:
            binds = typing.cast(
                "list[str]", await nursery.start(serve, app, _hypercorn_config(config))
            )
            urls = [bind.rstrip("/") + "/" for bind in binds]
            logger.info("admin app listening at %s", ", ".join(urls))
            task_status.started(urls)


@contextlib.contextmanager
def _installed(metrics: RequestMetrics | None) -> Iterator[None]:
    if metrics is None:
        yield
        return
    metrics.install()
    try:
        yield
    finally:
        metrics.uninstall()


def _hypercorn_config(config: SysConfig) -> Config:
    admin = config.admin
    hypercorn = Config()
    host = f"[{admin.host}]" if ":" in admin.host else admin.host
    hypercorn.bind = [f"{host}:{admin.port}"]
    hypercorn.accesslog = None
    hypercorn.errorlog = logging.getLogger("hypercorn.error")
    hypercorn.graceful_timeout = 1.0
    return hypercorn
