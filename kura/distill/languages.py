"""The spotter's phrasings beyond English: how people ask, refuse, drop and correct.

A person asks kura to keep something in the language they think in, and the spotter
(``kura.distill.rules``) must hear them there too. Each language below has its own
phrasings as its speakers use them, not translations of the English list: Japanese and
Korean put the verb last (「…を覚えておいて」, "…걸 기억해 줘"), so a request is found at
either end of the sentence and what was asked is the rest of it, verbatim. The same rules
of precision hold: a negated request ("覚えなくていい", "no recuerdes", "не запоминай") is no
request, and "forget that X" (「忘れて」, "olvida que", "забудь, что") names X only to be
dropped. Languages read: ja, zh, ko, es, fr, de, pt, ru (English lives in ``rules``).
"""

from __future__ import annotations

import re

_F = re.I
# -- requests to remember: a phrase that opens the sentence (the request follows it) ---------
_LEADS = {
    "ja": r"(?:(?:じゃあ|では|あと|それと|これ)[、,]?\s*)?(?:(?:これから|今後)は?[、,]\s*"
    r"|(?:覚え(?:て(?:おいて)?|といて)|メモ(?:して(?:おいて)?|しといて)|忘れないで)(?:ください"
    r"|ね)?\s*[:：、,]\s*)",
    "zh": r"(?:请|麻烦你?)?(?:(?:记住|记一下|记下来?|别忘了|不要忘了|不要忘记|要记得|记得)[：:，,、]?\s*"
    r"|(?:从现在开始|从今以后|以后)[，,]\s*)",
    "ko": r"(?:(?:이거\s*)?(?:기억해\s*(?:줘|둬|두세요|주세요)|잊지\s*마(?:세요)?|메모해\s*(?:줘"
    r"|둬))\s*[:：,.]\s*"
    r"|(?:앞으로는?|이제부터는?)[,]?\s*)",
    "es": r"(?:(?:vale|bueno|ojo|y)[,.:]?\s+)?(?:por\s+favor[,]?\s+)?(?:recuerda(?:lo)?[,]?\s+(?:que\s+)?"
    r"|acu[eé]rdate\s+(?:de\s+)?(?:que\s+)?|no\s+olvides\s+(?:que\s+)?|ten\s+en\s+cuenta\s+(?:que\s+)?"
    r"|toma\s+nota\s+(?:de\s+)?(?:que\s+)?|apunta\s+que\s+|a\s+partir\s+de\s+ahora[,]?\s*"
    r"|de\s+ahora\s+en\s+adelante[,]?\s*)",
    "fr": r"(?:(?:bon|alors|et)[,]?\s+)?(?:s['\u2019]il\s+te\s+pla[iî]t[,]?\s+)?(?:(?:souviens"
    r"|rappelle)[-\s]toi\s+(?:que\s+|qu['\u2019]|de\s+)?"
    r"|(?:souvenez|rappelez)[-\s]vous\s+(?:que\s+|qu['\u2019])?"
    r"|(?:retiens|retenez)\s+(?:bien\s+)?(?:que\s+|qu['\u2019])"
    r"|n['\u2019]oubliez?\s+pas\s+(?:que\s+|qu['\u2019]|de\s+)?|note[sz]?\s+(?:bien\s+)?que\s+"
    r"|garde\s+(?:bien\s+)?en\s+t[eê]te\s+(?:que\s+|qu['\u2019])?|[àa]\s+partir\s+de\s+maintenant[,]?\s*"
    r"|d[ée]sormais[,]?\s*)",
    "de": r"(?:(?:also|und|ok)[,]?\s+)?(?:bitte\s+)?(?:merk(?:e)?\s+dir(?:\s+bitte)?[,:]?\s+(?:dass\s+)?"
    r"|merken\s+Sie\s+sich[,:]?\s+(?:dass\s+)?|denk(?:e)?\s+daran[,:]?\s+(?:dass\s+)?"
    r"|denken\s+Sie\s+daran[,:]?\s+(?:dass\s+)?|vergiss\s+nicht[,:]?\s+(?:dass\s+)?"
    r"|behalte?\s+im\s+(?:Hinter)?kopf[,:]?\s+(?:dass\s+)?|notier(?:e)?\s+dir[,:]?\s+(?:dass\s+)?"
    r"|ab\s+jetzt[,]?\s*|von\s+jetzt\s+an[,]?\s*|k[uü]nftig[,]?\s*)",
    "pt": r"(?:(?:ok|bom|e)[,]?\s+)?(?:por\s+favor[,]?\s+)?(?:lembre-se\s+(?:de\s+)?(?:que\s+)?"
    r"|lembra(?:-te)?\s+(?:de\s+)?que\s+|n[ãa]o\s+(?:se\s+)?esque[çc]a\s+(?:de\s+)?(?:que\s+)?"
    r"|n[ãa]o\s+esque[çc]as\s+(?:de\s+)?(?:que\s+)?|tenha\s+em\s+mente\s+(?:que\s+)?"
    r"|anota\s+(?:a[ií]\s+)?que\s+"
    r"|a\s+partir\s+de\s+agora[,]?\s*|daqui\s+(?:para|pra)\s+frente[,]?\s*)",
    "ru": r"(?:(?:и|кстати|так)[,]?\s+)?(?:пожалуйста[,]?\s+)?(?:запомни(?:те)?[,:]?\s+(?:что\s+)?"
    r"|не\s+забудь(?:те)?[,:]?\s+(?:что\s+)?|имей(?:те)?\s+в\s+виду[,:]?\s+(?:что\s+)?"
    r"|учти(?:те)?[,:]?\s+(?:что\s+)?|с\s+этого\s+момента[,]?\s*|отныне[,]?\s*|впредь[,]?\s*)",
}
# -- requests that close the sentence (the verb comes last): the request precedes them ---------
_TAILS = {
    "ja": r"(?:(?:という|って)?(?:こと|の)(?:を|は)?|と)?\s*(?:覚え(?:て(?:おいて|て)?|といて)"
    r"|メモ(?:して(?:おいて)?|しといて)"
    r"|忘れないで)(?:ください|ね|よ|な)*[。！!\s]*$",
    "zh": r"[，,]\s*(?:请|你)?(?:记住|记一下|记下来|别忘了)(?:吧|哦|啊)?[。！!]*$",
    "ko": r"(?:이라는|라는|다는|는)?\s*(?:걸|것을|거)?\s*(?:기억해\s*(?:줘|둬|두세요|주세요)"
    r"|기억하세요|잊지\s*마(?:세요)?"
    r"|메모해\s*(?:줘|둬|두세요))[.!。\s]*$",
}
# The request sits in front of a tail, after any joining word: "…ので" (so), "…から".
_JOIN = re.compile(r"(?:ので|から)$")
# -- not to keep, or to drop ---------------------------------------------------------------------
_REFUSED = {
    "ja": r"覚えなくて(?:いい|良い|大丈夫)|覚えないで|覚えておかなくて|メモ(?:しなくて|しないで)"
    r"|記憶しないで|忘れて(?!な|た)",
    "zh": r"不用记|不要记(?!得)|别记(?!得)|不必记|无需记|不需要记|忘掉|忘了吧|忘记(?:它|这个|这件事)",
    "ko": r"기억하지\s*마|기억\s*안\s*해도|기억할\s*필요\s*없|저장하지\s*마|메모하지\s*마"
    r"|잊어\s*(?:줘|버려|주세요|버리세요)",
    "es": r"^(?:(?:vale|bueno|y|pero)[,.]?\s+)?(?:por\s+favor[,]?\s+)?(?:(?:no|nunca)\s+(?:recuerdes"
    r"|memorices|guardes|apuntes|anotes)\b"
    r"|no\s+hace\s+falta\s+(?:recordar|guardar|apuntar)|no\s+(?:tienes|necesitas)\s+que\s+recordar"
    r"|olvida(?:lo)?\b|olv[ií]date\b)",
    "fr": r"^(?:(?:bon|alors|et|mais)[,]?\s+)?(?:ne\s+(?:retiens|retenez|m[ée]morise[sz]?|note[sz]?"
    r"|garde[sz]?)\s+pas"
    r"|ne\s+te\s+souviens\s+pas|pas\s+besoin\s+de\s+(?:retenir|noter|m[ée]moriser"
    r"|t['\u2019]en\s+souvenir)|oubliez?\b)",
    "de": r"^(?:(?:also|und|aber|ok)[,]?\s+)?(?:bitte\s+)?(?:merk(?:e)?\s+dir\s+(?:das\s+)?nicht"
    r"|merken\s+Sie\s+sich\s+(?:das\s+)?nicht"
    r"|(?:du\s+)?(?:musst|brauchst)\s+(?:dir\s+)?(?:das\s+)?nicht\s+(?:zu\s+)?merken"
    r"|speicher(?:e)?\s+(?:das\s+)?nicht"
    r"|vergiss\b(?!\s+nicht)|vergessen\s+Sie\b(?!\s+nicht))",
    "pt": r"^(?:(?:ok|bom|e|mas)[,]?\s+)?(?:por\s+favor[,]?\s+)?(?:n[ãa]o\s+(?:lembre|lembra"
    r"|memorize|guarde|anote|grave)\b"
    r"|n[ãa]o\s+precisa\s+(?:lembrar|guardar|anotar)|esque[çc]a\b|esquece\b)",
    "ru": r"^(?:(?:и|но|кстати)[,]?\s+)?(?:пожалуйста[,]?\s+)?(?:не\s+(?:запоминай|записывай"
    r"|сохраняй)(?:те)?\b"
    r"|не\s+(?:надо|нужно)\s+(?:это\s+)?(?:запоминать|записывать)|забудь(?:те)?\b)",
}
_FORGET_LEADS = {
    "es": r"^(?:por\s+favor[,]?\s+)?(?:olvida|olv[ií]date\s+de)[,]?\s+(?:que\s+)?",
    "fr": r"^(?:oubliez?)[,]?\s+(?:que\s+|qu['\u2019](?=\w)|le\s+fait\s+que\s+)?",
    "de": r"^(?:bitte\s+)?(?:vergiss|vergessen\s+Sie)(?!\s+nicht)[,]?\s+(?:bitte\s+)?(?:dass\s+"
    r"|das\s+mit\s+)?",
    "pt": r"^(?:por\s+favor[,]?\s+)?(?:esque[çc]a|esquece)[,]?\s+(?:que\s+|de\s+que\s+)?",
    "ru": r"^(?:пожалуйста[,]?\s+)?забудь(?:те)?[,]?\s+(?:про\s+|о\s+том[,]?\s+)?(?:что\s+)?",
    "zh": r"^(?:请)?(?:忘掉|忘记)[：:，,]?\s*",
    "ja": r"^(?:忘れて(?:ください)?)\s*[:：、,]\s*",
}
_FORGET_TAILS = {
    "ja": r"(?:の?こと)?(?:は|を)?\s*忘れて(?:ください|ね|いい)*[。！!\s]*$",
    "zh": r"\s*吧?[。！!]*$",  # after a lead: "忘掉 X 吧。"
    "ko": r"(?:은|는|을|를)?\s*잊어\s*(?:줘|버려|주세요|버리세요)[.!。\s]*$",
}
_CORRECTIONS = {
    "ja": r"^(?:いや|いいえ|違う|ちがう|違います|そうじゃな|そうではな|じゃなくて|実は|だから言った"
    r"|言ったでしょ)",
    "zh": r"^(?:不对|不是的|错了|你错了|其实|我说过|我说的是|别再|不要再)",
    "ko": r"^(?:아니(?:야|요)?\s*[,.!]|틀렸|그게\s*아니|사실은|내가\s*말했)",
    "es": r"^(?:eso\s+(?:est[aá]\s+mal|no\s+es)|est[aá]\s+mal[,.!]|te\s+(?:dije|he\s+dicho)\b"
    r"|en\s+realidad[,]?\s"
    r"|para\s+de\b|no\s+\S+(?:\s+\S+)?,?\s+sino\s)",
    "fr": r"^(?:non[,.!]|c['\u2019]est\s+(?:faux|pas\s+(?:ça|ca|juste|correct))|en\s+fait[,]?\s"
    r"|je\s+(?:t['\u2019]ai|vous\s+ai)\s+dit\b|arr[eê]te\s+(?:de\s+)?\w|pas\s+\S+(?:\s+\S+)?,?\s+mais\s)",
    "de": r"^(?:nein[,.!]|das\s+(?:ist|stimmt)\s+(?:falsch|nicht)|eigentlich[,]?\s|ich\s+(?:hab"
    r"|habe)\s+(?:doch\s+)?gesagt\b"
    r"|h[öo]r\s+auf\b|nicht\s+\S+(?:\s+\S+)?,?\s+sondern\s)",
    "pt": r"^(?:n[ãa]o[,.!]|(?:isso|isto)\s+(?:est[áa]\s+errado|n[ãa]o\s+(?:[ée]|est[áa]))"
    r"|na\s+verdade[,]?\s"
    r"|eu\s+(?:disse|falei)\b|para\s+de\b|n[ãa]o\s+\S+(?:\s+\S+)?,?\s+mas\s)",
    "ru": r"^(?:нет[,.!]|(?:это\s+)?неправильно|это\s+не\s+так\b|на\s+самом\s+деле[,]?\s"
    r"|я\s+(?:же\s+)?(?:сказал|говорил)а?\b"
    r"|хватит\b|прекрати\b|не\s+\S+(?:\s+\S+)?,?\s+а\s)",
}
LEADS = {lang: re.compile("^" + p, _F) for lang, p in _LEADS.items()}
TAILS = {lang: re.compile(p, _F) for lang, p in _TAILS.items()}
REFUSED = {lang: re.compile(p, _F) for lang, p in _REFUSED.items()}
FORGET_LEADS = {lang: re.compile(p, _F) for lang, p in _FORGET_LEADS.items()}
FORGET_TAILS = {lang: re.compile(p, _F) for lang, p in _FORGET_TAILS.items()}
CORRECTIONS = {lang: re.compile(p, _F) for lang, p in _CORRECTIONS.items()}
LANGUAGES = tuple(_LEADS)
_TRIM = " ,.;:!?、。，：！？「」"


