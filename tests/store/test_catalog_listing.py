"""``kura list`` from the catalog: the same rows and bytes as reading every file, with
hand-edited, broken and retired memories, and a catalog that is stale, damaged or lying is
never believed over the files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, write_memory

from kura.files.memory_file import TYPES
from kura.store import catalog
from kura.store.listing import listing
from kura.store.store import Store

FILES = {
    "broken": "---\nname: [unclosed\ndescription: x\n---\n\nbody\n",
    "folded": "---\nname: Folded\ndescription: |\n  two  spaces\n  and a second line\ntype: User\n---\n\nbody\n",
    "nested": "---\nname: Nested\ndescription: 'kept   as  written '\nmetadata:\n  type: reference\n---\n\nb\n",
    "gone-bool": "---\nname: G\ndescription: archived true\ntype: project\narchived: true\n---\n\nb\n",
    "not-gone": "---\nname: N\ndescription: archived false\ntype: project\narchived: false\n"
    "superseded_by: true\n---\n\nb\n",
    "spent": "---\nname: S\ndescription: spent one\ntype: project\narchived: 2026-11-02T10:00:00\n"
    "archived_reason: '  decayed   away '\n---\n\nb\n",
    "old-port": "---\nname: O\ndescription: port 8080\ntype: reference\nsuperseded_by: new-port\n"
    "archived: 2026-10-01\n---\n\nb\n",
    "latin": "---\nname: L\ndescription: caf\xe9\ntype: user\n---\n\nb\n",
    "no-front": "just a body, no frontmatter\n",
}


@pytest.fixture
def root(store: Store) -> Path:
    write_memory(store.root, "deploy", "project", "deploy with caddy")
    write_memory(store.root, "new-port", "reference", "port 9090")
    write_memory(store.root, "team/oncall", "user", "Mika is on call — weekends")
    for slug, text in FILES.items():
        (store.root / f"{slug}.md").write_bytes(text.encode("latin-1" if slug == "latin" else "utf-8"))
    os.symlink("deploy.md", store.root / "alias.md")
    os.symlink("missing.md", store.root / "dangling.md")
    os.mkfifo(store.root / "fifo.md")
    return store.root


# What `kura list --all` printed before the catalog answered it (read off the old code).
ALL = (
    "alias        project    deploy with caddy\n"
    "broken       ?          x\n"
    "deploy       project    deploy with caddy\n"
    "folded       user       two  spaces\nand a second line\n\n"
    "gone-bool    project    archived true  [archived]\n"
    "latin        user       caf\ufffd\n"
    "nested       reference  kept   as  written \n"
    "new-port     reference  port 9090\n"
    "no-front     ?          \n"
    "not-gone     project    archived false\n"
    "old-port     reference  port 8080  [superseded by new-port; archived 2026-10-01]\n"
    "spent        project    spent one  [archived 2026-11-02: decayed away]\n"
    "team/oncall  user       Mika is on call — weekends\n"
)


def test_list_prints_what_reading_every_file_printed(cli: Cli, root: Path) -> None:
    for _ in range(2):  # the catalog cold, then warm
        assert cli("-s", str(root), "list", "--all").out == ALL
    current = cli("-s", str(root), "list")
    assert current.out == "".join(line + "\n" for line in ALL.splitlines() if "  [" not in line)
    assert current.err.endswith("3 archived or superseded memories not shown — kura list --all lists them\n")
    assert cli("-s", str(root), "list", "--type", "reference").out == (
        "nested    reference  kept   as  written \nnew-port  reference  port 9090\n"
    )


def test_catalog_listing_is_the_listing_of_the_files(root: Path) -> None:
    store = Store(root, name="test")
    for _ in range(2):
        for kind in (None, *TYPES):
            for everything in (False, True):
                assert catalog.listing(store, type=kind, everything=everything) == listing(
                    store, type=kind, everything=everything
                )


def test_a_hand_edit_is_listed_at_once(cli: Cli, root: Path) -> None:
    assert "deploy with caddy" in cli("-s", str(root), "list").out
    write_memory(root, "deploy", "project", "deploy with nginx")
    (root / "spent.md").write_text("---\nname: S\ndescription: back in use\ntype: project\n---\n\nb\n")
    out = cli("-s", str(root), "list").out
    assert "deploy       project    deploy with nginx\n" in out
    assert "spent        project    back in use\n" in out


def test_a_damaged_catalog_is_rebuilt_not_believed(cli: Cli, root: Path) -> None:
    cli("-s", str(root), "list", "--all")
    state = root / ".kura" / "state.db"
    state.write_bytes(b"not a database" * 100)
    result = cli("-s", str(root), "list", "--all")
    assert result.out == ALL
    assert "state.db" in result.err and "rebuilt" in result.err


def test_rows_kura_did_not_write_are_not_believed(cli: Cli, root: Path) -> None:
    cli("-s", str(root), "list", "--all")
    db = sqlite3.connect(root / ".kura" / "state.db")
    with db:
        db.execute("UPDATE notes SET listed = 'not json' WHERE slug = 'deploy'")
        db.execute("UPDATE notes SET name = NULL WHERE slug = 'new-port'")
        db.execute('UPDATE notes SET listed = \'["x", null, "", ""]\' WHERE slug = \'latin\'')
        db.execute('UPDATE notes SET listed = \'["x", 3, "", ""]\' WHERE slug = \'nested\'')
        db.execute("UPDATE notes SET type = x'00' WHERE slug = 'folded'")
        db.execute("UPDATE notes SET description = NULL WHERE slug = 'broken'")  # listed '': current
        db.execute("UPDATE notes SET description = x'41' WHERE slug = 'alias'")
        db.execute("UPDATE notes SET name = 7 WHERE slug = 'no-front'")
    db.close()
    assert cli("-s", str(root), "list", "--all").out == ALL


def test_the_front_door_lists_the_same_bytes(root: Path) -> None:
    """A plain ``kura list`` is answered without typer (``kura.cli.entry``): same bytes."""

    def kura(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "kura", "-s", str(root), *args], capture_output=True, check=False
        )

    every, current = kura("list", "--all"), kura("list")
    assert (every.returncode, every.stdout.decode(), every.stderr) == (0, ALL, b"")
    assert current.stdout.decode() == "".join(line + "\n" for line in ALL.splitlines() if "  [" not in line)
    assert (
        current.stderr.decode()
        == "kura: 3 archived or superseded memories not shown — kura list --all lists them\n"
    )
