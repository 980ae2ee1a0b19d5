"""A question's parts read with plain rules: what it asks, and what it says to point at it.

"What did the vet take out?" asks one thing. "The greyhound Nadia adopted: what did the vet
take out?" asks the same and *describes* the dog, so two memories answer it: the adoption (the
bridge: the memory the question describes) and the vet's visit (the answer). English marks the
two apart, as HotpotQA's "bridge" questions do, and the marks are few:

- the **head**, the wh-word's own clause ("What was the name of the spaniel"), names what is
  asked; a **modifier** describes something in it: a relative clause after *where / who / whom
  / whose / which / that* ("the city where her sister got married"), a bare one ("the song Mr
  Ferris danced to": a noun, then a name or a pronoun, then a verb), a topic before a colon
  ("The greyhound Nadia adopted: …") or an ``of`` phrase naming someone's thing ("the hero of
  Priya's book");
- a **comparison** ("slower in the half than in his first 10k") or a **list** ("the harbour and
  the rooftops", "…, and what happened to it") names two things, the first asked first.

What the answer is (``Answer``) is read from the wh-word too: "how much" wants an amount,
"when" a date, "what was the name" or "who" a name, "where" or "which place" a place.

One line, no model: a question these rules do not read as English with two parts is ``None``,
and so is a prompt or a task of several sentences (a host's prompt hook recalls with one),
and nothing downstream changes (``kura.recall.headed`` reorders only what parses). Words of
another language never parse: none of them is an English wh-word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kura.recall import forms

Answer = Literal["amount", "date", "name", "place", "any"]
Kind = Literal["modifier", "list"]

LONGEST = 40  # a longer question is a prompt or a task, not one line these rules read
_SENTENCE = re.compile(r"[.!?]\s+\S")  # a sentence ends before the question does
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?|[£$€%]|[:,;?!.]")
_WH = frozenset("what which who whom whose where when why how".split())
_RELATIVE = frozenset("where who whom whose which that".split())
_PRONOUNS = frozenset("he she they we i you".split())
_DETERMINERS = frozenset("the a an his her their my our your its this".split())
_PREPOSITIONS = frozenset("in at on for with from to of by during about after before into".split())
# "that" after these opens what was said, not a relative clause ("did Sam say that …")
_SAYING = frozenset(
    "say said says think thought know knew believe believed hope hoped mean meant feel felt tell "
    "told decide decided agree agreed suggest suggested mention mentioned realise realised "
    "realize realized claim claimed so such now".split()
)
_JOINS = frozenset(
    "and or but not than as while once because since until unless if though although whether then".split()
)
_NOT_VERBS = _PREPOSITIONS | _DETERMINERS | _JOINS
_AUXILIARIES = frozenset(
    "is was are were am be been did does do has have had can could will would shall should may might must "
    "'s ’s".split()
)
_COMPARED = frozenset("more less rather other fewer".split())  # "more than 3": no comparison of two
_AMOUNT = ("how much", "how many", "how long", "how far", "how old", "how often")
_DATE = ("when ", "what date", "which date", "what day", "which day", "what year", "which year", "what time")
_PLACE = ("where ", "which place", "which city", "which town", "which country", "what place", "what city")
_NAME = ("the name of", "what was the name", "what is the name", " called", "who ", "whose ", "whom ")


@dataclass(frozen=True, slots=True)
class Clauses:
    """A question read as two parts: ``first`` is what is asked (the head, or the first of
    two things named), ``second`` what points at it (the modifier, or the second thing)."""

    kind: Kind
    first: str
    second: str
    answer: Answer


def parse(question: str) -> Clauses | None:
    """``question``'s two parts, or ``None`` when it has one (or is not English these rules read)."""
    if "\n" in question.strip() or _SENTENCE.search(question):
        return None  # a prompt or a task, not one question: its parts are not these
    tokens = _TOKEN.findall(question.strip())
    lowered = [token.lower() for token in tokens]
    if not tokens or len(tokens) > LONGEST or not (_WH & set(lowered)):
        return None
    for rule in (_colon, _two_questions, _comparison, _relative, _bare, _possessive_of, _listed):
        found = rule(tokens, lowered)
        if found is not None:
            kind, first, second = found
            if not (_words(first) and _words(second)):
                return None
            # the answer's kind is the asking part's ("What did she paint in the city where …"
            # asks for no place); a thing named in a list or a comparison has no wh-word
            asking = first if _WH & {token.lower() for token in first} else tokens
            return Clauses(kind, " ".join(first), " ".join(second), answer_of(" ".join(asking)))
    return None


