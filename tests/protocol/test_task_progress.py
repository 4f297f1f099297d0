"""Progress tokens of task-augmented requests outlive the CreateTaskResult (Tasks > Progress)."""

from __future__ import annotations

import pytest

from trimcp.errors import LocalProtocolError
from trimcp.protocol import NotificationReceived, ProgressReceived, RequestReceived

from ._support import decoded, msg, operating_server


def _task_call(conn: object, token: str = "t1") -> None:
    params = {"name": "slow", "task": {}, "_meta": {"progressToken": token}}
    [event] = conn.receive(msg(id=7, method="tools/call", params=params))  # type: ignore[attr-defined]
    assert isinstance(event, RequestReceived)


def test_kept_progress_continues_after_the_response_and_increases() -> None:
    conn = operating_server()
    _task_call(conn)
    conn.send_progress(7, 1)
    kept = conn.keep_progress(7)
    assert kept is not None
    conn.send_result(7, {"task": {"taskId": "a", "status": "working"}})
    with pytest.raises(LocalProtocolError):
        conn.send_progress(7, 2)  # the request itself is answered
    sent = decoded(conn.send_kept_progress(kept, 2, 3, "half"))
    assert sent["params"] == {"progressToken": "t1", "progress": 2, "total": 3, "message": "half"}
    with pytest.raises(LocalProtocolError, match="strictly increase"):
        conn.send_kept_progress(kept, 2)
    kept.closed = True
    with pytest.raises(LocalProtocolError, match="finished"):
        conn.send_kept_progress(kept, 5)


def test_no_token_means_nothing_to_keep() -> None:
    conn = operating_server()
    conn.receive(msg(id=1, method="tools/call", params={"name": "x", "task": {}}))
    assert conn.keep_progress(1) is None
    with pytest.raises(LocalProtocolError):
        conn.keep_progress(99)


def test_client_keeps_task_tokens_until_terminal() -> None:
    from trimcp.protocol import ClientConnection, Implementation

    client = ClientConnection(Implementation(name="c", version="1"))
    _, data = client.send_initialize()
    init = decoded(data)
    client.receive(
        msg(
            id=init["id"],
            result={
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        )
    )
    client.send_initialized()
    request_id, _ = client.send_request(
        "tools/call", {"name": "slow", "task": {}, "_meta": {"progressToken": "tok"}}
    )
    created = {"task": {"taskId": "T", "status": "working"}}
    client.receive(msg(id=request_id, result=created))
    progress = msg(method="notifications/progress", params={"progressToken": "tok", "progress": 1})
    [event] = client.receive(progress)
    assert isinstance(event, NotificationReceived)
    assert event.notification.method == "notifications/progress"
    with pytest.raises(LocalProtocolError, match="used by a pending request"):
        client.send_request("tools/call", {"name": "x", "_meta": {"progressToken": "tok"}})
    status = {"taskId": "T", "status": "completed"}
    client.receive(msg(method="notifications/tasks/status", params=status))
    assert client.receive(progress) == []  # the task is over: its token is unknown now
    assert not any(isinstance(e, ProgressReceived) for e in client.receive(progress))
