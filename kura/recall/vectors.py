"""Every memory's vector as one matrix, and the one dot product that answers a question.

A question is answered by comparing it with every memory, so the vectors are kept as one
float16 matrix in the search database (a single row: a one-question process reads it in
one go instead of 20,000 rows), next to each row's slug and full-text row id. The first
question converts it chunk by chunk, which is as fast as converting it whole and touches
less memory; a process that asks again converts it once and keeps it, so later questions
cost one matrix-vector product.

The database sits in the state folder, which may come from someone else's clone, so what
is read back is checked for shape (rows × ``dim``, one slug and one row id per row) and
anything else is built again from the vectors table, skipping vectors of the wrong size.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

CHUNK = 2048
_KEYS = "('matrix', 'matrix_rows', 'matrix_model', 'matrix_generation', 'generation')"


@dataclass(slots=True)
class Matrix:
    slugs: list[str]
    fts: np.ndarray  # the full-text row id of each row
    half: np.ndarray  # (rows, dim) float16
    full: np.ndarray | None = None  # float32, made on the second question
    asked: int = 0
    _row_of_fts: np.ndarray | None = field(default=None, repr=False)

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """Every row's dot with ``query``: one vector (rows,), or several as columns (rows, n)."""
        import numpy as np

        self.asked += 1
        if self.full is None and self.asked > 1:
            self.full = self.half.astype(np.float32)
        if self.full is not None:
            return products(self.full, query)
        out = np.empty((len(self.slugs), *query.shape[1:]), dtype=np.float32)
        for start in range(0, len(self.slugs), CHUNK):
            out[start : start + CHUNK] = products(self.half[start : start + CHUNK].astype(np.float32), query)
        return out

    def rows(self, fts_ids: np.ndarray) -> np.ndarray:
        """Matrix rows of these full-text row ids (ids without a vector are left out)."""
        import numpy as np

        if self._row_of_fts is None:
            top = int(self.fts.max()) + 1 if len(self.fts) else 1
            if top > 16 * len(self.fts) + (1 << 20):  # ids far apart: a sorted search, not a table
                order = np.argsort(self.fts, kind="stable")
                at = np.searchsorted(self.fts[order], fts_ids).clip(0, max(len(order) - 1, 0))
                hit = self.fts[order][at] == fts_ids if len(order) else np.zeros(len(fts_ids), dtype=bool)
                sparse: np.ndarray = order[at[hit]] if len(order) else np.empty(0, dtype=np.int64)
                return sparse
            self._row_of_fts = np.full(top, -1, dtype=np.int64)
            self._row_of_fts[self.fts] = np.arange(len(self.fts))
        ids = fts_ids[(fts_ids >= 0) & (fts_ids < len(self._row_of_fts))]
        found: np.ndarray = self._row_of_fts[ids]
        return found[found >= 0]

    def patch(self, changed: dict[str, tuple[int, bytes]], gone: set[str]) -> Matrix:
        """This matrix with ``changed`` slugs' rows (full-text id, float16 bytes) replaced or
        added and ``gone`` ones removed — what a watcher's one-file update costs."""
        import numpy as np

        position = {slug: i for i, slug in enumerate(self.slugs)}
        if not gone and all(slug in position for slug in changed):  # edits only: rows in place
            half = self.half if self.half.flags.writeable else self.half.copy()
            fts = self.fts.copy()
            for slug, (rowid, blob) in changed.items():
                i = position[slug]
                half[i] = np.frombuffer(blob, dtype=np.float16)
                fts[i] = rowid
                if self.full is not None:
                    self.full[i] = half[i].astype(np.float32)
            return Matrix(self.slugs, fts, half, self.full, self.asked)
        keep = np.ones(len(self.slugs), dtype=bool)
        for slug in (*gone, *changed):
            if slug in position:
                keep[position[slug]] = False
        new = sorted(changed)
        slugs = [slug for slug, kept in zip(self.slugs, keep, strict=True) if kept] + new
        fts = np.concatenate([self.fts[keep], np.asarray([changed[s][0] for s in new], dtype=np.int64)])
        rows = [np.frombuffer(changed[s][1], dtype=np.float16) for s in new]
        half = np.vstack([self.half[keep], *rows]) if rows else self.half[keep]
        return Matrix(slugs, fts, half.reshape(len(slugs), self.half.shape[1]))


