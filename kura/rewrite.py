"""Writing over files people edit: no save of theirs is lost, no half-saved file believed.

A person's editor takes no lock. It may save while kura works (kura's rename must not hide
that save), it may be caught half-way through a save (truncated, the new bytes not yet
written), and a file may have lost lines for reasons kura cannot see. Three rules follow:

* ``rewrite`` makes kura's change from the file's bytes and writes it with
  ``atomic.replace_checked``; a save that lands first is re-read and the change made again
  on it, one that lands in the file kura replaced is read back and the change goes on top.
* ``rested``: bytes that look half-saved are believed only once the file has been left
  alone for ``REST`` seconds (editors write within about a second of truncating).
* ``IndexRecord``: the slugs MEMORY.md named when kura last wrote it (derived state in
  ``.kura/index-seen.json``). A write that would leave out lines of memories that still
  exist, and that kura did not mean to remove, is refused with the file untouched — an
  index wiped by a torn save is never written back as the truth.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kura import index as ix
from kura.atomic import Changed, read_plain, replace_checked, write_atomic
from kura.errors import KuraError, StoreError

REST = 1.2  # seconds a file that looks half-saved must be left alone before it is believed
REST_TIMEOUT = 3.0
RECORD = "index-seen.json"
RECORD_MAX = 32 * 1024 * 1024

Make = Callable[[bytes | None], bytes | None]


def rewrite(
    path: Path, make: Make, *, settle: Callable[[Path], bytes | None], wrote: Callable[[Path], None]
) -> tuple[bytes | None, bool]:
    """Write ``make(the file's bytes)`` over the file (None: leave it as it is). Returns the
    bytes first read and whether anything was written; ``wrote`` hears of each write."""
    first = base = on_disk = settle(path)
    written = False
    for _ in range(5):
        try:
            made = make(base)
        except KuraError:
            if base is not None and base != on_disk:  # the person's late save goes back in place
                with contextlib.suppress(Changed):
                    replace_checked(path, base, expect=on_disk)
            raise
        data = base if made is None else made
        if data is None or data == on_disk:
            return first, written
        try:
            late = replace_checked(path, data, expect=on_disk)
        except Changed:
            base = on_disk = settle(path)
            continue
        wrote(path)
        written = True
        if late is None:
            return first, written
        base, on_disk = late, data
    raise StoreError(
        f"{path}: kept changing while kura tried to write it; nothing more was written — try again"
    )


def rested(
    path: Path, read: Callable[[Path], bytes | None], suspect: Callable[[bytes | None], bool]
) -> bytes | None:
    """``read(path)``; while the bytes look half-saved (``suspect``), wait until the file has
    been left alone for ``REST`` seconds and read again."""
    data = read(path)
    start = time.monotonic()
    while suspect(data) and time.monotonic() - start < REST_TIMEOUT:
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            age = time.monotonic() - start
        if age >= REST:
            break
        time.sleep(0.05)
        data = read(path)
    return data


def update_index(
    path: Path,
    change: Callable[[ix.Index], ix.Index],
    record: IndexRecord,
    *,
    read: Callable[[Path], bytes | None],
    wrote: Callable[[Path], None],
    cache: tuple[bytes, ix.Index] | None,
) -> tuple[bool, tuple[bytes, ix.Index] | None]:
    """``rewrite`` for MEMORY.md: ``change`` applied to the index as it is on disk (``cache``:
    bytes kura last wrote and their parse), refused when it would leave out lines kura did
    not remove. Returns whether it wrote, and the bytes and index it wrote."""
    kept: list[tuple[bytes, ix.Index]] = []

    def make(before: bytes | None) -> bytes | None:
        raw = before or b""
        current = cache[1] if cache and cache[0] == raw else ix.parse_bytes(raw)
        updated = change(current)
        if updated is current:
            return None
        record.refuse_loss(before, (*current.named(), *updated.named()))
        data = ix.render_index(updated).encode("utf-8", errors="surrogateescape")
        kept.append((data, updated))
        return data

    _, written = rewrite(path, make, settle=lambda p: index_settled(p, record, read), wrote=wrote)
    return written, kept[-1] if written and kept else None


def index_settled(path: Path, record: IndexRecord, read: Callable[[Path], bytes | None]) -> bytes | None:
    """The index's bytes, waited for while they look half-saved."""
    return rested(path, read, record.looks_torn)


@dataclass(frozen=True, slots=True)
class IndexRecord:
    """What MEMORY.md named when kura last wrote it, and the store's view of its memories."""

    path: Path
    seen: frozenset[str] | None
    exists: Callable[[str], bool]  # is this slug a memory file of the store
    every: Callable[[], Iterable[str]]  # every memory's slug

    def looks_torn(self, data: bytes | None) -> bool:
        """Whether these bytes may be an editor's save caught half-way."""
        if not data or not data.strip():
            return bool(self.seen) or (data is not None and next(iter(self.every()), None) is not None)
        if not data.endswith(b"\n"):
            return True
        return self.seen is not None and bool(self.gone(self.seen, ix.parse_bytes(data).named()))

    def refuse_loss(self, before: bytes | None, named: Iterable[str]) -> None:
        """Refuse (StoreError) a write that would leave out memories whose lines were there
        when kura last wrote the index (or, for an emptied one, any memory) and whose files
        still exist; ``named`` is every slug the index names as read and as changed."""
        emptied = before is not None and not before.strip()
        expected = set(self.seen or ())
        if emptied or (before is None and self.seen):
            expected.update(self.every())
        gone = self.gone(expected, named)
        if not gone:
            return
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        what = (
            f"is {'empty' if emptied else 'gone'} while {len(gone)} memories ({shown}) have no line in it"
            if emptied or before is None
            else f"has lost the lines of {len(gone)} memories ({shown}) since kura last wrote it"
        )
        raise StoreError(
            f"{self.path}: {what}, and kura did not remove them; nothing was written and the file is "
            "untouched. If an editor is saving it, try again in a moment; to put the lines back run "
            "`kura doctor --fix` (or delete those memories' files if you removed them on purpose)"
        )

    def gone(self, expected: Iterable[str], named: Iterable[str]) -> tuple[str, ...]:
        present = set(named)
        return tuple(sorted(slug for slug in expected if slug not in present and self.exists(slug)))


def load_record(state_dir: Path) -> frozenset[str] | None:
    """The slugs of the last index kura wrote (derived state: anything odd is no record)."""
    try:
        raw = json.loads(read_plain(state_dir / RECORD, RECORD_MAX))
    except (OSError, ValueError, RecursionError):
        return None
    entries = raw.get("entries") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return None
    return frozenset(entries)


def save_record(state_dir: Path, named: Iterable[str]) -> None:
    data = json.dumps({"entries": list(named)}, ensure_ascii=False).encode("utf-8")
    with contextlib.suppress(KuraError):  # a record that cannot be kept only weakens the check
        write_atomic(state_dir / RECORD, data)
