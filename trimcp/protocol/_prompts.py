"""``PromptMessage``: one message of a prompt (MCP 2025-11-25, Server > Prompts).

A ``GetPromptResult`` holds a list of them. Received, ``content`` is the wire
``ContentBlock``. A server may build one around anything ``trimcp.server`` turns into a
block (a ``str``, an ``Image``, ...) and converts that before ``to_wire``; the core itself
never guesses how a Python value becomes content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, final

if TYPE_CHECKING:
    from ._fields import Fields
    from ._json import JsonObject

#: Who speaks a message (the schema's ``Role``).
Role: TypeAlias = Literal["user", "assistant"]
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant"}


@final
@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message: ``role`` and one content block (also usable as a sampling message).

    ``content`` is typed ``object`` because a server may put a value there that becomes a
    block only when sent; what a client reads is always the wire block (a JSON object).
    """

    role: Role
    content: object

    def to_wire(self) -> JsonObject:
        """Return the wire ``PromptMessage``.

        Raises:
            TypeError: ``content`` is not a wire content block (a dict) yet.
        """
        if not isinstance(self.content, dict):
            raise TypeError(
                f"a PromptMessage's content must be a wire content block to be sent, "
                f"not {type(self.content).__name__} (trimcp.server converts it first)"
            )
        return {"role": self.role, "content": self.content}

    @classmethod
    def from_wire(cls, fields: Fields) -> PromptMessage:
        """Read a wire ``PromptMessage``; a missing ``content`` reads as an empty object.

        Raises:
            RemoteProtocolError: ``role`` is not ``"user"`` or ``"assistant"``, or
                ``content`` is not an object.
        """
        role = _ROLES.get(fields.string("role"))
        if role is None:
            raise fields.bad("role", '"user" or "assistant"')
        content = fields.opt_obj("content")
        return cls(role, {} if content is None else content)
