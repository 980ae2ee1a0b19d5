"""Scratch: where a candidate waits between what was said and what is believed.

The ladder (``docs/ladder.md``) has two floors, and they are different floors from a
memory's asserted and findable ones:

    promote 0.50  at or above: it crosses — a draft, or a memory through the verified door
    hold    0.30  at or above: it waits here, listed by ``kura scratch``
    below hold    not kept as a candidate

The number compared with them is the evidence sum (``kura.files.witness.weight_of``) of
the witnesses an item's mentions make — never stored, computed on read like a memory's
confidence. A mention is one session saying the claim: the first time in that session, its
quote (secrets already redacted by the producer), where (source, line, turn) and when, how
many tokens into the session it was said (``at``) and whether it has fallen out of the
working window (``out``). Witnesses are made from the mentions, one per session, because
diversity beats volume: the earliest mention that fell out of the window is a TIDE; every
other session that said it is a CALLUS — a recurrence; with no TIDE, the first session is
only the origin the others recur from. A mention whose turn id (a Claude Code uuid) another
session already carried is a resumed copy, not an unrelated run, and counts for nothing.

Items below hold are kept only while they can still rise — a mention still inside its
window (a session still being read) or one recurrence short — at most ``PENDING`` of them,
the oldest dropped first; they are never listed. The file also keeps the session ledger
``kura sessions`` reads (source, first and last time, segments and tokens read, how far each
source was read so a re-read stretch is not counted twice) and the claims that crossed.

Derived state (``.kura/scratch.json``), written atomically under its own lock; like every
state file it is untrusted input: an entry of the wrong shape is dropped, a file that is
not this JSON is reported on stderr and started afresh — what waited is found again as the
journals are read again (delete ``journals.json`` to read them all), never a crash.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from kura.files import witness as wt
from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.store.store import Store
from kura.text.claim_match import words

HOLD = 0.30
PROMOTE = 0.50
PENDING = 2000  # items below hold kept while they may still rise
WAIT_DAYS = 365  # a claim not said again for this long no longer waits
MAX_ITEMS = 20000
FILE = "scratch.json"
LOCK = "scratch.lock"
QUOTE_CHARS = 400
_THEN = "scratch starts empty; what waited comes back as the journals are read again"
_TEXT = 1000  # longest string field read back from the file


@dataclass(frozen=True, slots=True)
class Mention:
    """One session saying the claim (its first time in that session)."""

    session: str
    source: str
    quote: str
    cls: str = "USER"
    line: int = 0
    turn: str = ""
    when: str = ""
    at: int = 0  # tokens of the session read before it
    out: bool = False  # it has fallen out of the working window


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    claim: str
    kind: str
    mentions: tuple[Mention, ...]

    def witnesses(self) -> list[wt.Witness]:
        """One witness per unrelated session (see the module docstring)."""
        kept: list[Mention] = []
        turns: set[str] = set()
        for m in self.mentions:
            if any(k.session == m.session for k in kept) or (len(m.turn) >= 16 and m.turn in turns):
                continue  # the same session, or a resumed copy of another's turn
            kept.append(m)
            turns.add(m.turn)
        tide = next((m for m in kept if m.out), None)
        others = [m for m in kept if m is not tide]
        out = [_witness("TIDE", tide)] if tide is not None else []
        return out + [_witness("CALLUS", m) for m in (others if tide is not None else others[1:])]

    def weight(self) -> float:
        """The evidence sum the floors compare, at face value: a claim waits unaged (``trim``
        lets go what was not said again for ``WAIT_DAYS``); once it crosses, its memory's
        witnesses age."""
        return _weight(self)

    @property
    def last(self) -> str:
        return max((m.when for m in self.mentions), default="")

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(m.session for m in self.mentions))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "claim": self.claim, "kind": self.kind, "confidence": self.weight(),
            "witnesses": [{**w.to_meta(), "weight": w.weight} for w in self.witnesses()],
            "sessions": self.sessions,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    source: str
    first: str = ""
    last: str = ""
    segments: int = 0
    tokens: int = 0
    through: Mapping[str, int] = field(default_factory=dict)  # source -> last line read


@dataclass(slots=True)
class Scratch:
    items: dict[str, Item] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    crossed: dict[str, str] = field(default_factory=dict)  # item id -> the slug it crossed as

    def held(self) -> list[Item]:
        """What waits: at or above hold, below promote (by confidence, then claim)."""
        found = [i for i in self.items.values() if HOLD <= i.weight() < PROMOTE]
        return sorted(found, key=lambda i: (-i.weight(), i.claim))


@functools.lru_cache(maxsize=1 << 16)
def _weight(item: Item) -> float:
    return round(wt.weight_of([replace(w, when=None) for w in item.witnesses()], dt.date.min), 4)


def _witness(kind: wt.Kind, m: Mention) -> wt.Witness:
    return wt.Witness(
        kind=kind, when=wt.parse_when(m.when), session=m.session, source=m.source, quote=m.quote
    )


def item_id(claim: str) -> str:
    return hashlib.sha256(" ".join(claim.lower().split()).encode()).hexdigest()[:12]


# -- reading and writing ------------------------------------------------------------------


def load(store: Store) -> Scratch:
    """The store's scratch; an empty one when there is none or it is not what ``save`` writes
    (said once on stderr). Never raises for what the file holds."""
    path = store.state_dir / FILE
    data = st.read_json(path, then=_THEN)
    if data is None:
        return Scratch()
    if data.get("version") != 1:
        st.damaged(path, f"has version {str(data.get('version'))[:20]!r}, not 1", _THEN)
        return Scratch()
    raw_items, raw_sessions = data.get("items"), data.get("sessions")
    raw_crossed = data.get("crossed", {})
    if (
        not isinstance(raw_items, list)
        or not isinstance(raw_sessions, dict)
        or not isinstance(raw_crossed, dict)
    ):
        st.damaged(path, "has no list of items or table of sessions", _THEN)
        return Scratch()
    items = [i for i in map(_item, raw_items[:MAX_ITEMS]) if i is not None]
    sessions = [s for s in (_session(k, v) for k, v in raw_sessions.items()) if s is not None]
    crossed = {k: v for k, v in raw_crossed.items() if _text(k) and _text(v)}
    if len(items) != len(raw_items) or len(sessions) != len(raw_sessions) or len(crossed) != len(raw_crossed):
        st.damaged(path, "holds entries of the wrong shape", "they were left out (it is derived state)")
    return Scratch({i.id: i for i in items}, {s.id: s for s in sessions}, crossed)


def _text(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _TEXT


def _int(value: Any) -> bool:
    return type(value) is int and 0 <= value < 1 << 62


def _item(raw: Any) -> Item | None:
    if not isinstance(raw, dict) or not all(_text(raw.get(k)) for k in ("id", "claim", "kind")):
        return None
    mentions = raw.get("mentions")
    if not isinstance(mentions, list) or not mentions or len(mentions) > 1000:
        return None
    read = [_mention(m) for m in mentions]
    if any(m is None for m in read):
        return None
    return Item(raw["id"], raw["claim"], raw["kind"], tuple(m for m in read if m is not None))


def _mention(raw: Any) -> Mention | None:
    if not isinstance(raw, dict) or not all(_text(raw.get(k)) for k in ("session", "source", "quote")):
        return None
    strings = ("cls", "turn", "when")
    if not all(isinstance(raw.get(k, ""), str) and len(raw.get(k, "")) <= _TEXT for k in strings):
        return None
    if not all(_int(raw.get(k, 0)) for k in ("line", "at")) or not isinstance(raw.get("out", False), bool):
        return None
    if raw.get("cls", "USER") not in ("USER", "TOOL"):
        return None  # the agent's words are never a witness; a file that says so was not written here
    known = {k: raw[k] for k in Mention.__dataclass_fields__ if k in raw}
    return Mention(**known)


def _session(key: Any, raw: Any) -> Session | None:
    if not _text(key) or not isinstance(raw, dict) or not _text(raw.get("source")):
        return None
    if not all(isinstance(raw.get(k, ""), str) and len(raw.get(k, "")) <= 64 for k in ("first", "last")):
        return None
    through = raw.get("through", {})
    if not all(_int(raw.get(k, 0)) for k in ("segments", "tokens")) or not isinstance(through, dict):
        return None
    if not all(_text(k) and _int(v) for k, v in through.items()):
        return None
    return Session(key, raw["source"], raw.get("first", ""), raw.get("last", ""), raw.get("segments", 0),
                   raw.get("tokens", 0), dict(through))  # fmt: skip


def save(store: Store, scratch: Scratch) -> None:
    folder = st.folder(store.root, store=store.name, create=True)
    fields = Mention.__dataclass_fields__
    data = {
        "version": 1,
        "items": [
            {"id": i.id, "claim": i.claim, "kind": i.kind,
             "mentions": [{name: getattr(m, name) for name in fields} for m in i.mentions]}
            for i in scratch.items.values()
        ],
        "sessions": {k: {"source": s.source, "first": s.first, "last": s.last, "segments": s.segments,
                         "tokens": s.tokens, "through": dict(s.through)}
                     for k, s in scratch.sessions.items()},
        "crossed": scratch.crossed,
    }  # fmt: skip
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    write_atomic(folder / FILE, (text + "\n").encode("utf-8"))


@contextmanager
def editing(store: Store) -> Iterator[Scratch]:
    """The scratch, read under its lock and saved when the block ends without an error."""
    folder = st.folder(store.root, store=store.name, create=True)
    with locked(folder / LOCK):
        scratch = load(store)
        yield scratch
        trim(scratch, dt.date.today())
        save(store, scratch)


def trim(scratch: Scratch, today: dt.date) -> None:
    """Let go what nobody said for ``WAIT_DAYS``; keep at most ``PENDING`` of what may still
    rise (newest first)."""
    stale = (today - dt.timedelta(days=WAIT_DAYS)).isoformat()
    for item in [i for i in scratch.items.values() if i.last and i.last[:10] < stale]:
        del scratch.items[item.id]
    low = sorted((i for i in scratch.items.values() if i.weight() < HOLD), key=lambda i: i.last)
    for item in low[: max(0, len(low) - PENDING)]:
        del scratch.items[item.id]


# -- what purge reaches --------------------------------------------------------------------


def carrying(store: Store, texts: Sequence[str]) -> list[str]:
    """The items whose claim says one of ``texts`` (a memory being purged): the same words,
    or most of a text's content words — purge errs towards deleting."""
    wanted = [words(t) for t in texts if len(t.strip()) >= 12]
    if not wanted or not (store.state_dir / FILE).is_file():
        return []
    found = []
    for item in load(store).items.values():
        said = words(item.claim) | {w for m in item.mentions for w in words(m.quote)}
        if any(len(w) >= 3 and len(w & said) >= 0.8 * len(w) for w in wanted):
            found.append(item.id)
    return sorted(found)


