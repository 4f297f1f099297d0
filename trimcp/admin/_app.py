"""The admin app's routes, on quart-trio (the contract is in docs/operations.md).

Read-only routes (``/healthz``, ``/readyz``, ``/status``, ``/metrics``, ``/``) answer anyone
the Host/Origin checks let through; the two that change what runs (``POST /reload``,
``POST /upstreams/<name>/restart``) also need ``Authorization: Bearer <admin token>``. Every
request is checked first, as on the MCP endpoint (``trimcp.transports.OriginPolicy``): a
Host no pattern allows is a 421, an Origin a 403, so that a web page cannot reach the admin
app through DNS rebinding or from another origin.

Every answer is computed from a fresh look at the live objects (``_status.look``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from quart import Response, request
from quart_trio import QuartTrio

from trimcp.errors import ConfigError, UnknownServer
from trimcp.supervision import current_application

from ._dashboard import render_dashboard
from ._status import health_only, look, upstream_json

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from trimcp.config import AdminSettings, SysConfig
    from trimcp.gateway import ReloadReport
    from trimcp.supervision import Reloaded
    from trimcp.transports import OriginPolicy

    from ._metrics import LiveCollector
    from ._targets import AdminTargets
    from ._token import AdminToken

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

_REALM = 'Bearer realm="trimcp-admin"'


def _json(body: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(body),
        status=status,
        headers=headers or {},
        content_type="application/json",
    )


def create_app(  # noqa: C901, PLR0913  # one closure per route; the parts it looks at
    *,
    targets: AdminTargets,
    settings: AdminSettings,
    token: AdminToken,
    policy: OriginPolicy,
    registry: CollectorRegistry,
    collector: LiveCollector,
) -> QuartTrio:
    """Build the admin app over ``targets`` (module docstring)."""
    app = QuartTrio("trimcp.admin")
    # No sessions, no templates, no static files: nothing of Quart's beyond routing.
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False

    @app.before_request
    async def check_headers() -> Response | None:
        problem = policy.check_host(request.headers.get("Host"))
        if problem is None:
            problem = policy.check_origin(request.headers.get("Origin"))
        if problem is not None:
            return _json({"error": problem.message}, problem.status)
        return None

    def refused() -> Response | None:
        """None if the request carries the admin token; else the 403/401 answer."""
        if not token.configured:
            return _json(
                {
                    "error": "no admin token is configured: set [admin] token_file (a file"
                    " of mode 0600 holding the token) or [admin] token, then restart"
                },
                403,
            )
        scheme, _, offered = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not offered.strip():
            return _json(
                {"error": "this route needs Authorization: Bearer <the admin token>"},
                401,
                {"WWW-Authenticate": _REALM},
            )
        if not token.matches(offered.strip()):
            return _json(
                {"error": "the admin token is wrong"},
                401,
                {"WWW-Authenticate": f'{_REALM}, error="invalid_token"'},
            )
        return None

    @app.get("/healthz")
    async def healthz() -> Response:
        snapshot = health_only(targets)
        status, reason = snapshot.health()
        if status == "ok":
            return _json({"status": "ok"})
        return _json({"status": status, "reason": reason}, 503)

    @app.get("/readyz")
    async def readyz() -> Response:
        snapshot = await look(targets, settings, detail=False)
        checks = snapshot.checks()
        not_ready = snapshot.not_ready()
        if not_ready:
            return _json({"ready": False, "not_ready": not_ready, "checks": checks}, 503)
        return _json({"ready": True, "checks": checks})

    @app.get("/status")
    async def status() -> Response:
        return _json((await look(targets, settings)).as_json())

    @app.get("/metrics")
    async def metrics() -> Response:
        collector.snapshot = await look(targets, settings)
        try:
            body = generate_latest(registry)
        finally:
            collector.snapshot = None
        return Response(body, status=200, content_type=CONTENT_TYPE_LATEST)

    @app.get("/")
    async def dashboard() -> Response:
        document = (await look(targets, settings)).as_json()
        page = render_dashboard(document, settings.refresh_interval)
        return Response(page, status=200, content_type="text/html; charset=utf-8")

    @app.post("/reload")
    async def reload() -> Response:
        denied = refused()
        if denied is not None:
            return denied
        return await _reload(targets)

    @app.post("/upstreams/<name>/restart")
    async def restart(name: str) -> Response:
        denied = refused()
        if denied is not None:
            return denied
        gateway = targets.gateway
        names = list(gateway.backends) if gateway is not None else []
        if gateway is None or name not in names:
            listed = ", ".join(names) or "none"
            return _json({"error": f"no upstream named {name!r}; configured: {listed}"}, 404)
        logger.info("admin: restarting upstream %r", name)
        try:
            after = await gateway.manager.reconnect(name)
        except UnknownServer as exc:
            return _json({"error": str(exc)}, 404)
        return _json(
            {"restarted": name, "status": upstream_json(after, gateway.transport_of(name))}
        )

    @app.errorhandler(404)
    async def not_found(_: Exception) -> Response:
        return _json({"error": f"no such admin route: {request.method} {request.path}"}, 404)

    @app.errorhandler(405)
    async def not_allowed(_: Exception) -> Response:
        return _json({"error": f"{request.method} is not allowed on {request.path}"}, 405)

    return app


async def _reload(targets: AdminTargets) -> Response:
    application = current_application()
    if application is None:
        return _json({"error": "the application is not running"}, 503)
    log = targets.reloads
    before = log.count
    logger.info("admin: reloading the configuration (as SIGHUP does)")
    try:
        reloaded = await application.reload()
    except ConfigError as exc:
        logger.error("admin reload: the new configuration is invalid; keeping the running one")
        return _json({"error": str(exc)}, 400)
    except Exception as exc:
        logger.exception("admin reload failed")
        return _json({"error": f"the reload failed: {type(exc).__name__}: {exc}"}, 500)
    if log.count > before and log.error is not None:
        return _json({"error": log.error}, 400)
    report = log.report if log.count > before else None
    return _json(_reload_json(targets, application.started_with, reloaded, report))


def _reload_json(
    targets: AdminTargets,
    started: SysConfig | None,
    reloaded: Reloaded,
    report: ReloadReport | None,
) -> dict[str, object]:
    pending: list[str] = []
    if targets.restart_needed is not None and started is not None:
        pending = targets.restart_needed(started, reloaded.config)
    upstreams: dict[str, list[str]] = {"added": [], "removed": [], "restarted": [], "kept": []}
    if report is not None:
        upstreams = {
            "added": list(report.added),
            "removed": list(report.removed),
            "restarted": list(report.restarted),
            "kept": list(report.unchanged),
        }
    return {
        "reloaded": True,
        "sources": list(reloaded.sources),
        "restart_needed": pending,
        "upstreams": upstreams,
    }
