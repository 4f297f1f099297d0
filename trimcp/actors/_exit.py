"""Why an actor stopped: OTP's exit reasons as one small frozen value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, final

ExitKind = Literal["normal", "shutdown", "killed", "noproc", "error"]


@final
@dataclass(frozen=True, slots=True)
class ExitReason:
    """The reason an actor exited, as delivered to monitors and supervisors.

    ``normal`` and ``shutdown`` are orderly ends (OTP's ``normal`` and ``shutdown``);
    ``error`` carries the exception that crashed the actor; ``killed`` means its stop deadline
    passed or it was killed outright; ``noproc`` is what a monitor of an already-dead actor
    receives when the real reason is no longer known.
    """

    kind: ExitKind
    error: BaseException | None = field(default=None, compare=False)

    @property
    def abnormal(self) -> bool:
        """True when a ``transient`` child with this exit should be restarted (OTP rule)."""
        return self.kind in ("error", "killed")

    def __str__(self) -> str:
        if self.error is not None:
            return f"{self.kind}: {self.error!r}"
        return self.kind


NORMAL = ExitReason("normal")
SHUTDOWN = ExitReason("shutdown")
KILLED = ExitReason("killed")
NOPROC = ExitReason("noproc")


def crashed(error: BaseException) -> ExitReason:
    """Return the exit reason of an actor that raised ``error``."""
    return ExitReason("error", error)