def answer_of(question: str) -> Answer:
    """What kind of thing the answer is, read from the wh-word and its noun."""
    text = " " + " ".join(_TOKEN.findall(question.lower())) + " "
    for kind, marks in (("amount", _AMOUNT), ("date", _DATE), ("place", _PLACE), ("name", _NAME)):
        if any(" " + mark in text for mark in marks):
            return kind  # type: ignore[return-value]  # the loop's literals are Answer's
    return "any"


_Parts = tuple[Kind, list[str], list[str]] | None


def _colon(tokens: list[str], lowered: list[str]) -> _Parts:
    """A topic before a colon is the modifier ("The greyhound Nadia adopted: what did the vet …")."""
    if ":" not in tokens:
        return None
    at = tokens.index(":")
    if _WH & set(lowered[:at]) or not (_WH & set(lowered[at + 1 :])):
        return None
    return "modifier", _clause(tokens[at + 1 :]), _clause(tokens[:at])


def _two_questions(tokens: list[str], lowered: list[str]) -> _Parts:
    """Two questions in one ("Whose tent did Owen take, and what happened to it?"), the first first."""
    for at in range(1, len(tokens) - 1):
        if lowered[at] == "and" and lowered[at + 1] in _WH:  # ", and what …" or "… and when …"
            return "list", _clause(tokens[:at]), _clause(tokens[at + 1 :])
    return None


def _comparison(tokens: list[str], lowered: list[str]) -> _Parts:
    """A comparison ("… in the half marathon than in his first 10k"): the thing before ``than`` first."""
    if "than" not in lowered:
        return None
    at = lowered.index("than")
    if at == 0 or at + 1 >= len(tokens) or lowered[at - 1] in _COMPARED:
        return None
    start = _phrase(lowered, at, lowered[at + 1])
    if start < 0:
        return None
    return "list", _clause(tokens[start:at]), _clause(tokens[at + 1 :])


def _relative(tokens: list[str], lowered: list[str]) -> _Parts:
    """A relative clause ("the city where her sister got married") describes: it is the modifier."""
    opened = _opening(lowered)
    for at in range(opened + 2, len(tokens) - 1):
        word, before, after = lowered[at], lowered[at - 1], lowered[at + 1]
        if word not in _RELATIVE or not _noun(tokens[at - 1]) or _verb(tokens[at - 1]):
            continue  # "the city where …", not "go where …"
        if word == "that" and (before in _SAYING or not _opens_clause(tokens[at + 1], after)):
            continue
        if not _predicate(tokens, lowered, opened, at):
            return None  # "Which branch that we merged broke the build?": the clause holds the verb
        return "modifier", _clause(tokens[:at]), _clause(tokens[at + 1 :])
    return None


def _bare(tokens: list[str], lowered: list[str]) -> _Parts:
    """A bare relative clause ("the spaniel Nadia was commissioned to paint", "the caddy
    service Sam restarted"): a noun or two after a determiner, a name or a pronoun, a verb."""
    for start in range(_opening(lowered) + 1, len(tokens) - 2):
        if lowered[start - 1] not in _DETERMINERS:
            continue
        at = start
        while at < len(tokens) - 1 and _noun(tokens[at]) and at - start < 2:
            end = at + 1
            while end < len(tokens) and _name(tokens[end], lowered[end]):
                end += 1
            if end > at + 1 and end < len(tokens) and _verb(tokens[end]):
                if not _predicate(tokens, lowered, _opening(lowered), at + 1):
                    return None
                return "modifier", _clause(tokens[: at + 1]), _clause(tokens[at + 1 :])
            at += 1
    return None


