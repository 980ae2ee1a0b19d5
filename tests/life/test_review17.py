"""Second review of issue 17 (facts over time): where its five parts meet.

Each test is a way the merged change still lets a store say two things at once, or hides
what it was told, found by trying it as a new user would."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from conftest import Cli
from test_distill_keeps import SESSION_A, SESSION_B, configured, distil, journal, staged, turn
from test_server import serving

from kura.config import parse_config
from kura.files.memory_index import TITLE_MAX
from kura.store.store import Store, init_store

# -- names × corrections: the index title ---------------------------------------------------


def test_a_correction_moves_an_index_title_kura_took_from_the_old_description(
    cli: Cli, tmp_path: Path
) -> None:
    """A name too long for the index is shown by its description (``index.title_for``); a
    correction of that description must not leave the old one as the line's title."""
    store, _ = init_store(tmp_path / "s", name="s")
    (store.root / "deploy-day.md").write_text(
        "---\nname: When the weekly production deploys go out for us\n"
        "description: deploys go out on Tuesday\ntype: project\n---\n\nWe deploy after standup.\n"
    )
    assert cli("-s", str(store.root), "doctor", "--fix").code == 0
    assert store.index().line_for("deploy-day").text == (  # type: ignore[union-attr]
        "- [deploys go out on Tuesday](deploy-day.md) — deploys go out on Tuesday"
    )
    done = cli("-s", str(store.root), "remember", "deploy-day", "deploys go out on Wednesday")
    assert done.code == 0, done
    assert (store.root / "MEMORY.md").read_text().splitlines()[-1] == (
        "- [deploys go out on Wednesday](deploy-day.md) — deploys go out on Wednesday"
    )
    assert "Tuesday" not in cli("-s", str(store.root), "prefill").out


def test_a_title_a_person_gave_the_line_still_stays(cli: Cli, tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "s", name="s")
    assert cli("-s", str(store.root), "remember", "deploy-day", "deploys go out on Tuesday").code == 0
    text = (store.root / "MEMORY.md").read_text().replace("[deploys go out on Tuesday]", "[Deploy day]")
    (store.root / "MEMORY.md").write_text(text)
    assert cli("-s", str(store.root), "remember", "deploy-day", "deploys go out on Wednesday").code == 0
    assert (store.root / "MEMORY.md").read_text().splitlines()[-1] == (
        "- [Deploy day](deploy-day.md) — deploys go out on Wednesday"
    )


# -- the distiller's titles vs the 40-character rule -----------------------------------------

WEEKEND = (
    "Remember that the staging cluster lives in eu-west-3 and is rebuilt by the platform team every weekend."
)


def test_a_distilled_title_is_one_the_index_shows(cli: Cli, tmp_path: Path) -> None:
    """``remember --title`` over 40 characters is refused because the index would drop it for
    the slug without a word; the distiller must not write such titles either."""
    journals = tmp_path / "journals"
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", WEEKEND, "u1")])
    store, config = configured(tmp_path, journals, policy="distiller-only")
    assert distil(config)["kept"] == 1
    [draft] = staged(store)
    assert draft.title == "The staging cluster lives in eu-west-3"
    assert len(draft.title) <= TITLE_MAX
    assert cli("-c", str(config), "-s", "test", "distill", "pour", "--all").code == 0
    [slug] = store.slugs()
    line = store.index().line_for(slug)
    assert line is not None and line.title == store.show(slug).name == draft.title


# -- witnesses keep their session: two sessions read in one pass ----------------------------

TAGS = "Remember that release tags are signed with the team key."
AGAIN = "Please remember that release tags are signed with the team key!"


def test_a_fact_said_in_two_sessions_read_in_one_pass_is_one_memory_of_two_sessions(
    cli: Cli, tmp_path: Path
) -> None:
    journals = tmp_path / "journals"
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", TAGS, "u1")])
    journal(
        journals / f"{SESSION_B}.jsonl",
        [turn("user", AGAIN, "u7", session=SESSION_B, at="2026-10-14T16:40:51.908Z")],
    )
    store, config = configured(tmp_path, journals, policy="distiller-only")
    distil(config)
    assert cli("-c", str(config), "-s", "test", "distill", "pour", "--all").code == 0
    [slug] = Store(store.root).slugs()
    assert "because 2 witnesses across 2 sessions\n" in cli("-c", str(config), "-s", "test", "why", slug).out


# -- corrections × the distiller: a draft revising what a direct write has replaced since ---------

CARGO = "We run the tests with cargo test"
TODAY = dt.date.today().isoformat()


