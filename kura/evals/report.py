"""The figures ``kura eval`` reports, and the words it prints them with.

Every figure is counted against something that keeps it honest:

- **task success** is the share of sessions whose first command was the working one, next
  to the **ceiling** — the share of sessions whose answer had been shown in an earlier
  session (after the last time it changed), which is the most any memory could get;
- the **window** arm is the rival that matters: the same history carried forward in the
  same token budget with no memory layer. Whichever arm is ahead is named and by how many
  points; when the window wins, the report says so in as many words. A benchmark that
  could only ever print "kura is ahead" would measure nothing;
- **sessions until memory catches the window** counts the sessions before the first one
  from which kura's agent answers as well as the window's in every session to the end
  ("never" when the window still answers where kura does not in the last session) — a
  lead in the total can hide a fact the window keeps getting first, and this cannot;
- **sessions before kura's running total stops trailing the window's** counts the sessions
  after which kura's running total of successes is never again behind the window's
  ("never" when it ends behind);
- **injected tokens** are what each arm put in front of the agent per session;
- **assertion accuracy** is, of the sessions where the agent took a command as known, the
  share where that command was the working one — a replaced command taken as current
  counts against, and for the scenario with a replacement it is also counted on its own;
- for facts **told in passing** (run once, or only said and recurring), each arm's success
  on the first session that needed one after it was first said, and how many of kura's
  memories were written from a told sentence (a memory whose evidence quotes the user's
  words from inside one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kura.evals.arms import ARMS, Run
from kura.evals.scenarios import PASSING, RECURRING

LABELS = {"kura": "kura memory", "window": "the window", "none": "no memory"}


@dataclass(kw_only=True, frozen=True, slots=True)
class Arm:
    name: str
    success: int
    stated: int
    correct: int
    tokens_mean: int
    tokens_max: int
    stale: int  # sessions after a replacement that stated the replaced command as current

    def to_dict(self, sessions: int) -> dict[str, Any]:
        return {
            "success": self.success, "success_pct": pct(self.success, sessions), "stated": self.stated,
            "correct": self.correct, "accuracy_pct": pct(self.correct, self.stated) if self.stated else None,
            "tokens_mean": self.tokens_mean, "tokens_max": self.tokens_max, "stale": self.stale,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Told:
    """Facts told in passing: how many, how many sessions first needed one after it was
    first told, how many of those each arm got right, kura's memories written from a told
    sentence, and in how many sessions each fact was said (the most of any)."""

    facts: int
    needed: int
    right: dict[str, int]
    kept: int
    said_in: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts": self.facts, "needed": self.needed, "right": self.right, "memories_from_told": self.kept,
            "sessions_each_was_said_in": self.said_in,
        }  # fmt: skip


@dataclass(kw_only=True, frozen=True, slots=True)
class Figures:
    kind: str
    title: str
    sessions: int
    ceiling: int
    arms: dict[str, Arm]
    catch: int | None  # sessions before kura's running total is never behind the window's
    caught: int | None  # the first session from which kura answers as well as the window every time
    change_at: int
    old: str
    new: str
    after: int  # sessions after the replacement whose task needed the replaced command
    superseded: tuple[tuple[str, str], ...]
    memories: int
    refused: int
    told: Told | None = None

    @property
    def gap(self) -> int:
        """kura's success minus the window's, in percentage points."""
        return pct(self.arms["kura"].success, self.sessions) - pct(self.arms["window"].success, self.sessions)


def pct(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


def figures(done: Run) -> Figures:
    scenario = done.scenario
    sessions = scenario.sessions
    change = sessions[scenario.change_at - 1] if scenario.change_at else None
    replaced = change.lesson.works[0] if change else ""
    after = [s.number for s in sessions if change and s.number > change.number and s.lesson is change.lesson]
    arms = {}
    for name in ARMS:
        turns = done.turns[name]
        stated = [(t, s) for t, s in zip(turns, sessions, strict=True) if t.stated is not None]
        tokens = [t.tokens for t in turns]
        stale = sum(1 for n in after if turns[n - 1].stated == replaced)
        correct = sum(t.stated == s.value for t, s in stated)
        mean = round(sum(tokens) / len(tokens))
        arms[name] = Arm(
            name=name,
            success=sum(t.ok for t in turns),
            stated=len(stated),
            correct=correct,
            tokens_mean=mean,
            tokens_max=max(tokens),
            stale=stale,
        )
    return Figures(kind=scenario.kind, title=scenario.title, sessions=len(sessions),
                   ceiling=sum(s.knowable for s in sessions), arms=arms,
                   catch=catch(done), caught=caught(done),
                   change_at=scenario.change_at, old=replaced, new=change.value if change else "",
                   after=len(after), superseded=done.store.superseded, memories=done.store.memories,
                   refused=done.store.refused, told=told(done))  # fmt: skip


def told(done: Run) -> Told | None:
    """What became of the facts told in passing (None: the scenario told none)."""
    sessions = done.scenario.sessions
    said_in: dict[str, list[int]] = {}
    for s in sessions:
        for fact in (s.told, s.mentioned):
            if fact is not None:
                said_in.setdefault(fact.key, []).append(s.number)
    if not said_in:
        return None
    firsts = [
        next((s.number for s in sessions[at[0] :] if s.lesson.key == key), 0) for key, at in said_in.items()
    ]
    needed = [n for n in firsts if n]
    right = {arm: sum(done.turns[arm][n - 1].ok for n in needed) for arm in ARMS}
    said = [PASSING[key] for key in said_in if key in PASSING] + [
        wording for key in said_in for wording in RECURRING.get(key, ())
    ]
    kept = sum(any(_from(quote, said) for quote in quotes) for _, quotes in done.store.evidence)
    return Told(len(said_in), len(needed), right, kept, max(len(at) for at in said_in.values()))


def _from(quote: str, said: list[str]) -> bool:
    """Whether ``quote`` is the user's words from inside one of the ``said`` sentences."""
    words = quote.removeprefix("[USER] ")
    return words != quote and any(words.strip() in sentence for sentence in said)


