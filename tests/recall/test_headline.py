"""A memory's headline vector (``kura.recall.headline``): name and description embedded on their
own, lifting a memory's cosine towards theirs. Real stores, the real model, real ``kura
recall`` processes, the real search database."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kura.recall import headline
from kura.recall.embed import load_embedder
from kura.recall.index_build import text_of
from kura.recall.search import SearchIndex
from kura.store.store import Store

MOTHER = "What grain do we give the mother culture, and how warm is its home?"


def recall(store: Path, question: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), "recall", question, "--json", "--no-model"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


def heads(store: Path) -> dict[str, bytes]:
    """The headline vectors the store's search database holds, by slug."""
    with sqlite3.connect(store / ".kura" / "search.db") as db:
        rows = db.execute(
            "SELECT docs.slug, vectors.vec FROM docs JOIN vectors ON vectors.sha = docs.sha "
            "WHERE vectors.model LIKE ? AND length(vectors.vec) > 0",
            (f"%{headline.SUFFIX}",),
        ).fetchall()
    return dict(rows)


def test_a_paraphrase_of_what_a_memory_is_about_is_answered_not_refused(bakery: Path) -> None:
    """The sourdough starter's whole vector is 0.255 from the question (recall's floor is
    0.27): before headlines the store refused a question it holds the answer to. Its name and
    description ("fed at 5am with rye, kept at 24 degrees") are nearer."""
    code, found = recall(bakery, MOTHER)
    assert code == 0, found
    assert [p["slug"] for p in found["picked"]][:1] == ["sourdough-starter-feeding"]
    unrelated = recall(bakery, "Which gym membership do we pay for?")  # the lift is no way past the floor
    assert unrelated[0] == 2 and unrelated[1]["picked"] == []


def test_every_memory_with_a_description_gets_its_headline_under_its_own_key(bakery: Path) -> None:
    recall(bakery, MOTHER)
    store = Store(bakery)
    found = heads(bakery)
    assert set(found) == set(store.slugs())  # every eval memory has a description
    index = SearchIndex(store)
    name, description, body = index.db.execute(
        "SELECT name, description, body FROM docs_fts JOIN docs ON docs.fts = docs_fts.rowid WHERE docs.slug = ?",
        ("sourdough-starter-feeding",),
    ).fetchone()
    said = headline.text(name, description, text_of(name, description, body))
    assert said.startswith("Sourdough starter") and len(said) < len(description)  # cut at TOKENS
    made = index.embedder.embed([said])[0]
    kept = np.frombuffer(found["sourdough-starter-feeding"], dtype=np.float16).astype(np.float32)
    assert float(kept @ made) > 0.999  # the headline, not the whole memory
    index.close()


def test_an_edited_memory_gets_the_headline_of_what_it_says_now(bakery: Path, tmp_path: Path) -> None:
    """A watcher's refresh of one edited memory makes its new headline at once (keyed by the
    new content), so the next question is lifted by what the memory says now."""
    edited = tmp_path / "edited"
    shutil.copytree(bakery, edited)
    store = Store(edited)
    index = SearchIndex(store)
    index.update()
    path = edited / "sourdough-starter-feeding.md"
    text = path.read_text(encoding="utf-8")
    old = text.split("description: ", 1)[1].split("\n", 1)[0]
    path.write_text(text.replace(old, "The levain is fed at 05:00 with dark rye flour"), encoding="utf-8")
    assert index.refresh(["sourdough-starter-feeding"]) == 1
    (sha,) = index.db.execute("SELECT sha FROM docs WHERE slug = 'sourdough-starter-feeding'").fetchone()
    (vec,) = index.db.execute(
        "SELECT vec FROM vectors WHERE sha = ? AND model = ?", (sha, headline.key(index.embedder.model_id))
    ).fetchone()
    made = index.embedder.embed(
        ["Sourdough starter feeding. The levain is fed at 05:00 with dark rye flour"]
    )[0]
    kept = np.frombuffer(vec, dtype=np.float16).astype(np.float32)
    name = index.db.execute(
        "SELECT name FROM docs_fts JOIN docs ON docs.fts = docs_fts.rowid WHERE docs.slug = ?",
        ("sourdough-starter-feeding",),
    ).fetchone()[0]
    assert name == "Sourdough starter feeding" and float(kept @ made) > 0.999
    index.close()


