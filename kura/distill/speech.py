"""How a quotation is attributed and measured beyond English, for the final-surface floor.

The floor (``kura.distill.final_check``) checks a quotation presented as speech against the
evidence, and licenses a number inside one that is the user's own, attributed to them. A
scribe asked to write in the person's language (``kura.distill.scribe_language``) quotes in
that language's way: 「…」 and 『…』 in Japanese, „…“ in German, with the verb after the
quotation in Japanese and Korean (ユーザーは「…」と言った, "…"라고 말했다) and the user
named in that language. Japanese and Chinese have no spaces, so a quotation's length is
counted with each two CJK characters as a word (「デプロイは火曜日」 is long enough to be a
claim, 「保存」 a button's name is not), and a verbatim CJK passage needs no word boundary
around it in the evidence, where it sits inside a longer run of letters.
"""

from __future__ import annotations

import re

from kura.text.scripts import has_cjk

_USER = (
    r"(?:ユーザー?|利用者|ご?本人|用户|用戶|使用者|사용자|유저|usuari[oa]s?|utilisat(?:eur|rice)s?"
    r"|(?:be)?nutzer(?:in)?|usuári[oa]s?|пользовател[a-яё]*)"
)
BY_USER = re.compile(_USER + r"[^\"\u201c\u201e\u00ab\u300c\u300e\n。.!?;]{0,40}$", re.I)
_SAID_BEFORE = re.compile(
    r"(?:\b(?:dijo|ha\s+dicho|pidió|escribió|a\s+dit|a\s+écrit|a\s+demandé|sagte|hat\s+gesagt|schrieb"
    r"|meinte|disse|falou|escreveu|pediu)\b|(?:сказал|написал|просил)[аи]?|[说說]|曰く?)"
    r"[^\"\u201c\u201e\u00ab\u300c\n]{0,12}$",
    re.I,
)
_SAID_AFTER = re.compile(
    r"^\s*(?:と|って)\s*(?:言|い[っいうわ]|話|述べ|書|頼|指示|おっしゃ|明言|注意)"
    r"|^\s*(?:이?라고|하고)\s*(?:말|했|하|적|요청)"
)
_CJK_CHAR = re.compile("[\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def said_before(lead: str) -> bool:
    """Whether ``lead`` ends in a speech verb of another language (``dijo``, ``сказал``, 说)."""
    return _SAID_BEFORE.search(lead) is not None


def said_after(trail: str) -> bool:
    """Whether ``trail`` (what follows a quotation) opens with a speech verb that comes after
    what was said: Japanese と言った, Korean 라고 말했다."""
    return _SAID_AFTER.match(trail) is not None


def by_user(lead: str) -> bool:
    """Whether ``lead`` names the user, in one of the spotter's languages, before a quotation."""
    return BY_USER.search(lead) is not None


def words_in(quoted: str) -> int:
    """How many words ``quoted`` holds, two CJK characters counting as one."""
    return len(quoted.split()) + len(_CJK_CHAR.findall(quoted)) // 2


def bounded(char: str) -> bool:
    """Whether a verbatim passage starting or ending with ``char`` must meet a word boundary
    there: a letter or digit, unless it is CJK."""
    return char.isalnum() and not has_cjk(char)
