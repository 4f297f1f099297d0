"""A folder of Agent Skills served per SEP-2640: entries, pages, directories, reads, the jail."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.errors import InvalidParams
from trimcp.server import _agent_skills, _skill_jail
from trimcp.server._agent_skills import DIRECTORY_MIME_TYPE, EXTENSION_ID, SkillDirectory
from trimcp.server._skill_frontmatter import Skipped, parse_frontmatter

if TYPE_CHECKING:
    from pathlib import Path

MARKER = "MARKER-SECRET-8c1f2e"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# The conformance suite's probe for sep-2640-skills-get-unknown-uri-invalid-params.
UNKNOWN = "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md"


def skill_md(name: str, description: str = "Does a thing well", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def wire(value: object) -> Any:
    """Return ``value`` as a JSON reader sees it (and prove it is JSON: no NaN, str keys)."""
    return json.loads(json.dumps(value, allow_nan=False))


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file beside the root whose content must never come back."""
    return write(tmp_path, "outside/secret.txt", MARKER + "\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write(skills, "pdf-processing/SKILL.md", skill_md("pdf-processing", extra="license: MIT\n"))
    write(skills, "pdf-processing/references/FORMS.md", "# Forms\n")
    write(skills, "pdf-processing/scripts/extract.py", "print('hi')\n")
    write(skills, "pdf-processing/templates/invoice.md", "invoice\n")
    write(skills, "pdf-processing/templates/regional/eu-invoice.md", "eu\n")
    write(skills, "pdf-processing/assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\xff")
    write(skills, "acme/billing/refunds/SKILL.md", skill_md("refunds"))
    write(skills, "acme/billing/refunds/examples/email.md", "Dear customer\n")
    write(skills, "git-workflow/SKILL.md", skill_md("git-workflow"))
    return skills


def entries(directory: SkillDirectory) -> dict[str, dict[str, Any]]:
    result = wire(directory.list_skills({}))
    assert "nextCursor" not in result
    return {entry["uri"]: entry for entry in result["skills"]}


# --- construction ----------------------------------------------------------------------------


def test_capability_declares_directory_read(root: Path) -> None:
    assert EXTENSION_ID == "io.modelcontextprotocol/skills"
    assert SkillDirectory(root).capability == {"directoryRead": True}


def test_a_missing_root_or_a_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist or is not a folder"):
        SkillDirectory(tmp_path / "nope")
    write(tmp_path, "file", "x")
    with pytest.raises(ValueError, match="not a folder"):
        SkillDirectory(tmp_path / "file")
    with pytest.raises(ValueError, match="page_size must be at least 1"):
        SkillDirectory(tmp_path, page_size=0)


def test_without_pyyaml_construction_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_agent_skills, "yaml_module", lambda: None)
    with pytest.raises(ValueError, match=r"trimcp\[yaml\]"):
        SkillDirectory(tmp_path)


def test_an_empty_folder_serves_nothing(tmp_path: Path) -> None:
    directory = SkillDirectory(tmp_path)
    assert directory.list_skills({}) == {"skills": []}
    assert directory.resource_definitions() == []
    assert directory.problems == ()


# --- skills/list -----------------------------------------------------------------------------


def test_entries_carry_uri_verbatim_frontmatter_and_every_file(root: Path) -> None:
    listed = entries(SkillDirectory(root))
    assert list(listed) == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
    ]
    pdf = listed["skill://pdf-processing/SKILL.md"]
    assert pdf["frontmatter"] == {
        "name": "pdf-processing",
        "description": "Does a thing well",
        "license": "MIT",
    }
    uris = [resource["uri"] for resource in pdf["resources"]]
    assert uris[0] == pdf["uri"]  # SKILL.md first: the entry matching the skill's own uri
    assert sorted(uris[1:]) == uris[1:]
    assert set(uris) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets/logo.png",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/extract.py",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/regional/eu-invoice.md",
    }
    for resource in pdf["resources"]:
        relative = resource["uri"].removeprefix("skill://")
        data = (root / relative).read_bytes()
        assert resource["digest"] == digest(data)
        assert DIGEST.fullmatch(resource["digest"])
        assert resource["size"] == len(data)
    json.dumps(pdf)


