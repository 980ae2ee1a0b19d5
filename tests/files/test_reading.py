"""Reading memory text properly: links are markdown's, a trigger never glues two words, and
an outline never says it is the whole map."""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, make_store, write_memory

from kura.files import memory_file as nt
from kura.map.prefill import DATA_NOTE, MapSettings, build
from kura.recall.embed import Unavailable
from kura.recall.recall import recall, shorten
from kura.recall.search import SearchIndex
from kura.store import catalog
from kura.store.store import Store
from kura.text.triggers import mechanical

TODAY = dt.date(2026, 11, 30)
CLAIM = "If a topic is not on this list, it is not remembered"
SHELL = (
    "Check the lock file first.\n\n"
    "In bash, `[[ -f .lock ]]` tests for it:\n\n"
    "```bash\nif [[ -d build ]]; then\n  rm -rf build\nfi\n```\n\n"
    "    [[ -e indented ]] && echo old\n\n"
    "<!-- [[commented-out]] -->\n\n"
    "Related: [[deploy-day]]\n"
)


def shell_store(root: Path) -> Store:
    store = make_store(root, [("deploy-day", "project", "deploys go out Tuesday", None)])
    write_memory(root, "shell", "reference", "shell tests in the deploy script", body=SHELL)
    (root / "MEMORY.md").write_text(
        (root / "MEMORY.md").read_text() + "- [shell](shell.md) — shell tests in the deploy script\n"
    )
    return store


# -- links are markdown's ---------------------------------------------------------------------


def test_links_inside_code_do_not_fail_doctor_strict(cli: Cli, tmp_path: Path) -> None:
    shell_store(tmp_path / "s")
    result = cli("-s", str(tmp_path / "s"), "doctor", "--strict", "--json")
    findings = json.loads(result.out)["findings"]
    assert [f["message"] for f in findings if f["check"] == "links"] == []
    assert result.code == 0


@pytest.mark.parametrize(
    ("body", "links"),
    [
        ("Use `[[ -f x ]]` here, and see [[real]].", ("real",)),
        ("```bash\nif [[ -f x ]]; then\n```\n\n[[real]]\n", ("real",)),
        ("~~~\n[[a]]\n~~~\n", ()),
        ("Text.\n\n    [[a]]\n", ()),
        ("-     [[a]]\n", ()),  # a list item whose content starts as indented code
        ("<!-- [[a]] -->\n", ()),
        ("<div>\n[[a]]\n</div>\n", ()),
        ("An inline <!-- [[a]] --> comment and [[b]].", ("b",)),
        ("``code with ` and [[a]]``", ()),
        ("\\[[a]] is how a link is written", ()),
        ("&#91;&#91;a]] is not one either", ()),
        ("**[[a]]**, _[[b|label]]_, [[c#part]], [[d.md]], [[a]] again", ("a", "b", "c", "d")),
        ("[[a]](https://example.com) and [x]: [[b]]", ("a", "b")),
        ("- item [[a]]\n  > quoted [[b]]\n\n# Heading [[c]]\n", ("a", "b", "c")),
        ("[[a*b]] and *[[c]]*", ("a*b", "c")),
        ("a link does not cross lines: [[a\nb]]", ()),
    ],
)
def test_what_is_a_link(body: str, links: tuple[str, ...]) -> None:
    assert nt.links(body) == links
    assert nt.new_note({"name": "n"}, body).links == links


def test_a_dead_link_is_reported_on_its_own_line_not_on_the_code_that_shows_it(
    cli: Cli, tmp_path: Path
) -> None:
    root = tmp_path / "s"
    make_store(root, [("a", "project", "links are written [[like-this]]", None)])
    body = "Write `[[gone]]` to link a memory.\n\nThis one is real: [[gone]].\n"
    write_memory(root, "a", "project", "links are written [[like-this]]", body=body)
    findings = json.loads(cli("-s", str(root), "doctor", "--json").out)["findings"]
    dead = [(f["path"], f["line"], f["message"].split(" — ")[0]) for f in findings if f["check"] == "links"]
    assert dead == [("s/a.md", 9, "[[gone]] names no memory")]


def test_the_graph_draws_no_edge_for_code(cli: Cli, tmp_path: Path) -> None:
    shell_store(tmp_path / "s")
    drawn = json.loads(cli("-s", str(tmp_path / "s"), "graph", "--format", "json").out)
    assert [(e["from"], e["to"], e["dead"]) for e in drawn["edges"]] == [("shell", "deploy-day", False)]