def forget(store: Store, ids: Sequence[str]) -> list[Item]:
    """Remove the items ``ids`` from scratch; the removed items (their texts are for the
    tombstone the caller writes, so the same journals cannot bring them back)."""
    if not ids or not (store.state_dir / FILE).is_file():
        return []
    with editing(store) as scratch:
        gone = [scratch.items.pop(i) for i in ids if i in scratch.items]
    return gone


def update(store: Store, change: Callable[[Scratch], Any]) -> Any:
    """Apply ``change`` to the scratch under its lock and save it; what ``change`` returns."""
    with editing(store) as scratch:
        return change(scratch)


def with_mention(item: Item, mention: Mention) -> Item:
    """The item with ``mention`` added, unless its session already said it."""
    if any(m.session == mention.session for m in item.mentions):
        return item
    return replace(item, mentions=(*item.mentions, mention))


def fell_out(store: Store, source: str, line: int) -> int:
    """Mark every mention ``source`` made before ``line`` as out of the working window: the
    host said it was compacting the session there (Claude Code's ``PreCompact`` hook), so
    what was said before is a TIDE whether or not a compaction record follows. How many
    mentions changed."""

    def change(scratch: Scratch) -> int:
        changed = 0
        for key, item in list(scratch.items.items()):
            fell = [not m.out and m.source == source and 0 < m.line < line for m in item.mentions]
            if any(fell):
                marked = tuple(
                    replace(m, out=True) if f else m for m, f in zip(item.mentions, fell, strict=True)
                )
                scratch.items[key] = replace(item, mentions=marked)
                changed += sum(fell)
        return changed

    return int(update(store, change))
