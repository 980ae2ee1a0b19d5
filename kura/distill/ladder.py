"""The ladder's producers: facts nobody asked to remember, carried across on evidence.

The rule-based spotter (``kura.distill.rules``) writes only what a person asked for, or what
corrected the agent or cost a failure; a fact said in passing — "the staging database is
db-staging.internal on port 5433" — it lets go. Here such a statement becomes a *mention*
in the store's scratch (``kura.life.scratch``), and mentions make witnesses:

- **TIDE** (0.30): a statement that fell out of the working window — more than
  ``window_tokens`` of the session were read after it. It waits in scratch (hold 0.30).
- **CALLUS** (0.25): the same claim (content words, ``kura.text.claim_match`` — never an
  embedding) in another, unrelated session. TIDE + CALLUS is 0.55: it crosses (promote 0.50).

A statement is a sentence of the human's words, or a short one-line tool output, that is
specific (a path, a dotted or dashed name, an identifier, a number, a date, a proper name),
declarative (no question), not addressed to the agent (no "you", no request to remember —
the spotter has those — no correction opener) and not instruction-like
(``kura.text.quarantine``: such a span never becomes a candidate). The agent's own words
(SELF) and its calls (ACT) are never read: the agent repeating itself is not evidence.
Secrets are redacted before anything is kept; a statement a purge buried (a tombstone), one
a live memory already says, and one that revises a live memory (that is a correction, FIX,
and the spotter's) are passed over. Crossing is the same road as any candidate, once each
witness is found again, at its line, in the store's own journal it cites (scratch is derived
state, so nothing crosses on its say-so): the gate against the witnesses' quotes, the
novelty check, the template composer, the final-surface floor, then a draft — poured at once
through the verified door when the store allows direct writes. The draft records every
witness (``witness:``/``also:`` flags), so ``kura why`` shows the TIDE and the CALLUS with
their sessions.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kura.distill import drafts as dr
from kura.distill.candidate import Candidate
from kura.distill.compose import compose
from kura.distill.final_check import violations
from kura.distill.gate import judge
from kura.distill.novelty import COVERED_SHARE, covers
from kura.distill.rules import _CORRECTION, _REMEMBER, cut, failed_output, not_kept, sentences, topic_of
from kura.distill.tool_claims import kind_of, normative
from kura.files import witness as wt
from kura.life import scratch as sc
from kura.life.purge import buried
from kura.store.store import Store
from kura.text.claim_match import SAME_SHARE, negated, relate, words
from kura.text.moves import moved
from kura.text.not_facts import not_a_fact
from kura.text.quarantine import reads_like_instruction
from kura.text.same_claim import identifiers, restated
from kura.text.secrets import redact
from kura.text.tokens import estimate_tokens
from kura.transcripts.segments import Segment, normalise
from kura.transcripts.sources import read_from

WINDOW_TOKENS = 131072  # the working window when the store's [prefill] names none
TOOL_CHARS = 200  # a tool output is a statement only when it is one short line
MIN_WORDS = 3  # content words a statement needs to be a claim at all
MAX_CHARS = 300  # a statement, not a pasted paragraph
_CODE = "{}();=<>|$"
_QUESTION = re.compile(
    r"^(?:what|how|why|where|when|who|which|whose|can|could|would|should|shall|will|is|are|am|do|does"
    r"|did|have|has|may|might|must)\b",
    re.I,
)
_TO_AGENT = re.compile(r"\b(?:you|your|yours|let['\u2019]?s|please|pls|thanks|thank)\b", re.I)
_ASKED = re.compile(  # an order the quarantine's verbs leave out, to the agent at work
    r"^(?:(?:now|then|so|ok(?:ay)?|also|and|next|first|just|maybe|quickly)[,\s]+)*"
    r"(?:look|check|fix|try|see|find|read|go|get|help|refactor|implement|investigate|review|clean|debug"
    r"|explain|show|list|search|grep|edit|build|test|keep|wait|continue|finish|let|move|put|take|bump"
    r"|revert|rerun|retry|compare|verify|figure|write|draft|summari[sz]e|note|mark|tidy|sort|split|merge)\b",
    re.I,
)
_SPECIFIC = re.compile(
    r"\d"  # a number, a date, a version
    r"|[\w~.]*/[\w.\-/]+"  # a path
    r"|\b\w+[._\-]\w+"  # a dotted, dashed or snake name (db-staging.internal, make_test)
    r"|(?<=\w )(?<![.!?] )[A-Z][a-zA-Z]+"  # a proper name inside the sentence
    r"|\b[a-z]+[A-Z]\w*"  # camelCase
    r"|(?<![\w-])--?[A-Za-z][\w-]*"  # a command-line flag (--write, -f)
    r"|\b(?:npm|npx|yarn|pnpm|cargo|pip|pipx|python3?|uv|poetry|docker|kubectl|git|mvn|gradle"
    r"|bundle|rake|brew|terraform|helm|tox|nox|pytest)\s+[a-z]"  # a command: an identifier
    r"|\bmake\s+(?!sure\b|it\b|a\b|an\b|the\b|that\b|this\b|them\b|do\b|up\b|sense\b)[a-z]"
)

# A tool's report on its own run — a log level or timestamp first, a commit hash first (git
# log), a line number first (cat -n, grep -n: a file's content, not a statement), a diff
# stat, a timing, a test tally, an installer's progress — is not a fact about the project,
# however specific it looks.
_STATUS = re.compile(
    r"^\s*(?:\[?(?:info|debug|trace|notice|warn(?:ing)?|error|fatal|critical)\]?(?:\s|:|-)"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d"
    r"|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{5,40}\b"
    r"|\d+\s*[:|]\s|[\w./~-]+:\d+:"
    r"|(?:collecting|downloading|installing|successfully|requirement already|compiling|running|finished)\b)"
    r"|\b\d+\s+files?\s+changed\b|\binsertions?\(\+\)|\bdeletions?\(-\)"
    r"|\b(?:in|took|after)\s+\d+(?:\.\d+)?\s*(?:ms|s|secs?|seconds?|minutes?|min)\b"
    r"|\b\d+\s+(?:passed|failed|errors?|warnings?|skipped|deselected)\b",
    re.I,
)
_NUMBERS = re.compile(r"\d+")
# A credential named in a sentence: its value is no token pattern the redactor knows, so the
# sentence is never held ("the staging db password is Tr0ub4dor&3" must not become a memory).
_CREDENTIAL = re.compile(
    r"\b(?:pass(?:word|wd|phrase)|pwd|secret|token|api[\s_-]?key|access[\s_-]?key|private[\s_-]?key"
    r"|credentials?|auth(?:entication)?[\s_-]?code|pin\s*(?:code|number)?)\b",
    re.I,
)

Stage = Callable[..., object]


@dataclass(kw_only=True, slots=True)
class Climbed:
    """What the ladder did in one stretch, for the pass's metrics."""

    mentions: int = 0
    crossed: list[str] = field(default_factory=list)  # draft paths or poured slugs
    poured: int = 0
    dropped: list[str] = field(default_factory=list)  # why a crossing was refused