def catch(done: Run) -> int | None:
    """How many sessions pass before kura's running successes stop trailing the window's."""
    kura = window = 0
    trailing = 0
    for n, (mine, theirs) in enumerate(zip(done.turns["kura"], done.turns["window"], strict=True), start=1):
        kura += mine.ok
        window += theirs.ok
        if kura < window:
            trailing = n
    return None if kura < window else trailing


def caught(done: Run) -> int | None:
    """The first session from which kura's agent is right whenever the window's is, to the
    end of the run (1: it never trails; None: the window is right and kura is not in the last
    session)."""
    pairs = list(zip(done.turns["kura"], done.turns["window"], strict=True))
    behind = [n for n, (mine, theirs) in enumerate(pairs, start=1) if theirs.ok and not mine.ok]
    if behind and behind[-1] == len(pairs):
        return None
    return behind[-1] + 1 if behind else 1


def verdict(found: Figures) -> str:
    gap = found.gap
    if gap > 0:
        return f"kura is ahead by {gap} point{'s' if gap != 1 else ''}"
    if gap < 0:
        return f"the window wins: it is ahead of kura by {-gap} point{'s' if gap != -1 else ''}"
    return "kura is level"


def render(found: Figures, *, budget: int, seed: int) -> str:
    """One scenario's block of the report."""
    kura, window, none = (found.arms[a] for a in ARMS)
    n = found.sessions
    lines = [
        f"{found.title} — {n} sessions, seed {seed}",
        "agent outcomes",
        f"{pct(kura.success, n):>8}%  task success against a {pct(found.ceiling, n)}% ceiling, "
        f"{pct(none.success, n)}% without memory",
        f"{pct(window.success, n):>8}%  the same history in the window, no memory at all — {verdict(found)}",
        _caught_line(found.caught, n),
        _catch_line(found.catch, n),
        f"injected tokens per session (mean; a {budget}-token budget for both)",
        f"{kura.tokens_mean:>9}  kura memory (at most {kura.tokens_max})",
        f"{window.tokens_mean:>9}  the window (at most {window.tokens_max})",
        f"{none.tokens_mean:>9}  no memory",
        "assertions: commands taken as known that were the working one",
        *(_accuracy(found.arms[a]) for a in ARMS),
        f"{found.memories:>9}  memories in kura's store at the end ({len(found.superseded)} superseded, "
        f"{found.refused} draft{'s' if found.refused != 1 else ''} refused at pouring)",
    ]
    if found.change_at:
        lines += _replacement(found)
    if found.told is not None:
        lines += _told(found.told)
    return "\n".join(lines)


