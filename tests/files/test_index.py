"""MEMORY.md: every legal line is kept; only a memory's own line is ever rewritten."""

from __future__ import annotations

import pytest

from kura.files.memory_index import (
    HEADER,
    entry_text,
    parse_index,
    remove,
    render_index,
    title_for,
    update_entry,
    upsert,
)

INDEX = (
    "\ufeff# Memory index\r\n"
    "\r\n"
    "<!-- a comment that spans lines\r\n"
    "- [Fake](fake.md) — inside the comment, not an entry\r\n"
    "-->\r\n"
    "## Project\r\n"
    "- [Test command](test-command.md) — make test runs pytest\r\n"
    "- [A \\] b](sub/a.md) - trig\r\n"
    "* [B](<my note.md>): colon trig\r\n"
    "- Deploy: [x](x.md) · [y](y.md)\r\n"
    "- [Only](only.md)\r\n"
    "- [Web](https://example.com/x.md) — an outside link\r\n"
    "```\r\n"
    "- [Code](code.md) — in a fence\r\n"
    "```\r\n"
    "Some prose that mentions [c](c.md).\r\n"
    "Trailing prose.\r\n"
)


def test_kinds_slugs_titles_and_triggers() -> None:
    index = parse_index(INDEX)
    got = [(ln.kind, ln.slugs, ln.title, ln.trigger) for ln in index.lines]
    assert got == [
        ("heading", (), "", ""),
        ("blank", (), "", ""),
        ("comment", (), "", ""),
        ("comment", (), "", ""),
        ("comment", (), "", ""),
        ("heading", (), "", ""),
        ("entry", ("test-command",), "Test command", "make test runs pytest"),
        ("entry", ("sub/a",), "A ] b", "trig"),
        ("entry", ("my note",), "B", "colon trig"),
        ("group", ("x", "y"), "", ""),
        ("entry", ("only",), "Only", ""),
        ("prose", (), "", ""),
        ("prose", (), "", ""),
        ("prose", (), "", ""),
        ("prose", (), "", ""),
        ("prose", (), "", ""),
        ("prose", (), "", ""),
    ]
    assert index.named() == ("test-command", "sub/a", "my note", "x", "y", "only")


def test_unchanged_index_renders_identically() -> None:
    assert render_index(parse_index(INDEX)) == INDEX
    assert render_index(parse_index("no newline at end")) == "no newline at end"
    assert render_index(parse_index("")) == ""


def test_upsert_replaces_only_its_own_line() -> None:
    index = parse_index(INDEX)
    updated = upsert(index, "test-command", entry_text("test-command", "Test command", "make check"))
    before, after = render_index(index).split("\r\n"), render_index(updated).split("\r\n")
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [6]
    assert after[6] == "- [Test command](test-command.md) — make check"


def test_upsert_appends_after_the_last_named_line_and_leaves_groups_alone() -> None:
    index = parse_index(INDEX)
    assert upsert(index, "x", entry_text("x", "X", "already in a group")) is index
    added = render_index(upsert(index, "new", entry_text("new", "New", "multi\nline  trigger")))
    assert "- [Only](only.md)\r\n- [New](new.md) — multi line trigger\r\n- [Web](https" in added


def test_upsert_into_empty_and_header_only_index() -> None:
    line = entry_text("a", "A", "t")
    assert render_index(upsert(parse_index(""), "a", line)) == "- [A](a.md) — t\n"
    assert render_index(upsert(parse_index(HEADER), "a", line)) == HEADER + "\n- [A](a.md) — t\n"
    assert render_index(upsert(parse_index("# T"), "a", line)) == "# T\n\n- [A](a.md) — t\n"


def test_same_line_is_no_change() -> None:
    index = parse_index("- [A](a.md) — t\n")
    assert upsert(index, "a", "- [A](a.md) — t") is index


def test_remove_drops_only_entry_lines() -> None:
    index = parse_index("- [A](a.md) — t\n- [A](a.md), [B](b.md)\n")
    assert render_index(remove(index, "a")) == "- [A](a.md), [B](b.md)\n"


def test_entry_text_escapes_and_wraps() -> None:
    assert entry_text("my note", "A [big] one", "x") == "- [A \\[big\\] one](<my note.md>) — x"
    parsed = parse_index(entry_text("my note", "A [big] one", "x")).lines[0]
    assert (parsed.slugs, parsed.title, parsed.trigger) == (("my note",), "A [big] one", "x")


def test_title_rule_never_truncates() -> None:
    assert title_for("Deploy day", "long " * 20, "deploy-day") == "Deploy day"
    assert title_for("x" * 41, "short description", "s") == "short description"
    assert title_for("x" * 41, "y" * 41, "the-slug") == "the-slug"
    assert title_for("  ", "", "the-slug") == "the-slug"
    assert title_for("x" * 40, "", "s") == "x" * 40


def test_comments_opened_mid_line_and_reopened_hide_their_lines() -> None:
    text = (
        "Notes <!-- hidden:\n- [M](m.md) — stale\n-->\n"
        "<!-- a --> <!-- x\n- [M](m.md) — also hidden\n-->\n"
        "- [M](m.md) — real <!-- why -->\n"
    )
    index = parse_index(text)
    assert [(ln.kind, ln.slugs) for ln in index.lines] == [
        ("prose", ()), ("comment", ()), ("comment", ()),
        ("comment", ()), ("comment", ()), ("comment", ()),
        ("entry", ("m",)),
    ]  # fmt: skip
    assert index.line_for("m").trigger == "real"
    updated = render_index(upsert(index, "m", update_entry(index.line_for("m"), "M", "fresh")))
    assert updated.endswith("- [M](m.md) — fresh <!-- why -->\n")
    assert "stale" in updated and "also hidden" in updated


def test_fences_close_only_on_their_own_kind() -> None:
    text = "```\n~~~\n- [A](a.md) — still code\n```\n````\n```\n- [B](b.md) — still code\n````\n- [C](c.md) — real\n"
    assert parse_index(text).named() == ("c",)


@pytest.mark.parametrize(
    ("line", "kind", "slugs"),
    [
        ("Start with [M](m.md) when onboarding.", "prose", ()),
        ("> - [M](m.md) — quoted", "prose", ()),
        ("1. [M](m.md) — ordered entry", "entry", ("m",)),
        ("- [M](m.md) — see [guide](guide.md) too", "entry", ("m",)),
        ("- [A](a.md), [B](b.md)", "group", ("a", "b")),
        ("- see [M](m.md) for deploys", "group", ("m",)),
        ("- [Docs](https://example.test/x.md) — outside", "prose", ()),
    ],
)
def test_what_a_line_names(line: str, kind: str, slugs: tuple[str, ...]) -> None:
    parsed = parse_index(line + "\n").lines[0]
    assert (parsed.kind, parsed.slugs) == (kind, slugs)


def test_update_keeps_indent_bullet_target_and_separator() -> None:
    index = parse_index('  * [Old](<my note.md> "t") : trigger here\n')
    line = index.line_for("my note")
    assert update_entry(line, "Old", "new trigger") == '  * [Old](<my note.md> "t") : new trigger'
    assert update_entry(line, "New [x]", "t2") == '  * [New \\[x\\]](<my note.md> "t") : t2'
    bare = parse_index("- [A](a.md)\n").line_for("a")
    assert update_entry(bare, "A", "now with a trigger") == "- [A](a.md) — now with a trigger"
