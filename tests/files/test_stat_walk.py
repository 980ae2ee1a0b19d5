"""The walk that stamps a store (``slugs.file_stats``) looks each name up relative to its
open folder; it must find exactly what a walk through whole paths finds (``_by_paths``,
the walk it replaced): the same files, identities and links, across folders, links in and
out of the store, a dangling link, a FIFO, ``threads/``, private names and a folder named
like a memory. And its checksum (``identity``) must change with any one thing a weave
depends on."""

from __future__ import annotations

import os
from pathlib import Path

from kura.files.slugs import THREADS_DIR, file_stats, identity, stamp_files


def _by_paths(root: Path) -> list[tuple[str, tuple[int, int, int, int], bool]]:
    """The walk before: ``os.scandir`` on each folder's whole path, ``DirEntry.stat`` on each file."""
    found, stack = [], [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(root / prefix if prefix else root))
        except OSError:
            continue
        for entry in entries:
            rel = f"{prefix}/{entry.name}" if prefix else entry.name
            if entry.name[:1] in "._":
                continue
            if entry.is_dir(follow_symlinks=False):
                if prefix or entry.name.lower() != THREADS_DIR:
                    stack.append(rel)
                continue
            link = entry.is_symlink()
            if not entry.name.endswith(".md") or (not link and not entry.is_file(follow_symlinks=False)):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            found.append((rel, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), link))
    return sorted(found)


def _tree(root: Path, outside: Path) -> None:
    for rel in ("a.md", "b.md", "MEMORY.md", "sub/c.md", "sub/deeper/d.md", "Threads/t.md", "threads/u.md",
                "sub/threads/v.md", "_private.md", ".hidden.md", ".kura/map.md", "notes.txt", "x.md/inner.md",
                "日本語.md"):  # fmt: skip
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {rel}\n---\n")
    outside.mkdir()
    (outside / "far.md").write_text("far")
    (outside / "folder").mkdir()
    (outside / "folder" / "f.md").write_text("f")
    (root / "in-link.md").symlink_to(root / "sub" / "c.md")
    (root / "out-link.md").symlink_to(outside / "far.md")
    (root / "dangling.md").symlink_to(root / "gone.md")
    (root / "folder-link").symlink_to(outside / "folder")  # a linked folder is not entered
    (root / "dir-link.md").symlink_to(outside / "folder")
    os.mkfifo(root / "fifo.md")


def test_the_walk_relative_to_each_folder_finds_what_the_walk_by_whole_paths_found(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _tree(root, tmp_path / "outside")
    got = file_stats(root)
    assert got == _by_paths(root)
    rels = [rel for rel, _, _ in got]
    assert "sub/deeper/d.md" in rels and "Threads/t.md" not in rels and "sub/threads/v.md" in rels
    assert "fifo.md" not in rels and "dangling.md" not in rels and "folder-link/f.md" not in rels
    assert {rel for rel, _, link in got if link} == {"in-link.md", "out-link.md", "dir-link.md"}
    assert file_stats(root / "sub") == _by_paths(root / "sub")
    link = tmp_path / "store-link"  # the store itself reached through a link is walked
    link.symlink_to(root)
    assert file_stats(link) == got
    assert file_stats(tmp_path / "nowhere") == []


def test_the_stamp_changes_with_anything_a_weave_depends_on(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _tree(root, tmp_path / "outside")
    seen = {identity(file_stats(root))}
    assert stamp_files(root) in seen and identity(file_stats(root)) in seen  # the same walk, the same stamp

    def changed() -> bool:
        stamp = identity(file_stats(root))
        new = stamp not in seen
        seen.add(stamp)
        return new

    a = root / "a.md"
    a.write_text(a.read_text() + "more\n")  # an edit
    assert changed()
    os.utime(a, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns + 1))  # only its time
    assert changed()
    a.rename(root / "a2.md")  # a rename
    assert changed()
    (root / "new.md").write_text("new")  # an add
    assert changed()
    (root / "sub" / "c.md").unlink()  # a delete (which leaves in-link.md dangling)
    assert changed()
    (root / "sub").rename(root / "sub2")  # a folder moved
    assert changed()
    assert not changed()  # nothing: the same stamp
    assert identity([]) != identity(file_stats(root))
