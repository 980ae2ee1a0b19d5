"""A request not to remember is no request (issue 29, item 5): "Never remember that X",
"don't remember X" and "forget that X", said in a real-shaped Claude Code transcript and
read by a real `kura distill run`, never leave a draft or a memory saying X; "remember
that Y" beside them still does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory
from test_distill_run import SID, cc, jsonl, say

from kura.distill.rules import not_kept, spot
from kura.store.store import init_store
from kura.transcripts.segments import Segment

NEGATED = [
    "Never remember that the backup runs at 03:00 on arkiv-3.",
    "Don't remember that the staging database is kobo-8.",
    "Please do not ever save that the vault token expires on Mondays.",
    "Forget that the release branch is called stable-9.",
    "Okay, forget about the old deploy host rhino-2.",
]
KEPT = "Remember that the CI runners live on the ci-east-4 pool."


def everything(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*.md") if p.is_file())


def test_a_distill_run_keeps_no_negated_request(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    rows = []
    for n, said in enumerate([*NEGATED, KEPT]):
        rows += [cc("user", said, f"u{n}"), say("Understood.", f"a{n}")]
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", rows)
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run", "--json"],
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["segments"]["USER"] == len(NEGATED) + 1
    kept = everything(store.root)
    assert "ci-east-4" in kept  # the real request still makes its draft
    for said in NEGATED:
        subject = said.split()[-1].rstrip(".")
        assert subject not in kept, said


@pytest.mark.parametrize("said", NEGATED)
def test_the_spotter_takes_no_negated_request(said: str) -> None:
    assert not_kept(said)
    assert spot([Segment("USER", said)]) == []


@pytest.mark.parametrize(
    "said", [KEPT, "Never deploy on Fridays.", "Don't ever push to main.", "From now on, squash merges."]
)
def test_requests_and_rules_are_still_requests(said: str) -> None:
    assert not not_kept(said)
    assert [c["rule"] for c in spot([Segment("USER", said)])] == ["remember"]


def forget_run(tmp_path: Path, policy: str) -> tuple[Path, bytes, subprocess.CompletedProcess[str]]:
    """A store holding "the release branch is called stable-9", and a real ``kura distill
    run`` over a session where the person asks to forget it."""
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "release-branch", "project", "The release branch is called stable-9")
    before = (store.root / "release-branch.md").read_bytes()
    journals = tmp_path / "journals"
    said = "Forget that the release branch is called stable-9."
    jsonl(journals / "ferry" / f"{SID}.jsonl", [cc("user", said, "u1"), say("Understood.", "a1")])
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\nwrite_policy = "{policy}"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run"],
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    return store.root, before, done


def test_forget_that_in_a_direct_store_archives_the_memory_and_writes_nothing_new(tmp_path: Path) -> None:
    root, _, done = forget_run(tmp_path, "direct-allowed")
    assert done.returncode in (0, 2), done.stderr
    assert "test/release-branch:1: archived: the user asked to forget this" in done.stderr
    text = (root / "release-branch.md").read_text()  # kept on disk, off the index
    assert "archived:" in text and "the user asked to forget it" in text
    assert "release-branch" not in (root / "MEMORY.md").read_text()
    drafts = root / ".kura" / "drafts"
    assert not drafts.exists() or not list(drafts.glob("*.md"))


def test_forget_that_in_a_distiller_only_store_names_the_memory_and_writes_nothing(tmp_path: Path) -> None:
    root, before, done = forget_run(tmp_path, "distiller-only")
    assert done.returncode in (0, 2), done.stderr
    assert "test/release-branch:1: the user asked to forget this" in done.stderr
    assert "`kura forget release-branch` archives it" in done.stderr
    assert (root / "release-branch.md").read_bytes() == before
    drafts = root / ".kura" / "drafts"
    assert not drafts.exists() or not list(drafts.glob("*.md"))  # no memory saying X, staged or not
