"""Claude Code's auto memory under the project's store.

``kura setup claude-code`` points ``autoMemoryDirectory`` at an inbox in the store's state
folder whose MEMORY.md is a short note (the model never gets a second index, nor a 200-line
cut of one), imports what Claude wrote before, and ``absorb`` files each fact Claude writes
there through the door ``kura remember`` uses: filed ones are moved aside, never deleted;
one kura cannot take stays where it is, byte for byte, and is reported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kura.hosts import claude_memory
from kura.hosts.claude_memory import NOTE, absorb, absorb_all, inbox, sanitised
from kura.store.store import Store, init_store

KURA = str(Path(sys.executable).parent / "kura")


def fact(name: str, description: str, body: str, kind: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def kura(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KURA, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_setup_imports_claudes_old_memory_and_moves_it_to_the_inbox(project: Path, tmp_path: Path) -> None:
    old = tmp_path / "home" / ".claude" / "projects" / sanitised(project) / "memory"
    old.mkdir(parents=True)
    (old / "staging.md").write_text(fact("Staging", "Where the staging cluster lives", "In eu-west-3."))
    (old / "MEMORY.md").write_text("- [Staging](staging.md) — where the staging cluster lives\n")
    done = kura("setup", "claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"imported 1 memories of Claude's auto memory from {old}" in done.stdout
    store = Store(project / "memory")
    assert "eu-west-3" in store.show("staging").note.body
    assert "staging" in (project / "memory" / "MEMORY.md").read_text()
    assert (old / "staging.md").is_file()  # Claude's folder is read, never emptied
    box = inbox(project / "memory")
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["autoMemoryDirectory"] == str(box)
    assert (box / "MEMORY.md").read_text() == NOTE
    assert len(NOTE.splitlines()) < 20 and "eu-west-3" not in NOTE  # no second index for the model
    again = kura("setup", "claude-code", cwd=project)
    assert again.returncode == 2, again.stdout


def test_sanitised_matches_claude_codes_folder_names() -> None:
    assert sanitised(Path("/home/ana/my.project_x")) == "-home-ana-my-project-x"
    long_root = Path("/" + "a" * 250)
    assert len(sanitised(long_root)) == 251


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made, _ = init_store(tmp_path / "proj" / "memory", name="proj")
    claude_memory.prepare(made.root)
    return made


def test_absorb_files_what_claude_wrote_and_keeps_it_aside(store: Store) -> None:
    box = inbox(store.root)
    written = fact("Deploys", "How we deploy on Fridays", "Never after 3 pm.", "feedback")
    (box / "feedback_deploys.md").write_text(written)
    assert absorb(store) == ["feedback_deploys"]
    memory = store.show("feedback_deploys")
    assert memory.note.description == "How we deploy on Fridays"
    assert memory.note.type == "feedback" and "Never after 3 pm." in memory.note.body
    assert "feedback_deploys" in store.index_path.read_text()
    assert not (box / "feedback_deploys.md").exists()
    kept = list((box / ".filed").iterdir())
    assert [p.read_text() for p in kept] == [written]
    assert absorb(store) == []  # nothing new


def test_absorb_updates_a_fact_claude_wrote_again(store: Store) -> None:
    box = inbox(store.root)
    (box / "db.md").write_text(fact("DB", "Which database the app uses", "Postgres 15."))
    assert absorb(store) == ["db"]
    (box / "db.md").write_text(fact("DB", "Which database the app uses", "Postgres 16 since May."))
    assert absorb(store) == ["db"]
    assert "Postgres 16" in store.show("db").note.body
    assert len(list((box / ".filed").iterdir())) == 2


def test_a_file_kura_cannot_take_stays_untouched_and_is_reported(store: Store) -> None:
    box = inbox(store.root)
    secret = fact("Token", "The deploy token", "token: ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")
    (box / "token.md").write_text(secret)
    (box / "nodesc.md").write_text("just some words\n")
    (box / "notes.txt").write_text("not markdown\n")
    found = absorb_all(store)
    assert found.filed == ()
    assert [line.split(":")[0] for line in found.refused] == ["nodesc.md", "notes.txt", "token.md"]
    assert (box / "token.md").read_text() == secret
    assert (box / "nodesc.md").read_text() == "just some words\n"
    assert "ghp_" not in store.index_path.read_text()
    assert absorb_all(store).refused == found.refused  # reported again until it can be taken


def test_a_frozen_store_takes_nothing_and_loses_nothing(tmp_path: Path) -> None:
    made, _ = init_store(tmp_path / "memory", name="frozen")
    frozen = Store(made.root, name="frozen", write_policy="frozen")
    claude_memory.prepare(frozen.root)
    box = inbox(frozen.root)
    (box / "x.md").write_text(fact("X", "Something Claude noticed", "Body."))
    found = absorb_all(frozen)
    assert found.filed == () and found.refused[0].startswith("x.md: ")
    assert (box / "x.md").is_file()


def test_an_index_claude_wrote_is_kept_aside_and_the_note_restored(store: Store) -> None:
    box = inbox(store.root)
    (box / "MEMORY.md").write_text("- [DB](db.md) — which database\n")
    (box / "db.md").write_text(fact("DB", "Which database the app uses", "Postgres."))
    assert absorb(store) == ["db"]
    assert (box / "MEMORY.md").read_text() == NOTE
    aside = sorted(p.read_text() for p in (box / ".filed").iterdir())
    assert "- [DB](db.md) — which database\n" in aside


def test_no_inbox_no_work(tmp_path: Path) -> None:
    made, _ = init_store(tmp_path / "memory", name="plain")
    assert absorb(made) == []
    assert not inbox(made.root).exists()


def test_a_file_name_kura_would_not_choose_still_files(store: Store) -> None:
    box = inbox(store.root)
    (box / "deploy notes (v2).md").write_text(fact("Deploy", "How deploys are announced", "In #ops."))
    assert absorb(store) == ["deploy-notes-v2"]
    assert "In #ops." in store.show("deploy-notes-v2").note.body
