"""Transcripts registered as journals with no kura.toml edit: the store's own registry (what
Claude Code's hooks saw), untrusted on read; and Codex's rollout folder, registered once for
the person, each rollout going to the store of the project it ran in and to no other."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conftest import Cli

from kura.distill import signature
from kura.hosts import host_journals as hj
from kura.store.store import Store, init_store
from kura.transcripts import journals as jr


def rollout(sessions: Path, day: str, name: str, cwd: Path | str, said: str) -> Path:
    """A Codex rollout as Codex writes it: session_meta first (with the session's folder),
    then response items."""
    path = sessions / day / f"rollout-{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = [
        {"timestamp": "2026-12-02T09:00:00.000Z", "type": "session_meta",
         "payload": {"id": f"id-{name}", "timestamp": "2026-12-02T09:00:00.000Z", "cwd": str(cwd),
                     "originator": "codex_cli_rs", "cli_version": "0.171.0", "instructions": None}},
        {"timestamp": "2026-12-02T09:00:01.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>x</cwd>\n"
                                  "</environment_context>"}]}},
        {"timestamp": "2026-12-02T09:00:02.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": said}]}},
        {"timestamp": "2026-12-02T09:00:03.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "Noted."}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def project(root: Path) -> Store:
    """A project folder with its store at ./memory and no kura.toml."""
    return init_store(root / "memory", name="main")[0]


def memories(store: Store) -> str:
    return " ".join(p.read_text(encoding="utf-8") for p in store.root.glob("*.md") if p.name != "MEMORY.md")


def test_codex_rollouts_go_to_the_store_of_the_project_they_ran_in(tmp_path: Path) -> None:
    ferry, dock = project(tmp_path / "ferry"), project(tmp_path / "dock")
    sessions = tmp_path / "home" / ".codex" / "sessions"
    rollout(sessions, "2026/12/02", "a", tmp_path / "ferry", "Remember that the ferry queue is ferry-q7.")
    rollout(sessions, "2026/12/02", "b", tmp_path / "dock", "Remember that the dock cache is dock-c3.")
    rollout(sessions, "2026/12/03", "c", tmp_path / "elsewhere", "Remember that nothing lands in x-9.")
    rollout(sessions, "2026/12/03", "d", "relative/cwd", "Remember that a planted cwd gets nowhere-1.")
    assert hj.register_codex(sessions) is True
    assert hj.register_codex(sessions) is False  # already there: nothing changes
    assert hj.codex_folders() == [sessions]
    assert (Path(os.environ["KURA_HOME"]) / hj.REGISTRY).is_file()  # the person's, not a store's
    cli = Cli()
    for root in (tmp_path / "ferry", tmp_path / "dock"):
        os.chdir(root)
        assert cli("distill", "run").code == 0
    assert "ferry-q7" in memories(ferry) and "dock-c3" not in memories(ferry)
    assert "dock-c3" in memories(dock) and "ferry-q7" not in memories(dock)
    both = memories(ferry) + memories(dock)
    assert "x-9" not in both and "nowhere-1" not in both
    cached = json.loads((Path(os.environ["KURA_HOME"]) / hj.CWDS).read_text())["cwds"]
    assert sorted(Path(k).name for k in cached) == ["rollout-a.jsonl", "rollout-b.jsonl", "rollout-c.jsonl"]


def test_the_registry_is_untrusted_on_read(tmp_path: Path) -> None:
    store = project(tmp_path / "ferry")
    good = tmp_path / "t" / "good.jsonl"
    good.parent.mkdir()
    good.write_text("")
    (store.root / ".kura").mkdir(exist_ok=True)
    rows = [
        {"path": str(good), "host": "claude", "session": "s1", "compact_at": []},
        {"path": "relative.jsonl", "host": "claude"},
        {"path": "/etc/passwd", "host": "claude"},
        {"path": str(good) + "x.jsonl", "host": "python"},
        {"path": str(tmp_path / "n.jsonl"), "host": "claude", "compact_at": [-5, "x"]},
        "not an object",
    ]
    signed = [{**r, "mark": signature.sign(store.state_dir, r)} if isinstance(r, dict) else r for r in rows]
    (store.root / ".kura" / hj.REGISTRY).write_text(json.dumps({"version": 1, "transcripts": signed}))
    assert hj.registered(store.state_dir) == [hj.Registered(good, "claude", "s1")]
    # the same entries with no mark, or a mark made with another store's key: a planted registry
    (store.root / ".kura" / hj.REGISTRY).write_text(json.dumps({"version": 1, "transcripts": rows}))
    assert hj.registered(store.state_dir) == []
    other = project(tmp_path / "dock")
    forged = [{**rows[0], "mark": signature.sign(other.state_dir, rows[0])}]
    (store.root / ".kura" / hj.REGISTRY).write_text(json.dumps({"version": 1, "transcripts": forged}))
    assert hj.registered(store.state_dir) == []
    (store.root / ".kura" / hj.REGISTRY).write_text("{not json")
    assert hj.registered(store.state_dir) == []
    assert hj.register(store.state_dir, good, session="s1") is True  # started afresh
    assert hj.register(store.state_dir, good, session="s1") is False


def test_a_registered_transcript_is_read_with_the_configured_journals_never_the_stores_own(
    tmp_path: Path,
) -> None:
    store = project(tmp_path / "ferry")
    inside = store.root / "notes.jsonl"  # a store never reads its own files, registered or not
    inside.write_text("")
    outside = tmp_path / "t" / "s.jsonl"
    outside.parent.mkdir()
    outside.write_text("")
    hj.register(store.state_dir, inside)
    hj.register(store.state_dir, outside)
    hj.register(store.state_dir, tmp_path / "gone.jsonl")
    configured = jr.Journals(roots=(jr.Root(tmp_path / "t", "claude"),))
    sources, _ = jr.discover(hj.with_hosts(configured, store), store.root)
    assert [s.path for s in sources] == [outside]
    only_registered, _ = jr.discover(hj.with_hosts(jr.Journals(), store), store.root)
    assert [(s.path, s.fmt) for s in only_registered] == [(outside, "claude")]


def test_precompact_marks_are_kept_until_settled(tmp_path: Path) -> None:
    store = project(tmp_path / "ferry")
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n')
    hj.register(store.state_dir, path, compact=True)
    path.write_text('{"a": 1}\n{"b": 2}\n')
    hj.register(store.state_dir, path, compact=True)
    [entry] = hj.registered(store.state_dir)
    assert entry.compact_at == (9, 18)
    hj.settle(store.state_dir, {path: (9,)})
    assert hj.registered(store.state_dir)[0].compact_at == (18,)
