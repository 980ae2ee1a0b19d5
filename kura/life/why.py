"""``kura why``: the argument for a memory, not a number.

The claim; whether it is asserted or withheld, and why; confidence and strength as bars;
"because N witnesses across M sessions" with one line per witness (kind, its value now,
its age, session, quote); since and until; what it replaced and what replaced it; and the
file's last git change when the store is a git repository.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from typing import Any

from kura.errors import NotFound
from kura.files import witness as wt
from kura.files.belief import Standing, retired, standing
from kura.git.guard import SAFE
from kura.recall.as_of import AsOf
from kura.store.store import Memory, Store

BAR = 10
QUOTE_CHARS = 72


def explain(store: Store, slug: str, today: dt.date, *, git: bool = True, at: bool = False) -> dict[str, Any]:
    """Everything ``why`` says about the memory ``slug``, as data. ``at``: ``today`` is a day
    asked for (``--at``), so the memory is judged as it stood then, as ``recall --at`` reads
    it — not yet written is ``NotFound``; a later revision, archive or witness unwritten."""
    memory = store.show(slug)
    degraded: list[str] = []
    meta = memory.note.meta
    if at:
        then = AsOf(store, today)
        born = then.born(meta, memory.path)
        if born is not None and born > today:
            raise NotFound(
                f"{store.name}/{memory.slug}: not yet written on {today.isoformat()} (created "
                f"{born.isoformat()}); `kura why {memory.slug}` without --at judges it as it stands today"
            )
        meta = then.meta(meta)
    found = standing(memory.slug, meta, today, live=lambda s: _live(store, s, degraded))
    return {
        "slug": memory.slug,
        "claim": memory.description or memory.name,
        "name": memory.name,
        "type": found.type,
        "standing": found,
        "replaced_by": found.superseded_by,
        "replaced": list(found.supersedes),
        "git": _git(store, memory) if git else None,
        "today": today,
        "degraded": degraded,
    }


def render(found: dict[str, Any]) -> str:
    """The argument as text (see the module docstring)."""
    s: Standing = found["standing"]
    today: dt.date = found["today"]
    c = s.confidence
    lines = [f"{found['name']}  ({found['slug']} · {found['type']})", f"claim      {found['claim']}", ""]
    lines.append(_verdict(s))
    lines.append("")
    lines.append(f"confidence {c.value:.2f}  {_bar(c.value)}")
    lines.append(f"strength   {s.strength:.2f}  {_bar(s.strength)}  {s.label}")
    lines.append("")
    implicit = [w for w in s.witnesses if w.implicit]
    if implicit:
        lines.append("because its author wrote it by hand: no witnesses are recorded, so it counts as")
        lines.append("  stated by its author (SAID, which pins it)")
    else:
        sessions = c.sessions
        lines.append(
            f"because {len(s.witnesses)} witness{'es' if len(s.witnesses) != 1 else ''} "
            f"across {sessions} session{'s' if sessions != 1 else ''}"
            + (
                f" and {c.groups} independent source{'s' if c.groups != 1 else ''}"
                if c.groups != sessions
                else ""
            )
        )
        lines.extend(_witness_line(w, today) for w in s.witnesses)
    for finding in s.findings:
        lines.append(f"  ! {finding.message}")
    lines.extend(f"  ! {said}" for said in found["degraded"])
    lines.append("")
    since = s.since.isoformat() if s.since else "unknown"
    until = s.until.isoformat() if s.until else "still current" if s.current else "—"
    lines.append(f"since      {since}")
    lines.append(f"until      {until}")
    lines.append(f"replaced   {', '.join(found['replaced']) or 'nothing'}")
    lines.append(f"replaced by {found['replaced_by'] or 'nothing'}")
    if s.archived is not None:
        lines.append(f"archived   {s.archived.isoformat()}: {s.archived_reason or 'no reason given'}")
    if found["git"] is not None:
        lines.append(f"git        {found['git']}")
    return "\n".join(lines) + "\n"


def to_json(found: dict[str, Any]) -> dict[str, Any]:
    s: Standing = found["standing"]
    today: dt.date = found["today"]
    return {
        "slug": found["slug"], "claim": found["claim"], "name": found["name"], "type": found["type"],
        **s.to_dict(), "verdict": _verdict(s), "reasons": list(s.confidence.reasons),
        "witness_list": [
            {**w.to_meta(), "weight": w.weight, "value": round(w.value(today), 2), "age_days": w.age(today),
             "implicit": w.implicit}
            for w in s.witnesses
        ],
        "since": s.since.isoformat() if s.since else None, "until": s.until.isoformat() if s.until else None,
        "replaced": found["replaced"], "replaced_by": found["replaced_by"] or None, "git": found["git"],
        "degraded": found["degraded"],
    }  # fmt: skip


def _verdict(s: Standing) -> str:
    c = s.confidence
    if s.archived is not None:
        return f"withheld — archived on {s.archived.isoformat()} ({s.archived_reason or 'no reason given'})"
    if s.superseded_by:
        return f"withheld — superseded by {s.superseded_by}; on record, not current"
    if s.asserted:
        pin = "; a SAID witness pins it" if c.pinned and c.value < wt.ASSERTED else ""
        return f"asserted — stated as current truth (confidence ≥ {wt.ASSERTED:.2f}{pin})"
    if s.findable:
        return "withheld — on record, may be stale: " + "; ".join(c.reasons)
    return f"withheld — below the findable floor {wt.FINDABLE:.2f}: " + "; ".join(c.reasons)


def _witness_line(w: wt.Witness, today: dt.date) -> str:
    age = w.age(today)
    when = "undated" if w.when is None else "today" if age == 0 else f"{age} day{'s' if age != 1 else ''} ago"
    where = f"session {w.session}" if w.session else "no session"
    if w.domain:
        where += f" via {w.domain}"
    quote = f'  "{_clip(w.quote)}"' if w.quote else ""
    return f"  {w.kind:<8} {w.weight:.2f} → {w.value(today):.2f}  {when:<13} {where}{quote}"


def _bar(value: float) -> str:
    filled = max(0, min(BAR, round(value * BAR)))
    return "█" * filled + "·" * (BAR - filled)


def _clip(text: str) -> str:
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _live(store: Store, slug: str, degraded: list[str]) -> bool:
    """Whether ``slug`` is a current memory (for a contradiction). One that cannot be read
    counts as live — the contradiction is not dropped unseen — and ``degraded`` says so."""
    try:
        data, memory = store.read(slug)
    except NotFound:  # not a memory of this store: nothing contradicts
        return False
    if not data and memory.findings:
        why = "; ".join(f.message.split("; not read — ")[0] for f in memory.findings)
        degraded.append(
            f"contradicted_by {slug}: {store.name}/{slug}.md could not be read ({why}); "
            "counted as a live contradiction"
        )
        return True
    return not retired(memory.note.meta)


def _git(store: Store, memory: Memory) -> str:
    """The file's last change in git, or why there is none."""
    try:
        done = subprocess.run(
            ["git", *SAFE, "log", "-1", "--format=%h %ad %s", "--date=short", "--", memory.path.name],
            cwd=memory.path.parent, capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "no git history (git is not available)"
    if done.returncode != 0:
        return "no git history (not a git repository)"
    return done.stdout.strip() or "not committed yet"