def asked(sentence: str) -> tuple[str, int, int] | None:
    """(language, start, end) of what ``sentence`` asks to be kept, by one of the phrasings
    above; None when it holds none. ``sentence[start:end]`` is the request, verbatim."""
    for lang, lead in LEADS.items():
        found = lead.match(sentence)
        if found is not None and found.end() < len(sentence):
            return lang, found.end(), len(sentence)
    for lang, tail in TAILS.items():
        found = tail.search(sentence)
        if found is not None and found.start() > 0:
            end = found.start()
            joined = _JOIN.search(sentence, 0, end)
            return lang, 0, joined.start() if joined else end
    return None


def refused(sentence: str) -> bool:
    """Whether ``sentence`` asks, in one of these languages, not to keep or to drop something."""
    return any(p.search(sentence) for p in REFUSED.values())


def forgotten(sentence: str) -> str | None:
    """What ``sentence`` asks to forget ("olvida que X", 「Xは忘れて」), verbatim; else None."""
    for lang, lead in FORGET_LEADS.items():
        found = lead.match(sentence)
        if found is None:
            continue
        rest = sentence[found.end() :]
        tail = FORGET_TAILS.get(lang)
        cut = tail.search(rest) if tail is not None and lang == "zh" else None
        return (rest[: cut.start()] if cut else rest).strip(_TRIM) or None
    for tail in FORGET_TAILS.values():
        found = tail.search(sentence)
        if found is not None and found.start() > 0 and tail is not FORGET_TAILS["zh"]:
            return sentence[: found.start()].strip(_TRIM) or None
    return None


def corrected(sentence: str) -> re.Match[str] | None:
    """The opener of a correction ("違う、", "eso está mal", "нет,"), else None."""
    for pattern in CORRECTIONS.values():
        found = pattern.match(sentence)
        if found is not None:
            return found
    return None


def language_of(sentence: str) -> str:
    """The language whose phrasing asks for ``sentence`` to be kept or corrects ("en" when
    none of these does)."""
    found = asked(sentence)
    if found is not None:
        return found[0]
    return next((lang for lang, p in CORRECTIONS.items() if p.match(sentence)), "en")
