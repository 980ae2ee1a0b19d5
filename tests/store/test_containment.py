"""Escape attempts. Every case is a way to make a store answer for a file that is not one
of its memories; every reader must come back with "no such memory" and never the bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kura.errors import KuraError, NotFound
from kura.store.importer import import_folder
from kura.store.store import Store, init_store

SECRET = "FOREIGN-CONTENT-7f3a"
MEMORY = "---\nname: {n}\ndescription: {d}\ntype: user\n---\n{b}\n"


@pytest.fixture
def world(tmp_path: Path) -> Store:
    """A store beside foreign files, with links planted inside pointing out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(MEMORY.format(n="s", d=SECRET, b=SECRET))
    (tmp_path / "secret.md").write_text(MEMORY.format(n="s", d=SECRET, b=SECRET))
    store, _ = init_store(tmp_path / "store", name="home")
    (store.root / "ok.md").write_text(MEMORY.format(n="ok", d="a real memory", b="fine"))
    (store.root / ".kura").mkdir(exist_ok=True)
    (store.root / ".kura" / "state.md").write_text(MEMORY.format(n="st", d=SECRET, b=SECRET))
    (store.root / "_private.md").write_text(MEMORY.format(n="p", d=SECRET, b=SECRET))
    os.symlink(outside / "secret.md", store.root / "leak.md")
    os.symlink(outside, store.root / "linkdir")
    os.symlink(store.root / ".kura" / "state.md", store.root / "state-link.md")
    os.symlink(store.root / "_private.md", store.root / "private-link.md")
    return store


PROBES = [
    "../secret",
    "../secret.md",
    "../outside/secret",
    "../../secret",
    "/etc/passwd",
    str(Path("/") / "etc" / "hostname"),
    "%2e%2e/secret",
    "%2e%2e%2fsecret",
    "..%2fsecret",
    "..\\secret",
    "ok\\..\\..\\secret",
    "ok/../../secret",
    "./../secret",
    "leak",
    "leak.md",
    "linkdir/secret",
    "state-link",
    "private-link",
    ".kura/state",
    "_private",
    "MEMORY",
    "C:\\secret",
    "secret\x00.md",
    "~/secret",
    "",
    " ok",
]


@pytest.mark.parametrize("probe", PROBES)
def test_lookup_never_reaches_foreign_content(world: Store, probe: str) -> None:
    with pytest.raises(NotFound):
        world.resolve(probe)
    with pytest.raises(NotFound):
        world.show(probe)


def test_walk_lists_only_real_memories(world: Store) -> None:
    assert world.slugs() == ("ok",)
    assert all(SECRET not in m.description and SECRET not in m.note.body for m in world.list())


def test_escaping_symlinks_are_reported_not_silently_skipped(world: Store) -> None:
    reported = sorted(f.path for f in world.findings())
    assert reported == ["home/leak.md", "home/private-link.md", "home/state-link.md"]


def test_a_symlink_inside_the_store_to_a_memory_is_fine(world: Store) -> None:
    os.symlink(world.root / "ok.md", world.root / "alias.md")
    assert world.show("alias").description == "a real memory"


@pytest.mark.parametrize("probe", ["../escape", "/tmp/escape", "..\\escape", "linkdir/new", "leak", "a//b"])
def test_writes_never_land_outside(world: Store, probe: str, tmp_path: Path) -> None:
    with pytest.raises(KuraError):
        world.remember(probe, "an attempt")
    assert not (tmp_path / "escape.md").exists()
    assert not (tmp_path / "outside" / "new.md").exists()
    assert SECRET in (tmp_path / "outside" / "secret.md").read_text()


def test_index_links_pointing_out_are_never_followed(world: Store) -> None:
    (world.root / "MEMORY.md").write_text("- [Out](../secret.md) — x\n- [Enc](%2e%2e/secret.md) — y\n")
    for slug in world.index().named():
        with pytest.raises(NotFound):
            world.show(slug)


def test_import_does_not_follow_links_out_of_the_source(world: Store, tmp_path: Path) -> None:
    source = tmp_path / "cc"
    source.mkdir()
    (source / "good.md").write_text(MEMORY.format(n="g", d="imported", b="b"))
    os.symlink(tmp_path / "outside" / "secret.md", source / "bad.md")
    report = import_folder(world, source, kind="claude-code")
    assert report.imported == ["good"]
    assert [f.path for f in report.findings] == ["cc/bad.md"]
    assert all(SECRET not in m.note.body for m in world.list())
