"""The ``[gateway]`` table: how ``trimcp serve`` names what its backends offer (``trimcp.gateway``).

The daemon serves one MCP server fronting several backends (the built-in tools, the
``[server] object``, every ``[upstreams]``/``mcpServers`` server). Their tools and prompts are
renamed by ``namespace`` so that two backends may both have a ``search`` tool. The validator
reads only flat tables, so the per-backend settings are flat too: ``prefixes`` holds
``"backend=prefix"`` strings, and ``allow``/``deny`` are glob patterns matched against the
*namespaced* tool names (``"github__*"``), which name the backend anyway.

``max_parked_calls`` and ``parked_call_ttl`` bound the backend calls that wait for a
2026-07-28 caller's input between its requests (``trimcp.gateway``'s ``_parked.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._schema import Check, above, at_least, spec

#: The schemes ``namespace`` may name besides "none" (bare names).
NAMESPACE_SCHEMES: tuple[str, ...] = (
    "{server}__{name}",
    "{server}_{name}",
    "mcp__{server}__{name}",
)


def _scheme_ok(value: str) -> bool:
    return value == "none" or ("{server}" in value and "{name}" in value)


def _prefixes_ok(values: tuple[str, ...]) -> bool:
    return all(value.partition("=")[0].strip() and "=" in value for value in values)


def _patterns_ok(values: tuple[str, ...]) -> bool:
    return all(value.strip() for value in values)


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewaySettings:
    """The ``[gateway]`` table.

    Attributes:
        namespace: how a backend's tool and prompt names are shown: a pattern with
            ``{server}`` (the backend's prefix) and ``{name}`` (its own name), e.g. the
            default ``"{server}__{name}"``, ``"{server}_{name}"``, ``"mcp__{server}__{name}"``;
            or ``"none"``: bare names, the first backend in order wins a clash.
        prefixes: ``"backend=prefix"`` overrides of the ``{server}`` part (an empty prefix
            shows that backend's names bare).
        allow: glob patterns of namespaced tool names offered; empty offers every tool.
        deny: glob patterns of namespaced tool names never offered (wins over ``allow``).
        max_parked_calls: backend calls that may wait at once for a 2026-07-28 caller's
            answer (an ``InputRequiredResult`` sent, its retry not come yet); parking one
            more cancels the one waiting longest (default 256).
        parked_call_ttl: seconds such a call waits for the retry before it is cancelled at
            its backend; its ``requestState`` expires with it (default 600, as long as the
            states ``trimcp.server`` issues live).
    """

    namespace: str = field(
        default="{server}__{name}",
        metadata=spec(
            meaning='how backend names are shown: a pattern with {server} and {name}, or "none"',
            check=Check(test=_scheme_ok, rule='holding {server} and {name}, or "none"'),
        ),
    )
    prefixes: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="backend=prefix overrides of {server}",
            check=Check(test=_prefixes_ok, rule='of "backend=prefix" strings'),
            example=("github=gh",),
        ),
    )
    allow: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="glob patterns of namespaced tool names offered (empty: all)",
            check=Check(test=_patterns_ok, rule="of non-empty patterns"),
            example=("github__*",),
        ),
    )
    deny: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="glob patterns of namespaced tool names never offered",
            check=Check(test=_patterns_ok, rule="of non-empty patterns"),
            example=("*__delete_*",),
        ),
    )

    max_parked_calls: int = field(
        default=256,
        metadata=spec(
            meaning="backend calls that may wait at once for a 2026-07-28 caller's input",
            check=at_least(1),
        ),
    )
    parked_call_ttl: float = field(
        default=600.0,
        metadata=spec(
            meaning="seconds a backend call waits for a 2026-07-28 caller's retry",
            check=above(0),
        ),
    )

    def prefix_of(self, backend: str) -> str:
        """The ``{server}`` part for ``backend``: its override, else its name."""
        for entry in self.prefixes:
            name, _, prefix = entry.partition("=")
            if name.strip() == backend:
                return prefix.strip()
        return backend
