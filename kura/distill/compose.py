"""The template composer: a kept candidate becomes a draft's title, description and body.

With no model to write prose, a template has to, and a template cannot embellish on its
own — but what it fills in can. The human's sentence may hold a number only the human
vouched for (the floor licenses numbers from TOOL and ACT output alone), a tool line may
carry a secret, a topic cut from a sentence may read as a claim. So every piece is built
from the candidate's verbatim parts, and each sentence of the body is held to the
final-surface floor (``kura.distill.final_check.violations``) against the gate's evidence on its
own: a sentence that fails is dropped, never staged and never repaired by guessing. If no
sentence carrying the fact survives, there is no draft — an empty memory is worse than none.

A number the human gave is the human's word, not a measured fact: the body keeps it inside
the user's quoted sentence ("The user said: …", which the floor licenses) and drops the bare
restatement. The description then quotes the request itself (``The user said: "the deploy
window is 30 minutes"``), and a title the floor refuses has its unlicensed numbers stripped,
visibly (``The deploy window is … minutes``); failing that, its words with digits go, then
a plain fallback.

The description is a recognition trigger for the index line: the key nouns and the
conclusion, at most 150 characters, because an agent scanning the index decides from that
line alone whether to open the memory. ``[[links]]`` name only memories that exist in the
store, and only when the slug shares two or more words with the topic.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from kura.distill.candidate import Candidate
from kura.distill.final_check import quote, stripped, violations
from kura.distill.gate import Verdict
from kura.distill.languages import language_of
from kura.distill.rules import command_of, cut, request_of
from kura.errors import StoreError
from kura.files.memory_index import TITLE_MAX
from kura.files.slugs import new_slug
from kura.text.secrets import redact
from kura.transcripts.segments import Segment

DESC_CHARS = 150
TITLE_CHARS = 80
_CLAUSE_END = re.compile(r"[,;:]\s| (?:and|but|so|because|which|while|since|when|where) | [—–-] ")
SLUG_WORDS = 6
_WORD = re.compile(r"[a-z0-9]+")
_REDACTED = re.compile(r"\[redacted: [^\]]*\]")
_STOP = frozenset(
    "a an and are as at be by for from in is it its of on or that the this to was were with "
    "we you your our i me my do does dont don't not no always never please remember note ever".split()
)
_VOICE = {
    "USER": "The user said",
    "TOOL": "A tool printed",
    "ACT": "The agent ran",
    "SELF": "The agent noted",
}
_SPOKEN = {
    "remember": "The user said:",
    "correction": "Corrected by the user:",
    "ladder": "The user said:",
}  # the floor's attributions
_HOW = {
    "feedback": "follow it in every session without being reminded.",
    "user": "keep it in mind when working with this person.",
    "project": "take it as given for this project.",
    "reference": "look here before trying it another way.",
}

# A claim only tools made is a report, never a rule: its source is named in the body and the
# index line, and it is to be checked where it came from.
_TOOL_WHY = "**Source:** a tool's output, read in unrelated sessions, not the words of a person."
_TOOL_HOW = "**How to apply:** a tool's report, not a rule: check it at its source before relying on it."
_TOOL_DESC = "From a tool's output, not a person's words: "


@dataclass(kw_only=True, frozen=True, slots=True)
class Composed:
    """A draft ready to stage; ``dropped`` names the sentences the floor refused."""

    slug: str
    kind: str
    title: str
    description: str
    body: str
    flags: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()


def compose(
    candidate: Candidate,
    verdict: Verdict,
    *,
    taken: Collection[str] = (),
    store_slugs: Collection[str] = (),
) -> Composed | None:
    """The draft for a kept ``candidate``, or None when no sentence of fact survives."""
    evidence = verdict.evidence
    facts, why, how = _sentences(candidate, evidence)
    kept_facts, dropped = _floor(facts, evidence, store_slugs)
    if not kept_facts and native(candidate):  # a number only they gave: their sentence, attributed
        kept_facts, dropped = _floor(
            [_said(_SPOKEN["remember"], candidate.get("said"))], evidence, store_slugs
        )
    if not kept_facts:
        return None
    rest, more = _floor([s for s in (why, how, *_links(candidate, store_slugs)) if s], evidence, store_slugs)
    body = "\n\n".join(["\n".join(kept_facts), *rest]) + "\n"
    topic = str(candidate.get("topic") or "")
    title = _safe(_title(candidate), evidence, "A lesson from a transcript")
    fallback = f"{verdict.classes[0]} evidence: {title}"
    description = _safe(_description(candidate), evidence, fallback, spoken=_spoken(candidate))
    flags = tuple(
        flag
        for flag, on in (("judgement", verdict.judgement), ("unbacked-number", verdict.unverified_numbers))
        if on
    )
    slug = unique_slug(topic, taken)
    return Composed(
        slug=slug,
        kind=str(candidate.get("kind")),
        title=title,
        description=description,
        body=body,
        flags=flags,
        dropped=(*dropped, *more),
    )


def unique_slug(topic: str, taken: Collection[str]) -> str:
    """A slug kura may create from the topic's key words, not one of ``taken``; a secret in
    the topic never becomes part of a name (it is cut out, marker and all)."""
    named = _REDACTED.sub(" ", redact(topic)[0])
    words = [w for w in _WORD.findall(named.lower()) if w not in _STOP][:SLUG_WORDS]
    base = "-".join(words)[:60].strip("-") or _hashed(topic)
    try:
        base = new_slug(base)
    except StoreError:
        base = _hashed(topic)
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug


def _hashed(topic: str) -> str:
    """A name for a topic with no Latin word to make one of (「本番は火曜日」): short and stable."""
    return "note-" + hashlib.sha256(topic.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def native(candidate: Candidate) -> bool:
    """Whether ``candidate`` is a request or correction said in a language other than
    English: its draft then holds the person's words alone, with no English wrapped round."""
    said = str(candidate.get("said") or "")
    return candidate.get("rule") in ("remember", "correction") and language_of(said) != "en"


