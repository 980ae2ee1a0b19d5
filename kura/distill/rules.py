"""The rule-based spotter: candidates from classed segments with no model at all.

A fresh machine has no model, and ``kura distill run`` should still be useful there, so
three kinds of moment are recognised by their shape alone — the ones a person would most
regret losing and that a rule can find with few false alarms:

- an explicit request to remember, in the human's own words ("remember that …", "from now
  on …", an imperative "always …"/"never …", "don't ever …", "please note …") — but never a
  negated one ("never remember that …", "don't remember …") nor "forget that …", which ask
  for the opposite;
- a correction of the agent: a USER turn right after the agent spoke or acted that opens
  with "no, …", "that's wrong", "actually …", "not X but Y", "I said …" or "stop …";
- a scar: a tool call whose output shows a failure, followed by a related call (the same
  tool, the same program or most of the same words) whose output does not — a lesson that
  was expensive to learn.

Precision beats recall: a missed memory can be written later, a wrong one poisons every
future session. So nothing is ever spotted from SELF text (the agent's prose is what the
gate distrusts most), only whole sentences of USER text are quoted, and every quote is a
verbatim slice of one segment (a tool's line with its whitespace runs folded, as the gate
matches it), cut on a word boundary to the gate's 400 characters, so the gate checks the
spotter's work instead of trusting it. Candidates carry the gate's fields
(``topic``, ``kind``, ``why``, ``quotes``) plus ``rule`` and the verbatim pieces the
template composer needs (``said``, ``failed``, ``fixed``, ``output``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from kura.distill import languages
from kura.distill.candidate import Candidate, Rule
from kura.text.sentences import sentences as split_sentences
from kura.transcripts.segments import Segment, normalise

QUOTE_CHARS = 400
LOOKAHEAD = 12  # segments after a failure in which a fix still counts as its fix
MIN_CHARS = 12  # the gate ignores shorter quotes

_REMEMBER = re.compile(
    r"^(?:ok(?:ay)?[,.]?\s+|so[,]?\s+|and\s+)?(?:please\s+)?(?:"
    r"remember\s+(?:that\s+)?|from\s+now\s+on\b[,]?\s*|going\s+forward\b[,]?\s*"
    r"|(?:always|never)\s+(?!mind\b)(?=[a-z])|don['\u2019]t\s+ever\s+|do\s+not\s+ever\s+"
    r"|(?:please\s+)?note\s+that\s+|keep\s+in\s+mind\s+(?:that\s+)?)",
    re.I,
)
# A request not to keep something, or to drop it, is no request to remember: "never remember
# that X", "don't remember X", "forget that X" must never become a memory saying X.
_NOT_KEPT = re.compile(
    r"^(?:ok(?:ay)?[,.]?\s+|so[,]?\s+|and\s+|but\s+|also[,]?\s+)?(?:please\s+)?(?:"
    r"(?:never|don['\u2019]t|do\s+not|no\s+need\s+to|you\s+(?:don['\u2019]t|do\s+not)\s+need\s+to)\s+(?:ever\s+)?"
    r"(?:remember|memori[sz]e|(?:keep|save|store|record|note(?:\s+down)?|write\s+down)\s+(?:that|this|it)\b)\b"
    r"|forget\b|stop\s+remembering\b|unlearn\b)",
    re.I,
)
_FORGET = re.compile(
    r"^(?:ok(?:ay)?[,.]?\s+|so[,]?\s+|and\s+|also[,]?\s+)?(?:please\s+)?"
    r"(?:forget|stop\s+remembering)\s+(?:about\s+)?(?:that\s+)?",
    re.I,
)
_CORRECTION = re.compile(
    r"^(?:no[,.!:;]\s*|nope\b|that['\u2019]s\s+(?:wrong|not\s+(?:right|it|what))|that\s+is\s+(?:wrong|not)"
    r"|wrong[,.!]|actually[,]?\s|i\s+said\b|i\s+told\s+you\b|stop\s+\w|not\s+\S+(?:\s+\S+)?,?\s+but\s)",
    re.I,
)
_ASSENT = re.compile(
    r"\b(?:fine|go ahead|thanks|thank you|looks good|no problem|no worries|that works|sounds good)\b", re.I
)
_FAILURE = re.compile(
    r"\b(?:error|errors|failed|failure|fatal|traceback|exception|command not found|no such file"
    r"|permission denied|not recognized|cannot|can't|could not|exit (?:code|status) [1-9]\d*"
    r"|non-zero exit|segmentation fault)\b",
    re.I,
)
_EXIT = re.compile(r"(?:exit|exited with)\s+(?:code|status)\b", re.I)
_CLEAN = re.compile(r"\b(?:0 errors|no errors|0 failed|error[s]?: 0|passed)\b", re.I)
_WORD = re.compile(r"[A-Za-z][\w.\-/]+")
_FIRST_PERSON = re.compile(r"\b(?:i\s+am|i['\u2019]m|my|i\s+prefer|i\s+like|i\s+use|i\s+work)\b", re.I)
_TO_AGENT = re.compile(r"\b(?:you|your|don['\u2019]t|never|always|stop|do not)\b", re.I)


def spot(segments: Sequence[Segment]) -> list[Candidate]:
    """Candidates from ``segments`` in transcript order (see the module docstring)."""
    found: list[Candidate] = []
    used_fixes: set[int] = set()
    for i, segment in enumerate(segments):
        if segment.cls == "USER":
            candidate = _from_user(segments, i)
            if candidate is not None:
                found.append(candidate)
        elif segment.cls == "ACT" and i not in used_fixes:
            scar = _scar(segments, i)
            if scar is not None:
                found.append(scar[0])
                used_fixes.add(scar[1])
    return found


def cut(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` stripped and, past ``limit`` characters, cut back to a word boundary —
    still a verbatim slice of it."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip()


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each a verbatim slice of it (``kura.text.sentences``: a dot
    inside ``Fly.io`` or after ``e.g.`` ends none)."""
    return split_sentences(text)


