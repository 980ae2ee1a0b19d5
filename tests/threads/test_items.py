"""A thread's keyed items as files: the Python API, containment, and the memories kept apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kura.errors import InvalidRequest, NotFound, PolicyRefused, StoreError
from kura.health.doctor import diagnose
from kura.map.weave import weave
from kura.map_settings import MapSettings
from kura.store.store import Store
from kura.threads import Thread
from kura.threads.names import key_of, lookup_key, new_key
from kura.threads.observer import observe


def test_write_read_list_delete(store: Store) -> None:
    thread = Thread.of(store, "support-4711")
    done = thread.write("user-format-preference", "prefers markdown tables", "fact")
    assert (done.created, done.changed) == (True, True)
    thread.write("work:current-project", "Building A2A protocol for Talon", "summary")
    thread.write("scratch", "a note")
    path = store.root / "threads/support-4711/work/current-project.md"
    text = path.read_text()
    assert text.startswith("---\nkey: work:current-project\nnamespace: summary\nupdated: '")
    assert text.endswith("---\nBuilding A2A protocol for Talon\n")
    assert thread.read("work:current-project").value == "Building A2A protocol for Talon"
    assert [i.key for i in thread.list("fact")] == ["user-format-preference"]
    assert [i.key for i in thread.list()] == ["scratch", "user-format-preference", "work:current-project"]
    assert [(i.key, i.namespace) for i in thread.list("note")] == [("scratch", "note")]
    kept = thread.delete("scratch")
    assert (
        kept.read_text()
        == "---\nkey: scratch\nnamespace: note\nupdated: '"
        + kept.read_text().split("'")[1]
        + "'\n---\na note\n"
    )
    assert not (store.root / "threads/support-4711/scratch.md").exists()
    with pytest.raises(NotFound):
        thread.read("scratch")


def test_unchanged_write_keeps_bytes_and_a_hand_edit_is_read(store: Store) -> None:
    thread = Thread.of(store, "t")
    thread.write("pref", "tables", "fact")
    path = store.root / "threads/t/pref.md"
    before = path.read_bytes()
    again = thread.write("pref", "tables")
    assert (again.created, again.changed) == (False, False) and path.read_bytes() == before
    path.write_text(path.read_text().replace("tables", "bullet lists, never tables") + "mine: kept\n")
    assert thread.read("pref").value == "bullet lists, never tables\nmine: kept"
    path.write_text(
        "---\nkey: pref\nnamespace: fact\nowner: ana\nupdated: '2026-01-01T00:00:00Z'\n---\nold\n"
    )
    thread.write("pref", "new")
    assert "owner: ana\n" in path.read_text() and thread.read("pref").namespace == "fact"


def test_a_notebook_file_a_person_saved_is_an_item(store: Store) -> None:
    (store.root / "threads/t/research").mkdir(parents=True)
    (store.root / "threads/t/research/My Notes.md").write_text("# Findings\n\nthe cache is cold\n")
    (store.root / "threads/t/_observations.md").write_text("# Observations\n")
    item = Thread.of(store, "t").read("research:My Notes")
    assert (item.key, item.namespace, item.value) == (
        "research:My Notes",
        "note",
        "# Findings\n\nthe cache is cold",
    )
    assert [i.key for i in Thread.of(store, "t").list()] == ["research:My Notes"]


def test_update_writes_a_map_in_one_call_or_nothing(store: Store) -> None:
    thread = Thread.of(store, "t")
    done = thread.update({"work:current-project": "Building A2A", "preference:output-format": "tables"})
    assert [(w.item.key, w.item.namespace) for w in done] == [
        ("work:current-project", "fact"),
        ("preference:output-format", "fact"),
    ]
    with pytest.raises(InvalidRequest):
        thread.update({"ok-key": "v", "../bad": "v"})
    assert not (store.root / "threads/t/ok-key.md").exists()


@pytest.mark.parametrize(
    "name", ["../other", "..", "%2e%2e%2fother", "/etc/passwd", "a/b", ".kura", "_x", "x\n", "", "a\\b"]
)
def test_a_thread_id_cannot_leave_the_threads_folder(store: Store, name: str) -> None:
    with pytest.raises(InvalidRequest):
        Thread.of(store, name)


@pytest.mark.parametrize(
    "key", ["../other/x", "..:x", "/etc/passwd", "a/b", "_observations", ".kura:lock", "x\x00", "a\\b", ":x"]
)
def test_a_key_cannot_leave_its_thread(store: Store, key: str) -> None:
    (store.root / "threads/other").mkdir(parents=True)
    (store.root / "threads/other/x.md").write_text("secret plans\n")
    thread = Thread.of(store, "t")
    with pytest.raises(NotFound):
        thread.read(key)
    with pytest.raises(InvalidRequest):
        thread.write(key, "v")
    with pytest.raises(NotFound):
        thread.delete(key)
    assert (store.root / "threads/other/x.md").read_text() == "secret plans\n"


def test_symlinks_out_of_the_thread_are_not_followed(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("foreign\n")
    (store.root / "threads/t").mkdir(parents=True)
    (store.root / "threads/other").mkdir()
    (store.root / "threads/other/y.md").write_text("other thread\n")
    os.symlink(outside, store.root / "threads/t/out")
    os.symlink(store.root / "threads/other/y.md", store.root / "threads/t/y.md")
    thread = Thread.of(store, "t")
    with pytest.raises(StoreError, match="folder on its path was replaced by a symlink"):
        thread.read("out:x")
    with pytest.raises(StoreError, match="a symlink out of this thread"):
        thread.read("y")
    assert thread.list() == ()
    with pytest.raises(StoreError):
        thread.write("out:x", "over")
    assert (outside / "x.md").read_text() == "foreign\n"


def test_keys_map_to_file_names_and_back() -> None:
    for key in ("plain", "work:current-project", "a:b:c", "v1.2"):
        parts = lookup_key(new_key(key))
        assert parts is not None and key_of("/".join(parts) + ".md") == key
    assert key_of("work/x.md") == "work:x" and key_of("x.txt") is None and key_of("_observations.md") is None


def test_thread_files_are_never_memories(store: Store) -> None:
    store.remember("deploy-day", "we deploy on Tuesdays")
    Thread.of(store, "t").write("deploy-day", "a thread note with the same name")
    (store.root / "Threads").mkdir(exist_ok=True)
    assert store.slugs() == ("deploy-day",)
    assert "threads" not in store.index_bytes().decode()
    with pytest.raises(NotFound):
        store.show("threads/t/deploy-day")
    with pytest.raises(StoreError):
        store.remember("threads/t/x", "a memory in the thread folder")
    assert "threads/" not in weave(store, MapSettings()).text
    assert all("threads" not in str(f) for f in diagnose(store).findings)


def test_a_frozen_store_refuses_thread_writes(tmp_path: Path) -> None:
    store = Store(tmp_path, write_policy="frozen")
    (tmp_path / "MEMORY.md").write_text("# Memory index\n")
    with pytest.raises(PolicyRefused):
        Thread.of(store, "t").write("k", "v")
    with pytest.raises(PolicyRefused):
        observe(store, "noticed", thread=Thread.of(store, "t"))


def test_secrets_are_refused(store: Store) -> None:
    with pytest.raises(PolicyRefused):
        Thread.of(store, "t").write("k", "the key is AKIAIOSFODNN7EXAMPLE ok")
    assert not (store.root / "threads/t/k.md").exists()
