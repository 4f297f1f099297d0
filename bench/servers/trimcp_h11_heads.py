"""``trimcp_http_server.py`` with h11 parsing every request head instead of trimcp's parser.

It answers the question of ``bench/http_framing.py``: what would letting h11 frame requests
cost trimcp's HTTP/1.1 server? ``trimcp.http._h1.parse_head`` is replaced by a function
that feeds the head to a new ``h11.Connection(h11.SERVER)``, takes its ``Request`` event
and builds the same ``RequestHead`` from it; everything else is unchanged. Bodies (sized,
as the load generator sends them) are still sliced from the buffer: a real h11 server would
also pay for h11's ``Data`` and ``EndOfMessage`` events, so this is a lower bound of the
cost of h11 framing. Options as ``trimcp_http_server.py``.
"""

from __future__ import annotations

import argparse
import logging
import runpy
import sys
from pathlib import Path

import h11

from trimcp.http import _h1
from trimcp.http._h1_parse import HeadRejected, RequestHead


def _tokens(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    return [
        token.strip().lower()
        for field, value in headers
        if field == name
        for token in value.split(b",")
        if token.strip()
    ]


def h11_parse_head(head: bytes) -> RequestHead:
    """Parse one request head with h11 into trimcp's ``RequestHead``."""
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(head)
    try:
        event = connection.next_event()
    except h11.RemoteProtocolError as exc:
        raise HeadRejected(exc.error_status_hint, str(exc)) from None
    if not isinstance(event, h11.Request):
        raise HeadRejected(400, "incomplete request head")
    headers = [(bytes(name), bytes(value)) for name, value in event.headers]
    lengths = [value for name, value in headers if name == b"content-length"]
    chunked = any(name == b"transfer-encoding" for name, _ in headers)
    options = _tokens(headers, b"connection")
    version = event.http_version.decode("ascii")
    raw_path, _, query = bytes(event.target).partition(b"?")
    upgrades = [value for name, value in headers if name == b"upgrade"]
    return RequestHead(
        method=event.method.decode("ascii"),
        path=raw_path.decode("ascii"),
        raw_path=raw_path,
        query=query,
        http_version=version,
        headers=headers,
        content_length=None if chunked else int(lengths[0]) if lengths else 0,
        keep_alive=b"close" not in options and (version == "1.1" or b"keep-alive" in options),
        expect_continue=b"100-continue" in _tokens(headers, b"expect"),
        upgrade=upgrades[0].lower() if upgrades and b"upgrade" in options else None,
    )


if __name__ == "__main__":
    _h1.parse_head = h11_parse_head  # type: ignore[assignment]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    sys.argv[0] = str(Path(__file__).with_name("trimcp_http_server.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