def _possessive_of(tokens: list[str], lowered: list[str]) -> _Parts:
    """Someone's thing named to point at another ("the hero of Priya's children's book")."""
    for at in range(_opening(lowered) + 2, len(tokens) - 1):
        if lowered[at] != "of" or lowered[at - 2] not in _DETERMINERS:  # "the hero of", not "think of"
            continue
        if tokens[at + 1][:1].isupper() and lowered[at + 1].endswith(("'s", "’s")):
            return "modifier", _clause(tokens[:at]), _clause(tokens[at + 1 :])
    return None


def _listed(tokens: list[str], lowered: list[str]) -> _Parts:
    """Two things named ("for the harbour and the Sofia rooftops paintings"), the first first."""
    if "and" not in lowered:
        return None
    at = lowered.index("and")
    start = _phrase(lowered, at, lowered[at + 1] if at + 1 < len(tokens) else "")
    ends = (i for i in range(at + 1, len(tokens)) if lowered[i] in _PREPOSITIONS or not tokens[i].isalnum())
    if start < 0 or start == at:
        return None
    return "list", _clause(tokens[start:at]), _clause(tokens[at + 1 : next(ends, None)])


def _phrase(lowered: list[str], at: int, opens: str) -> int:
    """Where the first of two things named starts, the second opening with ``opens`` after
    word ``at``: after the same preposition ("in the half … than in his first 10k"), else at
    the nearest determiner ("the fridge and the oven", "the parcel to Oslo than the one …"),
    else after the nearest preposition; -1 when none is found (no phrase to compare)."""
    before = range(at - 1, -1, -1)
    if opens in _PREPOSITIONS:
        same = next((i for i in before if lowered[i] == opens), None)
        if same is not None:
            return same + 1
    determiner = next((i for i in before if lowered[i] in _DETERMINERS), None)
    plain = determiner is not None and not any(lowered[i] in _PREPOSITIONS for i in range(determiner + 1, at))
    if determiner is not None and (plain or opens in _DETERMINERS):  # "the parcel to Oslo than the one …"
        return determiner
    return next((i + 1 for i in before if lowered[i] in _PREPOSITIONS), -1)


def _predicate(tokens: list[str], lowered: list[str], opened: int, at: int) -> bool:
    """Whether the head (from the wh-word to word ``at``) has a verb of its own ("What *did*
    Nadia paint in the city …", "Which place *is* the song …"): without one, what follows
    the clause is the question's own predicate, and the clause is not a mere modifier."""
    return any(
        lowered[i] in _AUXILIARIES or _verb(tokens[i]) for i in range(opened + 1, at) if lowered[i] not in _WH
    )


def _opening(lowered: list[str]) -> int:
    """Where the question's own clause starts: its first wh-word (0 when there is none)."""
    return next((i for i, word in enumerate(lowered) if word in _WH), 0)


def _opens_clause(token: str, lowered: str) -> bool:
    """Whether ``that`` followed by this word is a relative clause ("the cake that she baked")."""
    return lowered in _PRONOUNS or lowered in _DETERMINERS or (token[:1].isupper() and lowered != "i")


def _noun(token: str) -> bool:
    return token.isalpha() and token.islower() and token not in _NOT_VERBS and token not in _WH


def _name(token: str, lowered: str) -> bool:
    """A name (a capitalised word, possibly "Mr") or a subject pronoun, as a bare clause opens."""
    return lowered in _PRONOUNS or (token[:1].isupper() and token.isalpha())


def _verb(token: str) -> bool:
    """Roughly a verb in the past or the third person: "adopted", "gave", "was", "plays" (not
    "the school Halloween competition", "the guest Wi-Fi password")."""
    if not (token.isalpha() and token.islower()) or token in _NOT_VERBS:
        return False
    return (
        token in forms.FORMS
        or token.endswith("ed")
        or (token.endswith("s") and not token.endswith(("ss", "us")))
    )


def _clause(tokens: list[str]) -> list[str]:
    return [token for token in tokens if token not in {":", ",", ";", "?", "!", "."}]


def _words(tokens: list[str]) -> list[str]:
    """The content words of a part: not a wh-word, determiner or preposition."""
    return [t for t in tokens if t.lower() not in _WH | _NOT_VERBS and len(t) > 1]
