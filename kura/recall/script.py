"""Whether the embedder can read a question: the built-in model reads English only.

all-MiniLM-L6-v2 was trained on English text. Its vocabulary holds single CJK ideographs,
Cyrillic and Greek letters, so a Japanese or Russian question still becomes a vector — one
that lands near every other text of that script, whatever it says: the "nearest" memory
is noise with a confident score. A question that is mostly written in a script other than
Latin is therefore answered from its words, and the answer says why and what fixes it (a
model folder or an endpoint marked ``multilingual = true``). Only the script is judged
here, never the language: Spanish or German in Latin letters still go to the model, which
reads their shared words and names.

"Mostly": at least half of the question's letters (digits, punctuation and spaces do not
count), so ``kobo-8 はどこで動いている`` is Japanese and ``deploy to 東京 region`` is not.
"""

from __future__ import annotations

import unicodedata

SHARE = 0.5  # of a question's letters in other scripts: answered from words
# a letter's script, from the first word of its Unicode name; Latin letters are read
_SCRIPTS = {
    "CJK": "CJK",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "HALFWIDTH": "Japanese",
    "HANGUL": "Korean",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "THAI": "Thai",
    "DEVANAGARI": "Devanagari",
    "BENGALI": "Bengali",
    "TAMIL": "Tamil",
    "GEORGIAN": "Georgian",
    "ARMENIAN": "Armenian",
    "ETHIOPIC": "Ethiopic",
}


def unread_script(question: str) -> str | None:
    """The script most of ``question``'s letters are written in, when it is not Latin
    (``"Japanese"``, ``"Cyrillic"``, …); None when the built-in model can read it."""
    counts: dict[str, int] = {}
    letters = 0
    for char in question:
        if not char.isalpha():
            continue
        letters += 1
        script = _script(char)
        if script is not None:
            counts[script] = counts.get(script, 0) + 1
    other = sum(counts.values())
    if not letters or other < SHARE * letters:
        return None
    if "Japanese" in counts:  # kana beside kanji: the kanji are Japanese too
        return "Japanese"
    return max(counts, key=lambda name: (counts[name], name))


def _script(char: str) -> str | None:
    if ord(char) < 0x250 or 0x1E00 <= ord(char) <= 0x1EFF:  # Latin, its extensions
        return None
    first = unicodedata.name(char, "").split(" ", 1)[0]
    if first == "LATIN":
        return None
    return _SCRIPTS.get(first, first.title() or "unknown")


def reads(embedder: object) -> bool:
    """The embedder says it reads more than English (``multilingual = true``)."""
    return getattr(embedder, "multilingual", False) is True


def notice(script: str, embedder: object) -> str:
    """Why the question was answered from its words, and what fixes it."""
    model = str(getattr(embedder, "model_id", ""))
    which = (
        "the built-in embedder (all-MiniLM-L6-v2, English only)"
        if model.startswith("all-MiniLM")
        else f"the embedder {model} (not marked multilingual = true)"
    )
    return (
        f"the question is written in {script} script, which {which} cannot read, so it was "
        "answered from its words — to search it by meaning, set [embedder] path to a "
        "multilingual model folder, or [models.embedder] to a multilingual endpoint, with "
        "multilingual = true"
    )


def unreadable(question: str, embedder: object) -> str:
    """The notice when ``embedder`` cannot read ``question``'s script, else ""."""
    if reads(embedder):
        return ""
    script = unread_script(question)
    return "" if script is None else notice(script, embedder)