def products(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``rows @ query`` (float32), one query column at a time through numpy's own loop rather
    than BLAS. OpenBLAS splits a 20,000-row product over threads that then spin waiting for
    the next one, so on a busy machine each question paid for a core it hardly used; one
    column at a time is also the loop numpy runs fastest (a two-column ``einsum`` picks a far
    slower order). Measured on 20,000 × 384 at load 3: 8–19 ms wall and 9–11 ms CPU through
    BLAS against 2.4 ms wall and CPU for two columns; values agree to float32 rounding."""
    import numpy as np

    if query.ndim == 1:
        single: np.ndarray = np.einsum("ij,j->i", rows, np.ascontiguousarray(query, dtype=np.float32))
        return single
    out = np.empty((len(rows), query.shape[1]), dtype=np.float32)
    for column in range(query.shape[1]):
        out[:, column] = np.einsum("ij,j->i", rows, np.ascontiguousarray(query[:, column], dtype=np.float32))
    return out


def saved(db: sqlite3.Connection, model: str, dim: int) -> Matrix | None:
    """The saved matrix for ``model`` if it is current, else None. (``dim`` shapes an empty
    matrix; otherwise the saved rows say it.)"""
    import numpy as np

    kept = dict(db.execute(f"SELECT key, value FROM kv WHERE key IN {_KEYS}"))
    current = kept.get("matrix_model") == model and kept.get("matrix_generation") == kept.get("generation")
    if not current or kept.get("matrix_rows") is None:
        return None
    try:
        slugs, fts = json.loads(kept["matrix_rows"])
        ok = isinstance(slugs, list) and isinstance(fts, list) and len(slugs) == len(fts)
        ok = (
            ok
            and all(isinstance(s, str) for s in slugs)
            and all(type(i) is int and 0 <= i < 1 << 62 for i in fts)
        )
        blob = kept["matrix"]
        width = len(blob) // (2 * len(slugs)) if slugs and isinstance(blob, bytes) else dim
        if not ok or not isinstance(blob, bytes) or width < 1 or len(blob) != len(slugs) * width * 2:
            return None  # not the shape this process saves: rebuilt from the vectors
        half = np.frombuffer(blob, dtype=np.float16).reshape(len(slugs), width)
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return Matrix(slugs, np.asarray(fts, dtype=np.int64), half)


def save(db: sqlite3.Connection, matrix: Matrix, model: str) -> None:
    """Save ``matrix`` as current for ``model`` (the next process reads it in one go)."""
    import numpy as np

    (generation,) = db.execute("SELECT value FROM kv WHERE key = 'generation'").fetchone() or (None,)
    half = np.ascontiguousarray(matrix.half)
    with db:
        db.executemany(
            "INSERT OR REPLACE INTO kv VALUES (?, ?)",
            [
                ("matrix", half.data.cast("B") if half.size else b""),  # no copy
                ("matrix_rows", json.dumps([matrix.slugs, [int(i) for i in matrix.fts]])),
                ("matrix_model", model),
                ("matrix_generation", generation),
            ],
        )


def load(db: sqlite3.Connection, model: str, dim: int, *, keep: bool = True) -> Matrix:
    """The saved matrix for ``model``, or one built from the vectors table (and saved, unless
    ``keep`` is false: a build still under way would only have to save it again)."""
    import numpy as np

    found = saved(db, model, dim)
    if found is not None:
        return found
    # rows straight into a preallocated matrix: at 20,000 memories, building a list of
    # blobs and joining them doubled the matrix and cost 80 MB at the end of a build
    (width, count), slugs = _width(db, model), list[str]()
    half = np.empty((count, max(width // 2, 1) if count else dim), dtype=np.float16)
    fts = np.empty(count, dtype=np.int64)
    for slug, rowid, vec in db.execute(
        f"SELECT docs.slug, docs.fts, vectors.vec {_VALID} AND length(vectors.vec) = ? ORDER BY docs.slug",
        (model, width),
    ):
        if len(slugs) == count:  # a row written since the count: the next build has it
            break
        fts[len(slugs)] = rowid
        half[len(slugs)] = np.frombuffer(vec, dtype=np.float16)
        slugs.append(slug)
    half, fts = half[: len(slugs)], fts[: len(slugs)]
    matrix = Matrix(slugs, fts, half)
    if keep:
        save(db, matrix, model)
    return matrix


# the rows of the vectors table a matrix is made of: anything else is damage, left out
_VALID = (
    "FROM docs JOIN vectors ON vectors.sha = docs.sha AND vectors.model = ? "
    "WHERE typeof(docs.slug) = 'text' AND typeof(docs.fts) = 'integer' AND docs.fts >= 0 "
    "AND docs.fts < 4611686018427387904 AND typeof(vectors.vec) = 'blob' AND length(vectors.vec) > 0 "
    "AND length(vectors.vec) % 2 = 0"
)


def _width(db: sqlite3.Connection, model: str) -> tuple[int, int]:
    """The bytes of the commonest vector width for ``model`` (one model writes one width; a
    row of another is damage) and how many rows have it."""
    found = db.execute(
        f"SELECT length(vectors.vec), count(*) {_VALID} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1", (model,)
    ).fetchone()
    return (int(found[0]), int(found[1])) if found else (0, 0)


def changed(db: sqlite3.Connection) -> None:
    """The index changed: the saved matrix is out of date (a counter moves; the 15 MB blob is
    not rewritten or deleted until the next process that needs it rebuilds it)."""
    with db:
        db.execute("INSERT INTO kv VALUES ('generation', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")
