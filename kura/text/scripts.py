"""Writing systems: which one a character belongs to, and how text in each is cut into words.

Chinese and Japanese put no space between words, and Korean glues its particles to them,
so what a word index (FTS5's ``unicode61``) or the claim matcher takes for a word — a run
of letters — is a whole clause there: 「ステージングはkobo-8で動いている」 is one token, and
a question about it shares no token with it. A segmenter needs a dictionary per language
(MeCab, jieba) and a model of its own; overlapping character bigrams need nothing, and are
what search engines have long done for these scripts (Lucene's CJK bigram filter): 本番環境
is 本番 番環 環境, so a question about 本番の環境 finds it by 本番 and 環境. A trigram index
(FTS5 ``trigram``) would miss the many words of two characters.

A run is first cut where the script changes (kanji, katakana, hiragana, hangul, the rest),
so a kanji compound and the katakana word beside it are two words, and a Latin name glued
to them (``kobo-8で``) is a word of its own. Hiragana is left out: it is mostly particles
and endings (は, を, ている), and would make every Japanese text share pieces with every
other. A lone character between two cuts (the 動 of 動いている) is kept whole. Text is
NFKC-folded first, so full-width ``ｋｏｂｏ`` and half-width katakana read as usual.

The same pieces serve the search index's ``grams`` column (``kura.recall.search``), the
question's words, and the claim matcher (``kura.text.claim_match``), which decides what
"忘れて: X" forgets and when a claim restates another.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_RUN = re.compile(r"\w+")
_HAN, _KANA, _HIRA, _HANGUL, _OTHER = "han", "kana", "hira", "hangul", ""
_RANGES = {  # what ``script`` reads, as character classes
    _HIRA: "\u3040-\u309f",
    _KANA: "\u30a0-\u30ff\uff66-\uff9f",  # with ー and the half-width forms
    _HANGUL: "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f",
    _HAN: "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u3005",  # with 々 and the compatibility block
}
# Compiled on first use: the class's wide ranges take ~7 ms to compile, which every process
# importing this module (a prompt hook's prefill among them) paid even with no CJK to read.
_CJK_CLASS = f"[{''.join(_RANGES.values())}]"
# Function words of the spaced languages (es, fr, de, pt, ru) that hold a letter outside
# ASCII: what ``spaced_words`` and the trimmer leave out (ASCII words have their own rules).
STOP = frozenset(
    "está están à où já não são é für über "
    "и в во на с со к по за из от у о об что это как а но не ни же ли бы то для при".split()
)


# Negation in the spotter's other languages: Japanese verb endings (ない, ません, ず), Chinese
# and Korean negators, and the negative words of the spaced languages. Chinese 不 is read only
# in its negating pairs (不要, 不能 …), since 不同 ("different") and 不过 ("but") are not "not".
_NEGATED = re.compile(
    r"ない|ません|なかった|ず[、。]|禁止|しないで"
    r"|不要|不能|不会|不是|不用|不可|从不|没有|没|别|別|勿"
    r"|않|못|지\s*마|금지|(?<!\w)안(?=\s)"
    r"|(?<!\w)(?:nunca|jamás|nicht|nie|niemals|kein\w*|jamais|pas|não|nem|не|нет|никогда|ни)(?!\w)"
)


def negated(text: str) -> bool:
    """Whether ``text`` (lower-cased) says "not" in one of the spotter's other languages."""
    return _NEGATED.search(text) is not None


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character."""
    return not text.isascii() and _cjk().search(text) is not None


@functools.cache
def _cjk() -> re.Pattern[str]:
    return re.compile(_CJK_CLASS)


def script(char: str) -> str:
    """The writing system of one character: han, kana, hira, hangul, or "" for any other."""
    code = ord(char)
    if 0x3040 <= code <= 0x309F:
        return _HIRA
    if 0x30A0 <= code <= 0x30FF or 0xFF66 <= code <= 0xFF9F:
        return _KANA
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return _HANGUL
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF or code == 0x3005:
        return _HAN
    return _OTHER


def pieces(run: str) -> list[str]:
    """One run of letters (no spaces, no punctuation) as words: each CJK stretch as its
    overlapping bigrams (a lone character as itself), hiragana left out, and what is
    glued to them in another script (``kobo``, ``8``) as one word each, less the Korean
    particle glued after it. The run is cut where its script changes in one regex pass
    (``_segments``: the ranges ``script`` reads), not a Python call a character."""
    out: list[str] = []
    before = _HIRA
    for found in _segments().finditer(run):
        chunk, kind = found.group(), _KINDS[found.lastgroup or "other"]
        if kind == _HANGUL and before == _OTHER and len(chunk) <= 2:
            pass  # a particle glued to a name: the 는 of rhino-2는, the 에서 of kobo-8에서
        elif kind in (_HAN, _KANA, _HANGUL):
            out += [chunk] if len(chunk) == 1 else [chunk[i : i + 2] for i in range(len(chunk) - 1)]
        elif kind == _OTHER:
            out.append(chunk)
        before = kind
    return out


_KINDS = {**{kind: kind for kind in _RANGES}, "other": _OTHER}  # a group's name -> ``script``'s answer


@functools.cache
def _segments() -> re.Pattern[str]:
    """A run's stretches of one script each, named by the group that matched (``other``
    for any character outside the four)."""
    every = "".join(_RANGES.values())
    named = "|".join(f"(?P<{kind}>[{chars}]+)" for kind, chars in _RANGES.items())
    return re.compile(f"{named}|(?P<other>[^{every}]+)")


def cjk_words(text: str) -> list[str]:
    """The words of ``text``'s runs that hold CJK (``pieces``), lower-cased, NFKC-folded,
    in order, repeats kept; runs with no CJK are left to the caller's own word rule."""
    folded = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for run in _RUN.findall(folded):
        if has_cjk(run):
            out += pieces(run)
    return out


