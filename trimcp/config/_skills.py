"""The ``[skills]`` table: the built-in file, search and git tools server (``trimcp.skills``).

``trimcp skills`` reads the same table (its flags override it), so one definition serves the
command line, the daemon and ``trimcp config check``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._schema import Check, above, at_least, spec

SkillCategory = Literal["read", "search", "vcs", "write", "execute"]

#: Every category, in the order tools are listed.
SKILL_CATEGORIES: tuple[SkillCategory, ...] = ("read", "search", "vcs", "write", "execute")

#: Names that commonly hold secrets, refused for every tool (gitignore patterns, matched
#: against the path inside its root). The precedents: the files credential scanners such as
#: gitleaks and trufflehog look for first, and the ones ``ssh``, ``gpg``, ``netrc``, ``npm``,
#: ``pip``, ``docker`` and cloud CLIs keep their credentials in.
DEFAULT_BLOCKED_PATHS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".azure/",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "secrets.toml",
    "credentials.json",
)

#: Refused for the write tools only: git's own files (hooks would run code; a bad edit of the
#: index or refs breaks the repository).
DEFAULT_WRITE_BLOCKED_PATHS: tuple[str, ...] = (".git/",)


def _no_empty(values: tuple[str, ...]) -> bool:
    return all(value.strip() for value in values)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillsSettings:
    """The ``[skills]`` table.

    Attributes:
        enabled: serve the tools from ``trimcp serve`` when ``[server] object`` is empty.
        roots: the folders the tools may touch; relative ones start at the folder of the file
            that sets them; empty means the working directory.
        enable: the tool categories offered.
        blocked_paths: gitignore patterns refused for every tool, whatever the roots say.
        write_blocked_paths: gitignore patterns refused for the write tools only.
        gitignore: whether glob, grep and directory_tree skip what ``.gitignore`` files
            exclude (a tool argument can turn it off per call).
        max_file_size: the largest file read or searched, in bytes.
        max_media_size: the largest image or audio file returned as media, in bytes.
        max_result_bytes: the largest text of one tool result, in bytes.
        max_files_visited: files and folders one search, glob or tree may visit.
        max_read_files: files one ``read_many_files`` or ``concat_files`` may read.
        git_timeout: seconds one git command may run.
        commands: executables ``run_command`` may run (names looked up on PATH, or
            absolute paths).
        command_timeout: seconds one ``run_command`` may run.
        max_subscriptions: files watched for ``resources/subscribe`` at once.
        watch_interval: seconds between two looks at the subscribed files.
        max_listed_resources: files listed by ``resources/list`` (the first ones found).
    """

    enabled: bool = field(
        default=False,
        metadata=spec(meaning="serve the built-in tools when [server] object is empty"),
    )
    roots: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="folders the tools may touch (empty: the working directory)",
            check=Check(test=_no_empty, rule="of non-empty folder names"),
            example=("~/projects/app",),
        ),
    )
    enable: tuple[SkillCategory, ...] = field(
        default=("read", "search", "vcs"),
        metadata=spec(meaning="tool categories offered"),
    )
    blocked_paths: tuple[str, ...] = field(
        default=DEFAULT_BLOCKED_PATHS,
        metadata=spec(
            meaning="gitignore patterns no tool may touch",
            check=Check(test=_no_empty, rule="of non-empty patterns"),
        ),
    )
    write_blocked_paths: tuple[str, ...] = field(
        default=DEFAULT_WRITE_BLOCKED_PATHS,
        metadata=spec(
            meaning="gitignore patterns the write tools may not touch",
            check=Check(test=_no_empty, rule="of non-empty patterns"),
        ),
    )
    gitignore: bool = field(
        default=True, metadata=spec(meaning="glob, grep and directory_tree honour .gitignore")
    )
    max_file_size: int = field(
        default=10 * 1024 * 1024,
        metadata=spec(meaning="the largest file read or searched, in bytes", check=at_least(1)),
    )
    max_media_size: int = field(
        default=5 * 1024 * 1024,
        metadata=spec(meaning="the largest image or audio returned, in bytes", check=at_least(1)),
    )
    max_result_bytes: int = field(
        default=256 * 1024,
        metadata=spec(
            meaning="the largest text of one tool result, in bytes", check=at_least(1024)
        ),
    )
    max_files_visited: int = field(
        default=200_000,
        metadata=spec(meaning="files one search, glob or tree may visit", check=at_least(1)),
    )
    max_read_files: int = field(
        default=100,
        metadata=spec(meaning="files one read_many_files or concat_files reads", check=at_least(1)),
    )
    git_timeout: float = field(
        default=30.0, metadata=spec(meaning="seconds one git command may run", check=above(0))
    )
    commands: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="executables run_command may run",
            check=Check(test=_no_empty, rule="of non-empty names"),
            example=("pytest", "make"),
        ),
    )
    command_timeout: float = field(
        default=60.0, metadata=spec(meaning="seconds one run_command may run", check=above(0))
    )
    max_subscriptions: int = field(
        default=1000,
        metadata=spec(meaning="files watched for resources/subscribe at once", check=at_least(1)),
    )
    watch_interval: float = field(
        default=1.0,
        metadata=spec(meaning="seconds between two looks at subscribed files", check=above(0)),
    )
    max_listed_resources: int = field(
        default=10_000,
        metadata=spec(meaning="files listed by resources/list", check=at_least(0)),
    )
