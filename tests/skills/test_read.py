"""read_file and read_many_files against real files: lines compared with Python slicing,
encodings, media returned as media, binary files refused, large files read in part, output
caps that say where to continue."""

from __future__ import annotations

import base64
import codecs
import io
import re
import struct
import tempfile
import wave
import zlib
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import call, skills_client, text_of

# A line of text: no newline, no CR (shown without it), no NUL or other control characters
# (they make a file binary), no BOM (taken as the encoding mark at the start).
_LINE = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff", max_codepoint=0x2FFFF
    )
    | st.just("\t"),
    max_size=40,
)

_NUMBERED = re.compile(r"^ *(-?\d+)\t(.*)$", re.DOTALL)


def body(text: str) -> list[tuple[int, str]]:
    """The numbered lines of a read_file result (its header and notes left out)."""
    found = []
    for line in text.split("\n")[1:]:
        match = _NUMBERED.match(line)
        if match:
            found.append((int(match.group(1)), match.group(2)))
    return found


def lines_of(content: str) -> list[str]:
    """Lines as ``wc -l`` counts them: ended by \\n, a last one without it counted too."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


async def ok(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await call(client, tool, **arguments)
    assert result["isError"] is False, text_of(result)
    return result


async def error(client: Any, tool: str, **arguments: Any) -> str:
    result = await call(client, tool, **arguments)
    assert result["isError"] is True, text_of(result)
    return text_of(result)


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real PNG (RGB, 8 bits), built with zlib and struct."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def wav_bytes(frames: int = 800) -> bytes:
    """A real WAV (mono, 16 bits, 8 kHz) written with the ``wave`` module."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x01" * frames)
    return buffer.getvalue()


# --- lines ------------------------------------------------------------------------------------


async def test_read_file_numbers_lines_like_cat_n(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("one\ntwo\n\tthree\n")
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "read_file", path="a.txt"))
    assert text == "a.txt: lines 1-3 of 3\n     1\tone\n     2\ttwo\n     3\t\tthree"


async def test_read_file_without_line_numbers_and_without_final_newline(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("one\ntwo")
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "read_file", path="a.txt", line_numbers=False))
    assert text == "a.txt: lines 1-2 of 2\none\ntwo"


async def test_read_file_of_an_empty_file_and_past_the_end(jail_root: Path) -> None:
    (jail_root / "empty.txt").write_bytes(b"")
    (jail_root / "two.txt").write_text("a\nb\n")
    async with skills_client(jail_root) as client:
        assert "empty file (0 lines)" in text_of(await ok(client, "read_file", path="empty.txt"))
        past = text_of(await ok(client, "read_file", path="two.txt", offset=5))
    assert "offset 5 is past the last line (the file has 2 lines)" in past


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"head": 1, "tail": 1}, "head or tail, not both"),
        ({"head": 1, "offset": 2}, "cannot be combined with offset/limit"),
        ({"tail": 1, "limit": 2}, "cannot be combined with offset/limit"),
        ({"offset": 0}, "offset"),
        ({"limit": 0}, "limit"),
    ],
)
async def test_read_file_refuses_mixed_or_invalid_line_choices(
    jail_root: Path, arguments: dict[str, int], words: str
) -> None:
    (jail_root / "a.txt").write_text("a\n")
    async with skills_client(jail_root) as client:
        assert words in await error(client, "read_file", path="a.txt", **arguments)


_SLICES: st.SearchStrategy[dict[str, int]] = st.one_of(
    st.fixed_dictionaries({}),
    st.fixed_dictionaries({"head": st.integers(1, 30)}),
    st.fixed_dictionaries({"tail": st.integers(1, 30)}),
    st.fixed_dictionaries(
        {},
        optional={"offset": st.integers(1, 30), "limit": st.integers(1, 30)},
    ),
)


