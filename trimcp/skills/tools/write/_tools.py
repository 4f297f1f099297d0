"""The write tools: ``write_file``, ``edit_file``, ``append_file``, ``make_directory``,
``move``, ``copy`` and ``delete`` (the ``write`` category, off by default).

Every path goes through ``Jail.resolve(path, "write")``, which applies
``write_blocked_paths`` (git's ``.git/`` by default) on top of ``blocked_paths``; every
change is then made through the parent folder's descriptor with ``O_NOFOLLOW``
(``_fs``), so a symlink swapped in after the check is refused, not followed. The work
runs in a worker thread (``run_blocking``); the inner steps take a ``Resolved`` and live in
``_ops``, ``_edit``, ``_tree`` and ``_copy``.

Annotations follow MCP 2025-11-25, Server > Tools > Tool annotations
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools): none is read-only
or open-world (they touch only the jail); ``destructiveHint`` is true for the tools that can
replace or delete (``write_file``, ``edit_file``, ``move``, ``copy``, ``delete``);
``idempotentHint`` for those whose repeat changes nothing more (``write_file``,
``make_directory``, ``delete``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.errors import PathRefused
from trimcp.protocol import ToolAnnotations
from trimcp.server import Context  # noqa: TC001 - tool hints are read at runtime
from trimcp.skills._runtime import Progress, run_blocking
from trimcp.skills.jail import shown

from ._copy import CopyLimits, copy_resolved
from ._edit import Edit, edit_resolved
from ._ops import (
    append_resolved,
    encode_content,
    lexical_link,
    make_directory_resolved,
    write_resolved,
)
from ._tree import delete_link, delete_resolved, move_resolved

if TYPE_CHECKING:
    from trimcp.server import MCPServer
    from trimcp.skills._runtime import Skills

__all__ = ["register"]


def _annotations(title: str, *, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def register(server: MCPServer, skills: Skills) -> None:  # noqa: C901
    """Register the write tools on ``server``."""
    settings = skills.settings

    async def write_file(
        ctx: Context,
        path: str,
        content: str,
        create_parents: bool = False,
        overwrite: bool = True,
    ) -> str:
        """Create a text file or replace its whole content (UTF-8), atomically.

        The new content is written to a temporary file beside it and renamed over it, so the
        file is never seen half-written; a replaced file keeps its permissions. To change
        part of a file, use edit_file.

        Args:
            path: the file, absolute or relative to the first allowed folder.
            content: the complete new content.
            create_parents: make missing folders on the way.
            overwrite: replace the file when it exists (false: refuse instead).
        """
        jail = await skills.jail_for(ctx)
        data = encode_content(content)

        def work(progress: Progress) -> str:
            resolved = jail.resolve(path, "write")
            return write_resolved(
                resolved, data, overwrite=overwrite, create_parents=create_parents
            )

        return await run_blocking(ctx, work)

    async def edit_file(ctx: Context, path: str, edits: list[Edit], dry_run: bool = False) -> str:
        """Replace exact text in a UTF-8 file; return the unified diff of the change.

        Edits apply in order, each to the text the earlier ones left. Each old_text must
        occur exactly once: if one matches 0 times or more than once the whole call fails
        and nothing is written (the message says which edit and how many matches). The file
        is replaced atomically and keeps its permissions.

        Args:
            path: the file to edit.
            edits: the replacements, in order.
            dry_run: only return the diff; write nothing.
        """
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> str:
            resolved = jail.resolve(path, "write")
            return edit_resolved(
                resolved,
                edits,
                dry_run=dry_run,
                max_file_size=settings.max_file_size,
                max_result_bytes=settings.max_result_bytes,
            )

        return await run_blocking(ctx, work)

    async def append_file(ctx: Context, path: str, content: str, create: bool = True) -> str:
        """Append text (UTF-8) to the end of a file.

        Args:
            path: the file.
            content: the text to add, as is (include a leading newline if needed).
            create: create the file when it does not exist.
        """
        jail = await skills.jail_for(ctx)
        data = encode_content(content)

        def work(progress: Progress) -> str:
            return append_resolved(jail.resolve(path, "write"), data, create=create)

        return await run_blocking(ctx, work)

    async def make_directory(ctx: Context, path: str, parents: bool = True) -> str:
        """Create a folder; succeed without change when it already exists.

        Args:
            path: the folder.
            parents: also create missing folders on the way.
        """
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> str:
            return make_directory_resolved(jail.resolve(path, "write"), parents=parents)

        return await run_blocking(ctx, work)

    async def move(ctx: Context, source: str, destination: str, overwrite: bool = False) -> str:
        """Move or rename a file or folder.

        The destination is the new path itself (not a folder to move into). An existing
        destination is refused unless overwrite is true. Symlinks are not moved.

        Args:
            source: the file or folder to move.
            destination: its new path.
            overwrite: replace an existing destination file (or empty folder).
        """
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> str:
            moved = jail.resolve(source, "write")
            target = jail.resolve(destination, "write")
            if lexical_link(jail, source) is not None:
                raise PathRefused(
                    f"{shown(source)} is a symlink; move does not move symlinks (a moved "
                    "relative link can point somewhere else); move what it points to instead"
                )
            return move_resolved(
                jail,
                moved,
                target,
                overwrite=overwrite,
                max_visited=settings.max_files_visited,
                progress=progress,
            )

        return await run_blocking(ctx, work)

    async def copy(
        ctx: Context,
        source: str,
        destination: str,
        overwrite: bool = False,
        recursive: bool = False,
    ) -> str:
        """Copy a file (content and permissions), or a folder with recursive=true.

        The destination is the new path itself. Symlinks inside a copied folder are skipped
        and reported, never followed. Limits: max_files_visited entries, max_file_size per
        file.

        Args:
            source: the file or folder to copy.
            destination: the path of the copy.
            overwrite: replace an existing file (for folders: copy into an existing folder,
                replacing files with the same names).
            recursive: copy a folder with everything in it.
        """
        jail = await skills.jail_for(ctx)
        limits = CopyLimits(
            max_file_size=settings.max_file_size,
            max_visited=settings.max_files_visited,
            max_total=settings.max_file_size * settings.max_read_files,
        )

        def work(progress: Progress) -> str:
            return copy_resolved(
                jail,
                jail.resolve(source, "read"),
                jail.resolve(destination, "write"),
                overwrite=overwrite,
                recursive=recursive,
                limits=limits,
                progress=progress,
            )

        return await run_blocking(ctx, work)

    async def delete(ctx: Context, path: str, recursive: bool = False) -> str:
        """Delete a file, an empty folder, or (recursive=true) a folder with its contents.

        A symlink is deleted itself, never what it points to. A folder holding paths the
        write tools may not change (such as .git or .env) is refused whole.

        Args:
            path: the file or folder to delete.
            recursive: delete a folder with everything in it.
        """
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> str:
            resolved = jail.resolve(path, "write")
            link = lexical_link(jail, path)
            if link is not None:
                return delete_link(link)
            return delete_resolved(
                jail,
                resolved,
                recursive=recursive,
                max_visited=settings.max_files_visited,
                progress=progress,
            )

        return await run_blocking(ctx, work)

    for tool, hints in (
        (write_file, _annotations("Write file", destructive=True, idempotent=True)),
        (edit_file, _annotations("Edit file", destructive=True, idempotent=False)),
        (append_file, _annotations("Append to file", destructive=False, idempotent=False)),
        (make_directory, _annotations("Make folder", destructive=False, idempotent=True)),
        (move, _annotations("Move", destructive=True, idempotent=False)),
        (copy, _annotations("Copy", destructive=True, idempotent=False)),
        (delete, _annotations("Delete", destructive=True, idempotent=True)),
    ):
        server.add_tool(tool, annotations=hints)
