"""A contradiction is a correction: a user turn that disagrees with a live memory.

The rule-based spotter knows corrections by their opening ("no, …", "actually …"), but a
person who says "we run the tests with make test now" while the store holds "… cargo test"
is correcting it too, with no marker any word list would catch. So every USER sentence is
compared with the live memories' claims (``kura.text.claim_match``: content words, not embeddings);
a sentence that revises one — same subject, new value — becomes a correction candidate
that names the memory it replaces. Pouring it supersedes that memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from kura.distill.candidate import Candidate
from kura.distill.rules import MIN_CHARS, QUOTE_CHARS, cut, not_kept
from kura.text.claim_match import revised
from kura.text.moves import moved
from kura.text.sentences import sentences
from kura.transcripts.segments import Segment


def disagreements(segments: Sequence[Segment], live: Sequence[tuple[str, str, str]]) -> list[Candidate]:
    """Correction candidates from USER sentences that revise a live memory, given as
    (slug, its claim: title and description, its type)."""
    claims = [(slug, claim) for slug, claim, _ in live]
    kinds = {slug: kind for slug, _, kind in live}
    found: list[Candidate] = []
    for segment in segments:
        if segment.cls != "USER":
            continue
        for said in sentences(segment.text):
            sentence = cut(said, QUOTE_CHARS)
            if len(sentence) < MIN_CHARS or sentence.endswith("?") or not_kept(sentence):
                continue  # "forget that X" names X to drop it, never to revise it
            old = revised(sentence, claims) or moved(sentence, claims)
            if old is None:
                continue
            found.append(Candidate(topic=sentence.rstrip("."), kind=kinds.get(old) or "project",
                                   why=f"it revises {old}", quotes=[f"[USER] {sentence}"], rule="correction",
                                   said=sentence, replaces=old))  # fmt: skip
    return found
