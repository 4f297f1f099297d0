"""``ElicitResult``: the user's answer to ``elicitation/create`` (MCP 2025-11-25, Elicitation).

A client's elicitation handler returns one and the client sends it (``to_wire``); a server's
``Context.elicit`` hands one back, after checking the content against the schema it asked
with (that check, and converting the content to a class, are ``trimcp.server``'s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, final

if TYPE_CHECKING:
    from ._json import JsonObject

#: What the user did: submitted (``accept``), refused (``decline``) or dismissed (``cancel``).
ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitResult:
    """The user's answer: ``action``, and ``content`` for an accepted form.

    On the wire ``content`` is a JSON object of the requested fields, sent only for an
    accepted form (never in URL mode). It is typed ``object`` because a server converts it to
    the class it asked with (a dataclass, a TypedDict, a pydantic model) when it was given
    one.
    """

    action: ElicitAction
    content: object = None
    meta: JsonObject | None = None

    @property
    def accepted(self) -> bool:
        """Tell whether the user accepted."""
        return self.action == "accept"

    def to_wire(self) -> JsonObject:
        """Return the wire ``ElicitResult``.

        Raises:
            TypeError: ``content`` is neither None nor a JSON object (a dict).
        """
        wire: JsonObject = {"action": self.action}
        if self.content is not None:
            if not isinstance(self.content, dict):
                raise TypeError(
                    "an ElicitResult's content is sent as a JSON object (a dict), "
                    f"not {type(self.content).__name__}"
                )
            wire["content"] = self.content
        if self.meta is not None:
            wire["_meta"] = self.meta
        return wire
