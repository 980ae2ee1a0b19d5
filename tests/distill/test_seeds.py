"""Seeds: an idea goes to ``.kura/seeds.md`` instead of being dropped, and graduates once,
when a later pass keeps a candidate on real evidence whose topic matches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_distill_run import REMEMBER, SESSION, SID, cc, jsonl

from kura.distill import run as run_module
from kura.distill import seeds
from kura.distill.rules import spot
from kura.distill.run import journals_for, run_pass
from kura.store.store import Store, init_store

IDEA = {"topic": "Staging database lives on db-staging.internal", "kind": "idea",
        "why": "the agent guessed it from a hostname", "quotes": []}  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return init_store(tmp_path / "store", name="test")[0]


def test_an_idea_is_written_once_as_a_readable_entry(store: Store) -> None:
    assert seeds.add(store, topic="Cache the  wheel\nbuilds", why="slow CI", source="s.jsonl", when="T1")
    assert not seeds.add(store, topic="cache the wheel builds", why="again", source="t.jsonl")
    text = seeds.path_of(store).read_text()
    assert text.endswith(
        "## Cache the wheel builds\n- when: T1\n- why: slow CI\n- source: s.jsonl\n- status: seed\n"
    )
    assert text.startswith("# Seeds\n")
    assert seeds.seeds(store) == [seeds.Seed("Cache the wheel builds", "T1", "slow CI", "s.jsonl", "", 6)]


def test_a_seed_graduates_once_and_only_on_a_matching_topic(store: Store) -> None:
    seeds.add(store, topic="Cache the wheel builds between CI runs", why="w", source="s", when="T1")
    seeds.add(store, topic="Pin the ruff version", why="w", source="s", when="T1")
    assert seeds.graduate(store, "Deploy on Fridays", "deploy") == []
    assert seeds.graduate(store, "Wheel builds are cached between CI runs", "wheel-cache", when="T2") == [
        "Cache the wheel builds between CI runs"
    ]
    before = seeds.path_of(store).read_bytes()
    assert seeds.graduate(store, "Cache wheel builds between runs", "other") == []
    assert seeds.path_of(store).read_bytes() == before
    assert "- status: graduated T2 by draft wheel-cache\n" in before.decode()
    assert [(s.topic, s.graduated) for s in seeds.seeds(store)] == [
        ("Cache the wheel builds between CI runs", "wheel-cache"),
        ("Pin the ruff version", ""),
    ]


def test_matching_needs_most_of_the_seeds_words() -> None:
    assert seeds.matches("Pin the ruff version", "We pin ruff to one version in CI")
    assert not seeds.matches("Pin the ruff version", "Ruff is fast")  # one shared word
    assert not seeds.matches("Cache wheel builds between CI runs", "Cache wheel files")  # 2 of 5
    assert not seeds.matches("the and for", "the and for")  # no words at all


def test_a_hand_edited_file_keeps_its_notes(store: Store) -> None:
    path = seeds.path_of(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "My own notes.\n\n## Pin the ruff version\n- why: w\n(a person's remark)\n\n## Other idea\n"
    )
    assert seeds.graduate(store, "pin ruff version", "pin-ruff", when="T") == ["Pin the ruff version"]
    assert path.read_text() == (
        "My own notes.\n\n## Pin the ruff version\n- status: graduated T by draft pin-ruff\n"
        "- why: w\n(a person's remark)\n\n## Other idea\n"
    )


def test_a_pass_seeds_the_idea_and_a_later_pass_graduates_it(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spot_with_an_idea(segments: Any) -> list[dict[str, Any]]:
        return [*spot(segments), dict(IDEA)]

    monkeypatch.setattr(run_module, "spot", spot_with_an_idea)
    journal = jsonl(tmp_path / "j" / "ferry" / f"{SID}.jsonl", [SESSION[0], *SESSION[2:]])
    journals = journals_for(
        {}, {"journals": {"claude": [str(tmp_path / "j")]}}, config_source=None, store="t"
    )
    first = run_pass(store, journals)
    assert first.ideas == 1
    assert [(s.topic, s.source, s.graduated) for s in seeds.seeds(store)] == [
        (IDEA["topic"], str(journal), "")
    ]
    jsonl(journal, [cc("user", REMEMBER, "u9")])
    second = run_pass(store, journals)
    assert second.kept == 1 and second.ideas == 1  # the idea again: counted, not written twice
    [entry] = seeds.seeds(store)
    assert entry.graduated == second.drafts[0].stem
