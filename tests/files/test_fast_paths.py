"""The shortcuts a cold scan of 20,000 memories takes give what the long way gives: the
frontmatter found in the text rather than in its list of lines, plain ``key: value``
frontmatter read without YAML (and everything else declined to YAML), a body's links read
in one pass rather than line by line, and a memory with no lifecycle fields summarised at
once."""

from __future__ import annotations

import importlib.util
import random
import re
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from kura.files import body, frontmatter
from kura.files.belief import summary
from kura.files.memory_file import _CLOSE, _OPEN, parse
from kura.files.memory_index import normalize
from kura.files.slugs import _scan, file_stats

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _split_by_lines(text: str) -> tuple[str, list[str], str, str] | None:
    """The frontmatter split as it was made before: over the list of the text's lines.
    (opener, front lines, closer, body), or None when no block opens and closes."""
    text = normalize(text)[0]
    lines = text.split("\n")
    if not _OPEN.match(lines[0]):
        return None
    close = next((i for i in range(1, len(lines)) if _CLOSE.match(lines[i])), None)
    if close is None:
        return None
    return lines[0], lines[1:close], lines[close], "\n".join(lines[close + 1 :])


CRAFTED = [
    "", "---", "---\n", "---\n---", "---\n---\n", "---\n...\nbody", "----\nname: a\n-----\n\nb\n",
    "--- \r\nname: a\r\n---\t\r\nbody\r\n", "---\nname: a\n--- x\n---\nb", "\ufeff---\nname: a\n---\nb\n",
    "---\nname: a\n", "name: a\n---\nb\n", " ---\nname: a\n---\n", "---\n\n\n---\n\n\n",
    "---\nname: a\n---", "---\nname: a\r\n---\nmixed\r\nendings\n", "---\r---\r", "---\nname: a\n...",
    "---\nx: |\n  ---\n---\nbody\n---\nmore\n", "---\n.....\n---\n", "---\n\u2028---\n---\n",
]  # fmt: skip


def _random_texts(count: int) -> list[str]:
    rng = random.Random(19)
    parts = ["---", "...", "----", "--- ", "---\r", "---\t", "name: a", "type: user", "description: x: y",
             "", " ", "body", "# h", "\r", "- a", "key:", "---x", "\ufeff---", "[[a]]"]  # fmt: skip
    texts = []
    for _ in range(count):
        sep = rng.choice(["\n", "\r\n", "\n", "\r"])
        lines = [rng.choice(parts) for _ in range(rng.randint(0, 7))]
        texts.append(sep.join(lines) + rng.choice(["", "\n", "\r\n"]))
    return texts


@pytest.mark.parametrize("text", CRAFTED)
def test_the_frontmatter_is_found_where_the_lines_put_it(text: str) -> None:
    _same_split(text)


def test_random_texts_split_where_the_lines_put_it() -> None:
    for text in _random_texts(5000):
        _same_split(text)


def _same_split(text: str) -> None:
    note = parse(text, "m.md")
    split = _split_by_lines(text)
    if split is None:
        assert not note.has_frontmatter and note.meta == {} and note.body == normalize(text)[0]
        return
    opener, front, closer, rest = split
    assert note.has_frontmatter
    got = (note.delimiters, note.front_lines, note.body)
    assert got == ((opener, closer), tuple(front), rest), repr(text)


def _by_yaml(front: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[Any]]:
    with monkeypatch.context() as patch:
        patch.setattr(frontmatter, "_simple_meta", lambda lines: None)
        return frontmatter.read_meta(front, "m.md")


SIMPLE = [
    ["name: Memory 3", "description: Sam pytest migration on port 8003 uses flaky (33 GB) because x; y", "type: project"],
    ["name: a", "created: 2026-11-18", "updated: 2026-02-28"],
    ["name: trailing spaces   ", "description: and a CR\r", "type: user \r"],
    ["# a comment", "", "name: after a blank", "_private: yes it is"],
    ["name: ünïcödé wörds", "description: 日本語 text", "kind-of: dashed-key"],
    ["name: x", "description: a - b, c [d] {e} f'g \"h\" ~ * & ! % @ `i`"],
    ["description: ends with a dot.", "name: Ω"],
    [],
]  # fmt: skip
DECLINED = [
    ["description: Chose Postgres: ACID"], ["name: yes"], ["name: No"], ["name: null"], ["on: x"],
    ["created: 2026-02-30"], ["name: a #comment"], ["tags: [a, b]"], ["count: 12"], ["name: 'quoted'"],
    ["name: - item"], ["name:"], ["name:\tx"], ["name: a", "name: b"], ["name: value:"],
    ["Null: x"], ["  indented: x"], ["name: x", "  continued"], ["- a"], ["name: &anchor x"],
    ["name: *alias"], ["name: !tag x"], ["name: %x"], ["name: @x"], ["name: 2026-01-02T10:00"],
    ["name: ?x"], ["name: |"], ["name: >"], ["key with space: x"], ["name: x\ty"], ["name: a\rb"],
    ["3d: x"], ["name:  "], ["name: 1st"], ["'q': x"], ["name: .5"], ["name: true"], ["name: Off"],
]  # fmt: skip


