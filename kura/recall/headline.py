"""A memory's headline vector: its name and description embedded on their own, beside the
vector of the whole memory.

The whole memory's vector (name, description and body, to the model's 128 tokens) is an
average of everything the memory says: a question that asks what the memory is *about*, in
other words, can be nearer the one line that says so than the paragraph of details. "What
grain do we give the mother culture, and how warm is its home?" is 0.255 from the sourdough
starter's whole vector, under recall's floor (0.27), so the store refused a question it
holds the answer to. So a memory whose body says much more than its headline also has the
vector of ``name. description``, and its cosine to a question is lifted towards its
headline's when that is higher, never lowered: ``cosine + LIFT × max(headline − cosine, 0)``.
Lifted, the cosine means what it meant (whether the memory bears on the question), so
recall's floor reads it as before.

Measured on bench/recall_quality.py (LIFT and TOKENS chosen on the A halves; docs/recall.md
has every variant): on the bakery store, MRR over every answerable question 0.905 → 0.915
(B, held out: 0.882 → 0.899), paraphrases 0.83 → 0.85, answerable questions wrongly refused
5 → 4 of 136, unrelated refused 21 → 21 of 30. The conversational and longchat stores (one
short observation a memory) have no headlines: their whole text is less than ``RATIO``
headlines, and their figures are unchanged; with headlines there too, the embedding cost
70 % more on such stores for one question fewer wrongly refused. A headline's length
mattered most: cut at 12–16 tokens 0.900, at 24 0.915, uncut (to 40) 0.905. The better of
the two cosines (LIFT 1) refused 14 of the bakery's 30 unrelated questions instead of 21; a
blend of the two vectors (one stored vector) wrongly refused more on the conversational one.

Cost: a headline is cut at about ``TOKENS`` tokens (distill-kura's long mixed descriptions:
4.7 ms of CPU a memory beside the body's 20.6, +23 %; kura's generated shape: none), and is
made after every memory of the store has its own vector (a recall short of time spends it on
those first), under the model's key with ``SUFFIX`` in the same vectors table, keyed by
content hash like the whole vector: a rename costs nothing, an edit makes both again. A
memory without one has an empty row, so it is not read again. A question reads the
headlines of only its ``DEPTH`` best memories by the whole vector, by slug: a few index
lookups and no second matrix in memory. An index made before headlines gets them at its
next update; until then nothing is lifted.

The same rows hold a memory's first sentences (``kura.recall.sentences``), up to three
vectors in one row under the model's key and ``SENTENCES``: ``keep`` makes them in the
same pass as the headline, ``lift`` reads them in the same query and lifts towards the best
of them after the headline, and returns both, since recall's floor reads the cosine with
the headline's lift and not theirs.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kura.recall import sentences
from kura.recall.index_build import TEXT_CAP, text_of

if TYPE_CHECKING:
    import numpy as np

SUFFIX = "+headline"  # the vectors table's model key for headlines: the model's, and this
SENTENCES = "+sentences"  # ... and for a memory's first sentences (``kura.recall.sentences``)
LIFT = 0.3  # how far a memory's cosine moves towards its headline's, when that is higher
DEPTH = 64  # memories (by the whole vector) whose headlines a question reads
CHUNK = 128  # memories whose headline and sentences ``fill`` embeds at a time (up to 4 texts each)
RATIO = 2.0  # a memory whose whole text is shorter than this many headlines has none
TOKENS = 24  # a headline is cut after about this many tokens (measured: see the docstring)
BULK = 8  # more headlines to make than this: the embedder made for bulk work (``full``), as bodies
_TEXTS = (
    "SELECT docs.sha, docs_fts.name, docs_fts.description, docs_fts.body FROM docs "
    "JOIN docs_fts ON docs_fts.rowid = docs.fts WHERE docs.sha IN ({marks})"
)
_MISSING = (
    "SELECT DISTINCT docs.sha FROM docs JOIN vectors AS body ON body.sha = docs.sha AND body.model = ? "
    "LEFT JOIN vectors AS head ON head.sha = docs.sha AND head.model = ? "
    "LEFT JOIN vectors AS said ON said.sha = docs.sha AND said.model = ? "
    "WHERE head.sha IS NULL OR said.sha IS NULL"
)

_MADE = (
    "SELECT count(*) FROM docs JOIN vectors ON vectors.sha = docs.sha AND vectors.model = ? "
    "AND length(vectors.vec) > 0"
)


def key(model_id: str, view: str = SUFFIX) -> str:
    """The vectors table's model key for the headlines (``view``: or the sentences) of
    ``model_id``'s memories."""
    return model_id + view


def stamp(model_id: str) -> str:
    """What a complete index of ``model_id``'s vectors has made: its memories' own, their
    headlines' and their sentences' (an index an older kura completed has not)."""
    return key(model_id) + SENTENCES


def text(name: str, description: str, body: str = "") -> str:
    """What a memory's headline says: its name and description, cut at about ``TOKENS``
    tokens. "" (no headline) without a description, or when the memory's whole text (``body``
    as the index embeds it) is less than ``RATIO`` times the headline: the whole vector then
    already is the headline's, and a second one would cost an embedding for nothing."""
    said = " ".join(description.split())
    if not said:
        return ""
    head = sentences.cut(f"{' '.join(name.split())}. {said}", TOKENS)
    return head if len(body) >= RATIO * len(head) else ""


