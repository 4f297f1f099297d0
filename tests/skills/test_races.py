"""A symlink swapped in between the jail's check and the write is not followed.

The inner steps of the write tools take a path the jail already accepted (``Resolved``), so
the race is reproduced exactly: resolve, then swap the parent folder for a symlink that leads
out, then run the step. Each must fail with ``PathRefused`` and leave the outside untouched.
Then the same through the tool itself while another thread flips a folder and a symlink as
fast as it can: whatever each call answers, nothing ever appears outside.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from trimcp.config import DEFAULT_BLOCKED_PATHS, DEFAULT_WRITE_BLOCKED_PATHS
from trimcp.errors import PathRefused
from trimcp.skills import Jail
from trimcp.skills._runtime import Progress
from trimcp.skills.jail import Resolved
from trimcp.skills.tools.write._copy import CopyLimits, copy_resolved
from trimcp.skills.tools.write._edit import edit_resolved
from trimcp.skills.tools.write._ops import (
    append_resolved,
    make_directory_resolved,
    write_resolved,
)
from trimcp.skills.tools.write._tree import delete_resolved, move_resolved

from .conftest import call, skills_client, text_of

SECRET = "TOP-SECRET-OUTSIDE-MARKER"


def snapshot(folder: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry below ``folder`` (and the folder's own mtime): kind, bytes, mtime."""
    seen: dict[str, tuple[Any, ...]] = {".": ("dir", folder.stat().st_mtime_ns)}
    for current, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(current, name)
            info = path.lstat()
            key = str(path.relative_to(folder))
            if stat.S_ISREG(info.st_mode):
                seen[key] = ("file", path.read_bytes(), info.st_mtime_ns)
            else:
                seen[key] = (stat.S_IFMT(info.st_mode), info.st_mtime_ns)
    return seen


@pytest.fixture
def setup(jail_root: Path) -> tuple[Jail, Path, Path]:
    """jail/sub/x.txt and jail/other.txt; outside/ holds files of the same names."""
    outside = jail_root.parent / "outside"
    (jail_root / "sub").mkdir()
    (jail_root / "sub" / "x.txt").write_text("inside\n")
    (jail_root / "sub" / "folder").mkdir()
    (jail_root / "other.txt").write_text("other\n")
    (outside / "x.txt").write_text(SECRET)
    (outside / "folder").mkdir()
    (outside / "folder" / "f.txt").write_text(SECRET)
    jail = Jail(
        [jail_root], blocked=DEFAULT_BLOCKED_PATHS, write_blocked=DEFAULT_WRITE_BLOCKED_PATHS
    )
    return jail, jail_root, outside


def swap_for_link(folder: Path, target: Path) -> None:
    """Replace ``folder`` by a symlink to ``target`` (the folder is kept aside)."""
    folder.rename(folder.with_name(folder.name + "-aside"))
    folder.symlink_to(target)


LIMITS = CopyLimits(max_file_size=1 << 20, max_visited=1000, max_total=1 << 24)

Step = Callable[[Jail, Resolved], object]

