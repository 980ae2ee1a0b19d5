"""Ties in a search: hits of equal score are ordered newest first. Recency breaks a tie and
never outranks a better match (measured in bench/recall_quality.py; docs/recall.md)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from kura.errors import KuraError
from kura.store import catalog
from kura.store.store import Store

if TYPE_CHECKING:
    from kura.recall.search import Hit

TIE = 1e-6  # fused scores closer than this are equal: recency decides


def newest_first(store: Store, hits: list[Hit]) -> list[Hit]:
    """Hits in score order, and among hits of the same score the newer memory first:
    recency breaks a tie, it never outranks a better match."""
    out: list[Hit] = []
    start = 0
    while start < len(hits):
        end = start + 1
        while end < len(hits) and hits[start].score - hits[end].score <= TIE:
            end += 1
        tied = hits[start:end]
        if len(tied) > 1:  # rare (the same words twice): only then is a file read
            recency = {hit.slug: _recency(store, hit.slug) for hit in tied}
            tied.sort(key=lambda hit: (-recency[hit.slug][0], -recency[hit.slug][1], hit.slug))
        out += tied
        start = end
    return out


def _recency(store: Store, slug: str) -> tuple[int, int]:
    """(the day the memory says it was written, else its file's day; the file's mtime)."""
    try:
        _, memory = store.read(slug)
        mtime = store.resolve(slug).stat().st_mtime_ns
    except (KuraError, OSError):  # gone since it was indexed: oldest
        return (0, 0)
    written = catalog.written_date(memory.note)
    day = written or dt.date.fromtimestamp(mtime / 1e9)
    return (day.toordinal(), mtime)