def statements(segment: Segment) -> list[str]:
    """The sentences of ``segment`` that may become a claim (see the module docstring)."""
    if segment.cls == "TOOL":
        if "\n" in segment.text.strip() or len(segment.text) > 4 * TOOL_CHARS:
            return []  # a tool output is a statement only when it is one short line
        line = normalise(segment.text)
        quiet = len(line) <= TOOL_CHARS and not failed_output(line) and _STATUS.search(line) is None
        return [line] if quiet and not normative(line) and qualifies(line) else []
    if segment.cls != "USER":
        return []
    return [s for s in sentences(segment.text) if qualifies(s)]


def qualifies(sentence: str) -> bool:
    """A specific, declarative claim not addressed to the agent and not instruction-like."""
    text = normalise(sentence)
    if not 12 <= len(text) <= MAX_CHARS or text.endswith("?") or _QUESTION.match(text):
        return False
    if sum(text.count(c) for c in _CODE) >= 3 or failed_output(text):
        return False  # code, a log line, a failure: the spotter's scars, not a fact said in passing
    if _REMEMBER.match(text) or _CORRECTION.match(text) or _TO_AGENT.search(text) or _ASKED.match(text):
        return False
    if not_kept(text) or not_a_fact(text):
        return False  # a person's "don't keep this", the task they set, a tool's acknowledgement
    if _SPECIFIC.search(text) is None or len(words(text)) < MIN_WORDS or _CREDENTIAL.search(text):
        return False
    return not reads_like_instruction(text)


