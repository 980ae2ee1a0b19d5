"""The watcher under real editor saves: exactly one re-weave per settled change."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import make_store

from kura.health.doctor import diagnose
from kura.serve.watch import Watcher, relevant, stop_watching, watch

DEBOUNCE = 0.2
QUIET = DEBOUNCE * 4  # after this long with no new rebuild, none is coming


class Counted:
    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.changed.set()


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Counted, Watcher]]:
    store = make_store(
        tmp_path / "s", [("a", "project", "first line", "2026-03-01"), ("b", "user", "b line", None)]
    )
    counted = Counted()
    watcher, observer = watch(store.root, counted, debounce=DEBOUNCE)
    time.sleep(0.1)  # let the observer attach its inotify watches
    yield store.root, counted, watcher
    stop_watching(watcher, observer)


def settle(counted: Counted, expected: int, deadline: float = 5.0) -> int:
    """Wait until ``expected`` rebuilds happened (or the deadline passed), then for a quiet
    spell long enough that any extra rebuild would have shown up."""
    end = time.monotonic() + deadline
    while counted.count < expected and time.monotonic() < end:
        counted.changed.wait(0.05)
        counted.changed.clear()
    time.sleep(QUIET)
    return counted.count


def edit(text: str) -> Callable[[str], str]:
    return lambda old: old.replace("first line", text)


def test_rename_over_save(watched: tuple[Path, Counted, Watcher]) -> None:
    root, counted, _ = watched
    tmp = root / ".a.md.tmp-vscode"
    tmp.write_text((root / "a.md").read_text().replace("first line", "renamed over"))
    os.replace(tmp, root / "a.md")
    assert settle(counted, 1) == 1


def test_backup_and_replace_save(watched: tuple[Path, Counted, Watcher]) -> None:
    root, counted, _ = watched
    (root / "4913").write_text("")
    (root / "4913").unlink()
    os.replace(root / "a.md", root / "a.md~")
    (root / "a.md").write_text((root / "a.md~").read_text().replace("first line", "vim wrote this"))
    (root / "a.md~").unlink()
    assert settle(counted, 1) == 1


def test_partial_writes_settle_into_one(watched: tuple[Path, Counted, Watcher]) -> None:
    root, counted, _ = watched
    text = (root / "a.md").read_text().replace("first line", "written in pieces")
    with open(root / "a.md", "w") as handle:
        for start in range(0, len(text), 20):
            handle.write(text[start : start + 20])
            handle.flush()
            time.sleep(DEBOUNCE / 5)
    assert settle(counted, 1) == 1


def test_unchanged_content_and_noise_cause_nothing(watched: tuple[Path, Counted, Watcher]) -> None:
    root, counted, _ = watched
    os.utime(root / "a.md")
    (root / "a.md").write_text((root / "a.md").read_text())  # re-saved as it was
    (root / ".a.md.swp").write_text("swap")
    (root / "_scratch.md").write_text("private")
    (root / ".kura" / "map.md").write_text("kura's own state")
    (root / "notes.txt").write_text("not a memory")
    (root / "a.md").read_text()
    assert settle(counted, 1, deadline=QUIET) == 0


def test_two_changes_in_a_row_are_two_rebuilds(watched: tuple[Path, Counted, Watcher]) -> None:
    root, counted, _ = watched
    (root / "a.md").write_text((root / "a.md").read_text().replace("first line", "one"))
    assert settle(counted, 1) == 1
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [c](c.md) — new\n")
    (root / "c.md").write_text("---\nname: c\ndescription: new\ntype: user\n---\n")
    assert settle(counted, 2) == 2


def test_a_memory_and_the_index_written_in_one_burst_are_one_rebuild(tmp_path: Path) -> None:
    # the index settles long before the memory written in pieces after it: still one change.
    # A long debounce with short gaps, so a loaded machine's stall cannot split the burst.
    debounce = 0.4
    store = make_store(tmp_path / "s", [("a", "project", "first line", "2026-03-01")])
    counted = Counted()
    watcher, observer = watch(store.root, counted, debounce=debounce)
    try:
        time.sleep(0.1)
        root = store.root
        (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [c](c.md) — new\n")
        text = "---\nname: c\ndescription: new\ntype: user\n---\nwritten in pieces after the index\n"
        with open(root / "c.md", "w") as handle:
            for start in range(0, len(text), 5):  # 16 pieces over 0.8 s: twice the debounce
                time.sleep(0.05)
                handle.write(text[start : start + 5])
                handle.flush()
        end = time.monotonic() + 5
        while counted.count < 1 and time.monotonic() < end:
            counted.changed.wait(0.05)
        time.sleep(debounce * 4)
        assert counted.count == 1
    finally:
        stop_watching(watcher, observer)


def test_a_burst_that_never_pauses_still_rebuilds(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", "first line", "2026-03-01")])
    counted = Counted()
    watcher, observer = watch(store.root, counted, debounce=DEBOUNCE)
    watcher.longest = DEBOUNCE * 4
    try:
        time.sleep(0.1)
        end = time.monotonic() + DEBOUNCE * 10
        n = 0
        while time.monotonic() < end:
            n += 1
            (store.root / "a.md").write_text(f"---\nname: a\ndescription: d\ntype: user\n---\nsave {n}\n")
            time.sleep(DEBOUNCE / 4)
        assert counted.count >= 1  # rebuilt while the saves went on
    finally:
        stop_watching(watcher, observer)


def test_heartbeat_tells_doctor_the_watcher_is_alive(watched: tuple[Path, Counted, Watcher]) -> None:
    root, _, watcher = watched
    watcher.beat()
    from kura.store.store import Store

    report = diagnose(Store(root))
    assert report.watcher is not None and report.watcher["pid"] == os.getpid()


@pytest.mark.parametrize(
    ("name", "kept"),
    [("a.md", "a.md"), ("sub/b.md", "sub/b.md"), ("MEMORY.md", "MEMORY.md"), ("a.md~", None), ("4913", None),
     (".a.md.swp", None), (".kura/map.md", None), ("_draft.md", None), ("a.md.tmp", None), ("x.txt", None)],
)  # fmt: skip
def test_what_counts_as_a_memory_event(tmp_path: Path, name: str, kept: str | None) -> None:
    assert relevant(tmp_path, str(tmp_path / name)) == kept


def test_a_folder_of_memories_moved_in_is_one_rebuild(
    watched: tuple[Path, Counted, Watcher], tmp_path: Path
) -> None:
    root, counted, _ = watched
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("---\nname: x\ndescription: moved in\ntype: user\n---\n")
    os.replace(outside, root / "team")
    assert settle(counted, 1) == 1


def test_a_failing_rebuild_does_not_stop_the_watcher(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", "first line", "2026-03-01")])
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("bad date in a memory")

    watcher, observer = watch(store.root, flaky, debounce=DEBOUNCE)
    try:
        time.sleep(0.1)
        for text in ("one", "two"):
            (store.root / "a.md").write_text((store.root / "a.md").read_text() + text)
            end = time.monotonic() + 5
            while len(calls) < (1 if text == "one" else 2) and time.monotonic() < end:
                time.sleep(0.02)
        assert len(calls) == 2 and watcher.errors == ["ValueError: bad date in a memory"]
    finally:
        stop_watching(watcher, observer)


def test_after_each_rebuild_the_search_index_is_brought_up_to_date(tmp_path: Path) -> None:
    from kura.files.slugs import stamp_files
    from kura.recall.search import SearchIndex
    from kura.store.store import Store

    store = make_store(tmp_path / "s", [("a", "project", "the archive lives on the slow disk", None)])
    SearchIndex(Store(store.root)).update()
    seen: list[set[str]] = []

    def after(changed: set[str]) -> None:
        index = SearchIndex(Store(store.root))
        index.update()
        index.prepare()
        index.close()
        seen.append(changed)

    counted = Counted()
    watcher, observer = watch(store.root, counted, debounce=DEBOUNCE, after=after)
    time.sleep(0.1)
    try:
        (store.root / "b.md").write_text(
            "---\nname: b\ndescription: Ingrid waters the ferns\ntype: user\n---\n"
        )
        assert settle(counted, 1) == 1
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop_watching(watcher, observer)
    assert seen == [{"b.md"}] and watcher.errors == []
    fresh = SearchIndex(Store(store.root))
    assert fresh.db.execute("SELECT value FROM kv WHERE key = 'stamp'").fetchone()[0] == stamp_files(
        store.root
    )
    assert fresh.search("who looks after the plants", k=1).hits[0].slug == "b"
