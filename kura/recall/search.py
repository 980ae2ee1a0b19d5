"""Finding memories by meaning, offline: dense vectors, with the question's rare words
weighed per question.

"SSD inference chips" shares no word with "running the 2.6T model off an SSD tier", so a
word index alone answers such a question with nothing; "the Bakeline contract number" is
answered by its words, and the vectors see a dozen contracts alike. How much the words count
is decided per question, by how rare the shared words are and how sure they are
(``kura.recall.fusion``, where the rules tried and their figures are). On short observations
from long chats a speaker's name is in most memories and in the question, and pulls the
question's vector towards all of them: a quarter of the dense score comes from the question
without such common words (``kura.recall.focus``; a second vector, embedded in the same call,
only when the question has one). Whether a memory bears on the question is still judged by
the question as asked (``Hit.cosine``). Recency breaks exact ties, never scores.

The index is derived state in the store's ``.kura/search.db``: an FTS5 table (``porter
unicode61``) over name, description and body, with their CJK text as character bigrams in
a ``grams`` column (``kura.text.scripts``), and float16 vectors keyed by the content hash,
so only memories whose bytes changed are embedded again, and a rename costs nothing. Every
question word (CJK: its bigrams) is quoted before it reaches FTS5, so ``pre-release``,
``what's new?`` or ``NOT this`` are words, never query syntax. Without the embedder the
search is lexical (BM25 with name, description and body weighted 10 : 5 : 1) and says why.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from kura.errors import KuraError
from kura.files.slugs import file_stats, identity, stamp_files
from kura.recall import asked, asking, forms, fusion, headline, identifiers, index_build, vectors, word_index
from kura.recall.embed import DIM, Embedder, Unavailable, load_embedder, preload
from kura.recall.focus import focused
from kura.recall.index_build import WHOLE, Budget, Coverage
from kura.recall.model_folder import FolderEmbedder, configured, questions
from kura.recall.remote_embed import EmbedFailed, RemoteEmbedder
from kura.recall.script import unreadable
from kura.recall.ties import newest_first
from kura.recall.word_rows import QUESTION_WORDS, WordRows, quote
from kura.store import catalog
from kura.store import state as st
from kura.store.store import Store
from kura.text import scripts

if TYPE_CHECKING:
    import numpy as np

Progress = Callable[[str, int, int], None]  # stage, done, total
AnyEmbedder = Embedder | RemoteEmbedder | FolderEmbedder | Unavailable
PATCH = 200  # at most this many changed memories: patch the saved matrix instead of rebuilding
QUICK_LIMIT = 8  # more texts than this to embed: worth loading the optimised session
ASKED = 4  # question vectors kept for a recall's later steps (``question_vector``)
HEAL = Budget(0.0, 64)  # a question embeds a few itself (an endpoint back up); the rest is a build's
_EMPTY = hashlib.sha256(b"").hexdigest()  # the sha of a memory indexed without reading it
BM25_WEIGHTS = (10.0, 5.0, 1.0)
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an the of to is are was were be been it its in on at by for with and or but not no "
    "what which who whom when where why how do does did we our us you your i my me they them "
    "this that these those there here can could should would will shall may might must "
    "about from into than then so if any all some".split()
)
SCHEMA_VERSION = 3  # 3: the grams column (kura.text.scripts)
_OLD = "DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS docs_fts; DROP TABLE IF EXISTS kv;"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (slug TEXT PRIMARY KEY, sha TEXT NOT NULL, fts INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(slug UNINDEXED, name, description, body,
    grams, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS vectors (sha TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (sha, model));
"""
_TABLES = {
    "docs": ("slug", "sha", "fts"),
    "docs_fts": ("slug", "name", "description", "body", "grams"),
    "kv": ("key", "value"),
    "vectors": ("sha", "model", "vec"),
}


@dataclass(frozen=True, slots=True)
class Hit:
    slug: str
    score: float
    cosine: float | None
    lexical: float
    named: bool = False  # holds an identifier the question names (``kura.recall.identifiers``)
    meant: float | None = None  # ``cosine`` lifted by the memory's sentences: the meaning's own rank


