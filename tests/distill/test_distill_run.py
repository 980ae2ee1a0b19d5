"""One distiller pass with no model, on real-shaped Claude Code transcripts: the rule-based
spotter finds a request to remember, a correction and a fail-then-fix; the template
composer writes drafts the floor accepts; nothing is read twice, even by two processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, write_memory

from kura.distill import drafts as dr
from kura.distill.final_check import numbers, violations
from kura.distill.gate import judge
from kura.distill.rules import cut, spot
from kura.distill.run import journals_for, run_pass
from kura.store.store import Store, init_store
from kura.transcripts import journals as jr
from kura.transcripts.segments import Segment, normalise
from kura.transcripts.sources import read_segments

SID = "6f1c2a8e-3b7d-4e52-9a0c-1d2e3f4a5b6c"
REMEMBER = "Remember that the staging database lives on db-staging.internal, not on the primary host."
CORRECTION = "No, use the blue-green deploy, not the rolling one. We never do rolling deploys on Fridays."
ECHOED = "Remember that the archive disk is mounted read-only."
SELF_ONLY = "Remember that I always cache the build artefacts in the shared folder."


def cc(kind: str, content: Any, uuid: str, **extra: Any) -> dict[str, Any]:
    """One Claude Code transcript entry, with the envelope fields the real ones carry."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-4-5", **message}
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/ana/ferry",
            "sessionId": SID, "version": "2.0.14", "gitBranch": "main", "type": kind, "message": message,
            "uuid": uuid, "timestamp": "2026-09-02T08:14:03.112Z", **extra}  # fmt: skip


def say(text: str, uuid: str) -> dict[str, Any]:
    return cc("assistant", [{"type": "text", "text": text}], uuid)


def bash(command: str, uuid: str) -> dict[str, Any]:
    call = {"type": "tool_use", "id": f"toolu_{uuid}", "name": "Bash", "input": {"command": command}}
    return cc("assistant", [call], uuid)


def result(text: str, uuid: str, *, error: bool = False) -> dict[str, Any]:
    block = {"tool_use_id": f"toolu_{uuid}", "type": "tool_result", "content": text, "is_error": error}
    return cc("user", [block], f"r{uuid}")


SESSION = [
    {"type": "summary", "summary": "Fix the test run and deploy", "leafUuid": "u0"},
    cc("user", REMEMBER, "u1"),
    say("I'll run the test suite first.", "a1"),
    bash("pytest -q tests", "a2"),
    result("Exit code 127\n/bin/bash: line 1: pytest: command not found", "a2", error=True),
    say("pytest is not on PATH; I'll use the project's virtualenv.", "a3"),
    bash(". .venv/bin/activate && python -m pytest -q tests", "a4"),
    result("........\n42 passed in 3.41s", "a4"),
    say("All 42 tests pass. I'll deploy with the rolling strategy now.", "a5"),
    cc("user", CORRECTION, "u2"),
    say(SELF_ONLY, "a6"),
    bash("cat memory/archive.md", "a7"),
    result(f"---\nname: archive\n---\n\n{ECHOED}", "a7"),
    cc("user", ECHOED, "u3"),
]


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Store, Path, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "archive", "project", "The archive disk is mounted read-only", body=ECHOED)
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", SESSION)
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\nwrite_policy = "distiller-only"  # requests stay drafts\n\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    return store, journals, config


def journals_of(journals: Path) -> jr.Journals:
    return journals_for({}, {"journals": {"claude": [str(journals)]}}, config_source=None, store="test")


def staged(store: Store) -> list[dr.Draft]:
    return [dr.load(store, info.id) for info in dr.drafts(store)]


# -- the spotter and the composer ---------------------------------------------------------


