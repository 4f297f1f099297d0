"""Configuration: ``sys_config.toml`` read once into frozen dataclasses.

:func:`load_config` finds the file (explicit path, ``TRIMCP_CONFIG``, ``./sys_config.toml``,
or none), merges its ``include`` files, checks every key and value against the settings
dataclasses and returns a :class:`SysConfig`. Anything wrong raises ``ConfigError`` with a
message naming the file, the key, what was given and what was expected.

This package is deliberately not a live settings registry: there is no global config object.
The application reads a SysConfig at start (and anew on SIGHUP) and passes it down. It imports
only the standard library and :mod:`trimcp.errors`, so every layer may use it; the ``trimcp``
command (``trimcp.cli``) and the application (``trimcp.supervision``) are its callers.

To add a section, write a frozen settings dataclass in ``_settings.py`` whose fields are
``field(default=..., metadata=spec(meaning=..., check=...))``, add one field for it on
SysConfig (``field(default_factory=NewSettings, metadata=spec(meaning=...))``), and document
its keys in the repository's ``sys_config.toml``; the validator needs no new code. Rules that
tie several settings together go in ``_rules.py``. A layer that checks a value later (the
daemon parses the Host/Origin patterns) reports it with :func:`setting_error`, worded like
every other config error and naming the file that set the key (``SysConfig.file_of``).
"""

from __future__ import annotations

from ._admin import AdminSettings as AdminSettings
from ._auth import AuthSettings as AuthSettings
from ._gateway import NAMESPACE_SCHEMES as NAMESPACE_SCHEMES
from ._gateway import GatewaySettings as GatewaySettings
from ._load import CONFIG_ENV_VAR as CONFIG_ENV_VAR
from ._load import DEFAULT_CONFIG_FILE as DEFAULT_CONFIG_FILE
from ._load import find_config_file as find_config_file
from ._load import load_config as load_config
from ._merge import KeyOrigins as KeyOrigins
from ._otel import OtelExporter as OtelExporter
from ._otel import OtelSettings as OtelSettings
from ._rules import setting_error as setting_error
from ._settings import ActorSettings as ActorSettings
from ._settings import ApplicationSettings as ApplicationSettings
from ._settings import HttpSettings as HttpSettings
from ._settings import LogFormat as LogFormat
from ._settings import LoggingSettings as LoggingSettings
from ._settings import LogLevel as LogLevel
from ._settings import ServerSettings as ServerSettings
from ._settings import SessionSettings as SessionSettings
from ._settings import StdioSettings as StdioSettings
from ._settings import SupervisionSettings as SupervisionSettings
from ._settings import SysConfig as SysConfig
from ._settings import WebSocketSettings as WebSocketSettings
from ._skills import DEFAULT_BLOCKED_PATHS as DEFAULT_BLOCKED_PATHS
from ._skills import DEFAULT_WRITE_BLOCKED_PATHS as DEFAULT_WRITE_BLOCKED_PATHS
from ._skills import SKILL_CATEGORIES as SKILL_CATEGORIES
from ._skills import SkillCategory as SkillCategory
from ._skills import SkillsSettings as SkillsSettings
from ._toml_text import render_settings as render_settings
from ._validate import validate_config as validate_config

__all__ = [
    "CONFIG_ENV_VAR",
    "DEFAULT_BLOCKED_PATHS",
    "DEFAULT_CONFIG_FILE",
    "DEFAULT_WRITE_BLOCKED_PATHS",
    "NAMESPACE_SCHEMES",
    "SKILL_CATEGORIES",
    "ActorSettings",
    "AdminSettings",
    "ApplicationSettings",
    "AuthSettings",
    "GatewaySettings",
    "HttpSettings",
    "KeyOrigins",
    "LogFormat",
    "LogLevel",
    "LoggingSettings",
    "OtelExporter",
    "OtelSettings",
    "ServerSettings",
    "SessionSettings",
    "SkillCategory",
    "SkillsSettings",
    "StdioSettings",
    "SupervisionSettings",
    "SysConfig",
    "WebSocketSettings",
    "find_config_file",
    "load_config",
    "render_settings",
    "setting_error",
    "validate_config",
]
