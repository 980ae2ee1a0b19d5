"""Finding memories by meaning, offline: dense vectors plus a small lexical bonus.

"SSD inference chips" shares no word with "running the 2.6T model off an SSD tier", so a
word index alone answers such a question with nothing. The rule used here was measured
before it was chosen: the dense cosine, plus ``0.2 ×`` the IDF-weighted fraction of the
question's words the memory contains. Equal-weight rank fusion of BM25 and dense, or
z-score fusion, lost 0.13 MRR on paraphrase questions; the bonus only breaks near-ties in
favour of the memory that also uses the question's rare words.

The index is derived state in the store's ``.kura/search.db``: an FTS5 table (``porter
unicode61``) over name, description and body, and float16 vectors keyed by the content
hash, so only memories whose bytes changed are embedded again, and a rename costs nothing.
Every question word is quoted before it reaches FTS5, so ``pre-release``, ``what's new?``
or ``NOT this`` are words, never query syntax. Without the embedder the search is lexical
(BM25 with name, description and body weighted 10 : 5 : 1) and says why.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kura import catalog
from kura.embed import Embedder, Unavailable, load_embedder
from kura.slugs import STATE_DIR
from kura.store import Store

if TYPE_CHECKING:
    import numpy as np

LEXICAL_WEIGHT = 0.2
BM25_WEIGHTS = (10.0, 5.0, 1.0)
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an the of to is are was were be been it its in on at by for with and or but not no "
    "what which who whom when where why how do does did we our us you your i my me they them "
    "this that these those there here can could should would will shall may might must "
    "about from into than then so if any all some".split()
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (slug TEXT PRIMARY KEY, sha TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(slug UNINDEXED, name, description, body,
    tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS vectors (sha TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (sha, model));
"""


@dataclass(frozen=True, slots=True)
class Hit:
    slug: str
    score: float
    cosine: float | None
    lexical: float


@dataclass(frozen=True, slots=True)
class Results:
    hits: tuple[Hit, ...]
    how: str  # embedded | lexical
    reason: str = ""  # why the dense half was not used