@pytest.mark.parametrize("front", SIMPLE)
def test_plain_frontmatter_reads_as_yaml_reads_it(front: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = frontmatter._simple_meta(front)
    assert fast is not None
    assert (fast, []) == _by_yaml(front, monkeypatch)
    assert frontmatter.read_meta(front, "m.md") == (fast, [])


@pytest.mark.parametrize("front", DECLINED)
def test_anything_yaml_could_read_otherwise_goes_to_yaml(
    front: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert frontmatter._simple_meta(front) is None
    assert frontmatter.read_meta(front, "m.md") == _by_yaml(front, monkeypatch)


def test_a_plain_line_is_matched_as_the_lazy_pattern_matched_it() -> None:
    """The line pattern is greedy now; its groups are the old lazy pattern's, on any line."""
    lazy = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ ]+((?:[^\W\d_]|_)[^\t\r]*?|\d{4}-\d{2}-\d{2})[ \r]*$")
    rng = random.Random(3)
    alphabet = [*"ab _:-#\t\r12\xa0é日\u2028'\"", "  ", "\r\r", " \r", "2026-01-02"]
    for _ in range(20000):
        line = rng.choice(["k: ", "key:", "a_b:  ", "x: ", "name: a"]) + "".join(
            rng.choice(alphabet) for _ in range(rng.randint(0, 8))
        )
        old, new = lazy.match(line), frontmatter._SIMPLE.match(line)
        assert (old and old.groups()) == (new and new.groups()), line


def _links_line_by_line(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(link.target for link, _ in body._found(text, 1)))


BODIES = [
    "", "no links", "[[a]]", "[[a]] [[b]] [[a]]", "[[a|label]] and [[b#part]] and [[c#p|l]]", "[[a.md]]",
    "[[ spaced ]]", "[[]]", "[[ ]]", "[[.md]]", "[[a\nb]]", "[[a]]\n[[b]]\n\n[[c]]", "[[[a]]]", "[[a]]]]",
    "line one\n[[x]] then [[y\n]] [[z]]", "[[a|b|c]]", "[[a#b#c]]", "[[a\x00]] [[b]]", "[[a\ufffd]] [[c]]",
    "[[a]] `code` [[b]]", "[[b]]\n\n    [[indented]]", "[[one]][[two]]", "[[x]]\r\n[[y]]",
]  # fmt: skip


# a body with code or HTML in it is read by the markdown parser, not the pattern: tests/files/test_body*
PLAIN_BODIES = [text for text in BODIES if body._HIDING.search(text) is None or "[[" not in text]


@pytest.mark.parametrize("text", PLAIN_BODIES)
def test_a_bodys_links_in_one_pass_are_the_links_line_by_line(text: str) -> None:
    assert body.links(text) == _links_line_by_line(text)


def test_random_bodies_link_the_same_in_one_pass() -> None:
    rng = random.Random(5)
    parts = ["[[", "]]", "a", "b.md", "|", "#", "\n", " ", "x", "[", "]", "[[c]]", "\x00"]
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        if body._HIDING.search(text) is None:
            assert body.links(text) == _links_line_by_line(text), repr(text)


METAS: list[dict[str, Any]] = [
    {}, {"name": "a", "type": "project"}, {"archived": None}, {"superseded_by": ""}, {"supersedes": []},
    {"valid_until": None, "contradicted_by": ""}, {"archived_reason": "  "}, {"archived": False},
    {"archived": True, "type": "user"}, {"superseded_by": "b"}, {"supersedes": ["a", "", "b"]},
    {"created": "2026-01-02", "valid_until": "2026-03-04"}, {"witnesses": None}, {"witnesses": []},
    {"witnesses": "not a list"},
]  # fmt: skip


@pytest.mark.parametrize("meta", METAS)
def test_a_summary_said_at_once_is_the_summary_worked_out(meta: dict[str, Any]) -> None:
    """``"witnesses": None`` means no witnesses, and takes the summary the long way."""
    assert summary(meta) == summary({**meta, "witnesses": meta.get("witnesses")})


def test_parse_keeps_every_field_for_the_sample_shapes() -> None:
    text = "---\nname: a\ndescription: b\ntype: user\n---\n\nbody [[x]]\n"
    note = parse(text, "m.md")
    assert astuple(note)[:2] == ({"name": "a", "description": "b", "type": "user"}, "\nbody [[x]]\n")
    assert note.links == ("x",) and note.findings == ()


HIDING = ["", "plain", "a`b", "a~b", "<x", "a\\b", "&amp;", "\t", "\r", "\x00", "    ", "   x ", "x    y",
          "a   ", " " * 3 + "\n" + " ", "ok [[a]] then    ", "ok [[a]]` later"]  # fmt: skip


@pytest.mark.parametrize("text", HIDING)
def test_what_hides_a_link_is_found_as_the_one_pattern_found_it(text: str) -> None:
    for end in range(len(text) + 2):
        assert body._hides(text, end) == (body._HIDING.search(text, 0, end) is not None), (text, end)


def _flat_by_yaml(front: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[int]]:
    """The flat reading as it was made before: every key's lines through YAML (the values
    and the lines of the findings; what a finding says of distill-kura's layout is new)."""
    with monkeypatch.context() as patch:
        patch.setattr(frontmatter, "flat_value", lambda lines: None)
        return _seen(front)


def _seen(front: list[str]) -> tuple[dict[str, Any], list[int]]:
    meta, findings = frontmatter.read_meta(front, "m.md")
    return meta, [finding.line for finding in findings]


FLAT_PARTS = [
    "Decided", ": ", " ", "use uv", "not pip", ",", "#", " #", " # c", ":", "日本語", "は", "「", "」", "'",
    '"', "[", "]", "{", "}", "-", "yes", "No", "null", "on", "12", "2026-01-02", "~", "*a", "&a", "!x",
    "\t", "\r", "\u2028", "\u3000", "\xa0", "\x85", "\ufeff", "\x01", "|", ">", "%", "@", "`", "<<", "=",
    ".5", "+1", "?", "a:b", "http://x", "ok", "…", "[" * 40, "{[" * 20,
]  # fmt: skip
FLAT_KEYS = ["name", "description", "type", "on", "No", "a-b", "_x", "tags", "name"]


def _random_flat(rng: random.Random) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 5)):
        key = rng.choice(FLAT_KEYS)
        value = "".join(rng.choice(FLAT_PARTS) for _ in range(rng.randint(0, 6)))
        lines.append(f"{key}:{rng.choice([' ', '  ', ''])}{value}")
        if rng.random() < 0.25:
            lines.append(rng.choice(["metadata:", "metadata:  ", "on:", "meta: x"]))
            for _ in range(rng.randint(0, 3)):
                sub = "".join(rng.choice(FLAT_PARTS) for _ in range(rng.randint(1, 3)))
                lines.append(
                    f"{rng.choice(['  ', '  ', '    ', '- '])}{rng.choice(['type', 'source', 'yes'])}: {sub}"
                )
    if rng.random() < 0.7:  # most blocks are refused by YAML as a whole: the flat reading then
        lines.append("description: Decided: the flat reading")
    return lines


