"""``kura.recall.word_index``: memories' words put into the search index in batches write the
index that one memory at a time wrote (the first recall of a big store pays for every row),
and an update after edits, adds, deletes or a watcher's refresh holds what a fresh index of
the same files holds."""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
from functools import partial
from pathlib import Path

import pytest
from conftest import SAMPLE, write_memory

from kura.recall import search
from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex
from kura.store import catalog, parallel
from kura.store.store import Store
from kura.text import scripts

BENCH = Path(__file__).resolve().parents[2] / "bench"
_ROWS = "SELECT rowid, slug, name, description, body, grams FROM docs_fts ORDER BY rowid"
_BY_SLUG = (
    "SELECT docs.slug, docs.sha, docs_fts.slug, name, description, body, grams FROM docs "
    "JOIN docs_fts ON docs_fts.rowid = docs.fts ORDER BY docs.slug"
)


def _store(root: Path) -> Store:
    """The sample store, 120 memories of distill-kura's shape (mixed Japanese and English)
    and a few Korean and Chinese ones."""
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
    spec = importlib.util.spec_from_file_location("map_scale", BENCH / "map_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_distill(root.parent / "distill", 120)
    for path in (root.parent / "distill").glob("m*.md"):
        shutil.copy(path, root / path.name)
    write_memory(root, "kobo-deploy", "project", "rhino-2는 배포, kobo-8에서 동작합니다")
    write_memory(root, "zh-staging", "project", "预发布环境在 kobo-8 上运行")
    return Store(root)


def _lexical(store: Store) -> SearchIndex:
    return SearchIndex(store, embedder=Unavailable("the words are what this test is about"))


def _one_at_a_time(store: Store) -> sqlite3.Connection:
    """The index as kura wrote it before batches: per memory, a look for its row, the
    full-text insert, then its ``docs`` row with the row id the insert returned."""
    db = sqlite3.connect(":memory:")
    search._setup(db)
    state = catalog.connect(store)
    try:
        scanned = catalog.scan(store, state)
    finally:
        state.close()
    assert scanned is not None
    for entry in scanned.entries.values():
        text = catalog.said_of(store, entry.slug)
        row = db.execute("SELECT fts FROM docs WHERE slug = ?", (entry.slug,)).fetchone()
        assert row is None
        cursor = db.execute(
            "INSERT INTO docs_fts (slug, name, description, body, grams) VALUES (?, ?, ?, ?, ?)",
            (entry.slug, *text[:3], " ".join(scripts.cjk_words("\n".join(text[:3])))),
        )
        db.execute("INSERT INTO docs VALUES (?, ?, ?)", (entry.slug, entry.sha, cursor.lastrowid))
    return db


@pytest.mark.parametrize("forked", [False, True], ids=["one process", "parsed by forked workers"])
def test_a_new_index_is_the_one_a_memory_at_a_time_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    """Forked: the scan's parse (and each memory's CJK words) runs in worker processes, as
    on a store of 2,000 memories or more (``kura.store.parallel``)."""
    store = _store(tmp_path / "store")
    if forked:
        monkeypatch.setattr(catalog, "parallel_map", partial(parallel.parallel_map, threshold=10))
    index = _lexical(store)
    told: list[tuple[str, int, int]] = []
    assert index.update(progress=lambda *said: told.append(said), budget=None) == 162
    before = _one_at_a_time(store)
    assert index.db.execute(_ROWS).fetchall() == before.execute(_ROWS).fetchall()
    docs = "SELECT slug, sha, fts FROM docs ORDER BY slug"
    assert index.db.execute(docs).fetchall() == before.execute(docs).fetchall()
    assert told[-1] == ("reading", 162, 162)
    grams = index.db.execute("SELECT count(*) FROM docs_fts WHERE grams != ''").fetchone()[0]
    assert grams > 100  # the CJK words are there, not only the English ones
    assert [h.slug for h in index.search("배포", k=3).hits] == ["kobo-deploy"]
    assert [h.slug for h in index.search("预发布", k=3).hits] == ["zh-staging"]


def test_edits_adds_deletes_and_refreshes_leave_what_a_fresh_index_holds(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    index = _lexical(store)
    index.update(budget=None)
    slugs = sorted(p.stem for p in store.root.glob("m0*.md"))
    for slug in slugs[:3]:
        path = store.root / f"{slug}.md"
        path.write_text(
            path.read_text(encoding="utf-8") + "\nedited: 検証済み staging notes\n", encoding="utf-8"
        )
    for slug in slugs[3:5]:
        (store.root / f"{slug}.md").unlink()
    write_memory(store.root, "new-one", "project", "本番環境の新しいメモ about the pager")
    write_memory(store.root, "new-two", "user", "Fiona prefers morning releases")
    assert index.update(budget=None) == 7
    (store.root / "new-two.md").write_text(
        (store.root / "new-two.md").read_text(encoding="utf-8").replace("morning", "evening"),
        encoding="utf-8",
    )
    (store.root / "kobo-deploy.md").unlink()
    assert index.refresh(["new-two", "kobo-deploy"]) == 2
    index.update(budget=None)
    fresh = _lexical(
        Store(shutil.copytree(store.root, tmp_path / "again", ignore=shutil.ignore_patterns(".kura")))
    )
    fresh.update(budget=None)
    assert index.db.execute(_BY_SLUG).fetchall() == fresh.db.execute(_BY_SLUG).fetchall()
    counted = "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM docs_fts)"
    assert index.db.execute(counted).fetchone() == (161, 161)  # no full-text row left behind
    assert [h.slug for h in index.search("evening releases", k=1).hits] == ["new-two"]
    assert index.search("morning", k=5).hits == fresh.search("morning", k=5).hits
