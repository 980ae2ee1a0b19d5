"""Building the vectors without ever making a question wait for all of them.

Embedding 20,000 memories takes a minute or more on a small machine, so a question never
waits for the whole build: the words of every memory are indexed first (FTS5, seconds),
then vectors are made a chunk at a time, each chunk committed to the search database as
soon as it is made. A question asked meanwhile is answered from the vectors there are plus
the word index for the rest, and says so (``Coverage``). A build that is killed loses at
most the chunk in hand: the next one asks the database which memories have no vector yet
and embeds only those — what to embed is read back from the full-text table, never from
a list held in memory, so a build's memory does not grow with the store.

Chunks are sized by time, measured as the build goes: about a second of work within a
time budget (what the budget can overshoot), about ten in a build with no deadline (what a
kill can lose; bigger chunks pad less, since each is sorted by length before batching).
``Budget`` says how long a caller may spend: ``kura index`` builds everything; a one-shot
recall builds for a few seconds (a small store — the usual case — is always built whole, as before); a server
answers at once and builds in a ``Background`` thread, outside the index lock except to
read a chunk's texts and to write its vectors.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kura.errors import EmbedFailed
from kura.recall import index_job
from kura.recall.embed import Unavailable

if TYPE_CHECKING:
    import sqlite3
    from contextlib import AbstractContextManager
    from pathlib import Path

    import numpy as np

SMALL = 1000  # at most this many memories to embed: embedded whole before answering, as always
SECONDS = 3.0  # more: a one-shot recall embeds for this long, then answers from what there is
ENV = "KURA_INDEX_BUDGET"  # seconds a recall may spend embedding (set: for bigger stores too)
FIRST_CHUNK = 8  # rows of the first chunk, before the build knows its pace (a budget overshoots by one chunk)
MAX_CHUNK = 512  # the embedder sorts a chunk by length: a bigger one pads less
CHUNK_SECONDS = 1.0  # within a time budget: what it can overshoot
BUILD_SECONDS = 10.0  # a build with no deadline: bigger chunks pad less (measured: 20% less CPU)
TEXT_CAP = 65_536  # characters of a text read back to embed: the model sees 128 tokens of it


@dataclass(frozen=True, slots=True)
class Budget:
    """How long a caller may spend embedding before it answers."""

    seconds: float | None = None  # None: until every memory has a vector
    whole_below: int = SMALL  # a store of at most this many memories: all of them, ...
    whole_for: float | None = None  # ... whatever the time (None), or for at most this long


WHOLE = Budget()
ONE_SHOT = Budget(SECONDS)  # a process that asks one question and exits
# ... and leaves the rest to a detached build (kura.recall.index_job): the 60-150 vectors a
# second makes are little beside the 20,000 the build makes within minutes, and the first
# recall of a 20,000-memory store of distill-kura's shape stays within 5 s (measured at load
# 1.1: 4.2-4.7 s with half a second, 5.1-5.5 s with one)
# (a small store too, when its memories are long: 500 of distill-kura's mixed Japanese and
# English ones take 5-8 s of CPU to embed on two threads, 500 short ones 3; with three
# seconds for a small store its first recall took 4.5-4.7 s at load 1.1-1.4, with four 6 s)
HANDED_ON = Budget(0.5, whole_for=3.0)
AT_ONCE = Budget(0.0)  # a server: small stores whole, bigger ones in the background
NOW = Budget(0.0, 0)  # embed nothing now
FEW = 32  # this many or fewer to embed (a few edits): done at once, unless the budget is NOW


def budget_from(environ: Mapping[str, str], default: Budget) -> Budget:
    """``default``, unless ``$KURA_INDEX_BUDGET`` names the seconds a recall may spend
    embedding (then for every store, small ones too: ``0`` embeds nothing before answering)."""
    text = environ.get(ENV, "").strip()
    try:
        seconds = float(text)
    except ValueError:
        return default
    return Budget(max(seconds, 0.0), 0) if seconds == seconds else default  # NaN: the default


def env_budget(default: Budget) -> Budget:
    return budget_from(os.environ, default)


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of the store the dense search covers: the rest is found by its words."""

    indexed: int  # memories with a vector
    memories: int

    def label(self) -> str:
        return f"partial: {self.indexed:,} of {self.memories:,} indexed"

    def reason(self) -> str:
        rest = self.memories - self.indexed
        return (
            f"the search index is still being built ({self.indexed:,} of {self.memories:,} memories "
            f"have vectors); the other {rest:,} are found by their words only until a background build "
            "makes theirs (kura stores shows its progress; kura index finishes it in the foreground)"
        )

    def to_dict(self) -> dict[str, int]:
        return {"indexed": self.indexed, "memories": self.memories}


