"""The language the scribe writes a memory in.

A memory is read by the person as much as by their agent, and a person who works in
Japanese does not want their store rewritten in English (mem0's users file exactly that
complaint). ``[distill] language`` (or ``[stores.NAME.distill] language``, which wins)
names it: a code (``ja``), an English name (``Japanese``) or the language's own name
(``日本語``); anything else is passed to the scribe as written. Unset (or ``auto``), the
scribe writes in the language of the evidence: the person's own words first, read by
script (kana is Japanese, hangul Korean, Han alone Chinese, Cyrillic Russian) and, in the
Latin script, by the spotter's phrasings and then by the commonest function words. Asking
costs nothing the floor does not check: whatever language the draft is in, the final
check (``kura.distill.final_check``) holds its quotations and numbers to the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kura.distill.languages import language_of
from kura.text.scripts import script
from kura.transcripts.segments import Segment

NAMES = {
    "en": "English",
    "ja": "Japanese (日本語)",
    "zh": "Chinese (中文)",
    "ko": "Korean (한국어)",
    "es": "Spanish (español)",
    "fr": "French (français)",
    "de": "German (Deutsch)",
    "pt": "Portuguese (português)",
    "ru": "Russian (русский)",
}
_ALIASES = {
    "japanese": "ja",
    "日本語": "ja",
    "chinese": "zh",
    "中文": "zh",
    "汉语": "zh",
    "中国語": "zh",
    "korean": "ko",
    "한국어": "ko",
    "spanish": "es",
    "español": "es",
    "french": "fr",
    "français": "fr",
    "german": "de",
    "deutsch": "de",
    "portuguese": "pt",
    "português": "pt",
    "russian": "ru",
    "русский": "ru",
    "english": "en",
}
_FUNCTION_WORDS = {
    "en": "the and is are to of in that it for with on not this be we".split(),
    "es": "el la los las que de del y en es por para con una está no se".split(),
    "fr": "le la les des du de et est que qui dans pour une pas sur ce".split(),
    "de": "der die das und ist nicht ein eine mit auf für den dem zu wir auch".split(),
    "pt": "o os as que de do da e é em um uma não para com no na".split(),
}
_WORDS = re.compile(r"[^\W\d_]+")


def configured(table: Mapping[str, Any], store_table: Mapping[str, Any]) -> str:
    """The language ``[distill]`` names (the store's own table first), as a code when it is
    one kura knows; "" when unset or ``auto`` (the evidence's language)."""
    said = store_table.get("language") or table.get("language") or ""
    said = str(said).strip()
    code = said.lower().replace("_", "-").split("-")[0]
    if code in NAMES:
        return code
    if said.lower() in ("", "auto"):
        return ""
    return _ALIASES.get(said.lower(), said)


def of_text(text: str) -> str:
    """The code of the language ``text`` is written in, as far as its letters tell ("en"
    when nothing tells)."""
    counts = {"hira": 0, "kana": 0, "hangul": 0, "han": 0}
    cyrillic = latin = 0
    for char in text:
        kind = script(char)
        if kind:
            counts[kind] += 1
        elif "\u0400" <= char <= "\u04ff":
            cyrillic += 1
        elif char.isalpha():
            latin += 1
    if counts["hira"] + counts["kana"]:
        return "ja"
    if counts["hangul"]:
        return "ko"
    if counts["han"]:
        return "zh"
    if cyrillic > latin:
        return "ru"
    return _latin(text)


def _latin(text: str) -> str:
    found = language_of(text)
    if found != "en":
        return found
    words = [w.lower() for w in _WORDS.findall(text)]
    votes = {lang: sum(w in set(common) for w in words) for lang, common in _FUNCTION_WORDS.items()}
    best = max(votes, key=lambda lang: (votes[lang], lang == "en"))
    return best if votes[best] >= 2 else "en"


def of_evidence(evidence: Sequence[Segment]) -> str:
    """The language of the person's words in ``evidence`` (of all of it when they said none)."""
    said = [s.text for s in evidence if s.cls == "USER"] or [s.text for s in evidence]
    return of_text("\n".join(said))


def writing_in(language: str, evidence: Sequence[Segment]) -> str:
    """What the scribe is told to write in: the configured ``language`` (a code from
    ``configured``, or the person's own words for it), else the evidence's."""
    code = language or of_evidence(evidence)
    return NAMES.get(code, code)
