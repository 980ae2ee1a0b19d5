"""Of two memories that answer a question together, the one it asks for first.

"What was the name of the spaniel Nadia was commissioned to paint?" is answered by two
memories: the commission (the *bridge*: what the question describes to point at the dog) and
the delivery (which names the dog). The search and the second hop (``kura.recall.hop``) find
both, but the bridge shares more of the question's words and meaning, so it leads, and the
memory asked for comes second at best. ``kura.recall.clauses`` reads which part of the
question asks (the head) and which describes (the modifier); this puts first the memory that
matches the head, when the best hit matches the modifier instead:

- **a modifier**: the best hit is the bridge when it holds more of the modifier's words than
  of the head's (each word weighed by its rarity in the store). A memory linked to it (the two
  share a word the question does not hold, and no more than ``LINKED`` of the store holds: a
  name, a title, a place) that holds more of the head's words, or that holds the kind of thing
  asked for (an amount, a date, a name, a place: ``Answer``) where the bridge does not, is put
  first and the bridge second.
- **a comparison or a list**: the first-named thing is asked first. When the best hit holds
  words of the second thing and none of the first's, the one of the first ``SPAN`` hits
  holding most of the first's (``NAMED`` of them at least) and least of the second's (and
  the kind asked for, when the best hit holds it too) leads. A best hit holding words of
  both may answer both: it stays.

Anything else, and any question that does not parse, is left as it was. The words are read
as the second hop reads them (a word's first letters, its accents dropped, an irregular
verb's other forms); no text is embedded, so this costs a few rows' text and a few word counts
(kept while the index's matrix is).
"""

from __future__ import annotations

import dataclasses
import math
import re

from kura.recall import clauses, forms, fusion, hop, timed
from kura.recall.clauses import Answer, Clauses
from kura.recall.search import Hit, Results, SearchIndex, query_words

SPAN = 5  # a list's first-named thing is looked for among this many of the best hits
NAMED = 0.5  # a hit names a list's first thing when it holds this share of its words, at least
LINKED = 0.15  # a word held by more than this share of the store links nothing (a speaker's name)
# words the search keeps that tell no part of a question from another
_FUNCTION = frozenset(
    "he she him her his hers they their theirs it its one ones has have had having am being get got "
    "up out off over too very just also still ever much many more most less own same".split()
)
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_AMOUNT = re.compile(r"[£$€¥]\s?\d|\d\s?(?:%|k\b|km\b|kg\b|p\b)|\b\d+(?:[.,]\d+)?\b")
_NUMBERS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty hundred thousand".split()
)
_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday easter christmas".split()
)
_SENTENCES = re.compile(r"[.!?:;\n\"“”]+")
_CAPITAL = re.compile(r"(?<=\s)[A-Z][a-z]+")  # a capitalised word after a sentence's first


@dataclasses.dataclass(frozen=True, slots=True)
class Read:
    """A memory as this module reads it: its text, and its words keyed as ``_key`` keys them."""

    slug: str
    text: str
    keys: frozenset[str]


def asked_first(index: SearchIndex, question: str, results: Results) -> Results:
    """``results`` with the memory ``question`` asks for put ahead of the one it describes to
    point at it (the best hit), when the question has two parts; else ``results`` itself."""
    parts = clauses.parse(question)
    hits = results.hits
    if parts is None or results.how != "embedded" or len(hits) < 2:
        return results
    span = len(hits) if parts.kind == "modifier" else min(SPAN, len(hits))
    read = _read(index, [hit.slug for hit in hits[:span]])
    if hits[0].slug not in read:
        return results
    chosen = (
        _bridged(index, question, parts, hits, read)
        if parts.kind == "modifier"
        else _listed(index, parts, hits, read)
    )
    if chosen is None:
        return results
    lead, found = hits[0], hits[chosen]
    ahead = max(found.score, math.nextafter(lead.score, math.inf))  # a later step sorts by score (dates)
    first = dataclasses.replace(found, score=ahead)
    rest = [hit for at, hit in enumerate(hits) if at != chosen]
    return dataclasses.replace(results, hits=(first, *rest))