class BulkEmbedder(Protocol):
    model_id: str

    def full(self) -> BulkEmbedder: ...

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...


_ROWIDS = "SELECT group_concat(rowid) FROM docs_fts WHERE docs_fts MATCH ?"
_MISSING = (
    "SELECT DISTINCT docs.sha FROM docs LEFT JOIN vectors ON vectors.sha = docs.sha AND vectors.model = ? "
    "WHERE vectors.sha IS NULL"
)


def missing(db: sqlite3.Connection, model: str, only: set[str] | None = None) -> list[str]:
    """The content hashes with no vector for ``model`` (of ``only``, when given). Index
    lookups only (reading every text to sort by length cost a second per 2,000 memories):
    the embedder sorts each chunk by length itself, so a batch still pads little."""
    rows = db.execute(_MISSING, (model,)).fetchall()
    return sorted(sha for (sha,) in rows if only is None or sha in only)


def complete(db: sqlite3.Connection, model: str) -> bool:
    """Every memory in the index has a vector for ``model``."""
    return db.execute(_MISSING + " LIMIT 1", (model,)).fetchone() is None


def texts(db: sqlite3.Connection, shas: Sequence[str]) -> list[tuple[str, str]]:
    """(sha, what is embedded) for these hashes, from the full-text table; a hash whose
    memory left the index meanwhile is skipped. The table is in the state folder, which may
    come from someone else's clone: a text is cut at ``TEXT_CAP`` characters, so a planted
    row costs no more to tokenise than a real memory."""
    marks = ",".join("?" * len(shas))
    found = {
        sha: text_of(str(name), str(description), str(body))[:TEXT_CAP]
        for sha, name, description, body in db.execute(
            "SELECT docs.sha, docs_fts.name, docs_fts.description, docs_fts.body FROM docs "
            f"JOIN docs_fts ON docs_fts.rowid = docs.fts WHERE docs.sha IN ({marks})",
            tuple(shas),
        )
    }
    return [(sha, found[sha]) for sha in shas if sha in found]


def text_of(name: str, description: str, body: str) -> str:
    """What is embedded for a memory: its name, description and body — the description
    once, when the body already says it word for word (or all of it after a leading label,
    ``Why: …`` or ``決定: …``, as distill-kura writes 40 % of its descriptions), and the body
    without markdown's emphasis, code and link marks (``**Why:**``, ``[[slug]]``: each mark
    is a token that says nothing). A row's cost grows with its tokens, and the model sees
    only the first ``MAX_TOKENS``. Measured on bench/recall_quality.py: fewer tokens, no
    figure worse."""
    body = _MARKS.sub("", body)
    said = _squash(description).rstrip(".!?;: ")
    if said:
        whole = _squash(body)
        if said in whole or (_LABEL.match(said) and _LABEL.sub("", said, count=1) in whole):
            return f"{name}. {body}"
    return f"{name}. {description}. {body}"


_MARKS = re.compile(r"\*\*|__|\[\[|\]\]|`")
_LABEL = re.compile(r"[^\s:]{1,24}(?: [^\s:]{1,24}){0,2}: (?=\S)")  # up to three words and a colon


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def forget_superseded(db: sqlite3.Connection, keys: Sequence[str]) -> None:
    """Drop the vectors an older kura made under ``keys``, which this one no longer uses
    (they can never be read again: a memory's vector is made anew under the current key)."""
    which = f"model IN ({','.join('?' * len(keys))})"
    if keys and db.execute(f"SELECT 1 FROM vectors WHERE {which} LIMIT 1", tuple(keys)).fetchone():
        with db:
            db.execute(f"DELETE FROM vectors WHERE {which}", tuple(keys))


