"""``kura eval``: three arms on one synthetic history, read by one agent, reported honestly —
including when the window draws or wins."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, replace

import pytest
from conftest import Cli

import kura.cli.eval  # noqa: F401  (registers the command on the shared app)
from kura.distill.contradict import disagreements
from kura.distill.rules import spot
from kura.evals import EvalReport, agent, arms, evaluate, report
from kura.evals import scenarios as sc
from kura.recall.context import HEADINGS
from kura.store.store import Store
from kura.transcripts.segments import Segment

TESTS, DOCS = sc.LESSONS[0], sc.LESSONS[1]


@pytest.fixture(scope="module")
def short() -> EvalReport:
    return evaluate(kinds=("one", "rotated"), sessions=6)


@dataclass(frozen=True)
class Passing:
    run: arms.Run
    given: dict[int, str]  # session -> the text kura's agent was given
    store: Store
    told: dict[int, sc.Lesson]  # session -> the lesson whose command was told in it in passing


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> Passing:
    given: dict[int, str] = {}

    def watch(session: sc.Session, arm: str, text: str) -> None:
        if arm == "kura":
            given[session.number] = text

    folder = tmp_path_factory.mktemp("passing") / "kura"
    done = arms.run(sc.build("passing", 12, 0), watch=watch, folder=folder)
    told = {s.number: s.told for s in done.scenario.sessions if s.told is not None}
    return Passing(done, given, Store(folder / "store"), told)


def sections(text: str) -> dict[str, str]:
    """kura's context cut at its headings: heading -> the lines under it."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.strip() in HEADINGS.values():
            current = line.strip()
            out.setdefault(current, [])
        else:
            out.setdefault(current, []).append(line)
    return {heading: "\n".join(lines) for heading, lines in out.items()}


def test_every_scenario_reports_three_arms_within_the_ceiling(short: EvalReport) -> None:
    for found in short.figures:
        assert set(found.arms) == {"kura", "window", "none"}
        assert found.arms["kura"].success <= found.ceiling
        assert found.arms["window"].success <= found.ceiling
    text = short.text()
    assert text.count("agent outcomes") == 2
    assert "% without memory" in text and "the same history in the window" in text


def test_without_memory_every_task_fails_and_nothing_is_injected(short: EvalReport) -> None:
    for found in short.figures:
        none = found.arms["none"]
        assert (none.success, none.stated, none.tokens_mean) == (0, 0, 0)


def test_one_lesson_is_learnt_once_and_the_window_is_level(short: EvalReport) -> None:
    one = short.figures[0]
    assert one.kind == "one"
    assert one.ceiling == 5  # every session after the first
    assert one.arms["kura"].success == 5
    assert one.arms["window"].success == 5
    assert report.verdict(one) == "kura is level"
    assert "— kura is level" in short.text()
    first = short.runs[0].turns["kura"][0]
    assert (first.tried, first.ok, first.stated) == ("make test", False, None)


def test_the_window_loses_a_lesson_its_history_outgrew() -> None:
    scenario = sc.make("custom", "outgrown", [DOCS] + [TESTS] * 7 + [DOCS], seed=0)
    done = arms.run(scenario, budget=400)
    last = {arm: turns[-1] for arm, turns in done.turns.items()}
    assert last["kura"].ok and last["kura"].stated == DOCS.works[0]
    assert not last["window"].ok and last["window"].stated is None
    assert all(turns[-1].tokens <= 400 for turns in done.turns.values())
    found = report.figures(done)
    assert found.gap > 0 and report.verdict(found).startswith("kura is ahead by")


def test_a_window_that_wins_is_named_the_winner(short: EvalReport) -> None:
    rotated = short.figures[1]
    kura = rotated.arms["kura"]
    behind = replace(
        rotated, arms={**rotated.arms, "window": replace(kura, name="window", success=kura.success + 1)}
    )
    assert report.verdict(behind).startswith("the window wins: it is ahead of kura by")
    assert "the window wins" in report.render(behind, budget=1500, seed=0)


def test_the_same_seed_gives_the_same_report() -> None:
    first = evaluate(kinds=("rotated", "passing"), sessions=5, seed=7)
    again = evaluate(kinds=("rotated", "passing"), sessions=5, seed=7)
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())
    assert first.text() == again.text()


def test_a_replaced_fact_is_superseded_and_never_stated_as_current_again() -> None:
    done = evaluate(kinds=("long",), sessions=8)
    found, run = done.figures[0], done.runs[0]
    assert (found.change_at, found.old, found.new) == (4, "make check", "make verify")
    assert found.superseded, "the rule-based distiller did not supersede the old memory"
    kura = run.turns["kura"]
    assert kura[3].stated == "make check" and not kura[3].ok  # the day it changed nobody knew
    assert kura[7].stated == "make verify" and kura[7].ok
    assert found.after >= 1 and found.arms["kura"].stale == 0
    assert "yes  the rule-based distiller superseded the old memory" in done.text()


