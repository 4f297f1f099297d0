"""The upstream MCP servers trimcp connects to: the ``mcpServers`` / ``servers`` files (JSON,
TOML, YAML), sys_config.toml's ``[upstreams]``, their user and project layers, and the diff
a reload acts on.

Definitions are frozen values (``ServerConfig``, ``ClientConfig``; an entry's ``auth`` is
``OAuthSettings`` or ``ClientCredentialsSettings``) that keep ``${VAR}`` references until
``expand_server`` at connect time; every problem is reported with its file,
server, field, the value given, what was expected and how to fix it.
"""

from ._auth import ClientCredentialsSettings as ClientCredentialsSettings
from ._auth import OAuthSettings as OAuthSettings
from ._auth import ServerAuth as ServerAuth
from ._expand import expand_server as expand_server
from ._files import ConfigReport as ConfigReport
from ._files import client_config_from_mapping as client_config_from_mapping
from ._files import default_config_sources as default_config_sources
from ._files import inspect_client_config as inspect_client_config
from ._files import load_client_config as load_client_config
from ._model import ClientConfig as ClientConfig
from ._model import ConfigDiff as ConfigDiff
from ._model import ServerConfig as ServerConfig
from ._model import diff_configs as diff_configs
from ._source import ConfigSource as ConfigSource

__all__ = [
    "ClientConfig",
    "ClientCredentialsSettings",
    "ConfigDiff",
    "ConfigReport",
    "ConfigSource",
    "OAuthSettings",
    "ServerAuth",
    "ServerConfig",
    "client_config_from_mapping",
    "default_config_sources",
    "diff_configs",
    "expand_server",
    "inspect_client_config",
    "load_client_config",
]
