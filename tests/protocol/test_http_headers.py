"""The 2026-07-28 Streamable HTTP request headers: encoding, tool annotations, validation.

Cases follow the spec (basic/transports/streamable-http.mdx, "Request Metadata") and the
official conformance scenarios: server ``http-header-validation`` and
``http-custom-header-server-validation``, client ``http-custom-headers`` and
``http-invalid-tool-headers`` (SEP-2243).
"""

from __future__ import annotations

import base64
import re
import string
from decimal import Decimal, InvalidOperation

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.errors import HeaderMismatch
from trimcp.protocol import (
    check_request_headers,
    decode_header_value,
    encode_header_value,
    header_annotation_problems,
    header_parameters,
    request_headers,
)
from trimcp.protocol._http_headers import MCP_METHOD, MCP_NAME, PARAM_PREFIX

Path = tuple[str, ...]


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def _lower(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


# --- value encoding (Value Encoding table) -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        # the rest of the client scenario's test_custom_headers arguments
        ("", ""),
        ("test-method", "test-method"),
        (" us-west1", _b64(" us-west1")),
        ("us-west1 ", _b64("us-west1 ")),
        ("us west 1", "us west 1"),
        ("line1\r\nline2", _b64("line1\r\nline2")),
        ("\tindented", _b64("\tindented")),
        ("a\tb", _b64("a\tb")),
        ("=?base64?=", _b64("=?base64?=")),  # prefix and suffix overlap: still encoded
        ("=?base64?abc", "=?base64?abc"),  # only the prefix: plain
        ("abc?=", "abc?="),
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_encode_header_value(value: str | int | bool, header: str) -> None:
    assert encode_header_value(value) == header


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("us-west1", "us-west1"),
        ("  us-west1\t ", "us-west1"),  # RFC 9110 §5.5: OWS is not part of the value
        ("us west 1", "us west 1"),
        ("", ""),
        ("   ", ""),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("  =?base64?SGVsbG8=?=  ", "Hello"),
        ("=?base64??=", ""),
        ("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"),
        ("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?="),
        # conformance: no prefix, or no suffix, means a literal value
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("SGVsbG8=?=", "SGVsbG8=?="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # the markers are case-sensitive
        ("=?base64?=", "=?base64?="),  # too short to hold both markers
    ],
)
def test_decode_header_value(raw: str, value: str) -> None:
    assert decode_header_value(raw) == value


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        ("=?base64?SGVsbG8?=", "invalid"),  # conformance: bad padding
        ("=?base64?SGVs!!!bG8=?=", "invalid"),  # conformance: non-alphabet characters
        ("=?base64?SGVs bG8=?=", "invalid"),
        ("=?base64?SGVsbG8=\n?=", "control character"),
        ("=?base64?SGVsbG9=?=", "not canonical"),  # non-zero pad bits
        ("=?base64?_-8=?=", "invalid"),  # the URL-safe alphabet is not the one
        ("=?base64?/w==?=", "not UTF-8"),
        ("line1\nline2", "control character (U+000A)"),
        ("a\tb", "control character (U+0009)"),
        ("a\x00b", "control character (U+0000)"),
        ("a\x7fb", "control character (U+007F)"),
        ("Région", "non-ASCII character (U+00E9)"),
    ],
)
def test_decode_header_value_refuses(raw: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=re.escape(complaint)) as info:
        decode_header_value(raw)
    assert "base64" in str(info.value)  # every message says how to send the value


# --- tool definitions (http-custom-headers, http-invalid-tool-headers) -----------------------

CUSTOM_HEADERS_TOOL: dict[str, object] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"},
        "empty_val": {"type": "string", "x-mcp-header": "EmptyVal"},
        "method_val": {"type": "string", "x-mcp-header": "Method"},
        "float_val": {"type": "number"},
        "non_ascii_val": {"type": "string", "x-mcp-header": "NonAscii"},
        "whitespace_val": {"type": "string", "x-mcp-header": "Whitespace"},
        "leading_space_val": {"type": "string", "x-mcp-header": "LeadingSpace"},
        "trailing_space_val": {"type": "string", "x-mcp-header": "TrailingSpace"},
        "internal_space_val": {"type": "string", "x-mcp-header": "InternalSpace"},
        "control_char_val": {"type": "string", "x-mcp-header": "ControlChar"},
        "crlf_val": {"type": "string", "x-mcp-header": "CrLf"},
        "tab_val": {"type": "string", "x-mcp-header": "Tab"},
        "query": {"type": "string"},
    },
    "required": ["region", "priority", "query"],
}
CUSTOM_HEADERS_ARGUMENTS: dict[str, object] = {
    "region": "us-west1",
    "priority": 42,
    "verbose": False,
    "debug": True,
    "empty_val": "",
    "method_val": "test-method",
    "float_val": 3.14159,
    "non_ascii_val": "Hello, 世界",
    "whitespace_val": " padded ",
    "leading_space_val": " us-west1",
    "trailing_space_val": "us-west1 ",
    "internal_space_val": "us west 1",
    "control_char_val": "line1\nline2",
    "crlf_val": "line1\r\nline2",
    "tab_val": "\tindented",
    "query": "SELECT * FROM users",
}