def _expected(lines: list[str], request: dict[str, int]) -> list[tuple[int, str]]:
    numbered = list(enumerate(lines, start=1))
    if "head" in request:
        return numbered[: request["head"]]
    if "tail" in request:
        return numbered[-request["tail"] :]
    start = request.get("offset", 1) - 1
    stop = start + request["limit"] if "limit" in request else None
    return numbered[start:stop]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=25),
    final_newline=st.booleans(),
    request=_SLICES,
    large=st.booleans(),
)
def test_read_file_lines_match_python_slicing(
    lines: list[str], final_newline: bool, request: dict[str, int], large: bool
) -> None:
    content = "\n".join(lines) + ("\n" if final_newline and lines else "")
    expected_lines = lines_of(content)
    # large: max_file_size=1, below the file's size, so the part is read by streaming.
    large = large and len(content.encode()) > 1

    async def scenario(root: Path) -> None:
        (root / "f.txt").write_text(content, encoding="utf-8")
        changes: dict[str, Any] = {"max_file_size": 1} if large else {}
        async with skills_client(root, **changes) as client:
            result = await call(client, "read_file", path="f.txt", **request)
        text = text_of(result)
        if large and not request:
            assert result["isError"] is True
            assert "max_file_size" in text
            return
        assert result["isError"] is False, text
        expected = _expected(expected_lines, request)
        shown = body(text)
        if large and "tail" in request:
            # Lines of a file too large to count are numbered back from the end.
            count = len(expected)
            expected = [(index - count, line) for index, (_, line) in enumerate(expected)]
        assert shown == expected
        if not large and expected:
            first, last = expected[0][0], expected[-1][0]
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            assert text.split("\n")[0] == f"f.txt: {span} of {len(expected_lines)}"

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 3000), min_size=1, max_size=20),
    numbers=st.booleans(),
)
def test_continuing_where_a_cut_result_says_reads_every_line(
    lengths: list[int], numbers: bool
) -> None:
    lines = [f"{index}:" + "x" * length for index, length in enumerate(lengths)]
    content = "\n".join(lines) + "\n"

    async def scenario(root: Path) -> None:
        (root / "f.txt").write_text(content)
        seen: dict[int, str] = {}
        async with skills_client(root, max_result_bytes=1024) as client:
            offset = 1
            for _ in range(len(lines) + 1):
                result = await ok(
                    client, "read_file", path="f.txt", offset=offset, line_numbers=numbers
                )
                text = text_of(result)
                assert len(text.encode()) <= 1024 + 300
                follow = re.search(r"offset=(\d+)\]", text)
                header = text.split("\n")[0]
                first = int(re.search(r"lines? (\d+)", header).group(1))  # type: ignore[union-attr]
                # Notes are bracketed; these lines ("N:xxx") never start with a bracket.
                shown = [line for line in text.split("\n")[1:] if not line.startswith("[")]
                for index, line in enumerate(shown, start=first):
                    seen[index] = line.split("\t", 1)[1] if numbers else line
                if not follow:
                    break
                assert int(follow.group(1)) > offset  # always moves on
                offset = int(follow.group(1))
        assert sorted(seen) == list(range(1, len(lines) + 1))
        for number, text in seen.items():
            original = lines[number - 1]
            if text.endswith("…"):
                assert original.startswith(text[:-1])
            else:
                assert text == original

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


async def test_a_cut_tail_shows_its_end_and_says_how_to_read_the_rest(jail_root: Path) -> None:
    lines = [f"line {index:04d} " + "y" * 40 for index in range(1, 201)]
    (jail_root / "f.txt").write_text("\n".join(lines) + "\n")
    async with skills_client(jail_root, max_result_bytes=1024) as client:
        text = text_of(await ok(client, "read_file", path="f.txt", tail=100))
    shown = body(text)
    assert shown[-1] == (200, lines[-1])
    assert [line for _, line in shown] == lines[shown[0][0] - 1 :]
    assert f"read them with offset=101, limit={shown[0][0] - 101}" in text


# --- encodings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "label"),
    [
        (codecs.BOM_UTF8 + "é\nz\n".encode(), None),
        (codecs.BOM_UTF16_LE + "é\nz\n".encode("utf-16-le"), "UTF-16 little-endian"),
        (codecs.BOM_UTF16_BE + "é\nz\n".encode("utf-16-be"), "UTF-16 big-endian"),
        (codecs.BOM_UTF32_LE + "é\nz\n".encode("utf-32-le"), "UTF-32 little-endian"),
        ("é\nz\n".encode("latin-1"), "latin-1"),
    ],
)
async def test_read_file_decodes_and_names_the_encoding(
    jail_root: Path, data: bytes, label: str | None
) -> None:
    (jail_root / "f.txt").write_bytes(data)
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "read_file", path="f.txt"))
    assert body(text) == [(1, "é"), (2, "z")]
    header = text.split("\n")[0]
    if label is None:
        assert "encoding" not in header
    else:
        assert f"encoding: {label}" in header