def test_the_spotter_finds_the_three_moments_and_nothing_from_self(setup: tuple[Store, Path, Path]) -> None:
    _, journals, _ = setup
    segments = read_segments(journals / "ferry" / f"{SID}.jsonl")
    found = spot(segments)
    assert [(c["rule"], c["kind"]) for c in found] == [
        ("remember", "project"),
        ("scar", "project"),
        ("correction", "feedback"),
        ("remember", "project"),  # the echo: spotted, then refused by the gate
    ]
    assert found[0]["quotes"] == [f"[USER] {REMEMBER}"]
    assert found[1]["quotes"] == [
        "[TOOL] /bin/bash: line 1: pytest: command not found",
        '[ACT] Bash: {"command": "pytest -q tests"}',
        '[ACT] Bash: {"command": ". .venv/bin/activate && python -m pytest -q tests"}',
        "[TOOL] 42 passed in 3.41s",
    ]
    assert found[2]["quotes"] == [f"[USER] {CORRECTION}", "[SELF] I'll deploy with the rolling strategy now."]
    assert not any(SELF_ONLY in q for c in found for q in c["quotes"])


def test_quotes_are_cut_on_word_boundaries_and_stay_verbatim() -> None:
    text = "Remember that " + " ".join(f"word{i}" for i in range(200)) + "."
    quote = cut(text)
    assert len(quote) <= 400 and quote in text and text[len(quote)] == " "
    [candidate] = spot([Segment("USER", text)])
    assert candidate["quotes"] == [f"[USER] {quote}"]


def test_questions_and_assent_are_not_requests_or_corrections() -> None:
    segments = [
        Segment("SELF", "I added the retry loop to the uploader."),
        Segment("USER", "No, that's fine, go ahead and commit it."),
        Segment("SELF", "Committed the uploader change."),
        Segment("USER", "Actually, can you also add a test for the retry loop?"),
        Segment("USER", "Remember that script we wrote for the uploader?"),
        Segment("USER", "Never mind the flaky test for now, just push."),
    ]
    assert spot(segments) == []


def test_a_failure_fixed_only_after_the_user_stepped_in_is_no_scar() -> None:
    segments = [
        Segment("ACT", 'Bash: {"command": "make deploy"}'),
        Segment("TOOL", "make: *** [deploy] Error 2"),
        Segment("USER", "try the staging target"),
        Segment("ACT", 'Bash: {"command": "make deploy-staging"}'),
        Segment("TOOL", "deployed to staging"),
    ]
    assert spot(segments) == []
    retried = [segments[0], segments[1], segments[0], Segment("TOOL", "deployed to production")]
    assert spot(retried) == []  # the same call passing on a retry is no lesson


# -- one pass -------------------------------------------------------------------------------


def test_one_pass_stages_the_right_drafts(setup: tuple[Store, Path, Path]) -> None:
    store, journals, _ = setup
    store = Store(store.root, name="test", write_policy="distiller-only")  # requests stay drafts
    segments = read_segments(journals / "ferry" / f"{SID}.jsonl")
    metrics = run_pass(store, journals_of(journals))
    assert (metrics.nothing, metrics.sources, metrics.candidates, metrics.kept) == (False, 1, 4, 3)
    assert metrics.dropped == {"no quote survived the gate": 1}  # the store's own words, read back
    assert metrics.segments == {"USER": 3, "SELF": 4, "ACT": 3, "TOOL": 3}
    drafts = staged(store)
    assert sorted(d.kind for d in drafts) == ["feedback", "project", "project"]
    assert len(metrics.drafts) == 3 and all(not d.tampered for d in drafts)
    machine = " ".join(s.text for s in segments if s.cls in ("TOOL", "ACT"))
    licensed = {w for w, _ in numbers(machine)}
    for draft in drafts:
        assert {s.cls for s in draft.evidence} != {"SELF"}
        for quote in draft.evidence:  # verbatim in one segment of its own class
            assert any(normalise(quote.text) in normalise(s.text) for s in segments if s.cls == quote.cls)
        text = "\n\n".join((draft.title, draft.description, draft.body))
        assert violations(text, draft.evidence, store.slugs()) == []
        assert {w for w, _ in numbers(text)} <= licensed  # no invented numbers
        assert "**Why:**" in draft.body and "**How to apply:**" in draft.body
        assert len(draft.description) <= 150
        assert "cache the build" not in text and "archive disk" not in text
    by_kind = {d.kind: d for d in drafts}
    assert f'The user corrected the agent: "{CORRECTION}"' in by_kind["feedback"].body
    bodies = " ".join(d.body for d in drafts)
    assert f'The user said: "{REMEMBER}"' in bodies
    assert (
        "`. .venv/bin/activate && python -m pytest -q tests` works where `pytest -q tests` failed." in bodies
    )
    assert all(dr.pour(store, d.id).poured for d in drafts)  # the no-model path pours by hand


