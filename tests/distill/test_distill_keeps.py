"""The distiller keeps what the user says: the user's own numbers and names, the session
and day each witness was said in, an explicit request whatever a brain model proposes —
and a store reads only the journals named for it.

Every test here runs the real thing: Claude Code-shaped journals on disk, ``kura distill
run`` through the CLI, a scripted model server on a loopback socket, ``pour`` and ``why``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, ModelServer
from test_brain import Script

from kura.distill import drafts as dr
from kura.distill.final_check import numbers, violations
from kura.store.store import Store, init_store
from kura.transcripts.segments import Segment

WINDOW = "Remember that the deploy window is 30 minutes."
CLUSTER = "Remember that the staging cluster lives in eu-west-3."
TAGS = "Remember that release tags are signed with the team key."
AGENT_GUESS = "I'll also keep each rollback under 5 minutes."
SESSION_A = "0b5e1c7a-2f44-4d0e-9c1e-7d2a6b3f8e01"
SESSION_B = "9d3f0a62-81c5-4b7e-a0d4-3e6c5f1b2a97"
DAY_A = "2026-09-02T08:14:03.112Z"
DAY_B = "2026-10-14T16:40:51.908Z"


def turn(kind: str, text: str, uuid: str, *, session: str = SESSION_A, at: str = DAY_A) -> dict[str, Any]:
    """One Claude Code transcript entry: a user's words or the assistant's prose."""
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/ana/ferry",
            "sessionId": session, "version": "2.0.14", "type": kind,
            "message": {"role": kind, "content": content}, "uuid": uuid, "timestamp": at}  # fmt: skip


def journal(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows))
    return path


def configured(tmp_path: Path, journals: Path, extra: str = "", *, policy: str = "") -> tuple[Store, Path]:
    """``policy``: a write_policy for the store (``distiller-only`` keeps a request a draft)."""
    store, _ = init_store(tmp_path / "store", name="test")
    config = tmp_path / "kura.toml"
    policy_line = f'write_policy = "{policy}"\n' if policy else ""
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n{policy_line}\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
        + extra
    )
    return store, config


def distil(config: Path, *extra: str) -> dict[str, Any]:
    result = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json", *extra)
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def staged(store: Store) -> list[dr.Draft]:
    return [dr.load(store, info.id) for info in dr.drafts(store)]


# -- a user's own numbers and names ---------------------------------------------------------

NAMES = ["eu-west-3", "gpt-4o", "gw-2", "python3.12", "INC-0011", "v2.3.1", "x86_64", "k8s", "sha256"]
QUANTITIES = [
    ("the deploy window is 30 minutes", ["30"]),
    ("run 3 replicas", ["3"]),
    ("listen on port 8080", ["8080"]),  # a bare number: a wrong port is as harmful as a wrong count
    ("keep it under 512MB", ["512"]),  # digits first, then a unit: a quantity, not a name
    ("a 30min window", ["30"]),
    ("a 3-replica set", ["3"]),
    ("Python 3.12 only", ["3.12"]),  # the version apart from its name is a number
    ("release 2.3.1", ["2.3.1"]),
    ("on 2026-11-30 at 07:32", ["2026-11-30", "07:32"]),
    ("gw-2 needs 4 cores", ["4"]),  # the name is no number, the count beside it is
]


@pytest.mark.parametrize("name", NAMES)
def test_an_identifier_with_digits_is_a_name_not_a_number(name: str) -> None:
    assert [written for written, _ in numbers(f"it runs on {name} today")] == []


@pytest.mark.parametrize(("text", "expected"), QUANTITIES)
def test_a_quantity_is_still_a_number(text: str, expected: list[str]) -> None:
    assert [written for written, _ in numbers(text)] == expected


def test_a_name_must_be_in_the_human_or_machine_evidence_as_written() -> None:
    said = [Segment("USER", CLUSTER)]
    assert violations("The staging cluster lives in eu-west-3.", said, ()) == []
    assert violations("The staging cluster lives in EU-West-3.", said, ()) == []  # a name, not its case
    assert violations("The staging cluster lives in eu-west-2.", said, ()) == [
        'the name "eu-west-2" is not in the USER, TOOL or ACT evidence (a name with digits is quoted as written)'
    ]
    assert violations("It runs on eu-west-3a.", said, ()) != []  # a longer name is another name
    guessed = [Segment("SELF", "I think the cluster is in eu-west-3.")]
    assert violations("The staging cluster lives in eu-west-3.", guessed, ()) != []  # SELF licenses no name
    printed = [Segment("TOOL", "cluster staging region=eu-west-3 nodes=3")]
    assert violations("The staging cluster lives in eu-west-3.", printed, ()) == []
    assert violations("The staging cluster has 3 nodes.", printed, ()) == []


LICENCE_CASES = [
    # (composed text, evidence, violations expected?)
    (f'The user said: "{WINDOW}"', [Segment("USER", WINDOW)], False),
    ('The user said: "the deploy window is 30 minutes"', [Segment("USER", WINDOW)], False),
    ('The user corrected the agent: "the deploy window is 30 minutes"', [Segment("USER", WINDOW)], False),
    ("The deploy window is 30 minutes.", [Segment("USER", WINDOW)], True),  # restated as bare fact
    ('The user said: "the deploy window is 45 minutes"', [Segment("USER", WINDOW)], True),  # not verbatim
    ('A tool printed: "the deploy window is 30 minutes"', [Segment("USER", WINDOW)], True),  # not attributed
    ('The user said: "the deploy window is 30 minutes", so a deploy takes 30 minutes.',
     [Segment("USER", WINDOW)], True),  # the second 30 is outside the quotation
    ('Backups take, the user said: "30 minutes"', [Segment("USER", WINDOW)], True),  # lifted out of its sentence
    (f'The agent noted: "{AGENT_GUESS}"', [Segment("SELF", AGENT_GUESS)], True),  # the agent's own number
    (f'The user said: "{AGENT_GUESS}"', [Segment("SELF", AGENT_GUESS)], True),  # SELF words put in the user's mouth
]  # fmt: skip


@pytest.mark.parametrize(("text", "evidence", "refused"), LICENCE_CASES)
def test_a_number_the_user_said_is_licensed_quoted_verbatim_and_attributed(
    text: str, evidence: list[Segment], refused: bool
) -> None:
    assert bool(violations(text, evidence, ())) is refused, violations(text, evidence, ())


def test_the_users_own_numbers_and_names_survive_a_distill_run(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journal(journals / f"{SESSION_A}.jsonl", [
        turn("user", WINDOW, "u1"),
        turn("assistant", f"Noted. {AGENT_GUESS}", "a1"),
        turn("user", CLUSTER, "u2"),
    ])  # fmt: skip
    store, config = configured(tmp_path, journals, policy="distiller-only")
    report = distil(config)
    assert (report["kept"], report["dropped"]) == (2, {})
    drafts = {d.slug: d for d in staged(store)}
    window = drafts["deploy-window-30-minutes"]
    assert window.title == "The deploy window is … minutes"  # the bare number stripped, visibly
    assert window.description == 'The user said: "the deploy window is 30 minutes"'
    assert window.body.startswith(f'The user said: "{WINDOW}"\n\n**Why:**')
    cluster = drafts["staging-cluster-lives-eu-west-3"]
    assert (cluster.title, cluster.description) == ("The staging cluster lives in eu-west-3",) * 2
    assert cluster.body.startswith(f'The staging cluster lives in eu-west-3.\nThe user said: "{CLUSTER}"')
    assert not any("5 minutes" in d.body or "rollback" in d.body for d in drafts.values())
    poured = Cli()("-c", str(config), "-s", "test", "distill", "pour", "--all")
    assert poured.code == 0, poured
    index = (store.root / "MEMORY.md").read_text()
    assert 'The user said: "the deploy window is 30 minutes"' in index
    assert "The staging cluster lives in eu-west-3" in index


def test_the_agents_own_number_is_still_refused(tmp_path: Path, model_server: ModelServer) -> None:
    journals = tmp_path / "journals"
    weekdays = "The deploy window is 30 minutes on weekdays."
    guess = "I'd guess weekend deploys need 90 minutes."
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", weekdays, "u1"), turn("assistant", guess, "a1")])
    store, config = configured(
        tmp_path, journals, f'\n[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\ntimeout = 5\n'
    )
    windows = {"topic": "Deploy windows differ by day", "kind": "project", "why": "plan deploys",
               "quotes": [f"[USER] {weekdays}", f"[SELF] {guess}"]}  # fmt: skip
    scribed = {"title": "Deploy windows", "description": "Weekday and weekend deploy windows",
               "body": "Weekday deploys get 30 minutes; weekend deploys need 90 minutes.\n"}  # fmt: skip
    model_server.respond = Script({"candidates": [windows]}, novelty={"novelty": "new"}, scribe=scribed)
    assert distil(config)["kept"] == 1
    [draft] = staged(store)
    assert "90" not in f"{draft.title} {draft.description} {draft.body}"  # the scribe's text was refused
    assert draft.body == (
        f'Deploy windows differ by day.\nThe user said: "{weekdays}"\n\n'
        "**Why:** plan deploys.\n\n**How to apply:** take it as given for this project.\n"
    )


# -- witnesses keep their session -----------------------------------------------------------


def test_witnesses_keep_their_session_and_the_day_it_was_said(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", TAGS, "u1")])
    store, config = configured(tmp_path, journals, policy="distiller-only")
    cli = Cli()
    assert distil(config)["kept"] == 1
    assert cli("-c", str(config), "-s", "test", "distill", "pour", "--all").code == 0
    again = "Please remember that release tags are signed with the team key!"
    journal(journals / f"{SESSION_B}.jsonl", [turn("user", again, "u7", session=SESSION_B, at=DAY_B)])
    report = distil(config)
    assert (report["reinforced"], report["drafts"]) == (1, [])
    [slug] = store.slugs()
    shown = cli("-c", str(config), "-s", "test", "why", slug)
    assert shown.code == 0, shown
    assert "because 2 witnesses across 2 sessions\n" in shown.out
    data = json.loads(cli("-c", str(config), "-s", "test", "why", slug, "--json").out)
    assert [(w["kind"], w["session"], w["when"]) for w in data["witness_list"]] == [
        ("SAID", SESSION_A, "2026-09-02"),
        ("SAID", SESSION_B, "2026-10-14"),
    ]


# -- a brain does not weaken an explicit request --------------------------------------------


def test_a_brain_does_not_weaken_an_explicit_request(tmp_path: Path, model_server: ModelServer) -> None:
    journals = tmp_path / "journals"
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", TAGS, "u1")])
    store, config = configured(
        tmp_path,
        journals,
        f'\n[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\ntimeout = 5\n',
        policy="distiller-only",
    )
    reading = {"topic": "Tags are signed", "kind": "idea", "why": "a guess about signing",
               "quotes": ["[USER] release tags are signed with the team key"]}  # fmt: skip
    model_server.respond = Script({"candidates": [reading]}, novelty={"novelty": "new"}, scribe="no")
    report = distil(config)
    assert (report["kept"], report["ideas"]) == (1, 0)
    [draft] = staged(store)
    assert "witness:SAID" in draft.flags
    assert [(s.cls, s.text) for s in draft.evidence] == [("USER", TAGS)]
    cli = Cli()
    assert cli("-c", str(config), "-s", "test", "distill", "pour", "--all").code == 0
    shown = cli("-c", str(config), "-s", "test", "why", draft.slug)
    assert "asserted — stated as current truth" in shown.out, shown
    assert "  SAID     1.00" in shown.out


# -- journals do not cross stores -----------------------------------------------------------


def test_journals_do_not_cross_stores_by_default(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    journal(shared / f"{SESSION_A}.jsonl", [turn("user", CLUSTER, "u1")])
    own = tmp_path / "own"
    journal(own / f"{SESSION_B}.jsonl", [turn("user", WINDOW, "u1", session=SESSION_B)])
    stores = {name: init_store(tmp_path / name, name=name)[0] for name in ("a", "b", "c")}
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.a]\npath = "{stores["a"].root}"\n\n'
        f'[stores.b]\npath = "{stores["b"].root}"\nwrite_policy = "distiller-only"\n\n[stores.b.distill]\ninherit_global_journals = true\n\n'
        f'[stores.c]\npath = "{stores["c"].root}"\nwrite_policy = "distiller-only"\n\n[stores.c.distill.journals]\nclaude = ["{own}"]\n\n'
        f'[distill.journals]\nclaude = ["{shared}"]\n'
    )
    cli = Cli()
    first = cli("-c", str(config), "distill", "run", "--store", "a")
    assert (first.code, first.out) == (2, "distill: nothing new to read\n"), first
    assert first.err == (
        f"kura: {config}:18: store a reads no journals: [distill.journals] is read only by a store that "
        "opts in — set inherit_global_journals = true under [stores.a.distill], or give it its "
        "own [stores.a.distill.journals]\n"
    )
    assert cli("-c", str(config), "distill", "run", "--store", "b").code == 0
    assert cli("-c", str(config), "distill", "run", "--store", "c").code == 0
    quoted = {name: [s.text for d in staged(s) for s in d.evidence] for name, s in stores.items()}
    assert quoted == {"a": [], "b": [CLUSTER], "c": [WINDOW]}