def read(
    store: Store,
    source: str,
    segments: Sequence[Segment],
    *,
    window_tokens: int = WINDOW_TOKENS,
    live: Sequence[tuple[str, str, str]] = (),
    graves: frozenset[str] = frozenset(),
    fallback_when: str = "",
    compacted: Sequence[int] = (),
) -> tuple[int, list[sc.Item]]:
    """Record a stretch's sessions and mentions in scratch; (mentions added, the items now at
    or above promote). ``live`` are the current memories (slug, title, text); ``compacted``
    the stretch's lines that mark a compaction (``compactions``)."""
    memories = _Index()
    for slug, name, text in live:
        memories.add(slug, f"{name}. {text.split(chr(10), 1)[0]}", f"{name} {text}")

    def change(scratch: sc.Scratch) -> tuple[int, list[sc.Item]]:
        items = _Index()
        for item in scratch.items.values():
            items.add(item.id, item.claim, item.claim)
        read_before = {sid: dict(s.through) for sid, s in scratch.sessions.items()}
        added, touched = 0, set()
        for seg in segments:
            session = seg.session or source
            if seg.line and seg.line <= read_before.get(session, {}).get(source, 0):
                continue  # read before, by a pass that stopped before its watermark moved
            _count(scratch, seg, session, source, seg.when or fallback_when)
            touched.add(session)
            at = scratch.sessions[session].tokens - estimate_tokens(seg.text)
            for text in statements(seg):
                claim = redact(text)[0]
                if buried([claim], graves) or memories.revised(claim) or memories.covered(claim):
                    continue
                mention = sc.Mention(session=session, source=source, quote=cut(claim, sc.QUOTE_CHARS),
                                     cls=seg.cls, line=seg.line, turn=seg.turn,
                                     when=seg.when or fallback_when, at=at)  # fmt: skip
                added += _mention(scratch, items, claim, mention)
        for item in list(scratch.items.values()):
            scratch.items[item.id] = _aged(
                item, scratch, touched, (window_tokens, source, max(compacted, default=0))
            )
        return added, [i for i in scratch.items.values() if i.weight() >= sc.PROMOTE]

    return sc.update(store, change)  # type: ignore[no-any-return]


