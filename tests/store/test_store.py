"""The store: the one place memory files are opened, written and guarded."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

import kura
from kura.errors import NotFound, PolicyRefused, StoreError
from kura.files import memory_index as ix
from kura.files.memory_file import parse
from kura.store.store import Store, init_store


def test_init_creates_index_and_gitignore_once(tmp_path: Path) -> None:
    store, created = init_store(tmp_path / "s")
    assert created
    assert (store.root / "MEMORY.md").read_text().startswith("# Memory index")
    assert (store.root / ".gitignore").read_text() == ".kura/\n"
    assert init_store(tmp_path / "s")[1] is False


def test_init_extends_an_existing_gitignore(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / ".gitignore").write_text("*.swp")
    init_store(tmp_path / "s")
    assert (tmp_path / "s" / ".gitignore").read_text() == "*.swp\n.kura/\n"


def test_remember_creates_file_and_index_line(store: Store) -> None:
    result = store.remember("deploy-day", "deploys go out Tuesday: never Friday", type="project")
    assert (result.created, result.changed, result.index_changed) == (True, True, True)
    memory = store.show("deploy-day")
    assert memory.findings == ()
    assert (memory.name, memory.description, memory.type) == (
        "deploys go out Tuesday: never Friday",
        "deploys go out Tuesday: never Friday",
        "project",
    )
    assert memory.note.meta["created"] == dt.date.today()
    assert store.index().line_for("deploy-day").text == (
        "- [deploys go out Tuesday: never Friday](deploy-day.md) — deploys go out Tuesday: never Friday"
    )


def test_short_description_becomes_the_title(store: Store) -> None:
    store.remember("tz", "Mika is in Lisbon", type="user")
    assert store.index().line_for("tz").title == "Mika is in Lisbon"


def test_remember_same_content_changes_nothing(store: Store) -> None:
    store.remember("a", "first line", "body", type="user", title="A")
    path = store.resolve("a")
    before = path.read_bytes(), (store.root / "MEMORY.md").read_bytes(), path.stat().st_mtime_ns
    result = store.remember("a", "first line", "body", type="user")
    assert not result.did_work
    assert (path.read_bytes(), (store.root / "MEMORY.md").read_bytes(), path.stat().st_mtime_ns) == before


def test_update_keeps_hand_edits_and_the_hand_written_title(store: Store) -> None:
    store.remember("a", "first", type="user")
    path = store.resolve("a")
    path.write_text(path.read_text().replace("type: user", "type: user\n# my note\nowner: mika"))
    index = (store.root / "MEMORY.md").read_text().replace("[first](a.md)", "[My title](a.md)")
    (store.root / "MEMORY.md").write_text(index)
    result = store.remember("a", "second", type="feedback")
    assert result.changed and result.index_changed
    note = parse(path.read_text())
    assert (note.description, note.type, note.meta["owner"]) == ("second", "feedback", "mika")
    assert "# my note\n" in path.read_text()
    assert store.index().line_for("a").text == "- [My title](a.md) — second"
    assert note.meta["updated"] == dt.date.today()


def test_update_refuses_a_file_with_unclosed_frontmatter(store: Store) -> None:
    (store.root / "half.md").write_text("---\nname: x\nbody\n")
    with pytest.raises(StoreError, match=r"half.md:1: the frontmatter is never closed"):
        store.remember("half", "new description")
    assert (store.root / "half.md").read_text() == "---\nname: x\nbody\n"


def test_update_refuses_non_utf8(store: Store) -> None:
    (store.root / "latin.md").write_bytes(b"---\nname: caf\xe9\ndescription: d\ntype: user\n---\n")
    memory = store.show("latin")
    assert [f.message.split(";")[0] for f in memory.findings] == ["not valid UTF-8"]
    with pytest.raises(StoreError, match="not valid UTF-8"):
        store.remember("latin", "other")
    assert (store.root / "latin.md").read_bytes().endswith(b"caf\xe9\ndescription: d\ntype: user\n---\n")


def test_save_of_an_unchanged_memory_does_not_write(store: Store) -> None:
    (store.root / "odd.md").write_bytes(b"\xef\xbb\xbf---\r\nname: a: b\r\ndescription: x\r\n---\r\nbody")
    path = store.resolve("odd")
    stamp = path.stat().st_mtime_ns
    assert not store.save(store.show("odd")).did_work
    assert path.stat().st_mtime_ns == stamp


@pytest.mark.parametrize("bad", ["", "a b", "-lead", "_private", ".hidden", "a/../b", "MEMORY", "x" * 200])
def test_remember_refuses_unusable_slugs(store: Store, bad: str) -> None:
    with pytest.raises(StoreError, match="not a usable slug"):
        store.remember(bad, "d")


def test_remember_validates_type_and_description(store: Store) -> None:
    with pytest.raises(StoreError, match="type 'fact' is not one of user, feedback"):
        store.remember("a", "d", type="fact")
    with pytest.raises(StoreError, match="the description is empty"):
        store.remember("a", "  \n ")
    assert store.slugs() == ()


def test_subfolder_slugs(store: Store) -> None:
    store.remember("infra/dns", "DNS lives at the registrar", type="reference")
    assert store.slugs() == ("infra/dns",)
    assert store.show("infra/dns.md").slug == "infra/dns"
    assert store.index().line_for("infra/dns") is not None


def test_list_by_type_and_structured_access(store: Store) -> None:
    store.remember("u", "a user fact", type="user")
    store.remember("f", "a feedback rule", type="feedback")
    store.remember("p", "a project fact")
    assert [m.slug for m in store.list()] == ["f", "p", "u"]
    assert [m.slug for m in store.list(type="feedback")] == ["f"]
    assert store.list(type="reference") == ()
    assert store.show("p").type == "project"


def test_memory_rules_exclude_index_private_and_state(store: Store) -> None:
    for name in ("_draft.md", ".hidden.md", "notes.txt", "_still/x.md", ".kura/y.md", "sub/MEMORY.md"):
        path = store.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nname: n\ndescription: d\ntype: user\n---\n")
    assert store.slugs() == ()


def test_findings_name_file_and_line(store: Store) -> None:
    (store.root / "broken.md").write_text(
        "---\nname: x\ndescription: Chose Postgres: ACID\ntype: project\n---\n"
    )
    assert [str(f) for f in store.findings()] == [
        "test/broken.md:3: distill-kura's flat frontmatter: a value holds an unquoted ': ', which YAML "
        "refuses; kura reads it as written — `kura doctor --fix` quotes such values"
    ]
    assert store.show("broken").description == "Chose Postgres: ACID"


def test_not_found_says_where_and_what_next(store: Store) -> None:
    with pytest.raises(NotFound, match=r"no memory 'nope' in store 'test' \(.*\); `kura list`"):
        store.show("nope")


def test_missing_store_folder(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is not a directory — create it with `kura init"):
        Store(tmp_path / "absent").list()


class TestPolicies:
    def test_frozen_refuses_everything(self, tmp_path: Path) -> None:
        init_store(tmp_path / "s")
        frozen = Store(tmp_path / "s", name="archive", write_policy="frozen")
        for actor in ("direct", "distiller"):
            with pytest.raises(PolicyRefused, match=r"store 'archive' .* is frozen"):
                frozen.remember("a", "d", actor=actor)
        assert frozen.slugs() == ()

    def test_distiller_only_refuses_direct_writes(self, tmp_path: Path) -> None:
        init_store(tmp_path / "s")
        guarded = Store(tmp_path / "s", name="eq", write_policy="distiller-only")
        with pytest.raises(PolicyRefused, match=r"distiller-only: direct writes are refused .*\[stores.eq\]"):
            guarded.remember("a", "d")
        with pytest.raises(PolicyRefused):
            guarded.save(kura.Memory("a", tmp_path / "s" / "a.md", parse("---\nname: a\n---\n")))
        assert guarded.remember("a", "d", actor="distiller").created

    def test_unknown_policy(self, tmp_path: Path) -> None:
        with pytest.raises(StoreError, match="write_policy 'open' is not one of"):
            Store(tmp_path, write_policy="open")


@pytest.mark.parametrize(
    "text",
    [
        "key AKIAIOSFODNN7EXAMPLE here",
        "token ghp_" + "a1B2" * 9,
        "use sk-proj-" + "Ab3" * 10,
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "password: hunter2hunter2hunter2x9",
        "api_key = 'q8W3e5R7t9Y1u3I5o7P9'",
    ],
)
def test_secrets_are_refused_and_not_echoed(store: Store, text: str) -> None:
    with pytest.raises(PolicyRefused, match="looks like it holds a secret") as caught:
        store.remember("s", "a note", text)
    assert text not in str(caught.value)
    assert store.slugs() == ()


@pytest.mark.parametrize(
    "text", ["the password is in 1Password under Ferrydesk", "rotate the API key every 90 days", "sk-learn"]
)
def test_ordinary_prose_about_secrets_is_fine(store: Store, text: str) -> None:
    assert store.remember("s", "where keys live", text).created


def test_python_api_open_store(tmp_path: Path) -> None:
    init_store(tmp_path / "s")
    store = kura.open_store(tmp_path / "s")
    store.remember("x", "an api write", type="reference")
    assert [m.slug for m in kura.open_store(str(tmp_path / "s")).list(type="reference")] == ["x"]


def test_an_editor_saving_the_index_mid_write_is_not_overwritten(store: Store) -> None:
    store.remember("a", "first", type="user")
    index_path = store.root / "MEMORY.md"
    calls = []

    def change(index: ix.Index) -> ix.Index:
        calls.append(1)
        if len(calls) == 1:  # the person saves while kura is working
            index_path.write_text(index_path.read_text() + "- [Hand](hand.md) — typed in an editor\n")
        return ix.upsert(index, "b", ix.entry_text("b", "B", "from kura"))

    assert store._update_index(change)
    text = index_path.read_text()
    assert len(calls) == 2
    assert text.endswith("- [Hand](hand.md) — typed in an editor\n- [B](b.md) — from kura\n")


def test_writing_into_a_missing_store_folder_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "never-made", name="ghost")
    with pytest.raises(StoreError, match="is not a directory — create it with `kura init ghost"):
        store.remember("a", "d")
    assert not (tmp_path / "never-made").exists()


def test_an_explicit_title_is_the_name(store: Store) -> None:
    store.remember("a", "a description that is long enough to need a real title here", title="A title")
    assert store.show("a").name == "A title"
    assert store.index().line_for("a").title == "A title"


def test_an_index_symlink_out_of_the_store_is_neither_read_nor_written(store: Store, tmp_path: Path) -> None:
    (tmp_path / "foreign.md").write_text("- [Secret](secret.md) — FOREIGN\n")
    (store.root / "MEMORY.md").unlink()
    (store.root / "MEMORY.md").symlink_to(tmp_path / "foreign.md")
    with pytest.raises(StoreError, match=r"symlink to .*outside the store"):
        store.index()
    with pytest.raises(StoreError, match="symlink"):
        store.remember("a", "d")
    assert (tmp_path / "foreign.md").read_text() == "- [Secret](secret.md) — FOREIGN\n"


def test_a_link_to_a_fifo_is_not_a_memory(store: Store) -> None:
    os.mkfifo(store.root / "_pipe")
    (store.root / "p.md").symlink_to(store.root / "_pipe")
    assert store.slugs() == ()
    with pytest.raises(NotFound):
        store.show("p")


def test_a_name_too_long_for_the_filesystem_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.show("x" * 300)


def test_memory_in_any_case_is_the_index(store: Store) -> None:
    for slug in ("memory", "Memory", "sub/MEMORY"):
        with pytest.raises(StoreError, match="not a usable slug"):
            store.remember(slug, "d")
    (store.root / "memory.md").write_text("---\nname: x\ndescription: d\ntype: user\n---\n")
    assert store.slugs() == ()


def test_secrets_cannot_arrive_by_save_or_file(store: Store) -> None:
    store.remember("a", "d", type="user")
    memory = store.show("a")
    leaked = kura.Memory(memory.slug, memory.path, memory.note.with_meta(x_token="AKIAIOSFODNN7EXAMPLE"))
    with pytest.raises(PolicyRefused, match="AWS access key"):
        store.save(leaked)
    with pytest.raises(PolicyRefused, match="private key"):
        store.write_file("b", b"---\nname: b\n---\n-----BEGIN OPENSSH PRIVATE KEY-----\n")
    assert store.slugs() == ("a",)


def test_text_that_is_not_utf8_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="not UTF-8"):
        store.remember("a", "bad \udcff byte")
    assert store.slugs() == ()


def test_updating_keeps_a_hand_formatted_index_line(store: Store) -> None:
    store.remember("a", "first", type="user")
    (store.root / "MEMORY.md").write_text("# I\n\n  * [My A](a.md) : first <!-- keep -->\n")
    result = store.remember("a", "first", type="user")
    assert not result.did_work
    store.remember("a", "second")
    assert (store.root / "MEMORY.md").read_text() == "# I\n\n  * [My A](a.md) : second <!-- keep -->\n"