def test_a_pour_revising_a_memory_replaced_since_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    """The distiller stages a correction of cargo-test; the person then replaces cargo-test
    directly. Pouring must not write the draft's memory and then refuse (a live memory, an
    index line and a staged draft that can never pour), but refuse before anything is written."""
    journals = tmp_path / "journals"
    said = "No, we run the tests with make test now, not cargo test."
    journal(journals / f"{SESSION_A}.jsonl", [turn("user", said, "u1")])
    store, config = configured(tmp_path, journals)
    base = ("-c", str(config), "-s", "test")
    assert cli(*base, "remember", "cargo-test", CARGO).code == 0
    assert distil(config)["kept"] == 1
    [draft] = staged(store)
    assert "replaces:cargo-test" in draft.flags
    done = cli(
        *base, "remember", "just-test", "We run the tests with just test", "--supersedes", "cargo-test"
    )
    assert done.code == 0, done
    poured = cli(*base, "distill", "pour", "--all")
    assert poured.code == 1, poured
    assert poured.out == (
        f"{draft.id}: refused — test/{draft.slug}: it revises cargo-test, which just-test has replaced "
        "since; nothing was written and the draft stays staged — toss it if just-test holds, or write "
        f"it with kura remember {draft.slug} DESCRIPTION --supersedes just-test\n"
    )
    assert store.slugs() == ("cargo-test", "just-test")
    assert store.index().named() == ("just-test",)
    assert [d.id for d in staged(store)] == [draft.id]


# -- forgetting × corrections: a write that brings a forgotten memory back says so -------------


def test_remember_says_it_brings_a_forgotten_memory_back(cli: Cli, tmp_path: Path) -> None:
    """A write to a forgotten slug makes it current again (by design); the person who forgot
    it, or the agent writing over a tool, must be told — silently, a forget is undone."""
    store, _ = init_store(tmp_path / "team", name="team")
    at = ("-s", str(store.root))
    assert cli(*at, "remember", "ship", "ships Tuesday 10:00").code == 0
    assert cli(*at, "forget", "ship", "--reason", "wrong day").code == 0
    day = store.show("ship").note.meta["archived"]
    back = cli(*at, "remember", "ship", "ships Tuesday 10:00")
    assert back.code == 0, back
    assert back.err == (
        f"kura: ship: it was forgotten (archived {day}); this write made it current again and put its "
        "line back — to forget it again: kura forget ship\n"
    )
    assert cli(*at, "forget", "ship").code == 0
    with serving(parse_config({"stores": {"team": {"path": str(store.root)}}})) as served:
        done = served.http.post("/remember", json={"slug": "ship", "description": "ships Tuesday 10:00"})
    assert done.status_code == 200 and done.json()["notes"] == [
        f"ship was forgotten (archived {day}); this write made it current again — if it should stay "
        "forgotten, the person can forget it again"
    ]


SPENT = (
    "---\nname: ship day\ndescription: ships on Tuesday\ntype: project\ncreated: 2019-01-05\n"
    "witnesses:\n- kind: FIX\n  when: 2019-01-05\n  session: s1\n  quote: ships on Tuesday\n---\n\n"
    "ships on Tuesday\n"
)


def test_a_memory_remembered_again_is_not_archived_again_by_the_next_decay(cli: Cli, tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "s", name="s")
    at = ("-s", str(store.root))
    (store.root / "ship.md").write_text(SPENT)
    assert cli(*at, "doctor", "--fix").code == 0
    assert cli(*at, "decay", "--apply").code == 0  # spent: archived
    assert cli(*at, "remember", "ship", "ships on Tuesday").code == 0  # the person says it again
    assert "archived" not in store.show("ship").note.meta
    assert cli(*at, "decay").code == 2  # nothing to archive: it was just stated


# -- corrections × purge: deleting a correction does not make what it replaced current -----------


def test_purging_a_correction_does_not_make_the_replaced_fact_current_again(cli: Cli, tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "s", name="s")
    at = ("-s", str(store.root))
    assert cli(*at, "remember", "cargo-test", CARGO).code == 0
    done = cli(*at, "remember", "make-test", "We run the tests with make test", "--supersedes", "cargo-test")
    assert done.code == 0, done
    assert cli(*at, "forget", "make-test", "--purge", "--yes").code == 0
    meta = store.show("cargo-test").note.meta
    assert "superseded_by" not in meta  # the purged slug is named nowhere
    assert (meta["archived_reason"], str(meta["archived"])) == ("what replaced it was purged", TODAY)
    assert cli(*at, "list").code == 2  # nothing current
    assert cli(*at, "recall", "how do we run the tests", "--no-model").code == 2
    doctor = cli(*at, "doctor")
    assert doctor.code == 0 and "no line in the index" not in doctor.out, doctor


# -- forgetting × doctor's counts ----------------------------------------------------------------


def test_doctor_counts_no_forgotten_memory_as_an_island(cli: Cli, tmp_path: Path) -> None:
    """Retired memories are no islands (fa1979a): the count line and the JSON agree with that."""
    store, _ = init_store(tmp_path / "s", name="s")
    at = ("-s", str(store.root))
    assert cli(*at, "remember", "a", "alpha thing").code == 0
    assert cli(*at, "remember", "b", "beta thing", "beta links to [[a]]").code == 0
    assert cli(*at, "remember", "c", "gamma thing").code == 0
    assert cli(*at, "forget", "c").code == 0
    shown = cli(*at, "doctor")
    assert "; islands 0, dead ends 1;" in shown.out, shown
    report = json.loads(cli(*at, "doctor", "--json").out)
    assert (report["graph"]["islands"], report["graph"]["dead_ends"]) == ([], ["a"])
