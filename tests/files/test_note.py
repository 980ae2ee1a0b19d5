"""Memory files as people really write them: read without crashing, re-saved untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from kura.files.memory_file import compose_body, links, new_note, parse, render

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
INPUTS = sorted(p.name for p in (GOLDEN / "in").glob("*.md"))

# name, description, type, and the line numbers of the findings each file must produce
EXPECTED = {
    "block_scalar.md": ("Long description", "a folded description\nover two paragraphs\n", "reference", []),
    "bom.md": ("Timezone", "Mika works from Lisbon (WET, UTC+0/+1)", "user", []),
    "bom_crlf_colon.md": ("Cache: Redis", "Redis 7.2 on port 6380, db 0 cache, db 1 queue", "reference", [2]),
    "booleans.md": ("no", "on", "user", [2, 3]),
    "claude_code.md": (
        "Testing preference",
        "integration tests must hit a real database, not mocks",
        "feedback",
        [],
    ),
    "colon.md": (
        "Database choice",
        "Chose Postgres: ACID and JSONB beat Mongo for routing rules",
        "project",
        [3],
    ),
    "crlf.md": ("Deploy day", "deploys go out Tuesday 10:00 CET, never on Fridays", "project", []),
    "dash_value.md": ("Lint rules", "- ruff, then mypy, then the tests", "feedback", [3]),
    "date_name.md": ("2026-01-02", "the freeze starts 2026-01-02 and lasts a week", "project", [2]),
    "distill_kura.md": (
        "archive-on-slow-disk",
        "the archive lives on the slow disk; the fast one stays scratch",
        "project",
        [],
    ),
    "hash_value.md": ("Priority one", "#1 priority is the SLA timer bug (FD-412)", "project", [3]),
    "no_frontmatter.md": ("", "", None, [1]),
    "no_trailing_newline.md": ("Terse", "no newline at the end of this file", "user", []),
    "numbers.md": ("1234", "42", "project", [2, 3]),
    "unclosed.md": ("", "", None, [1]),
    "unknown_keys.md": (
        "Runbook location",
        "the on-call runbook is docs/runbook.md in the ops repo",
        "reference",
        [],
    ),
}


def read(name: str) -> str:
    return (GOLDEN / "in" / name).read_bytes().decode("utf-8")


def test_every_golden_input_has_expectations() -> None:
    assert sorted(EXPECTED) == INPUTS


@pytest.mark.parametrize("name", INPUTS)
def test_golden_reads_as_written(name: str) -> None:
    note = parse(read(name), name)
    title, description, kind, finding_lines = EXPECTED[name]
    assert (note.name, note.description, note.type) == (title, description, kind)
    assert [f.line for f in note.findings] == finding_lines
    assert all(str(f).startswith(f"{name}:{f.line}: ") for f in note.findings)


@pytest.mark.parametrize("name", INPUTS)
def test_unchanged_render_is_byte_identical(name: str) -> None:
    text = read(name)
    assert render(parse(text, name)) == text


@pytest.mark.parametrize("name", [n for n in INPUTS if n != "unclosed.md"])
def test_changed_render_touches_only_the_changed_key(name: str) -> None:
    before = parse(read(name), name)
    after_text = render(before.with_meta(description="Changed: it works"))
    assert after_text.encode("utf-8") == (GOLDEN / "out" / name).read_bytes()
    after = parse(after_text, name)
    assert after.description == "Changed: it works"
    if before.findings == () or name.startswith(("crlf", "bom")):
        assert (after.name, after.type) == (before.name, before.type)
    assert after.body == before.body


def test_crlf_and_bom_survive_an_edit() -> None:
    text = render(parse(read("bom_crlf_colon.md")).with_meta(type="project"))
    assert text.startswith("\ufeff---\r\n")
    assert "\n" not in text.replace("\r\n", "")


def test_yaml_guesses_become_text_and_quotes_keep_it_that_way() -> None:
    note = parse(read("booleans.md"))
    assert note.meta["on"] is True  # not a prose field: the value is YAML's to read
    rewritten = parse(render(note.with_meta(name="yes", description="off", extra="2026-01-02")))
    assert (rewritten.name, rewritten.description) == ("yes", "off")
    assert [f.line for f in rewritten.findings] == []
    assert rewritten.meta["extra"] == "2026-01-02"
    assert rewritten.meta["on"] is True


def test_key_order_and_unknown_keys_are_kept() -> None:
    note = parse(read("unknown_keys.md"))
    assert list(note.meta) == ["name", "description", "tags", "type", "owner", "source", "created"]
    after = parse(render(note.with_meta(description="x", new_key="appended")))
    assert list(after.meta) == [*note.meta, "new_key"]
    assert after.meta["owner"] == {"name": "Tomasz", "team": "backend"}


def test_type_is_set_in_the_layout_the_file_uses() -> None:
    nested = parse(render(parse(read("distill_kura.md")).with_type("reference")))
    assert nested.meta["metadata"] == {"type": "reference"} and "type" not in nested.meta
    flat = parse(render(parse(read("claude_code.md")).with_type("user")))
    assert flat.meta["type"] == "user" and "metadata" not in flat.meta


def test_removing_a_key() -> None:
    note = parse(read("unknown_keys.md")).with_meta(tags=None)
    assert "tags" not in parse(render(note)).meta


def test_links_and_body_convention() -> None:
    body = compose_body(
        "We deploy on Tuesdays.",
        why="Fridays burn weekends.",
        how="Check the day.",
        related=("deploy-commands", "oncall"),
    )
    assert body == (
        "We deploy on Tuesdays.\n\n**Why:** Fridays burn weekends.\n**How to apply:** Check the day.\n\n"
        "Related: [[deploy-commands]], [[oncall]]\n"
    )
    assert links(body + "see [[oncall|the rota]] and [[infra/dns#ttl]] and [[deploy-commands.md]]") == (
        "deploy-commands",
        "oncall",
        "infra/dns",
    )


def test_new_note_renders_valid_yaml_for_awkward_values() -> None:
    meta = {"name": "no", "description": "- Chose Postgres: ACID #1", "type": "project"}
    note = parse(render(new_note(meta, "body")))
    assert note.findings == ()
    assert (note.name, note.description, note.body) == ("no", "- Chose Postgres: ACID #1", "body\n")


def test_a_key_written_twice_is_reported_and_nothing_is_dropped() -> None:
    text = "---\nname: a\ndescription: one\ntype: user\ndescription: two\n---\nb\n"
    note = parse(text, "dup.md")
    assert note.description == "two"
    assert [str(f) for f in note.findings] == [
        "dup.md:5: description is set 2 times (lines 3, 5); only the last counts — remove the others"
    ]
    assert render(note.with_meta(description="three")) == text.replace("two", "three")
    assert render(note.with_meta(name="z")) == text.replace("name: a", "name: z")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('x_note: "one\ntwo: three"\n', 'x_note: "one\ntwo: three"\n'),  # a quoted value on a column-0 line
        ('"a:b": 1\n-foo: 1\n? k\n: v\n', '"a:b": 1\n-foo: 1\n? k\n: v\n'),  # keys a line regex cannot see
        ("anchor: &a 1\n", "anchor: &a 1\n"),
    ],
)
def test_unchanged_keys_keep_their_lines_through_an_edit(text: str, kept: str) -> None:
    source = f"---\nname: a\ndescription: d\ntype: user\n{text}---\nbody\n"
    once = render(parse(source).with_meta(description="new"))
    assert once == source.replace("description: d", "description: new")
    assert kept in once
    assert render(parse(once).with_meta(description="new")) == once  # nothing appended twice


def test_a_comment_inside_a_nested_block_stays_with_its_key() -> None:
    source = "---\nname: a\ndescription: d\nmetadata:\n# the type\n  type: user\n---\nb\n"
    changed = parse(render(parse(source).with_type("feedback")))
    assert changed.type == "feedback" and changed.findings == ()


def test_a_flow_mapping_frontmatter_is_rewritten_whole() -> None:
    note = parse("---\n{name: a, description: d, type: user}\n---\nb\n")
    assert note.description == "d"
    again = parse(render(note.with_meta(description="e")))
    assert (again.name, again.description, again.type, again.body) == ("a", "e", "user", "b\n")


def test_mixed_line_endings_are_not_converted() -> None:
    source = "---\r\nname: a\ndescription: d\r\ntype: user\n---\r\nbody\r\nmore\n"
    note = parse(source)
    assert (note.description, note.type, note.findings) == ("d", "user", ())
    out = render(note.with_meta(description="e"))
    assert out == "---\r\nname: a\ndescription: e\ntype: user\n---\r\nbody\r\nmore\n"


def test_changing_an_anchored_key_does_not_leave_a_dangling_alias() -> None:
    source = "---\nname: a\ndescription: &d the original\ntype: user\nx_summary: *d\n---\nb\n"
    note = parse(source)
    assert note.meta["x_summary"] == "the original"
    changed = parse(render(note.with_meta(description="new")))
    assert changed.findings == ()
    assert (changed.description, changed.meta["x_summary"]) == ("new", "the original")


def test_an_impossible_date_is_a_finding_not_a_crash() -> None:
    note = parse("---\nname: a\ndescription: d\ntype: user\nupdated: 2026-02-30\n---\nb\n", "bad.md")
    assert (note.description, note.type) == ("d", "user")
    assert note.meta["updated"] == "2026-02-30"
    assert [str(f) for f in note.findings] == [
        "bad.md:2: frontmatter is not valid YAML (day is out of range for month); read it as flat "
        "key: value lines — quote the value (with ' or \") so YAML reads it"
    ]


def test_a_link_never_spans_lines() -> None:
    assert links("see [[one\ntwo]], [[three]] and [[four|a\nb]]") == ("three",)
