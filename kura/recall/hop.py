"""The second hop: search again with what the first pick adds.

"What did Nadia paint in the city where her sister got married?" is answered by two
memories: the wedding (which names Sofia) and the painting of Sofia's rooftops, and the
question shares almost nothing with the second. The first search finds the bridge; what it
adds to the question (its rarest words: names, places, numbers, the things only a few
memories hold) finds the rest. So recall takes the first hit's ``WORDS`` rarest words that
the question does not already hold — each held by at most ``RARE`` of the memories — and
searches with them alone (with the question beside them, its own words drown them).

Merged with care: the first search's best hit stays first, every other memory keeps the
better of its first score and ``DISCOUNT`` × its second, so a second-hop hit climbs past a
weak first hit and never past a strong one. Measured on bench/recall_quality.py (all in
docs/recall.md): longchat multi-hop MRR 0.44 → 0.47, all targets in the top 5 for 8 → 9 of
15, every other kind and set unchanged; rarest 3 words, hops from the first two hits, the
pick's vector instead of its words, and putting the second hop's best right after the
first pick each did no better or cost single questions.
"""

from __future__ import annotations

import dataclasses

from kura.errors import KuraError
from kura.recall.search import Hit, Results, SearchIndex, query_words, quote
from kura.store import catalog

WORDS = 5  # the first pick's rarest words that make the second search
RARE = 0.05  # a word held by more than this share of the memories tells nothing apart
LEAST = 20  # a smaller store is not hopped in: a word held by one memory in five is not rare
DISCOUNT = 0.9  # a second-hop score counts for this much against a first-hop one
_HOLDING = "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?"


def second_hop(index: SearchIndex, question: str, first: Results, k: int, *, least: float) -> Results:
    """``first`` merged with a search for what its best hit adds to ``question`` (``first``
    itself when there is nothing to add, it was answered by words alone, the store is small,
    or its best hit is below ``least`` in meaning: a hop from what does not bear is noise)."""
    lead = first.hits[0] if first.hits else None
    if lead is None or first.how != "embedded" or lead.cosine is None or lead.cosine < least:
        return first
    (total,) = index.db.execute("SELECT count(*) FROM docs").fetchone()
    if total < LEAST:  # the first search already ranked a good part of the store
        return first
    words = added(index, lead.slug, question, total)
    if not words:
        return first
    scores = {hit.slug: hit for hit in first.hits}
    for hit in index.search(" ".join(words), k=k).hits:
        if hit.slug == lead.slug:
            continue
        known = scores.get(hit.slug)
        lifted = DISCOUNT * hit.score
        if known is None or lifted > known.score:
            scores[hit.slug] = dataclasses.replace(hit, score=lifted, cosine=_cosine(known, hit, lead))
    rest = sorted((h for h in scores.values() if h.slug != lead.slug), key=lambda h: (-h.score, h.slug))
    return dataclasses.replace(first, hits=(lead, *rest[: k - 1]))


def added(index: SearchIndex, slug: str, question: str, total: int) -> list[str]:
    """The rarest words of memory ``slug`` (of ``total``) that ``question`` does not hold, at
    most ``WORDS``."""
    try:
        said = catalog.said_of(index.store, slug)
    except KuraError:  # gone since the search: nothing to add
        return []
    asked = set(query_words(question))
    held: dict[str, int] = {}
    for word in query_words(f"{said.name} {said.description} {said.body}"):
        if word in asked or (len(word) < 3 and not word.isdigit()):
            continue
        (count,) = index.db.execute(_HOLDING, (quote(word),)).fetchone()
        if 0 < count <= max(RARE * total, 1):
            held[word] = count
    return sorted(held, key=lambda word: held[word])[:WORDS]


def _cosine(known: Hit | None, hit: Hit, lead: Hit) -> float | None:
    """A lifted hit's cosine, what the floor judges it by: to the question as asked when the
    first search found it; else no more than the lead's (a hop from a memory that does not
    bear on the question bears on nothing) nor its own to what the lead added."""
    if known is not None:
        return known.cosine
    if hit.cosine is None or lead.cosine is None:
        return None
    return min(hit.cosine, lead.cosine)
