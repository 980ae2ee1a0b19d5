"""The closed unions: each is the set the code documents, and a value outside it is refused
where it comes in (a memory file, a flag, a model's reply)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, get_args

import pytest
from conftest import Cli, write_memory

from kura.config import ModelConfig
from kura.distill import drain, gate, novelty
from kura.files import witness as wt
from kura.files.belief import Status, standing
from kura.map.prefill import MapState
from kura.recall.embed import Unavailable
from kura.recall.recall import How, recall
from kura.recall.search import Searched, SearchIndex
from kura.store.store import Store


def test_each_union_is_the_documented_set() -> None:
    assert set(get_args(How)) == {"meaning", "embedded", "lexical"}
    assert set(get_args(Searched)) == {"embedded", "lexical"}
    assert set(get_args(gate.Decision)) == {"kept", "dropped", "idea"}
    assert set(get_args(novelty.Judged)) == {"new", "covered", "extends"}
    assert set(get_args(drain.Action)) == {"pour", "fix", "toss"}
    assert set(get_args(drain.Result)) == {"poured", "fixed", "tossed", "staged", "quarantined"}
    assert set(get_args(MapState)) == {
        "current", "rewoven", "over-budget", "sectors", "stale", "conflicted", "missing",
    }  # fmt: skip
    assert set(get_args(Status)) == {"asserted", "on record", "withheld", "superseded", "archived"}
    assert get_args(wt.Kind) == ("SAID", "FIX", "SCAR", "MANUAL", "INFERRED", "TIDE", "CALLUS", "SLEEP")
    assert wt.KINDS == get_args(wt.Kind) == tuple(wt.WEIGHTS) == tuple(wt.MEANING)
    assert get_args(drain.Result) == drain.RESULTS


def test_a_witness_kind_outside_the_union_is_refused_from_the_file() -> None:
    meta = {"witnesses": [{"kind": "rumour", "when": "2026-01-02"}, {"kind": " fix ", "when": "2026-01-03"}]}
    found, findings = wt.read(meta, "m.md")
    assert [w.kind for w in found] == ["FIX"]
    assert len(findings) == 1 and "kind 'rumour' is not one of SAID, FIX" in findings[0].message
    assert (wt.kind_of("said"), wt.kind_of("RUMOUR"), wt.kind_of("")) == ("SAID", None, None)


def test_a_witness_kind_outside_the_union_is_refused_on_the_command_line(cli: Cli, store: Store) -> None:
    done = cli("-s", str(store.root), "remember", "x", "a fact", "--witness", "RUMOUR")
    assert done.code == 1
    assert "--witness 'RUMOUR': not one of SAID, FIX, SCAR, MANUAL, INFERRED, TIDE, CALLUS, SLEEP" in done.err
    assert not (store.root / "x.md").exists()


def test_a_scribe_verdict_outside_the_union_is_unread() -> None:
    assert isinstance(drain.read_verdict('{"verdict": "KEEP", "reason": "fine"}'), drain.Unread)
    read = drain.read_verdict('{"verdict": " Toss ", "reason": "a duplicate"}')
    assert read == drain.ScribeVerdict("toss", "a duplicate")


def test_a_novelty_verdict_outside_the_union_counts_as_new(monkeypatch: pytest.MonkeyPatch) -> None:
    near = [novelty.Neighbour("deploys", "Deploys", "deploys go out on Tuesday", 0.9)]
    replies = iter(
        ['{"novelty": "duplicate", "slug": "deploys"}', '{"novelty": "Covered", "slug": "deploys"}']
    )

    def complete(*_: Any, **__: Any) -> str:
        return next(replies)

    monkeypatch.setattr(novelty, "complete", complete)
    model = ModelConfig(role="brain", url="http://127.0.0.1:9/v1", model="unused")
    asked = [novelty.ask_novelty(model, "", {"topic": "deploys"}, near) for _ in range(2)]
    assert asked == [novelty.Novelty("new"), novelty.Novelty("covered", "deploys", "")]


def test_a_gate_verdict_is_always_in_the_union() -> None:
    candidates = [{"kind": "rumour"}, "not a mapping", {"kind": "idea", "topic": "a cache for the map"}]
    verdicts = gate.judge(candidates, [])
    assert [v.verdict for v in verdicts] == ["dropped", "dropped", "idea"]


def test_recall_says_how_within_the_union(tmp_path: Path) -> None:
    root = tmp_path / "s"
    write_memory(root, "a", "project", "releases are tagged pre-release first")
    store = Store(root)
    index = SearchIndex(store, embedder=Unavailable("no embedder here"))
    index.update()
    found = recall(store, "pre-release tagging", index=index)
    assert found.how == "lexical" and found.how in get_args(How)
    shown = standing("a", {"type": "project"}, dt.date(2026, 1, 1))
    assert shown.status in get_args(Status)
