"""The walk for the project's store: from a folder up to its git root, cheap and safe."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kura.store.project import find_project_store


def store_at(folder: Path) -> Path:
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "MEMORY.md").write_text("# Memory index\n")
    return folder / "memory"


def git(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_found_from_a_nested_folder_up_to_the_git_root(tmp_path: Path) -> None:
    root = git(tmp_path / "repo")
    memory = store_at(root)
    deep = root / "a" / "b" / "c"
    deep.mkdir(parents=True)
    found = find_project_store(deep)
    assert found is not None
    assert (found.path, found.git_root, found.start, found.project) == (memory, root, deep, root)


def test_the_nearest_memory_wins(tmp_path: Path) -> None:
    root = git(tmp_path / "repo")
    store_at(root)
    inner = store_at(root / "service")
    found = find_project_store(root / "service")
    assert found is not None and found.path == inner


def test_not_past_the_git_root(tmp_path: Path) -> None:
    store_at(tmp_path)  # a memory/ above the project is not the project's
    root = git(tmp_path / "repo")
    assert find_project_store(root) is None


def test_a_worktree_s_git_file_is_a_git_root_too(tmp_path: Path) -> None:
    store_at(tmp_path)
    root = tmp_path / "wt"
    root.mkdir()
    (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert find_project_store(root) is None
    memory = store_at(root)
    found = find_project_store(root)
    assert found is not None and found.path == memory


def test_with_no_git_root_only_the_folder_itself(tmp_path: Path) -> None:
    memory = store_at(tmp_path / "plain")
    sub = tmp_path / "plain" / "sub"
    sub.mkdir()
    assert find_project_store(sub) is None  # an unversioned folder above is nobody's project
    found = find_project_store(tmp_path / "plain")
    assert found is not None and (found.path, found.git_root) == (memory, None)


def test_a_memory_folder_without_an_index_is_not_a_store(tmp_path: Path) -> None:
    root = git(tmp_path / "repo")
    (root / "memory").mkdir()
    (root / "memory" / "notes.md").write_text("---\nname: notes\n---\n")
    assert find_project_store(root) is None


def test_a_fifo_index_is_never_opened(tmp_path: Path) -> None:
    root = git(tmp_path / "repo")
    (root / "memory").mkdir()
    os.mkfifo(root / "memory" / "MEMORY.md")
    assert find_project_store(root) is None  # returns: a FIFO opened for reading would block here


def test_a_link_out_of_the_project_is_not_followed(tmp_path: Path) -> None:
    elsewhere = store_at(tmp_path / "someone-else")
    root = git(tmp_path / "repo")
    (root / "memory").symlink_to(elsewhere, target_is_directory=True)
    assert find_project_store(root) is None


def test_a_link_inside_the_project_is_followed(tmp_path: Path) -> None:
    root = git(tmp_path / "repo")
    store_at(root / "docs")
    (root / "memory").symlink_to(root / "docs" / "memory", target_is_directory=True)
    found = find_project_store(root)
    assert found is not None and found.path == root / "memory"


@pytest.mark.parametrize("index", ["dir", "link-to-fifo"])
def test_an_index_that_is_not_a_regular_file(tmp_path: Path, index: str) -> None:
    root = git(tmp_path / "repo")
    (root / "memory").mkdir()
    if index == "dir":
        (root / "memory" / "MEMORY.md").mkdir()
    else:
        os.mkfifo(tmp_path / "fifo")
        (root / "memory" / "MEMORY.md").symlink_to(tmp_path / "fifo")
    assert find_project_store(root) is None


def test_a_deleted_current_folder_finds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_project_store() is None
