"""The application: the root supervisor built from ``sys_config.toml``, embedded or as a daemon.

``open_application`` is for embedding: an async context manager that runs the root supervisor
inside the caller's own task tree and installs no signal handlers — cancel the surrounding scope
or leave the block and everything stops in order; ``Application.stop_gracefully`` drains first.
``run_application`` is the daemon's main: it adds SIGTERM/SIGINT (a graceful stop, below; a
second signal kills what is left at once) and SIGHUP (re-read the configuration and hand it to
a reload hook).

The graceful stop (``_drain.py``): the application's ``Drain`` begins — listeners refuse new
connections and sessions, sessions refuse new requests, what is in flight carries on — for up
to ``application.stop_timeout``; what is still running then is cancelled and answered with an
error; then the ordered stop, which is itself killed if it has not finished after another
``application.stop_timeout``.

``Application.reload`` is SIGHUP's work as a method: re-read the configuration with the
``reload_config`` given to ``run_application``, hand it to ``on_reload``, and say what
happened (``Reloaded``) or raise the ``ConfigError`` (the running configuration is kept).
A SIGHUP and an admin app's ``POST /reload`` both call it, one at a time. A child finds the
application it runs in with ``current_application()`` (set before the root supervisor
starts its children, filled in once it has: ask at the time of use, not at start).

The children are whatever the caller passes; later layers (listeners, session manager) add
theirs when they build the daemon. This module knows nothing of MCP.
"""

from __future__ import annotations

import contextvars
import logging
import os
import signal
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import OPERATION, SHUTDOWN, ActorRef, ExitReason
from trimcp.config import SysConfig
from trimcp.errors import ConfigError

from ._api import open_supervisor
from ._drain import Drain, open_drain

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from ._child_spec import ChildSpec

logger = logging.getLogger(__name__)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Reloaded:
    """What ``Application.reload`` did.

    Attributes:
        previous: the configuration that ran before.
        config: the configuration now in force.
        applied: what ``on_reload`` returned (None without one).
    """

    previous: SysConfig
    config: SysConfig
    applied: object = None

    @property
    def sources(self) -> tuple[str, ...]:
        """The files the new configuration was read from."""
        return tuple(self.config.sources)