def test_client_mirrors_the_custom_headers_scenario() -> None:
    params = header_parameters(CUSTOM_HEADERS_TOOL)
    assert params[("method_val",)] == "Method"
    assert ("float_val",) not in params
    assert ("query",) not in params
    params_in = _call("test_custom_headers", **CUSTOM_HEADERS_ARGUMENTS)
    headers = request_headers("tools/call", params_in, params)
    assert headers == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "test_custom_headers",
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Debug": "true",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-Method": "test-method",  # not Mcp-Method
        "Mcp-Param-NonAscii": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        "Mcp-Param-Whitespace": "=?base64?IHBhZGRlZCA=?=",
        "Mcp-Param-LeadingSpace": _b64(" us-west1"),
        "Mcp-Param-TrailingSpace": _b64("us-west1 "),
        "Mcp-Param-InternalSpace": "us west 1",
        "Mcp-Param-ControlChar": "=?base64?bGluZTEKbGluZTI=?=",
        "Mcp-Param-CrLf": _b64("line1\r\nline2"),
        "Mcp-Param-Tab": _b64("\tindented"),
    }
    check_request_headers(_lower(headers), "tools/call", params_in, params)


@pytest.mark.parametrize("arguments", [{"verbose": None}, {}], ids=["null", "absent"])
def test_client_omits_a_null_or_absent_parameter(arguments: dict[str, object]) -> None:
    params = header_parameters(CUSTOM_HEADERS_TOOL)
    body = _call("test_custom_headers_null", region="us-east1", priority=1, **arguments)
    headers = request_headers("tools/call", body, params)
    assert "Mcp-Param-Verbose" not in headers
    assert headers["Mcp-Param-Region"] == "us-east1"
    assert headers["Mcp-Param-Priority"] == "1"
    # and the server does not expect it (sep-2243-server-not-expect-null)
    check_request_headers(_lower(headers), "tools/call", body, params)


def _tool(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties}


def test_valid_tool_has_no_problems() -> None:
    schema = _tool(region={"type": "string", "x-mcp-header": "Region"})
    assert header_annotation_problems(schema) == []
    assert header_parameters(schema) == {("region",): "Region"}


