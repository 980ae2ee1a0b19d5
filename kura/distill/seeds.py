"""Seeds: ideas the distiller heard but cannot prove, kept until later evidence confirms them.

An idea (the gate's verdict ``idea``: a candidate of ``kind: idea``) has no quotes behind
it, so it may never enter the store — but dropping it would lose the one thing a
transcript offers before the evidence exists. So ideas go to a human-readable seed file in
the store's state folder, ``.kura/seeds.md``, one entry per idea:

    ## Cache the wheel builds between CI runs
    - when: 2026-11-30T08:20:00Z
    - why: the agent suggested it after a slow build
    - source: /home/ana/.claude/projects/ferry/6f1c….jsonl
    - status: seed

An idea **graduates once**: when a later pass keeps a candidate (one that passed the gate
on its own quotes, so the evidence is real) whose topic matches the seed, the seed's status
becomes ``graduated <when> by draft <id>`` and is never changed again. The seed itself is
not the evidence — the kept draft is — so graduation only records that the idea came true.

Matching is deliberately simple and explainable: both topics are cut into lowercase words
of three letters or more, minus a few stop words; a seed matches when the kept topic covers
at least ``MATCH`` (60 %) of the seed's words and at least ``MIN_SHARED`` (2) of them. The
same idea heard twice (same normalised words) is kept once.

The file is the user's as much as the distiller's: a person may annotate it or delete
entries, so it is read tolerantly (unknown lines are kept byte for byte) and every change
is an atomic rewrite under its own lock. Text from a transcript is redacted and folded to
one line before it is written, so an entry cannot forge a heading or a status.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.store.store import Store
from kura.text.secrets import redact

FILE_NAME = "seeds.md"
MATCH = 0.6  # share of the seed's words the kept topic must cover
MIN_SHARED = 2  # and never fewer words than this
_HEADER = (
    "# Seeds\n\nIdeas the distiller heard but could not prove yet. An idea graduates once, when a\n"
    "later pass keeps a memory on real evidence whose topic matches it.\n"
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{2,}")
_STOP = frozenset("the and for that this with from into when then than not are was were have has "
                  "use using should would could will can its our you your they them".split())  # fmt: skip
_FIELD = re.compile(r"^- (when|why|source|status): ?(.*)$")
_BY_DRAFT = re.compile(r"\bby draft (\S+)")


@dataclass(frozen=True, slots=True)
class Seed:
    """One entry of the seed file; ``graduated`` is the draft id, or "" while it is a seed."""

    topic: str
    when: str = ""
    why: str = ""
    source: str = ""
    graduated: str = ""
    line: int = 0  # 1-based line of its heading


def path_of(store: Store) -> Path:
    return store.state_dir / FILE_NAME


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def matches(seed_topic: str, topic: str) -> bool:
    """True when ``topic`` covers enough of the seed's words (see the module docstring)."""
    seed, other = words(seed_topic), words(topic)
    shared = len(seed & other)
    return bool(seed) and shared >= MIN_SHARED and shared / len(seed) >= MATCH


def seeds(store: Store) -> list[Seed]:
    """Every entry of the store's seed file, in file order ([] when there is none)."""
    return _parse(_read(path_of(store)))


def add(store: Store, *, topic: str, why: str, source: str, when: str | None = None) -> bool:
    """Append one idea; False when the same idea (same words) is already in the file."""
    topic, why, source = (_line(t) for t in (topic, why, source))
    if not words(topic):
        return False
    path = path_of(store)
    with locked(store.state_dir / "seeds.lock"):
        lines = _read(path)
        if any(words(s.topic) == words(topic) for s in _parse(lines)):
            return False
        stamp = when or _now()
        entry = [f"## {topic}", f"- when: {stamp}", f"- why: {why}", f"- source: {source}", "- status: seed"]
        head = lines or _HEADER.splitlines()
        blank = [""] if head[-1].strip() else []
        _write(path, [*head, *blank, *entry])
    return True


def graduate(store: Store, topic: str, draft_id: str, *, when: str | None = None) -> list[str]:
    """Mark every seed ``topic`` matches as graduated by ``draft_id``, once; their topics."""
    path = path_of(store)
    if not path.exists():
        return []
    done: list[str] = []
    with locked(store.state_dir / "seeds.lock"):
        lines = _read(path)
        entries = _parse(lines)
        if not entries:
            return []
        ends = [s.line - 1 for s in entries[1:]] + [len(lines)]
        # last entry first, so a status line inserted below does not move the ones still to do
        for seed, end in reversed(list(zip(entries, ends, strict=True))):
            if seed.graduated or not matches(seed.topic, topic):
                continue
            status = f"- status: graduated {when or _now()} by draft {_line(draft_id)}"
            at = next((i for i in range(seed.line, end) if lines[i].startswith("- status:")), None)
            if at is None:
                lines.insert(seed.line, status)  # a hand-edited entry lost its status line
            else:
                lines[at] = status
            done.insert(0, seed.topic)
        if done:
            _write(path, lines)
    return done


def _parse(lines: Sequence[str]) -> list[Seed]:
    found: list[Seed] = []
    fields: dict[str, str] = {}
    for number, text in enumerate([*lines, "## "], start=1):
        if text.startswith("## "):
            if fields:
                graduated = _BY_DRAFT.search(fields.get("status", ""))
                found.append(Seed(fields["topic"], fields.get("when", ""), fields.get("why", ""),
                                  fields.get("source", ""), graduated.group(1) if graduated else "",
                                  int(fields["line"])))  # fmt: skip
            fields = {"topic": text[3:].strip(), "line": str(number)} if number <= len(lines) else {}
        elif fields and (match := _FIELD.match(text)):
            fields.setdefault(match.group(1), match.group(2).strip())
    return found


def _read(path: Path) -> list[str]:
    """The file's lines (read by ``kura.store.state``'s rules: no link, FIFO or giant is read)."""
    data = st.read_bytes(path, then="no seeds are read from it; the next idea rewrites it", derived=False)
    if data is None:
        return []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        st.damaged(path, f"is not UTF-8 text (byte {err.start})", "its undecodable bytes are read as U+FFFD "
                   "and not kept when the distiller writes it", derived=False)  # fmt: skip
        text = data.decode("utf-8-sig", errors="replace")
    return text.splitlines()


def _write(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))


def _line(text: str) -> str:
    return " ".join(redact(str(text))[0].split())


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