def _bridged(
    index: SearchIndex, question: str, parts: Clauses, hits: tuple[Hit, ...], read: dict[str, Read]
) -> int | None:
    """Which hit the head asks for, when the best hit is the bridge the modifier describes."""
    total = _total(index)
    head, modifier = _weighed(index, parts.first, total), _weighed(index, parts.second, total)
    lead = read[hits[0].slug]
    if _share(modifier, lead.keys) <= _share(head, lead.keys):
        return None  # the best hit is what is asked, or neither part tells
    asked = {key for word in query_words(question) for key in _keys(word)}
    untyped = not _answers(parts.answer, lead.text, asked)
    best: tuple[bool, float, float, int] | None = None
    for at, hit in enumerate(hits[1:], start=1):
        other = read.get(hit.slug)
        link = 0.0 if other is None else _link(index, lead, other, total)
        if other is None or not link:
            continue
        gain = _share(head, other.keys) - _share(head, lead.keys)
        typed = untyped and _answers(parts.answer, other.text, asked)
        if (gain > 0 or typed) and (best is None or (typed, gain, link) > best[:3]):
            best = (typed, gain, link, at)  # the kind asked for, the head's words, the link, the rank
    return None if best is None else best[3]


def _listed(index: SearchIndex, parts: Clauses, hits: tuple[Hit, ...], read: dict[str, Read]) -> int | None:
    """Which hit names the first of two things, when the best hit names the second."""
    total = _total(index)
    first, second = _weighed(index, parts.first, total), _weighed(index, parts.second, total)
    lead = read[hits[0].slug]
    if _share(first, lead.keys) > 0 or not _share(second, lead.keys):
        return None  # the best hit names the first thing too (it may answer both), or neither
    asked = {key for word in query_words(parts.first + " " + parts.second) for key in _keys(word)}
    typed = parts.answer != "any" and _answers(parts.answer, lead.text, asked)
    best: tuple[float, int] | None = None
    for at, hit in enumerate(hits[1:], start=1):
        other = read.get(hit.slug)
        if other is None or (typed and not _answers(parts.answer, other.text, asked)):
            continue
        named = _share(first, other.keys)
        margin = named - _share(second, other.keys)
        if named >= NAMED and margin > 0 and (best is None or margin > best[0]):
            best = (margin, at)  # the one naming the first thing and least the second
    return None if best is None else best[1]


def _weighed(index: SearchIndex, part: str, total: int) -> list[tuple[frozenset[str], float]]:
    """A part's words: each as its keys (its forms) and its rarity in the store."""
    cap = max(int(total * LINKED), 2)  # a word more common weighs what one held by the cap does
    words = [word for word in query_words(part) if word not in _FUNCTION]
    return [(frozenset(_keys(word)), fusion.idf(hop.held(index, word, cap), total)) for word in words]


def _share(words: list[tuple[frozenset[str], float]], keys: frozenset[str]) -> float:
    """The rarity-weighed share of ``words`` a memory's ``keys`` hold."""
    whole = sum(weight for _, weight in words) or 1.0
    return sum(weight for word, weight in words if word & keys) / whole


def _link(index: SearchIndex, lead: Read, other: Read, total: int) -> float:
    """How two memories are linked: the rarity of the rarest word they share that no more than
    ``LINKED`` of the store holds (a name, a title, a place); 0 when they share none."""
    cap = max(int(total * LINKED), 2)
    shared = lead.keys & other.keys
    words = dict.fromkeys(word for word in query_words(lead.text) if _key(word) in shared)
    counts = [hop.held(index, word, cap) for word in words]
    return max((fusion.idf(count, total) for count in counts if count <= cap), default=0.0)


def _answers(answer: Answer, text: str, asked: set[str]) -> bool:
    """Whether ``text`` holds the kind of thing asked for (and not only what the question says)."""
    if answer == "amount":
        bare = _ISO.sub(" ", text)
        return bool(_AMOUNT.search(bare)) or bool(_NUMBERS & set(bare.lower().split()))
    if answer == "date":
        return bool(_ISO.search(text)) or bool(_MONTHS & set(re.findall(r"[a-z]+", text.lower())))
    if answer in ("name", "place"):
        names = (name.lower() for part in _SENTENCES.split(text) for name in _CAPITAL.findall(part.strip()))
        return any(_key(name) not in asked and name not in _MONTHS for name in names)
    return False


def _read(index: SearchIndex, slugs: list[str]) -> dict[str, Read]:
    """These memories' indexed text (name, description, the body's first ``timed.CAP``
    characters), each with its words' keys."""
    return {
        slug: Read(slug, text, frozenset(_key(word) for word in query_words(text)))
        for slug, text in timed.texts(index.db, slugs).items()
    }


def _total(index: SearchIndex) -> int:
    return len(index.matrix().slugs)


def _keys(word: str) -> list[str]:
    """A question word's keys: its own, and its other forms' when it is an irregular verb."""
    return [_key(word), *(_key(form) for form in forms.others(word))]


def _key(word: str) -> str:
    """A word's key: a plural's or a past's ending dropped, then the second hop's stem."""
    for ending in ("'s", "’s", "ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    return hop.stem(word)