INVALID_TOOLS = {
    # the ten tools of the http-invalid-tool-headers scenario
    "invalid_empty_header": (_tool(value={"type": "string", "x-mcp-header": ""}), "empty"),
    "invalid_object_header": (_tool(data={"type": "object", "x-mcp-header": "Data"}), "type"),
    "invalid_array_header": (
        _tool(items={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
        "type 'array'",
    ),
    "invalid_null_header": (_tool(nil={"type": "null", "x-mcp-header": "Nil"}), "type 'null'"),
    "invalid_duplicate_same_case": (
        _tool(
            field1={"type": "string", "x-mcp-header": "Region"},
            field2={"type": "string", "x-mcp-header": "Region"},
        ),
        "repeats",
    ),
    "invalid_duplicate_diff_case": (
        _tool(
            field1={"type": "string", "x-mcp-header": "MyField"},
            field2={"type": "string", "x-mcp-header": "myfield"},
        ),
        "repeats the header of inputSchema/properties/field1",
    ),
    "invalid_space_in_name": (
        _tool(value={"type": "string", "x-mcp-header": "My Region"}),
        "characters",
    ),
    "invalid_colon_in_name": (
        _tool(value={"type": "string", "x-mcp-header": "Region:Primary"}),
        "':'",
    ),
    "invalid_non_ascii_name": (
        _tool(value={"type": "string", "x-mcp-header": "Région"}),
        "'é'",
    ),
    "invalid_control_char_name": (
        _tool(value={"type": "string", "x-mcp-header": "Region\t1"}),
        "'\\t'",
    ),
    # the spec's other constraints
    "number_type": (_tool(n={"type": "number", "x-mcp-header": "N"}), "type 'number'"),
    "no_type": (_tool(n={"enum": ["a", "b"], "x-mcp-header": "N"}), "declares no type"),
    "mixed_type": (_tool(n={"type": ["string", "object"], "x-mcp-header": "N"}), "type"),
    "only_null_in_list": (_tool(n={"type": ["null"], "x-mcp-header": "N"}), "type"),
    "non_string_name": (_tool(n={"type": "string", "x-mcp-header": 5}), "not a string"),
    "null_name": (_tool(n={"type": "string", "x-mcp-header": None}), "not a string"),
    "crlf_name": (_tool(n={"type": "string", "x-mcp-header": "A\r\nB"}), "characters"),
    "on_root": ({"type": "string", "x-mcp-header": "Root"}, "schema root"),
    "under_items": (
        _tool(list={"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}),
        "inputSchema/properties/list/items: x-mcp-header 'Item' is not reachable",
    ),
    "under_prefix_items": (
        _tool(t={"type": "array", "prefixItems": [{"type": "string", "x-mcp-header": "P"}]}),
        "prefixItems/0",
    ),
    "under_one_of": (
        _tool(v={"oneOf": [{"type": "string", "x-mcp-header": "V"}, {"type": "integer"}]}),
        "oneOf/0",
    ),
    "under_all_of_at_root": (
        {"type": "object", "allOf": [_tool(v={"type": "string", "x-mcp-header": "V"})]},
        "allOf/0/properties/v",
    ),
    "under_not": (_tool(v={"not": {"type": "string", "x-mcp-header": "V"}}), "not"),
    "under_if": (
        {"type": "object", "if": _tool(v={"type": "string", "x-mcp-header": "V"})},
        "if/properties/v",
    ),
    "in_defs_behind_ref": (
        {
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/v"}},
            "$defs": {"v": {"type": "string", "x-mcp-header": "V"}},
        },
        "$defs/v",
    ),
    "under_additional_properties": (
        {"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "A"}},
        "additionalProperties",
    ),
    "under_pattern_properties": (
        {"type": "object", "patternProperties": {"^a/": {"type": "string", "x-mcp-header": "A"}}},
        "patternProperties/^a~1",
    ),
    "duplicate_nested": (
        _tool(
            a={"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}},
            r={"type": "string", "x-mcp-header": "r"},
        ),
        "repeats",
    ),
}


@pytest.mark.parametrize(("schema", "complaint"), INVALID_TOOLS.values(), ids=INVALID_TOOLS)
def test_invalid_tool_definitions(schema: dict[str, object], complaint: str) -> None:
    problems = header_annotation_problems(schema)
    assert problems
    assert any(complaint in problem for problem in problems), problems
    with pytest.raises(ValueError, match="invalid x-mcp-header annotations"):
        header_parameters(schema)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (_tool(r={"type": ["string", "null"], "x-mcp-header": "R"}), {("r",): "R"}),
        (_tool(r={"type": ["integer", "boolean"], "x-mcp-header": "R"}), {("r",): "R"}),
        (
            _tool(
                target={
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "zone": {
                            "type": "object",
                            "properties": {"id": {"type": "integer", "x-mcp-header": "Zone"}},
                        },
                    },
                }
            ),
            {("target", "region"): "Region", ("target", "zone", "id"): "Zone"},
        ),
        # a property *named* x-mcp-header, and the key inside data keywords, are not annotations
        (_tool(**{"x-mcp-header": {"type": "string"}}), {}),
        (
            _tool(
                v={
                    "type": "object",
                    "default": {"x-mcp-header": "D"},
                    "const": {"x-mcp-header": "C"},
                    "enum": [{"x-mcp-header": "E"}],
                    "examples": [{"x-mcp-header": "X"}],
                }
            ),
            {},
        ),
        (_tool(token={"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09azAZ"}), None),
        ({"type": "object"}, {}),
        ({"type": "object", "properties": True}, {}),
        ({}, {}),
    ],
)
def test_valid_tool_definitions(
    schema: dict[str, object], expected: dict[Path, str] | None
) -> None:
    assert header_annotation_problems(schema) == []
    found = header_parameters(schema)
    if expected is not None:
        assert found == expected


def test_nested_parameter_is_mirrored_from_its_path() -> None:
    schema = _tool(
        target={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "R"}}}
    )
    params = header_parameters(schema)
    body = _call("t", target={"region": "eu"})
    assert request_headers("tools/call", body, params)["Mcp-Param-R"] == "eu"
    check_request_headers(
        {"mcp-method": "tools/call", "mcp-name": "t", "mcp-param-r": "eu"},
        "tools/call",
        body,
        params,
    )
    # no value at the path (the parent is missing or not an object): no header
    no_value: list[dict[str, object]] = [{}, {"target": None}, {"target": "eu"}, {"target": {}}]
    for arguments in no_value:
        headers = request_headers("tools/call", _call("t", **arguments), params)
        assert "Mcp-Param-R" not in headers


def test_a_schema_that_contains_itself_is_refused_not_walked_forever() -> None:
    schema: dict[str, object] = {"type": "object"}
    schema["properties"] = {"loop": schema}
    assert any("contains itself" in p for p in header_annotation_problems(schema))


def test_a_too_deep_schema_is_refused() -> None:
    schema: dict[str, object] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(300):
        schema = _tool(inner=schema)
    assert any("deeper than" in p for p in header_annotation_problems(schema))


def test_a_shared_subschema_is_walked_at_each_place() -> None:
    region = {"type": "string", "x-mcp-header": "Region"}
    problems = header_annotation_problems(_tool(a=region, b=region))
    assert any("repeats" in p for p in problems)


# --- client: the standard headers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("tools/list", None, {"Mcp-Method": "tools/list"}),
        ("tools/list", {"cursor": "x"}, {"Mcp-Method": "tools/list"}),
        (
            "tools/call",
            _call("get_weather"),
            {"Mcp-Method": "tools/call", "Mcp-Name": "get_weather"},
        ),
        ("prompts/get", {"name": "greet"}, {"Mcp-Method": "prompts/get", "Mcp-Name": "greet"}),
        (
            "resources/read",
            {"uri": "file:///projects/myapp/config.json"},
            {"Mcp-Method": "resources/read", "Mcp-Name": "file:///projects/myapp/config.json"},
        ),
        (
            "resources/read",
            {"uri": "file:///é"},
            {"Mcp-Method": "resources/read", "Mcp-Name": _b64("file:///é")},
        ),
        # a body without the name gets no Mcp-Name: the server reports the body's problem
        ("tools/call", {"arguments": {}}, {"Mcp-Method": "tools/call"}),
        ("tools/call", {"name": 5}, {"Mcp-Method": "tools/call"}),
        ("tools/call", None, {"Mcp-Method": "tools/call"}),
    ],
)
def test_request_headers(
    method: str, params: dict[str, object] | None, expected: dict[str, str]
) -> None:
    assert request_headers(method, params) == expected
    check_request_headers(expected, method, params)