Searched = Literal["embedded", "lexical"]  # how a search answered: dense + lexical, or lexical only
Texts = dict[str, catalog.Said]  # what memories say, by slug (``catalog.scan``'s ``said``)
Changes = tuple[list[catalog.Entry], list[str], Texts]  # changed, gone, what the files read again say


@dataclass(frozen=True, slots=True)
class Results:
    hits: tuple[Hit, ...]
    how: Searched
    reason: str = ""  # why the dense half was not used
    partial: Coverage | None = None  # set when some memories have no vector yet (found by words)


class SearchIndex:
    """The store's search index. ``update`` brings it up to date with the files (cheaply when
    nothing changed); ``refresh`` re-reads named memories (what a watcher calls); ``search``
    answers from what is indexed."""

    def __init__(
        self, store: Store, *, embedder: AnyEmbedder | None = None, quick: bool = False, shared: bool = False
    ) -> None:
        """``quick``: a process that asks a question or two and exits (``load_embedder``);
        ``shared``: used from several threads, one at a time (the caller holds a lock)."""
        path = st.file_in(store.root, "search.db", store=store.name)  # a .kura link: refused
        self.store = store
        self._embedder = embedder
        self._quick = quick
        if embedder is None:
            preload(quick=quick)
        try:
            self.db = st.database(
                path, _setup, _TABLES, what="the search index", fts5=("docs_fts",),
                check_same_thread=not shared,
            )  # fmt: skip
        except (OSError, sqlite3.Error):
            self.db = sqlite3.connect(":memory:", check_same_thread=not shared)
            _setup(self.db)
        self._matrix: vectors.Matrix | None = None
        self._failed: str | None = None  # why the embedding endpoint failed in this process
        self._unread: tuple[str, ...] | None = None  # kept until the index changes
        self._count: int | None = None  # memories in the index, kept with the matrix
        self._stamp = ""
        self._asked: dict[str, np.ndarray] = {}  # the last few questions searched, and their vectors
        self._words = WordRows(self.db)  # each word's rows, kept while the index is the same

    @property
    def embedder(self) -> AnyEmbedder:
        if self._embedder is None:
            self._embedder = load_embedder(quick=self._quick)
        return self._embedder

    def close(self) -> None:
        self.db.close()

    def update(self, *, progress: Progress | None = None, budget: Budget | None = WHOLE) -> int:
        """Re-index memories whose content changed (and drop vanished ones); how many.
        ``progress(stage, done, total)`` is called as files are read and embedded.

        When no memory file changed identity since the last update (one walk and a stat per
        file, compared as a checksum), nothing else is read. Every changed memory is indexed
        for its words at once; vectors are made within ``budget`` (``kura.recall.index_build``;
        None: none now), the rest by a later update, ``fill`` or a background build."""
        current = self._sync(progress)
        if current is None:
            if budget is not None:
                self.fill(progress=progress, budget=budget)
            return 0
        changed, gone, said = current
        dense = not isinstance(self.embedder, Unavailable)
        before = None
        if dense and 0 < len(changed) + len(gone) <= PATCH:  # the matrix in hand, else the saved one
            before = self._matrix or vectors.saved(self.db, self._model_id(), DIM)
        with self.db:
            word_index.drop(self.db, gone)
            word_index.put(self.db, self.store, changed, said, progress)
            self._set_kv("stamp", self._stamp)
            self._set_kv("model", self._model_id())
        if changed or gone:
            self._forget_matrix()
        if budget is not None:
            self.fill(progress=progress, budget=budget)
        if before is not None and self._filled():  # a few files changed: patch the saved matrix
            rows = self._rows_of([e.slug for e in changed])
            self._matrix = before.patch(rows, set(gone) | ({e.slug for e in changed} - set(rows)))
            vectors.save(self.db, self._matrix, self._model_id())
        return len(changed) + len(gone)

    def _sync(self, progress: Progress | None) -> Changes | None:
        """The memories changed and gone since the last update (None: no file changed); ``Changes``."""
        stamp = self._kv("stamp")  # none: a new index, which reads every file anyway
        if (
            stamp is not None
            and self._kv("model") == self._model_id()
            and stamp_files(self.store.root) == stamp
        ):
            return None  # the common case: one walk, a stat per file, no list built
        stats = file_stats(self.store.root)  # something changed: the catalog's walk gives the stamp too
        self._stamp = identity(stats)
        state = catalog.connect(self.store)
        said: Texts = {}
        try:
            scanned = catalog.scan(self.store, state, stats=stats, said=said)
        finally:
            state.close()
        assert scanned is not None  # no max_parse: a scan always completes
        known = dict(self.db.execute("SELECT slug, sha FROM docs"))
        changed = [e for slug, e in scanned.entries.items() if known.get(slug) != e.sha]
        return changed, [slug for slug in known if slug not in scanned.entries], said

    def fill(
        self, *, progress: Progress | None = None, budget: Budget = WHOLE, only: set[str] | None = None
    ) -> int:
        """Embed memories that have no vector yet, within ``budget``, committing as it goes
        (a killed build resumes where it stopped); how many. ``only``: just these hashes."""
        if isinstance(self.embedder, Unavailable) or self._failed is not None:
            return 0
        if only is None and self._filled():
            return 0
        report = None if progress is None else partial(progress, "embedding")
        try:
            done = index_build.fill(
                self.db, self.embedder, budget=budget, progress=report, only=only, after_chunk=self.filled,
                bulk_above=QUICK_LIMIT,
            )  # fmt: skip
            if only is not None:  # kura.recall.headline: after the memories' own vectors, in time left
                headline.keep(self.db, self.embedder, sorted(only))
            elif index_build.complete(self.db, self._model_id()) and headline.fill(
                self.db, self.embedder, seconds=budget.seconds, whole_below=budget.whole_below,
                progress=None if progress is None else partial(progress, "headlines"),
            ):  # fmt: skip
                self._set_filled()
        except EmbedFailed as err:  # indexed for words now; vectors when the endpoint is back
            self._failed = str(err)
            return 0
        return done

    def filled(self) -> None:
        """New vectors were committed (by ``fill`` or a background build): the matrix in hand
        is out of date."""
        self._forget_matrix()

    def coverage(self) -> Coverage:
        """How many memories the dense search covers, of how many indexed."""
        if self._count is None:
            self._count = self.db.execute("SELECT count(*) FROM docs").fetchone()[0]
        indexed = 0 if isinstance(self.embedder, Unavailable) else len(self._vectors().slugs)
        return Coverage(indexed, self._count)

    def complete(self) -> bool:
        """Every memory has a vector (as far as this process knows)."""
        return self._filled()

    def _filled(self) -> bool:
        return bool(self._kv("filled") == f"{self._kv('stamp')}:{headline.stamp(self._model_id())}")

    def _set_filled(self) -> None:
        with self.db:
            self._set_kv("filled", f"{self._kv('stamp')}:{headline.stamp(self._model_id())}")

    def refresh(self, slugs: Iterable[str]) -> int:
        """Re-read just these memories (a watcher saw them change); gone ones are dropped.
        Leaves the stamp alone, so the next ``update`` still checks every file."""
        wanted = sorted(set(slugs))
        present: list[catalog.Entry] = []
        gone: list[str] = []
        for slug in wanted:
            try:
                data, _ = self.store.read(slug)  # one it must not read counts as empty
            except KuraError:
                gone.append(slug)
                continue
            sha = hashlib.sha256(data).hexdigest()
            row = self.db.execute("SELECT sha FROM docs WHERE slug = ?", (slug,)).fetchone()
            if row is None or row[0] != sha:
                present.append(
                    catalog.Entry(rel=f"{slug}.md", slug=slug, ino=0, size=0, mtime_ns=0, ctime_ns=0,
                                  type=None, name="", description="", written_text="", links_text="",
                                  findings=0, sha=sha, standing="")
                )  # fmt: skip
        with self.db:
            word_index.drop(self.db, gone)
            word_index.put(self.db, self.store, present, {})
        if present:
            self.fill(only={entry.sha for entry in present})
        if present or gone:
            matrix = self._matrix
            self._forget_matrix()
            if matrix is not None:  # patch the rows in memory; the saved copy is rebuilt lazily
                self._matrix = matrix.patch(self._rows_of([e.slug for e in present]), set(gone))
        return len(present) + len(gone)

    def _rows_of(self, slugs: list[str]) -> dict[str, tuple[int, bytes]]:
        found: dict[str, tuple[int, bytes]] = {}
        for slug in slugs:
            row = self.db.execute(
                "SELECT docs.fts, vectors.vec FROM docs JOIN vectors ON vectors.sha = docs.sha "
                "AND vectors.model = ? WHERE docs.slug = ?",
                (self._model_id(), slug),
            ).fetchone()
            if row is not None:
                found[slug] = (row[0], row[1])
        return found

    def prepare(self) -> None:
        """Have the saved matrix current, so the next one-question process reads one row
        (what a watcher does after an update, while nobody is waiting)."""
        if not isinstance(self.embedder, Unavailable):
            self._vectors()

    def status(self) -> dict[str, Any]:
        """What the index holds and how it will search."""
        memories = self.db.execute("SELECT count(*) FROM docs").fetchone()[0]
        status = dict(memories=memories, vectors=0, headlines=0, sentences=0, how="lexical", reason="")
        if isinstance(self.embedder, Unavailable):
            return {**status, "reason": self.embedder.reason}
        model = self.embedder.model_id
        vectors = self.db.execute(
            "SELECT count(*) FROM docs JOIN vectors ON vectors.sha = docs.sha AND vectors.model = ?", (model,)
        ).fetchone()[0]
        heads, said = headline.made(self.db, model), headline.made(self.db, model, headline.SENTENCES)
        return {**status, "vectors": vectors, "headlines": heads, "sentences": said, "how": "embedded"}

    def unread(self) -> tuple[str, ...]:
        """Why each memory indexed without a byte of it read cannot be found (a file over
        the size cap, a link out of the store): one finding each, as ``kura doctor`` says it.
        Kept until the index changes, so a warm server's recall does not scan for it each time."""
        if self._unread is not None:
            return self._unread
        said: list[str] = []
        for (slug,) in self.db.execute("SELECT slug FROM docs WHERE sha = ? ORDER BY slug", (_EMPTY,)):
            try:
                data, memory = self.store.read(slug)
            except KuraError:  # gone since the update: the next one drops it
                continue
            said += [str(finding) for finding in memory.findings if not data]
        self._unread = tuple(said)
        return self._unread

    def search(self, question: str, *, k: int = 10) -> Results:
        """The ``k`` best memories for ``question``, best first."""
        import numpy as np

        words = query_words(question)[:QUESTION_WORDS]  # a pasted log: its first words, as the model reads
        if isinstance(self.embedder, Unavailable):
            return Results(self._bm25(words, k), "lexical", self.embedder.reason)
        if told := unreadable(question, self.embedder):  # a script the embedder cannot read
            return Results(self._bm25(words, k), "lexical", told)
        try:
            if self._matrix is None or self._failed is not None:
                self._heal()  # only when the matrix is (re)loaded: a warm question stays one product
            matrix = self._vectors()
            coverage = self.coverage()
            if not coverage.memories:
                return Results((), "embedded")
            rows = forms.rows(self.word_rows, words)  # an irregular verb in any of its forms
            narrow = focused(question, dict(zip(words, map(len, rows), strict=True)), coverage.memories)
            texts = [question] if narrow is None else [question, narrow]
            queries = questions(asking.side(self.embedder), texts)  # one thread: ``kura.recall.asking``
            self._asked.pop(question, None)  # newest last; the oldest goes past ASKED
            self._asked[question] = queries[0]
            if len(self._asked) > ASKED:
                del self._asked[next(iter(self._asked))]
            if matrix.slugs and matrix.half.shape[1] != queries.shape[1]:  # another width: not this model's
                reason = "the saved vectors do not fit the embedder; run kura index --rebuild"
                return Results(self._bm25(words, k), "lexical", reason)
            both = (
                matrix.cosines(queries.T) if matrix.slugs else np.zeros((0, len(queries)), dtype=np.float32)
            )
        except EmbedFailed as err:
            return Results(self._bm25(words, k), "lexical", str(err))
        headed, both = headline.lift(self.db, self._model_id(), matrix.slugs, both, queries)
        cosines = headed[:, 0]  # the question as asked: whether a memory bears on it (recall's floor)
        total = coverage.memories  # "INC-231" one word, not two, unless the store says it everywhere
        said = identifiers.join(question, words, rows, self._words.rows, total)
        holders = [matrix.rows(ids) for ids in said.rows]
        bonus = fusion.share(holders, len(matrix.slugs))
        meaning = fusion.meaning(both[:, 0], None if narrow is None else both[:, 1])  # sentences lift it
        fused = fusion.fuse(meaning, cosines, holders, exact=said.exact)
        scores = asked.lift(self.db, question, matrix.slugs, fused)
        count = min(k * 2, len(scores))  # a few more than k, so ties can be broken by slug
        best = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(count)
        slugs = matrix.slugs
        named = identifiers.naming(said, holders, len(slugs))
        meant = both[:, 0]
        hits = [
            Hit(slugs[i], float(scores[i]), float(cosines[i]), float(bonus[i]), named[i], float(meant[i]))
            for i in best
        ]
        if coverage.indexed < coverage.memories:  # the rest by their words until they have vectors
            hits += self._unembedded(words, k, total=coverage.memories)
        hits.sort(key=lambda hit: (-hit.score, hit.slug))
        partial = coverage if coverage.indexed < coverage.memories else None
        return Results(tuple(newest_first(self.store, hits)[:k]), "embedded", partial=partial)

    def matrix(self) -> vectors.Matrix:
        """Every memory's vector, one row each (what a search reads; the second hop's rows)."""
        return self._vectors()

    def question_vector(self, question: str) -> np.ndarray:
        """``question``'s vector as ``search`` embeds it (query prompt and all): the one a recent
        search made when it asked the same (a recall's hop searches in between), else made now
        (EmbedFailed when it cannot be)."""
        if question in self._asked:
            return self._asked[question]
        vector: np.ndarray = questions(asking.side(self.embedder), [question])[0]
        return vector

    def _unembedded(self, words: list[str], k: int, *, total: int) -> list[Hit]:
        quoted = [quote(word) for word in words]
        found = index_build.by_words(self.db, self._model_id(), quoted, total=total, k=k * 2)
        return [Hit(slug, share, None, share) for slug, share in found]

    def _heal(self) -> None:
        """Embed a few memories indexed without a vector (an embedding endpoint was down when
        they changed; more are a build's work); EmbedFailed if the endpoint still is down."""
        if self._failed is None:
            try:
                index_build.fill(self.db, self.embedder, budget=HEAL, after_chunk=self.filled)  # type: ignore[arg-type]
            except EmbedFailed as err:
                self._failed = str(err)
        if self._failed is not None:
            raise EmbedFailed(self._failed)

    def _vectors(self) -> vectors.Matrix:
        """Every memory's vector as one matrix, kept until the index changes."""
        if self._matrix is None:
            self._matrix = vectors.load(self.db, self._model_id(), DIM, keep=self._filled())
        return self._matrix

    def _forget_matrix(self) -> None:
        self._matrix = None
        self._count = None
        self._unread = None  # what the index holds changed with it
        vectors.changed(self.db)

    def _model_id(self) -> str:
        return "lexical" if isinstance(self.embedder, Unavailable) else self.embedder.model_id

    def _kv(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_kv(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))

    def word_rows(self, words: list[str]) -> list[np.ndarray]:
        """Per word: the full-text row ids of the memories that hold it (kept while the index
        is the same: ``kura.recall.word_rows``)."""
        return self._words.rows([quote(word) for word in words])

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
    for word in scripts.split_cjk(_WORD.findall(question.lower())):  # 本番環境: 本番 番環 環境
        if word not in _STOP and (len(word) > 1 or word.isdigit() or scripts.has_cjk(word)):
            seen.setdefault(word, None)
    return list(seen)


remote_embedder = configured  # the configured embedder: an endpoint or a model folder (None: built-in)


def _setup(db: sqlite3.Connection) -> None:
    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        # derived state from an older kura: rebuilt, except the vectors (same format, costly)
        db.executescript(_OLD)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.executescript(_SCHEMA)


def has_index(store: Store) -> bool:
    return (st.folder(store.root, store=store.name) / "search.db").is_file()


def drop_index(store: Store) -> None:
    """Remove the derived search index; the next update rebuilds it from the markdown."""
    folder = st.folder(store.root, store=store.name)
    for suffix in ("", "-wal", "-shm"):
        (folder / f"search.db{suffix}").unlink(missing_ok=True)


def open_index(store: Store, **options: Any) -> SearchIndex:
    index = SearchIndex(store, **options)
    index.update()
    return index