def test_nested_skill_files_belong_to_the_enclosing_skill_too(tmp_path: Path) -> None:
    write(tmp_path, "outer/SKILL.md", skill_md("outer"))
    write(tmp_path, "outer/inner/SKILL.md", skill_md("inner"))
    write(tmp_path, "outer/inner/notes.md", "notes\n")
    listed = entries(SkillDirectory(tmp_path))
    outer = {r["uri"] for r in listed["skill://outer/SKILL.md"]["resources"]}
    inner = {r["uri"] for r in listed["skill://outer/inner/SKILL.md"]["resources"]}
    assert inner == {"skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"}
    assert outer == inner | {"skill://outer/SKILL.md"}


def test_pages_hold_whole_entries_and_cover_the_list_once(tmp_path: Path) -> None:
    names = [f"skill-{i}" for i in range(5)]
    for name in names:
        write(tmp_path, f"{name}/SKILL.md", skill_md(name))
        write(tmp_path, f"{name}/a.md", "a\n")
    directory = SkillDirectory(tmp_path, page_size=2)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        result = wire(directory.list_skills({} if cursor is None else {"cursor": cursor}))
        assert len(result["skills"]) <= 2
        for entry in result["skills"]:
            assert len(entry["resources"]) == 2  # never split across pages
            seen.append(entry["uri"])
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"skill://{name}/SKILL.md" for name in names]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"cursor": 3}, "cursor must be the string nextCursor"),
        ({"cursor": "garbage"}, "invalid cursor"),
        ([], "params must be an object"),
    ],
)
def test_bad_list_params_are_invalid_params(root: Path, params: Any, message: str) -> None:
    with pytest.raises(InvalidParams, match=message) as info:
        SkillDirectory(root).list_skills(params)
    assert info.value.code == -32602


def test_a_cursor_from_before_a_rescan_that_changed_the_skills_is_stale(root: Path) -> None:
    directory = SkillDirectory(root, page_size=1)
    cursor = wire(directory.list_skills(None))["nextCursor"]
    write(root, "new-skill/SKILL.md", skill_md("new-skill"))
    directory.rescan()
    with pytest.raises(InvalidParams, match=r"list again|without a cursor"):
        directory.list_skills({"cursor": cursor})


# --- skills/get ------------------------------------------------------------------------------


def test_get_returns_the_listed_entry_and_no_cursor(root: Path) -> None:
    directory = SkillDirectory(root, page_size=1)
    listed = entries(SkillDirectory(root))
    for uri, entry in listed.items():
        result = directory.get_skill({"uri": uri})
        assert result == {"skill": entry}
        assert "nextCursor" not in result


def test_get_of_an_unknown_skill_is_invalid_params(root: Path) -> None:
    with pytest.raises(InvalidParams, match="not a skill this server serves") as info:
        SkillDirectory(root).get_skill({"uri": UNKNOWN})
    assert info.value.code == -32602


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "must be a string"),
        ({"uri": 5}, "must be a string"),
        ({"uri": "skill://git-workflow/SKILL.md", "cursor": "x"}, "takes no cursor"),
        ({"uri": "skill://pdf-processing/templates/invoice.md"}, "not the SKILL.md"),
        ({"uri": "skill://pdf-processing"}, "skill://pdf-processing/SKILL.md"),
        ("nope", "params must be an object"),
    ],
)
def test_get_says_what_is_wrong(root: Path, params: Any, message: str) -> None:
    with pytest.raises(InvalidParams, match=re.escape(message)):
        SkillDirectory(root).get_skill(params)


def test_get_rereads_the_skill_so_its_digests_are_current(root: Path) -> None:
    directory = SkillDirectory(root)
    uri = "skill://pdf-processing/SKILL.md"
    write(root, "pdf-processing/templates/invoice.md", "changed\n")
    write(root, "pdf-processing/templates/new.md", "new\n")
    resources = wire(directory.get_skill({"uri": uri}))["skill"]["resources"]
    by_uri = {r["uri"]: r["digest"] for r in resources}
    assert by_uri["skill://pdf-processing/templates/invoice.md"] == digest(b"changed\n")
    assert "skill://pdf-processing/templates/new.md" in by_uri
    listed = entries(directory)[uri]["resources"]
    assert {r["uri"]: r["digest"] for r in listed} == by_uri
    assert directory.read_resource("skill://pdf-processing/templates/new.md")[0]["text"] == "new\n"