# -- the human's words --------------------------------------------------------------------


def _from_user(segments: Sequence[Segment], i: int) -> Candidate | None:
    text = segments[i].text
    after_agent = i > 0 and segments[i - 1].cls in ("SELF", "ACT", "TOOL")
    parts = sentences(text)
    if after_agent and parts and _corrects(parts[0]) and not _assent(parts[0]):
        said = cut(" ".join(parts[:2]) if _verbatim(" ".join(parts[:2]), text) else parts[0])
        context = _last_self(segments, i)
        quotes = [f"[USER] {said}"] + ([f"[SELF] {context}"] if context else [])
        candidate = _candidate("correction", "feedback", said, quotes, why="the user corrected the agent")
        candidate["topic"] = topic_of(parts[0])
        return candidate
    for sentence in parts:
        if not_kept(sentence) or _asked(sentence) is None or len(sentence) < MIN_CHARS or _question(sentence):
            continue
        said = cut(sentence)
        kind = _user_kind(sentence)
        return _candidate(
            "remember", kind, said, [f"[USER] {said}"], why="the user asked for this to be kept"
        )
    return None


def not_kept(sentence: str) -> bool:
    """Whether ``sentence`` asks kura not to keep something ("never remember that …", "don't
    remember …") or to drop it ("forget that …"): never a memory saying what follows."""
    sentence = sentence.strip()
    return _NOT_KEPT.match(sentence) is not None or languages.refused(sentence)


def forgets(segments: Sequence[Segment]) -> list[str]:
    """What the person asked to forget ("forget that X", "please forget about X"): each X,
    in their words, for the pass to name the memory it matches (never to write X)."""
    found = []
    for segment in segments:
        if segment.cls != "USER":
            continue
        for sentence in sentences(segment.text):
            if _question(sentence) or len(sentence) < MIN_CHARS:
                continue
            asked = _FORGET.match(sentence)
            what = sentence[asked.end() :] if asked is not None else languages.forgotten(sentence)
            if what is not None:
                found.append(what.strip(" ,.;:!\u3001\u3002\uff0c\uff01"))
    return [x for x in found if x]


def _assent(sentence: str) -> bool:
    """A "no" that agrees ("no, that's fine") or a question is not a correction."""
    return _question(sentence) or _ASSENT.search(sentence) is not None


def _question(sentence: str) -> bool:
    return sentence.endswith(("?", "\uff1f"))


def _corrects(sentence: str) -> re.Match[str] | None:
    return _CORRECTION.match(sentence) or languages.corrected(sentence)


def _asked(sentence: str) -> tuple[int, int] | None:
    """Where in ``sentence`` the request to keep sits, as (start, end); None for none."""
    match = _REMEMBER.match(sentence)
    if match is not None:
        return match.end(), len(sentence)
    found = languages.asked(sentence)
    return found[1:] if found is not None else None


def _user_kind(sentence: str) -> str:
    if _FIRST_PERSON.search(sentence):
        return "user"
    if _TO_AGENT.search(sentence):
        return "feedback"
    return "project"


def _last_self(segments: Sequence[Segment], i: int) -> str:
    for segment in reversed(segments[max(0, i - 4) : i]):
        if segment.cls == "SELF":
            last = sentences(segment.text)
            return cut(last[-1]) if last and len(last[-1]) >= MIN_CHARS else ""
    return ""


def _verbatim(piece: str, text: str) -> bool:
    return piece in text


def _candidate(rule: Rule, kind: str, said: str, quotes: list[str], *, why: str) -> Candidate:
    return Candidate(topic=topic_of(said), kind=kind, why=why, quotes=quotes, rule=rule, said=said)


def topic_of(said: str) -> str:
    """The sentence with its trigger phrase taken off ("remember that X" → "X")."""
    rest = request_of(said)
    return (rest[:1].upper() + rest[1:]) if rest else said