def _told(told: Told) -> list[str]:
    each = f"; each said in {told.said_in} unrelated sessions" if told.said_in > 1 else ""
    lines = [f"facts told in passing ({told.facts}, none of them asked to be remembered{each})"]
    for name in ("kura", "window", "none"):
        lines.append(
            f"{f'{told.right[name]} of {told.needed}':>9}  {LABELS[name]}: right the first time one was "
            "needed after it was told"
        )
    lines.append(f"{told.kept:>9}  memories kura's distiller wrote from a told sentence")
    return lines


def _caught_line(caught: int | None, sessions: int) -> str:
    head = "sessions until memory catches the window"
    if caught is None:
        last = f"in session {sessions}, the last, the window is still right where kura is not"
        return f"{'never':>9}  {head}: {last}"
    if caught == 1:
        return f"{0:>8}   {head}: it is right whenever the window is, from the first session"
    return f"{caught - 1:>8}   {head}: from session {caught} on it is right whenever the window is"


def _catch_line(caught: int | None, sessions: int) -> str:
    head = "kura's running total of successes"
    if caught is None:
        return f"{'never':>9}  {head} ends behind the window's ({sessions} sessions)"
    if caught == 0:
        return f"{0:>8}   sessions with {head} behind the window's"
    return f"{caught:>8}   session{'s' if caught != 1 else ''} before {head} stops trailing the window's"


def _accuracy(arm: Arm) -> str:
    if not arm.stated:
        return f"{'—':>9}  {LABELS[arm.name]}: took no command as known"
    return f"{pct(arm.correct, arm.stated):>8}%  {LABELS[arm.name]}: {arm.correct} of {arm.stated}"


def _replacement(found: Figures) -> list[str]:
    lines = [f"the replaced fact (session {found.change_at}: {found.old} → {found.new})"]
    if found.superseded:
        pairs = ", ".join(f"{old} → {new}" for old, new in found.superseded)
        lines.append(f"{'yes':>9}  the rule-based distiller superseded the old memory ({pairs})")
    else:
        lines.append(
            f"{'no':>9}  the rule-based distiller superseded nothing: the old memory is still current"
        )
    for name in ("kura", "window"):
        arm = found.arms[name]
        lines.append(
            f"{arm.stale:>8}   of {found.after} later session{'s' if found.after != 1 else ''} needing it: "
            f"{LABELS[name]} took {found.old} as current"
        )
    return lines


def to_dict(found: Figures, done: Run) -> dict[str, Any]:
    n = found.sessions
    return {
        "scenario": found.kind, "title": found.title, "sessions": n, "ceiling": found.ceiling,
        "ceiling_pct": pct(found.ceiling, n), "gap_points": found.gap, "verdict": verdict(found),
        "catch_up_sessions": found.catch,
        "memory_catches_window_at": found.caught,
        "sessions_until_memory_catches_window": found.caught - 1 if found.caught else None,
        "memories": found.memories, "refused_drafts": found.refused,
        "arms": {name: arm.to_dict(n) for name, arm in found.arms.items()},
        "replacement": ({"session": found.change_at, "old": found.old, "new": found.new,
                         "later_sessions": found.after, "superseded": [list(p) for p in found.superseded]}
                        if found.change_at else None),
        "told": found.told.to_dict() if found.told else None,
        "per_session": [_session(done, s.number) for s in done.scenario.sessions],
    }  # fmt: skip


def _session(done: Run, number: int) -> dict[str, Any]:
    s = done.scenario.sessions[number - 1]
    turns = {arm: done.turns[arm][number - 1].to_dict() for arm in ARMS}
    return {"session": number, "task": s.lesson.key, "working": s.value, "knowable": s.knowable, **turns}