def test_get_of_a_skill_broken_since_the_scan_drops_it(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = SkillDirectory(root)
    write(root, "git-workflow/SKILL.md", "no frontmatter any more\n")
    with caplog.at_level(logging.WARNING), pytest.raises(InvalidParams, match="no longer served"):
        directory.get_skill({"uri": "skill://git-workflow/SKILL.md"})
    assert "git-workflow" in caplog.text
    assert "skill://git-workflow/SKILL.md" not in entries(directory)


# --- resources/directory/read ----------------------------------------------------------------


def test_a_skill_root_lists_its_direct_children(root: Path) -> None:
    result = wire(SkillDirectory(root).read_directory({"uri": "skill://pdf-processing"}))
    assert "nextCursor" not in result
    children = {child["uri"]: child for child in result["resources"]}
    assert set(children) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets",
        "skill://pdf-processing/references",
        "skill://pdf-processing/scripts",
        "skill://pdf-processing/templates",
    }
    assert children["skill://pdf-processing/templates"] == {
        "uri": "skill://pdf-processing/templates",
        "name": "templates",
        "mimeType": DIRECTORY_MIME_TYPE,
    }
    assert children["skill://pdf-processing/SKILL.md"]["mimeType"] == "text/markdown"


def test_subdirectories_and_prefix_levels_are_directories(root: Path) -> None:
    directory = SkillDirectory(root)
    templates = wire(directory.read_directory({"uri": "skill://pdf-processing/templates"}))
    assert [child["name"] for child in templates["resources"]] == ["invoice.md", "regional"]
    acme = directory.read_directory({"uri": "skill://acme"})
    assert acme["resources"] == [
        {"uri": "skill://acme/billing", "name": "billing", "mimeType": DIRECTORY_MIME_TYPE}
    ]


def test_an_empty_directory_has_no_children(root: Path) -> None:
    (root / "git-workflow" / "empty").mkdir()
    result = SkillDirectory(root).read_directory({"uri": "skill://git-workflow/empty"})
    assert result == {"resources": []}


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("skill://pdf-processing/SKILL.md", "is a file, not a directory"),
        ("skill://pdf-processing/nothing", "not a directory this server serves"),
        ("skill://pdf-processing/", "empty segment"),
        (None, "must be a string"),
    ],
)
def test_directory_read_of_a_non_directory_is_invalid_params(
    root: Path, uri: object, message: str
) -> None:
    with pytest.raises(InvalidParams, match=message) as info:
        SkillDirectory(root).read_directory(wire({"uri": uri}))
    assert info.value.code == -32602


def test_directory_pages_round_trip_and_cursors_are_per_directory(root: Path) -> None:
    directory = SkillDirectory(root, page_size=2)
    uri = "skill://pdf-processing"
    names: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"uri": uri} if cursor is None else {"uri": uri, "cursor": cursor}
        result = wire(directory.read_directory(params))
        names.extend(child["name"] for child in result["resources"])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["SKILL.md", "assets", "references", "scripts", "templates"]
    first = directory.read_directory({"uri": uri})["nextCursor"]
    with pytest.raises(InvalidParams, match="invalid cursor"):
        directory.read_directory({"uri": "skill://pdf-processing/templates", "cursor": first})


# --- resources/read and resources/list -------------------------------------------------------


def test_reads_text_as_text_and_binary_as_base64(root: Path) -> None:
    directory = SkillDirectory(root)
    [text] = directory.read_resource("skill://pdf-processing/scripts/extract.py")
    assert text == {
        "uri": "skill://pdf-processing/scripts/extract.py",
        "mimeType": "text/x-python",
        "text": "print('hi')\n",
    }
    [blob] = directory.read_resource("skill://pdf-processing/assets/logo.png")
    assert blob["mimeType"] == "image/png"
    assert base64.b64decode(wire(blob["blob"])) == b"\x89PNG\r\n\x1a\n\x00\xff"
    [skill] = directory.read_resource("skill://git-workflow/SKILL.md")
    assert skill["mimeType"] == "text/markdown"
    assert skill["text"] == skill_md("git-workflow")