async def test_utf8_with_a_stray_byte_stays_utf8_and_crlf_is_said(jail_root: Path) -> None:
    (jail_root / "f.txt").write_bytes("naïve\r\n".encode() + b"bad \xff byte\r\n")
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "read_file", path="f.txt"))
    assert body(text) == [(1, "naïve"), (2, "bad \ufffd byte")]
    assert "UTF-8 with invalid bytes" in text.split("\n")[0]
    assert "CRLF" in text.split("\n")[0]


async def test_large_utf16_file_tail_and_offset(jail_root: Path) -> None:
    lines = [f"zeile {index} ü" for index in range(1, 3001)]
    data = codecs.BOM_UTF16_LE + ("\n".join(lines) + "\n").encode("utf-16-le")
    (jail_root / "f.txt").write_bytes(data)
    async with skills_client(jail_root, max_file_size=1024) as client:
        tail = text_of(await ok(client, "read_file", path="f.txt", tail=3))
        middle = text_of(await ok(client, "read_file", path="f.txt", offset=1500, limit=2))
    assert body(tail) == [(2998, lines[2997]), (2999, lines[2998]), (3000, lines[2999])]
    assert "of 3000" in tail.split("\n")[0]
    assert body(middle) == [(1500, lines[1499]), (1501, lines[1500])]


# --- large files ----------------------------------------------------------------------------------


_BIG_LINES = 20 * 1024 * 1024 // 13 + 1


@pytest.fixture
def big_log(jail_root: Path) -> Path:
    """jail/big.log: 20 MB of numbered lines ("line 0000001" ...), 13 bytes each."""
    path = jail_root / "big.log"
    path.write_bytes(b"".join(b"line %07d\n" % number for number in range(1, _BIG_LINES + 1)))
    return path


async def test_tail_head_and_offset_of_a_20_mb_file_with_a_1_mb_limit(big_log: Path) -> None:
    count = _BIG_LINES
    async with skills_client(big_log.parent, max_file_size=1024 * 1024) as client:
        tail = text_of(await ok(client, "read_file", path="big.log", tail=3))
        head = text_of(await ok(client, "read_file", path="big.log", head=2))
        middle = text_of(await ok(client, "read_file", path="big.log", offset=1_000_000, limit=2))
        end = text_of(await ok(client, "read_file", path="big.log", offset=count - 1, limit=5))
        whole = await error(client, "read_file", path="big.log")
    assert body(tail) == [
        (-3, f"line {count - 2:07d}"),
        (-2, f"line {count - 1:07d}"),
        (-1, f"line {count:07d}"),
    ]
    assert "numbered back from the end" in tail.split("\n")[0]
    assert body(head) == [(1, "line 0000001"), (2, "line 0000002")]
    assert "continue with offset=3" in head
    assert body(middle) == [(1_000_000, "line 1000000"), (1_000_001, "line 1000001")]
    assert body(end) == [(count - 1, f"line {count - 1:07d}"), (count, f"line {count:07d}")]
    assert f"of {count}" in end.split("\n")[0]
    assert str(count * 13) in whole
    assert "head" in whole
    assert "tail" in whole


async def test_tail_of_one_endless_line_shows_its_end(jail_root: Path) -> None:
    (jail_root / "one.txt").write_text("a" * 3_000_000 + "THE-END")
    async with skills_client(jail_root, max_file_size=1024 * 1024) as client:
        text = text_of(await ok(client, "read_file", path="one.txt", tail=1))
        head = text_of(await ok(client, "read_file", path="one.txt", head=1))
    assert text.split("\n")[1].endswith("aaaTHE-END")
    assert "only its end is shown" in text
    assert len(text.encode()) < 300 * 1024
    assert "only its start is shown" in head
    assert len(head.encode()) < 300 * 1024


# --- media and binary ---------------------------------------------------------------------------


