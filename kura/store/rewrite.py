"""Writing over files people edit: no save of theirs is lost, no half-saved file believed.

A person's editor takes no lock. It may save while kura works (kura's rename must not hide
that save), it may be caught half-way through a save (truncated, the new bytes not yet
written), and a file may have lost lines for reasons kura cannot see. Three rules follow:

* ``rewrite`` makes kura's change from the file's bytes and writes it with
  ``atomic.replace_checked``; a save that lands first is re-read and the change made again
  on it, one that lands in the file kura replaced is read back and the change goes on top.
* ``rested``: bytes that look half-saved are believed only once the file has been left
  alone for ``REST`` seconds (editors write within about a second of truncating).
* ``IndexRecord``: MEMORY.md's lines as kura last wrote them (derived state in
  ``.kura/index-seen.json``). A write never leaves out lines of current memories (files
  that exist and are neither archived nor superseded: a forget elsewhere, pulled in by git,
  stays done) that kura did not mean to remove: a few dropped by an editor's save made from
  an older copy are put back ("keep theirs, add ours"); an emptied, vanished or cut-down
  index is refused with the file untouched — a torn save is never written back as truth.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from kura.errors import KuraError, StoreError
from kura.files import memory_index as ix
from kura.store import state as st
from kura.store.atomic import Changed, replace_checked, write_atomic
from kura.store.safe_read import INDEX_CAP, MEMORY_CAP

REST = 1.2  # seconds a file that looks half-saved must be left alone before it is believed
REST_TIMEOUT = 3.0
RECORD = "index-seen.json"
RECORD_MAX = 32 * 1024 * 1024
RESTORE_MAX = 3  # lines an editor's stale save may drop that kura puts back; more is refused

Make = Callable[[bytes | None], bytes | None]


def rewrite(
    path: Path,
    make: Make,
    *,
    settle: Callable[[Path], bytes | None],
    wrote: Callable[[Path], None],
    suspect: Callable[[bytes | None], bool],
    cap: int,
) -> tuple[bytes | None, bool]:
    """Write ``make(the file's bytes)`` over the file (None: leave it as it is). Returns the
    bytes first read and whether anything was written; ``wrote`` hears of each write.
    ``suspect`` says when bytes may be a save caught half-way: a late save that still looks
    so once it rests is never built on, nor put back — kura's write stands, and says so."""
    first = base = on_disk = settle(path)
    written = False
    for _ in range(5):
        try:
            made = make(base)
        except KuraError:
            if base is not None and base != on_disk:  # the person's late save goes back in place
                with contextlib.suppress(Changed):
                    replace_checked(path, base, expect=on_disk, cap=cap)
            raise
        data = base if made is None else made
        if data is None or data == on_disk:
            return first, written
        try:
            late = replace_checked(path, data, expect=on_disk, whole=lambda b: not suspect(b), cap=cap)
        except Changed:
            base = on_disk = settle(path)
            continue
        wrote(path)
        written = True
        if late is None:
            return first, written
        if suspect(late):
            raise StoreError(
                f"{path}: kura's change was written, but an editor that had the file open began "
                "saving it meanwhile and had not finished after a few seconds (its save went to the "
                "file kura replaced) — check the file in your editor and save it again"
            )
        base, on_disk = late, data
    raise StoreError(
        f"{path}: kept changing while kura tried to write it; nothing more was written — try again"
    )


def rewrite_memory(
    path: Path, make: Make, *, where: str, read: Callable[[Path], bytes | None], wrote: Callable[[Path], None]
) -> tuple[bytes | None, bool]:
    """``rewrite`` for a memory file: an empty one is refused (an editor mid-save, or a
    crash's leftover: a fresh memory written over it would lose the save), and so is any
    secret the new bytes add — one a hand-written file already holds is the person's to
    remove and does not stop kura from archiving or annotating that memory."""

    def settle(path: Path) -> bytes | None:
        data = rested(path, read, _empty)
        if _empty(data):
            raise StoreError(
                f"{where}: {path.name} is empty — an editor may be saving it; nothing was written. "
                "Try again in a moment, or delete the empty file to start the memory afresh"
            )
        return data

    def checked(old: bytes | None) -> bytes | None:
        new = make(old)
        if new is not None:
            from kura.text.secrets import refuse_added_secrets  # here: a reader loads no patterns

            refuse_added_secrets(where, old or b"", new)
        return new

    return rewrite(path, checked, settle=settle, wrote=wrote, suspect=_empty, cap=MEMORY_CAP)


def _empty(data: bytes | None) -> bool:
    return data is not None and not data.strip()


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
) -> tuple[bool, tuple[bytes, ix.Index] | None, tuple[str, ...]]:
    """``rewrite`` for MEMORY.md: ``change`` applied to the index as it is on disk (``cache``:
    bytes kura last wrote and their parse), with a few lines an editor's stale save dropped
    put back, refused when the index lost more than that. Returns whether it wrote, the
    bytes and index it wrote, and the slugs whose lines it put back."""
    kept: list[tuple[bytes, ix.Index, tuple[str, ...]]] = []

    def make(before: bytes | None) -> bytes | None:
        raw = before or b""
        current = cache[1] if cache and cache[0] == raw else ix.parse_bytes(raw)
        updated = change(current)
        if updated is current:
            return None
        restored = record.losses(before, current, (*current.named(), *updated.named()))
        for slug in restored:
            updated = ix.upsert(updated, slug, (record.lines or {})[slug])
        data = ix.render_index(updated).encode("utf-8", errors="surrogateescape")
        shown = ix.parse_bytes(data)
        if set(updated.named()) - set(shown.named()):  # a line kura writes must be a line the map shows
            raise StoreError(
                f"{shown.hidden() or path}; kura writes no line it would hide — nothing was written"
            )
        kept.append((data, updated, restored))
        return data

    settle = partial(index_settled, record=record, read=read)
    _, written = rewrite(path, make, settle=settle, wrote=wrote, suspect=record.looks_torn, cap=INDEX_CAP)
    if not (written and kept):
        return written, None, ()
    data, index, restored = kept[-1]
    return written, (data, index), restored