def keep(db: sqlite3.Connection, model: str, rows: Sequence[tuple[str, str]], vectors: np.ndarray) -> None:
    """Commit one chunk's vectors (float16): from here on a killed build never redoes them."""
    half = vectors.astype("float16")
    with db:
        db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
            [(sha, model, vector.tobytes()) for (sha, _), vector in zip(rows, half, strict=True)],
        )


def by_words(
    db: sqlite3.Connection, model: str, quoted: list[str], total: int, k: int
) -> list[tuple[str, float]]:
    """The ``k`` best memories that have no vector yet for a question's (FTS5-quoted) words,
    scored by the IDF-weighted share of the words they hold — the measure of search's
    lexical bonus, 0 to 1 — so they stand beside embedded ones until they have a vector."""
    import numpy as np

    rest = db.execute(
        "SELECT docs.fts, docs.slug FROM docs LEFT JOIN vectors ON vectors.sha = docs.sha "
        "AND vectors.model = ? WHERE vectors.sha IS NULL",
        (model,),
    ).fetchall()
    if not rest or not quoted:
        return []
    ids = np.asarray([row[0] for row in rest], dtype=np.int64)
    share = np.zeros(len(rest), dtype=np.float32)
    found = []
    for word in quoted:
        (joined,) = db.execute(
            "SELECT group_concat(rowid) FROM docs_fts WHERE docs_fts MATCH ?", (word,)
        ).fetchone()
        matched = np.fromstring(joined or "", sep=",", dtype=np.int64)
        found.append((max(math.log((total + 1) / (len(matched) + 0.5)), 0.0), matched))
    whole = sum(weight for weight, _ in found) or 1.0
    for weight, matched in found:
        if weight > 0:
            share[np.isin(ids, matched)] += weight / whole
    best = sorted((i for i in np.flatnonzero(share > 0)), key=lambda i: (-share[i], rest[i][1]))[:k]
    return [(rest[i][1], float(share[i])) for i in best]


class Pace:
    """Chunk sizes of about ``seconds`` of work, learned from the chunks done."""

    def __init__(self, seconds: float = CHUNK_SECONDS) -> None:
        self.seconds = seconds
        self.rate: float | None = None  # rows a second

    def size(self, left: float | None = None) -> int:
        want = FIRST_CHUNK if self.rate is None else int(self.rate * self.seconds)
        if left is not None and self.rate is not None:
            want = min(want, int(self.rate * left) + 1)
        return max(1, min(MAX_CHUNK, max(want, 8)))

    def done(self, rows: int, seconds: float) -> None:
        self.rate = rows / max(seconds, 1e-3)


def fill(
    db: sqlite3.Connection,
    embedder: BulkEmbedder,
    *,
    budget: Budget = WHOLE,
    progress: Callable[[int, int], None] | None = None,
    only: set[str] | None = None,
    after_chunk: Callable[[], None] | None = None,
    bulk_above: int = 8,
) -> int:
    """Embed memories that have no vector, chunk by chunk, within ``budget``; how many.
    A small store, or a few memories to embed, are done whatever the time.
    More than ``bulk_above`` to embed: the embedder made for bulk work (``full``).
    ``EmbedFailed`` (an endpoint down) leaves the chunks done so far committed."""
    if only is None:
        forget_superseded(db, getattr(embedder, "superseded", ()))
    todo = missing(db, embedder.model_id, only)
    if not todo:
        return 0
    if len(todo) > bulk_above:
        embedder = embedder.full()
    started = time.monotonic()
    if budget.seconds is None or (budget.whole_below > 0 and len(todo) <= FEW):
        deadline = None
    else:
        (memories,) = db.execute("SELECT count(*) FROM docs").fetchone()
        if memories > budget.whole_below:
            deadline = started + budget.seconds
        else:  # a small store: whole, or for as long as ``whole_for`` allows
            deadline = None if budget.whole_for is None else started + budget.whole_for
    pace, done = Pace(BUILD_SECONDS if deadline is None else CHUNK_SECONDS), 0
    while done < len(todo):
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        shas = todo[done : done + pace.size(left)]
        rows = texts(db, shas)
        began = time.monotonic()
        if rows:
            keep(db, embedder.model_id, rows, embedder.embed([text for _, text in rows]))
        pace.done(len(shas), time.monotonic() - began)
        done += len(shas)
        if after_chunk is not None:
            after_chunk()
        if progress is not None:
            progress(done, len(todo))
    return done