async def test_images_and_audio_come_back_as_media(jail_root: Path) -> None:
    png, wav = png_bytes(), wav_bytes()
    (jail_root / "pic.png").write_bytes(png)
    (jail_root / "named-wrong.dat").write_bytes(png)
    (jail_root / "sound.wav").write_bytes(wav)
    async with skills_client(jail_root) as client:
        image = await ok(client, "read_file", path="pic.png")
        by_signature = await ok(client, "read_file", path="named-wrong.dat")
        audio = await ok(client, "read_file", path="sound.wav", head=3)
    for result, kind, mime, data in (
        (image, "image", "image/png", png),
        (by_signature, "image", "image/png", png),
        (audio, "audio", "audio/wav", wav),
    ):
        blocks = [block for block in result["content"] if block["type"] == kind]
        assert len(blocks) == 1
        assert blocks[0]["mimeType"] == mime
        assert base64.b64decode(blocks[0]["data"]) == data
    assert "apply to text only" in text_of(audio)


async def test_media_larger_than_max_media_size_is_refused(jail_root: Path) -> None:
    (jail_root / "pic.png").write_bytes(png_bytes(64, 64))
    async with skills_client(jail_root, max_media_size=50) as client:
        message = await error(client, "read_file", path="pic.png")
    assert "max_media_size" in message
    assert "PNG image" in message


async def test_binary_files_are_refused_with_size_and_type(jail_root: Path) -> None:
    (jail_root / "data.bin").write_bytes(b"\x00\x01\x02" * 100)
    (jail_root / "archive.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    (jail_root / "noise").write_bytes(bytes(range(1, 9)) * 40 + b"text")
    async with skills_client(jail_root) as client:
        plain = await error(client, "read_file", path="data.bin")
        archive = await error(client, "read_file", path="archive.zip")
        noise = await error(client, "read_file", path="noise")
    assert "binary file" in plain
    assert "300 bytes" in plain
    assert "file_info" in plain
    assert "ZIP archive" in archive
    assert "binary file" in noise


async def test_a_folder_is_not_read(jail_root: Path) -> None:
    (jail_root / "sub").mkdir()
    async with skills_client(jail_root) as client:
        assert "list_directory" in await error(client, "read_file", path="sub")
        assert "list_directory" in await error(client, "read_file", path=".")


# --- read_many_files ----------------------------------------------------------------------------


async def test_read_many_files_reads_each_and_reports_failures_inline(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("alpha\n")
    (jail_root / "b.txt").write_text("beta\ngamma\n")
    (jail_root / ".env").write_text("TOKEN=x\n")
    (jail_root / "pic.png").write_bytes(png_bytes())
    async with skills_client(jail_root) as client:
        result = await ok(
            client, "read_many_files", paths=["a.txt", "missing.txt", ".env", "b.txt", "pic.png"]
        )
    text = text_of(result)
    assert "==> a.txt (1 lines) <==\n     1\talpha" in text
    assert "==> b.txt (2 lines) <==\n     1\tbeta\n     2\tgamma" in text
    assert "==> missing.txt <==\n[not read: missing.txt does not exist]" in text
    assert "==> .env <==\n[not read: .env is blocked" in text
    assert "TOKEN" not in text
    images = [block for block in result["content"] if block["type"] == "image"]
    assert len(images) == 1
    assert base64.b64decode(images[0]["data"]) == png_bytes()


async def test_read_many_files_limits(jail_root: Path) -> None:
    for index in range(4):
        (jail_root / f"f{index}.txt").write_text("".join(f"{index}-{n}\n" for n in range(200)))
    async with skills_client(jail_root, max_read_files=3, max_result_bytes=2048) as client:
        too_many = await error(client, "read_many_files", paths=[f"f{i}.txt" for i in range(4)])
        none = await error(client, "read_many_files", paths=[])
        text = text_of(await ok(client, "read_many_files", paths=[f"f{i}.txt" for i in range(3)]))
    assert "max_read_files" in too_many
    assert "at least one" in none
    assert len(text.encode()) <= 2048 + 200
    cut = re.search(r"continue with read_file\(path=(\S+), offset=(\d+)\)", text)
    assert cut is not None
    assert "[not read: the output is full (max_result_bytes)" in text
