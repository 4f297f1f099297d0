"""What Tab offers at ``trimcp shell``'s prompt, as a function of the line and the catalogs."""

from __future__ import annotations

from trimcp.cli._shell._completion import Names, complete, template_variables

NAMES = Names.from_catalogs(
    ["desk", "attic"],
    [
        (
            "desk",
            {
                "tools": (
                    {
                        "name": "greet",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"name": {}, "greeting": {}, "times": {}},
                        },
                    },
                    {"name": "grep", "inputSchema": {"type": "object"}},
                ),
                "resources": ({"uri": "desk://readme", "name": "readme"},),
                "resourceTemplates": ({"uriTemplate": "desk://notes/{day}", "name": "notes"},),
                "prompts": ({"name": "review", "arguments": [{"name": "language"}]},),
            },
        ),
        ("attic", {"tools": ({"name": "greet", "inputSchema": {}},)}),
    ],
)


def test_commands_and_actions() -> None:
    assert complete("", NAMES) == ["/help ", "/mcp ", "/quit "]
    assert complete("/m", NAMES) == ["/mcp "]
    assert complete("/mcp c", NAMES) == ["call ", "complete ", "connect "]
    assert complete("/nothing ", NAMES) == []


def test_server_names_after_the_actions_that_take_one() -> None:
    assert complete("/mcp tools ", NAMES) == ["attic ", "desk "]
    assert complete("/mcp connect d", NAMES) == ["desk "]
    assert complete("/mcp tools desk ", NAMES) == []


def test_tool_names_in_both_forms_then_the_keys_not_given() -> None:
    assert complete("/mcp call mcp__desk__gr", NAMES) == ["mcp__desk__greet ", "mcp__desk__grep "]
    assert complete("/mcp call desk gr", NAMES) == ["greet ", "grep "]
    assert complete("/mcp call attic ", NAMES) == ["greet "]
    assert complete("/mcp call mcp__desk__greet ", NAMES) == ["greeting=", "name=", "times="]
    assert complete("/mcp call desk greet name=Ada ", NAMES) == ["greeting=", "times="]
    assert complete("/mcp call desk greet times:=2 g", NAMES) == ["greeting="]
    # A tool without properties has no keys to offer; an unknown one neither.
    assert complete("/mcp call mcp__attic__greet ", NAMES) == []
    assert complete("/mcp call mcp__desk__nope ", NAMES) == []


def test_uris_prompts_and_templates() -> None:
    assert complete("/mcp read desk:", NAMES) == ["desk://readme "]
    assert complete("/mcp read desk ", NAMES) == ["desk://readme "]
    assert complete("/mcp prompt r", NAMES) == ["review "]
    assert complete("/mcp prompt review ", NAMES) == ["language="]
    assert complete("/mcp complete desk://", NAMES) == ["desk://notes/{day} "]
    assert complete("/mcp complete desk://notes/{day} ", NAMES) == ["day="]


def test_template_variables() -> None:
    assert template_variables("file:///{+path}{?q,lang}") == ("path", "q", "lang")
    assert template_variables("x://{a}/{a:3}/{/b*}") == ("a", "b")
    assert template_variables("plain://uri") == ()
