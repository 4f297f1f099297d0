"""A trimcp upstream over Streamable HTTP, for ``tests/gateway/test_interop.py``.

Listens on 127.0.0.1 and a free port; the "MCP over Streamable HTTP at <url>" line on stderr
says where. Stopped by SIGTERM (it drains, then exits 0).
"""

from __future__ import annotations

from _trimcp_tools import build

if __name__ == "__main__":
    build("trimcp-http").run_http(port=0)
