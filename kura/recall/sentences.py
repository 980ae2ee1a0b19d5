"""A memory's first sentences, each embedded on its own beside the whole memory's vector.

The whole memory's vector (name, description, body) is an average of everything it says,
and its headline's (``kura.recall.headline``) is the average of what it is about. A
question in other words often matches one thing the memory says: "If someone slips on our
shop floor and sues, are we protected?" is one sentence of the insurance memory ("A
customer injury claim without cover could close the business"), diluted in the whole by
the insurer, the sums insured, the policy number and its renewal date. A sentence on its
own is nearer that question than the whole is, so a memory's cosine is lifted towards its
best sentence's when that is higher, never lowered, as it is towards its headline's
(``headline.lift``: ``cosine + LIFT × max(best sentence − cosine, 0)``).

What counts as a sentence of a body: its markdown marks removed, lines that only link
(``Related: [[a]], [[b]]``) and the bold labels that open a line (``**Why:**``, ``**How to
apply:**``) left out (they say the same in every memory of a store and nothing about this
one), a wrapped line joined to its paragraph, then cut at a paragraph or list item, after
``.``/``!``/``?`` before a capital, or after a full-width ``。！？``. A sentence of fewer than
``WORDS`` words is none, and one the description says whole is left out (the headline has
it). A memory with at least ``LEAST`` others has the vectors of its first ``FIRST``, each cut
at about ``TOKENS`` tokens; one with fewer is barely diluted (distill-kura's description, Why
and How to apply; a chat's one observation) and has none, so its store pays nothing for them.

Measured on bench/recall_quality.py, MRR over every answerable question, before → after,
LIFT and LEAST chosen on the A halves of the bakery and padded sets (docs/recall.md has the
table and what was tried): bakery 0.915 → 0.928, its paraphrases 0.848 → 0.871; with 2,000
distractors 0.746 → 0.755; the team set, blind to the rule, 0.773 → 0.775 and 0.703 → 0.707
with distractors; the chat sets (no memory of three sentences) unchanged. Recall's floor
does not read the lift: read, the bakery refused 19 of its 30 unrelated questions, not 21.
"""

from __future__ import annotations

import re

from kura.text import scripts

LIFT = 0.25  # how far a memory's cosine moves towards its best sentence's, when that is higher
FIRST = 3  # sentences of a body embedded, from its start
LEAST = 3  # ... when it has at least this many beyond its description (fewer: barely diluted)
WORDS = 3  # a sentence of fewer words is no sentence (a heading's label, "See below.")
TOKENS = 32  # a sentence is cut after about this many tokens

# within one line, never ``\s`` across lines: ``^\s*`` took 24 s over 64k blank lines
_LINKS = re.compile(r"(?m)^[^\n\[]{0,30}(?:\[\[[^\]\n]+\]\][,; \t]*(?:and[ \t]+)?)+$")
_LABEL = re.compile(r"(?m)^[ \t]*(?:\*\*|__)[^*_\n]{1,40}:(?:\*\*|__)[ \t]*")
_MARKS = re.compile(r"\*\*|__|\[\[|\]\]|`")
_SOFT = re.compile(r"(?<!\n)\n(?!\n|[ \t]*(?:[-*+>#|]|\d+[.)])[ \t])")  # a line wrapped in its paragraph
_CUT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-ZÀ-ÖØ-ÞА-ЯΑ-Ω])|(?<=[。！？])|\n+")


def of(body: str, description: str = "") -> list[str]:
    """The sentences of ``body`` (a memory's markdown, frontmatter excluded) that are
    embedded on their own: its first ``FIRST`` that ``description`` does not say whole (the
    headline has those), and none unless it has at least ``LEAST`` such."""
    plain = _MARKS.sub("", _SOFT.sub(" ", _LABEL.sub("\n\n", _LINKS.sub("", body))))
    told = _squash(description)
    said: list[str] = []
    for piece in _CUT.split(plain):
        piece = " ".join(piece.split()).lstrip("#>-*+ ").strip()
        if _words(piece) >= WORDS and _squash(piece) not in told:
            said.append(piece)
            if len(said) == max(FIRST, LEAST):
                break
    return [cut(piece, TOKENS) for piece in said[:FIRST]] if len(said) >= LEAST else []


def _squash(text: str) -> str:
    return " ".join(text.split()).rstrip(".!?。！？ ").lower()


def _words(piece: str) -> int:
    """Words in ``piece``; in Chinese or Japanese, where none are spaced, two characters one."""
    spaced = len(piece.split())
    return max(spaced, len(piece) // 2) if scripts.has_cjk(piece) else spaced


def cut(text: str, tokens: int) -> str:
    """``text`` cut after about ``tokens`` tokens: a CJK character is about one, four other
    characters about one (a long text of mixed Japanese and English would otherwise cost as
    much as a body)."""
    units = 0.0
    for at, char in enumerate(text):
        units += 1.0 if scripts.has_cjk(char) else 0.25
        if units > tokens:
            return text[:at]
    return text
