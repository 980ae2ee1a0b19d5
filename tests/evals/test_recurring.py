"""``kura eval``'s recurring scenario — facts said in passing that scroll out of the working
window and come back in unrelated sessions — and "sessions until memory catches the
window", counted from each session's outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kura.evals import agent, arms, report
from kura.evals import scenarios as sc
from kura.store.store import Store
from kura.text.claim_match import relation
from kura.text.tokens import estimate_tokens
from kura.transcripts.segments import Segment
from kura.transcripts.sources import read_segments

FACTS = [lesson for lesson in sc.LESSONS if lesson.key in sc.RECURRING]


def journal(session: sc.Session, folder: Path) -> list[Segment]:
    """The session as kura's distiller reads it: its own chat journal, read back. The agent
    runs the working command at once, the shortest transcript any arm can write."""
    path = folder / f"session-{session.number:03d}.jsonl"
    rows = sc.chat_rows(sc.transcript(session, session.value))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return read_segments(path, finished=True)


def test_the_same_seed_builds_the_same_sessions_and_another_seed_other_chatter() -> None:
    first, again = sc.build("recurring", 20, 3), sc.build("recurring", 20, 3)
    assert first == again
    assert [sc.chat_rows(sc.transcript(s, s.value)) for s in first.sessions] == [
        sc.chat_rows(sc.transcript(s, s.value)) for s in again.sessions
    ]
    other = sc.build("recurring", 20, 4)
    assert [s.before for s in other.sessions] != [s.before for s in first.sessions]
    # the schedule is the seed's only in the chatter and the filler tasks, never in the facts
    assert [(s.number, s.mentioned) for s in other.sessions] == [
        (s.number, s.mentioned) for s in first.sessions
    ]


def test_each_fact_is_said_in_three_sessions_then_needed() -> None:
    scenario = sc.build("recurring", 20, 0)
    said = {s.number: s.mentioned.key for s in scenario.sessions if s.mentioned is not None}
    assert said == {n: FACTS[(n - 1) // 4].key for n in range(1, 21) if n % 4 != 0}
    for i, fact in enumerate(FACTS):
        need = scenario.sessions[4 * i + 3]
        assert (need.number, need.lesson, need.knowable) == (4 * i + 4, fact, True)
        earlier = [s for s in scenario.sessions[: need.number - 1] if s.lesson is fact]
        assert earlier == []  # nothing needed the fact before it had been said three times
    assert all(s.told is None for s in scenario.sessions)  # said, never run: not the passing scenario


def test_the_fact_recurs_in_distinct_sessions_in_other_words(tmp_path: Path) -> None:
    scenario = sc.build("recurring", 20, 0)
    for fact in FACTS:
        first, second = sc.RECURRING[fact.key]
        assert first != second
        assert relation(first, second) == relation(second, first) == "same"
        sessions: set[str] = set()
        wordings = []
        for s in scenario.sessions:
            if s.mentioned is not fact:
                continue
            told = [seg for seg in journal(s, tmp_path) if seg.text in (first, second)]
            assert len(told) == 1, (s.number, told)  # once in each session: diversity, not volume
            sessions.add(told[0].session)
            wordings.append(told[0].text)
        assert len(sessions) == 3  # three journals, three session ids: nothing resumed
        assert wordings == [first, second, first]


def test_an_early_mention_lies_beyond_the_window_when_its_session_ends(tmp_path: Path) -> None:
    for window in (sc.WINDOW, 400):
        scenario = sc.build("recurring", 12, 0, window=window)
        early = [
            s for s in scenario.sessions if s.mentioned and s.before[0].text in sc.RECURRING[s.mentioned.key]
        ]
        assert [s.number for s in early] == [1, 2, 5, 6, 9, 10]
        for s in early:
            segments = journal(s, tmp_path)
            at = next(i for i, seg in enumerate(segments) if seg.text == s.before[0].text)
            assert segments[at].cls == "USER"
            behind = sum(estimate_tokens(seg.text) for seg in segments[at + 1 :])
            assert behind > window, (window, s.number, behind)
            # the window arm carries no more than its budget: at the next session it has lost it
            carried = arms.window([sc.render(s.number, sc.transcript(s, s.value))], window)
            assert s.before[0].text not in carried


def test_the_last_mention_is_still_in_the_window_when_the_fact_is_needed() -> None:
    scenario = sc.build("recurring", 8, 0)
    for need in (4, 8):
        late = scenario.sessions[need - 2]
        assert late.mentioned is scenario.sessions[need - 1].lesson
        assert late.after[-2:] == sc.hearing(sc.Mention(late.mentioned, 0, late=True))
        history = [sc.render(s.number, sc.transcript(s, s.value)) for s in scenario.sessions[: need - 1]]
        carried = arms.window(history, sc.WINDOW)
        assert sc.RECURRING[late.mentioned.key][0] in carried
        assert agent.stated(carried, late.mentioned.candidates) == late.mentioned.works[0]


def test_the_agent_never_says_the_fact_alone(tmp_path: Path) -> None:
    scenario = sc.build("recurring", 20, 0)
    for s in scenario.sessions:
        if s.mentioned is None:
            continue
        command = s.mentioned.works[0]
        for seg in journal(s, tmp_path):
            if command in seg.text:
                assert seg.cls == "USER", (s.number, seg)
        # said in passing, never run in the sessions that say it
        assert all(step.text != command for step in sc.transcript(s, s.value) if step.kind == "call")
    assert sc.HEARD_REPLY == "Good to know."


def test_the_scenario_is_one_of_kura_evals_defaults() -> None:
    from kura.evals import DEFAULT_KINDS, SESSIONS

    assert DEFAULT_KINDS == ("one", "rotated", "passing", "recurring")
    assert SESSIONS["recurring"] == 20
    assert sc.TITLES["recurring"] == "facts said in passing, recurring in unrelated sessions"


# -- sessions until memory catches the window ---------------------------------------------


def crafted(kura: str, window: str) -> arms.Run:
    """A run whose per-session outcomes are spelled out: ``K``/``W`` right, ``.`` wrong."""
    scenario = sc.build("one", len(kura), 0)

    def turns(marks: str) -> tuple[arms.Turn, ...]:
        return tuple(arms.Turn("make check" if m != "." else "make test", m != ".", None, 0) for m in marks)

    return arms.Run(
        scenario,
        1500,
        {"kura": turns(kura), "window": turns(window), "none": turns("." * len(kura))},
        arms.Kept(0, (), 0),
    )


@pytest.mark.parametrize(
    ("kura", "window", "at", "line"),
    [
        ("..KKK", "..WWW", 1, "       0   sessions until memory catches the window: it is right whenever the window is, from the first session"),
        (".K.KK", "WWWW.", 4, "       3   sessions until memory catches the window: from session 4 on it is right whenever the window is"),
        ("KKKK.", "...WW", None, "    never  sessions until memory catches the window: in session 5, the last, the window is still right where kura is not"),
        ("K.KKK", ".W..W", 3, "       2   sessions until memory catches the window: from session 3 on it is right whenever the window is"),
    ],
)  # fmt: skip
def test_sessions_until_memory_catches_the_window(kura: str, window: str, at: int | None, line: str) -> None:
    done = crafted(kura, window)
    assert report.caught(done) == at
    found = report.figures(done)
    assert found.caught == at
    assert line in report.render(found, budget=1500, seed=0).splitlines()
    data = report.to_dict(found, done)
    assert data["memory_catches_window_at"] == at
    assert data["sessions_until_memory_catches_window"] == (at - 1 if at else None)


def test_a_lead_in_the_total_does_not_hide_a_fact_the_window_gets_first() -> None:
    done = crafted("KKKK.", "...WW")  # kura ahead 4 to 2, yet the window is right last
    found = report.figures(done)
    assert found.gap > 0 and found.catch == 0  # the running total never trailed
    assert found.caught is None
    text = report.render(found, budget=1500, seed=0)
    assert "kura is ahead by 40 points" in text
    assert "       0   sessions with kura's running total of successes behind the window's" in text


def test_the_told_figure_counts_facts_said_in_several_sessions() -> None:
    scenario = sc.build("recurring", 8, 0)
    right = tuple(arms.Turn("", s.number in (4, 8), None, 0) for s in scenario.sessions)
    wrong = tuple(arms.Turn("", False, None, 0) for _ in scenario.sessions)
    quote = f"[USER] {sc.RECURRING['dev'][1]}"
    kept = arms.Kept(1, (), 0, (("the-dev-server", (quote,)),))
    done = arms.Run(scenario, 1500, {"kura": wrong, "window": right, "none": wrong}, kept)
    told = report.told(done)
    assert told == report.Told(2, 2, {"kura": 0, "window": 2, "none": 0}, 1, 3)
    text = report.render(report.figures(done), budget=1500, seed=0)
    assert (
        "facts told in passing (2, none of them asked to be remembered; each said in 3 unrelated sessions)"
        in text
    )


def test_the_ladder_carries_a_recurring_fact_across_before_it_is_needed(tmp_path: Path) -> None:
    docs = FACTS[0]
    folder = tmp_path / "kura"
    done = arms.run(sc.build("recurring", 4, 0), folder=folder)
    kura, window = done.turns["kura"], done.turns["window"]
    assert (window[3].tried, window[3].ok) == (docs.works[0], True)  # the last mention is in its window
    assert (kura[3].tried, kura[3].ok) == (docs.works[0], True)  # kura knew it before it was needed
    said = f"[USER] {sc.RECURRING['docs'][0]}"
    memory = next(m for m in Store(folder / "store").list() if said in m.note.meta.get("evidence", []))
    witnesses = [(w["kind"], w["session"]) for w in memory.note.meta["witnesses"]]
    assert witnesses == [("TIDE", "session-001"), ("CALLUS", "session-002")]
    assert report.caught(done) == 1
