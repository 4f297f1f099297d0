"""How the host commands show things (``trimcp.cli._output``): plain text, and rich on a terminal.

A terminal is simulated with ``terminal=True`` on a ``StringIO``, so these run in-process;
the commands are run through a real pseudo-terminal in ``test_host_commands.py``.
"""

from __future__ import annotations

import base64
import io
import re

import pytest

from trimcp.cli._output import (
    Activity,
    block_text,
    dump_json,
    log_line,
    progress_line,
    write_completion,
    write_prompt,
    write_resource,
    write_table,
    write_tool_result,
)
from trimcp.client import (
    Completion,
    GetPromptResult,
    LogMessage,
    Progress,
    PromptMessage,
    ResourceContents,
)

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(text: str) -> str:
    """``text`` without terminal escape sequences."""
    return ANSI.sub("", text)


def test_a_table_off_a_terminal_is_columns_two_spaces_apart() -> None:
    out = io.StringIO()
    write_table([("SERVER", "STATE"), ("everything", "connected"), ("x", "")], out, terminal=False)
    assert out.getvalue() == "SERVER      STATE\neverything  connected\nx\n"


def test_a_table_on_a_terminal_is_drawn_by_rich_and_keeps_brackets_as_text() -> None:
    out = io.StringIO()
    write_table([("LEVEL", "TEXT"), ("[info]", "✓ done")], out, terminal=True)
    drawn = plain(out.getvalue())
    assert "─" in drawn  # the rule under the header
    row = next(line for line in drawn.splitlines() if "done" in line)
    # "[info]" is data: rich would otherwise read it as markup and drop it.
    assert row.split() == ["[info]", "✓", "done"]
    assert "\x1b[1m" in out.getvalue()  # the header is bold


def test_json_keeps_non_ascii_as_it_is() -> None:
    out = io.StringIO()
    dump_json({"text": "✓ café", "n": 1}, out)
    assert out.getvalue() == '{\n  "text": "✓ café",\n  "n": 1\n}\n'


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        ({"type": "text", "text": "hello"}, "hello"),
        (
            {"type": "image", "mimeType": "image/png", "data": "AAECAw=="},
            "[image: image/png, 4 bytes]",
        ),
        (
            {"type": "audio", "mimeType": "audio/wav", "data": "%%"},
            "[audio: audio/wav, data that is not base64]",
        ),
        (
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
            "[resource link: file:///a (a)]",
        ),
        (
            {"type": "resource", "resource": {"uri": "test://t", "text": "body"}},
            "[resource: test://t]\nbody",
        ),
        (
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAE="}},
            "[resource: test://b, 2 bytes]",
        ),
        ({"type": "widget", "size": 3, "data": "secret"}, '[widget] {"type": "widget", "size": 3}'),
    ],
)
def test_each_content_block_reads_as_text(block: dict[str, object], shown: str) -> None:
    assert block_text(block) == shown


def test_structured_content_is_printed_unless_a_text_block_holds_it() -> None:
    both = {"content": [{"type": "text", "text": '{"sum": 3}'}], "structuredContent": {"sum": 3}}
    out = io.StringIO()
    write_tool_result(both, out)
    assert out.getvalue() == '{"sum": 3}\n'
    only = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"sum": 3}}
    out = io.StringIO()
    write_tool_result(only, out)
    assert out.getvalue() == 'done\n{\n  "sum": 3\n}\n'


def test_resources_text_as_is_binary_as_a_note_or_as_bytes() -> None:
    text = ResourceContents(uri="demo://a", text="✓ done")
    blob = ResourceContents(uri="demo://b", blob=b"\x89PNG", mime_type="image/png")
    out = io.StringIO()
    write_resource([text], out)
    assert out.getvalue() == "✓ done\n"
    out = io.StringIO()
    write_resource([text, blob], out)
    assert out.getvalue() == (
        "--- demo://a\n✓ done\n--- demo://b (image/png)\n"
        "[image/png, 4 bytes: redirect stdout to a file to save it]\n"
    )
    raw = io.BytesIO()
    wrapper = io.TextIOWrapper(raw, encoding="utf-8")
    write_resource([blob], wrapper, raw=True)
    wrapper.flush()
    assert raw.getvalue() == b"\x89PNG"


def test_a_prompt_is_its_messages_under_their_roles() -> None:
    image = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(b"xy").decode()}
    result = GetPromptResult(
        description="Greets",
        messages=(
            PromptMessage("user", {"type": "text", "text": "Hello Ada\nfrom Paris"}),
            PromptMessage("assistant", image),
        ),
    )
    out = io.StringIO()
    write_prompt(result, out)
    assert out.getvalue() == (
        "# Greets\nuser:\n  Hello Ada\n  from Paris\nassistant:\n  [image: image/png, 2 bytes]\n"
    )


def test_completion_values_go_to_stdout_and_how_many_more_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_completion(Completion(values=["paris", "park"], total=5, has_more=True))
    out, err = capsys.readouterr()
    assert (out, err) == ("paris\npark\n", "(2 of 5 values shown)\n")
    write_completion(Completion(values=["a"], has_more=True))
    assert capsys.readouterr() == ("a\n", "(1 values shown; the server has more)\n")
    write_completion(Completion(values=["a"], total=1))
    assert capsys.readouterr() == ("a\n", "")


def test_log_and_progress_lines() -> None:
    assert log_line("demo", LogMessage(level="info", data="started")) == "[demo] info: started"
    structured = LogMessage(level="error", data={"k": "✓"}, logger="db")
    assert log_line("demo", structured) == '[demo] error (db): {"k": "✓"}'
    assert progress_line(Progress(progress=2, total=4, message="half")) == "progress 2/4 half"
    assert progress_line(Progress(progress=0.5)) == "progress 0.5"


def test_activity_off_a_terminal_writes_one_line_each() -> None:
    out = io.StringIO()
    with Activity(out, terminal=False) as activity:
        activity.log("demo", LogMessage(level="info", data="step one"))
        activity.progress(Progress(progress=1, total=3))
        activity.progress(Progress(progress=2, total=3, message="two"))
    assert out.getvalue() == "[demo] info: step one\nprogress 1/3\nprogress 2/3 two\n"
    quiet = io.StringIO()
    Activity(quiet, terminal=False, logs=False).log("demo", LogMessage(level="info", data="x"))
    assert quiet.getvalue() == ""


def test_activity_on_a_terminal_redraws_one_progress_line_and_prints_logs_above_it() -> None:
    out = io.StringIO()
    activity = Activity(out, terminal=True)
    activity.progress(Progress(progress=1, message="starting"))  # no total yet: no amount of
    activity.progress(Progress(progress=2, total=4, message="half way"))
    activity.log("demo", LogMessage(level="warning", data="slow disk"))
    activity.progress(Progress(progress=3, total=4, message="nearly"))
    activity.close()
    written = out.getvalue()
    drawn = plain(written)
    # One line, redrawn in place (carriage return, erase line), never a new plain line.
    assert "progress " not in drawn
    assert "\r" in written
    assert "\x1b[2K" in written
    assert "━" in drawn  # the bar
    assert "2/4 half way" in drawn
    assert "3/4 nearly" in drawn
    assert "\x1b[33m[demo] warning: slow disk" in written  # a warning, in yellow
    # close() takes the bar off the screen: the last thing written erases its line.
    assert written.endswith("\x1b[2K")
    activity.close()  # twice is harmless
