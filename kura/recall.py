"""Recall: the memories that bear on a question, their neighbours, and room to read them.

1. Pick: the search index ranks every memory by meaning (``kura.search``); those above a
   relevance floor are picked, the best ``top``. A question about something the store does
   not hold picks nothing — an honest empty answer (exit 2) beats a confident wrong one.
2. Walk: from each pick, ``[[links]]`` are followed ``hops`` steps; memories reached that
   way are offered as neighbours, marked as walked rather than picked.
3. Fit: each memory gets a share of the character budget. A memory that fits is given
   whole; one that does not keeps its frontmatter head and the paragraphs that share the
   most words with the question, in their own order, with ``[…]`` where text was left out
   — never a line cut in the middle without a marker.
4. Say how: ``embedded`` (dense + lexical), or ``lexical`` with the reason the dense half
   was unavailable.

The thinker model path (the whole index in one prompt) comes later; this is the offline
path every machine has.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kura.errors import KuraError
from kura.search import Hit, SearchIndex, query_words
from kura.store import Store

FLOOR = 0.25  # fused score below which a memory does not bear on the question
RELATIVE = 0.6  # and picks must be within this share of the best one
DEFAULT_CHARS = 6000


@dataclass(frozen=True, slots=True)
class Recall:
    store: str
    question: str
    how: str
    picked: tuple[Hit, ...]
    walked: tuple[str, ...]
    context: str
    elapsed: float
    reason: str = ""
    explain: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store, "question": self.question, "how": self.how, "reason": self.reason,
            "picked": [{"slug": h.slug, "score": round(h.score, 4)} for h in self.picked],
            "walked": list(self.walked), "context": self.context, "chars": len(self.context),
            "elapsed": round(self.elapsed, 4), **({"explain": self.explain} if self.explain else {}),
        }  # fmt: skip


def recall(
    store: Store,
    question: str,
    *,
    top: int = 3,
    hops: int = 1,
    chars: int = DEFAULT_CHARS,
    explain: bool = False,
    index: SearchIndex | None = None,
) -> Recall:
    """What the store remembers about ``question``."""
    started = time.perf_counter()
    own = index is None
    index = index or SearchIndex(store)
    try:
        index.update()
        results = index.search(question, k=max(top * 4, 10))
    finally:
        if own:
            index.close()
    picked = _pick(results.hits, results.how, top)
    walked = _walk(store, [hit.slug for hit in picked], hops)
    context = _fit(store, [h.slug for h in picked] + walked, question, chars)
    details = [
        {"slug": h.slug, "score": h.score, "cosine": h.cosine, "lexical": h.lexical, "picked": h in picked}
        for h in results.hits
    ] if explain else []  # fmt: skip
    return Recall(store.name, question, results.how, picked, tuple(walked), context,
                  time.perf_counter() - started, results.reason, details)  # fmt: skip


def _pick(hits: tuple[Hit, ...], how: str, top: int) -> tuple[Hit, ...]:
    if not hits:
        return ()
    if how == "lexical":  # BM25 scores have no absolute scale; a match is a match
        return hits[:top]
    best = hits[0].score
    if best < FLOOR:
        return ()
    return tuple(h for h in hits[:top] if h.score >= max(FLOOR, best * RELATIVE))


def _walk(store: Store, start: list[str], hops: int) -> list[str]:
    seen = set(start)
    frontier = list(start)
    walked: list[str] = []
    known = set(store.slugs()) if hops > 0 else set()
    for _ in range(max(hops, 0)):
        reached: list[str] = []
        for slug in frontier:
            try:
                links = store.show(slug).note.links
            except KuraError:  # a memory gone since the search: doctor's business, not recall's
                continue
            for target in links:
                if target not in seen and target in known:
                    seen.add(target)
                    reached.append(target)
        walked.extend(reached)
        frontier = reached
    return walked


def _fit(store: Store, slugs: list[str], question: str, chars: int) -> str:
    if not slugs:
        return ""
    share = max(chars // len(slugs), 200)
    parts = []
    for slug in slugs:
        text = store.resolve(slug).read_text(encoding="utf-8", errors="replace")
        parts.append(f"=== {slug} ===\n{_shorten(text, question, share)}")
    return "\n\n".join(parts)


def _shorten(text: str, question: str, limit: int) -> str:
    """The memory within ``limit`` characters: whole if it fits; else its head and the
    paragraphs closest to the question, in order, with markers where text was left out."""
    if len(text) <= limit:
        return text.rstrip("\n")
    head, _, body = text.partition("\n---\n") if text.startswith("---") else ("", "", text)
    head = f"{head}\n---" if head else ""
    paragraphs = [p for p in body.split("\n\n") if p.strip()]
    words = set(query_words(question))
    ranked = sorted(range(len(paragraphs)), key=lambda i: (-len(words & set(query_words(paragraphs[i]))), i))
    room = limit - len(head) - 4
    keep: set[int] = set()
    for i in ranked:
        if len(paragraphs[i]) + 2 <= room:
            keep.add(i)
            room -= len(paragraphs[i]) + 2
    out = [head] if head else []
    for i, paragraph in enumerate(paragraphs):
        if i in keep:
            out.append(paragraph.strip("\n"))
        elif not out or out[-1] != "[…]":
            out.append("[…]")
    return "\n\n".join(out)
