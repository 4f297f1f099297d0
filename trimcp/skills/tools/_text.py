"""Is a file text, and in which encoding: the guess ``read_file`` and ``file_info`` share.

The order of the checks matters. A byte order mark decides first (UTF-32 before UTF-16,
whose mark is a prefix of UTF-32's little-endian one), because UTF-16 text is full of NUL
bytes. Then a NUL byte in the first 8 KiB means binary — the test ``git`` and GNU ``grep``
use. Then UTF-8: valid UTF-8 is UTF-8. Text that is not valid UTF-8 is shown as UTF-8 with
the bad bytes replaced when it holds valid multi-byte sequences too (a UTF-8 file with a
stray byte), as latin-1 when it does not (latin-1 decodes every byte, so the guess never
fails). Either way, a file is called binary when more than 10% of its first 8 KiB are
control characters no text uses. Lines end at ``\\n`` (as ``wc -l`` and ``cat -n`` count
them); a ``\\r`` before it is part of the line ending, not of the line.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = [
    "SAMPLE_SIZE",
    "Decoded",
    "Encoding",
    "count_lines",
    "decode_whole",
    "detect",
    "split_lines",
]

#: Bytes looked at to tell text from binary.
SAMPLE_SIZE = 8192

# The bytes that are not control characters text holds: everything but C0 controls and DEL,
# except tab, the line breaks, form feed and ESC (ANSI colours in logs); deleting these from
# a sample (``bytes.translate``, at C speed) leaves the controls to count.
_NOT_CONTROL = bytes(
    byte for byte in range(256) if (byte >= 0x20 and byte != 0x7F) or byte in b"\t\n\v\f\r\x1b"
)
# More than this share of control bytes makes a file binary, whatever its encoding.
_CONTROL_SHARE = 0.10

_BOMS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 little-endian (by its byte order mark)"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 big-endian (by its byte order mark)"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 little-endian (by its byte order mark)"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 big-endian (by its byte order mark)"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8 with a byte order mark"),
)


@dataclass(frozen=True, slots=True)
class Encoding:
    """How to decode a text file.

    Attributes:
        codec: the Python codec (explicit byte order, so a BOM is not expected again).
        bom: bytes of byte order mark to skip at the start.
        label: the encoding in words, for the header.
        plain_utf8: UTF-8 (with or without BOM), the case the header does not mention.
    """

    codec: str
    bom: int
    label: str
    plain_utf8: bool

    @property
    def bytewise_newlines(self) -> bool:
        """Whether ``\\n`` is the byte 0x0A and no other character holds it (UTF-8, latin-1)."""
        return self.codec in ("utf-8", "latin-1")


_UTF8 = Encoding("utf-8", 0, "UTF-8", plain_utf8=True)
_LATIN1 = Encoding("latin-1", 0, "latin-1 (a guess: the file is not valid UTF-8)", False)
_UTF8_REPLACED = Encoding(
    "utf-8", 0, "UTF-8 with invalid bytes (shown as \ufffd)", plain_utf8=False
)


def _by_bom(sample: bytes) -> Encoding | None:
    for bom, codec, label in _BOMS:
        if sample.startswith(bom):
            return Encoding(codec, len(bom), label, plain_utf8=codec == "utf-8")
    return None


def _controls_heavy(data: bytes) -> bool:
    if not data:
        return False
    controls = len(data.translate(None, _NOT_CONTROL))
    return controls / len(data) > _CONTROL_SHARE


def _not_utf8(data: bytes) -> Encoding | None:
    """The guess for bytes that failed to decode as UTF-8; None when they look binary."""
    if _controls_heavy(data):
        return None
    text = data.decode("utf-8", "replace")
    # Valid multi-byte sequences next to the bad bytes: UTF-8 with a few stray bytes.
    if any(char > "\x7f" and char != "\ufffd" for char in text):
        return _UTF8_REPLACED
    return _LATIN1


def detect(sample: bytes, *, whole: bool) -> Encoding | None:
    """Return the encoding of a file starting with ``sample``, or None when it is binary.

    ``whole`` says the sample is the whole file (so a multi-byte character cut at its end
    is an error, not the start of the next block).
    """
    by_bom = _by_bom(sample)
    if by_bom is not None:
        return by_bom
    if b"\x00" in sample:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(sample, final=whole)
    except UnicodeDecodeError:
        return _not_utf8(sample)
    return None if _controls_heavy(sample) else _UTF8


@dataclass(frozen=True, slots=True)
class Decoded:
    """A whole text file, decoded."""

    text: str
    encoding: Encoding


def decode_whole(data: bytes) -> Decoded | None:
    """Decode a whole file; None when it is binary (see the module docstring)."""
    encoding = detect(data[:SAMPLE_SIZE], whole=len(data) <= SAMPLE_SIZE)
    if encoding is None:
        return None
    body = data[encoding.bom :]
    if encoding.plain_utf8:
        try:
            return Decoded(body.decode("utf-8"), encoding)
        except UnicodeDecodeError:
            # Valid UTF-8 at the start, not further on.
            encoding = _UTF8_REPLACED if encoding.bom else _not_utf8(body) or _UTF8_REPLACED
    return Decoded(body.decode(encoding.codec, "replace"), encoding)


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines at ``\\n``; a final ``\\n`` ends the last line, adds none."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def count_lines(text: str) -> int:
    """The number of lines ``split_lines`` finds, without building them."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
