"""Novelty: is a kept candidate new, already covered by a memory, or an extension of one?

A distiller that stages every restatement buries the scribe (and then the store) in
duplicates, so each kept candidate is compared with the memories it most resembles. The
neighbours are found by content words, not embeddings: a rewording and a replacement of a
fact sit equally close in embedding space, while what tells them apart — the words that
changed — is exactly what a word comparison sees.

- **Mechanically** (always, no model): a candidate whose statement has three or more
  content words, nearly all of them (90%) in one memory, and the same polarity (a "never"
  against an "always" is a correction, not a repeat) is *covered* by that memory.
- **A recurring scar** is covered by the memory that records the same scar: its failing
  call and its working call, each whole as a code span or a quotation, and the failure it
  read, verbatim. Word shares cannot judge these: a fix such as ``ls tests/fixtures`` has
  two content words, so without this every recurrence became a new memory, while the
  calls themselves are exact. All three must match: the same two calls in the other roles
  (``b`` works where ``a`` failed) is a different lesson — the one failure line tells
  which call failed — and ``make check`` is not ``make check-all``.
- **With a brain model**: the model sees the candidate and its nearest memories and answers
  new, covered (by which) or extends (which) — adding a detail to a memory that exists.
  A slug outside the shortlist, silence or nonsense reads as "new": staging a duplicate
  costs the scribe one toss, dropping a new fact loses it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kura.distill.candidate import Candidate
from kura.distill.rules import MIN_CHARS, command_of
from kura.llm import Usage, complete, last_json_object, with_charter
from kura.text.claim_match import negated, words
from kura.text.secrets import redact
from kura.transcripts.segments import normalise

if TYPE_CHECKING:
    from kura.config import ModelConfig

NEIGHBOURS = 5
COVERED_SHARE = 0.9
MIN_WORDS = 3

_INSTRUCTIONS = """\
You decide whether a candidate memory is new to a store. You see the candidate and the \
store's memories that resemble it most.

- "covered": one memory already says the same thing (a rewording, or less than it says).
- "extends": one memory is about the same thing and the candidate adds a detail to it \
without contradicting it.
- "new": anything else, including a candidate that contradicts or replaces a memory.

Answer with one JSON object and nothing after it:
{"novelty": "new|covered|extends", "slug": "the memory's slug (covered, extends)", "reason": "a few words"}"""


@dataclass(frozen=True, slots=True)
class Neighbour:
    slug: str
    title: str
    text: str  # description and body
    share: float  # of the candidate's content words found in this memory


Judged = Literal["new", "covered", "extends"]  # a candidate against the memories near it


@dataclass(frozen=True, slots=True)
class Novelty:
    verdict: Judged
    slug: str = ""
    reason: str = ""


def statement(candidate: Candidate) -> str:
    """What the candidate claims: its topic and what the person said."""
    return f"{candidate.get('topic') or ''} {candidate.get('said') or ''}".strip()


def neighbours(candidate: Candidate, memories: Iterable[tuple[str, str, str]]) -> list[Neighbour]:
    """The memories (slug, title, text) sharing the most content words with the candidate,
    a memory recording the same scar first whatever its share."""
    return _nearest(statement(candidate), memories, lambda text: same_scar(candidate, text))


def covers(claim: str, memories: Iterable[tuple[str, str, str]]) -> Novelty:
    """The mechanical check for a ``claim`` no spotter proposed (a poured draft's title and
    description): covered when one memory holds nearly every content word of it."""
    return _by_words(claim, _nearest(claim, memories, lambda _: False))


def _nearest(
    said: str, memories: Iterable[tuple[str, str, str]], scar: Callable[[str], bool]
) -> list[Neighbour]:
    mine = words(said)
    scored = []
    for slug, title, text in memories:
        share = len(mine & words(f"{title} {text}")) / len(mine) if mine else 0.0
        same = scar(text)
        if share > 0 or same:
            scored.append((not same, Neighbour(slug, title, text, share)))
    scored.sort(key=lambda pair: (pair[0], -pair[1].share, pair[1].slug))
    return [n for _, n in scored[:NEIGHBOURS]]


def same_scar(candidate: Candidate, text: str) -> bool:
    """Whether memory ``text`` records the scar ``candidate`` is (see the module docstring)."""
    if candidate.get("rule") != "scar":
        return False
    folded = normalise(text)
    failure = normalise(redact(str(candidate.get("failed") or ""))[0])
    if len(failure) < MIN_CHARS or failure not in folded:
        return False
    calls = [normalise(redact(command_of(str(candidate.get(k) or "")))[0]) for k in ("failed_call", "fixed")]
    return all(call and _spanned(call, folded) for call in calls)


def _spanned(call: str, text: str) -> bool:
    """``call`` whole in ``text``: between backticks or quotation marks, not part of a longer call."""
    return re.search(rf"(?<=[`\"\u201c\u00ab]){re.escape(call)}(?=[`\"\u201d\u00bb])", text) is not None


def mechanical(candidate: Candidate, near: Sequence[Neighbour]) -> Novelty:
    """Covered when one memory records the same scar, or holds nearly every content word
    with the same polarity."""
    for neighbour in near:
        if same_scar(candidate, neighbour.text):
            return Novelty("covered", neighbour.slug, "it records the same failing call, failure and fix")
    return _by_words(statement(candidate), near)


def _by_words(said: str, near: Sequence[Neighbour]) -> Novelty:
    if len(words(said)) < MIN_WORDS:
        return Novelty("new")
    for neighbour in near:
        if neighbour.share >= COVERED_SHARE and negated(said) == negated(neighbour.text):
            return Novelty("covered", neighbour.slug, "its content words are all in the memory")
    return Novelty("new")


def ask_novelty(
    model: ModelConfig,
    charter: str,
    candidate: Candidate,
    near: Sequence[Neighbour],
    *,
    usage: Usage | None = None,
) -> Novelty | None:
    """The brain's novelty verdict; None when the model gave no answer at all."""
    if not near:
        return Novelty("new")
    shown = {
        "candidate": {k: candidate.get(k) for k in ("topic", "kind", "why") if candidate.get(k)},
        "quotes": [str(q) for q in candidate.get("quotes") or []][:6],
        "memories": [{"slug": n.slug, "title": n.title, "text": n.text[:800]} for n in near],
    }
    user = json.dumps(shown, ensure_ascii=False, indent=1)
    reply = complete(model, with_charter(charter, _INSTRUCTIONS), user, max_tokens=400, usage=usage)
    if reply is None:
        return None
    found = last_json_object(reply, "novelty")
    said = str(found.get("novelty", "")).strip().lower() if found else ""
    slug = str(found.get("slug") or "") if found else ""
    verdict: Judged | None = "covered" if said == "covered" else "extends" if said == "extends" else None
    if verdict is not None and slug in {n.slug for n in near}:
        return Novelty(verdict, slug, str(found.get("reason") or "")[:200] if found else "")
    return Novelty("new")
