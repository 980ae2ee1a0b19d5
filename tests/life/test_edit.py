"""Edit in place at the command line (``kura edit``, ``kura rename``, ``kura forget`` through
``kura.life.edit``): real files, real ``kura`` processes where a second writer matters, and
the same door as ``kura remember`` — policy, secrets, limits, the lock, the index line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli

from kura.errors import InvalidRequest, PolicyRefused, StoreError
from kura.life import edit as ed
from kura.life.edit import edit
from kura.request import EditRequest
from kura.store.store import Memory, Store, init_store

DEPLOY = """---
name: Deploy day
description: deploys go out on Tuesday
type: project
created: 2026-01-02
---

Deploys go out Tuesday at 10:00 CET.

## Steps

1. build
2. ship

## Why

Quiet day.
"""
INDEX = """# Memory index

- [Deploy day](deploy.md) — deploys go out on Tuesday
- [Oncall](oncall.md) — who is on call
"""
ONCALL = """---
name: Oncall
description: who is on call
type: project
supersedes: [deploy]
---

Ask [[deploy]] first, or [[deploy|the deploy note]], or [[deploy#Steps]].
Not `[[deploy]]` in code.

```
[[deploy]]
```
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    init_store(tmp_path / "st", name="st")
    (tmp_path / "st" / "deploy.md").write_text(DEPLOY)
    (tmp_path / "st" / "oncall.md").write_text(ONCALL.replace("supersedes: [deploy]\n", ""))
    (tmp_path / "st" / "MEMORY.md").write_text(INDEX)
    return tmp_path / "st"


def kura(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False, timeout=120)  # fmt: skip


def body(root: Path, slug: str = "deploy") -> str:
    return (root / f"{slug}.md").read_text().split("---\n", 2)[2]


# -- the words ---------------------------------------------------------------------------------


def test_append_adds_a_paragraph_and_stamps_updated(cli: Cli, root: Path) -> None:
    done = cli("-s", str(root), "edit", "deploy", "--append", "Never on public holidays.")
    assert done.code == 0, done
    assert done.out == "appended to deploy in store 'st' (deploy.md)\n"
    assert body(root).endswith("Quiet day.\n\nNever on public holidays.\n")
    text = (root / "deploy.md").read_text()
    assert "created: 2026-01-02\nupdated: " in text and text.startswith("---\nname: Deploy day\n")


def test_append_to_a_list_continues_it_and_prepend_goes_on_top(root: Path) -> None:
    store = Store(root)
    (root / "list.md").write_text("---\nname: L\ndescription: a list\ntype: project\n---\n- one\n- two\n")
    edit(store, EditRequest("list", "append", text="- three"))
    edit(store, EditRequest("list", "prepend", text="Items:"))
    assert body(root, "list") == "Items:\n\n- one\n- two\n- three\n"


def test_replace_changes_the_one_place_it_stands(cli: Cli, root: Path) -> None:
    done = cli(
        "-s", str(root), "edit", "deploy", "--replace", "Tuesday at 10:00", "--with", "Wednesday at 9:00"
    )
    assert done.code == 0, done
    assert "replaced in body line 2" in done.out
    assert "Deploys go out Wednesday at 9:00 CET." in body(root)
    assert "description: deploys go out on Tuesday" in (root / "deploy.md").read_text()


@pytest.mark.parametrize(
    ("find", "said"),
    [
        ("Tuesday", "'Tuesday' occurs 2 times (the description, body line 2)"),
        ("Friday", "'Friday' is not in its description or body;"),
        ("tuesday AT 10:00", "(the body has it with other capitals or spacing)"),
    ],
)
def test_replace_refuses_no_match_or_several_saying_which(cli: Cli, root: Path, find: str, said: str) -> None:
    before = (root / "deploy.md").read_bytes()
    done = cli("-s", str(root), "edit", "deploy", "--replace", find, "--with", "x")
    assert done.code == 1 and said in done.err, done
    assert "nothing was changed" in done.err
    assert (root / "deploy.md").read_bytes() == before


def test_replace_in_the_description_moves_the_index_line_and_a_body_kura_wrote(
    cli: Cli, tmp_path: Path
) -> None:
    store, _ = init_store(tmp_path / "s", name="s")
    store.remember("fly", "the app runs on Heroku")  # body == description: kura wrote it
    done = cli("-s", str(store.root), "edit", "fly", "--replace", "Heroku", "--with", "Fly.io")
    assert done.code == 0, done
    note = store.show("fly").note
    assert (note.description, note.body) == ("the app runs on Fly.io", "the app runs on Fly.io\n")
    assert "- [the app runs on Fly.io](fly.md) — the app runs on Fly.io" in store.index_path.read_text()


def test_replace_with_nothing_removes_the_phrase(cli: Cli, root: Path) -> None:
    assert cli("-s", str(root), "edit", "deploy", "--replace", " at 10:00 CET", "--with", "").code == 0
    assert "Deploys go out Tuesday.\n" in body(root)


def test_section_is_replaced_down_to_the_next_heading_or_added(cli: Cli, root: Path) -> None:
    done = cli(
        "-s", str(root), "edit", "deploy", "--section", "steps", "--body", "1. build\n2. test\n3. ship"
    )
    assert done.code == 0 and "section replaced" in done.out, done
    assert "## Steps\n\n1. build\n2. test\n3. ship\n\n## Why\n\nQuiet day.\n" in body(root)
    added = cli(
        "-s", str(root), "edit", "deploy", "--section", "Rollback", "--body", "-", input="git revert\n"
    )
    assert added.code == 0 and "section added at the end" in added.out, added
    assert body(root).endswith("## Why\n\nQuiet day.\n\n## Rollback\n\ngit revert\n")


def test_a_heading_in_code_is_not_a_section_and_two_alike_are_refused(root: Path) -> None:
    store = Store(root)
    (root / "twice.md").write_text(
        "---\nname: T\ndescription: twice\ntype: project\n---\n## Notes\na\n\n```\n## Notes\n```\n## Notes\nb\n"
    )
    with pytest.raises(StoreError, match=r"2 sections are headed 'Notes' \(body lines 1, 7\)"):
        edit(store, EditRequest("twice", "section", heading="Notes", text="c"))


def test_the_same_text_again_changes_nothing_and_exits_2(cli: Cli, root: Path) -> None:
    before = (root / "deploy.md").read_bytes()
    done = cli("-s", str(root), "edit", "deploy", "--replace", "Quiet day.", "--with", "Quiet day.")
    assert (done.code, done.out) == (2, "deploy: unchanged (it already says so)\n")
    assert (root / "deploy.md").read_bytes() == before


@pytest.mark.parametrize(
    ("op", "text"),
    [("--append", "Never on public holidays."), ("--prepend", "Read the freeze calendar first.")],
)
def test_the_same_paragraph_again_is_not_written_twice(root: Path, op: str, text: str) -> None:
    """An agent's retried append (or a person's second run of the same line) finds the memory
    already saying it: nothing written, exit 2, as the docs promise."""
    first = kura("-s", str(root), "edit", "deploy", op, text)
    assert first.returncode == 0, first
    before = (root / "deploy.md").read_bytes()
    again = kura("-s", str(root), "edit", "deploy", op, text)
    assert (again.returncode, again.stdout) == (2, "deploy: unchanged (it already says so)\n"), again
    assert (root / "deploy.md").read_bytes() == before
    assert body(root).count(text) == 1


def test_a_list_item_already_last_is_not_appended_again(root: Path) -> None:
    (root / "list.md").write_text("---\nname: L\ndescription: a list\ntype: project\n---\n- one\n- two\n")
    done = kura("-s", str(root), "edit", "list", "--append", "- two")
    assert done.returncode == 2, done
    assert body(root, "list") == "- one\n- two\n"
    paragraph = kura("-s", str(root), "edit", "list", "--append", "two")  # a paragraph, not the item
    assert paragraph.returncode == 0, paragraph


def test_one_op_at_a_time(cli: Cli, root: Path) -> None:
    done = cli("-s", str(root), "edit", "deploy", "--append", "a", "--prepend", "b")
    assert done.code == 1 and "give one of --append TEXT" in done.err
    assert cli("-s", str(root), "edit", "deploy", "--replace", "a").code == 1


# -- the door remember goes through -------------------------------------------------------------


def test_a_secret_in_an_append_is_refused_and_nothing_is_written(cli: Cli, root: Path) -> None:
    before = (root / "deploy.md").read_bytes()
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    done = cli("-s", str(root), "edit", "deploy", "--append", f"the key is {key}")
    assert done.code == 1 and "looks like it holds a secret" in done.err, done
    assert key not in done.err + done.out
    assert (root / "deploy.md").read_bytes() == before


def test_limits_and_control_characters_are_refused(root: Path) -> None:
    store = Store(root)
    with pytest.raises(StoreError, match="the body is"):
        edit(store, EditRequest("deploy", "append", text="x" * 70_000))
    with pytest.raises(StoreError, match="control character U\\+0007"):
        edit(store, EditRequest("deploy", "append", text="bell \x07"))
    with pytest.raises(StoreError, match="the description holds a line break"):
        edit(store, EditRequest("deploy", "replace", find="on Tuesday", text="on\nWednesday"))


@pytest.mark.parametrize("policy", ["frozen", "distiller-only"])
def test_a_store_that_takes_no_direct_write_refuses_every_edit(cli: Cli, tmp_path: Path, policy: str) -> None:
    root = tmp_path / "st"
    init_store(root, name="st")
    (root / "deploy.md").write_text(DEPLOY)
    (root / "MEMORY.md").write_text(INDEX)
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.st]\npath = "{root}"\nwrite_policy = "{policy}"\n')
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    for args in (
        ["edit", "deploy", "--append", "x"],
        ["rename", "deploy", "deploy-day"],
        ["forget", "deploy"],
    ):
        done = cli("-c", str(config), "-s", "st", *args)
        assert done.code == 1 and f"is {policy}" in done.err, (args, done)
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_a_superseded_or_forgotten_memory_is_not_edited(root: Path) -> None:
    store = Store(root)
    (root / "old.md").write_text(DEPLOY.replace("type: project\n", "type: project\nsuperseded_by: deploy\n"))
    (root / "gone.md").write_text(DEPLOY.replace("type: project\n", "type: project\narchived: 2026-02-01\n"))
    with pytest.raises(StoreError, match="superseded by deploy, so it is history; edit deploy instead"):
        edit(store, EditRequest("old", "append", text="x"))
    with pytest.raises(
        StoreError, match=r"forgotten \(archived 2026-02-01\); bring it back with kura remember"
    ):
        edit(store, EditRequest("gone", "append", text="x"))


def test_new_words_that_revise_another_memory_are_named(cli: Cli, tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "s", name="s")
    store.remember("host", "the app is deployed on Heroku")
    store.remember("notes", "notes about the app", "Misc.")
    done = cli("-s", str(store.root), "edit", "notes", "--append", "The app is deployed on Fly.io")
    assert done.code == 0, done
    assert 'notes now appears to revise host ("the app is deployed on Heroku")' in done.err


def test_an_editor_holding_the_lock_is_waited_for_and_its_save_kept(root: Path) -> None:
    """A real second process takes the store lock, saves the file while it holds it, and only
    then lets go: ``kura edit`` (another real process) waits its turn and appends to that save."""
    go = root.parent / "go"
    holder = subprocess.Popen([sys.executable, "-c", f"""
import pathlib, time
from kura.store.atomic import locked
root = pathlib.Path({str(root)!r})
with locked(root / ".kura" / "lock"):
    (root.parent / "held").touch()
    while not pathlib.Path({str(go)!r}).exists():
        time.sleep(0.01)
    path = root / "deploy.md"
    path.write_text(path.read_text() + "\\nSaved by the editor.\\n")
"""])  # fmt: skip
    try:
        _wait(lambda: (root.parent / "held").exists(), "the holder took the lock")
        editor = subprocess.Popen([sys.executable, "-m", "kura", "-s", str(root), "edit", "deploy", "--append",
                                   "Added by kura."], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        queue = root / ".kura" / "lock.queue"
        _wait(lambda: any(f"-{editor.pid}-" in p.name for p in queue.iterdir()) if queue.is_dir() else False,
              "kura edit queued for the lock")  # fmt: skip
        assert editor.poll() is None
        go.touch()
        _, err = editor.communicate(timeout=120)
        assert editor.returncode == 0, err
    finally:
        go.touch()
        holder.wait(timeout=60)
    assert body(root).endswith("Quiet day.\n\nSaved by the editor.\n\nAdded by kura.\n")


def _wait(ready: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, f"not seen in time: {what}"
        time.sleep(0.01)


# -- rename -------------------------------------------------------------------------------------


def test_rename_moves_the_file_its_line_and_every_link(cli: Cli, root: Path) -> None:
    (root / "oncall.md").write_text(ONCALL)
    before = (root / "deploy.md").read_bytes()
    done = cli("-s", str(root), "rename", "deploy", "deploy-day")
    assert done.code == 0, done
    assert done.out == "renamed deploy to deploy-day (deploy-day.md)\n"
    assert "links and pointers to it rewritten in oncall" in done.err
    assert not (root / "deploy.md").exists() and (root / "deploy-day.md").read_bytes() == before
    assert (root / "MEMORY.md").read_text() == INDEX.replace("(deploy.md)", "(deploy-day.md)")
    assert (root / "oncall.md").read_text() == ONCALL.replace(
        "supersedes: [deploy]", "supersedes:\n- deploy-day"
    ).replace(
        "[[deploy]] first, or [[deploy|the deploy note]], or [[deploy#Steps]]",
        "[[deploy-day]] first, or [[deploy-day|the deploy note]], or [[deploy-day#Steps]]",
    )  # the code span and the fenced block keep their [[deploy]]
    assert cli("-s", str(root), "rename", "deploy-day", "deploy-day").code == 2


def test_rename_onto_another_memory_is_refused(cli: Cli, root: Path) -> None:
    done = cli("-s", str(root), "rename", "deploy", "oncall")
    assert done.code == 1 and "cannot be renamed to oncall: a memory oncall exists" in done.err
    assert (root / "deploy.md").exists() and (root / "MEMORY.md").read_text() == INDEX


def test_a_bad_or_secret_new_name_is_refused(root: Path) -> None:
    store = Store(root)
    with pytest.raises(StoreError, match="not a usable slug"):
        edit(store, EditRequest("deploy", "rename", to="../out"))
    with pytest.raises(PolicyRefused, match="secret"):
        edit(store, EditRequest("deploy", "rename", to="AKIA" + "IOSFODNN7EXAMPLE"))
    assert (root / "deploy.md").exists()


def test_git_sees_a_rename(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=root, check=True
    )
    assert kura("-s", str(root), "rename", "deploy", "deploy-day").returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert "R  deploy.md -> deploy-day.md" in status


# -- forget and purge ----------------------------------------------------------------------------


def test_forget_through_the_edit_records_who_asked(root: Path) -> None:
    done = edit(Store(root), EditRequest("deploy", "forget", reason="moved to the wiki"), origin="MCP")
    assert done.changed and done.detail == "moved to the wiki (MCP)"
    text = (root / "deploy.md").read_text()
    assert "archived_reason: moved to the wiki (MCP)" in text
    assert "deploy.md" not in (root / "MEMORY.md").read_text()


def test_purge_needs_the_slug_again(root: Path) -> None:
    store = Store(root)
    with pytest.raises(InvalidRequest, match="send confirm equal to the slug"):
        edit(store, EditRequest("deploy", "purge", confirm="yes"))
    assert (root / "deploy.md").exists()
    done = edit(store, EditRequest("deploy", "purge", confirm="deploy"))
    assert done.purged is not None and done.purged["files"] == ["deploy.md"]
    assert not (root / "deploy.md").exists() and "deploy" not in (root / "MEMORY.md").read_text()


def test_an_agents_edit_is_witnessed_as_an_agents(root: Path) -> None:
    edit(Store(root), EditRequest("deploy", "append", text="Also Thursdays."), origin="HTTP")
    meta = Store(root).show("deploy").note.meta
    assert meta["witnesses"][0]["kind"] == "MANUAL"
    assert meta["witnesses"][0]["source"] == "HTTP edit append"
    assert meta["witnesses"][0]["quote"] == "Also Thursdays."


def test_a_pasted_secret_can_be_replaced_out_but_not_written_again(cli: Cli, root: Path) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    (root / "keys.md").write_text(
        f"---\nname: Keys\ndescription: where the keys are\ntype: reference\n---\nkey {key}\n"
    )
    before = (root / "keys.md").read_bytes()
    kept = cli("-s", str(root), "edit", "keys", "--append", "More.")
    assert kept.code == 1 and "holds what looks like a secret" in kept.err and key not in kept.err, kept
    assert (root / "keys.md").read_bytes() == before
    missing = cli("-s", str(root), "edit", "keys", "--replace", key + "X", "--with", "in the vault")
    assert missing.code == 1 and "the phrase is not in" in missing.err and key not in missing.err, missing
    done = cli("-s", str(root), "edit", "keys", "--replace", key, "--with", "in the vault")
    assert done.code == 0, done
    assert key not in (root / "keys.md").read_text() and "key in the vault" in (root / "keys.md").read_text()


def test_a_rename_cut_short_after_the_copy_is_finished_by_running_it_again(cli: Cli, root: Path) -> None:
    (root / "deploy-day.md").write_bytes((root / "deploy.md").read_bytes())  # the copy made, then a crash
    done = cli("-s", str(root), "rename", "deploy", "deploy-day")
    assert done.code == 0, done
    assert not (root / "deploy.md").exists()
    assert (root / "MEMORY.md").read_text() == INDEX.replace("(deploy.md)", "(deploy-day.md)")


def test_a_rename_leaves_an_old_file_someone_changed_meanwhile(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last step removes the old file only if it still holds the bytes that were copied:
    an editor's save lands just before it."""
    real = ed._remove

    def saved_first(store: Store, memory: Memory, data: bytes) -> None:
        (root / "deploy.md").write_text(DEPLOY + "\nA late save.\n")
        real(store, memory, data)

    monkeypatch.setattr(ed, "_remove", saved_first)
    with pytest.raises(StoreError, match="changed while it was renamed, so it was kept beside the new copy"):
        edit(Store(root), EditRequest("deploy", "rename", to="deploy-day"))
    assert "A late save." in (root / "deploy.md").read_text() and (root / "deploy-day.md").exists()


def test_a_renamed_memory_keeps_the_days_it_was_used(root: Path) -> None:
    from kura.life import usage

    store = Store(root)
    usage.mark(store.state_dir, ["deploy"])
    edit(store, EditRequest("deploy", "rename", to="deploy-day"))
    marks = usage.load(store.state_dir)
    assert "deploy" not in marks and marks["deploy-day"].count == 1