def test_header_params_apply_to_tools_call_only() -> None:
    headers = request_headers("prompts/get", {"name": "p", "arguments": {"r": "x"}}, {("r",): "R"})
    assert headers == {"Mcp-Method": "prompts/get", "Mcp-Name": "p"}


@pytest.mark.parametrize(
    ("value", "header"), [(42.0, "42"), (-3.0, "-3"), (1e20, "100000000000000000000")]
)
def test_an_integral_float_is_mirrored_as_an_integer(value: float, header: str) -> None:
    body = _call("t", n=value)
    headers = request_headers("tools/call", body, {("n",): "N"})
    assert headers["Mcp-Param-N"] == header
    check_request_headers(headers, "tools/call", body, {("n",): "N"})


@pytest.mark.parametrize("value", [3.5, float("inf"), {"a": 1}, ["x"]])
def test_a_value_no_header_can_carry_is_not_mirrored(value: object) -> None:
    body = _call("t", n=value)
    headers = request_headers("tools/call", body, {("n",): "N"})
    assert "Mcp-Param-N" not in headers
    check_request_headers(headers, "tools/call", body, {("n",): "N"})
    with pytest.raises(
        HeaderMismatch,
        match=r"Mcp-Param-N header is sent but arguments\.n is .*, which no header can carry",
    ):
        check_request_headers({**headers, "Mcp-Param-N": "3.5"}, "tools/call", body, {("n",): "N"})


@pytest.mark.parametrize("method", ["tools/call\n", "tøols/call", " ping"])
def test_a_method_no_header_can_carry_is_refused(method: str) -> None:
    with pytest.raises(ValueError, match="cannot be sent in the Mcp-Method header"):
        request_headers(method, None)


# --- server: http-header-validation ----------------------------------------------------------

TOOL_CALL = _call("get_weather")


def _mismatch(
    headers: dict[str, str],
    method: str,
    params: dict[str, object] | None,
    header_params: dict[Path, str] | None = None,
) -> HeaderMismatch:
    with pytest.raises(HeaderMismatch) as info:
        check_request_headers(headers, method, params, header_params)
    error = info.value
    assert error.code == -32020 == HeaderMismatch.CODE
    assert error.data == {"header": error.header}
    return error


def test_rejects_mismatched_method_header() -> None:
    error = _mismatch({"mcp-method": "prompts/list"}, "tools/list", None)
    assert error.header == "Mcp-Method"
    assert "'prompts/list'" in error.message
    assert "'tools/list'" in error.message