class _Index:
    """Claims by their content words, so a statement is compared only with the claims that
    share enough of its words (a restatement or a revision shares at least two): those must
    hold one of its rarest words, so only those words' claims are looked at."""

    def __init__(self) -> None:
        self.claims: dict[str, tuple[frozenset[str], bool]] = {}
        self.texts: dict[str, tuple[frozenset[str], bool]] = {}
        self.holding: dict[str, set[str]] = {}
        self.said: dict[str, str] = {}

    def add(self, key: str, claim: str, text: str) -> None:
        self.said[key] = claim
        self.claims[key] = _read(claim)
        self.texts[key] = self.claims[key] if text == claim else _read(text)
        for word in self.texts[key][0] | self.claims[key][0]:
            self.holding.setdefault(word, set()).add(key)

    def near(self, said: frozenset[str], share: float = 0.0) -> list[str]:
        """The keys sharing at least two of ``said`` and ``share`` of them."""
        need = max(2, math.ceil(share * len(said) - 1e-9))
        if need > len(said):
            return []
        rarest = sorted(said, key=lambda w: (len(self.holding.get(w, ())), w))[: len(said) - need + 1]
        keys = set().union(*(self.holding.get(w, set()) for w in rarest))
        return sorted(k for k in keys if len(said & (self.texts[k][0] | self.claims[k][0])) >= need)

    def same(self, claim: str) -> str | None:
        """A restatement holds all the new claim's words, or 80% of both: ``SAME_SHARE`` of its
        own — and the same numbers: build 4711 and build 4712, or two commits' hashes, share
        most of their words and are not one claim. Or the same fact in other words: one
        identifier and its nouns shared (``kura.text.same_claim``)."""
        read, digits = _read(claim), _numbers(claim)
        alike = [k for k in self.near(read[0], SAME_SHARE) if relate(read, self.claims[k]) == "same"]
        named = set().union(*(self.holding.get(w, set()) for w in identifiers(read[0])))
        alike += [k for k in sorted(named) if restated(read, self.claims[k])]  # in other words
        return next((k for k in alike if _numbers(self.said[k]) == digits), None)

    def revised(self, claim: str) -> bool:
        read = _read(claim)
        near = (k for k in self.near(read[0]) if relate(read, self.claims[k]) == "revision")
        return next(near, None) is not None or moved(claim, self.said.items()) is not None  # a move too

    def covered(self, claim: str) -> bool:
        """A memory holds nearly every content word of the claim, with its polarity (the
        distiller's mechanical novelty rule, ``kura.distill.novelty``)."""
        said, no = _read(claim)
        if len(said) < MIN_WORDS:
            return False
        return any(len(said & self.texts[k][0]) >= COVERED_SHARE * len(said) and self.texts[k][1] == no
                   for k in self.near(said, COVERED_SHARE))  # fmt: skip


def _numbers(text: str) -> frozenset[str]:
    """The runs of digits in a claim, without leading zeros (``03`` and ``3`` are one)."""
    return frozenset(run.lstrip("0") or "0" for run in _NUMBERS.findall(text))


@functools.lru_cache(maxsize=1 << 16)
def _read(text: str) -> tuple[frozenset[str], bool]:
    """A claim's content words and polarity, read once a process (a pass compares each
    waiting claim with every statement of every stretch)."""
    return frozenset(words(text)), negated(text)


def _count(scratch: sc.Scratch, seg: Segment, session: str, source: str, when: str) -> None:
    """Count the segment in its session's ledger."""
    old = scratch.sessions.get(session) or sc.Session(session, source)
    scratch.sessions[session] = replace(
        old,
        first=min(filter(None, (old.first, when)), default=""),
        last=max(filter(None, (old.last, when)), default=""),
        segments=old.segments + 1,
        tokens=old.tokens + estimate_tokens(seg.text),
        through={**old.through, source: max(seg.line, old.through.get(source, 0))},
    )


def _mention(scratch: sc.Scratch, items: _Index, claim: str, mention: sc.Mention) -> int:
    """Add the mention to the item saying the same claim (a new item when none does)."""
    same = items.same(claim)
    if same is None:
        same = sc.item_id(claim)
        if same in scratch.crossed or same in scratch.items:
            return 0
        scratch.items[same] = sc.Item(same, claim, kind_of(claim, (mention,)), (mention,))
        items.add(same, claim, claim)
        return 1
    item = scratch.items[same]
    grown = sc.with_mention(item, mention)
    scratch.items[same] = grown
    return int(grown is not item)


def _aged(item: sc.Item, scratch: sc.Scratch, touched: set[str], reading: tuple[int, str, int]) -> sc.Item:
    """The item with every mention of a session read on marked ``out`` once more than the
    window's tokens of that session follow it, or a compaction of its journal does."""
    window, source, compaction = reading
    if not any(m.session in touched and not m.out for m in item.mentions):
        return item
    mentions = tuple(
        replace(m, out=True)
        if m.session in touched
        and (
            scratch.sessions[m.session].tokens - m.at > window or (m.source == source and m.line < compaction)
        )
        else m
        for m in item.mentions
    )
    return replace(item, mentions=mentions)


