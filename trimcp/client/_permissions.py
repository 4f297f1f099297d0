"""Which tool calls a host lets through: allow, deny or ask, by glob pattern.

Rules are checked in order and the first whose pattern matches the qualified tool name
(``mcp__github__create_issue``; ``fnmatch`` globs, so ``mcp__github__*`` or ``*delete*``)
decides. A rule may instead only mark what it matches as *dangerous*: a dangerous tool that
no allow rule lets through is asked about, and denied when no ``ask`` callback is set. So is
a tool whose server says it is destructive (``annotations.destructiveHint``, and not
``readOnlyHint``): such hints come from the server and cannot make a call *more* permitted
here, only less. Everything else is allowed unless a rule says otherwise (``default``).

``ask`` is an async callback that gets the ``CallRequest`` and returns True to allow: a
prompt in a terminal, a dialog, a chat message. A callback that fails denies. A call whose
server entry lists the tool in ``always_allow`` (``alwaysAllow`` / ``autoApprove`` in the
mcpServers file) is not asked about: the user answered "allow" in advance. Only asking is
skipped that way; a rule that denies still denies.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, final

__all__ = [
    "Action",
    "AskCallback",
    "CallRequest",
    "Decision",
    "PermissionPolicy",
    "PermissionRule",
]

logger = logging.getLogger(__name__)

Action = Literal["allow", "deny", "ask"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRule:
    """One rule: a glob ``pattern`` over qualified tool names and what it decides.

    ``action`` ``None`` with ``dangerous=True`` only marks the matching tools dangerous;
    checking then goes on to the next rules.
    """

    pattern: str
    action: Action | None = None
    dangerous: bool = False

    def __post_init__(self) -> None:
        if self.action is None and not self.dangerous:
            raise ValueError(
                f"permission rule {self.pattern!r} decides nothing: give it an action "
                '("allow", "deny" or "ask") or mark it dangerous'
            )

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.pattern)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CallRequest:
    """A tool call waiting for permission: what ``ask`` is shown.

    ``always_allowed``: the server's configuration entry lists ``tool`` in ``always_allow``,
    so the call is allowed where it would be asked about.
    """

    qualified_name: str
    server: str
    tool: str
    arguments: Mapping[str, object]
    annotations: Mapping[str, object] | None = None
    always_allowed: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What the rules say about a call, and why (for logs and refusals)."""

    action: Action
    dangerous: bool
    reason: str


AskCallback = Callable[[CallRequest], Awaitable[bool]]


def _destructive(annotations: Mapping[str, object] | None) -> bool:
    if not annotations:
        return False
    return (
        annotations.get("destructiveHint") is True and annotations.get("readOnlyHint") is not True
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionPolicy:
    """Rules in order, the action when none matches, and who to ask."""

    rules: Sequence[PermissionRule] = ()
    default: Action = "allow"
    ask: AskCallback | None = field(default=None, compare=False)

    def decide(self, name: str, annotations: Mapping[str, object] | None = None) -> Decision:
        """Return the decision for the tool called ``name`` (qualified), before any asking."""
        dangerous = _destructive(annotations)
        marked_by = "its server marks it destructive" if dangerous else ""
        for rule in self.rules:
            if not rule.matches(name):
                continue
            if rule.dangerous and not dangerous:
                dangerous = True
                marked_by = f"rule {rule.pattern!r} marks it dangerous"
            if rule.action is not None:
                return Decision(
                    action=rule.action, dangerous=dangerous, reason=f"rule {rule.pattern!r}"
                )
        if dangerous:
            return Decision(action="ask", dangerous=True, reason=marked_by)
        return Decision(action=self.default, dangerous=False, reason="no rule matched")

    async def check(self, request: CallRequest) -> Decision:
        """Decide, asking ``ask`` when a rule says so; the result is ``allow`` or ``deny``."""
        decision = self.decide(request.qualified_name, request.annotations)
        if decision.action != "ask":
            return decision
        if request.always_allowed:
            return Decision(
                action="allow",
                dangerous=decision.dangerous,
                reason=f"{decision.reason}; its server's entry lists it in always_allow",
            )
        if self.ask is None:
            return Decision(
                action="deny",
                dangerous=decision.dangerous,
                reason=f"{decision.reason}, and there is no one to ask (no ask callback)",
            )
        try:
            allowed = await self.ask(request)
        except Exception:
            logger.exception("the permission callback failed for %s", request.qualified_name)
            allowed = False
        verdict: Action = "allow" if allowed else "deny"
        return Decision(
            action=verdict,
            dangerous=decision.dangerous,
            reason=f"{decision.reason}; asked: {'allowed' if allowed else 'refused'}",
        )