def index_settled(path: Path, record: IndexRecord, read: Callable[[Path], bytes | None]) -> bytes | None:
    """The index's bytes, waited for while they look half-saved."""
    return rested(path, read, record.looks_torn)


@dataclass(frozen=True, slots=True)
class IndexRecord:
    """What MEMORY.md said when kura last wrote it (``lines``: every slug it named, with the
    memory's own entry line, "" for one named only in a grouped line; None: no record), and
    the store's view of its memories."""

    path: Path
    lines: dict[str, str] | None
    exists: Callable[[str], bool]  # is this slug a current memory of the store (a forgotten one has no line)
    every: Callable[[], Iterable[str]]  # every memory's slug

    def looks_torn(self, data: bytes | None) -> bool:
        """Whether these bytes may be an editor's save caught half-way."""
        if not data or not data.strip():
            return bool(self.lines) or (data is not None and next(iter(self.every()), None) is not None)
        if not data.endswith(b"\n"):
            return True
        return self.lines is not None and bool(self.gone(self.lines, ix.parse_bytes(data).named()))

    def losses(self, before: bytes | None, current: ix.Index, named: Iterable[str]) -> tuple[str, ...]:
        """The memories whose own lines to put back: lines kura wrote that an editor's save
        made from an older copy left out (``named``: every slug the index names as read and
        as changed). A loss too large for that — an emptied or vanished index, more than
        ``RESTORE_MAX`` lines, a grouped line — is refused (StoreError), nothing written."""
        emptied = before is not None and not before.strip()
        expected = set(self.lines or ())
        if emptied or (before is None and self.lines):
            expected.update(self.every())
        gone = self.gone(expected, named)
        if gone and current.unclosed is not None:  # hidden, not lost: putting them back hides them again
            raise StoreError(f"{current.hidden()}; kura writes no line it would hide — nothing was written")
        lines = self.lines or {}
        if gone and (
            emptied or before is None or len(gone) > RESTORE_MAX or not all(lines.get(s) for s in gone)
        ):
            raise StoreError(self._refusal(gone, emptied=emptied, vanished=before is None))
        return gone

    def _refusal(self, gone: tuple[str, ...], *, emptied: bool, vanished: bool) -> str:
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        what = (
            f"is {'empty' if emptied else 'gone'} while {len(gone)} memories ({shown}) have no line in it"
            if emptied or vanished
            else f"has lost the lines of {len(gone)} memories ({shown}) since kura last wrote it"
        )
        return (
            f"{self.path}: {what}, and kura did not remove them; nothing was written and the file is "
            "untouched. If an editor is saving it, try again in a moment; to put the lines back run "
            "`kura doctor --fix` (or delete those memories' files if you removed them on purpose)"
        )

    def gone(self, expected: Iterable[str], named: Iterable[str]) -> tuple[str, ...]:
        present = set(named)
        return tuple(sorted(slug for slug in expected if slug not in present and self.exists(slug)))


def load_record(state_dir: Path) -> dict[str, str] | None:
    """The record of the last index kura wrote — only if kura wrote it into this very state
    folder (a record copied or cloned from elsewhere describes another index) and every line
    in it is one entry line for its slug; anything else is no record, said once on stderr."""
    path = state_dir / RECORD
    raw = st.read_json(path, then=_WITHOUT, cap=RECORD_MAX)
    if raw is None:
        return None
    lines = raw.get("lines")
    if not (isinstance(lines, dict) and all(_own_line(k, v) for k, v in lines.items())):
        st.damaged(path, "holds fields of the wrong type (lines)", _WITHOUT)
        return None
    if raw.get("folder") != _identity(state_dir):
        st.damaged(path, "was written for another state folder (copied or cloned)", _WITHOUT)
        return None
    return lines


def _own_line(slug: object, text: object) -> bool:
    """ "" (named only in a grouped line), or a single entry line naming ``slug`` that hides
    nothing after it and carries no map fence."""
    if not isinstance(slug, str) or not isinstance(text, str):
        return False
    if text == "":
        return True
    line = ix.parse_index(text + "\n")
    return (
        "\n" not in text and "<<<" not in text and ">>>" not in text and line.unclosed is None
        and [ln.slugs for ln in line.entries()] == [(slug,)]
    )  # fmt: skip


def _identity(state_dir: Path) -> list[int] | None:
    try:
        seen = os.stat(state_dir, follow_symlinks=False)
    except OSError:
        return None
    return [seen.st_dev, seen.st_ino]


_WITHOUT = "the index is checked without it until kura writes the index again"


def save_record(state_dir: Path, index: ix.Index) -> None:
    lines = {slug: "" for slug in index.named()}
    lines.update((line.slugs[0], line.text) for line in index.entries())
    record = {"folder": _identity(state_dir), "lines": lines}
    data = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogateescape")
    with contextlib.suppress(KuraError):  # a record that cannot be kept only weakens the check
        write_atomic(state_dir / RECORD, data)