def grams(text: str) -> str:
    """What the search index keeps in its ``grams`` column for ``text``: its CJK words
    (``cjk_words``), space-separated; "" for text with none (nothing stored).

    The same words as ``cjk_words``, found by two regex passes in C instead of a Python
    call a run: a first recall indexes every memory of a store, and on 20,000 of
    distill-kura's mixed Japanese and English ones the calls cost a second
    (``tests/text/test_scripts.py`` holds the two to the same answer)."""
    if not has_cjk(text):
        return ""
    runs, words = _grams()
    folded = " ".join(runs.findall(unicodedata.normalize("NFKC", text).lower()))
    return " ".join(filter(None, words.findall(folded)))


@functools.cache
def _grams() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The runs of letters that hold CJK; and in them, at each character, ``pieces``' word
    that starts there, as the one group (empty where none does): a bigram of one script, a
    lone character of its script, or a chunk of other letters, which takes with it the
    one- or two-syllable Korean particle glued after it. Hiragana and the last character of
    a stretch start none."""
    han, kana, hangul, hira = (_RANGES[kind] for kind in (_HAN, _KANA, _HANGUL, _HIRA))
    every = "".join(_RANGES.values())
    other = rf"[^\W{every}]"
    runs = re.compile(rf"(?<!\w){other}*+(?=\w)[{every}]\w*+")
    alone = "|".join(rf"(?<![{s}])[{s}](?![{s}])" for s in (han, kana, hangul))
    words = re.compile(
        rf"(?=([{han}]{{2}}|[{kana}]{{2}}|[{hangul}]{{2}}|{other}+|{alone}))"
        rf"(?:{other}++(?:[{hangul}]{{1,2}}(?![{hangul}]))?|.)"
        rf"|[{hira}]+|."
    )
    return runs, words


def spaced_words(text: str) -> list[str]:
    """The words of ``text`` outside CJK and outside ASCII (``déploiement``, ``сервер``),
    lower-cased, function words (``STOP``) left out: what an ASCII word rule cannot read."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return [run for run in _RUN.findall(folded) if not (run.isascii() or has_cjk(run) or run in STOP)]


def split_cjk(runs: list[str]) -> list[str]:
    """Runs of letters with each one holding CJK cut into its words (``cjk_words``); the
    others as they are."""
    out: list[str] = []
    for run in runs:
        out += cjk_words(run) if has_cjk(run) else [run]
    return out


def apart(text: str) -> tuple[str, list[str]]:
    """``text`` for an ASCII word rule, with its runs in other scripts blanked out (so
    ``déploiement`` leaves no ``d`` and ``ploiement`` behind), and the words of those runs:
    CJK ones as ``cjk_words``, the others whole (``spaced_words``)."""
    blanked = _RUN.sub(_kept_for_ascii, text)
    return blanked, cjk_words(text) + spaced_words(text)


def _kept_for_ascii(run: re.Match[str]) -> str:
    word = run.group(0)
    return word if word.isascii() or has_cjk(word) else " "