def test_text_types_that_are_not_utf8_and_unknown_types_are_blobs(tmp_path: Path) -> None:
    write(tmp_path, "s/SKILL.md", skill_md("s"))
    write(tmp_path, "s/latin.txt", "caf\xe9".encode("latin-1"))
    write(tmp_path, "s/data.unknownext", b"abc")
    directory = SkillDirectory(tmp_path)
    [latin] = directory.read_resource("skill://s/latin.txt")
    assert (latin["mimeType"], "blob" in latin) == ("text/plain", True)
    [data] = directory.read_resource("skill://s/data.unknownext")
    assert (data["mimeType"], data["blob"]) == ("application/octet-stream", "YWJj")


def test_reading_a_directory_points_at_directory_read(root: Path) -> None:
    with pytest.raises(InvalidParams, match="resources/directory/read"):
        SkillDirectory(root).read_resource("skill://pdf-processing/templates")


def test_names_outside_the_safe_set_are_percent_encoded_and_readable(tmp_path: Path) -> None:
    write(tmp_path, "Team Docs:v1/s/SKILL.md", skill_md("s"))
    write(tmp_path, "Team Docs:v1/s/My Notes é.md", "notes\n")
    directory = SkillDirectory(tmp_path)
    assert list(entries(directory)) == ["skill://Team%20Docs%3Av1/s/SKILL.md"]
    uri = "skill://Team%20Docs%3Av1/s/My%20Notes%20%C3%A9.md"
    assert directory.read_resource(uri)[0]["text"] == "notes\n"
    with pytest.raises(InvalidParams, match="canonical form"):
        directory.read_resource(uri.replace("%C3%A9", "%c3%a9"))


def test_resource_definitions_are_the_skill_md_files(root: Path) -> None:
    definitions = SkillDirectory(root).resource_definitions()
    assert [d["uri"] for d in definitions] == list(entries(SkillDirectory(root)))
    [refunds, *_] = definitions
    assert refunds["name"] == "refunds"
    assert refunds["description"] == "Does a thing well"
    assert refunds["mimeType"] == "text/markdown"
    json.dumps(definitions)


def test_owns_goes_by_scheme(root: Path) -> None:
    directory = SkillDirectory(root)
    assert directory.owns("skill://anything/at/all")
    assert directory.owns("SKILL://x")
    assert not directory.owns("file:///etc/passwd")
    assert not directory.owns("skills://x")
    assert not directory.owns("no scheme")


# --- rescan ----------------------------------------------------------------------------------


def test_rescan_sees_skills_added_removed_and_edited(root: Path) -> None:
    directory = SkillDirectory(root)
    before = entries(directory)
    write(root, "new-skill/SKILL.md", skill_md("new-skill"))
    (root / "git-workflow" / "SKILL.md").unlink()
    write(root, "acme/billing/refunds/examples/email.md", "Dear valued customer\n")
    directory.rescan()
    after = entries(directory)
    assert "skill://new-skill/SKILL.md" in after
    assert "skill://git-workflow/SKILL.md" not in after
    old = before["skill://acme/billing/refunds/SKILL.md"]["resources"]
    new = after["skill://acme/billing/refunds/SKILL.md"]["resources"]
    assert old != new
    with pytest.raises(InvalidParams, match="not a file this server serves"):
        directory.read_resource("skill://git-workflow/SKILL.md")


def test_a_file_added_after_the_scan_is_served_only_after_a_rescan(root: Path) -> None:
    directory = SkillDirectory(root)
    write(root, "git-workflow/late.md", "late\n")
    with pytest.raises(InvalidParams, match="need a rescan"):
        directory.read_resource("skill://git-workflow/late.md")
    directory.rescan()
    assert directory.read_resource("skill://git-workflow/late.md")[0]["text"] == "late\n"


def test_rescan_of_a_vanished_root_raises_and_keeps_serving(root: Path) -> None:
    directory = SkillDirectory(root)
    moved = root.with_name("moved")
    root.rename(moved)
    with pytest.raises(ValueError, match="does not exist"):
        directory.rescan()
    assert len(entries(directory)) == 3