def keep(db: sqlite3.Connection, embedder: Any, shas: Sequence[str]) -> int:
    """Embed and commit the headlines and first sentences (``sentences.of``) of these content
    hashes that have none yet; how many texts were embedded. A memory with none is kept as an
    empty row, so it is not read again."""
    if not shas:
        return 0
    views = (key(embedder.model_id), key(embedder.model_id, SENTENCES))
    marks = ",".join("?" * len(shas))
    held = f"SELECT sha, model FROM vectors WHERE model IN (?, ?) AND sha IN ({marks})"
    have = set(db.execute(held, (*views, *shas)).fetchall())
    wanted: dict[tuple[str, str], list[str]] = {}
    for sha, name, description, body in db.execute(_TEXTS.format(marks=marks), tuple(shas)):
        named, said, whole = str(name), str(description)[:TEXT_CAP], str(body)[:TEXT_CAP]
        if (sha, views[0]) not in have:
            head = text(named, said, text_of(named, said, whole))
            wanted[sha, views[0]] = [head] if head else []
        if (sha, views[1]) not in have:
            wanted[sha, views[1]] = sentences.of(whole, said)
    texts = [piece for pieces in wanted.values() for piece in pieces]
    made = embedder.embed(texts).astype("float16") if texts else None
    rows, at = [], 0
    for (sha, model), pieces in wanted.items():
        rows.append((sha, model, b"" if made is None else made[at : at + len(pieces)].tobytes()))
        at += len(pieces)
    with db:
        db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
    return len(texts)


def missing(db: sqlite3.Connection, model_id: str) -> list[str]:
    """Content hashes whose memory has a vector and no headline or sentence row yet (a memory
    that needs none gets an empty row from ``keep``, so it is listed once)."""
    return sorted(sha for (sha,) in db.execute(_MISSING, (model_id, key(model_id), key(model_id, SENTENCES))))


def made(db: sqlite3.Connection, model_id: str, view: str = SUFFIX) -> int:
    """How many indexed memories have a headline vector (``view``: sentence vectors; not an
    empty row: one needs none)."""
    (count,) = db.execute(_MADE, (key(model_id, view),)).fetchone()
    return int(count)


def fill(
    db: sqlite3.Connection,
    embedder: Any,
    *,
    seconds: float | None = None,
    whole_below: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> bool:
    """Headline and sentence vectors for the memories that have a vector and not them (an
    index made before them, or a build stopped between the two), a chunk at a time for about
    ``seconds`` (None, or a store of at most ``whole_below`` memories: all; at least one
    chunk, so a build given no time still gets on); whether none is missing now.
    ``progress(looked at, of)`` after each chunk."""
    todo = missing(db, embedder.model_id)
    if len(todo) > BULK:  # a one-question process's quick embedder is slow to run: as the bodies
        embedder = embedder.full()
    if seconds is not None and todo:
        (memories,) = db.execute("SELECT count(*) FROM docs").fetchone()
        seconds = None if memories <= whole_below else seconds
    began = time.monotonic()
    for start in range(0, len(todo), CHUNK):
        if start and seconds is not None and time.monotonic() - began >= seconds:
            return False
        keep(db, embedder, todo[start : start + CHUNK])
        if progress is not None:
            progress(min(start + CHUNK, len(todo)), len(todo))
    return True


def lift(
    db: sqlite3.Connection, model_id: str, slugs: Sequence[str], both: np.ndarray, queries: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``both`` (rows × questions: each memory's cosine to each question vector) with the
    ``DEPTH`` best rows by the first column lifted towards their headlines' cosines; and
    that lifted further towards their best sentence's (``kura.recall.sentences``)."""
    import numpy as np

    count = min(DEPTH, len(slugs))
    if count == 0:
        return both, both
    rows = np.argpartition(-both[:, 0], count - 1)[:count] if count < len(slugs) else np.arange(count)
    row_of = {slugs[i]: int(i) for i in rows}
    width = 2 * queries.shape[1]  # bytes of one float16 vector
    marks = ",".join("?" * len(row_of))
    views = ((key(model_id), LIFT), (key(model_id, SENTENCES), sentences.LIFT))
    found = db.execute(
        "SELECT docs.slug, vectors.model, vectors.vec FROM docs JOIN vectors ON vectors.sha = docs.sha "
        f"AND vectors.model IN (?, ?) WHERE docs.slug IN ({marks}) AND typeof(vectors.vec) = 'blob' "
        "AND length(vectors.vec) % ? = 0 "
        "AND length(vectors.vec) BETWEEN ? AND ?",
        (views[0][0], views[1][0], *row_of, width, width, width * sentences.FIRST),
    ).fetchall()
    lifted = [both]
    for view, by in views:
        held = [(row_of[slug], vec) for slug, model, vec in found if model == view]
        lifted.append(lifted[-1])
        if not held:
            continue
        counts = np.asarray([len(vec) // width for _, vec in held])
        vecs = np.frombuffer(b"".join(vec for _, vec in held), dtype=np.float16).reshape(-1, width // 2)
        starts = np.cumsum(counts) - counts
        with np.errstate(invalid="ignore", over="ignore"):  # a planted row: no NaN, nothing past 1
            said = np.maximum.reduceat(vecs.astype(np.float32) @ queries.T, starts, axis=0)
        said = np.clip(np.nan_to_num(said, nan=-1.0), -1.0, 1.0)
        at = np.asarray([row for row, _ in held])
        lifted[-1] = lifted[-1].copy()
        lifted[-1][at] += by * np.maximum(said - lifted[-1][at], 0.0)
    return lifted[1], lifted[2]