def test_rejects_missing_method_header() -> None:
    error = _mismatch({}, "tools/list", None)
    assert error.header == "Mcp-Method"
    assert "missing" in error.message


def test_rejects_method_value_in_another_case() -> None:
    error = _mismatch({"mcp-method": "TOOLS/LIST"}, "tools/list", None)
    assert "case-sensitive" in error.message


@pytest.mark.parametrize("name", ["mcp-method", "MCP-METHOD", "Mcp-Method", "mCp-MeThOd"])
def test_accepts_header_names_in_any_case(name: str) -> None:
    check_request_headers({name: "tools/list"}, "tools/list", None)


def test_accepts_ows_around_method() -> None:
    check_request_headers({MCP_METHOD: " \ttools/list  "}, "tools/list", None)


def test_method_is_not_base64_decoded() -> None:
    _mismatch({MCP_METHOD: _b64("tools/list")}, "tools/list", None)


@pytest.mark.parametrize("raw", ["tools/list\x00", "tools\tlist", "tools/lïst"])
def test_rejects_invalid_characters_in_method(raw: str) -> None:
    error = _mismatch({MCP_METHOD: raw}, "tools/list", None)
    assert error.message.startswith("Mcp-Method header is invalid")


def test_rejects_mismatched_name_header() -> None:
    error = _mismatch(
        {MCP_METHOD: "tools/call", MCP_NAME: "wrong_tool_name"}, "tools/call", TOOL_CALL
    )
    assert error.header == "Mcp-Name"
    assert error.message.startswith(
        "Mcp-Name header is 'wrong_tool_name' but params.name is 'get_weather'; "
        "send the tool's name in Mcp-Name"
    )


def test_accepts_whitespace_around_name() -> None:
    check_request_headers(
        {MCP_METHOD: "tools/call", MCP_NAME: "  get_weather  "}, "tools/call", TOOL_CALL
    )


def test_rejects_missing_name_header() -> None:
    error = _mismatch({MCP_METHOD: "tools/call"}, "tools/call", TOOL_CALL)
    assert error.header == "Mcp-Name"
    assert "missing" in error.message
    assert "'get_weather'" in error.message


@pytest.mark.parametrize(
    ("method", "params", "member"),
    [("prompts/get", {"name": "greet"}, "name"), ("resources/read", {"uri": "file:///a"}, "uri")],
)
def test_name_header_on_prompts_and_resources(
    method: str, params: dict[str, object], member: str
) -> None:
    value = params[member]
    assert isinstance(value, str)
    check_request_headers({MCP_METHOD: method, MCP_NAME: value}, method, params)
    check_request_headers({MCP_METHOD: method, MCP_NAME: _b64(value)}, method, params)
    assert (
        f"params.{member}"
        in _mismatch({MCP_METHOD: method, MCP_NAME: "other"}, method, params).message
    )
    _mismatch({MCP_METHOD: method}, method, params)


def test_name_header_is_base64_decoded() -> None:
    params = _call("天気")
    check_request_headers({MCP_METHOD: "tools/call", MCP_NAME: _b64("天気")}, "tools/call", params)
    _mismatch({MCP_METHOD: "tools/call", MCP_NAME: _b64("天")}, "tools/call", params)


def test_name_header_without_a_name_in_the_body() -> None:
    # Both absent: the body's own validation reports the missing name.
    check_request_headers({MCP_METHOD: "tools/call"}, "tools/call", {"arguments": {}})
    check_request_headers({MCP_METHOD: "tools/call"}, "tools/call", None)
    # A header naming something the body does not: refused.
    error = _mismatch({MCP_METHOD: "tools/call", MCP_NAME: "x"}, "tools/call", {"name": 3})
    assert "no string params.name" in error.message


def test_name_header_is_not_checked_where_not_required() -> None:
    check_request_headers({MCP_METHOD: "tools/list", MCP_NAME: "anything"}, "tools/list", None)


def test_a_header_sent_twice_with_different_values_is_refused() -> None:
    error = _mismatch({"Mcp-Method": "tools/list", "mcp-method": "ping"}, "tools/list", None)
    assert "twice" in error.message
    check_request_headers({"Mcp-Method": "ping", "mcp-method": "ping"}, "ping", None)


# --- server: http-custom-header-server-validation --------------------------------------------

REGION: dict[Path, str] = {("region",): "Region"}
_NO_BODY = object()  # the argument is absent from the body