class Index(Protocol):
    """What a background build needs of ``kura.recall.search.SearchIndex``."""

    db: sqlite3.Connection
    store: Any  # kura.store.store.Store: its folder names the store's build lock

    @property
    def embedder(self) -> object: ...

    def filled(self) -> None: ...

    def complete(self) -> bool: ...

    def fill(self, *, budget: Budget) -> int: ...

    def prepare(self) -> None: ...


class Background:
    """One index's missing vectors, made in a daemon thread. The lock (the one every use of
    the index holds) is taken only to read a chunk's texts and to write its vectors, so a
    question waits for a database write, never for a chunk being embedded.

    ``detach`` (the store's folder, the kura.toml to load): a process that may end any time
    (``kura mcp``, which lives as long as the host's session) starts the store's detached
    build instead (``kura.recall.index_job``), one per store whoever starts it, and follows
    it: when its vector count moved, the matrix in hand is read again."""

    def __init__(
        self,
        index: Index,
        lock: AbstractContextManager[object],
        *,
        detach: tuple[Path, Path | None] | None = None,
    ) -> None:
        self.index = index
        self.lock = lock
        self.detach = detach
        self.failed = ""  # why the last build stopped early
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._made: int | None = None  # vectors the detached build had made at the last look

    @property
    def running(self) -> bool:
        if self._thread is not None and self._thread.is_alive():
            return True
        return index_job.running(self.index.store.root)  # a detached build, whoever started it

    def start(self) -> None:
        """Build in the background unless a build is already running (called at every
        look at the index: a detached build another process started is followed)."""
        root = self.index.store.root
        elsewhere = self._made is not None or index_job.running(root)
        if self.detach is not None or elsewhere:
            self._follow()
        if self.detach is not None:
            if not self.index.complete() and not index_job.running(root):
                index_job.start(root, config=self.detach[1])
            return
        if self.running or self._stop.is_set() or self.index.complete() or index_job.running(root):
            return
        self._thread = threading.Thread(target=self._run, name="kura-index-build", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        """Read the vectors a detached build committed since the last look, if it made any."""
        embedder: Any = self.index.embedder
        if isinstance(embedder, Unavailable) or self._stop.is_set():
            return
        (made,) = self.index.db.execute(
            "SELECT count(*) FROM vectors WHERE model = ?", (embedder.model_id,)
        ).fetchone()
        if self._made is not None and made != self._made:
            self.index.filled()
        self._made = made

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        pace, done = Pace(BUILD_SECONDS), 0
        try:
            with self.lock:
                embedder: Any = self.index.embedder
                if isinstance(embedder, Unavailable):
                    return
                todo = missing(self.index.db, embedder.model_id)
            bulk = embedder.full()
            while done < len(todo) and not self._stop.is_set():
                shas = todo[done : done + pace.size()]
                with self.lock:
                    rows = [] if self._stop.is_set() else texts(self.index.db, shas)
                began = time.monotonic()
                vectors = bulk.embed([text for _, text in rows]) if rows else None
                pace.done(len(shas), time.monotonic() - began)
                done += len(shas)
                with self.lock:
                    if self._stop.is_set():
                        return
                    if vectors is not None:
                        keep(self.index.db, bulk.model_id, rows, vectors)
                    self.index.filled()
            with self.lock:
                if not self._stop.is_set():
                    self.index.fill(budget=NOW)  # marks the index complete when it is
                    self.index.prepare()
        except EmbedFailed as err:  # the endpoint is down: questions say so; the next update retries
            self.failed = str(err)
        except Exception as err:  # noqa: BLE001 - a daemon thread: say why it stopped, never die silently
            self.failed = f"the background index build stopped ({type(err).__name__}: {err})"