def _in_their_words(candidate: Candidate) -> list[str]:
    said = str(candidate.get("said") or "")
    told = said if candidate.get("rule") == "correction" else request_of(said)
    if told[-1:] in ".!?\u3002\uff01\uff1f":
        return [told]
    return [told + ("\u3002" if _cjk(told[-1:]) else ".")]


def _cjk(char: str) -> bool:
    return bool(char) and (
        "\u3040" <= char <= "\u30ff" or "\u4e00" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"
    )


def _sentences(candidate: Candidate, evidence: Sequence[Segment]) -> tuple[list[str], str, str]:
    rule, kind = candidate.get("rule"), str(candidate.get("kind"))
    if native(candidate):
        return _in_their_words(candidate), "", ""
    topic = str(candidate.get("topic") or "").rstrip(".")
    if rule == "brain":  # a model's candidate: its topic, then its evidence word for word
        quoted = [_said(_VOICE.get(s.cls, "The transcript reads") + ":", s.text) for s in evidence]
        reason = " ".join(str(candidate.get("why") or "").split()).rstrip(".")
        return (
            [f"{topic}.", *quoted],
            f"**Why:** {reason}." if reason else "",
            f"**How to apply:** {_HOW.get(kind, _HOW['project'])}",
        )
    if rule == "scar":
        fixed, failed = _command(candidate.get("fixed")), _command(candidate.get("failed_call"))
        facts = [
            f"`{fixed}` works where `{failed}` failed.",
            _said("The failure read:", candidate.get("failed"), "."),
        ]
        if candidate.get("output"):
            facts.append(_said("The working call printed:", candidate.get("output"), "."))
        why = "**Why:** the first attempt failed and cost a retry before the working call was found."
        return facts, why, f"**How to apply:** run `{fixed}` directly instead of `{failed}`."
    said = str(candidate.get("said") or "")
    if rule == "ladder":  # said in passing, in two unrelated sessions: their words, attributed
        if not said:  # only tools said it: what they printed, attributed, never a rule
            return [_said("A tool printed:", candidate.get("output"))], _TOOL_WHY, _TOOL_HOW
        why = "**Why:** it fell out of the working window in one session and recurred in an unrelated one."
        return (
            [f"{topic}.", _said("The user said:", said)],
            why,
            f"**How to apply:** {_HOW.get(kind, _HOW['project'])}",
        )
    if rule == "correction":
        facts = [f"{topic}.", _said("The user corrected the agent:", said)]
        why = "**Why:** the agent got this wrong once and was corrected; the correction is the rule."
        return facts, why, "**How to apply:** do it the corrected way the first time."
    facts = [f"{topic}.", _said("The user said:", said)]
    why = "**Why:** the user asked for this to be remembered."
    return facts, why, f"**How to apply:** {_HOW.get(kind, _HOW['project'])}"


