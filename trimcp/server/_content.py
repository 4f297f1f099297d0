"""Content blocks: the helpers tools and prompts return, and turning values into blocks.

MCP 2025-11-25 (Server > Tools > Tool Result; Prompts > Data Types): a ``ContentBlock`` is
``text``, ``image``, ``audio`` (base64 ``data`` + ``mimeType``), ``resource`` (embedded
``TextResourceContents`` or ``BlobResourceContents``) or ``resource_link``. The helper
classes here build them; ``content_blocks`` turns whatever a tool returned into a list of
them, and ``content_block`` does the same for one prompt message's content.

Conversion rules (the decorator API's contract):

* ``None`` -> no blocks; ``str`` -> one text block;
* ``Image`` / ``Audio`` / ``EmbeddedResource`` / ``ResourceLink`` -> their block;
* a list or tuple of those (or of ``str``, or of wire dicts with a known ``"type"``) -> one
  block each, in order;
* ``bytes`` -> refused with ``OutputError``: raw bytes carry no MIME type or URI, so the
  tool must say what they are (``Image(data, "image/png")``, ``EmbeddedResource(uri,
  blob=data)``);
* anything else JSON-able (dicts, lists, dataclasses, models, numbers) -> one text block
  holding its compact JSON.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.errors import OutputError
from trimcp.protocol import PromptMessage, ResourceContents
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.protocol import JsonObject, JsonValue

__all__ = [
    "Audio",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "content_block",
    "content_blocks",
    "json_text",
    "wire_message",
]

_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _with_annotations(block: JsonObject, annotations: Mapping[str, object] | None) -> JsonObject:
    if annotations:
        block["annotations"] = to_jsonable(dict(annotations))
    return block


def _load(data: bytes | None, path: str | Path | None, mime_type: str | None) -> tuple[bytes, str]:
    """Return the bytes and MIME type of a media helper, reading ``path`` if given."""
    if (data is None) == (path is None):
        raise ValueError("give exactly one of data and path")
    if path is not None:
        data = Path(path).read_bytes()
        mime_type = mime_type or mimetypes.guess_type(str(path))[0]
    if not mime_type:
        raise ValueError("a mime_type is needed (it could not be guessed from the path)")
    assert data is not None
    return data, mime_type


class _Media:
    """A base64 media block (``image`` / ``audio``): raw ``data`` or a file ``path``.

    ``mime_type`` is guessed from the path's extension when not given; it is required with
    ``data``. The file is read at construction, in the calling thread.
    """

    __slots__ = ("annotations", "data", "mime_type")
    _kind: typing.ClassVar[str]

    def __init__(
        self,
        data: bytes | None = None,
        mime_type: str | None = None,
        *,
        path: str | Path | None = None,
        annotations: Mapping[str, object] | None = None,
    ) -> None:
        self.data, self.mime_type = _load(data, path, mime_type)
        self.annotations = annotations

    def to_block(self) -> JsonObject:
        """Return the wire ``ImageContent`` / ``AudioContent``."""
        block: JsonObject = {
            "type": self._kind,
            "data": _b64(self.data),
            "mimeType": self.mime_type,
        }
        return _with_annotations(block, self.annotations)


@typing.final
class Image(_Media):
    """An image block; see ``_Media`` for the arguments."""

    __slots__ = ()
    _kind = "image"


@typing.final
class Audio(_Media):
    """An audio block (MCP 2025-03-26 and later); see ``_Media`` for the arguments."""

    __slots__ = ()
    _kind = "audio"


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddedResource:
    """A ``resource`` block: resource contents embedded in a tool result or prompt.

    Servers that embed resources SHOULD declare ``resources`` (Tools > Embedded Resources).
    """

    resource: ResourceContents
    annotations: Mapping[str, object] | None = None

    @classmethod
    def of(
        cls,
        uri: str,
        *,
        text: str | None = None,
        blob: bytes | None = None,
        mime_type: str | None = None,
    ) -> EmbeddedResource:
        """Build one from its parts (exactly one of ``text`` and ``blob``)."""
        return cls(resource=ResourceContents(uri=uri, text=text, blob=blob, mime_type=mime_type))

    def to_block(self) -> JsonObject:
        """Return the wire ``EmbeddedResource``."""
        block: JsonObject = {"type": "resource", "resource": self.resource.to_wire()}
        return _with_annotations(block, self.annotations)


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceLink:
    """A ``resource_link`` block (2025-06-18 and later): a URI the client may read.

    It need not appear in ``resources/list`` (Tools > Resource Links).
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, object] | None = None

    def to_block(self) -> JsonObject:
        """Return the wire ``ResourceLink``."""
        block: JsonObject = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional = {
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
            "size": self.size,
        }
        block.update({key: value for key, value in optional.items() if value is not None})
        return _with_annotations(block, self.annotations)


_HELPERS = (Image, Audio, EmbeddedResource, ResourceLink)


def json_text(data: JsonValue) -> str:
    """Serialize JSON compactly, as the text copy of structured results."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _is_block_dict(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") in _BLOCK_TYPES


def _is_block(value: object) -> bool:
    return isinstance(value, (str, *_HELPERS)) or _is_block_dict(value)


def content_block(value: object) -> JsonObject:
    """Return the one content block ``value`` stands for (a prompt message's content).

    Raises:
        OutputError: ``bytes``, or a value with no JSON form.
    """
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, _HELPERS):
        return value.to_block()
    if _is_block_dict(value):
        return typing.cast("JsonObject", to_jsonable(value))
    if isinstance(value, bytes | bytearray | memoryview):
        raise OutputError(
            "raw bytes cannot be content: return Image(data, mime_type), Audio(...) or "
            "EmbeddedResource.of(uri, blob=data, mime_type=...) instead"
        )
    return {"type": "text", "text": json_text(to_jsonable(value))}


def content_blocks(value: object) -> list[JsonValue]:
    """Turn a tool's return value into ``content`` (see the module docstring).

    Raises:
        OutputError: ``bytes``, or a value with no JSON form.
    """
    if value is None:
        return []
    if isinstance(value, list | tuple) and value and all(_is_block(item) for item in value):
        return [content_block(item) for item in value]
    return [content_block(value)]


def wire_message(message: PromptMessage) -> JsonObject:
    """Return the wire form of ``message``, its content made a block (``content_block``).

    Prompts answer with such messages, and so do sampling requests to the client.
    """
    return PromptMessage(message.role, content_block(message.content)).to_wire()
