"""Which memories hold each question word: one full-text query a word, kept for as long as
the index is the same.

The search weighs a question's rare words by the memories that hold them, so each word is
one FTS5 query returning every row id that holds it. At 20,000 memories an ordinary word is
in thousands of them: about 1 ms a word, several a question, and the same words come back
question after question ("deploy", "backup", a project's own names). So a warm index keeps
each word's row ids, keyed by the index's ``generation`` (the counter every change to the
indexed memories moves, in this process or another: ``kura.recall.vectors.changed``); a new
generation starts afresh. At most ``WORDS`` words and ``IDS`` row ids in all are kept.

A question far past what the model reads (128 pieces: a pasted log, a whole prompt) was one
query a distinct word, and as much work again weighing each — a 105 KB question of 7,000
words, most of a warm recall's 0.35 s — for words that weigh next to nothing once thousands
share the question. So the search (and the store floor) take a question's first ``QUESTION_WORDS``
distinct words as its words, and a look-up queries at most that many (the rest count as held
by no memory). A question of ordinary length is read whole, as before.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

WORDS = 4096
QUESTION_WORDS = 1024  # words one look-up queries (a question, with its words' other forms)
IDS = 2_000_000  # 16 MB of int64 row ids
_ROWIDS = "SELECT group_concat(rowid) FROM docs_fts WHERE docs_fts MATCH ?"
_GENERATION = "SELECT value FROM kv WHERE key = 'generation'"


def quote(word: str) -> str:
    """A word as an FTS5 string literal: never operators, never syntax errors (several words
    in one literal are a phrase)."""
    return '"' + word.replace('"', '""') + '"'


class WordRows:
    """Per word, the full-text row ids of the memories that hold it, for one index."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._kept: dict[str, np.ndarray] = {}
        self._ids = 0
        self._generation: Any = None
        self.queries = 0  # full-text queries made (what a test counts)

    def rows(self, quoted: list[str]) -> list[np.ndarray]:
        """The row ids for each of ``quoted`` (FTS5 string literals), in order."""
        import numpy as np

        found = self.db.execute(_GENERATION).fetchone()
        generation = None if found is None else found[0]
        if generation != self._generation:
            self._kept.clear()
            self._ids, self._generation = 0, generation
        out = []
        for word in quoted[:QUESTION_WORDS]:
            ids = self._kept.get(word)
            if ids is None:  # row ids as one string: SQLite and numpy do the per-row work
                self.queries += 1
                (joined,) = self.db.execute(_ROWIDS, (word,)).fetchone()
                ids = np.fromstring(joined or "", sep=",", dtype=np.int64)
                self._keep(word, ids)
            out.append(ids)
        return out + [np.zeros(0, dtype=np.int64)] * max(len(quoted) - QUESTION_WORDS, 0)

    def _keep(self, word: str, ids: np.ndarray) -> None:
        if len(ids) > IDS:
            return
        self._kept[word] = ids
        self._ids += len(ids)
        while len(self._kept) > WORDS or self._ids > IDS:
            self._ids -= len(self._kept.pop(next(iter(self._kept))))