def _command(act: Any) -> str:
    return command_of(str(act or ""))


def _said(lead: str, words: Any, end: str = "") -> str:
    """``lead`` and the verbatim ``words`` as one quotation the floor reads back whole
    (``kura.distill.final_check.quote``); "" — a sentence the floor drops — when no quotation
    marks can hold them unambiguously."""
    text = str(words or "").strip()
    quoted = quote(text) if text else None
    closed = text.endswith((".", "!", "?"))  # no "Stop.". — the quotation ends the sentence
    return f"{lead} {quoted}{'' if closed else end}" if quoted else ""


def _floor(
    sentences: Sequence[str], evidence: Sequence[Segment], store_slugs: Collection[str]
) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in filter(None, sentences):  # "" is a quotation no marks could hold
        problems = violations(sentence, evidence, store_slugs)
        (dropped if problems else kept).append(sentence)
    return kept, [f"{s[:60]}: {violations(s, evidence, store_slugs)[0]}" for s in dropped]


def _title(candidate: Candidate) -> str:
    if candidate.get("rule") == "scar":
        return cut(f"Use {_command(candidate.get('fixed'))}", TITLE_CHARS)
    return _clause(str(candidate.get("topic") or "").rstrip("."))


def _clause(topic: str) -> str:
    """A title the index shows whole (40 characters): the topic, or its first clause(s)
    when the topic is longer — cut where a clause ends, never inside one, the rest kept in
    the description; a topic with no such place stays as it is (the index then names the slug)."""
    if len(topic) <= TITLE_MAX:
        return topic
    ends = [m.start() for m in _CLAUSE_END.finditer(topic) if len(topic[: m.start()].split()) >= 3]
    fits = [end for end in ends if end <= TITLE_MAX]
    return topic[: fits[-1]].rstrip(" ,;") if fits else cut(topic, TITLE_CHARS)


def _description(candidate: Candidate) -> str:
    topic = str(candidate.get("topic") or "").rstrip(".")
    if candidate.get("rule") == "scar":
        failed = _command(candidate.get("failed_call"))
        fixed = _command(candidate.get("fixed"))
        return cut(f"When {failed} fails: {fixed} is what worked", DESC_CHARS)
    if native(candidate):
        return cut(_in_their_words(candidate)[0], DESC_CHARS)
    if candidate.get("rule") == "correction":
        return cut(f"Corrected by the user: {topic}", DESC_CHARS)
    if candidate.get("rule") == "ladder" and not candidate.get("said"):
        return cut(f"{_TOOL_DESC}{topic}", DESC_CHARS)
    return cut(topic, DESC_CHARS)


def _spoken(candidate: Candidate) -> str:
    """The request in the user's own words, quoted and attributed (the floor licenses the
    numbers in it): "" for a candidate that is not a request or a correction."""
    lead = _SPOKEN.get(str(candidate.get("rule")), "")
    asked = request_of(str(candidate.get("said") or "")) if lead else ""
    if not lead or not asked:
        return ""
    room = DESC_CHARS - len(lead) - 3
    shown = asked if len(asked) <= room else cut(asked, room - 2) + " \u2026"
    return _said(lead, shown)


def _safe(text: str, evidence: Sequence[Segment], fallback: str, *, spoken: str = "") -> str:
    """``text`` if the floor passes it; else ``spoken`` (the user's words, quoted); else
    ``text`` with its unlicensed numbers stripped, then without its words that hold digits;
    else ``fallback`` (itself held to the floor)."""
    if text and not violations(text, evidence, ()):
        return text
    plain = " ".join(w for w in text.split() if not any(c.isdigit() for c in w))
    for choice in (spoken, stripped(text, evidence), plain):
        if len(choice) >= 12 and not violations(choice, evidence, ()):
            return choice
    return fallback if not violations(fallback, evidence, ()) else "A lesson from a transcript"


def _links(candidate: Candidate, store_slugs: Collection[str]) -> list[str]:
    words = {w for w in _WORD.findall(str(candidate.get("topic") or "").lower()) if w not in _STOP}
    near = [s for s in sorted(store_slugs) if len(words & set(_WORD.findall(s.lower()))) >= 2][:3]
    return ["Related: " + ", ".join(f"[[{s}]]" for s in near)] if near else []
