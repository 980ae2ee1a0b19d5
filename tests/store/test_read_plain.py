"""The cold scan's batch read (``safe_read.read_plain``) against the careful one
(``read_in`` through ``Store.read``): the same bytes for every plain file, and a decline —
never bytes, never a hang — for everything the careful read refuses or must follow; a
catalog scanned with the batch read holds exactly the rows of one scanned file by file."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kura.files.slugs import file_stats, is_memory_name
from kura.store import catalog
from kura.store.safe_read import MEMORY_CAP, Refused, read_in, read_plain
from kura.store.store import Store

CAP = 64  # bytes: small, so a file past the cap is cheap to make


@pytest.fixture
def crafted(tmp_path: Path) -> Iterator[Path]:
    """A folder holding one of each thing a store can hold under a memory's name."""
    root = tmp_path / "store"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret\n")
    (root / "plain.md").write_bytes(b"---\nname: p\n---\nbody\n")
    (root / "empty.md").write_bytes(b"")
    (root / "at-cap.md").write_bytes(b"x" * CAP)
    (root / "past-cap.md").write_bytes(b"x" * (CAP + 1))
    (root / "sub" / "inner.md").write_bytes(b"inner\n")
    (root / "link-in.md").symlink_to("plain.md")
    (root / "link-out.md").symlink_to(outside)
    (root / "linked").symlink_to(root / "sub")  # a folder that is a link
    (root / "folder.md").mkdir()
    os.mkfifo(root / "fifo.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock.md"))
    if os.geteuid() == 0:  # only root may make a device node
        os.mknod(root / "dev.md", 0o600 | 0o020000, os.makedev(1, 5))  # a second /dev/zero
    try:
        yield root
    finally:
        sock.close()


PLAIN = {
    "plain.md": b"---\nname: p\n---\nbody\n",
    "empty.md": b"",
    "at-cap.md": b"x" * CAP,
    "sub/inner.md": b"inner\n",
}
DECLINED = ["past-cap.md", "link-in.md", "link-out.md", "linked/inner.md", "folder.md", "fifo.md",
            "sock.md", "dev.md", "gone.md", "sub/gone.md"]  # fmt: skip


def test_plain_files_read_as_read_in_reads_them_and_the_rest_is_declined(crafted: Path) -> None:
    rels = [*PLAIN, *DECLINED]
    got = dict(zip(rels, read_plain(crafted, rels, cap=CAP), strict=True))
    assert got == {**PLAIN, **dict.fromkeys(DECLINED)}
    careful = {rel: read_in(crafted, rel, cap=CAP, accept=is_memory_name) for rel in rels}
    assert {rel: careful[rel] for rel in PLAIN} == PLAIN  # the same bytes the careful read gives
    # what was declined is the careful read's to say: a refusal, a missing file, or a link it follows
    assert careful["link-in.md"] == PLAIN["plain.md"]
    assert careful["gone.md"] is None and careful["sub/gone.md"] is None
    refused = [rel for rel in DECLINED if isinstance(careful[rel], Refused)]
    dev = ["dev.md"] if os.geteuid() == 0 else []
    assert refused == ["past-cap.md", "link-out.md", "linked/inner.md", "folder.md", "fifo.md",
                       "sock.md", *dev]  # fmt: skip


def test_a_store_folder_that_cannot_be_opened_declines_every_name(tmp_path: Path) -> None:
    assert read_plain(tmp_path / "nowhere", ["a.md", "b.md"], cap=CAP) == [None, None]