def test_an_index_made_before_headlines_gets_them_at_its_next_update(bakery: Path, tmp_path: Path) -> None:
    """An older kura's index: the memories' vectors, no headline, marked complete the old way.
    The next recall makes the headlines without embedding a memory again, and answers."""
    recall(bakery, MOTHER)
    older = tmp_path / "older"
    shutil.copytree(bakery, older)
    with sqlite3.connect(older / ".kura" / "search.db") as db:
        db.execute("DELETE FROM vectors WHERE model LIKE ?", (f"%{headline.SUFFIX}",))
        (model,) = db.execute("SELECT value FROM kv WHERE key = 'model'").fetchone()
        db.execute("UPDATE kv SET value = (SELECT value FROM kv WHERE key = 'stamp') || ':' || ? "
                   "WHERE key = 'filled'", (model,))  # fmt: skip
        bodies = db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()
    assert heads(older) == {}
    code, found = recall(older, MOTHER)
    assert code == 0 and found["picked"][0]["slug"] == "sourdough-starter-feeding"
    assert set(heads(older)) == set(Store(older).slugs())
    with sqlite3.connect(older / ".kura" / "search.db") as db:
        assert db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone() == bodies


def test_a_headline_only_where_the_memory_says_much_more_and_never_long() -> None:
    """No description, or a body that only repeats it (distill-kura's and kura's generated
    stores, a chat's observations): no headline, and no embedding spent on one."""
    long = "It runs the deploy from the release branch, then tags it. " * 4
    assert headline.text("Deploy script", "  ", long) == ""
    assert headline.text("Deploy  script", "Runs\nthe deploy.", long) == "Deploy script. Runs the deploy."
    assert (
        headline.text("Deploy script", "Runs the deploy.", "Deploy script. Runs the deploy. Why: it matters.")
        == ""
    )
    said = headline.text("Deploy", "word " * 200, long * 10)
    assert 0 < len(said) <= 4 * headline.TOKENS  # about four characters a token
    cut = headline.text("配備", "本番環境" * 100, long * 10)
    assert 0 < len(cut) <= headline.TOKENS + 1  # a CJK character is about a token


def test_the_lift_only_raises_and_only_towards_the_headline(tmp_path: Path) -> None:
    """Real SQLite rows: a headline nearer the question lifts its memory by ``LIFT`` of the
    difference; one farther, or a memory with none, leaves the cosine as it was."""
    db = sqlite3.connect(tmp_path / "x.db")
    db.executescript(
        "CREATE TABLE docs (slug TEXT PRIMARY KEY, sha TEXT, fts INTEGER);"
        "CREATE TABLE vectors (sha TEXT, model TEXT, vec BLOB, PRIMARY KEY (sha, model));"
    )
    question = np.asarray([[1.0, 0.0]], dtype=np.float32)
    rows = {"near": [1.0, 0.0], "far": [0.0, 1.0]}
    for i, (slug, vec) in enumerate(rows.items()):
        db.execute("INSERT INTO docs VALUES (?, ?, ?)", (slug, f"sha{i}", i))
        blob = np.asarray(vec, dtype=np.float16).tobytes()
        db.execute("INSERT INTO vectors VALUES (?, ?, ?)", (f"sha{i}", headline.key("m"), blob))
    db.execute("INSERT INTO docs VALUES ('none', 'sha9', 9)")
    both = np.asarray([[0.2], [0.5], [0.3]], dtype=np.float32)
    lifted, whole = headline.lift(db, "m", ["near", "far", "none"], both, question)
    assert lifted[:, 0].tolist() == pytest.approx([0.2 + headline.LIFT * 0.8, 0.5, 0.3])
    assert whole[:, 0].tolist() == lifted[:, 0].tolist()  # no sentence rows: lifted no further
    assert both[:, 0].tolist() == pytest.approx([0.2, 0.5, 0.3])  # the caller's array is left alone


class _Asked:
    """The built-in embedder, counting what it embeds; ``full()`` is ``bulk``, as a quick
    embedder hands bulk work to the optimised one."""

    def __init__(self, inner: Any, bulk: _Asked | None = None) -> None:
        self.inner, self.bulk, self.asked = inner, bulk, []  # type: list[str]
        self.model_id = inner.model_id

    def embed(self, texts: list[str], progress: Any = None) -> Any:
        self.asked.extend(texts)
        return self.inner.embed(texts, progress)

    def full(self) -> _Asked:
        return self.bulk or self


def test_many_headlines_are_made_by_the_embedder_made_for_bulk_work(bakery: Path, tmp_path: Path) -> None:
    """A one-question process's embedder is quick to load and slow to run (unoptimised): a
    first recall on a store of long memories made all their headlines with it, 3.2 of its 6.8
    seconds on 500 distill-kura memories. Past a few, they go to ``full()``, as the bodies do."""
    copy = tmp_path / "store"
    shutil.copytree(bakery, copy)
    with sqlite3.connect(copy / ".kura" / "search.db") as db:
        db.execute("DELETE FROM vectors WHERE model LIKE ?", (f"%{headline.SUFFIX}",))
    bulk = _Asked(load_embedder())
    quick = _Asked(load_embedder(), bulk)
    with sqlite3.connect(copy / ".kura" / "search.db") as db:
        assert headline.fill(db, quick)
    assert quick.asked == [] and len(bulk.asked) == len(heads(copy)) > 8
