"""The vcs tools: read-only git (git_status, git_log, git_diff, git_show, git_blame,
git_branches).

``_tools.register`` registers them (``_history`` the log/diff/show ones); ``_git`` runs the git
executable with a clean environment and no external programs, ``_repo`` finds and checks
the repository, revisions and paths, ``_parse`` reads git's machine formats.
"""

from __future__ import annotations

__all__: list[str] = []
