"""Where an upstream server definition came from: its file and that file's layer.

Both the definitions (``_model``) and the problems found in them
(``_errors``) name their source, so it lives here, below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, final

__all__ = ["INLINE", "ConfigSource", "Layer"]

Layer = Literal["sys_config", "user", "project", "explicit", "inline"]
"""Where a definition came from: the daemon's sys_config.toml ``[upstreams]``, the user file,
the project file, a file named with ``--config``, or a mapping given in code."""


_LAYER_WORDS: dict[Layer, str] = {
    "sys_config": "sys_config.toml [upstreams]",
    "user": "user config",
    "project": "project config",
    "explicit": "named with --config",
    "inline": "given in code",
}


@final
@dataclass(frozen=True, slots=True)
class ConfigSource:
    """The file (or mapping) a definition was read from, and its layer.

    Attributes:
        path: the absolute file path, or None for a mapping given in code.
        layer: which layer the file belongs to; later layers override earlier ones.
    """

    path: str | None
    layer: Layer

    def describe(self) -> str:
        """Return e.g. ``/home/me/.config/trimcp/mcp.json (user config)``."""
        return f"{self.path or '<inline>'} ({_LAYER_WORDS[self.layer]})"


INLINE = ConfigSource(None, "inline")
"""The source of definitions given as a mapping in code."""