# --- the jail: hostile URIs ------------------------------------------------------------------

HOSTILE = [
    ("skill://pdf-processing/../git-workflow/SKILL.md", "'..' segment"),
    ("skill://pdf-processing/./SKILL.md", "'.' or '..' segment"),
    ("skill://../outside/secret.txt", "'..' segment"),
    ("skill://pdf-processing/%2e%2e/%2e%2e/outside/secret.txt", "percent-encoded '.' or '..'"),
    ("skill://pdf-processing/%2E%2E/SKILL.md", "percent-encoded '.' or '..'"),
    ("skill://%2e%2e/outside/secret.txt", "percent-encoded '.' or '..'"),
    ("skill://pdf-processing/..%2f..%2foutside", "percent-encoded '/'"),
    ("skill://pdf-processing/..%5C..%5Coutside", "percent-encoded '/' or '\\'"),
    ("skill://pdf-processing\\..\\SKILL.md", "backslash"),
    ("skill://pdf-processing/SKILL.md\x00.png", "NUL"),
    ("skill://pdf-processing/%00", "control character"),
    ("skill:///etc/passwd", "no skill path"),
    ("skill://", "no skill path"),
    ("skill://pdf-processing//SKILL.md", "empty segment"),
    ("skill://pdf-processing/SKILL.md/", "empty segment"),
    ("skill://pdf-processing/SKILL.md?x=1", "query"),
    ("skill://pdf-processing/SKILL.md#top", "fragment"),
    ("skill://pdf-processing/SKILL .md", "percent-encoded"),
    ("skill://pdf-processing/%zz", "two hex digits"),
    ("skill://pdf-processing/%ff", "not UTF-8"),
    ("skill://pdf-%70rocessing/SKILL.md", "canonical form"),
    ("file:///etc/passwd", "not a skill:// URI"),
    ("/etc/passwd", "not a skill:// URI"),
    ("skill:pdf-processing/SKILL.md", "not a skill:// URI"),
    ("skill://" + "a/" * 3000 + "b", "longer than"),
]


@pytest.mark.parametrize(("uri", "message"), HOSTILE)
def test_hostile_uris_are_refused_with_a_reason(root: Path, uri: str, message: str) -> None:
    directory = SkillDirectory(root)
    for call in (
        directory.read_resource,
        lambda u: directory.get_skill({"uri": u}),
        lambda u: directory.read_directory({"uri": u}),
    ):
        with pytest.raises(InvalidParams, match=re.escape(message)) as info:
            call(uri)
        assert info.value.code == -32602


# --- the jail: symlinks, special files, sizes ------------------------------------------------