def test_recall_walks_links_not_code(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    body = "Tag pre-release first. Write `[[b]]` to link a memory; the real link is [[c]]."
    write_memory(root, "a", "project", "releases are tagged pre-release first", body=body)
    write_memory(root, "b", "user", "Mika reviews everything before it ships")
    write_memory(root, "c", "reference", "the checklist lives in the wiki")
    store = Store(root)
    index = SearchIndex(store, embedder=Unavailable("onnxruntime is not installed"))
    index.update()
    found = recall(store, "pre-release tagging", index=index)
    assert [h.slug for h in found.picked] == ["a"] and found.walked == ("c",)


def test_purge_names_the_memories_whose_links_it_leaves_dead(cli: Cli, tmp_path: Path) -> None:
    from kura.life import purge as pg

    store = make_store(tmp_path / "s", [("key", "reference", "the staging key", None)])
    write_memory(store.root, "uses", "project", "the deploy uses it", body="Needs [[key]].")
    write_memory(store.root, "shows", "project", "how to link", body="Write `[[key]]` to link it.")
    found = pg.closure(store, "key")
    assert found.linked_from == ("uses",) and found.to_dict()["linked_from"] == ["uses"]
    shown = cli("-s", str(store.root), "forget", "key", "--purge", input="n\n")
    assert "  linked     from uses (its [[links]] to it stay in its text, dead — edit it)" in shown.out
    assert shown.code == 1


def test_rows_an_older_reader_cached_are_read_again(cli: Cli, tmp_path: Path) -> None:
    """The catalog caches links by file identity: a row from before code was skipped must
    not keep a link that is not one."""
    store = shell_store(tmp_path / "s")
    catalog.entries(store)
    db = sqlite3.connect(store.root / ".kura" / "state.db")
    with db:
        db.execute("UPDATE notes SET links = ? WHERE slug = 'shell'", ("-f .lock\ndeploy-day",))
        db.execute("PRAGMA user_version = 2")
    db.close()
    assert catalog.entries(store)["shell"].links == ("deploy-day",)


def test_the_quick_reading_agrees_with_markdown() -> None:
    """Bodies (and paragraphs) with nothing that could hide a link are read with the link
    pattern alone; whatever the body, that gives what markdown-it-py finds, on the same lines."""
    from kura.files import body as bd

    parts = ["[[a]]", "[[b|x]]", "[[c#y]]", "text", " ", "\n", "\n\n", "*", "**", "_", "# ", "> ", "- ",
             "1. ", "`", "```", "~~~", "    ", "\t", "<!-- ", " -->", "<b>", "\\", "&amp;", "[", "]",
             "(", ")", "[[", "]]", "|", "#", ":", "---\n", "===\n", "\r", "\x00", "\ufffd", "![", "](u)",
             "[x]: ", "<", ">", "+ ", "1) ", "[[ -f x ]]", "  \n", "\\\n", "&", "***", "~~"]  # fmt: skip
    rng = random.Random(17)
    for _ in range(4000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 30)))
        full = tuple(bd._links_in(bd._parser().parse(text), text, quick=False))
        assert bd.links(text) == bd.read(text).targets == tuple(dict.fromkeys(x.target for x in full)), text
        assert bd.read(text).links == full, text


def test_headings_and_the_why_and_how_sections() -> None:
    from kura.files import body as bd

    text = (
        "# Deploys\n\nDeploys go out Tuesday 10:00.\n"
        "**Why:** a Friday deploy in March left nobody around for the rollback.\n"
        "**How to apply:** if a change is ready on Thursday, it waits; see [[deploy-day]].\n\n"
        "## Exceptions `hotfix`\n\n```\n**Why:** not this one\n# nor this heading\n```\n"
    )
    read = bd.read(text)
    assert [(h.level, h.text, h.line) for h in read.headings] == [
        (1, "Deploys", 1),
        (2, "Exceptions hotfix", 7),
    ]
    assert read.why == "a Friday deploy in March left nobody around for the rollback."
    assert read.how == "if a change is ready on Thursday, it waits; see [[deploy-day]]."
    assert [(link.target, link.line) for link in read.links] == [("deploy-day", 5)]


