"""The read tools: read_file, read_many_files, file_info, list_directory, directory_tree.

Each tool gets the jail of its call (``Skills.jail_for``: the configured roots, narrowed by
the client's), resolves its paths there, and does its file system work in a worker thread
(``run_blocking``), opening everything through the jail's descriptor helpers. The work
itself lives beside this module: ``_read_file`` (with ``_text``, ``_media`` and
``_read_stream``), ``_read_many``, ``_read_info``, ``_read_list`` and ``_read_tree``. All
five are read-only, idempotent and touch only local files, and say so in their annotations
(MCP 2025-11-25, Server > Tools > Tool Annotations,
https://modelcontextprotocol.io/specification/2025-11-25/server/tools).

The signatures below are what clients see: the input schemas come from the hints (so the
names they use must be importable at run time, not only for type checking) and the
descriptions from the docstrings.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated

# Tool hints are read at run time to build the schemas.
from trimcp.server import Context, Param, ToolResult
from trimcp.skills._runtime import run_blocking

from ._common import READ_ONLY
from ._file import read_file_work
from ._info import FileInfo, file_info_work
from ._lines import LineRequest
from ._list import Listing, SortKey, list_directory_work
from ._many import read_many_work
from ._tree import Tree, directory_tree_work

if TYPE_CHECKING:
    from trimcp.server import MCPServer
    from trimcp.skills._runtime import Skills

__all__ = ["register"]

_Count = Annotated[int | None, Param(ge=1)]


def register(server: MCPServer, skills: Skills) -> None:
    """Register the read tools on ``server``."""
    settings = skills.settings

    async def read_file(  # noqa: PLR0913, PLR0917
        ctx: Context,
        path: str,
        offset: _Count = None,
        limit: _Count = None,
        head: _Count = None,
        tail: _Count = None,
        line_numbers: bool = True,
    ) -> object:
        """Read a text file, with line numbers; images and audio come back as such.

        Text is shown numbered like `cat -n` under a header naming the file, the lines shown
        and the total. Choose lines with offset (first line, from 1) and limit (how many), or
        with head or tail alone. The output is capped at max_result_bytes; a cut result says
        which offset to continue with. Files larger than max_file_size can only be read in
        part (head, tail, offset/limit). Other binary files are refused; file_info describes
        them.

        Args:
            path: the file, relative to the first allowed folder or absolute.
            offset: the first line to show (1 is the first line of the file).
            limit: how many lines to show from offset (default: to the end).
            head: show the first N lines (not with offset/limit/tail).
            tail: show the last N lines (not with offset/limit/head).
            line_numbers: number the lines (a right-aligned number and a tab before each).
        """
        request = LineRequest(offset, limit, head, tail)
        request.check()
        jail = await skills.jail_for(ctx)
        resolved = jail.resolve(path, "read")
        work = functools.partial(
            read_file_work, jail, settings, resolved, request=request, numbers=line_numbers
        )
        return await run_blocking(ctx, work, unit="files")

    async def read_many_files(ctx: Context, paths: list[str]) -> object:
        """Read several text files at once, each under a `==> path <==` header.

        Lines are numbered as read_file numbers them. A file that cannot be read (missing,
        refused, binary, too large) is reported under its header and the others are still
        read. At most max_read_files files per call; the output is capped at
        max_result_bytes, and a cut says where to continue with read_file. Images and audio
        come after the text as content blocks.

        Args:
            paths: the files, each relative to the first allowed folder or absolute.
        """
        jail = await skills.jail_for(ctx)
        work = functools.partial(read_many_work, jail, settings, list(paths))
        return await run_blocking(ctx, work, unit="files")

    async def file_info(ctx: Context, path: str) -> ToolResult[FileInfo]:
        """Describe a file, folder or symlink: size, times, kind, permissions, text or binary.

        Times are ISO 8601 in UTC (modified, accessed, changed = metadata change, created when
        the system records it). A symlink is described as itself; its target is named only
        when it lies inside the allowed folders. For regular files it says whether they are
        binary (with a type guess) or text (with the encoding and, up to max_file_size, the
        number of lines).

        Args:
            path: the file, folder or symlink, relative to the first allowed folder or
                absolute.
        """
        jail = await skills.jail_for(ctx)
        work = functools.partial(file_info_work, jail, settings, path)
        return await run_blocking(ctx, lambda _progress: work(), unit="files")

    async def list_directory(
        ctx: Context,
        path: str = ".",
        sort: SortKey = "name",
        reverse: bool = False,
        show_hidden: bool = True,
    ) -> ToolResult[Listing]:
        """List one folder: each entry's size, modification time and kind.

        Folders end in `/`, symlinks in `@` (with `-> target` when the target is inside the
        allowed folders, `-> outside the allowed folders` when not). Blocked entries (secret
        files such as .env) are left out and counted.

        Args:
            path: the folder, relative to the first allowed folder or absolute.
            sort: "name" (A to Z), "size" (largest first) or "modified" (newest first).
            reverse: reverse the order.
            show_hidden: include entries whose name starts with a dot.
        """
        jail = await skills.jail_for(ctx)
        resolved = jail.resolve(path, "read")
        work = functools.partial(
            list_directory_work,
            jail,
            settings,
            resolved,
            sort=sort,
            reverse=reverse,
            show_hidden=show_hidden,
        )
        return await run_blocking(ctx, work, unit="entries")

    async def directory_tree(
        ctx: Context,
        path: str = ".",
        depth: Annotated[int, Param(ge=1)] = 3,
        exclude: list[str] = [],  # noqa: B006 - never mutated; the schema shows the default
        gitignore: bool | None = None,
    ) -> ToolResult[Tree]:
        """Draw a folder's tree (like `tree`), down to a depth, with a summary line.

        Symlinks are shown (`@`) but never followed; .git folders and blocked paths are left
        out; what .gitignore files exclude is left out unless gitignore is false. Stops after
        max_files_visited entries and caps the output at max_result_bytes, saying so.

        Args:
            path: the folder, relative to the first allowed folder or absolute.
            depth: how many levels to show (1: the folder's own entries).
            exclude: gitignore-style globs to leave out, relative to the folder
                (e.g. "node_modules/", "*.pyc").
            gitignore: honour .gitignore files (default: the server's gitignore setting).
        """
        jail = await skills.jail_for(ctx)
        resolved = jail.resolve(path, "read")
        honour = settings.gitignore if gitignore is None else gitignore
        work = functools.partial(
            directory_tree_work,
            jail,
            settings,
            resolved,
            depth=depth,
            exclude=list(exclude),
            gitignore=honour,
        )
        return await run_blocking(ctx, work, unit="entries")

    # Text (or media) blocks only: what they show has no fixed shape worth a schema.
    server.add_tool(read_file, "read_file", annotations=READ_ONLY, structured_output=False)
    server.add_tool(
        read_many_files, "read_many_files", annotations=READ_ONLY, structured_output=False
    )
    server.add_tool(file_info, "file_info", annotations=READ_ONLY)
    server.add_tool(list_directory, "list_directory", annotations=READ_ONLY)
    server.add_tool(directory_tree, "directory_tree", annotations=READ_ONLY)