@final
@dataclass(slots=True, eq=False)
class Application:
    """A running application: its root supervisor, the configuration it runs with, its drain.

    Attributes:
        supervisor: the root supervisor.
        config: the configuration in force (replaced by ``reload``).
        drain: the graceful stop's first phase.
        started_with: the configuration it started with (what start-only tables run with).
        started_at: when it started, seconds since the epoch.
        pid: the process it runs in.
        reload_config, on_reload: what ``reload`` uses (``run_application``'s).
    """

    supervisor: ActorRef
    config: SysConfig
    drain: Drain = field(default_factory=Drain)
    started_with: SysConfig | None = None
    started_at: float = field(default_factory=time.time)
    pid: int = field(default_factory=os.getpid)
    reload_config: Callable[[], SysConfig] | None = None
    on_reload: Callable[[Application, SysConfig], Awaitable[object]] | None = None
    _reloading: trio.Lock = field(default_factory=trio.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.started_with is None:
            self.started_with = self.config

    @property
    def state(self) -> str:
        """``running``; ``stopping`` once a stop or drain began; ``stopped`` once it exited."""
        if not self.supervisor.alive:
            return "stopped"
        if self.drain.draining or self.supervisor.statistics().phase != OPERATION.name:
            return "stopping"
        return "running"

    async def reload(self) -> Reloaded:
        """Do what SIGHUP does (module docstring); one reload at a time.

        Raises:
            ConfigError: the new configuration is invalid, or there is nothing to reload
                from (no ``reload_config``); the running configuration is kept.
        """
        async with self._reloading:
            if self.reload_config is None:
                raise ConfigError(
                    f"{self.name} was started without a configuration source to reload from"
                )
            new_config = self.reload_config()
            previous, self.config = self.config, new_config
            applied = None
            if self.on_reload is not None:
                applied = await self.on_reload(self, new_config)
            return Reloaded(previous=previous, config=new_config, applied=applied)

    @property
    def name(self) -> str:
        """The application's name (``application.name``)."""
        return self.config.application.name

    def request_stop(self) -> None:
        """Begin the ordered stop: children stop in reverse start order, each within its budget."""
        self.supervisor.request_stop(SHUTDOWN)

    async def stop_gracefully(self, timeout: float | None = None) -> bool:
        """Drain (up to ``timeout``, default ``application.stop_timeout``), then stop in order.

        Returns once the ordered stop has begun: True if nothing had to be cancelled.
        """
        budget = self.config.application.stop_timeout if timeout is None else timeout
        finished = await self.drain.run(budget)
        self.request_stop()
        return finished

    def kill(self) -> None:
        """Stop now: cancel every actor's handler and ``terminate`` down the tree."""
        self.supervisor.kill()

    async def wait_stopped(self) -> ExitReason:
        """Wait until the root supervisor has exited; return why."""
        return await self.supervisor.wait_exited()


@asynccontextmanager
async def open_application(
    config: SysConfig | None = None,
    *,
    children: Sequence[ChildSpec] = (),
    reload_config: Callable[[], SysConfig] | None = None,
    on_reload: Callable[[Application, SysConfig], Awaitable[object]] | None = None,
) -> AsyncIterator[Application]:
    """Run the application's root supervisor (one_for_one) for the duration of the block.

    The root supervisor is registered under ``application.name`` and uses the restart
    intensity of ``[supervision]``. No signal handlers are installed. If the root supervisor
    gives up, the block is cancelled and ``RestartIntensityExceeded`` is raised. The
    application's ``Drain`` is current for the children (``current_drain``), and so is the
    application itself once it has started (``current_application``). ``reload_config`` and
    ``on_reload`` are what ``Application.reload`` uses.
    """
    config = config or SysConfig()
    drain = Drain()
    slot: list[Application] = []
    token = _current.set(slot)
    try:
        with open_drain(drain):
            async with _open_root(config, children) as root:
                app = Application(
                    root, config, drain, reload_config=reload_config, on_reload=on_reload
                )
                slot.append(app)
                yield app
    finally:
        _current.reset(token)
    logger.info("application %s stopped", config.application.name)


#: The application whose children run in this context (a one-item list once it started).
_current: contextvars.ContextVar[list[Application]] = contextvars.ContextVar("trimcp_application")


def current_application() -> Application | None:
    """The application this task runs under, once its root supervisor has started; else None.

    A child of the root supervisor starts before the application exists: it asks when it
    needs it (e.g. per request), not while starting.
    """
    slot = _current.get(None)
    return slot[0] if slot else None


@asynccontextmanager
async def _open_root(config: SysConfig, children: Sequence[ChildSpec]) -> AsyncIterator[ActorRef]:
    async with open_supervisor(
        children,
        strategy="one_for_one",
        intensity=config.supervision.intensity,
        period=config.supervision.period,
        name=config.application.name,
    ) as root:
        logger.info(
            "application %s started with %d children",
            config.application.name,
            len(children),
            extra={"supervisor": config.application.name},
        )
        yield root


async def run_application(
    config: SysConfig,
    *,
    children: Sequence[ChildSpec] = (),
    reload_config: Callable[[], SysConfig] | None = None,
    on_reload: Callable[[Application, SysConfig], Awaitable[object]] | None = None,
) -> None:
    """Run the application until SIGTERM/SIGINT, as the daemon does.

    The first SIGTERM or SIGINT starts the graceful stop (module docstring): drain for up to
    ``application.stop_timeout`` seconds, then the ordered stop; if that has not finished
    after another ``application.stop_timeout``, or a second such signal arrives at any
    point, everything still running is killed. SIGHUP calls ``reload_config`` and passes the
    result to ``on_reload``; a bad new configuration is logged and the running one kept.
    """
    signals = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    with trio.open_signal_receiver(*signals) as received:
        async with (
            open_application(
                config, children=children, reload_config=reload_config, on_reload=on_reload
            ) as app,
            trio.open_nursery() as n,
        ):
            n.start_soon(_handle_signals, app, received)
            await app.wait_stopped()
            n.cancel_scope.cancel()


async def _handle_signals(app: Application, received: AsyncIterator[int]) -> None:
    stopping = False
    async with trio.open_nursery() as nursery:
        async for signum in received:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                await _reload(app)
            elif not stopping:
                stopping = True
                timeout = app.config.application.stop_timeout
                logger.info("%s received: stopping %s (up to %g s)", name, app.name, timeout)
                nursery.start_soon(_stop_gracefully, app, timeout)
            else:
                logger.warning("%s received again: cancelling everything now", name)
                app.kill()


async def _stop_gracefully(app: Application, timeout: float) -> None:
    await app.stop_gracefully(timeout)
    await trio.sleep(timeout)
    logger.error("ordered stop did not finish within %g s: cancelling everything", timeout)
    app.kill()


async def _reload(app: Application) -> None:
    if app.reload_config is None:
        logger.info("SIGHUP received: no configuration source to reload from")
        return
    try:
        reloaded = await app.reload()
    except ConfigError as exc:
        logger.error("SIGHUP: the new configuration is invalid; keeping the running one\n%s", exc)
        return
    logger.info("SIGHUP: configuration reloaded from %s", ", ".join(reloaded.sources) or "defaults")