def _region_call(header: str | None, body: object = "Hello") -> None:
    headers = {MCP_METHOD: "tools/call", MCP_NAME: "t"}
    if header is not None:
        headers[PARAM_PREFIX + "region"] = header
    arguments = {} if body is _NO_BODY else {"region": body}
    check_request_headers(headers, "tools/call", {"name": "t", "arguments": arguments}, REGION)


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("=?base64?SGVsbG8=?=", "Hello"),  # ServerAcceptsValidBase64
        ("SGVsbG8=", "SGVsbG8="),  # ServerLiteralMissingBase64Prefix
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # ServerLiteralMissingBase64Suffix
        ("Hello", "Hello"),
        ("  Hello ", "Hello"),
        ("", ""),
        (None, None),  # null: not expected
        (None, _NO_BODY),  # absent: not expected
    ],
)
def test_custom_header_accepted(header: str | None, body: object) -> None:
    _region_call(header, body)


@pytest.mark.parametrize(
    ("header", "body", "complaint"),
    [
        ("=?base64?SGVsbG8?=", "Hello", "invalid"),  # ServerRejectsInvalidBase64Padding
        ("=?base64?SGVs!!!bG8=?=", "Hello", "invalid"),  # ServerRejectsInvalidBase64Chars
        (None, "test-value", "missing"),  # ServerRejectsMissingCustomHeader
        ("hello", "Hello", "but arguments.region is 'Hello'"),
        ("Hello", None, "arguments.region is null"),
        ("Hello", _NO_BODY, "arguments.region is absent"),
        ("Héllo", "Héllo", "non-ASCII"),
        ("a\tb", "a\tb", "control character"),
        ("=?base64?/w==?=", "x", "not UTF-8"),
    ],
)
def test_custom_header_rejected(header: str | None, body: object, complaint: str) -> None:
    with pytest.raises(HeaderMismatch, match=re.escape(complaint)) as info:
        _region_call(header, body)
    assert info.value.header == "Mcp-Param-Region"
    assert info.value.code == -32020


def test_custom_header_names_are_case_insensitive() -> None:
    body = _call("t", region="eu")
    check_request_headers(
        {"MCP-METHOD": "tools/call", "mcp-name": "t", "MCP-PARAM-REGION": "eu"},
        "tools/call",
        body,
        REGION,
    )
    check_request_headers(
        {"Mcp-Method": "tools/call", "Mcp-Name": "t", "mcp-param-region": "eu"},
        "tools/call",
        body,
        {("region",): "rEgIoN"},
    )


def test_unrecognized_param_headers_are_left_alone() -> None:
    body = _call("t", region="eu")
    headers = {
        MCP_METHOD: "tools/call",
        MCP_NAME: "t",
        "mcp-param-region": "eu",
        "mcp-param-other": "\x00é",
    }
    check_request_headers(headers, "tools/call", body, REGION)
    check_request_headers(headers, "tools/call", body)  # no annotations known: nothing to check


@pytest.mark.parametrize("header", ["42", "42.0", " 42 ", "4.2e1", "420E-1", "=?base64?NDI=?="])
def test_integers_compare_numerically(header: str) -> None:
    body = _call("t", n=42)
    check_request_headers(
        {MCP_METHOD: "tools/call", MCP_NAME: "t", "mcp-param-n": header},
        "tools/call",
        body,
        {("n",): "N"},
    )


@pytest.mark.parametrize(
    "header",
    [
        "43",
        "42.5",
        "forty-two",
        "42abc",
        "0x2a",
        "+42",
        "4_2",
        "Infinity",
        "1e999999999999999999999",
        "",
        "true",
    ],
)
def test_integers_that_differ_are_refused(header: str) -> None:
    body = _call("t", n=42)
    error = _mismatch(
        {MCP_METHOD: "tools/call", MCP_NAME: "t", "mcp-param-n": header},
        "tools/call",
        body,
        header_params={("n",): "N"},
    )
    assert "arguments.n is 42" in error.message


@pytest.mark.parametrize(
    ("value", "good", "bad"),
    [(True, "true", ["True", "1", "false", "TRUE"]), (False, "false", ["False", "0", "true", ""])],
)
def test_booleans_compare_as_true_false(value: bool, good: str, bad: list[str]) -> None:
    body = _call("t", b=value)
    headers = {MCP_METHOD: "tools/call", MCP_NAME: "t"}
    check_request_headers({**headers, "mcp-param-b": good}, "tools/call", body, {("b",): "B"})
    for header in bad:
        _mismatch(
            {**headers, "mcp-param-b": header}, "tools/call", body, header_params={("b",): "B"}
        )


