"""What each side declared at ``initialize``, as flags that answer "may I use X?".

MCP 2025-11-25, Basic > Lifecycle > Capability Negotiation: a capability is an object whose
presence (even ``{}``) means "supported"; only ``listChanged`` and ``subscribe`` are booleans,
and unknown keys must be tolerated. The codec parses the wire dicts into these records (a
non-object value counts as "not declared"); top-level keys we do not model are kept verbatim in
``extra`` and sent back out unchanged, unknown keys *inside* a modelled capability are dropped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from ._json import JsonObject
    from ._versions import VersionFeatures


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCapabilities:
    """The client's declaration. A sub-flag implies its parent (the codec ensures it).

    ``elicitation_form``: declared ``elicitation.form``, or a bare ``elicitation: {}``, which
    means form mode only (MCP 2025-11-25, Client Features > Elicitation > Capabilities).
    """

    roots: bool = False
    roots_list_changed: bool = False
    sampling: bool = False
    sampling_context: bool = False
    sampling_tools: bool = False
    elicitation_form: bool = False
    elicitation_url: bool = False
    tasks: bool = False
    tasks_list: bool = False
    tasks_cancel: bool = False
    tasks_sampling_create_message: bool = False
    tasks_elicitation_create: bool = False
    experimental: JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)

    @property
    def elicitation(self) -> bool:
        """Tell whether the client declared elicitation in any mode."""
        return self.elicitation_form or self.elicitation_url


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerCapabilities:
    """The server's declaration. A sub-flag implies its parent (the codec ensures it)."""

    prompts: bool = False
    prompts_list_changed: bool = False
    resources: bool = False
    resources_subscribe: bool = False
    resources_list_changed: bool = False
    tools: bool = False
    tools_list_changed: bool = False
    logging: bool = False
    completions: bool = False
    tasks: bool = False
    tasks_list: bool = False
    tasks_cancel: bool = False
    tasks_tools_call: bool = False
    experimental: JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)

    def for_version(self, version: VersionFeatures) -> ServerCapabilities:
        """Return the declaration trimmed to what ``version`` knows.

        Tasks exist only from 2025-11-25 on, so an older session never declares them and the
        connection refuses ``tasks/*`` there with -32601.
        """
        if version.tasks or not self.tasks:
            return self
        return dataclasses.replace(
            self, tasks=False, tasks_list=False, tasks_cancel=False, tasks_tools_call=False
        )


#: Requests a client may send a server, and the server capability each needs
#: (MCP 2025-11-25, Lifecycle > Capability Negotiation,
#: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#capability-negotiation).
#: Methods not listed need none.
SERVER_CAPABILITY_FOR_REQUEST: dict[str, str] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources_subscribe",
    "resources/unsubscribe": "resources_subscribe",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
    "tasks/get": "tasks",
    "tasks/result": "tasks",
    "tasks/list": "tasks_list",
    "tasks/cancel": "tasks_cancel",
}

#: Notifications a server may send, and the server capability each needs.
SERVER_CAPABILITY_FOR_NOTIFICATION: dict[str, str] = {
    "notifications/message": "logging",
    "notifications/resources/updated": "resources_subscribe",
    "notifications/resources/list_changed": "resources_list_changed",
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/tasks/status": "tasks",
}

#: Requests a server may send a client, and the client capability each needs.
CLIENT_CAPABILITY_FOR_REQUEST: dict[str, str] = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
    "elicitation/create": "elicitation",
    "tasks/get": "tasks",
    "tasks/result": "tasks",
    "tasks/list": "tasks_list",
    "tasks/cancel": "tasks_cancel",
}

#: Notifications a server may send that need a *client* capability.
CLIENT_CAPABILITY_FOR_NOTIFICATION: dict[str, str] = {
    "notifications/elicitation/complete": "elicitation_url",
}

#: Notifications a client may send that need a client capability of its own.
CLIENT_OWN_CAPABILITY_FOR_NOTIFICATION: dict[str, str] = {
    "notifications/roots/list_changed": "roots_list_changed",
    "notifications/tasks/status": "tasks",
}


def declared(capabilities: ClientCapabilities | ServerCapabilities, flag: str) -> bool:
    """Tell whether ``flag`` (an attribute name from the tables above) is set."""
    value: object = getattr(capabilities, flag)
    return value is True
