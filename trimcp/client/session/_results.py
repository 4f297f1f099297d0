"""What a server answers, as frozen records: tools, resources, prompts, tasks.

Each record has the members MCP 2025-11-25 defines, in snake_case, and ``raw``: the wire
object as received (unknown members included), so nothing a server sends is lost. Content
blocks, icons and ``_meta`` stay JSON objects: they are open-ended and passed on as they are
(to a model, to a UI). ``from_wire`` raises ``RemoteProtocolError`` for a malformed object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from trimcp.protocol import (
    Completion,
    Fields,
    Page,
    PromptMessage,
    ResourceContents,
    ToolAnnotations,
)

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject

# The payloads a server speaks too are defined once, in trimcp.protocol; the session modules
# take them from here along with the records that are the client's alone.
__all__ = [
    "TERMINAL_STATUSES",
    "CallToolResult",
    "Completion",
    "GetPromptResult",
    "LogMessage",
    "Page",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Task",
    "Tool",
    "ToolAnnotations",
]


def _raw() -> JsonObject:
    return {}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool a server offers (``tools/list``).

    ``task_support`` is ``execution.taskSupport``: ``"forbidden"`` (the default),
    ``"optional"`` or ``"required"`` (2025-11-25).
    """

    name: str
    input_schema: JsonObject
    title: str | None = None
    description: str | None = None
    output_schema: JsonObject | None = None
    annotations: ToolAnnotations | None = None
    icons: tuple[JsonObject, ...] = ()
    execution: JsonObject | None = None
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @property
    def task_support(self) -> str:
        """How the tool may be run as a task (``execution.taskSupport``)."""
        value = (self.execution or {}).get("taskSupport")
        return value if isinstance(value, str) else "forbidden"

    @property
    def display_name(self) -> str:
        """The name to show: ``title``, else ``annotations.title``, else ``name`` (BaseMetadata)."""
        annotated = self.annotations.title if self.annotations else None
        return self.title or annotated or self.name

    @classmethod
    def from_wire(cls, fields: Fields) -> Tool:
        """Read a wire ``Tool`` object."""
        schema = fields.opt_obj("inputSchema")
        annotations = fields.opt_obj("annotations")
        return cls(
            name=fields.string("name"),
            input_schema=schema if schema is not None else {"type": "object"},
            title=fields.opt_string("title"),
            description=fields.opt_string("description"),
            output_schema=fields.opt_obj("outputSchema"),
            annotations=(
                None
                if annotations is None
                else ToolAnnotations.from_wire(Fields(annotations, f"{fields.where}.annotations"))
            ),
            icons=fields.objects("icons"),
            execution=fields.opt_obj("execution"),
            meta=fields.opt_obj("_meta"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CallToolResult:
    """What ``tools/call`` returned. ``is_error``: the tool ran and failed (pass it on)."""

    content: tuple[JsonObject, ...] = ()
    structured_content: JsonObject | None = None
    is_error: bool = False
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text of the ``text`` content blocks, joined by newlines."""
        texts = [block.get("text") for block in self.content if block.get("type") == "text"]
        return "\n".join(text for text in texts if isinstance(text, str))

    @classmethod
    def from_wire(cls, fields: Fields) -> CallToolResult:
        """Read a wire ``CallToolResult``."""
        return cls(
            content=fields.objects("content"),
            structured_content=fields.opt_obj("structuredContent"),
            is_error=bool(fields.opt_bool("isError")),
            meta=fields.opt_obj("_meta"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """A resource a server lists (``resources/list``). ``size`` is in raw bytes."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JsonObject | None = None
    icons: tuple[JsonObject, ...] = ()
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @classmethod
    def from_wire(cls, fields: Fields) -> Resource:
        """Read a wire ``Resource``."""
        return cls(
            uri=fields.string("uri"),
            name=fields.string("name"),
            title=fields.opt_string("title"),
            description=fields.opt_string("description"),
            mime_type=fields.opt_string("mimeType"),
            size=fields.opt_int("size"),
            annotations=fields.opt_obj("annotations"),
            icons=fields.objects("icons"),
            meta=fields.opt_obj("_meta"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceTemplate:
    """A parameterised resource (``resources/templates/list``; RFC 6570 ``uri_template``)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: JsonObject | None = None
    icons: tuple[JsonObject, ...] = ()
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @classmethod
    def from_wire(cls, fields: Fields) -> ResourceTemplate:
        """Read a wire ``ResourceTemplate``."""
        return cls(
            uri_template=fields.string("uriTemplate"),
            name=fields.string("name"),
            title=fields.opt_string("title"),
            description=fields.opt_string("description"),
            mime_type=fields.opt_string("mimeType"),
            annotations=fields.opt_obj("annotations"),
            icons=fields.objects("icons"),
            meta=fields.opt_obj("_meta"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PromptArgument:
    """One argument a prompt takes."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    """A prompt a server offers (``prompts/list``)."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    icons: tuple[JsonObject, ...] = ()
    meta: JsonObject | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @classmethod
    def from_wire(cls, fields: Fields) -> Prompt:
        """Read a wire ``Prompt``."""
        arguments = tuple(
            PromptArgument(
                name=item.string("name"),
                title=item.opt_string("title"),
                description=item.opt_string("description"),
                required=bool(item.opt_bool("required")),
            )
            for item in fields.obj_list("arguments")
        )
        return cls(
            name=fields.string("name"),
            title=fields.opt_string("title"),
            description=fields.opt_string("description"),
            arguments=arguments,
            icons=fields.objects("icons"),
            meta=fields.opt_obj("_meta"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GetPromptResult:
    """What ``prompts/get`` returned."""

    messages: tuple[PromptMessage, ...]
    description: str | None = None
    meta: JsonObject | None = None

    @classmethod
    def from_wire(cls, fields: Fields) -> GetPromptResult:
        """Read a wire ``GetPromptResult``."""
        messages = fields.obj_list("messages", required=True)
        return cls(
            messages=tuple(PromptMessage.from_wire(item) for item in messages),
            description=fields.opt_string("description"),
            meta=fields.opt_obj("_meta"),
        )


#: Task statuses after which nothing changes (Tasks > Task Status).
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """A task's state (2025-11-25, experimental). ``ttl``/``poll_interval`` in milliseconds."""

    task_id: str
    status: str
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: float | None = None
    poll_interval: float | None = None
    status_message: str | None = None
    raw: JsonObject = field(default_factory=_raw, repr=False, compare=False)

    @property
    def is_terminal(self) -> bool:
        """Whether the task is completed, failed or cancelled."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_wire(cls, fields: Fields) -> Task:
        """Read a wire ``Task`` (also the top level of ``tasks/get`` and ``tasks/cancel``)."""
        return cls(
            task_id=fields.string("taskId"),
            status=fields.string("status"),
            created_at=fields.opt_string("createdAt"),
            last_updated_at=fields.opt_string("lastUpdatedAt"),
            ttl=fields.opt_number("ttl"),
            poll_interval=fields.opt_number("pollInterval"),
            status_message=fields.opt_string("statusMessage"),
            raw=fields.obj,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LogMessage:
    """A ``notifications/message`` from the server."""

    level: str
    data: object
    logger: str | None = None

    @classmethod
    def from_wire(cls, fields: Fields) -> LogMessage:
        """Read the params of ``notifications/message``."""
        return cls(
            level=fields.string("level"),
            data=fields.obj.get("data"),
            logger=fields.opt_string("logger"),
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """One ``notifications/progress`` for a request of ours."""

    progress: float
    total: float | None = None
    message: str | None = None

    @classmethod
    def from_wire(cls, fields: Fields) -> Progress:
        """Read the params of ``notifications/progress``."""
        progress = fields.opt_number("progress")
        return cls(
            progress=0.0 if progress is None else progress,
            total=fields.opt_number("total"),
            message=fields.opt_string("message"),
        )
