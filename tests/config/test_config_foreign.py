"""Tables of sys_config.toml that other packages read are passed over, not refused."""

from __future__ import annotations

import pytest

from trimcp.config import validate_config
from trimcp.errors import ConfigError


def test_upstreams_is_left_to_the_client_package() -> None:
    config = validate_config({"upstreams": {"echo": {"command": "python", "args": ["-V"]}}})
    assert config.http.engine == "trimcp"


def test_the_http_engine_is_a_choice() -> None:
    assert validate_config({"http": {"engine": "hypercorn"}}).http.engine == "hypercorn"
    with pytest.raises(ConfigError, match=r"(?s)engine.*hypercorn"):
        validate_config({"http": {"engine": "nginx"}})
