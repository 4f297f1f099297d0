"""RFC 6570 expansion (the RFC's own examples) and matching, with round-trip properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.server import TemplateError, UriTemplate

# RFC 6570 section 3.2.1, "Variable Expansion" example values.
RFC_VARS: dict[str, object] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": [("semi", ";"), ("dot", "."), ("comma", ",")],
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": [],
    "undef": None,
}

# RFC 6570 sections 3.2.1-3.2.9, every example, in the RFC's order.
RFC_EXAMPLES = [
    # 3.2.1
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 reserved
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 fragment
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 label
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segments
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 path-style parameters
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 form-style query
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc_6570_examples_expand(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VARS) == expected  # type: ignore[arg-type]


def test_mapping_and_pair_list_expand_alike() -> None:
    template = UriTemplate("{?keys*}")
    assert template.expand({"keys": {"semi": ";", "dot": "."}}) == "?semi=%3B&dot=."
    assert template.expand({"keys": [("semi", ";"), ("dot", ".")]}) == "?semi=%3B&dot=."


def test_numbers_expand_as_text_and_unicode_is_utf8_encoded() -> None:
    assert UriTemplate("/items/{id}").expand({"id": 42}) == "/items/42"
    assert UriTemplate("{x}").expand({"x": "é"}) == "%C3%A9"
    assert UriTemplate("a b{x}").expand({}) == "a%20b"  # RFC 6570 3.1: literals encoded


# RFC 6570 examples whose match must give back exactly what was expanded.
RFC_MATCHES = [
    ("{var}", "value", {"var": "value"}),
    ("{hello}", "Hello%20World%21", {"hello": "Hello World!"}),
    ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
    (
        "{x,hello,y}",
        "1024,Hello%20World%21,768",
        {"x": "1024", "hello": "Hello World!", "y": "768"},
    ),
    ("{+path}/here", "/foo/bar/here", {"path": "/foo/bar"}),
    ("{+base}index", "http://example.com/home/index", {"base": "http://example.com/home/"}),
    ("{+path,x}/here", "/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("foo{#undef}", "foo", {}),
    ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
    ("X{.undef}", "X", {}),
    ("{/who,dub}", "/fred/me%2Ftoo", {"who": "fred", "dub": "me/too"}),
    ("{/var,empty}", "/value/", {"var": "value", "empty": ""}),
    ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    ("{/var:1,var}", "/v/value", {"var": "value"}),
    ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
    (
        "{/list*,path:4}",
        "/red/green/blue/%2Ffoo",
        {"list": ["red", "green", "blue"], "path": "/foo"},
    ),
    ("{;v,empty,who}", ";v=6;empty;who=fred", {"v": "6", "empty": "", "who": "fred"}),
    ("{;v,bar,who}", ";v=6;who=fred", {"v": "6", "who": "fred"}),
    ("{;list*}", ";list=red;list=green;list=blue", {"list": ["red", "green", "blue"]}),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("{?x,y,empty}", "?x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x,y,undef}", "?x=1024&y=768", {"x": "1024", "y": "768"}),
    ("{?list*}", "?list=red&list=green&list=blue", {"list": ["red", "green", "blue"]}),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    ("{?list}", "?list=red,green,blue", {"list": "red,green,blue"}),  # stated limit
]


@pytest.mark.parametrize(("template", "uri", "expected"), RFC_MATCHES)
def test_rfc_examples_match_back(template: str, uri: str, expected: dict[str, object]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/42/data", {"id": "42"}),
        ("test://template/{id}/data", "test://template/4%2F2/data", {"id": "4/2"}),
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        (
            "repo://{owner}/{repo}{/path*}",
            "repo://o/r/src/x.py",
            {"owner": "o", "repo": "r", "path": ["src", "x.py"]},
        ),
        ("search://{?q,limit}", "search://?limit=5&q=a%20b", {"q": "a b", "limit": "5"}),
        ("api://{x}{?a}{&b}", "api://1?a=2&b=3", {"x": "1", "a": "2", "b": "3"}),
        ("static://readme", "static://readme", {}),
    ],
)
def test_mcp_style_templates_match(template: str, uri: str, expected: dict[str, object]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/4/2/data"),  # "/" is not in {id}
        ("test://template/{id}/data", "test://template/42/datum"),
        ("test://template/{id}/data", "TEST://template/42/data"),  # literals match exactly
        ("search://{?q}", "search://?q=1&other=2"),  # no members beyond the template's
        ("search://{?q}", "search://?q=1&q=2"),  # a non-exploded variable once only
        ("{/var:1,var}", "/x/value"),  # the prefix must agree with the full value
        ("{x}", "%FF"),  # not UTF-8
        ("{var:3}", "valu"),  # longer than the prefix allows
    ],
)
def test_non_matching_uris(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


@pytest.mark.parametrize(
    "template",
    ["{", "}", "a{b", "{a}}", "{a{b}}", "{}", "{=x}", "{!x}", "{x:0}", "{x:10000}", "{x y}", "{.}"],
)
def test_malformed_templates_are_refused(template: str) -> None:
    with pytest.raises(TemplateError):
        UriTemplate(template)


def test_values_that_cannot_expand() -> None:
    with pytest.raises(TemplateError, match="prefix"):
        UriTemplate("{list:3}").expand({"list": ["a"]})
    with pytest.raises(TemplateError, match="boolean"):
        UriTemplate("{x}").expand({"x": True})
    with pytest.raises(TemplateError, match="Unicode"):
        UriTemplate("{x}").expand({"x": "\ud800"})
    with pytest.raises(TemplateError, match="unsupported"):
        UriTemplate("{x}").expand({"x": object()})  # type: ignore[dict-item]


def test_introspection() -> None:
    template = UriTemplate("a://{x}{/y*}{?x,z}")
    assert template.variable_names == ("x", "y", "z")
    assert template.is_template
    assert not UriTemplate("a://plain").is_template
    assert str(template) == "a://{x}{/y*}{?x,z}"
    assert repr(template) == "UriTemplate('a://{x}{/y*}{?x,z}')"


# --- properties --------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
NAMES = st.lists(st.sampled_from(["a", "b", "c_1", "d.e"]), min_size=1, max_size=3, unique=True)


@given(op=st.sampled_from(["", "/", ";", "?", "&"]), names=NAMES, data=st.data())
def test_expand_then_match_round_trips_strings(
    op: str, names: list[str], data: st.DataObject
) -> None:
    values = {name: data.draw(TEXT, label=name) for name in names}
    template = UriTemplate(f"scheme://host{{{op}{','.join(names)}}}")
    assert template.match(template.expand(values)) == values


@given(op=st.sampled_from(["?", "&", ";"]), names=NAMES, data=st.data())
def test_named_operators_round_trip_any_subset(
    op: str, names: list[str], data: st.DataObject
) -> None:
    values = {name: data.draw(TEXT, label=name) for name in names}
    defined = {k: v for k, v in values.items() if data.draw(st.booleans(), label=f"{k}?")}
    template = UriTemplate(f"x:{{{op}{','.join(names)}}}")
    assert template.match(template.expand(defined)) == defined


@given(op=st.sampled_from(["+", "#", "."]), value=TEXT.filter(lambda t: "%" not in t))
def test_single_variable_round_trips_for_reserved_and_label(op: str, value: str) -> None:
    template = UriTemplate(f"x:{{{op}v}}")
    assert template.match(template.expand({"v": value})) == {"v": value}


@given(
    op=st.sampled_from(["/", ";", "?", "&"]),
    items=st.lists(TEXT, min_size=1, max_size=4),
    tail=st.sampled_from(["", "/end"]),
)
def test_exploded_lists_round_trip(op: str, items: list[str], tail: str) -> None:
    tail = "" if op != "/" else tail
    template = UriTemplate(f"x:{{{op}list*}}{tail}")
    assert template.match(template.expand({"list": items})) == {"list": items}


@given(
    template=st.sampled_from(["{x}", "{/x,y}", "{?x*}", "{+x}/{y}", "{#x}", "a{.x:3}b"]),
    uri=st.text(max_size=30),
)
def test_match_never_raises(template: str, uri: str) -> None:
    result = UriTemplate(template).match(uri)
    assert result is None or isinstance(result, dict)
