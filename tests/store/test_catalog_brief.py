"""The map's brief scan (``catalog.scan(..., brief=True)``): rows not read again carry only what
a weave reads (identity, type, written date, standing), the same values a full scan gives; a
file read again is whole; and a brief scan never writes its empty fields into the catalog."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from conftest import make_store, write_memory

from kura.store import catalog
from kura.store.store import Store

MAP_FIELDS = ("rel", "slug", "ino", "size", "mtime_ns", "ctime_ns", "type", "written_text", "standing")
MEMORIES = [
    ("deploy", "feedback", "Deploys go out blue-green: never rolling", "2026-03-01"),
    ("staging", "reference", "The staging database lives on db-staging.internal", None),
    ("ferry", "project", "The ferry leaves at nine from pier four", "2026-05-12"),
]


def _scan(store: Store, *, brief: bool) -> dict[str, catalog.Entry]:
    db = catalog.connect(store)
    try:
        found = catalog.scan(store, db, brief=brief)
    finally:
        db.close()
    assert found is not None
    return found.entries


def test_a_brief_scan_gives_the_map_fields_a_full_scan_gives(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store", MEMORIES)
    (store.root / "retired.md").write_text(
        "---\nname: retired\ndescription: old rule\ntype: feedback\nsuperseded_by: deploy\n---\n\nold\n"
    )
    full = _scan(store, brief=False)  # reads every file and fills the catalog
    brief = _scan(store, brief=True)  # every row from the catalog
    assert list(brief) == list(full)
    for slug, entry in full.items():
        assert tuple(getattr(brief[slug], f) for f in MAP_FIELDS) == tuple(
            getattr(entry, f) for f in MAP_FIELDS
        )
        assert brief[slug].written == entry.written and brief[slug].retired == entry.retired
        assert brief[slug].description == "" and entry.description  # not fetched
    assert full["retired"].retired and full["ferry"].written is not None


def test_a_file_read_again_in_a_brief_scan_is_whole_and_the_catalog_keeps_every_field(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store", MEMORIES)
    full = _scan(store, brief=False)
    write_memory(store.root, "staging", "reference", "The staging database moved to db2.internal")
    brief = _scan(store, brief=True)
    assert brief["staging"].description == "The staging database moved to db2.internal"
    assert brief["deploy"].description == ""
    again = _scan(store, brief=False)  # nothing changed since: every row from the catalog, whole
    assert again["deploy"] == full["deploy"] and again["ferry"] == full["ferry"]
    assert again["staging"] == brief["staging"]
    with contextlib.closing(sqlite3.connect(store.state_dir / "state.db")) as db:
        empty = db.execute("SELECT count(*) FROM notes WHERE description = '' OR name = ''").fetchone()[0]
    assert empty == 0


def test_a_scan_drops_the_rows_of_files_gone_or_renamed_and_keeps_the_rest(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store", MEMORIES)
    _scan(store, brief=False)
    (store.root / "ferry.md").unlink()
    (store.root / "staging.md").rename(store.root / "staging-db.md")
    brief = _scan(store, brief=True)
    assert sorted(brief) == ["deploy", "staging-db"]
    with contextlib.closing(sqlite3.connect(store.root / ".kura" / "state.db")) as db:
        rows = sorted(rel for (rel,) in db.execute("SELECT rel FROM notes"))
    assert rows == ["deploy.md", "staging-db.md"]