def test_symlinks_leading_out_are_not_served(
    root: Path, outside: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (root / "git-workflow" / "id_rsa.example").symlink_to(outside)
    (root / "git-workflow" / "docs").symlink_to(outside.parent, target_is_directory=True)
    (root / "escape").symlink_to(outside.parent, target_is_directory=True)
    (root / "git-workflow" / "inner").symlink_to(root / "acme", target_is_directory=True)
    with caplog.at_level(logging.WARNING):
        directory = SkillDirectory(root)
    uris = {r["uri"] for r in entries(directory)["skill://git-workflow/SKILL.md"]["resources"]}
    assert uris == {"skill://git-workflow/SKILL.md"}
    assert "id_rsa.example: not served: leads outside the skills folder" in caplog.text
    assert "docs: not served: leads outside the skills folder" in caplog.text
    assert "inner: not served: a symlink to a folder" in caplog.text
    for uri in ("skill://git-workflow/id_rsa.example", "skill://git-workflow/docs/secret.txt"):
        with pytest.raises(InvalidParams, match="not a file this server serves"):
            directory.read_resource(uri)
    with pytest.raises(InvalidParams):
        directory.read_directory({"uri": "skill://escape"})


def test_a_symlink_that_stays_inside_is_served_with_its_targets_bytes(root: Path) -> None:
    (root / "git-workflow" / "forms.md").symlink_to(
        root / "pdf-processing" / "references" / "FORMS.md"
    )
    directory = SkillDirectory(root)
    assert directory.read_resource("skill://git-workflow/forms.md")[0]["text"] == "# Forms\n"
    uris = {r["uri"] for r in entries(directory)["skill://git-workflow/SKILL.md"]["resources"]}
    assert "skill://git-workflow/forms.md" in uris


def test_a_file_swapped_for_an_outward_symlink_after_the_scan_is_refused(
    root: Path, outside: Path
) -> None:
    directory = SkillDirectory(root)
    target = root / "pdf-processing" / "references" / "FORMS.md"
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(InvalidParams, match="leads outside") as info:
        directory.read_resource("skill://pdf-processing/references/FORMS.md")
    assert MARKER not in str(info.value)


def test_a_folder_swapped_for_an_outward_symlink_after_the_scan_is_refused(
    root: Path, outside: Path
) -> None:
    directory = SkillDirectory(root)
    write(outside.parent, "FORMS.md", MARKER)
    references = root / "pdf-processing" / "references"
    (references / "FORMS.md").unlink()
    references.rmdir()
    references.symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(InvalidParams, match="leads outside"):
        directory.read_resource("skill://pdf-processing/references/FORMS.md")


def test_a_swap_between_the_containment_check_and_the_open_is_not_followed(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race the O_NOFOLLOW walk closes: realpath saw the old tree, open sees the new."""
    directory = SkillDirectory(root)
    monkeypatch.setattr(_skill_jail, "real_parts", lambda _root, parts: tuple(parts))
    write(outside.parent, "FORMS.md", MARKER)
    references = root / "pdf-processing" / "references"
    (references / "FORMS.md").unlink()
    (references / "FORMS.md").symlink_to(outside)
    with pytest.raises(InvalidParams, match="changed since the scan"):
        directory.read_resource("skill://pdf-processing/references/FORMS.md")
    (references / "FORMS.md").unlink()
    references.rmdir()
    references.symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(InvalidParams, match="changed since the scan"):
        directory.read_resource("skill://pdf-processing/references/FORMS.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_are_not_served_at_scan_nor_after_a_swap(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    os.mkfifo(root / "git-workflow" / "pipe")
    with caplog.at_level(logging.WARNING):
        directory = SkillDirectory(root)
    assert "pipe: not served: not a regular file" in caplog.text
    script = root / "pdf-processing" / "scripts" / "extract.py"
    script.unlink()
    os.mkfifo(script)
    with pytest.raises(InvalidParams, match="is a FIFO, not a regular file"):
        directory.read_resource("skill://pdf-processing/scripts/extract.py")


def test_a_skill_with_an_oversize_file_is_skipped_and_named(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(root, "pdf-processing/assets/big.bin", b"x" * 2000)
    with caplog.at_level(logging.WARNING):
        directory = SkillDirectory(root, max_file_size=1000)
    assert "skill://pdf-processing/SKILL.md" not in entries(directory)
    assert "pdf-processing/assets/big.bin is 2000 bytes, over max_file_size (1000)" in caplog.text
    assert len(entries(directory)) == 2


def test_a_file_grown_past_the_limit_after_the_scan_is_refused(root: Path) -> None:
    directory = SkillDirectory(root, max_file_size=1000)
    write(root, "pdf-processing/templates/invoice.md", "x" * 1001)
    with pytest.raises(InvalidParams, match=r"1001 bytes, over max_file_size \(1000\)"):
        directory.read_resource("skill://pdf-processing/templates/invoice.md")


def test_hidden_entries_and_a_skill_md_in_the_root_are_not_served(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(root, ".git/config", "x")
    write(root, "git-workflow/.env", "TOKEN=1")
    write(root, ".hidden-skill/SKILL.md", skill_md("hidden-skill"))
    write(root, "SKILL.md", skill_md("root"))
    with caplog.at_level(logging.WARNING):
        directory = SkillDirectory(root)
    assert len(entries(directory)) == 3
    uris = {r["uri"] for r in entries(directory)["skill://git-workflow/SKILL.md"]["resources"]}
    assert uris == {"skill://git-workflow/SKILL.md"}
    assert "the root holds no skill" in caplog.text


# --- bad frontmatter -------------------------------------------------------------------------

BAD_SKILLS = [
    ("no frontmatter\n", "does not begin with a '---' line"),
    ("---\nname: bad\n---\n", "no description"),
    ("---\nname: bad\ndescription: ''\n---\n", "no description"),
    ("---\nname: other\ndescription: d\n---\n", "differs from its folder 'bad'"),
    ("---\ndescription: d\n---\n", "frontmatter name None"),
    ("---\nname: [bad\ndescription: d\n---\n", "not valid YAML"),
    ("---\nname: bad\ndescription: &a d\nx: *a\n---\n", "YAML alias"),
    ("---\nname: bad\nname: bad\ndescription: d\n---\n", "key 'name' twice"),
    ("---\nname: bad\ndescription: d\n1: x\n---\n", "not a string"),
    ("---\nname: bad\ndescription: d\nx: .inf\n---\n", "JSON cannot carry"),
    ("---\nname: bad\ndescription: d\nx: !!binary aGk=\n---\n", "YAML tag"),
    ("---\n- a\n- b\n---\n", "not a mapping"),
    ("---\n\n---\n", "frontmatter is empty"),
    ("---\nname: bad\ndescription: d\x1f\n---\n", "not valid YAML"),
    ("---\n# only a comment\n---\n", "frontmatter is empty"),
    ("---\nname: bad\ndescription: " + "d" * 1025 + "\n---\n", "longer than 1024"),
    (b"---\nname: bad\ndescription: \xff\n---\n", "not UTF-8"),
    ("---\nname: bad\ndescription: d\nx: " + "[" * 40 + "]" * 40 + "\n---\n", "deeper than 32"),
    ("---\nname: bad\ndescription: d\nx: " + "[" * 9000 + "]" * 9000 + "\n---\n", "too deep"),
    ("---\nname: bad\ndescription: d\nx: " + "9" * 5000 + "\n---\n", "too long"),
    ("---\nname: bad\ndescription: d\nx: 1e999\n---\n", "too large for JSON"),
    ("---\nname: bad\ndescription: d\nx: '" + "y" * 70000 + "'\n---\n", "longer than 65536"),
]


@pytest.mark.parametrize(("content", "message"), BAD_SKILLS)
def test_bad_frontmatter_skips_only_that_skill_with_a_warning(
    root: Path, content: str | bytes, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(root, "bad/SKILL.md", content)
    with caplog.at_level(logging.WARNING):
        directory = SkillDirectory(root)
    assert len(entries(directory)) == 3
    [problem] = directory.problems
    assert problem.startswith(f"{path}: skill skipped: ")
    assert message in problem
    assert problem in caplog.text


def test_an_invalid_skill_name_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "Bad--Name/SKILL.md", skill_md("Bad--Name"))
    directory = SkillDirectory(tmp_path)
    assert entries(directory) == {}
    assert "is not 1-64 of a-z" in directory.problems[0]


def test_frontmatter_is_yaml_1_2_core_as_the_conformance_suite_reads_it() -> None:
    text = (
        "---\nname: n\ndescription: d\nflag: yes\noctal: 010\nlate: 0o17\nwhen: 2024-01-01\n"
        "neg: -0\nnothing:\nlist: [a, 1, true]\nnested:\n  k: v\n---\nbody\n"
    )
    frontmatter = parse_frontmatter("\ufeff" + text)
    assert frontmatter == {
        "name": "n",
        "description": "d",
        "flag": "yes",
        "octal": 10,
        "late": 15,
        "when": "2024-01-01",
        "neg": -0.0,
        "nothing": None,
        "list": ["a", 1, True],
        "nested": {"k": "v"},
    }
    assert json.dumps(frontmatter["neg"]) == "-0.0"


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_any_frontmatter_text_parses_or_is_skipped_with_a_reason(body: str) -> None:
    try:
        value = parse_frontmatter(f"---\n{body}\n---\n")
    except Skipped as exc:
        reason = str(exc)
        assert reason
    else:
        wire(value)


# --- limits ----------------------------------------------------------------------------------


def test_max_skills_serves_the_first_and_says_so(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write(tmp_path, f"{name}/SKILL.md", skill_md(name))
    directory = SkillDirectory(tmp_path, max_skills=2)
    assert list(entries(directory)) == ["skill://a/SKILL.md", "skill://b/SKILL.md"]
    assert any("3 skills; serving the first 2" in p for p in directory.problems)
    with pytest.raises(InvalidParams):
        directory.get_skill({"uri": "skill://c/SKILL.md"})


def test_skills_over_the_file_count_or_total_size_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_agent_skills, "_MAX_SKILL_FILES", 3)
    monkeypatch.setattr(_agent_skills, "_MAX_SKILL_SIZE", 500)
    write(tmp_path, "many/SKILL.md", skill_md("many"))
    for i in range(3):
        write(tmp_path, f"many/f{i}.md", "x")
    write(tmp_path, "large/SKILL.md", skill_md("large"))
    write(tmp_path, "large/big.md", "x" * 450)
    write(tmp_path, "fine/SKILL.md", skill_md("fine"))
    directory = SkillDirectory(tmp_path)
    assert list(entries(directory)) == ["skill://fine/SKILL.md"]
    problems = "\n".join(directory.problems)
    assert "many/SKILL.md: skill skipped: the skill has more than 3 files" in problems
    assert "large/SKILL.md: skill skipped: the skill's files total" in problems


def test_the_walk_is_bounded_in_entries_and_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_agent_skills, "_MAX_DEPTH", 2)
    write(tmp_path, "a/b/deep/SKILL.md", skill_md("deep"))
    write(tmp_path, "ok/SKILL.md", skill_md("ok"))
    directory = SkillDirectory(tmp_path)
    assert list(entries(directory)) == ["skill://ok/SKILL.md"]
    assert any("deeper than 2 folders" in p for p in directory.problems)
    monkeypatch.setattr(_agent_skills, "_MAX_WALK_ENTRIES", 2)
    for i in range(5):
        write(tmp_path, f"z{i}.txt", "x")
    directory.rescan()
    assert any("more than 2 entries" in p for p in directory.problems)


# --- property: nothing outside the root, only InvalidParams --------------------------------


@pytest.fixture(scope="module")
def jailed(tmp_path_factory: pytest.TempPathFactory) -> SkillDirectory:
    base = tmp_path_factory.mktemp("jail")
    write(base, "secret.txt", MARKER)
    write(base, "outside/SKILL.md", f"---\nname: outside\ndescription: {MARKER}\n---\n")
    skills = base / "skills"
    write(skills, "s/SKILL.md", skill_md("s"))
    write(skills, "s/ref/a.md", "a\n")
    write(skills, "acme/t/SKILL.md", skill_md("t"))
    (skills / "s" / "leak.md").symlink_to(base / "secret.txt")
    (skills / "s" / "out").symlink_to(base / "outside", target_is_directory=True)
    (skills / "outside").symlink_to(base / "outside", target_is_directory=True)
    return SkillDirectory(skills)


PIECES = [
    "skill://", "skill:", "file://", "/", "//", ".", "..", "%2e", "%2E", "%2f", "%2F", "%5c",
    "%00", "%", "\\", "\x00", "?", "#", "s", "SKILL.md", "ref", "a.md", "leak.md", "out",
    "outside", "secret.txt", "acme", "t", "~", "%25", "é", " ",
]  # fmt: skip
URIS = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.lists(st.sampled_from(PIECES), max_size=10).map(lambda parts: "skill://" + "".join(parts)),
)


@settings(max_examples=300, deadline=None)
@given(URIS)
def test_any_uri_reads_a_file_inside_or_is_invalid_params(jailed: SkillDirectory, uri: str) -> None:
    jailed.owns(uri)
    served = os.path.realpath(jailed.root) + os.sep
    for call in (
        jailed.read_resource,
        lambda u: jailed.get_skill({"uri": u}),
        lambda u: jailed.read_directory({"uri": u}),
    ):
        try:
            result = call(uri)
        except InvalidParams as exc:
            message = str(exc)
            assert MARKER not in message
            continue
        text = json.dumps(result)
        assert MARKER not in text
        assert base64.b64encode(MARKER.encode()).decode() not in text
        if isinstance(result, list):
            [contents] = result
            assert contents["uri"] == uri
            path = os.path.realpath(os.path.join(jailed.root, *uri[8:].split("/")))
            assert path.startswith(served)