def request_of(said: str) -> str:
    """What the person asked to be kept, in their words: ``said`` without its trigger
    phrase or its closing punctuation — still a verbatim slice of it."""
    span = _asked(said)
    rest = said[span[0] : span[1]] if span else said
    if not span:
        opener = _corrects(said)
        rest = said[opener.end() :] if opener else said
    return rest.strip(" ,.;:!?\u3001\u3002\uff0c\uff1a\uff01\uff1f")


# -- scars: failed, then fixed ------------------------------------------------------------


def _scar(segments: Sequence[Segment], i: int) -> tuple[Candidate, int] | None:
    failed = _result(segments, i)
    if failed is None or not failed_output(failed):
        return None
    name, words = _call(segments[i].text)
    for k in range(i + 2, min(len(segments), i + 2 + LOOKAHEAD)):
        if segments[k].cls == "USER":
            return None  # the human stepped in: whatever came next is not a clean fix
        if segments[k].cls != "ACT":
            continue
        output = _result(segments, k)
        other_name, other_words = _call(segments[k].text)
        if output is None or other_name != name or not _related(words, other_words):
            continue
        if segments[k].text == segments[i].text:
            return None  # the same call passing on a retry is flakiness, not a lesson
        if failed_output(output):
            return None  # the same thing failed again; wait for a later call to succeed
        return _scar_candidate(segments[i].text, failed, segments[k].text, output), k
    return None


def failed_output(text: str) -> bool:
    """Whether a tool's output reports a failure."""
    return _FAILURE.search(text) is not None and _CLEAN.search(text) is None


def _result(segments: Sequence[Segment], i: int) -> str | None:
    if i + 1 < len(segments) and segments[i + 1].cls == "TOOL":
        return segments[i + 1].text
    return None


def _call(act: str) -> tuple[str, list[str]]:
    """A tool call's name and the words of its command (or of its whole input)."""
    name, _, rest = act.partition(": ")
    try:
        data = json.loads(rest) if rest else {}
    except ValueError:
        data = rest
    text = str(data.get("command") or rest) if isinstance(data, dict) else str(data)
    return name, _WORD.findall(text)


def _related(a: list[str], b: list[str]) -> bool:
    if not a or not b:
        return False
    if a[0] == b[0]:
        return True
    left, right = set(a), set(b)
    return len(left & right) / len(left | right) >= 0.4


def telling_line(output: str) -> str:
    """What a failed ``output`` says went wrong, as one line the gate matches verbatim.

    The first line naming a failure that is not just an exit code (the cause, not the
    code), with the lines around it (before, then after) when it is too short to quote
    alone; else the last other line long enough to quote — ``make: *** No rule to make
    target 'test'.  Stop.`` names none of the failure words, and the cause sits next to the
    exit code; else the exit-code line; else the whole output. Lines are joined and
    whitespace runs folded, which the gate and the floor forgive, so no line break can
    split the quotation.
    """
    lines = [ln for ln in map(normalise, output.splitlines()) if ln]
    for at, line in enumerate(lines):
        if _FAILURE.search(line) and not _EXIT.match(line):
            start, end = at, at + 1
            while len(" ".join(lines[start:end])) < MIN_CHARS and (start > 0 or end < len(lines)):
                start, end = (start - 1, end) if start > 0 else (start, end + 1)
            return cut(" ".join(lines[start:end]))
    quotable = [ln for ln in lines if len(ln) >= MIN_CHARS]
    causes = [ln for ln in quotable if not _EXIT.match(ln)]
    return cut(next(iter(causes[::-1] or quotable), normalise(output)))


def command_of(act: str) -> str:
    """The command of a rendered tool call (``Bash: {"command": …}``), else the call itself,
    cut to 120 characters with its backticks made quotes, so it can sit in a code span."""
    text = str(act or "")
    _, _, rest = text.partition(": ")
    try:
        data = json.loads(rest)
    except ValueError:
        return cut(text, 120)
    command = data.get("command") if isinstance(data, dict) else None
    shown = command if isinstance(command, str) and command in text else text
    return cut(shown.replace("`", "'"), 120)


def _scar_candidate(failed_act: str, failed: str, fixed_act: str, output: str) -> Candidate:
    failed_line = telling_line(failed)
    quotes = [f"[TOOL] {failed_line}", f"[ACT] {cut(failed_act)}", f"[ACT] {cut(fixed_act)}"]
    shown = cut(next((normalise(ln) for ln in output.splitlines() if len(ln.strip()) >= MIN_CHARS), ""))
    if shown:
        quotes.append(f"[TOOL] {shown}")
    _, failed_words = _call(failed_act)
    _, fixed_words = _call(fixed_act)
    topic = " ".join(fixed_words[:6]) or fixed_act
    return Candidate(
        topic=topic,
        kind="project",
        why="the first attempt failed and a later one worked",
        quotes=quotes,
        rule="scar",
        failed=failed_line,
        failed_call=cut(failed_act),
        fixed=cut(fixed_act),
        output=shown,
        keywords=[w for w in fixed_words if w not in failed_words][:4],
    )