def test_no_embedder_is_ever_loaded() -> None:
    code = (
        "import sys; from kura.evals import evaluate; evaluate(kinds=('one',), sessions=2); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_agent_reads_every_arm_the_same_way() -> None:
    window = "\n".join([
        "$ make test → make: *** No rule to make target 'test'.  Stop. (error 2)",
        "$ make check → 87 passed in 4.21s",
    ])  # fmt: skip
    assert agent.stated(window, TESTS.candidates) == "make check"
    memory = "From memory:\n### Use make check [make-check]\nWhen make test fails: make check is what worked"
    assert agent.stated(memory, TESTS.candidates) == "make check"
    withdrawn = f"{HEADINGS['record']}\n- Use make check [make-check]: When make test fails: make check is what worked"
    assert agent.stated(withdrawn, TESTS.candidates) is None
    corrected = window + "\nuser: No, make check fails now: use make verify."
    assert agent.stated(corrected, TESTS.candidates) == "make verify"
    assert agent.stated("", TESTS.candidates) is None


def test_the_command_prints_the_report_and_json(cli: Cli) -> None:
    result = cli("eval", "--sessions", "2", "--json")
    assert result.code == 0, result
    data = json.loads(result.out)
    assert [s["scenario"] for s in data["scenarios"]] == ["one", "rotated", "passing", "recurring"]
    assert set(data["scenarios"][0]["arms"]) == {"kura", "window", "none"}
    assert all("sessions_until_memory_catches_window" in s for s in data["scenarios"])
    text = cli("eval", "--sessions", "2")
    assert text.code == 0 and "agent outcomes" in text.out
    assert text.out.count("sessions until memory catches the window") == 4
    assert "facts said in passing, recurring in unrelated sessions — 2 sessions, seed 0" in text.out
    assert cli("eval", "--sessions", "1").code != 0


def test_a_fact_told_in_passing_leaves_the_window_ahead_of_kura(passing: Passing) -> None:
    done, told = passing.run, passing.told
    assert sorted(told) == [1, 3, 5, 7, 9]  # a fact every other session, each needed right after
    kura, window = done.turns["kura"], done.turns["window"]
    for at, lesson in told.items():
        needed = done.scenario.sessions[at]
        assert needed.lesson is lesson and needed.knowable
        assert (kura[at].tried, kura[at].ok) == (lesson.naive, False)  # kura meets it cold
        assert (window[at].tried, window[at].ok) == (lesson.works[0], True)  # the window heard it
        later = [s.number for s in done.scenario.sessions[at + 1 :] if s.lesson is lesson]
        assert all(kura[n - 1].ok for n in later)  # the failure left a scar: kura knows it from then on
    found = report.figures(done)
    assert found.ceiling == 11  # everything after session 1: each told fact is knowable the session after
    assert found.arms["window"].success > found.arms["kura"].success
    assert report.verdict(found).startswith("the window wins: it is ahead of kura by")
    assert found.told == report.Told(5, 5, {"kura": 0, "window": 5, "none": 0}, 0)
    assert found.catch is None
    text = report.render(found, budget=done.budget, seed=0)
    assert "   0 of 5  kura memory: right the first time one was needed after it was told" in text
    assert "   5 of 5  the window: right the first time one was needed after it was told" in text


def test_the_distiller_keeps_no_memory_of_a_fact_told_in_passing(passing: Passing) -> None:
    memories = passing.store.list()
    assert memories and len(memories) == passing.run.store.memories
    for memory in memories:
        kinds = {w["kind"] for w in memory.note.meta["witnesses"]}
        assert kinds == {"SCAR"}, (memory.slug, kinds)
        assert not any(str(q).startswith("[USER]") for q in memory.note.meta["evidence"]), memory.slug
    sources = {m.note.meta["name"]: str(m.note.meta["source"]) for m in memories}
    for at, lesson in passing.told.items():  # written from the session that failed, not the telling
        assert sources[f"Use {lesson.works[0]}"].endswith(f"session-{at + 1:03d}.jsonl")
    live = [(m.slug, f"{m.name}. {m.description}", "project") for m in memories]
    for lesson in passing.told.values():
        said = [Segment("SELF", sc.TOLD_REPLY), Segment("USER", sc.PASSING[lesson.key])]
        assert spot(said) == [] and disagreements(said, live) == []
        asked = [Segment("SELF", sc.TOLD_REPLY), Segment("USER", "Remember that " + sc.PASSING[lesson.key])]
        assert [c["rule"] for c in spot(asked)] == ["remember"]  # the same words as a request are kept


def test_a_told_fact_reaches_kura_only_as_evidence_it_was_said(passing: Passing) -> None:
    for at, lesson in passing.told.items():
        text = passing.given[at + 1]
        sentence = sc.PASSING[lesson.key]
        found = {heading for heading, body in sections(text).items() if sentence in body}
        assert found == {HEADINGS["spans"]}, (at, found)
        assert agent.stated(text, lesson.candidates) is None
        # the same procedure would act on it without the heading: it is the heading that holds it back
        unheaded = sections(text)[HEADINGS["spans"]]
        assert agent.stated(unheaded, lesson.candidates) == lesson.works[0]


def test_a_memory_written_from_a_told_sentence_is_counted(passing: Passing) -> None:
    sentence = sc.PASSING[passing.told[1].key]
    wrote = replace(passing.run.store, evidence=(("docs", (f"[USER] {sentence}",)),))
    found = report.told(replace(passing.run, store=wrote))
    assert found is not None and found.kept == 1
    assert report.told(evaluate(kinds=("one",), sessions=2).runs[0]) is None
