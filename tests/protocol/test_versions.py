"""Version negotiation (MCP Lifecycle) and the feature matrix (the revisions' changelogs)."""

from __future__ import annotations

import pytest

from trimcp.protocol import (
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    Implementation,
    ServerConnection,
    features,
    is_supported,
    negotiate,
)

from ._support import SERVER_INFO, decoded, initialize_request, msg, operating_server, reply_of


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_supported_versions_are_echoed(version: str) -> None:
    assert negotiate(version) == version


@pytest.mark.parametrize("requested", ["2026-01-01", "1.0.0", "", "2023-01-01", "2025-11-25 "])
def test_unknown_versions_get_our_latest(requested: str) -> None:
    assert negotiate(requested) == LATEST_VERSION == "2025-11-25"


def test_a_restricted_server_answers_with_its_own_newest() -> None:
    assert negotiate("2025-11-25", ("2025-06-18", "2025-03-26")) == "2025-06-18"


@pytest.mark.parametrize(
    ("requested", "answered"),
    [(v, v) for v in SUPPORTED_VERSIONS] + [("2026-01-01", "2025-11-25"), ("1.0.0", "2025-11-25")],
)
def test_server_connection_negotiates(requested: str, answered: str) -> None:
    conn = ServerConnection(SERVER_INFO)
    conn.receive(initialize_request(1, requested))
    reply = decoded(conn.respond_to_initialize())
    assert reply["result"]["protocolVersion"] == answered
    assert conn.negotiated_version == answered


def test_matrix() -> None:
    assert [features(v).batching for v in SUPPORTED_VERSIONS] == [False, False, True, False]
    assert [features(v).error_id_optional for v in SUPPORTED_VERSIONS] == [
        True,
        False,
        False,
        False,
    ]
    assert [features(v).structured_content for v in SUPPORTED_VERSIONS] == [
        True,
        True,
        False,
        False,
    ]
    assert [features(v).elicitation for v in SUPPORTED_VERSIONS] == [True, True, False, False]
    assert [features(v).tasks for v in SUPPORTED_VERSIONS] == [True, False, False, False]
    assert [features(v).audio_content for v in SUPPORTED_VERSIONS] == [True, True, True, False]
    assert [features(v).completions_capability for v in SUPPORTED_VERSIONS] == [
        True,
        True,
        True,
        False,
    ]
    assert is_supported("2025-06-18")
    assert not is_supported("2026-01-01")
    with pytest.raises(KeyError):
        features("2026-01-01")


def test_older_sessions_do_not_declare_tasks_or_new_info_members() -> None:
    conn = ServerConnection(
        Implementation(name="s", version="1", title="S", website_url="https://x.example"),
        operating_server().server_capabilities,
    )
    conn.receive(initialize_request(1, "2025-03-26"))
    result = decoded(conn.respond_to_initialize())["result"]
    assert "tasks" not in result["capabilities"]
    assert result["serverInfo"] == {"name": "s", "version": "1"}
    assert not conn.server_capabilities.tasks
    conn.receive(msg(method="notifications/initialized"))
    assert reply_of(conn.receive(msg(id=5, method="tasks/list")))["error"]["code"] == -32601