def test_a_long_memory_is_never_cut_inside_a_code_fence() -> None:
    fence = "```sh\n" + "\n\n".join(f"step {i} of the backup restore" for i in range(20)) + "\n```"
    text = "\n\n".join(["The backup restore runs in twenty steps.", "Filler " * 60, fence, "More " * 60])
    short = shorten(text, "backup restore steps", 400)
    assert short.count("```") % 2 == 0 and short.startswith("The backup restore runs in twenty steps.\n\n[…]")


def test_a_current_prefill_never_loads_the_markdown_parser(tmp_path: Path) -> None:
    root = tmp_path / "s"
    shell_store(root)
    subprocess.run([sys.executable, "-m", "kura", "-s", str(root), "weave", "--no-model"], check=True,
                   capture_output=True)  # fmt: skip
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kura', '-s', {str(root)!r}, 'prefill']\n"
        "try:\n    runpy.run_module('kura', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'markdown_it'), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("<<<KURA-MAP store=s>>>") and done.stderr.strip() == "[]"


# -- the trimmer never glues two words ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "budget", "together"),
    [
        ("secrets live in the vault and you should never .env files into the repository at all", 8,
         "never .env"),
        ("the deploy pipeline runs in CI .github/workflows/deploy.yml on every push to main branch", 8,
         "CI .github/workflows/deploy.yml"),
        ("we keep the configuration in a dotfile called .env which is loaded by the app at start", 6,
         "configuration .env"),
    ],
)  # fmt: skip
def test_dropped_words_leave_a_space(line: str, budget: int, together: str) -> None:
    assert together in mechanical(line, budget)


def test_trimming_never_joins_two_words() -> None:
    """Each word of a trigger comes from one word of the line (with some characters — an
    unpaired bracket, a lone backtick — left out), never from two."""
    words = ["never", ".env", ".github/workflows", "CI", "the", "of", "a", "(x", "y)", "[a](b.md)", ",",
             ";", ":", ".", "—", "-", "`make", "test`", "8", "TB", "⚠️", "Mika", "port", ":8080", ")",
             "a:", "—b", ";c", "foo,", "蒸留蔵のアーカイブは遅いディスクに置く。速いディスクはスクラッチ用。"]  # fmt: skip
    rng = random.Random(5)
    for _ in range(3000):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        short = mechanical(line, rng.randint(1, 20))
        for token in short.split():
            assert any(_within(token, source) for source in line.split()), (line, short, token)


def _within(token: str, source: str) -> bool:
    rest = iter(source)
    return all(char in rest for char in token)


def test_triggers_cached_by_the_old_trimmer_are_made_again(tmp_path: Path) -> None:
    from kura.map import layers
    from kura.map.weave import weave

    line = "secrets live in the vault and you should never .env files into the repository at all"
    store = make_store(tmp_path / "s", [("secrets", "project", line, "2026-01-01")])
    settings = MapSettings(trigger_tokens=8)
    key = layers._ledger_key(line, 8, "mechanical").replace(f"|{layers.triggers.VERSION}|", "|1|")
    db = catalog.connect(store)
    catalog.ledger_put(db, {key: "secrets live vault never.env"})
    db.close()
    woven = weave(store, settings, today=TODAY)
    assert woven is not None and "never .env" in woven.text and "never.env" not in woven.text


# -- an outline says it is one ---------------------------------------------------------------------

LONG = "the archive lives on the slow disk (hdd0, 8 TB) because the fast NVMe burns write endurance"


def big_store(tmp_path: Path, n: int = 40) -> Path:
    store = make_store(tmp_path / "s", [(f"m{i}", "project", LONG.replace("archive", f"m{i}"), "2026-03-01")
                                        for i in range(n)], extra_index="## Infra\n")  # fmt: skip
    return store.root


OVER = {"window_tokens": 400, "hard_fraction": 0.25}


def test_the_default_outline_never_says_a_missing_topic_is_not_remembered(tmp_path: Path) -> None:
    root = big_store(tmp_path)
    blocks = [
        build(root, "s", MapSettings(**OVER), today=TODAY) for _ in range(3)
    ]  # fresh, stored, always over
    blocks.append(build(root, "s", MapSettings(max_chars=1500), today=TODAY))  # under a ceiling
    for block in blocks:
        assert block.state == "sectors"
        assert "This is an outline of what you remember (kura store 's')" in block.text
        assert "NOT the full map" in block.text and "not remembered" not in block.text


