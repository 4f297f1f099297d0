"""Error codes, the exception hierarchy and the one mapping function."""

from __future__ import annotations

import pytest

from trimcp.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    LocalProtocolError,
    MethodNotFound,
    ParseError,
    ProtocolError,
    RemoteProtocolError,
    ResourceNotFound,
    TrimcpError,
    UrlElicitationRequired,
)
from trimcp.protocol import ABSENT, ErrorCode, ErrorObject, error_object_for

from ._support import assert_valid


def test_codes() -> None:
    assert {c.name: int(c) for c in ErrorCode} == {
        "PARSE_ERROR": -32700,
        "INVALID_REQUEST": -32600,
        "METHOD_NOT_FOUND": -32601,
        "INVALID_PARAMS": -32602,
        "INTERNAL_ERROR": -32603,
        "RESOURCE_NOT_FOUND": -32002,
        "URL_ELICITATION_REQUIRED": -32042,
    }


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (ParseError(), ErrorObject(code=-32700, message="Parse error")),
        (InvalidRequest("bad"), ErrorObject(code=-32600, message="bad")),
        (
            MethodNotFound("foo/bar"),
            ErrorObject(
                code=-32601, message="Method not found: foo/bar", data={"method": "foo/bar"}
            ),
        ),
        (InvalidParams("Unknown tool: x"), ErrorObject(code=-32602, message="Unknown tool: x")),
        (InternalError(), ErrorObject(code=-32603, message="Internal error")),
        (
            ResourceNotFound("file:///x"),
            ErrorObject(code=-32002, message="Resource not found", data={"uri": "file:///x"}),
        ),
        (
            JsonRpcError(-1, "User rejected sampling"),
            ErrorObject(code=-1, message="User rejected sampling"),
        ),
        (RemoteProtocolError("nope"), ErrorObject(code=-32600, message="nope")),
        (
            LocalProtocolError("our bug, details"),
            ErrorObject(code=-32603, message="Internal error"),
        ),
        (KeyError("secret/path"), ErrorObject(code=-32603, message="Internal error")),
        (InvalidParams("x", data={1, 2}), ErrorObject(code=-32602, message="x")),
    ],
)
def test_error_object_for(exc: BaseException, expected: ErrorObject) -> None:
    assert error_object_for(exc) == expected


def test_generic_errors_never_leak_their_text() -> None:
    error = error_object_for(RuntimeError("password=hunter2"))
    assert "hunter2" not in repr(error)
    assert error.data is ABSENT


def test_url_elicitation_required_matches_the_schema() -> None:
    elicitation = {
        "mode": "url",
        "message": "Connect your calendar account.",
        "elicitationId": "e-1",
        "url": "https://mcp.example.org/connect?elicitationId=e-1",
    }
    error = error_object_for(UrlElicitationRequired([elicitation]))
    assert error.code == ErrorCode.URL_ELICITATION_REQUIRED
    assert_valid(
        {"jsonrpc": "2.0", "id": 12, "error": error.to_wire()}, "URLElicitationRequiredError"
    )


def test_hierarchy() -> None:
    for cls in (ParseError, InvalidRequest, InvalidParams, InternalError):
        assert issubclass(cls, JsonRpcError)
        assert issubclass(cls, TrimcpError)
    assert issubclass(LocalProtocolError, ProtocolError)
    assert issubclass(RemoteProtocolError, ProtocolError)
    with pytest.raises(TypeError):
        ProtocolError("abstract")
    assert MethodNotFound("x").code == ErrorCode.METHOD_NOT_FOUND
    assert UrlElicitationRequired([]).code == ErrorCode.URL_ELICITATION_REQUIRED
