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

The children are whatever the caller passes; later layers (listeners, session manager) add
theirs when they build the daemon. This module knows nothing of MCP.
"""

from __future__ import annotations

import logging
import signal
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

import trio

from trimcp.actors import SHUTDOWN, ActorRef, ExitReason
from trimcp.config import SysConfig
from trimcp.errors import ConfigError

from ._api import open_supervisor
from ._drain import Drain, open_drain

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from ._child_spec import ChildSpec

logger = logging.getLogger(__name__)


@final
@dataclass(slots=True, eq=False)
class Application:
    """A running application: its root supervisor, the configuration it runs with, its drain."""

    supervisor: ActorRef
    config: SysConfig
    drain: Drain = field(default_factory=Drain)

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
    config: SysConfig | None = None, *, children: Sequence[ChildSpec] = ()
) -> AsyncIterator[Application]:
    """Run the application's root supervisor (one_for_one) for the duration of the block.

    The root supervisor is registered under ``application.name`` and uses the restart
    intensity of ``[supervision]``. No signal handlers are installed. If the root supervisor
    gives up, the block is cancelled and ``RestartIntensityExceeded`` is raised. The
    application's ``Drain`` is current for the children (``current_drain``).
    """
    config = config or SysConfig()
    drain = Drain()
    with open_drain(drain):
        async with _open_root(config, children) as root:
            yield Application(root, config, drain)
    logger.info("application %s stopped", config.application.name)


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
    on_reload: Callable[[Application, SysConfig], Awaitable[None]] | None = None,
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
        async with open_application(config, children=children) as app, trio.open_nursery() as n:
            n.start_soon(_handle_signals, app, received, reload_config, on_reload)
            await app.wait_stopped()
            n.cancel_scope.cancel()


async def _handle_signals(
    app: Application,
    received: AsyncIterator[int],
    reload_config: Callable[[], SysConfig] | None,
    on_reload: Callable[[Application, SysConfig], Awaitable[None]] | None,
) -> None:
    stopping = False
    async with trio.open_nursery() as nursery:
        async for signum in received:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                await _reload(app, reload_config, on_reload)
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


async def _reload(
    app: Application,
    reload_config: Callable[[], SysConfig] | None,
    on_reload: Callable[[Application, SysConfig], Awaitable[None]] | None,
) -> None:
    if reload_config is None:
        logger.info("SIGHUP received: no configuration source to reload from")
        return
    try:
        new_config = reload_config()
    except ConfigError as exc:
        logger.error("SIGHUP: the new configuration is invalid; keeping the running one\n%s", exc)
        return
    app.config = new_config
    if on_reload is not None:
        await on_reload(app, new_config)
    logger.info(
        "SIGHUP: configuration reloaded from %s", ", ".join(new_config.sources) or "defaults"
    )
