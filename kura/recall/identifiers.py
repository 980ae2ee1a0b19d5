"""An identifier in a question is one word, and the memories that hold it are evidence
whatever the meaning says.

"What happened in INC-231?", "What do I need --profile tally-payments for?", "Where is
payments.instant_payouts configured?": the search splits words at punctuation, so INC-231
was "inc" (eight incident memories) and "231" (three: a port, a count, the incident), and the
one memory that names the incident held nothing the others did not. The embedder does no
better: an id means nothing to it, and "payments.instant_payouts" sat twentieth by meaning.
People ask by ids in an engineering store all the time: tickets, flags, hosts, regions,
profiles, versions, paths.

So a token of the question that is written as an identifier (``IDENTIFIER``: parts joined by
``-``, ``.``, ``_``, ``/`` or ``:``, or letters and digits in one word: ``INC-231``,
``europe-west3``, ``k8s``, ``v5.2``) is looked up as the phrase of its parts, and when some
memory holds that phrase it stands for its parts in the question's words: the few memories
holding it are set apart from those that hold a part, and of those the ones that name it in
their name or description (the incident's own memory, not the two whose ``Related:`` line
links to ``[[inc-231-wal-disk-full]]``) when there are any. A phrase no memory holds leaves the
parts as they were (the user may have spelt it another way). And the words' lift for an
identifier is not held back by a low cosine (``fusion.near``): that gate keeps a common word
in an unrelated memory from passing the memory that means the question, but a memory
holding the exact id the question names is the one asked about however far its prose is.
For the same reason such a memory bears on the question below recall's floor, unless it is
far from it in meaning (``kura.recall.recall.WORDS_FLOOR``, as for a memory holding the
question's words). An id the store says everywhere ("v2" in half its memories) is a common
word (``common``), and ``found`` says which tokens are ids at all.

Measured on bench/recall_quality.py: see docs/recall.md ("An identifier is one word").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kura.recall import fusion
from kura.recall.word_rows import quote

if TYPE_CHECKING:
    import numpy as np

_JOINED = r"[^\W_]+(?:[-./:_][^\W_]+)+"  # parts joined by punctuation: INC-231, a.b_c, a/b
_MIXED = r"[^\W\d_]+\d[^\W_]*"  # letters, then a digit: k8s, v5, ec2 (not 10k, 3pm, 5th: amounts)
IDENTIFIER = re.compile(rf"(?<![\w-])(?:{_JOINED}|{_MIXED})(?![\w])")
_SURE = re.compile(r"\d|[./:_]")  # a digit or a join no English word has: not "follow-up"
_NAMED_HERE = re.compile(r"(?:--[\w-]+[ =]|[`'\"])$")  # "--profile X", "`X`": a name, whatever X is
_LETTERS = re.compile(r"[^\W\d_](?:[-./:_][^\W\d_])+")  # e.g., i.e., a.m., U.S., A/B: abbreviations
_JOINS = str.maketrans("", "", "-./:_")  # what is left of 2026-01-09 without them: digits
_PARTS = (re.compile(r"[^\W_]+"), re.compile(r"\w+"))  # as the index and the question's words split ids
MOST = 8  # identifiers looked up in one question: a pasted log line is not a question
LONGEST = 100  # characters: a longer run is a blob or a path dump, not a name asked for
FEW = 3  # a small store: an id this many memories hold is still rare (its own and two linking to it)
NAMED = "{name description} : "  # the memories that name an identifier in their headline


@dataclass(frozen=True, slots=True)
class Words:
    """A question's search words with their holders' rows, and which are sure identifiers."""

    words: list[str]
    rows: list[np.ndarray]
    exact: list[bool]


def found(question: str) -> list[str]:
    """The identifiers written in ``question``, lower-cased, once each, in order. Digits
    alone are none (3.5, 12:30, 2026-01-09: numbers, times and dates, which
    ``kura.recall.when`` reads), nor single letters joined ("e.g.", "a.m.": prose holds them
    everywhere), and nor is a word joined by hyphens alone ("drop-offs", "one-bed") unless it
    stands where only a name does: quoted, or after a command-line option ("--profile
    tally-payments")."""
    seen: dict[str, None] = {}
    for match in IDENTIFIER.finditer(question):
        ident = match.group().lower()
        if len(ident) > LONGEST or ident.translate(_JOINS).isdigit() or _LETTERS.fullmatch(ident):
            continue
        if _SURE.search(ident) or _NAMED_HERE.search(
            question, max(match.start() - LONGEST, 0), match.start()
        ):
            seen.setdefault(ident, None)
            if len(seen) == MOST:
                break
    return list(seen)


Lookup = Callable[[list[str]], list["np.ndarray"]]  # FTS5 queries -> the rows matching each


def join(
    question: str, words: Sequence[str], rows: Sequence[np.ndarray], lookup: Lookup, total: int
) -> Words:
    """``words`` and their ``rows`` with each identifier of ``question`` that some memory holds,
    and not a common word of the store's ``total`` memories (``common``), in place of its
    parts. ``lookup`` (``WordRows.rows``) reads an FTS5 query: a literal of several parts is
    a phrase."""
    idents = found(question)
    if not idents:
        return Words(list(words), list(rows), [False] * len(words))
    every = lookup([quote(ident) for ident in idents] + [NAMED + quote(ident) for ident in idents])
    anywhere, named = every[: len(idents)], every[len(idents) :]
    each = zip(idents, anywhere, named, strict=True)
    held = {ident: n if len(n) else a for ident, a, n in each if len(a) and not common(len(a), total)}
    if not held:
        return Words(list(words), list(rows), [False] * len(words))
    replaced = {part for ident in held for parts in _PARTS for part in parts.findall(ident)}
    left = IDENTIFIER.sub(" ", question.lower())  # a part the question also says on its own stays
    alone = {part for part in replaced if re.search(rf"(?<![^\W_]){re.escape(part)}(?![^\W_])", left)}
    pairs = zip(words, rows, strict=True)
    kept = [(word, ids) for word, ids in pairs if word not in replaced or word in alone]
    added = [(ident, ids) for ident, ids in held.items() if ident not in dict(kept)]
    return Words(
        [word for word, _ in kept + added],
        [ids for _, ids in kept + added],
        [False] * len(kept) + [True] * len(added),
    )


def common(held: int, total: int) -> bool:
    """Whether an id ``held`` by that many of ``total`` memories is a common word of the store
    ("v2" where half the memories say it): held by more than a rare word may be, and by more
    than ``FEW``. Its few memories that name it in their headline are then no sign of what
    is asked, and would rise, and bear, on any question saying it."""
    return fusion.idf(held, total) < min(fusion.rare_above(total), fusion.idf(FEW, total))


def naming(said: Words, holders: Sequence[np.ndarray], total: int) -> list[bool]:
    """Per memory (``holders``: ``said``'s rows as matrix rows, of ``total``): whether it holds
    a rare identifier the question names, and so bears on it below the floor unless far from
    it in meaning (``kura.recall.recall._bears``)."""
    import numpy as np

    out = np.zeros(total, dtype=bool)
    for rows, sure in zip(holders, said.exact, strict=True):
        if sure and fusion.idf(len(rows), total) > fusion.rare_above(total):  # a rare one: evidence
            out[rows] = True
    return out.tolist()