def test_a_string_argument_is_compared_as_a_string() -> None:
    body = _call("t", s="42")
    _mismatch(
        {MCP_METHOD: "tools/call", MCP_NAME: "t", "mcp-param-s": "42.0"},
        "tools/call",
        body,
        header_params={("s",): "S"},
    )


# --- properties -------------------------------------------------------------------------------

TCHARS = string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~"
header_names = st.text(alphabet=TCHARS, min_size=1, max_size=10)
NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


@given(value=st.text() | st.integers() | st.booleans())
def test_encode_then_decode_round_trips(value: str | int | bool) -> None:
    header = encode_header_value(value)
    assert header.isascii()
    assert header.isprintable()
    assert header == header.strip()
    expected = encode_header_value(value) if not isinstance(value, str) else value
    assert decode_header_value(header) == expected
    assert decode_header_value(f" \t{header}\t ") == expected


@given(raw=st.text())
def test_decode_raises_only_value_error(raw: str) -> None:
    error: ValueError | None = None
    try:
        decode_header_value(raw)
    except ValueError as exc:
        error = exc
    assert error is None or str(error)


ABSENT = object()
primitive_values = {
    "string": st.text(max_size=12),
    "integer": st.integers(-(2**63), 2**63),
    "boolean": st.booleans(),
}
junk_values = (
    st.none()
    | st.just(ABSENT)
    | st.floats()
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
    | st.lists(st.integers(), max_size=2)
)


def _no_prefixes(paths: list[Path]) -> bool:
    return not any(a != b and b[: len(a)] == a for a in paths for b in paths)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[dict[str, object], dict[Path, str], dict[str, object]]:
    """A tool schema with annotated parameters, its header_params, and arguments for it."""
    count = draw(st.integers(0, 4))
    names = draw(st.lists(header_names, min_size=count, max_size=count, unique_by=str.lower))
    paths = draw(
        st.lists(
            st.lists(st.text(max_size=5), min_size=1, max_size=3).map(tuple),
            min_size=count,
            max_size=count,
            unique=True,
        ).filter(_no_prefixes)
    )
    schema: dict[str, object] = {"type": "object", "properties": {}}
    arguments: dict[str, object] = {}
    for path, name in zip(paths, names, strict=True):
        kind = draw(st.sampled_from(sorted(primitive_values)))
        node = schema
        for key in path[:-1]:
            props = node["properties"]
            assert isinstance(props, dict)
            node = props.setdefault(key, {"type": "object", "properties": {}})
        props = node["properties"]
        assert isinstance(props, dict)
        props[path[-1]] = {"type": kind, "x-mcp-header": name}
        # mostly values a header carries; sometimes null, absent or unmirrorable
        value = draw(primitive_values[kind] if draw(st.integers(0, 3)) else junk_values)
        if value is ABSENT:
            continue
        target = arguments
        for key in path[:-1]:
            inner = target.setdefault(key, {})
            assert isinstance(inner, dict)
            target = inner
        target[path[-1]] = value
    return schema, dict(zip(paths, names, strict=True)), arguments


methods = st.sampled_from(
    ["tools/call", "tools/call", "prompts/get", "resources/read", "tools/list", "ping"]
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, dict[str, object] | None, dict[Path, str]]:
    method = draw(methods)
    schema, header_params, arguments = draw(tool_calls())
    assert header_annotation_problems(schema) == []
    assert header_parameters(schema) == header_params
    name = draw(st.text(max_size=12))
    params: dict[str, object] | None = {"name": name, "uri": name, "arguments": arguments}
    if method in ("tools/list", "ping") and draw(st.booleans()):
        params = None
    return method, params, header_params


@settings(max_examples=300)
@given(request=requests(), lower=st.booleans(), ows=st.sampled_from(["", " ", "\t ", "  "]))
def test_a_requests_own_headers_pass(
    request: tuple[str, dict[str, object] | None, dict[Path, str]], lower: bool, ows: str
) -> None:
    method, params, header_params = request
    headers = request_headers(method, params, header_params)
    if lower:
        headers = _lower(headers)
    headers = {name: f"{ows}{value}{ows}" for name, value in headers.items()}
    check_request_headers(headers, method, params, header_params)


def _body_value(
    method: str, params: dict[str, object] | None, header_params: dict[Path, str], header: str
) -> object:
    """What the body says a header must carry: the method, the name, or the argument."""
    if header == "Mcp-Method":
        return method
    assert params is not None
    if header == "Mcp-Name":
        return params["name"]
    for path, name in header_params.items():
        if header == f"Mcp-Param-{name}":
            value: object = params["arguments"]
            for key in path:
                assert isinstance(value, dict)
                value = value[key]
            return value
    raise AssertionError(header)