STEPS: dict[str, tuple[str, Step]] = {
    "write_file": (
        "sub/x.txt",
        lambda jail, r: write_resolved(r, b"pwned", overwrite=True, create_parents=False),
    ),
    "write_file new": (
        "sub/new.txt",
        lambda jail, r: write_resolved(r, b"pwned", overwrite=False, create_parents=True),
    ),
    "edit_file": (
        "sub/x.txt",
        lambda jail, r: edit_resolved(
            r,
            [{"old_text": SECRET, "new_text": "pwned"}],
            dry_run=False,
            max_file_size=1 << 20,
            max_result_bytes=4096,
        ),
    ),
    "append_file": ("sub/x.txt", lambda jail, r: append_resolved(r, b"pwned", create=True)),
    "make_directory": (
        "sub/made/deeper",
        lambda jail, r: make_directory_resolved(r, parents=True),
    ),
    "delete": (
        "sub/x.txt",
        lambda jail, r: delete_resolved(
            jail, r, recursive=False, max_visited=100, progress=Progress()
        ),
    ),
    "delete recursive": (
        "sub/folder",
        lambda jail, r: delete_resolved(
            jail, r, recursive=True, max_visited=100, progress=Progress()
        ),
    ),
    "move source": (
        "sub/x.txt",
        lambda jail, r: move_resolved(
            jail,
            r,
            jail.resolve("moved.txt", "write"),
            overwrite=False,
            max_visited=100,
            progress=Progress(),
        ),
    ),
    "move destination": (
        "sub/x.txt",
        lambda jail, r: move_resolved(
            jail,
            jail.resolve("other.txt", "write"),
            r,
            overwrite=True,
            max_visited=100,
            progress=Progress(),
        ),
    ),
    "copy source": (
        "sub/x.txt",
        lambda jail, r: copy_resolved(
            jail,
            r,
            jail.resolve("copied.txt", "write"),
            overwrite=False,
            recursive=False,
            limits=LIMITS,
            progress=Progress(),
        ),
    ),
    "copy destination": (
        "sub/x.txt",
        lambda jail, r: copy_resolved(
            jail,
            jail.resolve("other.txt", "read"),
            r,
            overwrite=True,
            recursive=False,
            limits=LIMITS,
            progress=Progress(),
        ),
    ),
    "copy folder destination": (
        "sub/folder",
        lambda jail, r: copy_resolved(
            jail,
            jail.resolve("src", "read"),
            r,
            overwrite=True,
            recursive=True,
            limits=LIMITS,
            progress=Progress(),
        ),
    ),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(
    setup: tuple[Jail, Path, Path], name: str
) -> None:
    jail, root, outside = setup
    (root / "src").mkdir()
    (root / "src" / "f.txt").write_text("copied\n")
    path, step = STEPS[name]
    resolved = jail.resolve(path, "write")
    before = snapshot(outside)
    swap_for_link(root / "sub", outside)
    with pytest.raises(PathRefused) as info:
        step(jail, resolved)
    assert SECRET not in str(info.value)
    assert str(outside) not in str(info.value)
    assert snapshot(outside) == before
    # Nothing was taken out of the jail either.
    assert not (root / "moved.txt").exists()
    assert (root / "other.txt").read_text() == "other\n"
    assert not (root / "copied.txt").exists()


def test_a_file_swapped_for_a_symlink_is_replaced_not_followed(
    setup: tuple[Jail, Path, Path],
) -> None:
    jail, root, outside = setup
    resolved = jail.resolve("sub/x.txt", "write")
    (root / "sub" / "x.txt").unlink()
    (root / "sub" / "x.txt").symlink_to(outside / "x.txt")
    before = snapshot(outside)
    with pytest.raises(PathRefused, match="symlink"):
        write_resolved(resolved, b"pwned", overwrite=True, create_parents=False)
    with pytest.raises(PathRefused, match="symlink"):
        append_resolved(resolved, b"pwned", create=True)
    with pytest.raises(PathRefused, match="symlink"):
        edit_resolved(
            resolved,
            [{"old_text": SECRET, "new_text": "x"}],
            dry_run=False,
            max_file_size=1024,
            max_result_bytes=4096,
        )
    with pytest.raises(PathRefused, match="symlink"):
        delete_resolved(jail, resolved, recursive=False, max_visited=10, progress=Progress())
    assert snapshot(outside) == before


def test_a_symlink_inside_a_tree_being_deleted_is_unlinked_not_followed(
    setup: tuple[Jail, Path, Path],
) -> None:
    jail, root, outside = setup
    resolved = jail.resolve("sub", "write")
    # Swapped in after the check: an inner folder becomes a symlink to outside.
    (root / "sub" / "folder").rmdir()
    (root / "sub" / "folder").symlink_to(outside / "folder")
    before = snapshot(outside)
    delete_resolved(jail, resolved, recursive=True, max_visited=100, progress=Progress())
    assert not (root / "sub").exists()
    assert snapshot(outside) == before


async def test_a_folder_flipping_with_a_symlink_never_lets_a_write_out(
    setup: tuple[Jail, Path, Path],
) -> None:
    _, root, outside = setup
    before = snapshot(outside)
    folder, aside = root / "sub", root / "sub-aside"
    stop = threading.Event()
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            folder.rename(aside)
            folder.symlink_to(outside)
            folder.unlink()
            aside.rename(folder)
            flips += 1
            started.set()

    started = threading.Event()
    flipper = threading.Thread(target=flip)
    answers = {"written": 0, "refused": 0}
    async with skills_client(root) as client:
        flipper.start()
        try:
            await trio.to_thread.run_sync(started.wait)
            for index in range(300):
                result = await call(
                    client, "write_file", path=f"sub/f{index}.txt", content=f"n{index}"
                )
                message = text_of(result)
                assert SECRET not in message
                assert "Error in tool" not in message
                answers["refused" if result["isError"] else "written"] += 1
                if not result["isError"]:
                    assert "created" in message
        finally:
            stop.set()
            flipper.join()
    assert flips > 0
    assert sum(answers.values()) == 300
    assert snapshot(outside) == before
    # Every write that succeeded landed in the real folder.
    assert len(list(folder.glob("f*.txt"))) == answers["written"]