def compactions(data: bytes, first_line: int) -> list[int]:
    """The lines of a stretch (its raw bytes, the first numbered ``first_line``) that mark a
    compaction or a summary — Claude Code's ``compact_boundary`` record or compact summary,
    Codex's ``compacted`` item: what was said before one is out of the working window."""
    found = []
    for number, raw in enumerate(data.split(b"\n"), start=first_line):
        if b"compact" not in raw:
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and (
            obj.get("subtype") == "compact_boundary" or obj.get("isCompactSummary") is True
            or obj.get("type") == "compacted"
        ):  # fmt: skip
            found.append(number)
    return found


# -- crossing ---------------------------------------------------------------------------------


def cross(
    store: Store,
    items: Sequence[sc.Item],
    *,
    stage: Stage,
    own: str,
    live: Sequence[tuple[str, str, str]],
    journals: Mapping[str, str],
    cited: Mapping[str, str] | None = None,
) -> Climbed:
    """Carry every item at or above promote across (see the module docstring); each is
    settled in scratch whatever became of it, so it is not tried again."""
    done = Climbed()
    settled: dict[str, str] = {}
    staged = [d for d in dr.staged(store) if not d.incomplete] if items else []
    staged_keys = {dr.key_of(d) for d in staged}
    taken = set(store.slugs()) | {d.slug for d in staged}
    read = functools.cache(functools.partial(_segments, journals))  # each journal read once a pass
    for item in items:
        said = [_verified(m, read) for m in _witnessing(item)]
        claims = [claim for claim in said if claim is not None]
        if len(claims) < len(said) or not claims:
            done.dropped.append("ladder: a witness is not in the journal it cites")
            settled[item.id] = "-"
            continue
        if not _one_claim(claims):
            done.dropped.append("ladder: the witnesses do not say one claim")
            settled[item.id] = "-"
            continue
        # the claim and its kind are read again from the journal: scratch only says where to look
        item = replace(
            item,
            claim=claims[0],
            kind=kind_of(claims[0], _witnessing(item)),
            mentions=_cited(item.mentions, cited or {}),
        )
        settled[item.id] = _one(store, item, stage=stage, own=own, live=live, taken=taken,
                                staged_keys=staged_keys, done=done)  # fmt: skip

    def settle(scratch: sc.Scratch) -> None:
        for key, slug in settled.items():
            scratch.items.pop(key, None)
            scratch.crossed[key] = slug

    if settled:
        sc.update(store, settle)
    return done


def _witnessing(item: sc.Item) -> list[sc.Mention]:
    """The mentions the item's witnesses stand on, in witness order."""
    return [next(m for m in item.mentions if m.session == w.session) for w in item.witnesses()]


def _segments(journals: Mapping[str, str], source: str) -> tuple[Segment, ...]:
    """Every segment of ``source`` when it is one of the store's own journals (``journals``:
    source → format); none when it is not, or cannot be read."""
    if source not in journals:
        return ()
    try:
        return tuple(read_from(source, fmt=journals[source] or None, finished=True).segments)
    except OSError:
        return ()


def _verified(mention: sc.Mention, read: Callable[[str], Sequence[Segment]]) -> str | None:
    """The claim the journal a mention cites (``read(source)``: its segments) makes at that
    line, in that session and class: one of that segment's whole statements, redacted, whose
    quote is the mention's; None when it makes none. Scratch is derived state a cloned
    repository may carry, so nothing in it crosses on its own say-so, and a quote cut from a
    line ("It is false that …") is not that line's claim."""
    quote = normalise(mention.quote)
    for seg in read(mention.source):
        if (
            seg.line != mention.line
            or seg.cls != mention.cls
            or (seg.session or mention.source) != mention.session
        ):
            continue
        for text in statements(seg):
            claim = redact(text)[0]
            if normalise(cut(claim, sc.QUOTE_CHARS)) == quote:
                return claim
    return None