def _same(decoded: str, body: object) -> bool:
    """The spec's comparison, written out again: exact, true/false, or numeric."""
    if isinstance(body, bool):
        return decoded == ("true" if body else "false")
    if isinstance(body, float):
        body = int(body)
    if isinstance(body, int):
        try:
            return bool(NUMBER.fullmatch(decoded)) and Decimal(decoded) == body
        except InvalidOperation:
            return False
    return decoded == body


@settings(max_examples=300)
@given(request=requests(), data=st.data())
def test_a_changed_header_is_refused(
    request: tuple[str, dict[str, object] | None, dict[Path, str]], data: st.DataObject
) -> None:
    method, params, header_params = request
    headers = request_headers(method, params, header_params)
    target = data.draw(st.sampled_from(sorted(headers)))
    body = _body_value(method, params, header_params, target)
    raw = data.draw(
        st.text(max_size=12)
        | st.text(max_size=12).map(encode_header_value)
        | st.integers().map(encode_header_value)
        | st.sampled_from(["true", "false", "42.0", "=?base64?", "=?base64?!?="])
    )
    try:
        decoded = raw.strip(" \t") if target == "Mcp-Method" else decode_header_value(raw)
        unchanged = _same(decoded, body) and (
            target != "Mcp-Method" or (decoded.isascii() and decoded.isprintable())
        )
    except ValueError:
        unchanged = False
    changed = {**headers, target: raw}
    if unchanged:
        check_request_headers(changed, method, params, header_params)
    else:
        with pytest.raises(HeaderMismatch) as info:
            check_request_headers(changed, method, params, header_params)
        assert info.value.header == target


@settings(max_examples=200)
@given(request=requests(), data=st.data())
def test_a_dropped_header_is_refused(
    request: tuple[str, dict[str, object] | None, dict[Path, str]], data: st.DataObject
) -> None:
    method, params, header_params = request
    headers = request_headers(method, params, header_params)
    target = data.draw(st.sampled_from(sorted(headers)))
    del headers[target]
    with pytest.raises(HeaderMismatch, match="missing") as info:
        check_request_headers(headers, method, params, header_params)
    assert info.value.header == target


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
header_keys = st.sampled_from(
    [
        "Mcp-Method",
        "mcp-method",
        "MCP-NAME",
        "mcp-name",
        "Mcp-Param-Region",
        "mcp-param-region",
        "mcp-param-",
        "x",
    ]
) | st.text(max_size=12)


@settings(max_examples=300)
@given(
    headers=st.dictionaries(
        header_keys,
        st.text(max_size=16) | st.sampled_from(["tools/call", "=?base64?SGVsbG8=?=", " 42 "]),
    ),
    method=methods | st.text(max_size=10),
    params=st.none()
    | st.dictionaries(
        st.sampled_from(["name", "uri", "arguments", "x"]),
        json_values | st.dictionaries(st.sampled_from(["region", "a"]), json_values),
    ),
    header_params=st.none()
    | st.dictionaries(
        st.lists(st.sampled_from(["region", "a", ""]), max_size=3).map(tuple),
        st.sampled_from(["Region", "region", "A", ""]) | st.text(max_size=5),
        max_size=3,
    ),
)
def test_junk_headers_raise_only_header_mismatch(
    headers: dict[str, str],
    method: str,
    params: dict[str, object] | None,
    header_params: dict[Path, str] | None,
) -> None:
    error: HeaderMismatch | None = None
    try:
        check_request_headers(headers, method, params, header_params)
    except HeaderMismatch as exc:
        error = exc
    if error is not None:
        assert error.header is not None
        assert error.message.startswith(error.header)


schema_keys = st.sampled_from(
    [
        "type",
        "properties",
        "x-mcp-header",
        "items",
        "prefixItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$defs",
        "definitions",
        "$ref",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "dependentSchemas",
        "enum",
        "const",
        "default",
    ]
) | st.text(max_size=4)
schema_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(
        ["string", "integer", "boolean", "object", "null", "Region", "region", "", "a b"]
    )
)
json_schemas = st.recursive(
    schema_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(schema_keys, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=500)
@given(schema=st.dictionaries(schema_keys, json_schemas, max_size=5))
def test_annotation_problems_never_raise(schema: dict[str, object]) -> None:
    problems = header_annotation_problems(schema)
    assert all(problems)
    if problems:
        with pytest.raises(ValueError, match="invalid x-mcp-header annotations"):
            header_parameters(schema)
    else:
        found = header_parameters(schema)
        assert all(re.fullmatch(f"[{re.escape(TCHARS)}]+", name) for name in found.values())
        assert len({name.lower() for name in found.values()}) == len(found)