def test_a_header_of_your_own_is_not_put_over_the_outline(cli: Cli, tmp_path: Path) -> None:
    root = big_store(tmp_path)
    mine = f"What the team remembers. {CLAIM}: say so."
    for settings in (MapSettings(header=mine, **OVER), MapSettings(header=mine, max_chars=1500)):
        for _ in range(2):
            block = build(root, "s", settings, today=TODAY)
            assert block.state == "sectors" and CLAIM not in block.text
            assert block.text.startswith("<<<KURA-MAP store=s>>>\nThis is an outline of what you remember")
    config = tmp_path / "work" / "kura.toml"
    config.write_text(f'[prefill]\nheader = "{mine}"\n[stores.s]\npath = "{root}"\n')
    printed = cli("-s", "s", "prefill", "--max-chars", "1500")
    assert printed.code == 0 and CLAIM not in printed.out and "This is an outline" in printed.out
    assert CLAIM in cli("-s", "s", "prefill").out  # the map itself keeps it
    config.write_text(
        f'[prefill]\nheader = "{mine}"\nsector_header = "Our outline."\n[stores.s]\npath = "{root}"\n'
    )
    printed = cli("-s", "s", "prefill", "--max-chars", "1500")
    assert printed.code == 0 and printed.out.startswith(
        f"<<<KURA-MAP store=s>>>\nOur outline. {DATA_NOTE}\n\nThis is NOT"
    )


def test_an_outline_header_of_your_own(tmp_path: Path) -> None:
    root = big_store(tmp_path)
    outline = "Our memory's outline: recall before you say anything is not remembered."
    settings = MapSettings(sector_header=outline, **OVER)
    for _ in range(3):
        block = build(root, "s", settings, today=TODAY)
        assert block.state == "sectors"
        assert block.text.startswith(
            f"<<<KURA-MAP store=s>>>\n{outline} {DATA_NOTE}\n\nThis is NOT the full map"
        )
    capped = build(root, "s", MapSettings(sector_header=outline, max_chars=1500), today=TODAY)
    assert capped.text.startswith(
        f"<<<KURA-MAP store=s>>>\n{outline} {DATA_NOTE}\n\nThis is NOT the full map"
    )
    from kura.errors import ConfigError
    from kura.map.prefill import sector_header_text

    with pytest.raises(ConfigError, match=r"\[prefill\] sector_header contains a date"):
        sector_header_text(MapSettings(sector_header="Outline as of 2026-01-02"), "s")


def test_the_outline_of_a_conflicted_index_keeps_its_own_header(tmp_path: Path) -> None:
    root = big_store(tmp_path)
    mine = f"What the team remembers. {CLAIM}: say so."
    build(root, "s", MapSettings(header=mine), today=TODAY)
    index = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(
        index + "<<<<<<< ours\n- [m1](m1.md) — a\n=======\n- [m1](m1.md) — b\n>>>>>>> theirs\n"
    )
    block = build(root, "s", MapSettings(header=mine, **OVER), today=TODAY)
    assert block.state == "conflicted" and CLAIM not in block.text
    assert block.text.startswith("<<<KURA-MAP store=s>>>\nThis is an outline of what you remember")
    assert "unresolved git merge conflict" in block.text


def test_the_mcp_map_tool_does_not_promise_a_whole_list() -> None:
    from types import SimpleNamespace

    from kura.serve.mcp_tools import MAP, Tools

    for bound in (None, "team"):
        said = Tools(SimpleNamespace(bound=bound), readonly=True).instructions()  # type: ignore[arg-type]
        assert (
            "(a topic not on the map is not remembered, unless the map says it is only an outline: "
            "then recall first)" in said
        )
    assert (
        "a topic that is not on the map is not remembered, unless the map says it is only an outline "
        "— then recall before you say so" in MAP.help
    )


def test_a_link_after_a_code_span_broken_over_lines_keeps_its_line() -> None:
    from kura.files import body as bd

    read = bd.read("Intro.\n\nSee `a\n[[gone]]` and [[gone]] here\nand [[x]].\n")
    assert [(link.target, link.line) for link in read.links] == [("gone", 4), ("x", 5)]
