"""The final-surface floor: the last check on composed text before it may be poured.

A writer model is given gated evidence and asked for a title, description and body, and it
will still embellish: it divides two timings into "390x faster", credits the human with a
decision nobody made, puts a tidy sentence in someone's mouth, links a memory that does not
exist. Prompting does not stop that, so this floor reads the composed text back against the
evidence and names every claim the evidence does not carry. It never edits; it refuses.

Decisions the spec left open, made here:

- A number stated as fact is licensed only by TOOL and ACT evidence — machine output and
  invoked tools — never by SELF (the agent's own numbers are the thing being guarded
  against) and not by USER either, matching the gate's number rule so the two never
  disagree. The one exception is the human's own word kept as such: a number inside a
  quotation that is verbatim in a USER segment *and* attributed to the user on its line
  (``The user said: "the deploy window is 30 minutes"``, ``Corrected by the user: "…"``)
  is licensed, because the memory then records that the user said it, not that it is so.
  The quotation must hold three words or more: ``The user said: "30"`` lifts the number out
  of what it was about.
  A SELF quotation put in the user's mouth licenses nothing: it is not verbatim in USER.
- A token that starts with a letter and holds digits (``eu-west-3``, ``gpt-4o``, ``gw-2``,
  ``python3.12``, ``INC-0011``, ``v2.3.1``, ``x86_64``) is a name, not a quantity: it is no
  number claim, and it must appear as written (case aside) in the USER, TOOL or ACT
  evidence — a name with one digit changed is another name. Digits first is a quantity,
  glued unit or not (``30 minutes``, ``30min``, ``512MB``, ``3-replica``), and so is a bare
  number that names something (``port 8080``): a wrong port harms like a wrong count.
- A number is compared by value, as one whole token: ``1,200`` equals ``1200``, ``2.30``
  equals ``2.3`` and ``2.5E6`` equals ``2500000`` (same value, no arithmetic), but ``2026`` is
  never licensed by a ``20`` and a ``26``, and ``390`` is refused unless 390 was written.
- A signed number (``-5``, ``+12``) needs the same signed value in the evidence; an unsigned
  one is licensed by either sign (``dropped 5%`` from ``-5%`` is rewording, ``-5`` from ``5``
  is an invented direction). A dash with a space after it (a bullet) or a letter before it
  (``gpt-4``) is not a sign.
- A range ``3–5`` (any dash, spaces allowed, one line) is one claim: it is reported whole,
  and both of its ends must be numbers in the evidence.
- Dates (``2026-11-30``) and clock times (``07:32``) are single tokens that must appear as
  such; their parts (year, day, hour…) also license those numbers on their own. Versions
  with three or more parts (``3.12.1``) must appear literally. A markdown list marker
  (``1.`` to ``99.`` at a line start) is not a claim; numbers written in words are not checked.
- A quotation is "presented as speech" when it is in double or curly quotes and is three
  words or more, or follows a speech verb (said, asked, wrote, …, or a colon). It must be
  verbatim (whole words, whitespace-normalised, trailing punctuation forgiven, ``…`` an allowed elision
  whose parts appear in order in one segment) in some evidence segment.
- Quotation marks are paired left to right, one line at a time, never nested: in
  ``"npm error Missing script: "start""`` no reading is the one the writer meant. So a
  composer writes a quotation with ``quote``: folded to one line, between the first kind of
  marks (straight, curly, guillemets) it does not itself hold — ``“npm error Missing script:
  "start"”`` — which this floor reads back as exactly one passage, checked whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

from kura.distill import speech
from kura.files.body import links
from kura.text.secrets import redact
from kura.transcripts.segments import Segment, normalise

_NUM = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(
    r"(?<![\d.])(?:"
    r"(?P<date>\d{4}-\d{2}-\d{2})(?!\d)"
    r"|(?P<time>\d{1,2}:\d{2}(?::\d{2})?)(?![\d:])"
    r"|(?P<version>\d+\.\d+\.\d+(?:\.\d+)*)"
    rf"|(?P<sign>(?<![\w)\]])[-+\u2212])?(?P<num>{_NUM})(?:[ \t]*[-\u2013\u2014][ \t]*(?P<end>{_NUM}))?"
    r")"
)
_LIST_MARKER = re.compile(r"^[ \t]*\d{1,2}[.)][ \t]", re.M)
_LINK = re.compile(r"\[\[([^\]|#]*)(?:[|#][^\]]*)?\]\]")
_NAME = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*")
_BY_USER = re.compile(r"\b(?:the\s+)?(?:users?|humans?)(?:['\u2019]s)?\b[^\"\u201c\u00ab\n.!?;]{0,40}$", re.I)

_WHO = (
    r"(?:the\s+|our\s+|my\s+)?(?:users?|humans?|owners?|operators?|maintainers?|clients?|customers?"
    r"|boss|team|person|people)|you|they|he|she|we"
)
_AUX = r"(?:has|have|had|did|do|does|just|already|also|then|finally|explicitly|clearly|firmly|all|both)"
_ACTS = (
    r"decided|decides|agreed|agrees|chose|chosen|choose|asked|asks|requested|requests|approved|approves"
    r"|wanted|wants|want|preferred|prefers|prefer|told|instructed|confirmed|insisted|opted|picked"
    r"|selected|settled|signed\s+off|directed|ordered|demanded|specified|ruled|vetoed|rejected"
    r"|mandated|said|says|concluded|resolved|greenlit|okayed|ok'd|endorsed|committed"
)
_CREDIT = re.compile(
    rf"(?<!if )\b(?:{_WHO})(?:['\u2019](?:ve|d|re|s))?(?:\s+{_AUX})*\s+(?:{_ACTS})\b"
    r"|\b(?:was|were|been|got)\s+(?:\w+ly\s+)?(?:decided|agreed(?:\s+on)?|approved|requested"
    r"|asked\s+for|signed\s+off|mandated|greenlit|okayed|vetoed|settled\s+on"
    r"|(?:chosen|picked|selected|instructed)\s+by\s+(?:the\s+)?(?:users?|humans?|owners?|you|them|us|him|her))\b"
    r"|\b(?:the\s+)?(?:user|human|owner|team)['\u2019]s\s+(?:own\s+)?(?:decision|choice|call|request|instruction"
    r"|preference|approval|wish|idea|ask|direction|verdict|pick)s?\b"
    r"|\b(?:your|their|our)\s+(?:own\s+)?(?:decision|choice|call|request|instruction|approval|verdict)s?\b"
    r"|\bas\s+(?:requested|agreed|decided|instructed|asked|discussed|approved|directed)\b"
    r"|\b(?:per|at|by|on|following)\s+(?:the\s+)?(?:user|human|owner|your|their|our)(?:['\u2019]s)?\s+"
    r"(?:request|instruction|direction|decision|wish|say-so|orders?|preference)s?\b"
    r"|\b(?:user|owner|human)[-\s](?:approved|requested|chosen|decided|mandated)\b",
    re.I,
)
_QUOTED = re.compile(
    r"\"([^\"\n]+)\"|\u201c([^\u201c\u201d\n]+)\u201d|\u00ab([^\u00ab\u00bb\n]+)\u00bb"
    r"|\u300c([^\u300c\u300d\n]+)\u300d|\u300e([^\u300e\u300f\n]+)\u300f|\u201e([^\u201e\u201c\u201d\n]+)[\u201c\u201d]"
)  # "…", “…”, «…», 「…」, 『…』, „…“
_MARKS = (('"', '"'), ("\u201c", "\u201d"), ("\u00ab", "\u00bb"))  # the pairs ``quote`` writes
_SPEECH = re.compile(
    r"(?:\b(?:said|says|say|asked|asks|wrote|writes|told\s+\w+|replied|answered|put\s+it|insisted"
    r"|noted|stated|quoted|added|exclaimed|declared|explained)\b[^\"\u201c\n]{0,12}|[:\uff1a]\s*)$",
    re.I,
)
_ELLIPSIS = re.compile(r"\s*(?:\u2026|\.\.\.)\s*")


def quote(text: str) -> str | None:
    """``text`` folded to one line between quotation marks it does not hold, so the floor
    reads it back as one passage; None when it holds every kind (see the module docstring)."""
    text = normalise(text)
    for opening, closing in _MARKS:
        if opening not in text and closing not in text:
            return f"{opening}{text}{closing}"
    return None


def credits_human(text: str) -> bool:
    """Whether ``text`` credits a person with a decision, request or statement."""
    return _CREDIT.search(text) is not None


def numbers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every number claim in ``text``: (as written, the keys that license it, one per part).

    A plain number has one key, a range two (both must be licensed), a date or time one
    literal key. The digits of a name (``eu-west-3``) are no number claim.
    """
    return [(written, keys) for _, written, keys in _claims(text)]