def test_a_number_only_the_human_gave_is_kept_in_their_words_never_as_bare_fact(tmp_path: Path) -> None:
    store = Store(
        init_store(tmp_path / "store", name="test")[0].root, name="test", write_policy="distiller-only"
    )
    said = "Remember that the cache holds 512 entries at most."
    jsonl(tmp_path / "j" / "s.jsonl", [cc("user", said, "u1")])
    metrics = run_pass(store, journals_of(tmp_path / "j"))
    assert (metrics.kept, metrics.dropped) == (1, {})
    [draft] = staged(store)
    assert draft.body.startswith(f'The user said: "{said}"\n\n')  # not "The cache holds 512 entries"
    assert (draft.title, draft.description) == (
        "The cache holds … entries at most",
        'The user said: "the cache holds 512 entries at most"',
    )


def test_the_cli_runs_a_pass_then_reads_nothing(setup: tuple[Store, Path, Path]) -> None:
    store, journals, config = setup
    cli = Cli()
    first = cli("-c", str(config), "distill", "run", "--store", "test")
    assert first.code == 0, first
    assert first.out.startswith("distill: 1 source(s), segments USER=3 TOOL=3 ACT=3 SELF=4, candidates 4,")
    assert "kept 3, dropped 1 (1× no quote survived the gate), drafts 3, ideas 0" in first.out
    again = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert again.code == 2, again
    assert json.loads(again.out)["nothing"] is True
    assert len(dr.drafts(store)) == 3
    jsonl(journals / "ferry" / f"{SID}.jsonl", [cc("user", "Thanks, looks good.", "u9")])
    third = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert third.code == 0 and json.loads(third.out)["segments"]["USER"] == 1


# -- two processes at once ------------------------------------------------------------------

WORKER = """
import sys
from kura.distill.run import journals_for, run_pass
from kura.store.store import Store
store = Store(sys.argv[1], name="test", write_policy="distiller-only")
journals = journals_for({}, {"journals": {"claude": [sys.argv[2]]}}, config_source=None, store="test")
while not run_pass(store, journals, max_bytes=1500).nothing:
    pass
"""
COLOURS = ["amber", "cobalt", "crimson", "olive", "teal", "violet"]
ANIMALS = ["heron", "otter", "lynx", "badger", "falcon", "marten", "ibis"]


def test_two_processes_never_stage_a_candidate_twice(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    said = []
    for f, colour in enumerate(COLOURS):
        rows = []
        for animal in ANIMALS:
            said.append(f"Remember that the {colour} {animal} queue drains into the cold bucket.")
            rows += [
                cc("user", said[-1], f"u{f}{animal}"),
                say("Noted, I will keep that in mind.", f"a{animal}"),
            ]
        jsonl(tmp_path / "j" / f"s{f}.jsonl", rows)
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(store.root), str(tmp_path / "j")])
        for _ in range(2)
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0]
    quoted = [s.text for d in staged(store) for s in d.evidence]
    assert sorted(quoted) == sorted(said)


def test_a_failed_stage_releases_the_stretch(setup: tuple[Store, Path, Path]) -> None:
    store, journals, _ = setup

    def broken(store: Store, **_: Any) -> Path:
        raise OSError("disk full")

    with pytest.raises(OSError):
        run_pass(store, journals_of(journals), stage=broken)
    assert jr.watermark(store.state_dir, jr.Source(journals / "ferry" / f"{SID}.jsonl")).line == 0
    assert run_pass(store, journals_of(journals)).kept == 3  # read again, nothing lost


def test_the_gate_sees_what_the_spotter_quotes(setup: tuple[Store, Path, Path]) -> None:
    _, journals, _ = setup
    segments = read_segments(journals / "ferry" / f"{SID}.jsonl")
    verdicts = judge(spot(segments), segments, ECHOED)
    assert [v.verdict for v in verdicts] == ["kept", "kept", "kept", "dropped"]
