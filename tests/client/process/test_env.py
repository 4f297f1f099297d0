"""``child_environment``: safe keys, then env_passthrough, then env (pure)."""

from __future__ import annotations

from trimcp.client.process._env import (
    POSIX_SAFE_KEYS,
    WINDOWS_SAFE_KEYS,
    child_environment,
    variable,
)

PARENT = {
    "HOME": "/home/me",
    "PATH": "/usr/bin:/bin",
    "USER": "me",
    "LANG": "de_DE.UTF-8",
    "LC_ALL": "de_DE.UTF-8",
    "LC_TIME": "C",
    "TERM": "xterm",
    "OPENAI_API_KEY": "sk-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "SHELL": "() { :; }; echo pwned",
    "NVM_DIR": "/home/me/.nvm",
}


def test_only_safe_keys_are_inherited() -> None:
    env = child_environment(PARENT, {}, (), "linux")
    assert env == {
        "HOME": "/home/me",
        "PATH": "/usr/bin:/bin",
        "USER": "me",
        "LANG": "de_DE.UTF-8",
        "LC_ALL": "de_DE.UTF-8",
        "LC_TIME": "C",
        "TERM": "xterm",
    }


def test_bash_function_exports_are_skipped() -> None:
    assert "SHELL" not in child_environment(PARENT, {}, (), "darwin")


def test_passthrough_copies_named_variables_when_set() -> None:
    env = child_environment(PARENT, {}, ("OPENAI_API_KEY", "NOT_SET"), "linux")
    assert env["OPENAI_API_KEY"] == "sk-secret"
    assert "NOT_SET" not in env
    assert "AWS_SECRET_ACCESS_KEY" not in env


def test_explicit_env_wins_over_defaults_and_passthrough() -> None:
    env = child_environment(
        PARENT,
        {"PATH": "/opt/bin", "OPENAI_API_KEY": "sk-other", "DEBUG": "1"},
        ("OPENAI_API_KEY",),
        "linux",
    )
    assert env["PATH"] == "/opt/bin"
    assert env["OPENAI_API_KEY"] == "sk-other"
    assert env["DEBUG"] == "1"


def test_explicit_env_may_start_with_parentheses() -> None:
    # Only inherited values are screened; what the user wrote is theirs.
    assert child_environment({}, {"X": "() odd"}, (), "linux") == {"X": "() odd"}


def test_posix_names_are_case_sensitive() -> None:
    env = child_environment({"Path": "/x", "home": "/y"}, {}, ("Nvm_Dir",), "linux")
    assert env == {}


def test_windows_keys_match_without_case_and_keep_one_spelling() -> None:
    parent = {
        "Path": r"C:\Windows;C:\nodejs",
        "SystemRoot": r"C:\Windows",
        "ComSpec": r"C:\Windows\system32\cmd.exe",
        "USERPROFILE": r"C:\Users\me",
        "HOME": r"C:\Users\me",
        "LANG": "C",
        "GITHUB_TOKEN": "ghp",
    }
    env = child_environment(parent, {"PATH": r"C:\tools"}, ("github_token",), "win32")
    assert env == {
        "PATH": r"C:\tools",
        "SystemRoot": r"C:\Windows",
        "ComSpec": r"C:\Windows\system32\cmd.exe",
        "USERPROFILE": r"C:\Users\me",
        "GITHUB_TOKEN": "ghp",
    }


def test_key_lists_cover_the_sdk_defaults() -> None:
    assert {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} <= set(POSIX_SAFE_KEYS)
    windows = {
        "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
        "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME",
        "USERPROFILE", "COMSPEC",
    }  # fmt: skip
    assert windows <= set(WINDOWS_SAFE_KEYS)


def test_variable_lookup_ignores_case_only_on_windows() -> None:
    assert variable({"Path": "a"}, "PATH", "win32") == "a"
    assert variable({"Path": "a"}, "PATH", "linux") is None
    assert variable({"PATH": "b"}, "PATH", "linux") == "b"
