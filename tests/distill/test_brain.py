"""The brain path: a scripted brain and scribe on a real loopback socket, held to the gate.

Each role is told apart by its instructions (the system prompt after the charter), so the
scripted server answers the brain, the novelty judge and the scribe independently of the
order the pass asks them in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, ModelServer, write_memory
from test_distill_run import CORRECTION, ECHOED, REMEMBER, SESSION, SID, cc, jsonl

from kura.distill import drafts as dr
from kura.distill import novelty
from kura.distill.model_steps import SPOT_INSTRUCTIONS, WRITE_INSTRUCTIONS, Minds, chunks, merge
from kura.store.store import Store, init_store
from kura.transcripts.segments import Segment

CHARTER = "You keep the memory of the ferry project."
NOTES = "The release notes go in docs/CHANGES.md and Marta reviews them before a tag."
BRAIN_SESSION = [*SESSION, cc("user", NOTES, "u4")]
GOOD = {"topic": "Release notes go in docs/CHANGES.md", "kind": "project", "why": "so a release is documented",
        "quotes": ["[USER] The release notes go in docs/CHANGES.md"]}  # fmt: skip
STAGING = {"topic": "The staging database lives on db-staging.internal", "kind": "reference",
           "why": "not the primary", "quotes": ["[USER] the staging database lives on db-staging.internal"]}  # fmt: skip
INVENTED = {"topic": "Deploys happen on Tuesdays", "kind": "project", "why": "",
            "quotes": ["[USER] we deploy on Tuesdays"]}  # fmt: skip
SELF_ONLY = {"topic": "All tests pass", "kind": "project", "why": "", "quotes": ["[SELF] All 42 tests pass."]}
IDEA = {"topic": "Maybe cache the virtualenv between runs", "kind": "idea", "why": "pytest was missing"}
MALFORMED = {"topic": "", "kind": "project", "quotes": []}


def role(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]  # type: ignore[index]
    if SPOT_INSTRUCTIONS in system:
        return "brain"
    if WRITE_INSTRUCTIONS in system:
        return "scribe"
    return "novelty"


class Script:
    """Replies per role; records what each role was asked."""

    def __init__(self, brain: Any, novelty: Any = None, scribe: Any = None) -> None:
        self.answers = {"brain": brain, "novelty": novelty, "scribe": scribe}
        self.asked: dict[str, list[dict[str, Any]]] = {"brain": [], "novelty": [], "scribe": []}

    def __call__(self, body: dict[str, Any]) -> str:
        who = role(body)
        self.asked[who].append(body)
        answer = self.answers[who]
        if callable(answer):
            answer = answer(body)
        return answer if isinstance(answer, str) else json.dumps(answer)


@pytest.fixture
def ferry(tmp_path: Path, model_server: ModelServer) -> tuple[Store, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "archive", "project", "The archive disk is mounted read-only", body=ECHOED)
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", BRAIN_SESSION)
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\nwrite_policy = "distiller-only"  # requests stay drafts\ncharter = "{CHARTER}"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n\n'
        f'[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\ntimeout = 5\n'
    )
    return store, config


def run(config: Path, *extra: str) -> dict[str, Any]:
    result = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json", *extra)
    assert result.code in (0, 2), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def staged(store: Store) -> dict[str, dr.Draft]:
    return {info.slug: dr.load(store, info.id) for info in dr.drafts(store)}


def test_the_brain_spots_what_the_rules_miss_and_the_gate_still_decides(
    ferry: tuple[Store, Path], model_server: ModelServer
) -> None:
    store, config = ferry
    script = Script({"candidates": [GOOD, STAGING, INVENTED, SELF_ONLY, IDEA, MALFORMED]}, scribe="no idea")
    model_server.respond = script
    model_server.usage = {"prompt_tokens": 1000, "completion_tokens": 50}
    report = run(config)
    drafts = staged(store)
    # the brain's plain statement became a draft; the rules' moments are still there, once each
    notes = next(d for d in drafts.values() if "docs/CHANGES.md" in d.title)
    assert [(s.cls, s.text) for s in notes.evidence] == [("USER", "The release notes go in docs/CHANGES.md")]
    staging = [d for d in drafts.values() if "db-staging.internal" in d.body]
    # the human's explicit request stands as the rules spotted it: the brain's reading of the
    # same words (STAGING) gives way, so the witness stays SAID
    assert len(staging) == 1 and [(s.cls, s.text) for s in staging[0].evidence] == [("USER", REMEMBER)]
    assert "witness:SAID" in staging[0].flags
    assert any(CORRECTION in s.text for d in drafts.values() for s in d.evidence)
    assert any("pytest: command not found" in s.text for d in drafts.values() for s in d.evidence)
    assert not any("Tuesdays" in d.body or "All 42 tests pass" in d.body for d in drafts.values())
    # an invented quote and a SELF-only one are dropped by the gate, a malformed one counted
    assert report["dropped"]["malformed candidate from the brain"] == 1
    assert sum(report["dropped"].values()) >= 4  # invented, self-only, malformed, the echo
    assert report["ideas"] == 1
    # one brain call, under the charter, with the transcript as data in the user message
    assert len(script.asked["brain"]) == 1
    system, user = (m["content"] for m in script.asked["brain"][0]["messages"])
    assert system.startswith(CHARTER + "\n\n")
    assert user.startswith("<transcript>\n#1 [USER] ") and NOTES in user
    # tokens as the server reported them, for every call
    calls = report["model_calls"]
    assert calls == len(script.asked["brain"]) + len(script.asked["novelty"]) + len(script.asked["scribe"])
    assert (report["tokens_in"], report["tokens_out"], report["tokens_estimated"]) == (
        1000 * calls,
        50 * calls,
        False,
    )
    assert "brain m, scribe m" in report["models"]


def test_the_scribe_writes_and_the_floor_sends_embellishment_to_the_template(
    ferry: tuple[Store, Path], model_server: ModelServer
) -> None:
    store, config = ferry
    good_text = {"title": "Release notes live in docs/CHANGES.md",
                 "description": "Where release notes go: docs/CHANGES.md",
                 "body": "Release notes go in docs/CHANGES.md.\n\n**Why:** releases are documented there.\n\n"
                         "**How to apply:** add a line there with every change.\n"}  # fmt: skip
    invented = {"title": "Staging database", "description": "The staging database host",
                "body": "The staging database answers 3 times faster than the primary.\n"}  # fmt: skip

    def scribe(body: dict[str, Any]) -> Any:
        user = body["messages"][1]["content"]
        return good_text if "CHANGES" in user else invented if "staging" in user else "no"

    model_server.respond = Script({"candidates": [GOOD, STAGING]}, scribe=scribe)
    run(config)
    drafts = staged(store)
    notes = next(d for d in drafts.values() if d.title == good_text["title"])
    assert notes.body == good_text["body"] and notes.description == good_text["description"]
    staging = next(d for d in drafts.values() if "db-staging.internal" in d.body)
    assert "3 times" not in staging.body  # the template wrote it instead
    assert f'The user said: "{REMEMBER}"' in staging.body
    assert not any(d.tampered for d in dr.drafts(store))


def test_novelty_covered_drops_and_extends_stages_an_extension(
    ferry: tuple[Store, Path], model_server: ModelServer
) -> None:
    store, config = ferry
    write_memory(store.root, "release-notes", "project", "Release notes live in docs/CHANGES.md",
                 body="Every release adds its notes to docs/CHANGES.md.\n")  # fmt: skip
    write_memory(store.root, "staging-db", "reference", "Staging database host",
                 body="The staging database is db-staging.internal.\n")  # fmt: skip
    reviewer = {"topic": "Marta reviews the release notes before a tag", "kind": "project", "why": "",
                "quotes": ["[USER] Marta reviews them before a tag"]}  # fmt: skip

    def judge(body: dict[str, Any]) -> Any:
        shown = json.loads(body["messages"][1]["content"])
        topic = shown["candidate"]["topic"]
        if "Marta" in topic:
            return {"novelty": "extends", "slug": "release-notes", "reason": "adds the reviewer"}
        if "staging" in topic:
            return {"novelty": "covered", "slug": "staging-db"}
        return {"novelty": "covered", "slug": "../../etc/passwd"}  # outside the shortlist: new

    script = Script({"candidates": [reviewer, STAGING]}, novelty=judge, scribe="no")
    model_server.respond = script
    report = run(config)
    drafts = staged(store)
    extension = next(d for d in drafts.values() if "Marta" in d.body)
    assert extension.extends == "release-notes" and "extends:release-notes" in extension.flags
    assert report["extends"] == 1
    assert report["dropped"]["already covered by a memory (staging-db)"] == 1
    assert not any("db-staging.internal" in d.body for d in drafts.values())
    # the judge saw the nearest memories, the candidate's quotes and the charter first
    asked = [json.loads(b["messages"][1]["content"]) for b in script.asked["novelty"]]
    assert any(m["slug"] == "release-notes" for a in asked for m in a["memories"])
    assert all(b["messages"][0]["content"].startswith(CHARTER) for b in script.asked["novelty"])


def test_a_brain_that_does_not_answer_costs_its_candidates_not_the_pass(
    ferry: tuple[Store, Path], model_server: ModelServer
) -> None:
    store, config = ferry
    model_server.status = 503
    report = run(config)
    assert report["model_calls"] == 0 and "gave no answer" in report["models"]
    assert len(model_server.requests) == 2  # one call and its one retry, then the pass stopped asking
    assert len(staged(store)) == 3  # the rules' remember, correction and scar
    assert run(config)["nothing"] is True


def test_no_model_makes_no_call(ferry: tuple[Store, Path], model_server: ModelServer) -> None:
    store, config = ferry
    report = run(config, "--no-model")
    assert model_server.requests == [] and report["models"] == "rules only"
    assert report["tokens_in"] == 0 and len(staged(store)) == 3


def test_usage_is_estimated_when_the_server_reports_none(
    ferry: tuple[Store, Path], model_server: ModelServer
) -> None:
    _, config = ferry
    model_server.respond = Script({"candidates": []}, scribe="no")
    report = run(config)
    assert report["tokens_estimated"] is True and report["tokens_in"] > 100 and report["tokens_out"] > 0


# -- pieces -------------------------------------------------------------------------------


def test_the_mechanical_novelty_check_knows_a_repeat_from_a_reversal() -> None:
    memories = [("tests", "Run the tests", "Run the test suite with make test before pushing.")]
    repeat = {
        "topic": "Run the test suite with make test",
        "said": "remember: run the test suite with make test",
    }
    revision = {"topic": "Run the test suite with cargo test", "said": "run the test suite with cargo test"}
    reversal = {"topic": "Never run the test suite with make test before pushing", "said": ""}
    for candidate, expected in ((repeat, "covered"), (revision, "new"), (reversal, "new")):
        near = novelty.neighbours(candidate, memories)
        assert novelty.mechanical(candidate, near).verdict == expected, candidate


def test_merge_keeps_one_candidate_per_moment() -> None:
    brained = [{"quotes": ["[USER] the staging database lives on db-staging.internal"]}]
    ruled = [{"quotes": [f"[USER] {REMEMBER}"]}, {"quotes": [f"[USER] {CORRECTION}"]}]
    assert merge(brained, ruled) == [brained[0], ruled[1]]


def test_a_long_stretch_is_cut_on_segment_boundaries() -> None:
    segments = [Segment("USER", f"line {n} " + "word " * 300) for n in range(40)]
    pieces = chunks(segments, 1_000)
    assert len(pieces) > 5 and all(len(p) <= 4_000 + 2_100 for p in pieces)
    assert "\n".join(pieces).count("#") == 40
    assert Minds().usable(None) is None
