"""Per-request ``_meta`` (MCP 2026-07-28) and the era router: unit tests and properties.

``read_request_meta`` follows Basic > ``_meta`` (-32602 for a missing or malformed required
member, -32022 with ``supported``/``requested`` for a version not served per request);
``choose_era`` follows Basic > Versioning's compatibility matrix as the official SDKs route
it: the header first, then the body.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import InvalidParams, UnsupportedProtocolVersion
from trimcp.protocol import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN_VERSION,
    SUPPORTED_VERSIONS,
    ClientCapabilities,
    Era,
    Implementation,
    RequestMeta,
    choose_era,
    is_handshake_version,
    offered_versions,
    read_request_meta,
)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def meta(**members: object) -> dict[str, Any]:
    """``params`` whose ``_meta`` has the required members, changed by ``members``.

    Keys are the short names (``protocolVersion``, ...); a value of ``...`` removes one.
    """
    wire: dict[str, object] = {
        META_PROTOCOL_VERSION: MODERN_VERSION,
        META_CLIENT_CAPABILITIES: {},
    }
    for short, value in members.items():
        unprefixed = short in ("traceparent", "tracestate", "baggage", "progressToken")
        key = short if unprefixed else f"io.modelcontextprotocol/{short}"
        if value is ...:
            wire.pop(key, None)
        else:
            wire[key] = value
    return {"_meta": wire}


# --- read_request_meta ---------------------------------------------------------------------


def test_the_required_members_read_into_a_request_meta() -> None:
    read = read_request_meta(meta())
    assert read == RequestMeta(
        protocol_version=MODERN_VERSION,
        client_capabilities=ClientCapabilities(),
        client_capabilities_wire={},
    )
    assert read.log_level is None
    assert read.client_info is None
    assert read.trace == {}


def test_everything_a_request_may_say_is_read() -> None:
    capabilities = {"elicitation": {"form": {}}, "sampling": {"tools": {}}, "roots": {}}
    params = meta(
        clientCapabilities=capabilities,
        clientInfo={"name": "probe", "version": "1.2", "title": "Probe"},
        logLevel="warning",
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        tracestate="vendor=1",
        baggage=7,  # not a string: left out
    )
    read = read_request_meta(params)
    assert read.client_capabilities.elicitation_form
    assert read.client_capabilities.sampling_tools
    assert read.client_capabilities.roots
    assert not read.client_capabilities.elicitation_url
    assert read.client_capabilities_wire == capabilities  # as sent, for relaying
    assert read.client_info == Implementation(name="probe", version="1.2", title="Probe")
    assert read.log_level == "warning"
    assert read.trace == {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=1",
    }


@pytest.mark.parametrize("level", LEVELS)
def test_every_rfc5424_level_is_a_log_level(level: str) -> None:
    assert read_request_meta(meta(logLevel=level)).log_level == level


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        (None, "_meta"),
        ({}, "_meta"),
        ({"_meta": None}, "_meta"),
        ({"_meta": []}, "_meta"),
        ({"_meta": "2026-07-28"}, "_meta"),
        (meta(protocolVersion=...), META_PROTOCOL_VERSION),
        (meta(protocolVersion=None), META_PROTOCOL_VERSION),
        (meta(protocolVersion=20260728), META_PROTOCOL_VERSION),
        (meta(protocolVersion=["2026-07-28"]), META_PROTOCOL_VERSION),
        (meta(clientCapabilities=...), META_CLIENT_CAPABILITIES),
        (meta(clientCapabilities=None), META_CLIENT_CAPABILITIES),
        (meta(clientCapabilities=[]), META_CLIENT_CAPABILITIES),
        (meta(clientCapabilities="all"), META_CLIENT_CAPABILITIES),
        # a missing version is reported before missing capabilities
        (meta(protocolVersion=..., clientCapabilities=...), META_PROTOCOL_VERSION),
    ],
)
def test_a_missing_required_member_is_invalid_params(params: Any, missing: str) -> None:
    with pytest.raises(InvalidParams) as raised:
        read_request_meta(params)
    assert raised.value.code == -32602
    assert raised.value.data == {"missing": missing}
    assert missing in str(raised.value)


@pytest.mark.parametrize(
    "version", ["2025-11-25", "2024-11-05", "2099-01-01", "", "2026-07-28 ", "latest"]
)
def test_a_version_not_served_per_request_is_unsupported(version: str) -> None:
    # Capabilities are missing too: the version is checked first (-32022 wins).
    with pytest.raises(UnsupportedProtocolVersion) as raised:
        read_request_meta(meta(protocolVersion=version, clientCapabilities=...))
    error = raised.value
    assert error.code == -32022
    assert error.data == {"supported": offered_versions(), "requested": version}
    assert MODERN_VERSION in error.data["supported"]
    assert set(SUPPORTED_VERSIONS) <= set(error.data["supported"])


@pytest.mark.parametrize("level", ["verbose", "INFO", "", 3, True, None, ["info"], {"x": 1}])
def test_a_log_level_that_is_not_an_rfc5424_name_is_invalid(level: object) -> None:
    params = meta(logLevel=level)
    if level is None:  # null is "not set": no messages, not an error
        assert read_request_meta(params).log_level is None
        return
    with pytest.raises(InvalidParams) as raised:
        read_request_meta(params)
    assert raised.value.data == {"invalid": META_LOG_LEVEL}


@pytest.mark.parametrize(
    "info",
    [
        "probe",
        ["probe"],
        {},
        {"name": 1, "version": "1"},
        {"name": "probe"},  # no version: Implementation requires one
        {"name": "probe", "version": 2},
    ],
)
def test_a_malformed_client_info_is_ignored(info: object) -> None:
    # clientInfo is a SHOULD: a bad one must not fail the request.
    assert read_request_meta(meta(clientInfo=info)).client_info is None


def test_other_meta_keys_are_left_alone() -> None:
    params = meta(progressToken="p1")
    params["_meta"]["com.example/thing"] = {"x": 1}
    read = read_request_meta(params)
    assert read.protocol_version == MODERN_VERSION
    assert META_CLIENT_INFO not in params["_meta"]


# --- choose_era: examples ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "method", "params", "era"),
    [
        ("2025-11-25", "tools/list", meta(), Era.HANDSHAKE),  # the header wins
        ("2024-11-05", "server/discover", None, Era.HANDSHAKE),
        ("2024-10-07", "tools/list", None, Era.HANDSHAKE),  # an older date we do not speak
        ("2026-07-28", "initialize", None, Era.MODERN),  # refused on the modern path
        ("2099-01-01", "tools/list", None, Era.MODERN),  # refused there with -32022
        ("banana", "tools/list", None, Era.MODERN),
        (None, "initialize", meta(), Era.HANDSHAKE),
        (None, "server/discover", None, Era.MODERN),
        (None, "tools/list", meta(), Era.MODERN),
        (None, "tools/list", {"_meta": {META_PROTOCOL_VERSION: None}}, Era.MODERN),
        (None, "tools/list", {"_meta": {META_CLIENT_CAPABILITIES: {}}}, Era.HANDSHAKE),
        (None, "tools/list", {"_meta": {"progressToken": 1}}, Era.HANDSHAKE),
        (None, "tools/list", None, Era.HANDSHAKE),
        (None, "tools/list", [meta()], Era.HANDSHAKE),
        (None, "", {}, Era.HANDSHAKE),
    ],
)
def test_choose_era_examples(header: str | None, method: str, params: object, era: Era) -> None:
    assert choose_era(header, method, params) is era


# --- choose_era and read_request_meta: properties ------------------------------------------

json_values: st.SearchStrategy[object] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
methods = st.sampled_from(
    ["initialize", "server/discover", "tools/list", "tools/call", "subscriptions/listen", "ping"]
) | st.text(max_size=16)
versions = st.sampled_from([MODERN_VERSION, *SUPPORTED_VERSIONS, "2024-10-07", "2099-01-01"])
meta_keys = st.sampled_from(
    [
        META_PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES,
        META_CLIENT_INFO,
        META_LOG_LEVEL,
        "progressToken",
        "traceparent",
        "com.example/x",
    ]
)
meta_values = st.one_of(
    versions,
    st.sampled_from(LEVELS),
    st.fixed_dictionaries({}, optional={"name": st.text(max_size=4), "version": json_values}),
    st.dictionaries(st.sampled_from(["sampling", "elicitation", "roots", "tasks"]), json_values),
    json_values,
)
changes = st.dictionaries(meta_keys, meta_values, max_size=6)
# Random _meta, and (so that the reading path is exercised too) valid ones with a few changes.
metas = changes | st.builds(lambda c: {**meta()["_meta"], **c}, changes) | json_values
params_strategy = (
    st.fixed_dictionaries(
        {}, optional={"_meta": metas, "name": st.text(max_size=6), "arguments": json_values}
    )
    | json_values
)
headers = st.none() | st.sampled_from([MODERN_VERSION, *SUPPORTED_VERSIONS]) | st.text(max_size=12)


@given(header=headers, method=methods, params=params_strategy)
def test_choose_era_is_total_and_follows_the_matrix(
    header: str | None, method: str, params: object
) -> None:
    era = choose_era(header, method, params)
    assert isinstance(era, Era)
    if header is not None:
        assert era is (Era.HANDSHAKE if is_handshake_version(header) else Era.MODERN)
        return
    if method == "initialize":
        assert era is Era.HANDSHAKE
        return
    named = (
        isinstance(params, dict)
        and isinstance(params.get("_meta"), dict)
        and META_PROTOCOL_VERSION in params["_meta"]
    )
    expected = method == "server/discover" or named
    assert era is (Era.MODERN if expected else Era.HANDSHAKE)


@given(header=st.sampled_from(SUPPORTED_VERSIONS), method=methods, params=params_strategy)
def test_a_handshake_version_header_always_means_the_handshake(
    header: str, method: str, params: object
) -> None:
    assert choose_era(header, method, params) is Era.HANDSHAKE


def outcome(params: object) -> RequestMeta | InvalidParams | UnsupportedProtocolVersion:
    """What ``read_request_meta`` makes of ``params``: a ``RequestMeta`` or a spec error.

    Any other exception escapes and fails the property.
    """
    # A transport refuses params that are not an object before reading _meta (-32602).
    try:
        return read_request_meta(params if isinstance(params, dict) else None)
    except (InvalidParams, UnsupportedProtocolVersion) as error:
        return error


@given(header=headers, method=methods, params=params_strategy)
def test_a_modern_body_reads_or_is_refused_with_the_spec_errors(
    header: str | None, method: str, params: object
) -> None:
    if choose_era(header, method, params) is not Era.MODERN:
        return
    read = outcome(params)
    if isinstance(read, RequestMeta):
        assert read.protocol_version == MODERN_VERSION
        assert read.log_level is None or read.log_level in LEVELS
    else:
        assert read.code == (-32022 if isinstance(read, UnsupportedProtocolVersion) else -32602)


@given(params=params_strategy)
def test_read_request_meta_raises_only_the_spec_errors(params: object) -> None:
    assert isinstance(outcome(params), RequestMeta | InvalidParams | UnsupportedProtocolVersion)
