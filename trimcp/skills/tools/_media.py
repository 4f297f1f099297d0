"""What a binary file is, from its first bytes: images and audio for ``read_file``, a name else.

Magic numbers decide first, because an extension can lie (a ``.png`` that is really a JPEG
is still shown right) and because many files have none; the extension (``mimetypes``) is the
fallback when no signature matches. Only formats with a fixed signature at a fixed offset are
recognised; the list follows the WHATWG MIME Sniffing Standard (section 6.1, "Matching an
image type pattern", and 6.2, "Matching an audio or video type pattern",
https://mimesniff.spec.whatwg.org/) plus common non-media formats, so the refusal of a
binary file can say what it probably is.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from typing import Literal

__all__ = ["MediaKind", "Sniffed", "sniff"]

#: What ``read_file`` can return as a content block: MCP 2025-11-25, Server > Tools > Tool
#: Result (``ImageContent``, ``AudioContent``),
#: https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result
MediaKind = Literal["image", "audio"]


@dataclass(frozen=True, slots=True)
class Sniffed:
    """What a binary file seems to be.

    Attributes:
        mime_type: its MIME type (``application/octet-stream`` when nothing matched).
        description: a short name for messages ("PNG image", "ZIP archive").
        media: "image" or "audio" when it can be returned as such a block, else None.
        by_signature: whether the magic bytes decided (else the extension, or nothing).
    """

    mime_type: str
    description: str
    media: MediaKind | None
    by_signature: bool


# (offset, magic, MIME type, description, media kind)
_SIGNATURES: tuple[tuple[int, bytes, str, str, MediaKind | None], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png", "PNG image", "image"),
    (0, b"\xff\xd8\xff", "image/jpeg", "JPEG image", "image"),
    (0, b"GIF87a", "image/gif", "GIF image", "image"),
    (0, b"GIF89a", "image/gif", "GIF image", "image"),
    (0, b"BM", "image/bmp", "BMP image", "image"),
    (0, b"II*\x00", "image/tiff", "TIFF image", "image"),
    (0, b"MM\x00*", "image/tiff", "TIFF image", "image"),
    (0, b"\x00\x00\x01\x00", "image/x-icon", "ICO icon", "image"),
    (0, b"fLaC", "audio/flac", "FLAC audio", "audio"),
    (0, b"OggS\x00", "audio/ogg", "Ogg audio", "audio"),
    (0, b"ID3", "audio/mpeg", "MP3 audio", "audio"),
    (0, b"MThd", "audio/midi", "MIDI audio", "audio"),
    (0, b"%PDF-", "application/pdf", "PDF document", None),
    (0, b"PK\x03\x04", "application/zip", "ZIP archive (or a format built on it)", None),
    (0, b"PK\x05\x06", "application/zip", "ZIP archive (empty)", None),
    (0, b"\x1f\x8b", "application/gzip", "gzip-compressed data", None),
    (0, b"BZh", "application/x-bzip2", "bzip2-compressed data", None),
    (0, b"\xfd7zXZ\x00", "application/x-xz", "xz-compressed data", None),
    (0, b"\x28\xb5\x2f\xfd", "application/zstd", "zstd-compressed data", None),
    (0, b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed", "7-Zip archive", None),
    (0, b"Rar!\x1a\x07", "application/vnd.rar", "RAR archive", None),
    (257, b"ustar", "application/x-tar", "tar archive", None),
    (0, b"\x7fELF", "application/x-executable", "ELF executable or library", None),
    (0, b"MZ", "application/vnd.microsoft.portable-executable", "Windows executable", None),
    (0, b"\xcf\xfa\xed\xfe", "application/x-mach-binary", "Mach-O executable", None),
    (0, b"\xca\xfe\xba\xbe", "application/java-vm", "Java class or Mach-O universal file", None),
    (0, b"\x00asm", "application/wasm", "WebAssembly module", None),
    (0, b"SQLite format 3\x00", "application/vnd.sqlite3", "SQLite database", None),
    (0, b"\x1aE\xdf\xa3", "video/webm", "Matroska/WebM media", None),
    (0, b"8BPS", "image/vnd.adobe.photoshop", "Photoshop image", None),
    (0, b"wOFF", "font/woff", "WOFF font", None),
    (0, b"wOF2", "font/woff2", "WOFF2 font", None),
    (0, b"OTTO", "font/otf", "OpenType font", None),
    (0, b"\x00\x01\x00\x00\x00", "font/ttf", "TrueType font", None),
)

# RIFF containers: the form type at offset 8 says what is inside.
_RIFF: dict[bytes, tuple[str, str, MediaKind | None]] = {
    b"WEBP": ("image/webp", "WebP image", "image"),
    b"WAVE": ("audio/wav", "WAV audio", "audio"),
    b"AVI ": ("video/x-msvideo", "AVI video", None),
}

# ISO base media files ("....ftyp" + brand): the brand says what is inside.
_FTYP: dict[bytes, tuple[str, str, MediaKind | None]] = {
    b"avif": ("image/avif", "AVIF image", "image"),
    b"avis": ("image/avif", "AVIF image", "image"),
    b"heic": ("image/heic", "HEIC image", "image"),
    b"heix": ("image/heic", "HEIC image", "image"),
    b"mif1": ("image/heif", "HEIF image", "image"),
    b"M4A ": ("audio/mp4", "MPEG-4 audio", "audio"),
    b"M4B ": ("audio/mp4", "MPEG-4 audio book", "audio"),
}


# MPEG audio frame headers: 11 sync bits, then version and layer bits. Layer bits 01 are
# Layer III (MP3); 00 in an ADTS header is AAC.
_MPEG_LAYERS: dict[int, tuple[str, str, MediaKind | None]] = {
    0b01: ("audio/mpeg", "MP3 audio", "audio"),
    0b00: ("audio/aac", "AAC audio", "audio"),
}


def _signature(head: bytes) -> tuple[str, str, MediaKind | None] | None:
    for offset, magic, mime, description, media in _SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return mime, description, media
    found: tuple[str, str, MediaKind | None] | None = None
    if head[:4] == b"RIFF":
        found = _RIFF.get(head[8:12])
    elif head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        found = ("audio/aiff", "AIFF audio", "audio")
    elif head[4:8] == b"ftyp":
        found = _FTYP.get(head[8:12], ("video/mp4", "MPEG-4 media", None))
    elif len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        found = _MPEG_LAYERS.get((head[1] >> 1) & 0b11)
    return found


def sniff(head: bytes, name: str) -> Sniffed:
    """Say what the binary file ``name`` starting with ``head`` (its first KiBs) probably is."""
    found = _signature(head)
    if found is not None:
        return Sniffed(*found, by_signature=True)
    guessed, _ = mimetypes.guess_type(name, strict=False)
    if guessed is not None:
        major = guessed.split("/", 1)[0]
        media: MediaKind | None = None
        # SVG is text; a binary .svg is not an image a client can show.
        if major == "image" and guessed != "image/svg+xml":
            media = "image"
        elif major == "audio":
            media = "audio"
        return Sniffed(guessed, f"{guessed} (by its extension)", media, by_signature=False)
    return Sniffed("application/octet-stream", "unknown binary data", None, by_signature=False)