def names(text: str) -> set[str]:
    """The names with digits in ``text`` (``eu-west-3``, ``gpt-4o``), case folded."""
    return {m.group(0).casefold() for m in _NAME.finditer(_blank(_LINK, text)) if _digits(m.group(0))}


def stripped(text: str, evidence_segments: Sequence[Segment]) -> str:
    """``text`` with every number the evidence does not license replaced by ``…``: the
    claim is taken out, visibly, and the words around it stay."""
    licensed = licensed_numbers(evidence_segments)
    spoken = _blank_spans(text, _user_quoted(text, evidence_segments))
    out, at = [], 0
    for span, _, keys in _claims(spoken):
        if all(_is_licensed(k, licensed) for k in keys):
            continue
        out += [text[at : span[0]], "\u2026"]
        at = span[1]
    return "".join(out) + text[at:]


def _claims(text: str) -> list[tuple[tuple[int, int], str, tuple[str, ...]]]:
    """Number claims with their place in ``text`` (links, list markers and names are blanked
    out first, so the places stay those of ``text``)."""
    text = _blank(_LINK, _blank(_LIST_MARKER, text))
    text = _NAME.sub(lambda m: " " * len(m.group(0)) if _digits(m.group(0)) else m.group(0), text)
    claims: list[tuple[tuple[int, int], str, tuple[str, ...]]] = []
    for match in _TOKEN.finditer(text):
        written = match.group(0).strip()
        span = (match.start() + len(match.group(0)) - len(match.group(0).lstrip()), match.end())
        if match["date"] or match["time"] or match["version"]:
            literal = match["date"] or match["time"] or match["version"]
            claims.append((span, written, ("=" + literal,)))
        elif match["end"]:
            start = _value_key(match["num"], match["sign"])
            claims.append((span, written, (start, _value_key(match["end"], None))))
        else:
            claims.append((span, written, (_value_key(match["num"], match["sign"]),)))
    return claims