def _one_claim(claims: Sequence[str]) -> bool:
    """Whether every claim restates the first (the rule that joined them in scratch)."""
    first = _Index()
    first.add("first", claims[0], claims[0])
    return all(first.same(claim) == "first" for claim in claims[1:])


def _cited(mentions: tuple[sc.Mention, ...], cited: Mapping[str, str]) -> tuple[sc.Mention, ...]:
    """The mentions as a memory may cite them: each journal by ``cited`` (relative to its
    root), never by the local path scratch keeps to read it again."""
    return tuple(replace(m, source=cited.get(m.source) or Path(m.source).name) for m in mentions)


def _one(store: Store, item: sc.Item, *, stage: Stage, own: str, live: Sequence[tuple[str, str, str]],
         taken: set[str], staged_keys: set[dr.Key], done: Climbed) -> str:  # fmt: skip
    witnesses = item.witnesses()
    mentions = _witnessing(item)
    evidence = [Segment(m.cls, m.quote, m.session, m.turn, line=m.line, when=m.when) for m in mentions]
    said = next((m.quote for m in mentions if m.cls == "USER"), "")
    why = "it fell out of the working window and recurred in an unrelated session"
    candidate = Candidate(
        topic=topic_of(item.claim).rstrip("."), kind=item.kind, rule="ladder",
        why=why if said else f"a tool printed it in unrelated sessions; no person said it ({why})",
        quotes=[f"[{s.cls}] {s.text}" for s in evidence][:6], said=said, output=mentions[0].quote,
    )  # fmt: skip
    verdict = judge([candidate], evidence, own)[0]
    if verdict.verdict != "kept":
        done.dropped.append(f"ladder: {verdict.reason.split(' (', 1)[0]}")
        return "-"
    if live and covers(item.claim, live).verdict == "covered":
        done.dropped.append("ladder: already covered by a memory")
        return "-"
    source = mentions[0].source
    if dr.key(source, verdict.evidence) in staged_keys:
        return "-"  # staged by a pass that stopped before it settled the item
    composed = compose(candidate, verdict, taken=taken, store_slugs=store.slugs())
    text = "\n\n".join((composed.title, composed.description, composed.body)) if composed else ""
    if composed is None or violations(text, verdict.evidence, store.slugs()):
        done.dropped.append("ladder: no sentence of fact passed the final-surface floor")
        return "-"
    path = stage(store, slug=composed.slug, kind=composed.kind, title=composed.title,
                 description=composed.description, body=composed.body, evidence=verdict.evidence,
                 source=source, flags=(*composed.flags, *flags(witnesses, verdict.evidence)))  # fmt: skip
    taken.add(composed.slug)
    done.crossed.append(str(path))
    if store.write_policy == "direct-allowed" and hasattr(path, "stem"):
        poured = dr.pour(store, path.stem)
        done.poured += poured.poured
        if not poured.poured:
            done.dropped.append(
                f"ladder: the pour was refused, the draft stays staged ({poured.reason[:80]})"
            )
    return composed.slug


def flags(witnesses: Sequence[wt.Witness], evidence: Sequence[Segment]) -> tuple[str, ...]:
    """The draft flags that carry every witness to the memory: the first as ``witness:``,
    ``session:``, ``when:``; each other as ``also:KIND@DAY@QUOTE-INDEX@SESSION@SOURCE``."""
    first, rest = witnesses[0], witnesses[1:]
    out = [f"witness:{first.kind}", f"session:{_safe(first.session)}"]
    if first.when:
        out.append(f"when:{first.when.isoformat()}")
    quotes = [normalise(s.text) for s in evidence]
    for w in rest:
        at = quotes.index(normalise(w.quote)) if normalise(w.quote) in quotes else 0
        day = w.when.isoformat() if w.when else ""
        out.append(f"also:{w.kind}@{day}@{at}@{_safe(w.session).replace('@', '-')}@{_safe(w.source)}")
    return tuple(out)


def _safe(text: str) -> str:
    """A session id or a source fit for a flag (flags are split on ", ")."""
    return text.replace(",", ";")[:400]