class SearchIndex:
    """The store's search index; ``update`` before ``search`` to see recent edits."""

    def __init__(self, store: Store, *, embedder: Embedder | Unavailable | None = None) -> None:
        self.store = store
        self.embedder = embedder if embedder is not None else load_embedder()
        path = store.root / STATE_DIR / "search.db"
        try:
            path.parent.mkdir(exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
        except (OSError, sqlite3.Error):
            self.db = sqlite3.connect(":memory:")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def update(self, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-index memories whose content changed (and drop vanished ones); how many."""
        current = catalog.entries(self.store)
        known = dict(self.db.execute("SELECT slug, sha FROM docs"))
        changed = [e for slug, e in current.items() if known.get(slug) != e.sha]
        gone = [slug for slug in known if slug not in current]
        with self.db:
            for slug in gone:
                self.db.execute("DELETE FROM docs WHERE slug = ?", (slug,))
                self.db.execute("DELETE FROM docs_fts WHERE slug = ?", (slug,))
            texts = self._reindex(changed, progress)
            self._embed(texts)
        return len(changed) + len(gone)

    def search(self, question: str, *, k: int = 10) -> Results:
        """The ``k`` best memories for ``question``, best first."""
        words = query_words(question)
        lexical = self._lexical_fraction(words)
        if isinstance(self.embedder, Unavailable):
            return Results(self._bm25(words, k), "lexical", self.embedder.reason)
        slugs, matrix = self._vectors()
        if not slugs:
            return Results((), "embedded")
        cosines = matrix @ self.embedder.embed([question])[0]
        scored = [
            Hit(
                slug, float(cos) + LEXICAL_WEIGHT * lexical.get(slug, 0.0), float(cos), lexical.get(slug, 0.0)
            )
            for slug, cos in zip(slugs, cosines, strict=True)
        ]
        scored.sort(key=lambda hit: (-hit.score, hit.slug))
        return Results(tuple(scored[:k]), "embedded")

    def _reindex(
        self, changed: list[catalog.Entry], progress: Callable[[int, int], None] | None
    ) -> dict[str, str]:
        texts: dict[str, str] = {}
        for done, entry in enumerate(changed, start=1):
            memory = self.store.show(entry.slug)
            self.db.execute("DELETE FROM docs_fts WHERE slug = ?", (entry.slug,))
            self.db.execute(
                "INSERT INTO docs_fts (slug, name, description, body) VALUES (?, ?, ?, ?)",
                (entry.slug, memory.name, memory.description, memory.note.body),
            )
            self.db.execute("INSERT OR REPLACE INTO docs VALUES (?, ?)", (entry.slug, entry.sha))
            texts[entry.sha] = f"{memory.name}. {memory.description}. {memory.note.body}"
            if progress is not None:
                progress(done, len(changed))
        return texts

    def _embed(self, texts: dict[str, str]) -> None:
        if isinstance(self.embedder, Unavailable) or not texts:
            return
        model = self.embedder.model_id
        have = {row[0] for row in self.db.execute("SELECT sha FROM vectors WHERE model = ?", (model,))}
        todo = [(sha, text) for sha, text in texts.items() if sha not in have]
        if not todo:
            return
        vectors = self.embedder.embed([text for _, text in todo]).astype("float16")
        self.db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
            [(sha, model, vector.tobytes()) for (sha, _), vector in zip(todo, vectors, strict=True)],
        )

    def _vectors(self) -> tuple[list[str], np.ndarray]:
        import numpy as np

        assert not isinstance(self.embedder, Unavailable)
        rows = self.db.execute(
            "SELECT docs.slug, vectors.vec FROM docs JOIN vectors ON vectors.sha = docs.sha "
            "AND vectors.model = ? ORDER BY docs.slug",
            (self.embedder.model_id,),
        ).fetchall()
        if not rows:
            return [], np.zeros((0, 384), dtype=np.float32)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16).reshape(len(rows), -1)
        return [row[0] for row in rows], matrix.astype(np.float32)

    def _lexical_fraction(self, words: list[str]) -> dict[str, float]:
        """Per memory: the IDF-weighted share of the question's words it contains."""
        total = self.db.execute("SELECT count(*) FROM docs").fetchone()[0] or 1
        weights: dict[str, float] = {}
        found: dict[str, set[str]] = {}
        for word in words:
            slugs = {
                row[0]
                for row in self.db.execute("SELECT slug FROM docs_fts WHERE docs_fts MATCH ?", (quote(word),))
            }
            weights[word] = math.log((total + 1) / (len(slugs) + 0.5))
            found[word] = slugs
        whole = sum(w for w in weights.values() if w > 0) or 1.0
        share: dict[str, float] = {}
        for word, slugs in found.items():
            for slug in slugs:
                share[slug] = share.get(slug, 0.0) + max(weights[word], 0.0) / whole
        return share

    def _bm25(self, words: list[str], k: int) -> tuple[Hit, ...]:
        if not words:
            return ()
        query = " OR ".join(quote(word) for word in words)
        rows = self.db.execute(
            "SELECT slug, bm25(docs_fts, 0.0, ?, ?, ?) AS rank FROM docs_fts WHERE docs_fts MATCH ? "
            "ORDER BY rank LIMIT ?",
            (*BM25_WEIGHTS, query, k),
        ).fetchall()
        return tuple(Hit(slug, -float(rank), None, -float(rank)) for slug, rank in rows)


def query_words(question: str) -> list[str]:
    """The question's words worth searching for, lower-cased, once each, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(question.lower()):
        if word not in _STOP and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


def quote(word: str) -> str:
    """A word as an FTS5 string literal: never operators, never syntax errors."""
    return '"' + word.replace('"', '""') + '"'


def open_index(store: Store, **options: Any) -> SearchIndex:
    index = SearchIndex(store, **options)
    index.update()
    return index
