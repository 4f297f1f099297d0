"""Turn what is wrong with a configuration into one readable ``ConfigError``.

Every check in this package describes its finding as a :class:`Problem`; this module alone
decides how findings are worded on screen, so all config errors look alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from trimcp.errors import ConfigError

# Labels are padded to one width so that the values line up in a terminal.
_LABEL_WIDTH = len("expected: ")


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing wrong with the configuration, and where it was written.

    Attributes:
        file: the file that wrote the bad key or value (or ``"<mapping>"`` and the like).
        key: the dotted key path, or None when the problem is not about a key.
        given: the value as written, with its TOML type, or None.
        expected: what would have been accepted, or None.
        fix: one concrete thing to do about it.
        detail: extra lines shown before the labelled ones (e.g. a syntax error excerpt).
    """

    file: str
    key: str | None = None
    given: str | None = None
    expected: str | None = None
    fix: str
    detail: tuple[str, ...] = ()

    def render(self) -> str:
        """Return the problem as the indented, labelled block shown to people."""
        lines = [f"config error in {self.file}"]
        lines.extend(f"  {line}" for line in self.detail)
        for label, value in (
            ("key", self.key),
            ("given", self.given),
            ("expected", self.expected),
            ("fix", self.fix),
        ):
            if value is not None:
                lines.append(f"  {label + ':':<{_LABEL_WIDTH}}{value}")
        return "\n".join(lines)


def config_error(*problems: Problem) -> ConfigError:
    """Return a ConfigError reporting every problem; its attributes describe the first.

    The first problem is the first found, and the search order is fixed (files in merge
    order, keys in the order written), so the attributes are deterministic.
    """
    if not problems:
        raise ValueError("config_error() needs at least one problem")
    first = problems[0]
    message = "\n\n".join(problem.render() for problem in problems)
    if len(problems) > 1:
        message = f"{len(problems)} problems in the configuration:\n\n{message}"
    return ConfigError(
        message, file=first.file, key=first.key, given=first.given, expected=first.expected
    )
