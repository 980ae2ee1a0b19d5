"""The relevance floor, calibrated for each store from its own vectors.

A fixed cosine floor (``kura.recall.recall.FLOOR``) cannot serve every store. In a store of
short observations from one long chat, every memory names the same two people and is
written the same way, so a question about something the chat never touched ("Which gym
does Owen go to?") still comes within 0.6 of some memory; in a store of varied notes an
answerable question may score 0.25. What tells them apart is how far the best memory stands
above the question's closeness to the store as a whole: the best cosine minus the
question's cosine to the centroid of the store's vectors (which is its mean cosine to every
memory, in one dot product). A question the store holds stands out; one it does not hold
is about as close to its best memory as to everything.

How far is far enough is the store's own: the more its memories resemble one another, the
higher the bar. Each memory is asked as a question of the others (its vector against the
rest, itself left out), and ``SLOPE × (p10 − BASE)`` of those margins is the store's
``margin``: a store of near-duplicates gets a high bar, a store of varied notes none worth
the name. SLOPE and BASE were fitted on bench/recall_quality.py's three stores (longchat
p10 0.366 → 0.35, conversational 0.314 → 0.27, bakery 0.208 → 0.09; docs/recall.md).

The calibration costs one pass over the matrix (a sample of ``SAMPLE`` rows against all:
at 20,000 memories about 0.3 s of CPU, measured with a random unit matrix),
so it is kept in the index's ``kv`` table under the model and the index's generation, and
made again only when the vectors changed. What is read back is checked: the database may
come from someone else's clone.

A memory asked as a question stands in for a real question only when memories are written
like questions: one sentence each, as a chat's observations are. In a store of long notes
two memories that share a template or a subject are far closer to each other than a question
is to the note that answers it: the bakery store with 2,000 templated distractors has
memories' p10 0.49 (its bar at the ceiling) while one in five of its paraphrased questions
stands less than 0.25 above the store, and the bar refused 73 of its 136 answerable
questions. Every statistic of the memories alone that was tried (the k-th nearest for k up
to 20, twins above 0.65–0.95 left out, each memory asked of a random 32–248 others, each
headline asked of the others, the bar read near the question's own hits) still put that
store level with or above the conversational one, whose unrelated questions the bar must
refuse. So the bar is the question-sized memories' (the whole text under ``headline.RATIO``
headlines: the memories that get no headline vector), measured on them alone (none when
fewer than ``LEAST`` of the sample are), and it judges only a question whose best memory is
one of them; a long note is judged by the fixed floor (``kura.recall.recall.FLOOR``), which
alone refused as many of the bakery's unrelated questions (21 of 30) as with the bar.
``short``, the sample's share of question-sized memories, is kept for reports. Measured on
bench/recall_quality.py before → after (unrelated refused; answerable wrongly refused):
bakery + 2,000 distractors 28/30 → 3/30, 73/136 → 0/136 (on that store no rule of the
cosines or the words tells a paraphrase from an unrelated question: both stand 0.21–0.46
above the store, lead the second hit by 0.01–0.02 (median), and have a third to a half of
their words in no memory); bakery + 2,000 one-line templated notes (``--pad-style
templated``) 30/30 → 22/30, 60/136 → 5/136 (four are the fixed floor's, as on the bakery
alone; the fifth's best memory is a one-line note). That store is not held out: a first form
of this rule, the bar scaled by ``short``, wrongly refused 46 of its 136, and this form was
chosen after. Bakery, conversational and longchat refuse what they refused.

Below the bar, the question still stands out when its words single the first hit out: the
search's first memory is the one memory holding the largest share of the question's rare
words (``kura.recall.fusion``'s IDF bar; strictly more than any other memory). Such a word
is a name or a thing few memories say ("What does Bea play besides singing?": Bea is in 7 of
249 memories, singing in 2). An unrelated question's rare words are in no memory, or in one
the meaning did not put first. This took the answerable questions wrongly refused from 3/108
to 0/108 on longchat and 1/78 to 0/78 on the conversational store, every unrelated one still
refused (10/15, 6/10); no constant was fitted for it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kura.recall import fusion, headline, vectors
from kura.recall.embed import DIM, Unavailable
from kura.recall.index_build import TEXT_CAP, text_of
from kura.recall.remote_embed import EmbedFailed
from kura.recall.search import query_words
from kura.recall.word_rows import QUESTION_WORDS

if TYPE_CHECKING:
    import numpy as np

    from kura.recall.search import Results, SearchIndex

SLOPE, BASE = 1.6, 0.15  # margin = SLOPE × (p10 of the memories' own margins − BASE)
CEILING = 0.40  # never a higher bar than this, whatever a store looks like
SAMPLE = 500  # memories asked as questions of the rest: enough for a tenth percentile
CHUNK = 2048  # rows converted to float32 at a time
LEAST = 20  # fewer memories than this: no calibration (nothing to tell common from rare)
KEY = "floor"
TEXTS = 500  # full-text rows read at a time when telling short memories from long ones


@dataclass(frozen=True, slots=True)
class Calibration:
    """A store's bar: how far a question's best memory must stand above its closeness to
    the whole store (``margin``), and the ``centroid`` that closeness is measured against."""

    margin: float
    centroid: tuple[float, ...]
    p10: float  # the memories' own tenth-percentile margin, reported by bench and explain
    short: float = 1.0  # the share of the sampled memories written no longer than a question

    def stands_out(self, best: float, question: np.ndarray) -> bool:
        """Whether a best cosine of ``best`` stands far enough above ``question``'s closeness
        to the store."""
        import numpy as np

        mean = float(np.asarray(self.centroid, dtype=np.float32) @ question)
        return best - mean >= self.margin


def calibration(index: SearchIndex) -> Calibration | None:
    """The store's calibration, from the index's kv when current, else made and kept there
    (None: a lexical index, or too few vectors to tell anything)."""
    if isinstance(index.embedder, Unavailable):
        return None
    model = index.embedder.model_id
    stamp = _stamp(index.db, model)
    kept = _read(index.db, stamp)
    if kept is not None:
        return kept
    matrix = vectors.load(index.db, model, DIM, keep=False)
    made = _made(matrix.half, sized=lambda picked: _sized(index.db, matrix.fts[picked]))
    if made is not None:
        try:
            with index.db:
                index.db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (KEY, _dumped(stamp, made)))
        except sqlite3.Error:  # a read-only or busy database: calibrated again next time
            pass
    return made


def stands_out(index: SearchIndex, question: str, first: Results) -> bool:
    """Whether the search ``first`` found something that stands out enough for this store to
    answer ``question`` at all: its best cosine above the store's bar, or its first hit singled
    out by the question's rare words. True when the store has no calibration, no hit has a
    cosine, or the best is a long note (the bar was measured on question-sized memories)."""
    cosines = [h for h in first.hits if h.cosine is not None]
    if not cosines or first.hits[0].named:  # an id the question names: it is asked about
        return True
    best = max(cosines, key=lambda h: h.cosine or 0.0)
    found = calibration(index)
    if found is None or found.margin <= 0 or not _is_sized(index.db, best.slug):
        return True
    try:
        asked = index.question_vector(question)  # the search's own, not embedded again
    except EmbedFailed:  # the endpoint went away since the search: the fixed floor alone decides
        return True
    return found.stands_out(best.cosine or 0.0, asked) or singled_out(index, question, first.hits[0].slug)


def singled_out(index: SearchIndex, question: str, slug: str) -> bool:
    """Whether ``slug`` is the one memory of the store holding the largest share of
    ``question``'s rare words, strictly more than any other (``kura.recall.fusion``'s IDF bar:
    the words that are evidence in this store)."""
    import numpy as np

    words = query_words(question)[:QUESTION_WORDS]  # as the search reads them
    matrix = index.matrix()
    total = len(matrix.slugs)
    if not words or not total:
        return False
    holders = [matrix.rows(ids) for ids in index.word_rows(words)]
    rare = fusion.share(holders, total, rare=fusion.rare_above(total))
    return fusion.lead(rare) > 0 and matrix.slugs[int(np.argmax(rare))] == slug


def _made(half: np.ndarray, *, sized: Callable[[np.ndarray], np.ndarray]) -> Calibration | None:
    """The calibration of a float16 matrix of unit rows, a chunk of rows at a time (a float32
    copy of a 20,000-memory matrix would cost more than the rest); ``sized`` tells which of
    the sampled rows are question-sized: the bar is theirs (none with fewer than ``LEAST``)."""
    import numpy as np

    if len(half) < LEAST:
        return None
    step = max(len(half) // SAMPLE, 1)
    picked = np.arange(0, len(half), step)[:SAMPLE]
    asked = half[picked].astype(np.float32)
    close = np.empty((len(asked), len(half)), dtype=np.float32)
    total = np.zeros(half.shape[1], dtype=np.float64)
    for start in range(0, len(half), CHUNK):
        block = half[start : start + CHUNK].astype(np.float32)
        close[:, start : start + len(block)] = asked @ block.T
        total += block.sum(axis=0)
    centroid = (total / len(half)).astype(np.float32)
    close[np.arange(len(asked)), picked] = -1.0  # a memory is not its own answer
    margins = close.max(axis=1) - asked @ centroid
    short = sized(picked)
    mine = margins[short] if short.sum() >= LEAST else margins
    p10 = float(np.percentile(mine, 10))
    margin = min(max(SLOPE * (p10 - BASE), 0.0), CEILING) if short.sum() >= LEAST else 0.0
    mean = tuple(float(x) for x in centroid)
    return Calibration(round(margin, 4), mean, round(p10, 4), round(float(short.mean()), 4))


def _sized(db: sqlite3.Connection, fts: np.ndarray) -> np.ndarray:
    """Per full-text row id: whether that memory is question-sized (``_question_sized``); a
    row that cannot be read counts as one."""
    import numpy as np

    ids = [int(i) for i in fts]
    long: set[int] = set()
    for start in range(0, len(ids), TEXTS):
        chunk = ids[start : start + TEXTS]
        marks = ",".join("?" * len(chunk))
        read = f"SELECT rowid, name, description, substr(body, 1, {TEXT_CAP}) FROM docs_fts"
        rows = db.execute(f"{read} WHERE rowid IN ({marks})", chunk)
        long.update(rowid for rowid, *said in rows if not _question_sized(*said))
    return np.asarray([i not in long for i in ids], dtype=bool)


def _is_sized(db: sqlite3.Connection, slug: str) -> bool:
    """Whether the memory ``slug`` is question-sized (one that cannot be read counts as one)."""
    row = db.execute(
        f"SELECT docs_fts.name, docs_fts.description, substr(docs_fts.body, 1, {TEXT_CAP}) FROM docs "
        "JOIN docs_fts ON docs_fts.rowid = docs.fts WHERE docs.slug = ?",
        (slug,),
    ).fetchone()
    return row is None or _question_sized(*row)


def _question_sized(name: object, description: object, body: object) -> bool:
    """A memory written no longer than a question: its whole text, as the index embeds it, is
    under ``headline.RATIO`` headlines (it gets no headline vector). A memory with no
    description is measured against a headline of its own first words, so a long note kept
    without one is no question-sized memory."""
    named, said = str(name), str(description)[:TEXT_CAP]
    whole = text_of(named, said, str(body)[:TEXT_CAP])
    return not headline.text(named, said or whole, whole)  # no description: its first words stand for one


def _stamp(db: sqlite3.Connection, model: str) -> str:
    row = db.execute("SELECT value FROM kv WHERE key = 'generation'").fetchone()
    (count,) = db.execute("SELECT count(*) FROM docs").fetchone()
    return f"{model}:{row[0] if row else 0}:{count}"


def _dumped(stamp: str, found: Calibration) -> str:
    kept = {"stamp": stamp, "margin": found.margin, "p10": found.p10, "short": found.short}
    return json.dumps(kept | {"centroid": found.centroid})


def _read(db: sqlite3.Connection, stamp: str) -> Calibration | None:
    """The kept calibration if it is this index's and well formed, else None."""
    row = db.execute("SELECT value FROM kv WHERE key = ?", (KEY,)).fetchone()
    if row is None or not isinstance(row[0], str):
        return None
    try:
        data = json.loads(row[0])
        centroid = data["centroid"]
        margin, p10, short = float(data["margin"]), float(data["p10"]), float(data["short"])
        # the index may come with a clone: a centroid of another width or with NaN/inf in it
        # would fail every question's product, or refuse every question
        ok = data["stamp"] == stamp and isinstance(centroid, list) and len(centroid) == DIM
        ok = ok and all(type(x) is float and math.isfinite(x) for x in centroid) and 0.0 <= margin <= CEILING
        ok = ok and 0.0 <= short <= 1.0 and math.isfinite(p10)
    except (ValueError, TypeError, KeyError, RecursionError):  # one kept before ``short``: made again
        return None
    return Calibration(margin, tuple(centroid), p10, short) if ok else None
