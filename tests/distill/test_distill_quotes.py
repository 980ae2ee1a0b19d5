"""Scars whose shape used to lose them, end to end with no model: a failure that holds
double quotes, a failure spread over two lines with no line naming it, and a short fix that
recurs session after session — plus the precision those fixes must keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kura.distill import drafts as dr
from kura.distill import novelty
from kura.distill.final_check import quote, violations
from kura.distill.rules import spot, telling_line
from kura.distill.run import Metrics, journals_for, run_pass
from kura.store.store import Store, init_store
from kura.transcripts.segments import Segment


def call(cid: str, command: str) -> dict[str, Any]:
    function = {"name": "Bash", "arguments": json.dumps({"command": command})}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": cid, "type": "function", "function": function}],
    }


def scar(failed: str, failure: str, fixed: str, output: str) -> list[dict[str, Any]]:
    """A chat session: a call fails, a related call works."""
    return [
        {"role": "user", "content": "Get this working, please."},
        call("c1", failed),
        {"role": "tool", "tool_call_id": "c1", "content": failure},
        call("c2", fixed),
        {"role": "tool", "tool_call_id": "c2", "content": output},
        {"role": "assistant", "content": "Done."},
    ]


class Journal:
    """A chat journal folder a store reads; each ``session`` adds a transcript and runs a pass."""

    def __init__(self, tmp_path: Path) -> None:
        self.store, _ = init_store(tmp_path / "store", name="s")
        self.folder = tmp_path / "journals"
        self.folder.mkdir()
        self.journals = journals_for(
            {}, {"journals": {"chat": [str(self.folder)]}}, config_source=None, store="s"
        )
        self.count = 0

    def session(self, rows: list[dict[str, Any]]) -> Metrics:
        self.count += 1
        path = self.folder / f"session-{self.count}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return run_pass(self.store, self.journals)

    def pour_all(self) -> list[dr.PourResult]:
        return [dr.pour(self.store, info.id) for info in dr.drafts(self.store)]


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path)


def body_of(store: Store, slug: str) -> str:
    return store.show(slug).note.body


# -- a failure that holds double quotes ---------------------------------------------------

MISSING = 'npm error Missing script: "start"'


def test_a_failure_holding_double_quotes_becomes_a_memory_quoted_whole(journal: Journal) -> None:
    metrics = journal.session(
        scar("npm start", MISSING, "npm run dev", "VITE ready in 412 ms at http://localhost:5173/")
    )
    assert (metrics.kept, metrics.dropped) == (1, {})
    [poured] = journal.pour_all()
    assert (poured.poured, poured.reason, poured.slug) == (True, "poured", "npm-run-dev")
    body = body_of(journal.store, "npm-run-dev")
    assert body.startswith(
        "`npm run dev` works where `npm start` failed.\n"
        'The failure read: \u201cnpm error Missing script: "start"\u201d.\n'
        'The working call printed: "VITE ready in 412 ms at http://localhost:5173/".\n\n'
    )


def test_quote_picks_marks_the_text_does_not_hold_and_the_floor_reads_them_back() -> None:
    evidence = [Segment("TOOL", MISSING), Segment("TOOL", 'say \u201chi\u201d and "bye" to the shell')]
    assert quote("plain failure text") == '"plain failure text"'
    assert quote(MISSING) == f"\u201c{MISSING}\u201d"
    assert (
        quote('say \u201chi\u201d and "bye" to the shell')
        == '\u00absay \u201chi\u201d and "bye" to the shell\u00bb'
    )
    assert quote('all "of" \u201cthe\u201d \u00abmarks\u00bb') is None
    assert quote("  two\n  lines  ") == '"two lines"'
    for text in (MISSING, 'say \u201chi\u201d and "bye" to the shell'):
        assert violations(f"The failure read: {quote(text)}.", evidence, ()) == []
    # the straight marks the old template wrote around it are read as two wrong passages
    assert violations(f'The failure read: "{MISSING}". It printed: "ready".', evidence, ()) != []


def test_a_quotation_holding_quotes_is_still_checked_whole() -> None:
    evidence = [Segment("TOOL", MISSING)]
    assert violations('The failure read: \u201cnpm error Missing script: "stop"\u201d.', evidence, ()) == [
        'the quotation "npm error Missing script: "stop"" is not verbatim in the evidence'
    ]
    assert violations('It printed: \u00abwe always deploy "on Fridays"\u00bb', evidence, ()) == [
        'the quotation "we always deploy "on Fridays"" is not verbatim in the evidence'
    ]


# -- a failure over two lines with no telling line ----------------------------------------

NO_RULE = "make: *** No rule to make target 'test'.  Stop.\nexit code 2"


def test_a_two_line_failure_with_no_named_cause_becomes_a_memory(journal: Journal) -> None:
    metrics = journal.session(scar("make test", NO_RULE, "make check", "87 passed in 4.21s"))
    assert (metrics.kept, metrics.dropped) == (1, {})
    [poured] = journal.pour_all()
    assert (poured.poured, poured.slug) == (True, "make-check")
    memory = journal.store.show("make-check")
    assert "The failure read: \"make: *** No rule to make target 'test'. Stop.\"\n" in memory.note.body
    assert memory.note.meta["evidence"][0] == "[TOOL] make: *** No rule to make target 'test'. Stop."


def test_the_telling_line_is_the_cause_not_the_exit_code() -> None:
    assert telling_line(NO_RULE) == "make: *** No rule to make target 'test'. Stop."
    assert telling_line("Exit code 127\n/bin/bash: line 1: pytest: command not found") == (
        "/bin/bash: line 1: pytest: command not found"
    )
    assert telling_line("compiling parser.c\nld: undefined symbol _main\nexit status 1") == (
        "ld: undefined symbol _main"
    )
    assert telling_line("Exit code 127\nok") == "Exit code 127"
    assert telling_line("Compiling app v0.1.0\nerror: boom\nmore") == "Compiling app v0.1.0 error: boom"
    assert telling_line("fatal:\n  oops") == "fatal: oops"  # too short alone: the line after it too
    assert telling_line("exit code 2\n\nbad") == "exit code 2 bad"  # nothing to quote alone: all of it
    [candidate] = spot(
        [
            Segment("ACT", 'Bash: {"command": "make test"}'),
            Segment("TOOL", NO_RULE),
            Segment("ACT", 'Bash: {"command": "make check"}'),
            Segment("TOOL", "87 passed"),
        ]
    )
    assert candidate["failed"] == "make: *** No rule to make target 'test'. Stop."
    assert candidate["quotes"][0] == "[TOOL] make: *** No rule to make target 'test'. Stop."


# -- a short fix that recurs ----------------------------------------------------------------

FIXTURES = ("ls test/fixtures", "ls: cannot access 'test/fixtures': No such file or directory",
            "ls tests/fixtures", "orders.csv  users.csv  empty.csv")  # fmt: skip


def test_a_recurring_short_scar_reinforces_its_memory_instead_of_duplicating(journal: Journal) -> None:
    journal.session(scar(*FIXTURES))
    assert [r.slug for r in journal.pour_all()] == ["ls-tests-fixtures"]
    for _ in range(3):
        metrics = journal.session(scar(*FIXTURES))
        assert (metrics.kept, metrics.reinforced) == (0, 1)
        assert metrics.dropped == {"already covered by a memory (ls-tests-fixtures)": 1}
        assert journal.pour_all() == []
    assert journal.store.slugs() == ("ls-tests-fixtures",)
    witnesses = journal.store.show("ls-tests-fixtures").note.meta["witnesses"]
    assert [(w["kind"], Path(w["source"]).name) for w in witnesses] == [
        ("SCAR", f"session-{n}.jsonl") for n in range(1, 5)
    ]


@pytest.mark.parametrize(
    "other",
    [
        # the same failure, fixed another way
        ("ls test/fixtures", "ls: cannot access 'test/fixtures': No such file or directory",
         "ls tests/data", "orders.csv"),
        # the fix is only a prefix of the remembered one
        ("ls test/fixtures", "ls: cannot access 'test/fixtures': No such file or directory",
         "ls tests/fixtures/orders", "orders.csv"),
        # the same two calls, the other way round: a different lesson
        ("ls tests/fixtures", "ls: cannot access 'tests/fixtures': No such file or directory",
         "ls test/fixtures", "orders.csv"),
        # another failing call, fixed the same way
        ("ls fixtures", "ls: cannot access 'fixtures': No such file or directory",
         "ls tests/fixtures", "orders.csv"),
    ],
)  # fmt: skip
def test_a_different_short_scar_is_not_taken_for_a_repeat(
    journal: Journal, other: tuple[str, str, str, str]
) -> None:
    journal.session(scar(*FIXTURES))
    journal.pour_all()
    metrics = journal.session(scar(*other))
    assert (metrics.kept, metrics.reinforced, metrics.dropped) == (1, 0, {})
    assert all(r.poured for r in journal.pour_all())
    assert len(journal.store.slugs()) == 2


def test_a_memory_of_the_same_scar_is_shortlisted_whatever_its_word_share() -> None:
    [candidate] = spot(
        [
            Segment("ACT", 'Bash: {"command": "make test"}'),
            Segment("TOOL", NO_RULE),
            Segment("ACT", 'Bash: {"command": "make check"}'),
            Segment("TOOL", "87 passed"),
        ]
    )
    crowd = [(f"check-{n}", "Make check", "make check runs the linters") for n in range(8)]
    same = ("zz-make-check", "Use make check",
            "`make check` works where `make test` failed.\n"
            "The failure read: \"make: *** No rule to make target 'test'. Stop.\"")  # fmt: skip
    near = novelty.neighbours(candidate, [*crowd, same])
    assert near[0].slug == "zz-make-check" and len(near) == novelty.NEIGHBOURS
    assert novelty.mechanical(candidate, near) == novelty.Novelty(
        "covered", "zz-make-check", "it records the same failing call, failure and fix"
    )
    assert novelty.mechanical({**candidate, "rule": "remember"}, near).verdict == "new"


def test_a_failure_holding_an_html_comment_end_survives_the_draft_and_pours(journal: Journal) -> None:
    failure = "error: unexpected token '-->' in build.js at line 12"
    journal.session(scar("node build.js", failure, "node scripts/build.js", "built 14 files"))
    staged = dr.drafts(journal.store)
    assert len(staged) == 1
    comment = staged[0].path.read_text().split("<!--", 1)[1].split("\n-->\n", 1)[0]
    assert "--&gt;" in comment and "-->" not in comment  # the evidence cannot close its comment early
    assert [r.poured for r in journal.pour_all()] == [True]
    memory = journal.store.show(staged[0].slug)
    assert failure in memory.note.body and any(failure in str(e) for e in memory.note.meta["evidence"])
