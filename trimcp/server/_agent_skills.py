"""Serve a folder of Agent Skills as ``skill://`` resources (MCP Skills extension, SEP-2640).

SEP-2640 "Skills Extension" (draft, extension ``io.modelcontextprotocol/skills``,
https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2640) binds Agent Skills
(https://agentskills.io/specification) to MCP resources: each file of a skill folder is the
resource ``skill://<skill-path>/<file-path>``, and three methods sit beside ``resources/read``:

* ``skills/list`` (Specification > Discovery > Enumeration): ``{skills: [entry], nextCursor?}``
  where an entry is ``{uri, frontmatter, resources: [{uri, digest, size}]}``: ``uri`` is the
  skill's ``SKILL.md``, ``frontmatter`` its YAML frontmatter verbatim as JSON, ``resources``
  every file of the skill (nested skills' files included) with ``sha256:<hex>`` of its bytes.
  ``size`` is not in the SEP text but the official conformance suite requires it
  (``sep-2640-resources-size-required``). Entries are never split across pages.
* ``skills/get`` (> Retrieval): ``{uri}`` -> ``{skill: entry}``, no cursor; a URI that is not
  a served skill's ``SKILL.md`` is -32602.
* ``resources/directory/read`` (> Directory Listing): ``{uri, cursor?}`` -> ``{resources:
  [Resource], nextCursor?}``, the direct children of a directory (``mimeType
  inode/directory``, written without a trailing slash); anything else is -32602. Declared as
  ``capabilities.extensions["io.modelcontextprotocol/skills"] = {"directoryRead": true}``
  (> Capability Declaration), which ``SkillDirectory.capability`` returns.

The folder given is a jail (the WG threat model, T5-T7: directory-walk escape, exhaustion,
the ``ssh-helper`` symlink to a private key). Skills are sub-folders, at any depth, holding
a ``SKILL.md`` whose frontmatter ``name`` equals the folder's name; what a scan accepted is
the whole URI space: a URI is looked up by exact string, so ``..``, ``%2e%2e``, ``\\``, NUL
and absolute forms cannot name anything else (they are refused with a reason first). Files
are read through directory descriptors with ``O_NOFOLLOW`` from the root down, after a
``realpath`` containment check, at scan time and again at every read, so a file or folder
swapped for a symlink after the scan leads nowhere outside; ``fstat`` refuses FIFOs and
devices. Symlinked files that stay inside the root are served (their target's bytes);
symlinked folders are not followed. Hidden names (``.git``) are skipped.

Everything is bounded: file size, files and bytes per skill (512 and 16 MiB, the
conformance suite's ``sep-2640-limit-*`` SHOULD NOTs), skills, entries walked, folder
depth, frontmatter size and nesting, page size. A skill over a bound, or with bad
frontmatter, is skipped with a warning naming its file; the others are still served.

This module knows no transport and no trio: it returns result objects (no ``resultType``,
``ttlMs`` or ``cacheScope``, which the server adds) and raises ``InvalidParams``. It reads
files synchronously (a scan of a big folder blocks: run ``rescan`` in a thread if that
matters), needs POSIX (``O_NOFOLLOW``, ``dir_fd``) and PyYAML (``trimcp[yaml]``).

Here: scanning a folder into skills, the catalog, and the methods. The ``skill://`` URI
checks are in ``_skill_uris``, the frontmatter in ``_skill_frontmatter``, and the reads
inside the jail in ``_skill_jail``.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import logging
import os
import typing
from dataclasses import dataclass, field

from trimcp.errors import InvalidCursor, InvalidParams
from trimcp.protocol import ResourceContents
from trimcp.server._pagination import CursorCodec, Paginator, snapshot_of
from trimcp.server._skill_frontmatter import (
    Skipped,
    check_frontmatter,
    parse_frontmatter,
    yaml_module,
)
from trimcp.server._skill_jail import (
    DIR_FLAGS,
    SKILL_FILE,
    Unreadable,
    is_text,
    mime_type,
    name_problem,
    open_folder,
    read_regular,
    real_parts,
    why_not_opened,
)
from trimcp.server._skill_uris import check_uri, shown, uri_of

if typing.TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from trimcp.protocol import JsonObject, JsonValue, Page

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DIRECTORY_READ",
    "EXTENSION_ID",
    "SKILLS_GET",
    "SKILLS_LIST",
    "SkillDirectory",
]


logger = logging.getLogger(__name__)


T = typing.TypeVar("T")


#: The extension identifier, the key under ``capabilities.extensions`` (SEP-2640 header).
EXTENSION_ID = "io.modelcontextprotocol/skills"


SKILLS_LIST = "skills/list"


SKILLS_GET = "skills/get"


DIRECTORY_READ = "resources/directory/read"


#: SEP-2640 > Directory Listing > Directory resources.
DIRECTORY_MIME_TYPE = "inode/directory"


# The conformance suite's SHOULD NOT limits (sep-2640-limit-resources-per-skill, -total-size).
_MAX_SKILL_FILES = 512


_MAX_SKILL_SIZE = 16 * 1024 * 1024


# Walk bounds, so that a root pointed at a home folder costs a bounded scan.
_MAX_WALK_ENTRIES = 100_000


_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class _File:
    parts: tuple[str, ...]
    uri: str
    size: int
    digest: str
    mime_type: str


@dataclass(frozen=True, slots=True)
class _Skill:
    parts: tuple[str, ...]
    uri: str
    frontmatter: JsonObject
    files: tuple[_File, ...]  # SKILL.md first, then by path; nested skills' files included
    folders: tuple[tuple[str, ...], ...]  # its own folder and every folder below it
    modified: str

    def entry(self) -> JsonObject:
        """Return the skill entry of ``skills/list`` and ``skills/get``."""
        resources: list[JsonValue] = [
            {"uri": file.uri, "digest": file.digest, "size": file.size} for file in self.files
        ]
        return {
            "uri": self.uri,
            "frontmatter": copy.deepcopy(self.frontmatter),
            "resources": resources,
        }

    def resource(self) -> JsonObject:
        """Return the ``SKILL.md`` resource (SEP-2640 > Resource Metadata; _meta keys doc)."""
        return {
            "uri": self.uri,
            "name": typing.cast("str", self.frontmatter["name"]),
            "description": typing.cast("str", self.frontmatter["description"]),
            "mimeType": "text/markdown",
            "size": self.files[0].size,
            "annotations": {
                "audience": ["user", "assistant"],
                "priority": 0.8,
                "lastModified": self.modified,
            },
        }


@dataclass(slots=True)
class _Tree:
    max_files: int
    files: list[tuple[str, ...]] = field(default_factory=list)
    folders: list[tuple[str, ...]] = field(default_factory=list)
    entries: int = 0
    truncated: bool = False  # stopped early: over _MAX_WALK_ENTRIES or max_files

    def add_file(self, parts: tuple[str, ...]) -> None:
        self.files.append(parts)
        if len(self.files) > self.max_files:
            self.truncated = True


@dataclass(frozen=True, slots=True)
class _Limits:
    max_file_size: int
    max_skills: int
    max_skill_files: int
    max_skill_size: int


class _Scanner:
    """One scan of the root: walks, reads and digests, noting what it leaves out and why."""

    def __init__(self, root: str, limits: _Limits) -> None:
        self.root = root
        self.limits = limits
        self.problems: dict[str, None] = {}  # ordered and without repeats (nested re-walks)
        self._digests: dict[tuple[str, ...], _File] = {}

    def note(self, parts: Sequence[str], why: str) -> None:
        self.problems[f"{os.path.join(self.root, *parts)}: {why}"] = None

    def walk(self, start: tuple[str, ...], max_files: int = _MAX_WALK_ENTRIES) -> _Tree:
        """List the files and folders below ``start``, bounded, without following folders.

        Raises:
            Unreadable: ``start`` cannot be opened (gone, or swapped for a symlink).
        """
        tree = _Tree(max_files)
        fd = open_folder(self.root, start)
        try:
            self._walk_folder(fd, start, tree)
        finally:
            os.close(fd)
        if tree.entries > _MAX_WALK_ENTRIES:
            self.note(start, f"more than {_MAX_WALK_ENTRIES} entries; the rest is not scanned")
        return tree

    def _walk_folder(self, fd: int, parts: tuple[str, ...], tree: _Tree) -> None:
        with os.scandir(fd) as listing:
            entries: list[os.DirEntry[str]] = []
            for entry in listing:
                tree.entries += 1
                if tree.entries > _MAX_WALK_ENTRIES:
                    tree.truncated = True
                    return
                if not entry.name.startswith("."):
                    entries.append(entry)
        for entry in sorted(entries, key=lambda entry: entry.name):
            child = (*parts, entry.name)
            problem = name_problem(entry.name)
            if problem is not None:
                self.note(child, f"not served: {problem}")
            elif entry.is_symlink():
                self._walk_link(child, tree)
            elif entry.is_dir(follow_symlinks=False):
                self._walk_subfolder(fd, child, tree)
            elif entry.is_file(follow_symlinks=False):
                tree.add_file(child)
            else:
                self.note(child, "not served: not a regular file (a FIFO, device or socket)")
            if tree.truncated:
                return

    def _walk_subfolder(self, fd: int, child: tuple[str, ...], tree: _Tree) -> None:
        if len(child) > _MAX_DEPTH:
            self.note(child, f"not scanned: deeper than {_MAX_DEPTH} folders")
            return
        try:
            child_fd = os.open(child[-1], DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            self.note(child, f"not scanned: {why_not_opened(exc)}")
            return
        tree.folders.append(child)
        try:
            self._walk_folder(child_fd, child, tree)
        finally:
            os.close(child_fd)

    def _walk_link(self, child: tuple[str, ...], tree: _Tree) -> None:
        try:
            real = os.path.join(self.root, *real_parts(self.root, child))
        except Unreadable as exc:
            self.note(child, f"not served: {exc}")
            return
        if os.path.isdir(real):
            self.note(child, "not served: a symlink to a folder (folder symlinks are not followed)")
        elif not os.path.isfile(real):
            self.note(child, "not served: a symlink to nothing or to something not a regular file")
        else:
            tree.add_file(child)

    def read(self, parts: tuple[str, ...]) -> tuple[bytes, _File, os.stat_result]:
        try:
            data, info = read_regular(self.root, parts, self.limits.max_file_size)
        except Unreadable as exc:
            raise Skipped(f"{'/'.join(parts)} {exc}") from None
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        file = _File(parts, uri_of(parts), len(data), digest, mime_type(parts[-1]))
        self._digests[parts] = file
        return data, file, info

    def file(self, parts: tuple[str, ...]) -> _File:
        cached = self._digests.get(parts)
        return cached if cached is not None else self.read(parts)[1]

    def skill(self, parts: tuple[str, ...]) -> _Skill:
        """Read the skill in folder ``parts``: frontmatter, every file's digest and size.

        Raises:
            Skipped: what makes it unservable (frontmatter, a bound, an unreadable file).
        """
        skill_md = (*parts, SKILL_FILE)
        data, first, info = self.read(skill_md)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Skipped("is not UTF-8 text") from None
        frontmatter = parse_frontmatter(text)
        check_frontmatter(frontmatter, parts[-1])
        try:
            tree = self.walk(parts, self.limits.max_skill_files)
        except Unreadable as exc:
            raise Skipped(f"its folder {exc}") from None
        if tree.truncated:
            raise Skipped(f"the skill has more than {self.limits.max_skill_files} files")
        files = [first, *(self.file(path) for path in tree.files if path != skill_md)]
        total = sum(file.size for file in files)
        if total > self.limits.max_skill_size:
            raise Skipped(
                f"the skill's files total {total} bytes, over {self.limits.max_skill_size}"
            )
        modified = datetime.datetime.fromtimestamp(info.st_mtime, tz=datetime.UTC)
        return _Skill(
            parts=parts,
            uri=first.uri,
            frontmatter=frontmatter,
            files=tuple(files),
            folders=(parts, *tree.folders),
            modified=modified.isoformat().replace("+00:00", "Z"),
        )

    def skills(self) -> list[_Skill]:
        """Find and read every skill below the root, skipping (and noting) the bad ones."""
        found = sorted(path[:-1] for path in self.walk(()).files if path[-1] == SKILL_FILE)
        if found and not found[0]:
            self.note((SKILL_FILE,), "not served: the root holds no skill; put it in a folder")
            found = found[1:]
        if len(found) > self.limits.max_skills:
            self.note((), f"{len(found)} skills; serving the first {self.limits.max_skills}")
            found = found[: self.limits.max_skills]
        skills = []
        for parts in found:
            try:
                skills.append(self.skill(parts))
            except Skipped as exc:
                self.note((*parts, SKILL_FILE), f"skill skipped: {exc}")
        return skills


@dataclass(frozen=True, slots=True)
class _Catalog:
    """What one scan serves, indexed by exact URI string."""

    skills: tuple[_Skill, ...]
    by_uri: Mapping[str, _Skill]
    files: Mapping[str, _File]
    folders: Mapping[str, tuple[JsonObject, ...]]  # children, sorted by URI
    snapshot: str


def _catalog_of(skills: Iterable[_Skill]) -> _Catalog:
    ordered = tuple(sorted(skills, key=lambda skill: skill.uri))
    files: dict[str, _File] = {}
    children: dict[str, dict[str, JsonObject]] = {}

    def add_folder(parts: tuple[str, ...]) -> None:
        # Every level from the first segment down is a directory resource (SEP-2640 >
        # Directory Listing: the skill root and each subdirectory; prefixes are too).
        for depth in range(1, len(parts) + 1):
            uri = uri_of(parts[:depth])
            children.setdefault(uri, {})
            if depth > 1:
                entry: JsonObject = {
                    "uri": uri,
                    "name": parts[depth - 1],
                    "mimeType": DIRECTORY_MIME_TYPE,
                }
                children[uri_of(parts[: depth - 1])][uri] = entry

    for skill in ordered:
        for folder in skill.folders:
            add_folder(folder)
        for file in skill.files:
            files[file.uri] = file
            add_folder(file.parts[:-1])
            children[uri_of(file.parts[:-1])][file.uri] = {
                "uri": file.uri,
                "name": file.parts[-1],
                "mimeType": file.mime_type,
                "size": file.size,
            }
    folders = {uri: tuple(kids[key] for key in sorted(kids)) for uri, kids in children.items()}
    return _Catalog(
        skills=ordered,
        by_uri={skill.uri: skill for skill in ordered},
        files=files,
        folders=folders,
        snapshot=snapshot_of(skill.uri for skill in ordered),
    )


def _params(params: object, method: str) -> Mapping[str, object]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InvalidParams(f"{method} params must be an object; got {type(params).__name__}")
    return typing.cast("Mapping[str, object]", params)


def _cursor(params: Mapping[str, object], method: str) -> str | None:
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise InvalidParams(
            f"{method} cursor must be the string nextCursor of the previous page; "
            f"got {type(cursor).__name__}"
        )
    return cursor


@typing.final
class SkillDirectory:
    """A folder of Agent Skills served per SEP-2640; see the module docstring for the rules.

    Construction scans the folder; ``rescan`` scans it again (call it when files change).
    ``skills/get`` re-reads the one skill it is asked for, so its digests are current (the
    SEP: "Re-calling the method is how a host refreshes one skill's digests"); a skill that
    became invalid is then dropped. Files added since the last scan are not served until
    ``rescan``: a served file is always one some entry's ``resources`` lists.

    Args:
        root: the folder whose sub-folders (at any depth) are skills.
        max_file_size: bytes per file; a skill with a larger file is skipped.
        max_skills: skills served; beyond it, the first by path (the listing is partial).
        page_size: skills per ``skills/list`` page and children per directory page.
        cursor_codec: the server's codec, to sign cursors as its own lists do; by default
            one with a random secret.

    Raises:
        ValueError: ``root`` is not a folder, a bound is below 1, or PyYAML is missing.
    """

    __slots__ = ("_catalog", "_limits", "_paginator", "_problems", "_root")

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_file_size: int = 1 << 20,
        max_skills: int = 1000,
        page_size: int = 50,
        cursor_codec: CursorCodec | None = None,
    ) -> None:
        bounds = {
            "max_file_size": max_file_size,
            "max_skills": max_skills,
            "page_size": page_size,
        }
        for bound, value in bounds.items():
            if value < 1:
                raise ValueError(f"{bound} must be at least 1, not {value}")
        if yaml_module() is None:
            raise ValueError("serving skills reads YAML frontmatter: pip install 'trimcp[yaml]'")
        self._root = os.path.realpath(os.fspath(root))
        self._limits = _Limits(max_file_size, max_skills, _MAX_SKILL_FILES, _MAX_SKILL_SIZE)
        self._paginator = Paginator(cursor_codec or CursorCodec(), page_size)
        self._catalog = _catalog_of(())
        self._problems: tuple[str, ...] = ()
        self.rescan()

    @property
    def root(self) -> str:
        """The folder served, symlinks resolved."""
        return self._root

    @property
    def problems(self) -> tuple[str, ...]:
        """What the last scan left out and why, one line each (also logged as warnings)."""
        return self._problems

    @property
    def capability(self) -> JsonObject:
        """The settings under ``capabilities.extensions["io.modelcontextprotocol/skills"]``.

        The server must also declare ``resources`` (skill files are read with
        ``resources/read``; conformance ``sep-2640-capability-requires-resources``).
        """
        return {"directoryRead": True}

    def rescan(self) -> None:
        """Read the folder again: skills added, removed or edited. Old cursors go stale.

        Raises:
            ValueError: the root is no longer a folder (what was served stays served).
        """
        if not os.path.isdir(self._root):
            raise ValueError(f"the skills folder {self._root} does not exist or is not a folder")
        scanner = _Scanner(self._root, self._limits)
        try:
            skills = scanner.skills()
        except Unreadable as exc:
            raise ValueError(f"the skills folder {self._root} cannot be read: {exc}") from None
        self._catalog = _catalog_of(skills)
        self._problems = tuple(scanner.problems)
        for problem in self._problems:
            logger.warning("%s", problem)

    def owns(self, uri: str) -> bool:
        """Tell whether ``uri`` has the ``skill`` scheme, so ``resources/read`` routes here.

        By scheme, not by lookup: an unserved or hostile ``skill:`` URI then gets this
        module's -32602 saying why, rather than a generic not-found.
        """
        scheme, colon, _ = uri.partition(":")
        return bool(colon) and scheme.lower() == "skill"

    def list_skills(self, params: JsonObject | None) -> JsonObject:
        """Answer ``skills/list``: one page of entries, ``nextCursor`` while more remain.

        Raises:
            InvalidParams: params not an object, a cursor that is not one of ours or is
                stale (the skills changed since: list again from the start).
        """
        args = _params(params, SKILLS_LIST)
        catalog = self._catalog
        page = self._page(catalog.skills, _cursor(args, SKILLS_LIST), SKILLS_LIST, catalog.snapshot)
        result: JsonObject = {"skills": [skill.entry() for skill in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    def get_skill(self, params: JsonObject | None) -> JsonObject:
        """Answer ``skills/get``: ``{"skill": entry}`` for the ``SKILL.md`` URI given.

        Raises:
            InvalidParams: no string ``uri``, a cursor (a single entry is not a list), a
                hostile or unserved URI, or a skill that is no longer valid on disk.
        """
        args = _params(params, SKILLS_GET)
        if args.get("cursor") is not None:
            raise InvalidParams("skills/get takes no cursor: it returns one entry; pass only uri")
        uri = check_uri(args.get("uri"), "skills/get params.uri")
        catalog = self._catalog
        skill = catalog.by_uri.get(uri)
        if skill is None:
            raise InvalidParams(self._not_a_skill(uri))
        scanner = _Scanner(self._root, self._limits)
        try:
            fresh = scanner.skill(skill.parts)
        except (Skipped, Unreadable) as exc:
            logger.warning("%s: skill dropped: %s", os.path.join(self._root, *skill.parts), exc)
            self._catalog = _catalog_of(s for s in catalog.skills if s.uri != uri)
            raise InvalidParams(f"{shown(uri)} is no longer served: {exc}") from None
        if fresh != skill:
            self._catalog = _catalog_of(fresh if s.uri == uri else s for s in catalog.skills)
        return {"skill": fresh.entry()}

    def read_directory(self, params: JsonObject | None) -> JsonObject:
        """Answer ``resources/directory/read``: one page of a directory's direct children.

        Raises:
            InvalidParams: no string ``uri``, a hostile URI, a file or unknown URI (the SEP:
                -32602 for anything not a directory resource), a bad or stale cursor.
        """
        args = _params(params, DIRECTORY_READ)
        uri = check_uri(args.get("uri"), "resources/directory/read params.uri")
        catalog = self._catalog
        children = catalog.folders.get(uri)
        if children is None:
            if uri in catalog.files:
                raise InvalidParams(f"{shown(uri)} is a file, not a directory; read it instead")
            raise InvalidParams(f"{shown(uri)} is not a directory this server serves")
        snapshot = snapshot_of([uri, *(typing.cast("str", child["uri"]) for child in children)])
        page = self._page(children, _cursor(args, DIRECTORY_READ), DIRECTORY_READ, snapshot)
        result: JsonObject = {"resources": [dict(child) for child in page.items]}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    def read_resource(self, uri: str) -> list[JsonObject]:
        """Answer ``resources/read`` of a ``skill://`` file with its current bytes.

        UTF-8 text of a textual type is ``text``; anything else is a base64 ``blob``.

        Raises:
            InvalidParams: a hostile, unserved or directory URI, or a file that can no
                longer be read safely (swapped for a symlink, grown past max_file_size).
        """
        uri = check_uri(uri, "resources/read params.uri")
        file = self._catalog.files.get(uri)
        if file is None:
            if uri in self._catalog.folders:
                raise InvalidParams(f"{shown(uri)} is a directory; list it with {DIRECTORY_READ}")
            raise InvalidParams(self._not_served(uri))
        try:
            data, _ = read_regular(self._root, file.parts, self._limits.max_file_size)
        except Unreadable as exc:
            raise InvalidParams(f"{shown(uri)} cannot be read: it {exc}") from None
        if is_text(file.mime_type):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                return [ResourceContents(uri=uri, text=text, mime_type=file.mime_type).to_wire()]
        return [ResourceContents(uri=uri, blob=data, mime_type=file.mime_type).to_wire()]

    def resource_definitions(self) -> list[JsonObject]:
        """Return each skill's ``SKILL.md`` as a ``resources/list`` entry.

        The SEP does not require listing (Discovery: readable whether listed or not), but
        name and description on the resource are SHOULDs (Resource Metadata) that clients
        and the conformance suite (``sep-2640-skills-manifest``) see only through it.
        Supporting files and directories are left out: ``skills/list`` and
        ``resources/directory/read`` enumerate them without flooding ``resources/list``.
        """
        return [skill.resource() for skill in self._catalog.skills]

    def _page(self, items: Sequence[T], cursor: str | None, method: str, snapshot: str) -> Page[T]:
        try:
            return self._paginator.page(items, cursor, method=method, snapshot=snapshot)
        except InvalidCursor as exc:
            raise InvalidParams(f"{method}: {exc}; call it again without a cursor") from None

    def _not_served(self, uri: str) -> str:
        return (
            f"{shown(uri)} is not a file this server serves; skills/list and "
            f"{DIRECTORY_READ} show what is (files added since the last scan need a rescan)"
        )

    def _not_a_skill(self, uri: str) -> str:
        if uri in self._catalog.files:
            return (
                f"{shown(uri)} is a file but not the SKILL.md of a served skill; pass "
                "a uri from skills/list (a nested SKILL.md with bad frontmatter is a plain file)"
            )
        if f"{uri}/{SKILL_FILE}" in self._catalog.by_uri:
            return f"{shown(uri)} is a skill's folder; pass its SKILL.md, {uri}/{SKILL_FILE}"
        return f"{shown(uri)} is not a skill this server serves; skills/list shows them"
