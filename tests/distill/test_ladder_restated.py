"""The same fact restated in other words is one claim on the ladder (issue 30): "the artifacts
bucket is called acme-builds-eu now" in one session and "the deploy job pushes its artifacts
to acme-builds-eu, the bucket we use now" in another share a rare identifier and its nouns,
so TIDE + CALLUS crosses. Before, they were two scratch items that never met. Two facts about
the same bucket, each with its own detail, stay two. Through ``kura distill run`` on real
Claude Code transcripts on disk."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli
from test_ladder import run, session, setup, waiting, write

from kura.store.store import Store

__all__ = ["setup"]  # the ladder's fixture, used here by name

NAMED = "The artifacts bucket is called acme-builds-eu now."
USED = "The deploy job pushes its artifacts to acme-builds-eu, the bucket we use now."
PRIVATE = "The artifacts bucket acme-builds-eu is private to the build account."
VERSIONED = "Versioning is switched on for the artifacts bucket acme-builds-eu."


def test_a_fact_restated_in_other_words_crosses_with_two_witnesses(
    setup: tuple[Store, Path, Path], cli: Cli
) -> None:
    store, journals, config = setup
    write(journals, "sess-one", session("sess-one", [NAMED]))
    assert run(cli, config)["crossed"] == 0
    write(journals, "sess-two", session("sess-two", [USED], tail=0))
    metrics = run(cli, config)
    assert metrics["crossed"] == 1, metrics
    assert waiting(cli, config) == []
    [memory] = store.list()
    assert "acme-builds-eu" in memory.description
    why = cli("-c", str(config), "-s", "test", "why", memory.slug, "--json")
    assert why.code == 0, why
    found = json.loads(why.out)
    assert [(w["kind"], w["session"]) for w in found["witness_list"]] == [
        ("TIDE", "sess-one"),
        ("CALLUS", "sess-two"),
    ]


def test_two_facts_about_one_identifier_stay_two(setup: tuple[Store, Path, Path], cli: Cli) -> None:
    store, journals, config = setup
    write(journals, "sess-one", session("sess-one", [PRIVATE]))
    run(cli, config)
    write(journals, "sess-two", session("sess-two", [VERSIONED]))
    metrics = run(cli, config)
    assert metrics["crossed"] == 0, metrics
    assert not store.list()
    assert sorted(i["claim"] for i in waiting(cli, config)) == sorted([PRIVATE, VERSIONED])