def test_random_flat_frontmatter_reads_as_yaml_key_by_key_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(33)
    fast = 0
    for _ in range(4000):
        front = _random_flat(rng)
        assert _seen(front) == _flat_by_yaml(front, monkeypatch), front
        with monkeypatch.context() as patch:  # the block read at once says what key by key says
            patch.setattr(frontmatter, "_flat_meta", lambda lines, path: None)
            key_by_key = frontmatter.read_meta(front, "m.md")
        assert frontmatter.read_meta(front, "m.md") == key_by_key, front
        fast += sum(frontmatter.flat_value((line,)) is not None for line in front)
    assert fast > 4000  # the shortcut was taken, not only declined


def test_the_distill_kura_shaped_store_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file of bench/map_scale.py's distill-kura generator: the same values, findings
    and lines as every key through YAML."""
    spec = importlib.util.spec_from_file_location("map_scale", BENCH / "map_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_distill(tmp_path / "s", 400)
    colons = 0
    for path in sorted((tmp_path / "s").glob("m*.md")):
        front = list(parse(path.read_text(), path.name).front_lines)
        colons += ": " in front[1].partition(": ")[2]
        assert _seen(front) == _flat_by_yaml(front, monkeypatch), path.name
    assert 100 < colons < 220  # about 40 % of them are not YAML


def test_distill_kuras_flat_frontmatter_is_read_without_a_yaml_parse_per_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    front = ["name: uv", "description: Decided: use uv, not pip  ", "metadata:", "  type: feedback  # user | project",
             "note: 日本語: ステージングは kobo-8 # still the note"]  # fmt: skip
    monkeypatch.setattr(frontmatter._yaml(), "safe_load", _no_yaml)
    meta, findings = frontmatter.read_meta(front, "m.md")
    assert meta == {"name": "uv", "description": "Decided: use uv, not pip", "metadata": {"type": "feedback"},
                    "note": "日本語: ステージングは kobo-8 # still the note"}  # fmt: skip
    assert [f.line for f in findings] == [3]


def _no_yaml(text: str) -> Any:
    raise AssertionError(f"a YAML parse of {text!r}")


def test_file_stats_are_in_the_order_sorting_the_whole_tuples_gives(tmp_path: Path) -> None:
    """``slugs.file_stats`` sorts by path alone (each path is there once): the order sorting
    the (path, identity, link) tuples gave, across folders, names that share a prefix and a link."""
    rng = random.Random(5)
    for i in range(300):
        folder = tmp_path / rng.choice(["", "a", "a/b", "a-b", "a.b", "Z", "é"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{rng.choice(['m', 'm-', 'm.', 'M', 'ü'])}{i}.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "a" / next(p.name for p in (tmp_path / "a").glob("*.md")))
    whole = sorted(
        (rel, ident, kind == "link") for rel, kind, ident in _scan(tmp_path, with_stats=True) if ident
    )
    got = file_stats(tmp_path)
    assert got == whole and len({rel for rel, _, _ in got}) == len(got) == 301


ODD_NAMES = [
    "MEMORY.md", "memory.MD", "Memory.md", "a/MEMORY.md", ".hidden.md", "_private.md", ".md", "x.md",
    "threads/t.md", "Threads/x.md", "a/b.md", "a/.b.md", "a/_b.md", "tab\there.md", "new\nline.md",
    "colon:name.md", "back\\slash.md", " lead.md", "trail .md", "a /b.md", "a/ b.md", "notes.txt",
    "café.md", "日本語メモ.md", "x.md.md", "\x7fdel.md", "ok-name_1.2.md", "İMEMORY.md",
    "\xa0lead.md", "trail\u3000.md", "a\u2028b.md", "x\x85.md", "a\u200bb.md", "ends .md",
]  # fmt: skip


def test_memory_names_in_one_pass_are_the_names_one_by_one() -> None:
    from kura.files.slugs import is_memory_name, memory_names

    rng = random.Random(5)
    plain = [f"m{i:05d}.md" for i in range(300)] + ["café.md", "日本語メモ.md", "x.md.md", "ok-name_1.2.md"]
    cases = [plain, [*plain, "MEMORY.md"], [], ["MEMORY.md"]] + [[name] for name in ODD_NAMES]
    cases += [[*rng.sample(plain, 40), odd, *rng.sample(plain, 3)] for odd in ODD_NAMES]
    for rels in cases:
        assert memory_names(rels) == [is_memory_name(rel) for rel in rels], rels


def test_a_printable_name_holds_no_character_the_unreachable_rule_finds_but_the_space() -> None:
    """What lets ``memory_names`` ask ``str.isprintable`` and a few C scans instead of its
    regex: over every code point, each character ``_UNREACHABLE``'s classes match (a
    control character, DEL, and every ``\\s``) is not printable, or is the space."""
    from kura.files.slugs import _UNREACHABLE

    every = "".join(map(chr, range(0x110000)))
    classes = re.findall(r"[\x00-\x1f\x7f\udc80-\udcff]|\s", every)
    assert "\xa0" in classes and "\u3000" in classes and "\t" in classes  # the classes are Unicode's
    assert "\udcff" in classes  # a byte that is not UTF-8, as ``surrogateescape`` keeps it
    assert sorted(c for c in classes if c.isprintable()) == [" "]
    assert _UNREACHABLE.pattern == r"[\x00-\x1f\x7f:\\\udc80-\udcff]|(?:\A|/)\s|\s(?:/|\.md\Z)"  # the rule


def test_the_characters_a_plain_value_cannot_hold_are_those_outside_what_yaml_reads_as_itself() -> None:
    from kura.files.flat import UNPLAIN

    every = "".join(map(chr, range(0x110000)))
    outside = re.compile(
        "[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    )
    assert UNPLAIN.findall(every) == outside.findall(every)
