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
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kura.recall import vectors
from kura.recall.embed import DIM, Unavailable
from kura.recall.remote_embed import EmbedFailed

if TYPE_CHECKING:
    import numpy as np

    from kura.recall.search import SearchIndex

SLOPE, BASE = 1.6, 0.15  # margin = SLOPE × (p10 of the memories' own margins − BASE)
CEILING = 0.40  # never a higher bar than this, whatever a store looks like
SAMPLE = 500  # memories asked as questions of the rest: enough for a tenth percentile
CHUNK = 2048  # rows converted to float32 at a time
LEAST = 20  # fewer memories than this: no calibration (nothing to tell common from rare)
KEY = "floor"


@dataclass(frozen=True, slots=True)
class Calibration:
    """A store's bar: how far a question's best memory must stand above its closeness to
    the whole store (``margin``), and the ``centroid`` that closeness is measured against."""

    margin: float
    centroid: tuple[float, ...]
    p10: float  # the memories' own tenth-percentile margin, reported by bench and explain

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
    made = _made(vectors.load(index.db, model, DIM, keep=False).half)
    if made is not None:
        try:
            with index.db:
                index.db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (KEY, _dumped(stamp, made)))
        except sqlite3.Error:  # a read-only or busy database: calibrated again next time
            pass
    return made


def stands_out(index: SearchIndex, question: str, best: float | None) -> bool:
    """Whether the best hit's cosine ``best`` stands out enough for this store to answer
    ``question`` at all (True when the store has no calibration, or the hit no cosine)."""
    if best is None:
        return True
    found = calibration(index)
    if found is None:
        return True
    try:
        asked = index.question_vector(question)  # the search's own, not embedded again
    except EmbedFailed:  # the endpoint went away since the search: the fixed floor alone decides
        return True
    return found.stands_out(best, asked)


def _made(half: np.ndarray) -> Calibration | None:
    """The calibration of a float16 matrix of unit rows, a chunk of rows at a time (a float32
    copy of a 20,000-memory matrix would cost more than the rest)."""
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
    p10 = float(np.percentile(margins, 10))
    margin = min(max(SLOPE * (p10 - BASE), 0.0), CEILING)
    return Calibration(round(margin, 4), tuple(float(x) for x in centroid), round(p10, 4))


def _stamp(db: sqlite3.Connection, model: str) -> str:
    row = db.execute("SELECT value FROM kv WHERE key = 'generation'").fetchone()
    (count,) = db.execute("SELECT count(*) FROM docs").fetchone()
    return f"{model}:{row[0] if row else 0}:{count}"


def _dumped(stamp: str, found: Calibration) -> str:
    return json.dumps({"stamp": stamp, "margin": found.margin, "p10": found.p10, "centroid": found.centroid})


def _read(db: sqlite3.Connection, stamp: str) -> Calibration | None:
    """The kept calibration if it is this index's and well formed, else None."""
    row = db.execute("SELECT value FROM kv WHERE key = ?", (KEY,)).fetchone()
    if row is None or not isinstance(row[0], str):
        return None
    try:
        data = json.loads(row[0])
        centroid = data["centroid"]
        margin, p10 = float(data["margin"]), float(data["p10"])
        ok = data["stamp"] == stamp and isinstance(centroid, list) and 0 < len(centroid) <= 4096
        ok = ok and all(type(x) is float for x in centroid) and 0.0 <= margin <= CEILING
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return Calibration(margin, tuple(centroid), p10) if ok else None
