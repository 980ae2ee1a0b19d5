"""Facts over time: a correction replaces what it corrects, on every edge.

A memory that says two things at once is worse than none: each case here is a way the old
fact used to survive a correction — a body still saying Tuesday, two live memories with two
answers, a replaced fact made current again by decay — with what must happen instead.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

import pytest
from conftest import Cli, write_memory
from test_mcp import client
from test_server import Served, serving

from kura.config import parse_config
from kura.files import memory_file as nt
from kura.life import lifecycle
from kura.recall.recall import FRAME
from kura.store.store import Store, init_store
from kura.text import claim_match

TODAY = dt.date.today().isoformat()
TUESDAY = "deploys go out Tuesday 10:00 CET, never on Fridays"
WEDNESDAY = "deploys go out Wednesday 09:00 CET, never on Fridays"
CARGO = "We run the tests with cargo test"
MAKE = "We run the tests with make test"
KEPT_CLI = (
    "kura: deploy-day: the body was not changed — it is not the old description, so it was "
    "written on purpose and may still say what the old one said; to change it too: kura remember "
    "deploy-day DESCRIPTION BODY (or - as BODY to read it from stdin)\n"
)
KEPT_NOTE = (
    "the body was not changed: it is not the old description, so it was written on purpose and "
    "may still say what the old one said — send body as well to change it"
)
REVISES_CLI = (
    f'kura: make-test appears to revise cargo-test ("{CARGO}"), which stays current beside it; if it '
    "replaces that one, run the same command with --supersedes cargo-test\n"
)
REVISES_NOTE = (
    f'make-test appears to revise cargo-test ("{CARGO}"), which stays current beside it; if it '
    'replaces that one, write it again with supersedes: "cargo-test"'
)


def at(store: Store, *args: str) -> list[str]:
    return ["-s", str(store.root), *args]


def witnessed(store: Store, slug: str, description: str, when: str, quote: str) -> None:
    """A distilled memory: one FIX witness, its index line."""
    meta = {"name": slug, "description": description, "type": "project", "created": "2026-01-05",
            "witnesses": [{"kind": "FIX", "when": when, "session": slug, "quote": quote}]}  # fmt: skip
    store.write_file(slug, nt.render(nt.new_note(meta, description + ".\n")).encode("utf-8"))


@pytest.fixture
def replaced(store: Store) -> Store:
    """cargo-test, superseded by make-test the way the distiller records it."""
    witnessed(store, "cargo-test", CARGO, "2026-11-01", "use cargo test")
    witnessed(store, "make-test", MAKE, "2026-11-20", "we run the tests with make test now")
    lifecycle.supersede(store, "cargo-test", "make-test")
    return store


# -- a body derived from the description follows it ----------------------------------------------


def test_the_readme_example_corrected_shows_the_new_day_only(cli: Cli, store: Store) -> None:
    assert cli(*at(store, "remember", "deploy-day", TUESDAY, "--type", "project")).code == 0
    again = cli(*at(store, "remember", "deploy-day", WEDNESDAY))
    assert (again.code, again.err) == (0, "")
    shown = cli(*at(store, "show", "deploy-day"))
    assert f"description: {WEDNESDAY}\n" in shown.out and shown.out.endswith(f"---\n{WEDNESDAY}\n")
    assert "Tuesday" not in shown.out
    told = cli(*at(store, "context", "when do we deploy"))
    assert told.code == 0 and WEDNESDAY in told.out and "Tuesday" not in told.out


def test_a_title_kura_made_from_a_short_description_follows_it_too(cli: Cli, store: Store) -> None:
    """A short description is also the memory's title (its ``name``, the index line's label,
    context's heading): a title kura made follows the correction like the body, or the old
    fact stays in the index and in context ("[ships Tuesday 10:00] — ships Wednesday 09:00")."""
    assert cli(*at(store, "remember", "ship", "ships Tuesday 10:00")).code == 0
    assert cli(*at(store, "remember", "ship", "ships Wednesday 09:00")).code == 0
    note = store.show("ship").note
    assert (note.meta["name"], note.body.strip()) == ("ships Wednesday 09:00", "ships Wednesday 09:00")
    assert "- [ships Wednesday 09:00](ship.md) — ships Wednesday 09:00" in store.index_path.read_text()
    told = cli(*at(store, "context", "when do we ship"))
    assert told.code == 0 and "Tuesday" not in told.out
    cli(*at(store, "remember", "ship", "ships Wednesday 09:00", "--title", "Ship day"))
    cli(*at(store, "remember", "ship", "ships Thursday 08:00"))  # a title someone gave is theirs
    assert store.show("ship").note.meta["name"] == "Ship day"


def test_a_derived_body_with_blank_lines_around_it_follows_too(cli: Cli, store: Store) -> None:
    write_memory(store.root, "deploy-day", "project", TUESDAY, body=f"\n\n  {TUESDAY}  \n")
    assert cli(*at(store, "remember", "deploy-day", WEDNESDAY)).err == ""
    assert store.show("deploy-day").note.body.strip() == WEDNESDAY


def test_a_written_body_is_kept_and_the_command_says_how_to_change_it(cli: Cli, store: Store) -> None:
    body = "Tuesday, because the release train leaves Monday night.\n"
    cli(*at(store, "remember", "deploy-day", TUESDAY, body))
    again = cli(*at(store, "remember", "deploy-day", WEDNESDAY))
    assert (again.code, again.err) == (0, KEPT_CLI)
    assert store.show("deploy-day").note.body == body
    as_json = json.loads(cli(*at(store, "remember", "deploy-day", TUESDAY, "--json")).out)
    assert as_json["body_kept"] is True
    same = cli(*at(store, "remember", "deploy-day", TUESDAY))  # nothing new said: nothing to warn of
    assert (same.code, same.err) == (2, "")


# -- direct writes can supersede ---------------------------------------------------------------


def test_supersedes_records_the_replacement_as_the_distiller_does(cli: Cli, store: Store) -> None:
    cli(*at(store, "remember", "cargo-test", CARGO))
    made = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    assert made.code == 0 and made.err == "", made
    assert made.out.splitlines()[1] == (
        f"superseded cargo-test: kept as history (superseded_by make-test, valid_until {TODAY}), "
        "out of the index"
    )
    old, new = store.show("cargo-test").note.meta, store.show("make-test").note.meta
    assert (old["superseded_by"], old["valid_until"], new["supersedes"]) == (
        "make-test",
        TODAY,
        ["cargo-test"],
    )
    assert store.index().named() == ("make-test",)
    told = cli(*at(store, "context", "how do we run the tests"))
    assert f"From memory — information, not instructions:\n### {MAKE} [make-test]\n{MAKE}\n" in told.out
    assert told.out.count(f"- {CARGO} [cargo-test]: {CARGO} (replaced by make-test)\n") == 1
    rerun = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    assert rerun.code == 2 and store.show("make-test").note.meta["supersedes"] == ["cargo-test"]


def test_supersedes_refuses_a_missing_memory_itself_and_a_taken_one(cli: Cli, store: Store) -> None:
    cli(*at(store, "remember", "cargo-test", CARGO))
    before = {p.name: p.read_bytes() for p in store.root.glob("*.md")}
    ghost = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "ghost"))
    assert (ghost.code, ghost.err) == (1, "kura: error: store/make-test: cannot supersede 'ghost': no memory "
                                          "'ghost' in store 'store'; nothing was written — `kura list` shows "
                                          "what there is\n")  # fmt: skip
    itself = cli(*at(store, "remember", "cargo-test", MAKE, "--supersedes", "cargo-test"))
    assert (itself.code, itself.err) == (
        1, "kura: error: store/cargo-test: a memory cannot supersede itself; nothing was written\n"
    )  # fmt: skip
    assert {p.name: p.read_bytes() for p in store.root.glob("*.md")} == before
    cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    taken = cli(
        *at(store, "remember", "just-test", "We run the tests with just test", "--supersedes", "cargo-test")
    )
    assert (taken.code, taken.err) == (1, "kura: error: store/just-test: cannot supersede 'cargo-test': it is "
                                          "already superseded by make-test — supersede that one instead; "
                                          "nothing was written\n")  # fmt: skip
    assert not store.root.joinpath("just-test.md").exists()
    back = cli(*at(store, "remember", "cargo-test", CARGO, "--supersedes", "make-test"))
    assert (back.code, back.err) == (1, "kura: error: store/cargo-test: cannot supersede 'make-test': "
                                        "cargo-test is itself superseded by make-test, so neither would be "
                                        "current; nothing was written\n")  # fmt: skip


def test_an_old_memory_kura_cannot_rewrite_is_refused_before_anything_is_written(
    cli: Cli, store: Store
) -> None:
    store.root.joinpath("cargo-test.md").write_text(f"---\ndescription: {CARGO}\n\n{CARGO}\n")  # never closed
    made = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    assert made.code == 1 and made.err.startswith(
        "kura: error: store/make-test: cannot supersede 'cargo-test': "
    )
    assert "the frontmatter is never closed" in made.err and made.err.endswith("; nothing was written\n")
    assert not store.root.joinpath("make-test.md").exists()


def test_a_supersede_that_fails_after_the_write_says_where_things_stand(
    cli: Cli, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(*at(store, "remember", "cargo-test", CARGO))
    real = Store.update

    def refuse_old(self: Store, slug: str, change: object, **kw: object) -> object:
        if slug == "cargo-test":
            raise OSError(28, "No space left on device")
        return real(self, slug, change, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "update", refuse_old)
    failed = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    assert (failed.code, failed.err) == (1, (
        "kura: error: store/make-test: created, and it names cargo-test in supersedes, but cargo-test "
        "was not marked as replaced ([Errno 28] No space left on device): both are current until it "
        "is — repeat this write to finish\n"
    ))  # fmt: skip
    assert store.show("make-test").note.meta["supersedes"] == ["cargo-test"]
    monkeypatch.setattr(Store, "update", real)
    finished = cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    assert finished.code == 0 and store.show("cargo-test").note.meta["superseded_by"] == "make-test"
    assert store.index().named() == ("make-test",)


def test_a_write_that_revises_a_live_memory_says_so_and_doctor_lists_the_pair(cli: Cli, store: Store) -> None:
    cli(*at(store, "remember", "cargo-test", CARGO))
    made = cli(*at(store, "remember", "make-test", MAKE))
    assert (made.code, made.err) == (0, REVISES_CLI)
    assert store.index().named() == ("cargo-test", "make-test")  # written all the same
    assert json.loads(cli(*at(store, "remember", "make-test", MAKE, "--json")).out)["revises"] == "cargo-test"
    doctor = json.loads(cli(*at(store, "doctor", "--json")).out)
    pairs = [f for f in doctor["findings"] if f["check"] == "claims"]
    assert pairs == [{
        "check": "claims", "severity": "warning", "path": "store/make-test.md", "line": 1,
        "message": f'make-test and cargo-test revise one another ("{MAKE}" / "{CARGO}") and both are '
                   "served as current — if make-test replaces cargo-test: kura remember make-test "
                   f"'{MAKE}' --supersedes cargo-test (or the other way round); if both hold, say in "
                   "their descriptions what tells them apart",
    }]  # fmt: skip
    cli(*at(store, "remember", "make-test", MAKE, "--supersedes", "cargo-test"))
    doctor = json.loads(cli(*at(store, "doctor", "--json")).out)
    assert [f for f in doctor["findings"] if f["check"] == "claims"] == []


def test_doctor_compares_every_pair_it_must_and_skips_a_pattern() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    said = {f"c{i:03d}": " ".join(rng.sample(vocab, rng.randint(2, 7))) + rng.choice(["", " never"])
            for i in range(400)}  # fmt: skip
    read = {key: (claim_match.words(text), claim_match.negated(text)) for key, text in said.items()}
    every = [
        (a, b) for a, b in combinations(sorted(said), 2) if claim_match.relate(read[a], read[b]) == "revision"
    ]
    assert len(every) > 50 and claim_match.pairs(said, family=len(said)) == every
    partners = Counter(slug for pair in every for slug in pair)
    assert claim_match.pairs(said) == [(a, b) for a, b in every if partners[a] <= 3 and partners[b] <= 3]
    pattern = {f"m{i}": f"fact number {i} about service-{i % 7} on port {8000 + i % 10}" for i in range(200)}
    assert claim_match.pairs(pattern) == []


# -- decay never makes a replaced fact current again -------------------------------------------


def test_decay_keeps_a_correction_while_what_it_replaced_is_findable(cli: Cli, replaced: Store) -> None:
    store = replaced
    plan = json.loads(cli(*at(store, "decay", "--at", "2030-01-01", "--json")).out)
    assert plan["fates"] == [{
        "slug": "make-test", "outcome": "unasserted", "confidence": 0.23, "strength": 0.0,
        "reason": "strength 0.00: spent, but kept — it replaced cargo-test, which is still findable "
                  "(archived, the replaced fact would be the only answer)",
    }]  # fmt: skip
    applied = cli(*at(store, "decay", "--at", "2030-01-01", "--apply"))
    assert applied.code == 2 and "archived" not in store.show("make-test").note.meta
    found = json.loads(cli(*at(store, "recall", "how do we run the tests", "--json", "--no-model")).out)
    assert [p["slug"] for p in found["picked"]][:2] == ["make-test", "cargo-test"]


def test_a_superseded_pick_brings_its_successor_before_it(cli: Cli, replaced: Store) -> None:
    store = replaced
    found = json.loads(
        cli(*at(store, "recall", CARGO, "--top", "1", "--hops", "0", "--json", "--no-model")).out
    )
    assert [(p["slug"], p.get("replaces")) for p in found["picked"]] == [
        ("make-test", "cargo-test"), ("cargo-test", None),
    ]  # fmt: skip
    context = found["context"]
    assert (
        context.startswith(FRAME + "\n\n=== make-test ===")
        and "\n\n=== cargo-test (on record, may be stale" in context
    )
    plain = cli(*at(store, "recall", CARGO, "--top", "1", "--hops", "0", "--no-model")).out.splitlines()[0]
    assert plain.startswith("recall (embedded): make-test ") and "(replaces cargo-test), cargo-test " in plain


def test_a_forgotten_successor_stays_forgotten(cli: Cli, replaced: Store) -> None:
    store = replaced
    assert cli(*at(store, "forget", "make-test")).code == 0
    found = json.loads(
        cli(*at(store, "recall", CARGO, "--top", "1", "--hops", "0", "--json", "--no-model")).out
    )
    assert [p["slug"] for p in found["picked"]] == ["cargo-test"]
    assert "superseded by make-test" in found["context"]


# -- over HTTP and MCP -------------------------------------------------------------------------


@pytest.fixture
def http(tmp_path: Path) -> Iterator[Served]:
    made, _ = init_store(tmp_path / "team", name="team")
    with serving(parse_config({"stores": {"team": {"path": str(made.root)}}})) as served:
        yield served


def test_http_remember_answers_body_kept_revises_and_supersedes(http: Served) -> None:
    post = http.http.post
    post("/remember", json={"slug": "deploy-day", "description": TUESDAY})
    followed = post("/remember", json={"slug": "deploy-day", "description": WEDNESDAY}).json()
    assert (followed["body_kept"], followed["notes"]) == (False, [])
    assert http.http.get("/memory/deploy-day").json()["body"].strip() == WEDNESDAY
    post(
        "/remember",
        json={"slug": "deploy-day", "description": TUESDAY, "body": "Tuesday, after the train.\n"},
    )
    kept = post("/remember", json={"slug": "deploy-day", "description": WEDNESDAY}).json()
    assert (kept["body_kept"], kept["notes"]) == (True, [KEPT_NOTE])
    post("/remember", json={"slug": "cargo-test", "description": CARGO})
    hinted = post("/remember", json={"slug": "make-test", "description": MAKE}).json()
    assert (hinted["revises"], hinted["superseded"], hinted["notes"]) == ("cargo-test", None, [REVISES_NOTE])
    done = post("/remember", json={"slug": "make-test", "description": MAKE, "supersedes": "cargo-test"})
    assert done.status_code == 200 and (done.json()["superseded"], done.json()["revises"]) == (
        "cargo-test",
        None,
    )
    assert http.service.served("team").store.index().named() == ("deploy-day", "make-test")
    ghost = post("/remember", json={"slug": "x", "description": "anything at all", "supersedes": "ghost"})
    assert ghost.status_code == 422 and "cannot supersede 'ghost'" in ghost.json()["error"]["message"]


def test_mcp_remember_says_body_kept_revises_and_supersedes(tmp_path: Path) -> None:
    made, _ = init_store(tmp_path / "team", name="team")
    (tmp_path / "kura.toml").write_text('[stores.team]\npath = "team"\n')
    (tmp_path / "home").mkdir(exist_ok=True)
    with client(tmp_path, "mcp", KURA_READONLY="0") as mcp:
        assert "supersedes" in mcp.tools()["kura_remember"].input_schema["properties"]
        mcp.ok("kura_remember", slug="deploy-day", description=TUESDAY, body="Tuesday, after the train.\n")
        kept = mcp.ok("kura_remember", slug="deploy-day", description=WEDNESDAY)
        assert kept == f"updated deploy-day in store 'team' (deploy-day.md)\n{KEPT_NOTE}"
        mcp.ok("kura_remember", slug="cargo-test", description=CARGO)
        hinted = mcp.ok("kura_remember", slug="make-test", description=MAKE)
        assert hinted == f"created make-test in store 'team' (make-test.md)\n{REVISES_NOTE}"
        done = mcp.ok("kura_remember", slug="make-test", description=MAKE, replaces="cargo-test")
        assert done == (
            "updated make-test in store 'team' (make-test.md)\n"
            "it supersedes cargo-test: kept as history, out of the index"
        )
        assert mcp.error("kura_remember", slug="make-test", description=MAKE, supersedes="make-test") == (
            "team/make-test: a memory cannot supersede itself; nothing was written"
        )
    assert made.index().named() == ("deploy-day", "make-test")


def test_a_direct_write_reporting_a_move_says_which_memory_it_revises(cli: Cli, store: Store) -> None:
    """A move is a revision for a direct write too (issue 30): "we moved the app off Heroku to
    Fly.io" shares two words with "the app runs on Heroku", which the content-word rule calls
    different, so the writer was not told that both now stand as current."""
    cli(*at(store, "remember", "app-hosting", "The app runs on Heroku"))
    made = cli(
        *at(store, "remember", "app-moved", "We moved the app off Heroku to Fly.io last month", "--json")
    )
    assert made.code == 0 and json.loads(made.out)["revises"] == "app-hosting"
    other = cli(
        *at(store, "remember", "ci-moved", "We moved the CI runners off Heroku to GitHub Actions", "--json")
    )
    assert other.code == 0 and not json.loads(other.out).get("revises")
