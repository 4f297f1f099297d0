"""Unique names for actors, like Erlang's ``register/2`` and ``whereis/1``.

The registry is a plain table, not an actor: trio runs every task on one thread, so a dict
updated without awaiting is already atomic, and a lookup on a hot path costs a dict read
instead of a call round trip (~70 us). Each ``trio.run`` gets its own default registry (a
``RunVar``), so tests and embedded applications never see each other's names; pass a
``Registry`` explicitly where you want a separate namespace inside one run.

Entries vanish when their actor exits: registering adds an exit callback to the actor's cell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import AlreadyRegistered, NotRegistered

if TYPE_CHECKING:
    from ._ref import ActorRef


@final
class Registry:
    """A name -> ``ActorRef`` table whose entries are removed when their actor exits."""

    __slots__ = ("_names",)

    def __init__(self) -> None:
        self._names: dict[str, ActorRef] = {}

    def register(self, name: str, ref: ActorRef) -> None:
        """Register ``ref`` under ``name``.

        Raises:
            AlreadyRegistered: another live actor holds ``name``.
            ActorGone: ``ref``'s actor has already exited.
        """
        current = self._names.get(name)
        if current is not None and current.alive:
            raise AlreadyRegistered(name)
        cell = ref._cell
        if not cell.alive:
            raise cell.gone_error()
        self._names[name] = ref

        def forget(_reason: object) -> None:
            if self._names.get(name) == ref:
                del self._names[name]

        cell.exit_callbacks[(self, name)] = forget

    def unregister(self, name: str) -> None:
        """Remove ``name``.

        Raises:
            NotRegistered: no live actor holds ``name``.
        """
        ref = self._names.pop(name, None)
        if ref is None or not ref.alive:
            raise NotRegistered(name)

    def whereis(self, name: str) -> ActorRef | None:
        """Return the live actor registered as ``name``, or None."""
        ref = self._names.get(name)
        if ref is not None and ref.alive:
            return ref
        return None

    def lookup(self, name: str) -> ActorRef:
        """Return the live actor registered as ``name``.

        Raises:
            NotRegistered: no live actor holds ``name``.
        """
        ref = self.whereis(name)
        if ref is None:
            raise NotRegistered(name)
        return ref

    def registered(self) -> dict[str, ActorRef]:
        """Return a snapshot of every live registration."""
        return {name: ref for name, ref in self._names.items() if ref.alive}


_default_registry: trio.lowlevel.RunVar[Registry] = trio.lowlevel.RunVar("trimcp_registry")


def current_registry() -> Registry:
    """Return this ``trio.run``'s default registry, creating it on first use."""
    try:
        return _default_registry.get()
    except LookupError:
        registry = Registry()
        _default_registry.set(registry)
        return registry


def register(name: str, ref: ActorRef) -> None:
    """Register ``ref`` as ``name`` in the current run's registry (see ``Registry.register``)."""
    current_registry().register(name, ref)


def unregister(name: str) -> None:
    """Remove ``name`` from the current run's registry (see ``Registry.unregister``)."""
    current_registry().unregister(name)


def whereis(name: str) -> ActorRef | None:
    """Return the live actor registered as ``name`` in the current run, or None."""
    return current_registry().whereis(name)
