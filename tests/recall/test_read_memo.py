"""Files a warm server's recall reads are kept while unchanged: the same answers as reading
them again (equivalence), an edit seen by the very next read (invalidation), and nothing kept
that the store itself would not read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_memory

from kura.config import parse_config
from kura.errors import NotFound
from kura.recall.read_memo import ReadMemo
from kura.recall.recall import recall
from kura.recall.search import SearchIndex
from kura.serve.pool import StorePool
from kura.store.store import Store

QUESTIONS = ("how do I run the tests?", "where do nightly database dumps go", "can I ship on Friday evening")


def _recalled(store: Store, index: SearchIndex, question: str) -> tuple[object, ...]:
    found = recall(store, question, index=index)
    return found.picked, found.walked, found.context, found.standing, found.how


def test_a_recall_over_kept_reads_is_the_recall_over_fresh_ones(
    tmp_path: Path, sample_copy: Callable[[Path], Path]
) -> None:
    store = Store(sample_copy(tmp_path / "store"))
    memo = ReadMemo()
    index = SearchIndex(store)
    index.update()
    for question in QUESTIONS * 2:  # the second time from what was kept
        assert _recalled(memo.over(store), index, question) == _recalled(store, index, question)
    for slug in store.slugs():
        assert memo.over(store).read(slug) == store.read(slug)
        assert memo.over(store).read(slug) == store.read(slug)
        assert memo.over(store).resolve(slug) == store.resolve(slug)
    index.close()


def test_an_edit_is_read_by_the_next_question_however_it_was_made(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "disk", "project", "the archive lives on the slow disk")
    store, memo = Store(root), ReadMemo()
    path = root / "disk.md"
    first = memo.over(store).read("disk")[0]
    assert memo.over(store).read("disk")[0] == first and memo.reads == 1
    stamp = path.stat()
    same_size = first.replace(b"slow", b"fast")  # same size, and the old mtime put back
    path.write_bytes(same_size)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert memo.over(store).read("disk")[0] == same_size
    replaced = tmp_path / "new.md"  # an editor's save: a new file renamed over the old one
    replaced.write_bytes(first.replace(b"slow disk", b"NAS"))
    os.replace(replaced, path)
    assert b"NAS" in memo.over(store).read("disk")[0]
    assert memo.over(store).read("disk")[1].description == store.show("disk").description
    path.unlink()
    with pytest.raises(NotFound):
        memo.over(store).read("disk")
    with pytest.raises(NotFound):
        memo.over(store).resolve("disk")


def test_a_link_swapped_in_is_read_by_the_stores_rules_not_from_what_was_kept(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "disk", "project", "the archive lives on the slow disk")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: o\ndescription: FOREIGN\ntype: user\n---\nFOREIGN\n")
    store, memo = Store(root), ReadMemo()
    memo.over(store).read("disk")
    (root / "disk.md").unlink()
    (root / "disk.md").symlink_to(outside)
    kept = memo.over(store)
    with pytest.raises(NotFound):
        kept.read("disk")  # the store refuses a link out of it, and nothing kept answers instead
    with pytest.raises(NotFound):
        kept.resolve("disk")
    with pytest.raises(NotFound):
        kept.read("../outside")


def test_a_warm_recall_through_the_service_reads_no_unchanged_file_again(
    tmp_path: Path, sample_copy: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = sample_copy(tmp_path / "team")
    service = StorePool(parse_config({"stores": {"team": {"path": str(root)}}}))
    reads: list[str] = []
    plain = Store.read

    def counted(store: Store, slug: str, path: Path | None = None) -> object:
        reads.append(slug)
        return plain(store, slug, path)

    monkeypatch.setattr(Store, "read", counted)
    try:
        first = service.recall("how do I run the tests?")
        assert reads, "the first recall reads its hits"
        reads.clear()
        second = service.recall("how do I run the tests?")
        assert {**second, "elapsed": 0} == {**first, "elapsed": 0}
        assert reads == []  # today's code read every hit's file again: 15 to 25 a question
        (root / "test-command.md").write_bytes((root / "test-command.md").read_bytes() + b"\nEdited.\n")
        again = service.recall("how do I run the tests?")
        assert reads == ["test-command"] and "Edited." in again["context"]
    finally:
        service.close()