def _blank(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _digits(word: str) -> bool:
    return any(c.isdigit() for c in word)


def licensed_numbers(segments: Iterable[Segment]) -> set[str]:
    """The number keys the TOOL and ACT segments license (see the module docstring)."""
    keys: set[str] = set()
    for segment in segments:
        if segment.cls not in ("TOOL", "ACT"):
            continue
        for _, parts in numbers(redact(segment.text)[0]):  # a key's digits license nothing
            for key in parts:
                keys.add(key)
                if key.startswith("="):
                    keys.update("~" + _value_key(p, None) for p in re.split(r"[-:]", key[1:]))
                elif key[0] in "+-":
                    keys.add("~" + key[1:])
                else:
                    keys.add("~" + key)
    return keys


def violations(text: str, evidence_segments: Sequence[Segment], store_slugs: Iterable[str]) -> list[str]:
    """Every claim in composed ``text`` that the evidence does not carry, as messages.

    An empty list means the text may be poured. A secret is redacted before any check, so
    no message can echo it.
    """
    text, secrets = redact(text)
    found = [f"holds a secret ({kind}); it was redacted and may not be written" for kind in secrets]
    found += _number_violations(text, evidence_segments)
    found += _name_violations(text, evidence_segments)
    if credits_human(text) and not any(s.cls == "USER" for s in evidence_segments):
        phrase = normalise(_CREDIT.search(text).group(0))  # type: ignore[union-attr]
        found.append(f'credits the human ("{phrase}") but no USER quote survived the gate')
    found += _quotation_violations(text, evidence_segments)
    slugs = set(store_slugs)
    for target in links(text):  # as every reader of a memory finds them: code is not a link
        if target not in slugs:
            found.append(f"[[{target}]] names no memory in the store")
    return found


def _number_violations(text: str, evidence: Sequence[Segment]) -> list[str]:
    licensed = licensed_numbers(evidence)
    found: list[str] = []
    for _, written, keys in _claims(_blank_spans(text, _user_quoted(text, evidence))):
        missing = [k for k in keys if not _is_licensed(k, licensed)]
        if not missing:
            continue
        if len(keys) == 2:
            found.append(f'the range "{written}" is not in the TOOL/ACT evidence (both ends must be)')
        else:
            found.append(
                f'the number "{written}" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)'
            )
    return found


def _name_violations(text: str, evidence: Sequence[Segment]) -> list[str]:
    known: set[str] = set()
    for segment in evidence:
        if segment.cls in ("USER", "TOOL", "ACT"):
            known |= names(redact(segment.text)[0])
    why = "is not in the USER, TOOL or ACT evidence (a name with digits is quoted as written)"
    return [f'the name "{name}" {why}' for name in sorted(names(text) - known)]


def _user_quoted(text: str, evidence: Sequence[Segment]) -> list[tuple[int, int]]:
    """The places of the quotations in ``text`` that are the user's own words, kept as
    such: attributed to the user on their line and verbatim in a USER segment."""
    said = [_fold(s.text) for s in evidence if s.cls == "USER"]
    spans: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        lead = text[max(line_start, match.start() - 60) : match.start()]
        if not (_BY_USER.search(lead) or speech.by_user(lead)) or not _spoken(lead, text[match.end() :]):
            continue
        quoted = next(g for g in match.groups() if g is not None)
        if speech.words_in(quoted) >= 3 and any(_verbatim(quoted, hay) for hay in said):
            spans.append((match.start(), match.end()))
    return spans


def _blank_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _is_licensed(key: str, licensed: set[str]) -> bool:
    if key.startswith(("=", "+", "-")):
        return key in licensed
    return "~" + key in licensed


def _value_key(number: str, sign: str | None) -> str:
    try:
        value = Decimal(number.replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the token pattern only yields decimals
        return "=" + number
    canonical = format(value.normalize(), "f")
    if sign in ("-", "\u2212"):
        return "-" + canonical
    return ("+" if sign == "+" else "") + canonical


def _quotation_violations(text: str, evidence: Sequence[Segment]) -> list[str]:
    haystacks = [_fold(s.text) for s in evidence]
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        quoted = next(g for g in match.groups() if g is not None)
        lead = text[max(0, match.start() - 40) : match.start()]
        if not _spoken(lead, text[match.end() :]) and speech.words_in(quoted) < 3:
            continue
        if not any(_verbatim(quoted, hay) for hay in haystacks):
            shown = normalise(quoted)[:80]
            found.append(f'the quotation "{shown}" is not verbatim in the evidence')
    return found


def _spoken(lead: str, trail: str) -> bool:
    """Whether a quotation between ``lead`` and ``trail`` is presented as speech: a speech
    verb or a colon before it, or (Japanese, Korean) a speech verb right after it."""
    return bool(_SPEECH.search(lead) or speech.said_before(lead) or speech.said_after(trail))


def _fold(text: str) -> str:
    return normalise(text).replace("\u2019", "'").replace("\u2018", "'")


def _verbatim(quoted: str, haystack: str) -> bool:
    folded = _fold(quoted)
    candidates = {folded, folded.rstrip(".,;:!?")}
    for candidate in candidates:
        parts = [p for p in _ELLIPSIS.split(candidate) if p]
        if parts and _in_order(parts, haystack):
            return True
    return False


def _in_order(parts: list[str], haystack: str) -> bool:
    at = 0
    for part in parts:
        head = r"(?<!\w)" if speech.bounded(part[0]) else ""
        tail = r"(?!\w)" if speech.bounded(part[-1]) else ""
        found = re.compile(head + re.escape(part) + tail).search(haystack, at)
        if found is None:
            return False
        at = found.end()
    return True
