"""A folder of the store swapped for a symlink to somewhere outside while kura walks the
store (another process, a ``git checkout`` that turns a folder into a link, an attacker
racing a hook): the walk already listed the folder as a folder, then read it by its path,
through the new link, and listed the files outside as memories ("sub/secret"). A symlink
found in a listing is never entered (``slugs.scan_files``' docstring), so a link put there
after the listing must not be either: every subfolder is opened from the store's own folder,
a part at a time, never through a link.

Real files and folders; the swap lands between the walk's listing of the top folder and
its reading of the subfolder, made certain by taking the walk's first answer (a file of the
top folder, which is listed whole before any subfolder is read) before swapping."""

from __future__ import annotations

import os
from pathlib import Path

from kura.files.folder_walk import open_below
from kura.files.slugs import file_stats, scan_files


def _store(tmp_path: Path, rel: str) -> tuple[Path, Path]:
    root, outside = tmp_path / "store", tmp_path / "outside"
    (root / rel).mkdir(parents=True)
    (root / "a.md").write_text("---\nname: a\n---\n")
    (root / rel / "inner.md").write_text("---\nname: inner\n---\n")
    (root / "MEMORY.md").write_text("- [a](a.md) — a\n")
    outside.mkdir()
    (outside / "secret.md").write_text("---\nname: secret\n---\nnot the store's\n")
    return root, outside


def _swap(folder: Path, outside: Path) -> None:
    """Put a link to ``outside`` where ``folder`` was (the folder moved aside, as a checkout does)."""
    folder.rename(folder.with_name(folder.name + "-moved"))
    folder.symlink_to(outside, target_is_directory=True)


def test_a_folder_swapped_for_a_link_mid_walk_lists_nothing_outside(tmp_path: Path) -> None:
    root, outside = _store(tmp_path, "sub")
    walk = scan_files(root)
    rel, kind = next(walk)
    assert "/" not in rel and kind == "file"  # the top folder is read; "sub" waits on the walk's stack
    _swap(root / "sub", outside)
    rest = list(walk)
    assert all("secret" not in rel for rel, _ in rest), rest
    assert [rel for rel, _ in rest if "/" in rel] == []  # the link is not entered, nor said unreadable


def test_a_deeper_folder_swapped_mid_walk_lists_nothing_outside(tmp_path: Path) -> None:
    """``sub/deep`` waits on the stack while ``sub`` (its parent) becomes the link."""
    root, outside = _store(tmp_path, "sub/deep")
    (outside / "deep").mkdir()
    (outside / "deep" / "secret.md").write_text("not the store's\n")
    walk = scan_files(root)
    assert "/" not in next(walk)[0]
    _swap(root / "sub", outside)
    assert all("secret" not in rel for rel, _ in walk)


def test_a_pushed_folder_is_opened_through_no_link(tmp_path: Path) -> None:
    """What ``file_stats`` opens a folder on its stack with: ``sub/deep`` when ``sub`` has
    become a link since it was listed is refused, where a whole-path open followed it."""
    root, outside = _store(tmp_path, "sub/deep")
    (outside / "deep").mkdir()
    (outside / "deep" / "secret.md").write_text("not the store's\n")
    _swap(root / "sub", outside)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert open_below(root_fd, "sub/deep") is None
        assert open_below(root_fd, "sub-moved/deep") is not None
    finally:
        os.close(root_fd)
    assert [rel for rel, _, _ in file_stats(root)] == ["MEMORY.md", "a.md", "sub-moved/deep/inner.md"]