FILES = {
    "simple": "---\nname: Simple\ndescription: plain words\ntype: project\ncreated: 2026-03-04\n---\n\n"
    "Body [[other]] and [[simple#part|label]].\n\nUpdated: 2026-05-06\n",
    "other": "---\nname: Other\ndescription: x\ntype: user\n---\n\nsee `[[not-a-link]]`\n\n    [[code]]\n",
    "crlf": "---\r\nname: C\r\ndescription: d\r\ntype: reference\r\n---\r\n\r\nbody\r\n",
    "bom": "\ufeff---\nname: B\ndescription: d\ntype: feedback\n---\nbody\n",
    "yaml": "---\nname: 'Quoted'\ndescription: Chose Postgres: ACID\ntype: project\n---\nbody\n",
    "retired": "---\nname: R\ndescription: r\ntype: project\narchived: 2026-01-02\narchived_reason: old\n---\nb\n",
    "no-front": "just a body\n",
    "unclosed": "---\nname: U\nbody without a closing line\n",
    "conflict": "---\nname: K\ndescription: k\ntype: user\n---\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
    "sub/nested": "---\nname: N\ndescription: n\ntype: project\n---\n[[simple]]\n",
}


def _rows(store: Store, stats: list[tuple[str, tuple[int, int, int, int], bool]]) -> list[tuple[object, ...]]:
    db = sqlite3.connect(":memory:")
    db.executescript(catalog._SCHEMA)
    scan = catalog.scan(store, db, stats=stats)
    assert scan is not None
    return sorted(db.execute("SELECT * FROM notes"))


def test_a_scan_through_the_batch_read_holds_the_rows_of_a_scan_file_by_file(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for slug, text in FILES.items():
        path = store.root / f"{slug}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    (store.root / "latin.md").write_bytes(b"---\nname: L\ndescription: caf\xe9\ntype: user\n---\nb\n")
    (store.root / "nul.md").write_bytes(b"---\nname: Z\ndescription: z\ntype: user\n---\na\x00b\n")
    (store.root / "huge.md").write_bytes(b"x" * (MEMORY_CAP + 1))
    (store.root / "inside.md").symlink_to("simple.md")
    outside = tmp_path / "elsewhere.md"
    outside.write_text(FILES["simple"])
    (store.root / "outside.md").symlink_to(outside)
    stats = file_stats(store.root)
    # after the walk: one name becomes a FIFO, one is removed (the read must not hang or fail)
    os.remove(store.root / "other.md")
    os.mkfifo(store.root / "other.md")
    os.remove(store.root / "crlf.md")

    batch = _rows(store, stats)
    monkeypatch.setattr(catalog, "read_plain", lambda root, rels, cap: [None] * len(rels))
    one_by_one = _rows(store, stats)

    assert batch == one_by_one
    findings = {row[0]: row[11] for row in batch}
    assert findings["other.md"] == 1 and findings["crlf.md"] == 1 and findings["huge.md"] == 1
    assert findings["simple.md"] == 0 and findings["inside.md"] == 0
    assert "outside.md" not in findings  # a link out of the store is no memory of it
    assert {row[0] for row in batch} == {f"{slug}.md" for slug in FILES} | {
        "latin.md",
        "nul.md",
        "huge.md",
        "inside.md",
    }


def _dates_by_the_whole_body(text: str) -> list[str]:
    return [m.group(1) for m in catalog._BODY_DATE.finditer(text)]


BODIES = [
    "", "Updated: 2026-01-02", "  - **Date:** 2026-03-04 and more", "x\nwritten: 2026-05-06\n",
    "As of: 2026-07-08\nLast updated: 2026-09-10\r\n__updated__: 2026-11-12", "updated 2026-01-02",
    "the outage on 2026-03-02: bad", "Updated: 2026-01-02Z", "Updated: 2026-01-02 Updated: 2026-02-03",
    "\n\nDATE:\t2026-12-31\n", "* updated: 2026-01-01\n- date:2026-02-02", "**Updated**: 2026-04-04",
    "ſupdated: 2026-01-01", "wrİtten: 2026-01-01",
]  # fmt: skip


@pytest.mark.parametrize("text", BODIES)
def test_a_body_date_is_found_line_by_line_as_in_the_whole_body(text: str) -> None:
    from kura.files.memory_file import new_note

    found = catalog.written_date(new_note({}, text))
    dates = [catalog._as_date(d) for d in _dates_by_the_whole_body(text)]
    assert found == max((d for d in dates if d is not None), default=None)
