"""Recognition triggers: an index line squeezed to a few tokens without losing what
makes it recognisable.

A trigger is not a summary. What lets a model recognise that a memory bears on a question
is its proper nouns, its numbers with their units, its identifiers (paths, commands,
ticket ids), its ⚠️ landmines, its negations ("never", "not") and the conclusion it
reached — so the mechanical trimmer keeps those and drops the glue words first, keeping
the words in their original order and never cutting a word in half. It never returns an
empty line: a memory the map shows as blank is a memory that seems not to exist.

A model may write the trigger instead, but a model can add what the line never said.
``grounded`` rejects a trigger that brings in numbers, names or negations the source line
does not contain; the weave then falls back to the trimmer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kura.text import scripts
from kura.text.tokens import estimate_tokens, quarters

VERSION = 3  # part of every trigger's cache key: bump when the same line trims differently

STOP_WORDS = frozenset(
    "a an the of to is are was were be been being that which who whom this these those for with "
    "on in at by from as it its into onto than then there their they we our you your he she his "
    "her them also just very really so such some any all each both about over under after before "
    "while when where what how why can could should would will shall may might must do does did "
    "has have had and or but if because up down out off again further once here only own same too".split()
)
_NEGATION = frozenset("never not no none nothing nobody nowhere neither nor cannot without avoid".split())
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion dozen half twice double triple first second third".split()
)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_CLAUSE = re.compile(r"(?:;|—|–|→|=>|:\s)")
_NUMBER = re.compile(r"\d")
_PLAIN_NUMBER = re.compile(r"\(?[~≈<>]?\d+(?:[.,]\d+)*")
_IDENT = re.compile(r"[_/`=@#]|\w[.\-:]\w|[a-z][A-Z]|^[A-Z0-9]{2,}\W*$")
_WORD = re.compile(r"[\w'’]+", re.UNICODE)
_PLAIN_UNIT = re.compile(r"\S+")
_UNIT = re.compile(r"\S*\[[^\]]*\]\([^)]*\)\S*|\S*`[^`]*`\S*|\S+")  # links and code spans whole
_SEPARATORS = re.compile(r"([;,:—–])(?:\s*[;,:—–])+")
_CJK_CLAUSE = re.compile(r"[^。、，；：！？]+[。、，；：！？]*")


def mechanical(line: str, budget: int) -> str:
    """``line`` trimmed to about ``budget`` tokens, keeping the recognisable words."""
    text = " ".join(line.split())
    if estimate_tokens(text) <= budget or not text:
        return text
    words, glued = _units(text)
    conclusion = _conclusion_start(words)
    scores = [
        _score(word, before, i >= conclusion)
        for i, (word, before) in enumerate(zip(words, [None, *words[:-1]], strict=True))
    ]
    keep: set[int] = set()
    used = 0  # what the kept words cost, in quarter tokens; joining can only make the text shorter
    floor = 0
    low = 2  # the least score still worth a word: max(floor, 2)
    space = 0  # a kept word costs a space more once one is kept
    plain = text.isascii()  # then a word costs its length
    # by score, highest first; among equal scores in line order (the sort is stable)
    for i in sorted(range(len(words)), key=scores.__getitem__, reverse=True):
        score = scores[i]
        if score < low:
            break
        word = words[i]
        cost = (len(word) if plain else quarters(word)) + space
        if score >= 100 or (used + cost + 3) // 4 <= budget:
            keep.add(i)
            used, space = used + cost, 1
        elif not floor:
            floor = score  # finish this tier with shorter words, then stop
            low = max(floor, 2) + (i in glued or i + 1 in glued)  # a Japanese phrase: keep a run, no pick
    return _join(words, keep or {0}, glued) or text


def _units(text: str) -> tuple[list[str], frozenset[int]]:
    """Words, with a `code span` kept whole and long CJK runs split at their own
    punctuation, then a long clause into its phrases (``_phrases``); and which units were
    glued to the one before them (no space between: pieces of one CJK run)."""
    if "`" not in text and "](" not in text and text.isascii():
        return text.split(" "), frozenset()  # ``text`` is single-spaced: these are the ``\S+`` runs
    units: list[str] = []
    glued: set[int] = set()
    for match in (_UNIT if "](" in text or "`" in text else _PLAIN_UNIT).finditer(text):
        unit = match.group(0)
        if "`" in unit or "](" in unit or len(unit) <= 12 or unit.isascii():
            units.append(unit)
            continue
        pieces = [piece for part in _CJK_CLAUSE.findall(unit) if part for piece in _phrases(part)]
        glued.update(range(len(units) + 1, len(units) + len(pieces)))
        units += pieces
    return units, frozenset(glued)


def _phrases(clause: str) -> list[str]:
    """A long Japanese clause cut where a new phrase starts: a word in kanji, katakana or
    Latin letters after hiragana or after another script, its particles and punctuation
    kept with it (本番 / データベースの / バックアップは / 毎晩二時に / 取り、). Chinese, with no
    particles to cut after, stays whole."""
    if len(clause) <= 12:
        return [clause]
    out, start = [], 0
    for i in range(1, len(clause)):
        before, kind = _kind(clause[i - 1]), _kind(clause[i])
        if kind not in ("hira", "punct") and before != kind:
            out.append(clause[start:i])
            start = i
    return [*out, clause[start:]]


def _kind(char: str) -> str:
    if char.isascii():
        return "ascii"
    return scripts.script(char) or ("punct" if not char.isalnum() else "other")


def grounded(trigger: str, source: str) -> str | None:
    """None when ``trigger`` says nothing ``source`` does not; else what it added: a
    number (in digits or words), a name (any word with a capital letter), or a negation."""
    if not trigger.strip():
        return "the trigger is empty"
    trigger, source = trigger.replace("’", "'"), source.replace("’", "'")
    source_words = {w.lower() for w in _WORD.findall(source)}
    source_numbers = set(_DIGITS.findall(source))
    for number in _DIGITS.findall(trigger):
        if number not in source_numbers:
            return f"adds the number {number}"
    for word in _WORD.findall(trigger):
        lower = word.lower()
        if lower in source_words:
            continue
        if lower in _NEGATION or lower.endswith("n't"):
            return f"adds the negation {word!r}"
        if lower in _NUMBER_WORDS:
            return f"adds the number {word!r}"
        if any(char.isupper() for char in word):
            return f"adds the name {word!r}"
    return None


def _conclusion_start(words: list[str]) -> int:
    """Index of the first word of the last clause (the conclusion), or len(words)."""
    for i in range(len(words) - 2, -1, -1):  # the last clause ends nearest the end: look from there
        word = words[i]
        if _CLAUSE.search(word + " ") or word in ("—", "–", "→"):
            return i + 1
    return len(words)


@lru_cache(maxsize=1 << 16)
def _score(word: str, before: str | None, in_conclusion: bool) -> int:
    """How much ``word`` (after ``before``, None for the first word) makes its line
    recognisable. Asked once per (word, word before it): a cold weave of a big store trims
    thousands of lines written in the same few thousand words."""
    bare = word.strip(".,;:!?()[]\"'").lower()
    if "⚠" in word:
        return 100
    if bare in _NEGATION:
        return 9
    if _NUMBER.search(word):
        return 8
    if before is not None and _PLAIN_NUMBER.fullmatch(before) and bare.isalpha() and bare not in STOP_WORDS:
        return 7  # a unit after a number: "8 TB", "3 min"
    if _IDENT.search(word.strip(".,;:()")):
        return 7
    if word[:1].isupper() and before is not None and not before.endswith((".", "!", "?")):
        return 6
    if bare in STOP_WORDS or not bare or (not bare.isascii() and bare in scripts.STOP):  # в, für, está
        return 0 + (1 if in_conclusion else 0)
    return 3 + (2 if in_conclusion else 0) + (1 if word[:1].isupper() else 0)


def _join(words: list[str], keep: set[int], glued: frozenset[int] = frozenset()) -> str:
    """The kept words with a space between each two, as the line had (none before a piece
    ``glued`` to a CJK run): a word the line began with punctuation (``.env``, ``.github/``)
    stays a word of its own. A run of separators left behind by dropped words becomes its
    first, still followed by a space."""
    kept = sorted(keep)
    text = "".join(("" if n == 0 or i in glued else " ") + words[i] for n, i in enumerate(kept))
    text = _SEPARATORS.sub(lambda run: run.group(1) + (" " if " " in run.group(0) else ""), text)
    return " ".join(_balance(text).split()).strip(" ,;:—–")


def _balance(text: str) -> str:
    """Drop only the brackets the cut left unpaired (a whole ``[link](x.md)`` survives),
    and the backticks too when an odd number would open a code span that never ends."""
    odd_ticks = text.count("`") % 2
    if not odd_ticks and text.count("(") == text.count(")") and text.count("[") == text.count("]"):
        return text
    drop: set[int] = set()
    stack: list[tuple[str, int]] = []
    pairs = {")": "(", "]": "["}
    for i, char in enumerate(text):
        if char in "([":
            stack.append((char, i))
        elif char in ")]":
            if stack and stack[-1][0] == pairs[char]:
                stack.pop()
            else:
                drop.add(i)
    drop.update(i for _, i in stack)
    if odd_ticks:
        drop.update(i for i, char in enumerate(text) if char == "`")
    return "".join(char for i, char in enumerate(text) if i not in drop)
