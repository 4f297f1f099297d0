"""A trimcp upstream over stdio, for ``tests/gateway/test_interop.py`` (``_trimcp_tools``)."""

from __future__ import annotations

from _trimcp_tools import build

if __name__ == "__main__":
    build("trimcp-stdio").run_stdio()
